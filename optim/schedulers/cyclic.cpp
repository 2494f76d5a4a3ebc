// OneCycleLR and CyclicLR with PyTorch 1.13's formulas, checks and messages,
// in its order of operations (the lrs and momenta match it bit for bit).
#include "optim/schedulers/cyclic.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

namespace gradiens::optim {

using scheduler_detail::divide;
using scheduler_detail::group_value;
using scheduler_detail::per_group_from_json;
using scheduler_detail::python_repr;

namespace {

std::vector<double> format_param(const PerGroup& param, const Optimizer& optimizer, const std::string& name) {
  size_t n = optimizer.param_groups().size();
  return param.expand(n, fmt::format("expected {} values for {}, got {}", n, name, param.values().size()));
}

void check_supports_momentum(const Optimizer& optimizer) {
  GD_CHECK(optimizer.defaults().get_momentum().has_value(),
           "optimizer must support momentum with `cycle_momentum` option enabled");
}

}  // namespace

// ---- OneCycleLR ----

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options)
    : LRScheduler(optimizer), anneal_strategy_(options.anneal_strategy()), cycle_momentum_(options.cycle_momentum()) {
  const auto& total_steps = options.total_steps();
  const auto& epochs = options.epochs();
  const auto& steps_per_epoch = options.steps_per_epoch();
  if (total_steps) {
    GD_CHECK(*total_steps > 0, fmt::format("Expected positive integer total_steps, but got {}", *total_steps));
    total_steps_ = *total_steps;
  } else {
    // PyTorch asks for this only when all three are missing (one of the two missing is a TypeError there).
    GD_CHECK(epochs && steps_per_epoch, "You must define either total_steps OR (epochs AND steps_per_epoch)");
    GD_CHECK(*epochs > 0, fmt::format("Expected positive integer epochs, but got {}", *epochs));
    GD_CHECK(*steps_per_epoch > 0,
             fmt::format("Expected positive integer steps_per_epoch, but got {}", *steps_per_epoch));
    total_steps_ = *epochs * *steps_per_epoch;
  }

  double pct_start = options.pct_start();
  double total = static_cast<double>(total_steps_);
  if (options.three_phase()) {
    phases_ = {{pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
               {2 * pct_start * total - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"},
               {total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"}};
  } else {
    phases_ = {{pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
               {total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"}};
  }

  GD_CHECK(!(pct_start < 0 || pct_start > 1),
           fmt::format("Expected float between 0 and 1 pct_start, but got {}", python_repr(pct_start)));
  GD_CHECK(anneal_strategy_ == "cos" || anneal_strategy_ == "linear",
           fmt::format("anneal_strategy must by one of 'cos' or 'linear', instead got {}", anneal_strategy_));

  auto max_lrs = format_param(options.max_lr(), optimizer, "max_lr");
  auto& groups = optimizer.param_groups();
  if (options.last_epoch() == -1) {
    for (size_t i = 0; i < groups.size(); ++i) {
      auto& values = groups[i].values();
      values["initial_lr"] = divide(max_lrs[i], options.div_factor(), name());
      values["max_lr"] = max_lrs[i];
      values["min_lr"] = divide(values["initial_lr"], options.final_div_factor(), name());
    }
  }

  if (cycle_momentum_) {
    check_supports_momentum(optimizer);
    auto max_momentums = format_param(options.max_momentum(), optimizer, "max_momentum");
    auto base_momentums = format_param(options.base_momentum(), optimizer, "base_momentum");
    if (options.last_epoch() == -1) {
      for (size_t i = 0; i < groups.size(); ++i) {
        groups[i].options().set_momentum(max_momentums[i]);
        groups[i].values()["max_momentum"] = max_momentums[i];
        groups[i].values()["base_momentum"] = base_momentums[i];
      }
    }
  }

  start(options.last_epoch());
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (anneal_strategy_ == "cos") {
    double cos_out = std::cos(std::numbers::pi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  int64_t step_num = last_epoch_;
  GD_CHECK(step_num <= total_steps_, fmt::format("Tried to step {} times. The specified number of total steps is {}",
                                                 step_num + 1, total_steps_));
  auto& groups = optimizer_->param_groups();
  std::vector<double> lrs;
  for (size_t g = 0; g < groups.size(); ++g) {
    double start_step = 0;
    double lr = 0, momentum = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      double end_step = phase.end_step;
      if (static_cast<double>(step_num) <= end_step || i == phases_.size() - 1) {
        double pct = divide(static_cast<double>(step_num) - start_step, end_step - start_step, name());
        lr = anneal(group_value(groups[g], phase.start_lr, g), group_value(groups[g], phase.end_lr, g), pct);
        if (cycle_momentum_)
          momentum = anneal(group_value(groups[g], phase.start_momentum, g),
                            group_value(groups[g], phase.end_momentum, g), pct);
        break;
      }
      start_step = phase.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) groups[g].options().set_momentum(momentum);
  }
  return lrs;
}

nlohmann::json OneCycleLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["total_steps"] = total_steps_;
  nlohmann::json phases = nlohmann::json::array();
  for (const Phase& phase : phases_)
    phases.push_back({{"end_step", phase.end_step},
                      {"start_lr", phase.start_lr},
                      {"end_lr", phase.end_lr},
                      {"start_momentum", phase.start_momentum},
                      {"end_momentum", phase.end_momentum}});
  j["_schedule_phases"] = phases;
  j["anneal_strategy"] = anneal_strategy_;
  j["cycle_momentum"] = cycle_momentum_;
  return j;
}

void OneCycleLR::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = load_what();
  auto total_steps = json_get<int64_t>(state_dict, "total_steps", what);
  auto anneal_strategy = json_get<std::string>(state_dict, "anneal_strategy", what);
  auto cycle_momentum = json_get<bool>(state_dict, "cycle_momentum", what);
  auto phase_list = json_get<std::vector<nlohmann::json>>(state_dict, "_schedule_phases", what);
  GD_CHECK(total_steps > 0, fmt::format("{}: 'total_steps' must be positive, but got {}", what, total_steps));
  GD_CHECK(anneal_strategy == "cos" || anneal_strategy == "linear",
           fmt::format("{}: 'anneal_strategy' must be 'cos' or 'linear', but got '{}'", what, anneal_strategy));
  GD_CHECK(!phase_list.empty(), fmt::format("{}: '_schedule_phases' is empty", what));
  std::vector<Phase> phases;
  const std::string phase_what = what + ": _schedule_phases entry";
  for (const auto& entry : phase_list) {
    Phase phase{json_get<double>(entry, "end_step", phase_what), json_get<std::string>(entry, "start_lr", phase_what),
                json_get<std::string>(entry, "end_lr", phase_what),
                json_get<std::string>(entry, "start_momentum", phase_what),
                json_get<std::string>(entry, "end_momentum", phase_what)};
    for (const std::string* key : {&phase.start_lr, &phase.end_lr})
      GD_CHECK(*key == "initial_lr" || *key == "max_lr" || *key == "min_lr",
               fmt::format("{}: unknown lr key '{}'", phase_what, *key));
    for (const std::string* key : {&phase.start_momentum, &phase.end_momentum})
      GD_CHECK(*key == "max_momentum" || *key == "base_momentum",
               fmt::format("{}: unknown momentum key '{}'", phase_what, *key));
    phases.push_back(std::move(phase));
  }
  LRScheduler::load_state_dict(state_dict);
  total_steps_ = total_steps;
  phases_ = std::move(phases);
  anneal_strategy_ = std::move(anneal_strategy);
  cycle_momentum_ = cycle_momentum;
}

// ---- CyclicLR ----

CyclicLR::CyclicLR(Optimizer& optimizer, const CyclicLROptions& options)
    : LRScheduler(optimizer),
      mode_(options.mode()),
      gamma_(options.gamma()),
      scale_fn_custom_(options.scale_fn()),
      cycle_momentum_(options.cycle_momentum()) {
  auto& groups = optimizer.param_groups();
  auto base_lrs = format_param(options.base_lr(), optimizer, "base_lr");
  if (options.last_epoch() == -1)
    for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(base_lrs[i]);

  max_lrs_ = format_param(options.max_lr(), optimizer, "max_lr");

  double step_size_up = options.step_size_up();
  double step_size_down = options.step_size_down().value_or(step_size_up);
  total_size_ = step_size_up + step_size_down;
  step_ratio_ = divide(step_size_up, total_size_, name());

  GD_CHECK(mode_ == "triangular" || mode_ == "triangular2" || mode_ == "exp_range" || scale_fn_custom_,
           "mode is invalid and scale_fn is None");
  if (!scale_fn_custom_) {
    scale_mode_ = mode_ == "exp_range" ? "iterations" : "cycle";
  } else {
    // PyTorch takes any other string as "iterations".
    scale_mode_ = options.scale_mode();
    GD_CHECK(scale_mode_ == "cycle" || scale_mode_ == "iterations",
             fmt::format("scale_mode must be one of 'cycle' or 'iterations', instead got {}", scale_mode_));
  }

  if (cycle_momentum_) {
    check_supports_momentum(optimizer);
    auto base_momentums = format_param(options.base_momentum(), optimizer, "base_momentum");
    if (options.last_epoch() == -1)
      for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_momentum(base_momentums[i]);
    for (const auto& group : groups) base_momentums_.push_back(*group.options().get_momentum());
    max_momentums_ = format_param(options.max_momentum(), optimizer, "max_momentum");
  }

  start(options.last_epoch());
  // As PyTorch: the initial step ran on the groups' "initial_lr", the later ones on base_lr.
  base_lrs_ = base_lrs;
}

double CyclicLR::scale(double x) const {
  if (scale_fn_custom_) return scale_fn_custom_(x);
  if (mode_ == "triangular") return 1.;
  if (mode_ == "triangular2") return 1 / std::pow(2., x - 1);
  return std::pow(gamma_, x);
}

std::vector<double> CyclicLR::get_lr() {
  double epoch = static_cast<double>(last_epoch_);
  double cycle = std::floor(1 + epoch / total_size_);
  double x = 1. + epoch / total_size_ - cycle;
  double scale_factor = x <= step_ratio_ ? divide(x, step_ratio_, name()) : divide(x - 1, step_ratio_ - 1, name());
  double scale_at = scale(scale_mode_ == "cycle" ? cycle : epoch);

  std::vector<double> lrs;
  for (size_t i = 0; i < base_lrs_.size(); ++i) {
    double base_height = (max_lrs_[i] - base_lrs_[i]) * scale_factor;
    lrs.push_back(base_lrs_[i] + base_height * scale_at);
  }
  if (cycle_momentum_) {
    auto& groups = optimizer_->param_groups();
    for (size_t i = 0; i < groups.size(); ++i) {
      double base_height = (max_momentums_[i] - base_momentums_[i]) * scale_factor;
      groups[i].options().set_momentum(max_momentums_[i] - base_height * scale_at);
    }
  }
  return lrs;
}

nlohmann::json CyclicLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["max_lrs"] = max_lrs_;
  j["total_size"] = total_size_;
  j["step_ratio"] = step_ratio_;
  j["mode"] = mode_;
  j["gamma"] = gamma_;
  j["scale_mode"] = scale_mode_;
  j["cycle_momentum"] = cycle_momentum_;
  if (cycle_momentum_) {
    j["base_momentums"] = base_momentums_;
    j["max_momentums"] = max_momentums_;
  }
  return j;
}

void CyclicLR::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = load_what();
  size_t n = optimizer_->param_groups().size();
  auto max_lrs = per_group_from_json(state_dict, "max_lrs", what, n);
  auto total_size = json_get<double>(state_dict, "total_size", what);
  auto step_ratio = json_get<double>(state_dict, "step_ratio", what);
  auto mode = json_get<std::string>(state_dict, "mode", what);
  auto gamma = json_get<double>(state_dict, "gamma", what);
  auto scale_mode = json_get<std::string>(state_dict, "scale_mode", what);
  auto cycle_momentum = json_get<bool>(state_dict, "cycle_momentum", what);
  std::vector<double> base_momentums, max_momentums;
  if (cycle_momentum) {
    check_supports_momentum(*optimizer_);
    base_momentums = per_group_from_json(state_dict, "base_momentums", what, n);
    max_momentums = per_group_from_json(state_dict, "max_momentums", what, n);
  }
  GD_CHECK(mode == "triangular" || mode == "triangular2" || mode == "exp_range" || scale_fn_custom_,
           fmt::format("{}: 'mode' is '{}' and there is no scale_fn", what, mode));
  GD_CHECK(scale_mode == "cycle" || scale_mode == "iterations",
           fmt::format("{}: 'scale_mode' must be 'cycle' or 'iterations', but got '{}'", what, scale_mode));
  LRScheduler::load_state_dict(state_dict);
  max_lrs_ = std::move(max_lrs);
  total_size_ = total_size;
  step_ratio_ = step_ratio;
  mode_ = std::move(mode);
  gamma_ = gamma;
  scale_mode_ = std::move(scale_mode);
  cycle_momentum_ = cycle_momentum;
  base_momentums_ = std::move(base_momentums);
  max_momentums_ = std::move(max_momentums);
}

}  // namespace gradiens::optim
