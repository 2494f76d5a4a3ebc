// The loss, optimizer and scheduler registries of gradiens-train: configs
// resolved against their specs, built, and checked against PyTorch's defaults,
// closed forms, "auto" lengths and the diagnostics of bad configs.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "optim/lbfgs.h"
#include "optim/schedulers/cyclic.h"
#include "optim/sgd.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"

namespace gd = gradiens;
namespace optim = gradiens::optim;
using gd::Tensor;
using gd::train::Builders;
using gd::train::Diagnostics;
using gd::train::json;
using gd::train::SchedulerContext;

namespace {

// The categories exactly as builtin() creates them, and this file's registrations.
const Builders& builders() {
  static const Builders b = [] {
    Builders b;
    b.specs.category(gd::train::kLayer, "layers", "a layer");
    b.specs.category(gd::train::kLoss, "losses", "a loss");
    b.specs.category(gd::train::kOptimizer, "optimizers", "an optimizer");
    b.specs.category(gd::train::kScheduler, "schedulers", "a scheduler");
    b.specs.category(gd::train::kDataset, "datasets", "a data set");
    b.specs.category(gd::train::kInit, "inits", "an init");
    gd::train::register_losses(b);
    gd::train::register_optimizers(b);
    gd::train::register_schedulers(b);
    return b;
  }();
  return b;
}

// A typed config of `category` resolved at `path` (the category's own name:
// "loss", "optimizer", "scheduler"); its diagnostics in `errors`.
json resolve(const char* category, const json& config, std::vector<std::string>& errors) {
  Diagnostics diagnostics;
  json resolved = gd::train::resolve_value(config, *gd::train::Typed(category), category, builders().specs, diagnostics);
  errors = diagnostics.messages();
  return resolved;
}

json resolve_ok(const char* category, const json& config) {
  std::vector<std::string> errors;
  json resolved = resolve(category, config, errors);
  std::string shown;
  for (const std::string& error : errors) shown += error + "\n";
  INFO(config.dump(), "\n", shown);
  REQUIRE(errors.empty());
  return resolved;
}

// The one diagnostic a bad config yields.
std::string diagnostic(const char* category, const json& config) {
  std::vector<std::string> errors;
  resolve(category, config, errors);
  INFO(config.dump());
  REQUIRE(errors.size() == 1);
  return errors[0];
}

std::vector<Tensor> parameters() { return {gd::zeros({2}, gd::TensorOptions().dtype(gd::kFloat64).requires_grad(true))}; }

std::unique_ptr<optim::Optimizer> build_optimizer(const json& config) {
  const json resolved = resolve_ok(gd::train::kOptimizer, config);
  return builders().optimizers.at(resolved.at("type").get<std::string>())(parameters(), resolved);
}

gd::train::BuiltScheduler build_scheduler(optim::Optimizer& optimizer, json& config, const SchedulerContext& context) {
  config = resolve_ok(gd::train::kScheduler, config);
  return builders().schedulers.at(config.at("type").get<std::string>())(optimizer, config, context, builders());
}

double loss_of(const json& config, const Tensor& output, const Tensor& target) {
  const json resolved = resolve_ok(gd::train::kLoss, config);
  const auto loss = builders().losses.at(resolved.at("type").get<std::string>())(resolved, gd::kFloat64);
  return loss(output, target).item<double>();
}

Tensor values(std::vector<double> v) { return gd::tensor(v, gd::kFloat64); }
Tensor labels(std::vector<int64_t> v) { return gd::tensor(v, gd::kInt64); }

double lr_of(const optim::Optimizer& optimizer) { return optimizer.param_groups()[0].options().get_lr(); }

}  // namespace

// ---- optimizers ----

TEST_CASE("registry: SGD from {type, lr, momentum} has those options and PyTorch's defaults") {
  const json resolved = resolve_ok(gd::train::kOptimizer, {{"type", "SGD"}, {"lr", 0.1}, {"momentum", 0.9}});
  CHECK(resolved == json{{"type", "SGD"},          {"lr", 0.1},          {"momentum", 0.9}, {"dampening", 0.0},
                         {"weight_decay", 0.0},    {"nesterov", false},  {"maximize", false}});
  auto optimizer = builders().optimizers.at("SGD")(parameters(), resolved);
  const auto& options = dynamic_cast<const optim::SGDOptions&>(optimizer->defaults());
  CHECK(options.lr() == 0.1);
  CHECK(options.momentum() == 0.9);
  CHECK(options.dampening() == 0.0);
  CHECK(options.weight_decay() == 0.0);
  CHECK(!options.nesterov());
  CHECK(!options.maximize());
  CHECK(optimizer->size() == 1);
}

