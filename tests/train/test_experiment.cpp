// Experiments built and trained in process: tensors from a .safetensors file,
// gradient accumulation against one large batch, and evaluation metrics
// against counts done by hand.
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/io/safetensors.h"
#include "engine/tensor_data.h"
#include "train/config/run_spec.h"
#include "train/config/validate.h"
#include "train/experiment.h"
#include "train/trainer.h"

namespace gt = gradiens::train;
namespace gd = gradiens;
namespace fs = std::filesystem;
using gt::json;

namespace {

gt::json resolve(const json& config) {
  gt::Diagnostics diagnostics;
  json resolved = gt::resolve_object(config, gt::run_spec(), "", gt::builtin().specs, diagnostics);
  REQUIRE_MESSAGE(diagnostics.empty(), diagnostics.str());
  return resolved;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(GRADIENS_TRAIN_TEST_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("experiment: TensorFile data, derived sizes, and evaluation counted by hand") {
  const fs::path dir = scratch("tensor_file");
  gd::Generator generator(5);
  gd::Tensor inputs = gd::randn({40, 6}, generator);
  gd::Tensor targets = gd::randint(0, 4, {40}, generator);
  gd::save({{"x", inputs}, {"y", targets}}, (dir / "set.safetensors").string());
  json config = {{"version", 1},
                 {"model", {{"type", "Linear"}, {"out_features", 4}}},
                 {"data", {{"train", {{"type", "TensorFile"}, {"path", "set.safetensors"}, {"inputs", "x"}, {"targets", "y"}}},
                           {"val", {{"type", "TensorFile"}, {"path", "set.safetensors"}, {"inputs", "x"}, {"targets", "y"},
                                    {"limit", 25}}}}},
                 {"loss", {{"type", "cross_entropy"}}},
                 {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                 {"metrics", {{"val", {"loss", "accuracy", "top2_accuracy"}}}},
                 {"train", {{"steps", 1}}}};
  gt::Experiment experiment = gt::build_experiment(resolve(config), dir.string());
  CHECK(experiment.train.size() == 40);
  CHECK(experiment.val.size() == 25);
  CHECK(experiment.train.num_classes == 4);
  CHECK(experiment.config["model"]["in_features"] == 6);
  // The metrics against the same quantities computed directly on the model.
  auto values = gt::evaluate(experiment, experiment.val, {"loss", "accuracy", "top2_accuracy"});
  gd::NoGradGuard no_grad;
  gt::Batch batch;
  batch.inputs = inputs.narrow(0, 0, 25);
  gd::Tensor logits = experiment.model.forward(batch);
  gd::Tensor y = targets.narrow(0, 0, 25);
  const double accuracy = logits.argmax(1).eq(y).to(gd::kFloat64).mean().item<double>();
  gd::Tensor top2 = std::get<1>(gd::topk(logits, 2, 1));
  const double top2_accuracy = top2.eq(y.unsqueeze(1)).any(1).to(gd::kFloat64).mean().item<double>();
  CHECK(values["accuracy"] == doctest::Approx(accuracy).epsilon(1e-12));
  CHECK(values["top2_accuracy"] == doctest::Approx(top2_accuracy).epsilon(1e-12));
  CHECK(values["loss"] == doctest::Approx(experiment.loss(logits, y).item<double>()).epsilon(1e-6));
  // The confusion matrix: rows the true class, columns the predicted one.
  json confusion;
  gt::evaluate(experiment, experiment.val, {"confusion_matrix"}, &confusion);
  const gd::Tensor predicted = logits.argmax(1);
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t p = 0; p < 4; ++p) {
      const int64_t count = (y.eq(t) & predicted.eq(p)).sum().item<int64_t>();
      CHECK(confusion["matrix"][t][p] == count);
    }
  // A missing tensor name is an error naming the key and the file.
  config["data"]["train"]["inputs"] = "z";
  CHECK_THROWS_WITH(gt::build_experiment(resolve(config), dir.string()),
                    ("data.train.inputs: " + (dir / "set.safetensors").string() + " has no tensor \"z\"").c_str());
}

TEST_CASE("experiment: accumulating 4 batches of 8 steps like one batch of 32") {
  // Plain SGD on a mean loss: the mean of four quarter-batch gradients is the
  // full batch's gradient, so the weights agree to rounding.
  auto run = [&](int64_t batch_size, int64_t accumulate, const std::string& name) {
    json config = {{"version", 1}, {"seed", 2}, {"dtype", "float64"},
                   {"model", {{"type", "Sequential"}, {"layers", {{{"type", "Linear"}, {"out_features", 8}},
                                                                  {{"type", "Tanh"}},
                                                                  {{"type", "Linear"}, {"out_features", 1}}}}}},
                   {"data", {{"train", {{"type", "SyntheticRegression"}, {"size", 64}, {"features", 3}}},
                             {"loader", {{"batch_size", batch_size}, {"shuffle", false}}}}},
                   {"loss", {{"type", "mse_loss"}}},
                   {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                   {"train", {{"epochs", 3}, {"accumulate", accumulate}}},
                   {"output", {{"plots", false}, {"progress", "none"}}}};
    gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
    gt::TrainerOptions options;
    options.run_dir = scratch(name);
    options.progress = "none";
    gt::RunResult result = gt::train_experiment(experiment, options);
    CHECK(result.steps == 6);  // 2 optimizer steps an epoch either way
    return experiment.model.parameters();
  };
  auto whole = run(32, 1, "accumulate_whole");
  auto parts = run(8, 4, "accumulate_parts");
  REQUIRE(whole.size() == parts.size());
  for (size_t i = 0; i < whole.size(); ++i) CHECK(gd::allclose(whole[i], parts[i], 1e-12, 1e-14));
}

TEST_CASE("experiment: the first non-finite parameter is named by its state_dict key") {
  json config = {{"version", 1},
                 {"model", {{"type", "Sequential"}, {"layers", {{{"type", "Linear"}, {"out_features", 3}},
                                                                {{"type", "ReLU"}},
                                                                {{"type", "Linear"}, {"out_features", 2}}}}}},
                 {"data", {{"train", {{"type", "SyntheticClassification"}, {"size", 8}, {"features", 4}}}}},
                 {"loss", {{"type", "cross_entropy"}}},
                 {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                 {"train", {{"steps", 1}}}};
  gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
  CHECK(!gt::first_nonfinite_parameter(experiment.model.module()).has_value());
  gd::NoGradGuard no_grad;
  auto params = experiment.model.module().named_parameters();
  params["2.bias"].fill_(std::numeric_limits<double>::infinity());
  CHECK(gt::first_nonfinite_parameter(experiment.model.module()) == std::optional<std::string>("2.bias"));
  params["0.weight"][1][2].fill_(std::numeric_limits<double>::quiet_NaN());
  CHECK(gt::first_nonfinite_parameter(experiment.model.module()) == std::optional<std::string>("0.weight"));
}

TEST_CASE("experiment: every training sampler runs its epochs") {
  for (const char* sampler : {"sequential", "random", "random_with_replacement", "class_balanced"}) {
    CAPTURE(sampler);
    json config = {{"version", 1},
                   {"model", {{"type", "Linear"}, {"out_features", 3}}},
                   {"data", {{"train", {{"type", "SyntheticClassification"}, {"size", 30}, {"features", 2}, {"classes", 3}}},
                             {"loader", {{"batch_size", 8}, {"shuffle", false}, {"sampler", sampler}}}}},
                   {"loss", {{"type", "cross_entropy"}}},
                   {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                   {"train", {{"epochs", 2}}},
                   {"output", {{"plots", false}, {"progress", "none"}}}};
    gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
    gt::TrainerOptions options;
    options.run_dir = scratch(std::string("sampler_") + sampler);
    options.progress = "none";
    CHECK(gt::train_experiment(experiment, options).steps == 8);  // 4 batches of 30 an epoch
  }
}

TEST_CASE("experiment: gradient clipping by norm and by value bounds one SGD step") {
  // SGD with lr 1 moves the parameters by exactly the (clipped) gradient.
  auto step_delta = [&](const json& clip) {
    json config = {{"version", 1}, {"seed", 4}, {"dtype", "float64"},
                   {"model", {{"type", "Linear"}, {"out_features", 3}}},
                   {"data", {{"train", {{"type", "SyntheticClassification"}, {"size", 16}, {"features", 5}, {"classes", 3}}},
                             {"loader", {{"batch_size", 16}}}}},
                   {"loss", {{"type", "cross_entropy"}}},
                   {"optimizer", {{"type", "SGD"}, {"lr", 1.0}}},
                   {"train", {{"steps", 1}, {"grad_clip", clip}}},
                   {"output", {{"plots", false}, {"progress", "none"}}}};
    gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
    std::vector<gd::Tensor> before;
    for (const gd::Tensor& p : experiment.model.parameters()) before.push_back(p.detach().clone());
    gt::TrainerOptions options;
    options.run_dir = scratch("clip");
    options.progress = "none";
    gt::train_experiment(experiment, options);
    std::vector<gd::Tensor> deltas;
    const auto after = experiment.model.parameters();
    for (size_t i = 0; i < after.size(); ++i) deltas.push_back((after[i].detach() - before[i]).reshape({-1}));
    return gd::cat(deltas);
  };
  // Unclipped, the gradient's norm is well above 0.01 (a fresh 3-class model).
  CHECK(step_delta(json{{"max_norm", 1e9}}).norm().item<double>() > 0.05);
  // clip_grad_norm_ scales by max_norm / (norm + 1e-6).
  CHECK(step_delta(json{{"max_norm", 0.01}}).norm().item<double>() == doctest::Approx(0.01).epsilon(1e-4));
  CHECK(step_delta(json{{"value", 0.001}}).abs().max().item<double>() <= 0.001 + 1e-15);
}
