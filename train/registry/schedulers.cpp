// The learning-rate schedulers a config may name ("scheduler": {"type":
// "CosineAnnealingLR", ...}), their "interval" and "auto" lengths, and BuiltScheduler's state.
//
// LambdaLR and MultiplicativeLR are left out: they take a C++ function, which
// JSON cannot hold. CyclicLR's scale_fn (and so its scale_mode) likewise. No
// scheduler takes "last_epoch": a resumed run restores the state_dict instead.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/error.h"
#include "optim/schedulers/composite.h"
#include "optim/schedulers/cosine.h"
#include "optim/schedulers/cyclic.h"
#include "optim/schedulers/decay.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"

namespace gradiens::train {

// ---- BuiltScheduler ----

json BuiltScheduler::state_dict() const {
  if (scheduler) return scheduler->state_dict();
  if (plateau) return plateau->state_dict();
  return json();
}

void BuiltScheduler::load_state_dict(const json& state) {
  if (scheduler) scheduler->load_state_dict(state);
  else if (plateau) plateau->load_state_dict(state);
  else if (!state.is_null()) throw Error("scheduler state given, but the run has no scheduler to load it into");
}

namespace {

// ---- interval and "auto" ----

// OneCycleLR and CyclicLR count batches, as in PyTorch; the others count epochs.
std::string default_interval(const std::string& type) {
  return type == "OneCycleLR" || type == "CyclicLR" ? "step" : "epoch";
}

void add_interval(ObjectSpec& spec) {
  spec.add("interval", Enum({"step", "epoch"}),
           "when the scheduler steps: after every optimizer step, or after every epoch (lengths count these)")
      .default_(default_interval(spec.type_name));
}

// The phase's length in the scheduler's interval: what "auto" stands for.
int64_t phase_length(const json& config, const SchedulerContext& context) {
  return text(config, "interval") == "step" ? context.total_steps : context.total_epochs;
}

// config[key] as an integer; "auto" is replaced by the phase's length, in
// `config`, so that --print-config shows the number it became.
int64_t length_or_auto(json& config, const std::string& key, const SchedulerContext& context) {
  if (config.at(key).is_string()) {
    const int64_t length = phase_length(config, context);
    if (length < 1)
      throw Error(fmt::format("{} \"{}\": \"auto\" is the phase's number of {}s, but it has {}",
                              text(config, "type"), key, text(config, "interval"), length));
    config[key] = length;
  }
  return integer(config, key);
}

// PyTorch's "float or list": one value for every parameter group, or one per group.
TypePtr NumberOrList(TypePtr number) { return AnyOf({number, Array(number, 1)}); }

optim::PerGroup per_group(const json& config, const std::string& key) {
  const json& value = config.at(key);
  if (value.is_array()) {
    std::vector<double> values = value.get<std::vector<double>>();
    return optim::PerGroup(std::move(values));
  }
  return optim::PerGroup(value.get<double>());
}

// A number in [0, 1).
TypePtr Fraction() {
  auto type = std::make_shared<ValueType>(*Number(0.0, 1.0));
  type->exclusive_maximum = true;
  return type;
}

// The cyclic schedulers vary the optimizer's momentum (Adam's beta1) unless told not to.
void check_momentum(const optim::Optimizer& optimizer, const json& config) {
  if (flag(config, "cycle_momentum") && !optimizer.defaults().get_momentum())
    throw Error(fmt::format("{}: \"cycle_momentum\" is true, but the optimizer has no momentum to cycle (set "
                            "\"cycle_momentum\": false)",
                            text(config, "type")));
}

// A factory of a chainable scheduler (every one but ReduceLROnPlateau).
using MakeScheduler = std::function<std::shared_ptr<optim::LRScheduler>(
    optim::Optimizer& optimizer, json& config, const SchedulerContext& context, const Builders& builders)>;

SchedulerFactory chainable(MakeScheduler make) {
  return [make = std::move(make)](optim::Optimizer& optimizer, json& config, const SchedulerContext& context,
                                  const Builders& builders) {
    BuiltScheduler built;
    built.scheduler = make(optimizer, config, context, builders);
    built.interval = text(config, "interval");
    return built;
  };
}

// ---- SequentialLR and ChainedScheduler ----

// The checks on the schedulers a composite holds: each is chainable, and is
// stepped with the composite (Note [Nested interval]).
void check_nested(const json& config, const std::string& path, Diagnostics& diagnostics) {
  // Note [Nested interval]: a nested scheduler steps when the composite does,
  // so its own "interval" is overwritten by the composite's. Since the resolved
  // config has defaults filled in, an interval that differs from both the
  // composite's and its type's default was written by the user: an error.
  const std::string outer = text(config, "type"), interval = text(config, "interval");
  const json& nested = config.at("schedulers");
  for (size_t i = 0; i < nested.size(); ++i) {
    const std::string at = join_path(join_path(path, "schedulers"), i);
    const std::string type = text(nested[i], "type");
    if (type == "ReduceLROnPlateau") {
      diagnostics.error(at, fmt::format("ReduceLROnPlateau cannot be part of a {}: it follows a metric, not a "
                                        "schedule (use it as the scheduler itself)",
                                        outer));
      continue;
    }
    const std::string own = text(nested[i], "interval");
    if (own != interval && own != default_interval(type))
      diagnostics.error(join_path(at, "interval"),
                        fmt::format("\"{}\" differs from the {}'s \"{}\": a nested scheduler steps with the one that "
                                    "holds it (leave its interval out)",
                                    own, outer, interval));
    else if (type == "OneCycleLR" && interval != "step")
      diagnostics.error(at, fmt::format("OneCycleLR counts optimizer steps, but this {} steps every {} (set its "
                                        "\"interval\" to \"step\")",
                                        outer, interval));
  }
}

// Builds the nested schedulers of a composite in `config`, each with the
// composite's interval and, for "auto" lengths, `contexts[i]`.
std::vector<std::shared_ptr<optim::LRScheduler>> build_nested(optim::Optimizer& optimizer, json& config,
                                                               const std::vector<SchedulerContext>& contexts,
                                                               const Builders& builders) {
  std::vector<std::shared_ptr<optim::LRScheduler>> schedulers;
  json& nested = config.at("schedulers");
  for (size_t i = 0; i < nested.size(); ++i) {
    json& item = nested[i];
    const std::string type = text(item, "type");
    item["interval"] = config.at("interval");
    auto it = builders.schedulers.find(type);
    GD_INTERNAL_ASSERT(it != builders.schedulers.end(), "no builder for scheduler " + type);
    BuiltScheduler built = it->second(optimizer, item, contexts[i], builders);
    if (!built.scheduler)
      throw Error(fmt::format("{} \"schedulers\"[{}]: a {} cannot be part of a {}", text(config, "type"), i, type,
                              text(config, "type")));
    schedulers.push_back(std::move(built.scheduler));
  }
  return schedulers;
}

// The context of scheduler i of a SequentialLR: "auto" is the length of its
// segment, from milestones[i - 1] to milestones[i] (or the phase's end).
std::vector<SchedulerContext> segment_contexts(const json& config, const SchedulerContext& context) {
  const auto milestones = config.at("milestones").get<std::vector<int64_t>>();
  const size_t count = config.at("schedulers").size();
  const bool steps = text(config, "interval") == "step";
  const int64_t end = phase_length(config, context);
  const int64_t per_epoch = std::max<int64_t>(context.steps_per_epoch, 1);
  std::vector<SchedulerContext> contexts;
  for (size_t i = 0; i < count; ++i) {
    const int64_t from = i == 0 ? 0 : milestones.at(i - 1);
    const int64_t to = i < milestones.size() ? milestones[i] : end;
    // A segment past the phase's end never runs; its length only has to be valid.
    const int64_t length = std::max<int64_t>(to - from, 1);
    SchedulerContext segment = context;
    segment.total_steps = steps ? length : length * per_epoch;
    segment.total_epochs = steps ? (length + per_epoch - 1) / per_epoch : length;
    contexts.push_back(segment);
  }
  return contexts;
}

}  // namespace

void register_schedulers(Builders& b) {
  using optim::LRScheduler;
  using optim::Optimizer;
  using Made = std::shared_ptr<LRScheduler>;
  {
    ObjectSpec spec("StepLR", "multiplies the lr by gamma every step_size intervals");
    spec.add("step_size", Integer(1), "intervals between two decays").require();
    spec.add("gamma", Number(0.0), "the factor of each decay").default_(0.1);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext&, const Builders&) -> Made {
            return std::make_shared<optim::StepLR>(optimizer, integer(config, "step_size"), number(config, "gamma"));
          }));
  }
  {
    ObjectSpec spec("MultiStepLR", "multiplies the lr by gamma at each milestone");
    spec.add("milestones", Array(Integer(0)), "the intervals at which the lr decays").require();
    spec.add("gamma", Number(0.0), "the factor of each decay").default_(0.1);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext&, const Builders&) -> Made {
            return std::make_shared<optim::MultiStepLR>(optimizer, config.at("milestones").get<std::vector<int64_t>>(),
                                                        number(config, "gamma"));
          }));
  }
  {
    ObjectSpec spec("ConstantLR", "multiplies the lr by factor for the first total_iters intervals");
    spec.add("factor", Number(0.0, 1.0), "the factor until total_iters").default_(1.0 / 3);
    spec.add("total_iters", Integer(0), "intervals with the reduced lr").default_(5);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext&, const Builders&) -> Made {
            return std::make_shared<optim::ConstantLR>(optimizer, number(config, "factor"),
                                                       integer(config, "total_iters"));
          }));
  }
  {
    ObjectSpec spec("LinearLR", "multiplies the lr by a factor going linearly from start_factor to end_factor");
    spec.add("start_factor", Number(0.0, 1.0, /*exclusive_minimum=*/true), "the factor at the start").default_(1.0 / 3);
    spec.add("end_factor", Number(0.0, 1.0), "the factor from total_iters on").default_(1.0);
    spec.add("total_iters", OrAuto(Integer(1)), "intervals to go from start to end (\"auto\": the whole phase)")
        .default_(5);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext& context, const Builders&) -> Made {
            return std::make_shared<optim::LinearLR>(optimizer, number(config, "start_factor"),
                                                     number(config, "end_factor"),
                                                     length_or_auto(config, "total_iters", context));
          }));
  }
  {
    ObjectSpec spec("ExponentialLR", "multiplies the lr by gamma every interval");
    spec.add("gamma", Number(0.0), "the factor of each decay").require();
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext&, const Builders&) -> Made {
            return std::make_shared<optim::ExponentialLR>(optimizer, number(config, "gamma"));
          }));
  }
  {
    ObjectSpec spec("PolynomialLR", "base_lr * (1 - t / total_iters)^power, then 0");
    spec.add("total_iters", OrAuto(Integer(1)), "intervals until the lr reaches 0 (\"auto\": the whole phase)")
        .default_(5);
    spec.add("power", Number(), "the power of the polynomial").default_(1.0);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext& context, const Builders&) -> Made {
            return std::make_shared<optim::PolynomialLR>(optimizer, length_or_auto(config, "total_iters", context),
                                                         number(config, "power"));
          }));
  }
  {
    ObjectSpec spec("CosineAnnealingLR", "a half cosine from the lr down to eta_min over T_max intervals");
    spec.add("T_max", OrAuto(Integer(1)), "intervals of the half cosine (\"auto\": the whole phase)").default_("auto");
    spec.add("eta_min", Number(), "the lowest lr").default_(0.0);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext& context, const Builders&) -> Made {
            return std::make_shared<optim::CosineAnnealingLR>(optimizer, length_or_auto(config, "T_max", context),
                                                              number(config, "eta_min"));
          }));
  }
  {
    ObjectSpec spec("CosineAnnealingWarmRestarts", "cosine annealing to eta_min, restarting at the lr (SGDR)");
    spec.add("T_0", Integer(1), "intervals of the first cycle").require();
    spec.add("T_mult", Integer(1), "each cycle is this many times longer than the one before").default_(1);
    spec.add("eta_min", Number(), "the lowest lr").default_(0.0);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext&, const Builders&) -> Made {
            return std::make_shared<optim::CosineAnnealingWarmRestarts>(optimizer, integer(config, "T_0"),
                                                                        integer(config, "T_mult"),
                                                                        number(config, "eta_min"));
          }));
  }
  {
    // PyTorch's epochs and steps_per_epoch are left out: "auto" is their product.
    ObjectSpec spec("OneCycleLR", "the 1cycle policy: the lr up to max_lr and down far below, momentum inversely");
    spec.add("max_lr", NumberOrList(Number(0.0)), "the peak lr (or one per parameter group)").require();
    spec.add("total_steps", OrAuto(Integer(1)), "optimizer steps of the cycle (\"auto\": the whole phase)")
        .default_("auto");
    spec.add("pct_start", Number(0.0, 1.0), "the fraction of the cycle spent raising the lr").default_(0.3);
    spec.add("anneal_strategy", Enum({"cos", "linear"}), "how the lr moves between its values").default_("cos");
    spec.add("cycle_momentum", Bool(), "cycle the momentum (Adam's beta1) inversely to the lr").default_(true);
    spec.add("base_momentum", NumberOrList(Number(0.0)), "the lowest momentum (or one per group)").default_(0.85);
    spec.add("max_momentum", NumberOrList(Number(0.0)), "the highest momentum (or one per group)").default_(0.95);
    spec.add("div_factor", PositiveNumber(), "the starting lr is max_lr / div_factor").default_(25.0);
    spec.add("final_div_factor", PositiveNumber(), "the final lr is the starting lr / final_div_factor")
        .default_(1e4);
    spec.add("three_phase", Bool(), "come back down to the starting lr before annealing further (the paper's schedule)")
        .default_(false);
    add_interval(spec);
    spec.check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
      if (text(config, "interval") != "step")
        diagnostics.error(join_path(path, "interval"),
                          "OneCycleLR counts optimizer steps (total_steps); its interval must be \"step\"");
    };
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext& context, const Builders&) -> Made {
            check_momentum(optimizer, config);
            optim::OneCycleLROptions options(per_group(config, "max_lr"));
            options.total_steps(length_or_auto(config, "total_steps", context))
                .pct_start(number(config, "pct_start"))
                .anneal_strategy(text(config, "anneal_strategy"))
                .cycle_momentum(flag(config, "cycle_momentum"))
                .base_momentum(per_group(config, "base_momentum"))
                .max_momentum(per_group(config, "max_momentum"))
                .div_factor(number(config, "div_factor"))
                .final_div_factor(number(config, "final_div_factor"))
                .three_phase(flag(config, "three_phase"));
            return std::make_shared<optim::OneCycleLR>(optimizer, options);
          }));
  }
  {
    ObjectSpec spec("CyclicLR", "the lr cycles between base_lr and max_lr (Smith's CLR), momentum inversely");
    spec.add("base_lr", NumberOrList(Number(0.0)), "the lowest lr (or one per parameter group)").require();
    spec.add("max_lr", NumberOrList(Number(0.0)), "the highest lr (or one per parameter group)").require();
    spec.add("step_size_up", PositiveNumber(), "intervals going up").default_(2000.0);
    spec.add("step_size_down", OrNull(PositiveNumber()), "intervals going down (null: step_size_up)");
    spec.add("mode", Enum({"triangular", "triangular2", "exp_range"}),
             "constant amplitude, halved every cycle, or shrinking by gamma^interval")
        .default_("triangular");
    spec.add("gamma", Number(0.0), "the amplitude's factor per interval in exp_range mode").default_(1.0);
    spec.add("cycle_momentum", Bool(), "cycle the momentum (Adam's beta1) inversely to the lr").default_(true);
    spec.add("base_momentum", NumberOrList(Number(0.0)), "the lowest momentum (or one per group)").default_(0.8);
    spec.add("max_momentum", NumberOrList(Number(0.0)), "the highest momentum (or one per group)").default_(0.9);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext&, const Builders&) -> Made {
            check_momentum(optimizer, config);
            optim::CyclicLROptions options(per_group(config, "base_lr"), per_group(config, "max_lr"));
            options.step_size_up(number(config, "step_size_up"))
                .mode(text(config, "mode"))
                .gamma(number(config, "gamma"))
                .cycle_momentum(flag(config, "cycle_momentum"))
                .base_momentum(per_group(config, "base_momentum"))
                .max_momentum(per_group(config, "max_momentum"));
            if (has(config, "step_size_down")) options.step_size_down(number(config, "step_size_down"));
            return std::make_shared<optim::CyclicLR>(optimizer, options);
          }));
  }
  {
    ObjectSpec spec("ReduceLROnPlateau", "multiplies the lr by factor once the monitored metric stops improving");
    spec.add("monitor", String(), "the metric that should improve, as the logs name it").default_("val/loss");
    spec.add("mode", Enum({"min", "max"}), "whether the metric should fall (a loss) or rise (an accuracy)")
        .default_("min");
    spec.add("factor", Fraction(), "the factor of each reduction").default_(0.1);
    spec.add("patience", Integer(0), "evaluations without improvement that are tolerated").default_(10);
    spec.add("threshold", Number(0.0), "how much an improvement must beat the best value by").default_(1e-4);
    spec.add("threshold_mode", Enum({"rel", "abs"}), "whether the threshold is relative or absolute").default_("rel");
    spec.add("cooldown", Integer(0), "evaluations after a reduction before bad ones count again").default_(0);
    spec.add("min_lr", NumberOrList(Number(0.0)), "the lowest lr (or one per parameter group)").default_(0.0);
    spec.add("eps", Number(0.0), "a reduction smaller than this is skipped").default_(1e-8);
    add_interval(spec);
    b.add(b.schedulers, kScheduler, std::move(spec),
          SchedulerFactory([](Optimizer& optimizer, json& config, const SchedulerContext&,
                              const Builders&) -> BuiltScheduler {
            optim::ReduceLROnPlateauOptions options;
            options.mode(text(config, "mode"))
                .factor(number(config, "factor"))
                .patience(integer(config, "patience"))
                .threshold(number(config, "threshold"))
                .threshold_mode(text(config, "threshold_mode"))
                .cooldown(integer(config, "cooldown"))
                .min_lr(per_group(config, "min_lr"))
                .eps(number(config, "eps"));
            BuiltScheduler built;
            built.plateau = std::make_shared<optim::ReduceLROnPlateau>(optimizer, options);
            built.interval = text(config, "interval");
            built.monitor = text(config, "monitor");
            return built;
          }));
  }
  {
    ObjectSpec spec("SequentialLR", "runs schedulers one after another, switching at the milestones");
    spec.add("schedulers", Array(Typed(kScheduler), 1), "the schedulers, in order (their interval is this one's)")
        .require();
    spec.add("milestones", Array(Integer(0)), "the intervals at which the next scheduler starts (one fewer than schedulers)")
        .require();
    add_interval(spec);
    spec.check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
      check_nested(config, path, diagnostics);
      const size_t schedulers = config.at("schedulers").size(), milestones = config.at("milestones").size();
      if (milestones + 1 != schedulers)
        diagnostics.error(join_path(path, "milestones"),
                          fmt::format("expected {} milestone{} for {} schedulers (one where each scheduler after the "
                                      "first starts), got {}",
                                      schedulers - 1, schedulers == 2 ? "" : "s", schedulers, milestones));
    };
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext& context,
                       const Builders& builders) -> Made {
            auto schedulers = build_nested(optimizer, config, segment_contexts(config, context), builders);
            return std::make_shared<optim::SequentialLR>(optimizer, std::move(schedulers),
                                                         config.at("milestones").get<std::vector<int64_t>>());
          }));
  }
  {
    ObjectSpec spec("ChainedScheduler", "steps every scheduler at each interval: their factors multiply");
    spec.add("schedulers", Array(Typed(kScheduler), 1), "the schedulers (their interval is this one's)").require();
    add_interval(spec);
    spec.check = check_nested;
    b.add(b.schedulers, kScheduler, std::move(spec),
          chainable([](Optimizer& optimizer, json& config, const SchedulerContext& context,
                       const Builders& builders) -> Made {
            const std::vector<SchedulerContext> contexts(config.at("schedulers").size(), context);
            return std::make_shared<optim::ChainedScheduler>(build_nested(optimizer, config, contexts, builders));
          }));
  }
}

}  // namespace gradiens::train