TEST_CASE("registry: every optimizer's options default to PyTorch's") {
  struct Case {
    json config;
    json options;  // the built optimizer's defaults().to_json()
  };
  const std::vector<Case> cases = {
      {{{"type", "Adam"}},
       {{"lr", 1e-3}, {"betas", {0.9, 0.999}}, {"eps", 1e-8}, {"weight_decay", 0.0}, {"amsgrad", false}, {"maximize", false}}},
      {{{"type", "AdamW"}},
       {{"lr", 1e-3}, {"betas", {0.9, 0.999}}, {"eps", 1e-8}, {"weight_decay", 1e-2}, {"amsgrad", false}, {"maximize", false}}},
      {{{"type", "RMSprop"}},
       {{"lr", 1e-2}, {"alpha", 0.99}, {"eps", 1e-8}, {"weight_decay", 0.0}, {"momentum", 0.0}, {"centered", false},
        {"maximize", false}}},
      {{{"type", "Adagrad"}},
       {{"lr", 1e-2}, {"lr_decay", 0.0}, {"eps", 1e-10}, {"weight_decay", 0.0}, {"initial_accumulator_value", 0.0},
        {"maximize", false}}},
      // max_eval null becomes max_iter * 5 / 4 in the built optimizer.
      {{{"type", "LBFGS"}},
       {{"lr", 1.0}, {"max_iter", 20}, {"max_eval", 25}, {"tolerance_grad", 1e-7}, {"tolerance_change", 1e-9},
        {"history_size", 100}, {"line_search_fn", nullptr}}},
      {{{"type", "LBFGS"}, {"max_iter", 8}, {"max_eval", 9}, {"line_search_fn", "strong_wolfe"}},
       {{"lr", 1.0}, {"max_iter", 8}, {"max_eval", 9}, {"tolerance_grad", 1e-7}, {"tolerance_change", 1e-9},
        {"history_size", 100}, {"line_search_fn", "strong_wolfe"}}},
      {{{"type", "Adam"}, {"lr", 0.5}, {"betas", {0.5, 0.75}}, {"amsgrad", true}},
       {{"lr", 0.5}, {"betas", {0.5, 0.75}}, {"eps", 1e-8}, {"weight_decay", 0.0}, {"amsgrad", true}, {"maximize", false}}},
  };
  for (const Case& c : cases) {
    INFO(c.config.dump());
    const json options = build_optimizer(c.config)->defaults().to_json();
    for (const auto& item : c.options.items()) {
      const std::string key = item.key();
      const json& value = item.value();
      INFO(key);
      REQUIRE(options.contains(key));
      if (value.is_number_float()) CHECK(options.at(key).get<double>() == value.get<double>());
      else CHECK(options.at(key) == value);
    }
  }
}

TEST_CASE("registry: bad optimizer configs give their diagnostics") {
  struct Case {
    json config;
    std::string diagnostic;
  };
  const std::vector<Case> cases = {
      {{{"type", "Adam"}, {"betas", {0.9}}},
       "optimizer.betas: expected a list of 2 values, each a number >= 0 and < 1, got a list of 1"},
      {{{"type", "Adam"}, {"lr", -1}}, "optimizer.lr: -1 is out of range (expected a number >= 0)"},
      {{{"type", "Adam"}, {"betas", {0.9, 1.0}}},
       "optimizer.betas[1]: 1.0 is out of range (expected a number >= 0 and < 1)"},
      {{{"type", "SGD"}, {"lr", 0.1}, {"nesterov", true}, {"momentum", 0}},
       "optimizer.nesterov: Nesterov momentum requires a momentum and zero dampening"},
      {{{"type", "SGD"}, {"lr", 0.1}, {"nesterov", true}, {"momentum", 0.9}, {"dampening", 0.1}},
       "optimizer.nesterov: Nesterov momentum requires a momentum and zero dampening"},
      {{{"type", "SGD"}, {"momentum", 0.9}}, "optimizer.lr: missing (required: the learning rate)"},
      {{{"type", "LBFGS"}, {"line_search_fn", "wolfe"}},
       "optimizer.line_search_fn: \"wolfe\" is not one of \"strong_wolfe\""},
      {{{"type", "RMSprop"}, {"alpha", -0.5}}, "optimizer.alpha: -0.5 is out of range (expected a number >= 0)"},
  };
  for (const Case& c : cases) CHECK(diagnostic(gd::train::kOptimizer, c.config) == c.diagnostic);
  // Nesterov with momentum and no dampening is fine.
  resolve_ok(gd::train::kOptimizer, {{"type", "SGD"}, {"lr", 0.1}, {"nesterov", true}, {"momentum", 0.9}});
}

