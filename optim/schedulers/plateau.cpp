// ReduceLROnPlateau with PyTorch 1.13's comparisons, counters and messages.
#include "optim/schedulers/plateau.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gradiens::optim {

using scheduler_detail::double_from_json;
using scheduler_detail::double_to_json;
using scheduler_detail::per_group_from_json;

namespace {

// PyTorch's _init_is_better: the modes' checks, and the worst value of the mode.
double check_modes(const std::string& mode, const std::string& threshold_mode) {
  GD_CHECK(mode == "min" || mode == "max", "mode " + mode + " is unknown!");
  GD_CHECK(threshold_mode == "rel" || threshold_mode == "abs", "threshold mode " + threshold_mode + " is unknown!");
  double inf = std::numeric_limits<double>::infinity();
  return mode == "min" ? inf : -inf;
}

}  // namespace

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options)
    : optimizer_(&optimizer),
      factor_(options.factor()),
      patience_(options.patience()),
      cooldown_(options.cooldown()),
      mode_(options.mode()),
      threshold_(options.threshold()),
      threshold_mode_(options.threshold_mode()),
      eps_(options.eps()) {
  GD_CHECK(factor_ < 1.0, "Factor should be < 1.0.");
  size_t n = optimizer.param_groups().size();
  const PerGroup& min_lr = options.min_lr();
  min_lrs_ = min_lr.expand(n, fmt::format("expected {} min_lrs, got {}", n, min_lr.values().size()));
  mode_worse_ = check_modes(mode_, threshold_mode_);
  reset();
  for (const auto& group : optimizer.param_groups()) last_lr_.push_back(group.options().get_lr());
}

void ReduceLROnPlateau::reset() {
  best_ = mode_worse_;
  cooldown_counter_ = 0;
  num_bad_epochs_ = 0;
}

void ReduceLROnPlateau::step(const Tensor& metrics) {
  GD_CHECK(metrics.numel() == 1, "only one element tensors can be converted to Python scalars");
  step(metrics.item<double>());
}

void ReduceLROnPlateau::step(double metrics) {
  double current = metrics;
  last_epoch_ += 1;
  if (is_better(current, best_)) {
    best_ = current;
    num_bad_epochs_ = 0;
  } else {
    num_bad_epochs_ += 1;
  }
  if (in_cooldown()) {
    cooldown_counter_ -= 1;
    num_bad_epochs_ = 0;  // bad epochs in cooldown are not counted
  }
  if (num_bad_epochs_ > patience_) {
    reduce_lr();
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const auto& group : optimizer_->param_groups()) last_lr_.push_back(group.options().get_lr());
}

void ReduceLROnPlateau::reduce_lr() {
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    double old_lr = groups[i].options().get_lr();
    double new_lr = std::max(old_lr * factor_, min_lrs_[i]);
    if (old_lr - new_lr > eps_) groups[i].options().set_lr(new_lr);
  }
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  if (mode_ == "min" && threshold_mode_ == "rel") return a < best * (1. - threshold_);
  if (mode_ == "min" && threshold_mode_ == "abs") return a < best - threshold_;
  if (mode_ == "max" && threshold_mode_ == "rel") return a > best * (threshold_ + 1.);
  return a > best + threshold_;
}

nlohmann::json ReduceLROnPlateau::state_dict() const {
  return {{"factor", factor_},
          {"min_lrs", min_lrs_},
          {"patience", patience_},
          {"cooldown", cooldown_},
          {"cooldown_counter", cooldown_counter_},
          {"mode", mode_},
          {"threshold", threshold_},
          {"threshold_mode", threshold_mode_},
          {"best", double_to_json(best_)},
          {"num_bad_epochs", num_bad_epochs_},
          {"mode_worse", double_to_json(mode_worse_)},
          {"eps", eps_},
          {"last_epoch", last_epoch_},
          {"_last_lr", last_lr_}};
}

void ReduceLROnPlateau::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = "ReduceLROnPlateau.load_state_dict";
  size_t n = optimizer_->param_groups().size();
  auto factor = json_get<double>(state_dict, "factor", what);
  auto min_lrs = per_group_from_json(state_dict, "min_lrs", what, n);
  auto patience = json_get<int64_t>(state_dict, "patience", what);
  auto cooldown = json_get<int64_t>(state_dict, "cooldown", what);
  auto cooldown_counter = json_get<int64_t>(state_dict, "cooldown_counter", what);
  auto mode = json_get<std::string>(state_dict, "mode", what);
  auto threshold = json_get<double>(state_dict, "threshold", what);
  auto threshold_mode = json_get<std::string>(state_dict, "threshold_mode", what);
  auto best = double_from_json(state_dict, "best", what);
  auto num_bad_epochs = json_get<int64_t>(state_dict, "num_bad_epochs", what);
  auto eps = json_get<double>(state_dict, "eps", what);
  auto last_epoch = json_get<int64_t>(state_dict, "last_epoch", what);
  auto last_lr = per_group_from_json(state_dict, "_last_lr", what, n);
  // As PyTorch's load_state_dict, mode_worse follows from the mode (so a bad mode is its error).
  double mode_worse = check_modes(mode, threshold_mode);
  factor_ = factor;
  min_lrs_ = std::move(min_lrs);
  patience_ = patience;
  cooldown_ = cooldown;
  cooldown_counter_ = cooldown_counter;
  mode_ = std::move(mode);
  threshold_ = threshold;
  threshold_mode_ = std::move(threshold_mode);
  best_ = best;
  num_bad_epochs_ = num_bad_epochs;
  mode_worse_ = mode_worse;
  eps_ = eps;
  last_epoch_ = last_epoch;
  last_lr_ = std::move(last_lr);
}

}  // namespace gradiens::optim