// ---- schedulers ----

TEST_CASE("registry: CosineAnnealingLR's T_max \"auto\" becomes the phase's steps or epochs") {
  const SchedulerContext context{/*steps_per_epoch=*/10, /*total_steps=*/100, /*total_epochs=*/10};
  auto optimizer = build_optimizer({{"type", "SGD"}, {"lr", 0.1}});
  json config = {{"type", "CosineAnnealingLR"}, {"interval", "step"}};
  auto built = build_scheduler(*optimizer, config, context);
  CHECK(config.at("T_max") == 100);  // written back for --print-config
  CHECK(built.interval == "step");
  REQUIRE(built.scheduler != nullptr);
  CHECK(built.plateau == nullptr);
  for (int i = 0; i < 50; ++i) built.scheduler->step();
  CHECK(lr_of(*optimizer) == doctest::Approx(0.05).epsilon(1e-12));  // half way down the cosine

  auto per_epoch = build_optimizer({{"type", "SGD"}, {"lr", 0.1}});
  json epochs = {{"type", "CosineAnnealingLR"}};
  CHECK(build_scheduler(*per_epoch, epochs, context).interval == "epoch");
  CHECK(epochs.at("T_max") == 10);
  json given = {{"type", "CosineAnnealingLR"}, {"T_max", 7}};
  build_scheduler(*per_epoch, given, context);
  CHECK(given.at("T_max") == 7);
}

TEST_CASE("registry: \"auto\" lengths of OneCycleLR, LinearLR and PolynomialLR") {
  const SchedulerContext context{/*steps_per_epoch=*/10, /*total_steps=*/120, /*total_epochs=*/12};
  auto optimizer = build_optimizer({{"type", "SGD"}, {"lr", 0.1}, {"momentum", 0.9}});
  json one_cycle = {{"type", "OneCycleLR"}, {"max_lr", 1.0}};
  auto built = build_scheduler(*optimizer, one_cycle, context);
  CHECK(one_cycle.at("total_steps") == 120);
  CHECK(built.interval == "step");  // OneCycleLR's default
  CHECK(dynamic_cast<optim::OneCycleLR&>(*built.scheduler).total_steps() == 120);
  CHECK(lr_of(*optimizer) == doctest::Approx(1.0 / 25));  // max_lr / div_factor

  auto linear_optimizer = build_optimizer({{"type", "SGD"}, {"lr", 0.1}});
  json linear = {{"type", "LinearLR"}, {"total_iters", "auto"}};
  build_scheduler(*linear_optimizer, linear, context);
  CHECK(linear.at("total_iters") == 12);
  json linear_default = {{"type", "LinearLR"}};
  CHECK(resolve_ok(gd::train::kScheduler, linear_default).at("total_iters") == 5);  // PyTorch's default

  auto poly_optimizer = build_optimizer({{"type", "SGD"}, {"lr", 0.1}});
  json poly = {{"type", "PolynomialLR"}, {"total_iters", "auto"}, {"interval", "step"}};
  build_scheduler(*poly_optimizer, poly, context);
  CHECK(poly.at("total_iters") == 120);
}

TEST_CASE("registry: SequentialLR builds its schedulers with the segments' \"auto\" lengths and its interval") {
  const SchedulerContext context{/*steps_per_epoch=*/10, /*total_steps=*/100, /*total_epochs=*/10};
  auto optimizer = build_optimizer({{"type", "SGD"}, {"lr", 0.1}});
  json config = {{"type", "SequentialLR"},
                 {"interval", "step"},
                 {"schedulers",
                  {{{"type", "LinearLR"}, {"start_factor", 0.1}, {"total_iters", "auto"}}, {{"type", "CosineAnnealingLR"}}}},
                 {"milestones", {10}}};
  auto built = build_scheduler(*optimizer, config, context);
  CHECK(built.interval == "step");
  CHECK(config["schedulers"][0]["total_iters"] == 10);  // 0 to the milestone
  CHECK(config["schedulers"][1]["T_max"] == 90);        // the milestone to the end
  CHECK(config["schedulers"][0]["interval"] == "step");
  CHECK(config["schedulers"][1]["interval"] == "step");
  CHECK(lr_of(*optimizer) == doctest::Approx(0.01));  // 0.1 * start_factor
  for (int i = 0; i < 10 + 45; ++i) built.scheduler->step();
  CHECK(lr_of(*optimizer) == doctest::Approx(0.05).epsilon(1e-9));
  // The state is the SequentialLR's, with its schedulers'.
  const json state = built.state_dict();
  CHECK(state.at("last_epoch") == 55);
  CHECK(state.at("_schedulers").size() == 2);
}

TEST_CASE("registry: ReduceLROnPlateau is built as the plateau scheduler with its monitor") {
  auto optimizer = build_optimizer({{"type", "SGD"}, {"lr", 1.0}});
  json config = {{"type", "ReduceLROnPlateau"}, {"patience", 0}, {"factor", 0.5}};
  auto built = build_scheduler(*optimizer, config, SchedulerContext{});
  CHECK(built.scheduler == nullptr);
  REQUIRE(built.plateau != nullptr);
  CHECK(built.monitor == "val/loss");
  CHECK(built.interval == "epoch");
  built.plateau->step(1.0);
  built.plateau->step(2.0);  // worse: with patience 0, the lr halves
  CHECK(lr_of(*optimizer) == 0.5);
  const json state = built.state_dict();
  CHECK(state.at("best") == 1.0);
  CHECK(state.at("last_epoch") == 2);

  auto resumed_optimizer = build_optimizer({{"type", "SGD"}, {"lr", 1.0}});
  json again = {{"type", "ReduceLROnPlateau"}, {"patience", 0}, {"factor", 0.5}};
  auto resumed = build_scheduler(*resumed_optimizer, again, SchedulerContext{});
  resumed.load_state_dict(state);
  CHECK(resumed.state_dict() == state);

  gd::train::BuiltScheduler none;
  CHECK(none.state_dict().is_null());
  CHECK_THROWS_AS(none.load_state_dict(state), gd::Error);
}

TEST_CASE("registry: every default satisfies its own field's type") {
  for (const char* category : {gd::train::kLoss, gd::train::kOptimizer, gd::train::kScheduler}) {
    for (const auto& entry : builders().specs.find_category(category)->types) {
      const std::string name = entry.first;
      for (const gd::train::Field& field : entry.second.fields) {
        if (field.default_value.is_null()) continue;
        INFO(name, ".", field.name);
        Diagnostics diagnostics;
        gd::train::resolve_value(field.default_value, *field.type, field.name, builders().specs, diagnostics);
        CHECK(diagnostics.str() == "");
      }
    }
  }
}

TEST_CASE("registry: every scheduler builds from a minimal config and steps") {
  const SchedulerContext context{/*steps_per_epoch=*/4, /*total_steps=*/40, /*total_epochs=*/10};
  const std::vector<json> configs = {
      {{"type", "StepLR"}, {"step_size", 2}},
      {{"type", "MultiStepLR"}, {"milestones", {1, 3}}},
      {{"type", "ConstantLR"}},
      {{"type", "LinearLR"}},
      {{"type", "ExponentialLR"}, {"gamma", 0.9}},
      {{"type", "PolynomialLR"}},
      {{"type", "CosineAnnealingLR"}},
      {{"type", "CosineAnnealingWarmRestarts"}, {"T_0", 3}, {"T_mult", 2}},
      {{"type", "OneCycleLR"}, {"max_lr", {0.5}}},
      {{"type", "CyclicLR"}, {"base_lr", 0.01}, {"max_lr", 0.1}, {"step_size_up", 2}, {"step_size_down", 3}},
      {{"type", "SequentialLR"}, {"schedulers", {{{"type", "ConstantLR"}}, {{"type", "CosineAnnealingLR"}}}},
       {"milestones", {2}}},
      {{"type", "ChainedScheduler"}, {"schedulers", {{{"type", "ConstantLR"}}, {{"type", "ExponentialLR"}, {"gamma", 0.5}}}}},
  };
  for (json config : configs) {
    INFO(config.dump());
    auto optimizer = build_optimizer({{"type", "SGD"}, {"lr", 0.1}, {"momentum", 0.9}});
    auto built = build_scheduler(*optimizer, config, context);
    REQUIRE(built.scheduler != nullptr);
    for (int i = 0; i < 8; ++i) built.scheduler->step();
    CHECK(std::isfinite(lr_of(*optimizer)));
    const json state = built.state_dict();  // ChainedScheduler's has no last_epoch, as in PyTorch
    CHECK(state.value("last_epoch", json(8)) == 8);
  }
  // ChainedScheduler: the factors multiply (1/3 until epoch 5, times 0.5 each epoch).
  auto optimizer = build_optimizer({{"type", "SGD"}, {"lr", 0.3}});
  json chained = {{"type", "ChainedScheduler"},
                  {"schedulers", {{{"type", "ConstantLR"}}, {{"type", "ExponentialLR"}, {"gamma", 0.5}}}}};
  auto built = build_scheduler(*optimizer, chained, context);
  CHECK(lr_of(*optimizer) == doctest::Approx(0.1));
  built.scheduler->step();
  CHECK(lr_of(*optimizer) == doctest::Approx(0.05));
}

TEST_CASE("registry: bad scheduler configs give their diagnostics") {
  struct Case {
    json config;
    std::string diagnostic;
  };
  const std::vector<Case> cases = {
      {{{"type", "OneCycleLR"}, {"max_lr", 0.1}, {"interval", "epoch"}},
       "scheduler.interval: OneCycleLR counts optimizer steps (total_steps); its interval must be \"step\""},
      {{{"type", "SequentialLR"},
        {"schedulers", {{{"type", "ConstantLR"}}, {{"type", "ExponentialLR"}, {"gamma", 0.9}}}},
        {"milestones", json::array()}},
       "scheduler.milestones: expected 1 milestone for 2 schedulers (one where each scheduler after the first "
       "starts), got 0"},
      {{{"type", "SequentialLR"},
        {"schedulers", {{{"type", "StepLR"}, {"step_size", 3}, {"interval", "step"}}, {{"type", "ConstantLR"}}}},
        {"milestones", {5}}},
       "scheduler.schedulers[0].interval: \"step\" differs from the SequentialLR's \"epoch\": a nested scheduler "
       "steps with the one that holds it (leave its interval out)"},
      {{{"type", "ChainedScheduler"},
        {"schedulers", {{{"type", "ConstantLR"}}, {{"type", "ReduceLROnPlateau"}}}}},
       "scheduler.schedulers[1]: ReduceLROnPlateau cannot be part of a ChainedScheduler: it follows a metric, not a "
       "schedule (use it as the scheduler itself)"},
      {{{"type", "ReduceLROnPlateau"}, {"factor", 1.0}},
       "scheduler.factor: 1.0 is out of range (expected a number >= 0 and < 1)"},
      {{{"type", "CosineAnnealingLR"}, {"T_max", 0}},
       "scheduler.T_max: 0 is out of range (expected an integer >= 1)"},
      {{{"type", "StepLR"}}, "scheduler.step_size: missing (required: intervals between two decays)"},
  };
  for (const Case& c : cases) CHECK(diagnostic(gd::train::kScheduler, c.config) == c.diagnostic);
  // A nested scheduler's default interval is overridden by the composite's, not an error.
  resolve_ok(gd::train::kScheduler, {{"type", "SequentialLR"},
                                     {"interval", "step"},
                                     {"schedulers", {{{"type", "ConstantLR"}}, {{"type", "OneCycleLR"}, {"max_lr", 1}}}},
                                     {"milestones", {5}}});
}

TEST_CASE("registry: a cycling scheduler on an optimizer without momentum is an error naming the option") {
  auto optimizer = build_optimizer({{"type", "Adagrad"}});
  json config = {{"type", "CyclicLR"}, {"base_lr", 0.01}, {"max_lr", 0.1}};
  CHECK_THROWS_WITH_AS(build_scheduler(*optimizer, config, SchedulerContext{}),
                       "CyclicLR: \"cycle_momentum\" is true, but the optimizer has no momentum to cycle (set "
                       "\"cycle_momentum\": false)",
                       gd::Error);
  json without = {{"type", "CyclicLR"}, {"base_lr", 0.01}, {"max_lr", 0.1}, {"cycle_momentum", false}};
  CHECK(build_scheduler(*optimizer, without, SchedulerContext{}).interval == "step");
  CHECK(lr_of(*optimizer) == doctest::Approx(0.01));
}

// ---- losses ----

TEST_CASE("registry: losses equal their closed forms") {
  const double ln2 = std::log(2.0);
  const Tensor logits = gd::tensor({{0.0, std::log(3.0)}}, gd::kFloat64);  // softmax: [1/4, 3/4]
  const double s = 0.2;                                                     // label smoothing, 2 classes
  const double smoothed = (1 - s) * std::log(4.0 / 3) + s * (std::log(4.0) + std::log(4.0 / 3)) / 2;
  struct Case {
    json config;
    Tensor output, target;
    double expected;
  };
  const std::vector<Case> cases = {
      {{{"type", "mse_loss"}}, values({1, 2}), values({0, 0}), 2.5},
      {{{"type", "mse_loss"}, {"reduction", "sum"}}, values({1, 2}), values({0, 0}), 5.0},
      {{{"type", "l1_loss"}}, values({1, -3}), values({0, 0}), 2.0},
      {{{"type", "huber_loss"}}, values({0.5, 3}), values({0, 0}), (0.125 + 2.5) / 2},
      {{{"type", "smooth_l1_loss"}, {"beta", 2.0}}, values({1, 3}), values({0, 0}), (0.25 + 2.0) / 2},
      {{{"type", "cross_entropy"}}, logits, labels({1}), std::log(4.0 / 3)},
      {{{"type", "cross_entropy"}, {"label_smoothing", s}}, logits, labels({1}), smoothed},
      {{{"type", "cross_entropy"}, {"weight", {1.0, 3.0}}, {"reduction", "sum"}}, logits, labels({1}),
       3 * std::log(4.0 / 3)},
      {{{"type", "cross_entropy"}, {"ignore_index", 1}}, gd::tensor({{0.0, 0.0}, {0.0, std::log(3.0)}}, gd::kFloat64),
       labels({0, 1}), ln2},
      {{{"type", "nll_loss"}}, gd::tensor({{std::log(0.25), std::log(0.75)}}, gd::kFloat64), labels({0}),
       std::log(4.0)},
      // int64 0/1 labels become the output's dtype.
      {{{"type", "binary_cross_entropy"}}, values({0.5, 0.5}), labels({1, 0}), ln2},
      {{{"type", "binary_cross_entropy_with_logits"}, {"pos_weight", {3.0}}}, values({0}), values({1}), 3 * ln2},
      {{{"type", "kl_div"}, {"reduction", "sum"}}, values({std::log(0.5), std::log(0.5)}), values({0.25, 0.75}),
       0.25 * std::log(0.5) + 0.75 * std::log(1.5)},
      {{{"type", "kl_div"}, {"reduction", "batchmean"}, {"log_target", true}},
       gd::tensor({{std::log(0.5), std::log(0.5)}}, gd::kFloat64),
       gd::tensor({{std::log(0.25), std::log(0.75)}}, gd::kFloat64), 0.25 * std::log(0.5) + 0.75 * std::log(1.5)},
  };
  for (const Case& c : cases) {
    INFO(c.config.dump());
    CHECK(loss_of(c.config, c.output, c.target) == doctest::Approx(c.expected).epsilon(1e-12));
  }
}

TEST_CASE("registry: bad loss configs give their diagnostics") {
  struct Case {
    json config;
    std::string diagnostic;
  };
  const std::vector<Case> cases = {
      {{{"type", "cross_entropy"}, {"reduction", "none"}}, "loss.reduction: \"none\" is not one of \"mean\", \"sum\""},
      {{{"type", "cross_entropy"}, {"label_smoothing", 1.5}},
       "loss.label_smoothing: 1.5 is out of range (expected a number >= 0 and <= 1)"},
      {{{"type", "huber_loss"}, {"delta", 0}}, "loss.delta: 0 is out of range (expected a number > 0)"},
      {{{"type", "smooth_l1_loss"}, {"beta", -1.0}}, "loss.beta: -1.0 is out of range (expected a number >= 0)"},
      {{{"type", "mse_loss"}, {"reduction", "batchmean"}},
       "loss.reduction: \"batchmean\" is not one of \"mean\", \"sum\""},
  };
  for (const Case& c : cases) CHECK(diagnostic(gd::train::kLoss, c.config) == c.diagnostic);
  const json resolved = resolve_ok(gd::train::kLoss, {{"type", "cross_entropy"}});
  CHECK(resolved == json{{"type", "cross_entropy"}, {"ignore_index", -100}, {"reduction", "mean"}, {"label_smoothing", 0.0}});
}
