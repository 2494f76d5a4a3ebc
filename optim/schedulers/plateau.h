// optim::ReduceLROnPlateau, as PyTorch 1.13's: lr * factor once a metric has
// stopped improving for `patience` steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optim/schedulers/base.h"

namespace gradiens::optim {

// ReduceLROnPlateau's arguments, PyTorch's defaults.
class ReduceLROnPlateauOptions {
 public:
  ReduceLROnPlateauOptions() = default;

  // "min": the metric should fall (a loss); "max": it should rise (an accuracy).
  ReduceLROnPlateauOptions& mode(std::string v) { mode_ = std::move(v); return *this; }
  const std::string& mode() const { return mode_; }
  // new_lr = lr * factor.
  ReduceLROnPlateauOptions& factor(double v) { factor_ = v; return *this; }
  double factor() const { return factor_; }
  // Steps without improvement that are tolerated; the next one reduces the lr.
  ReduceLROnPlateauOptions& patience(int64_t v) { patience_ = v; return *this; }
  int64_t patience() const { return patience_; }
  // An improvement must beat best by this much: relatively (best * (1 -+
  // threshold), threshold_mode "rel") or absolutely (best -+ threshold, "abs").
  ReduceLROnPlateauOptions& threshold(double v) { threshold_ = v; return *this; }
  double threshold() const { return threshold_; }
  ReduceLROnPlateauOptions& threshold_mode(std::string v) { threshold_mode_ = std::move(v); return *this; }
  const std::string& threshold_mode() const { return threshold_mode_; }
  // Steps after a reduction during which bad steps are not counted.
  ReduceLROnPlateauOptions& cooldown(int64_t v) { cooldown_ = v; return *this; }
  int64_t cooldown() const { return cooldown_; }
  // The lowest lr, for all groups or one per group.
  ReduceLROnPlateauOptions& min_lr(PerGroup v) { min_lr_ = std::move(v); return *this; }
  const PerGroup& min_lr() const { return min_lr_; }
  // A reduction smaller than eps is skipped.
  ReduceLROnPlateauOptions& eps(double v) { eps_ = v; return *this; }
  double eps() const { return eps_; }

 private:
  std::string mode_ = "min";
  double factor_ = 0.1;
  int64_t patience_ = 10;
  double threshold_ = 1e-4;
  std::string threshold_mode_ = "rel";
  int64_t cooldown_ = 0;
  PerGroup min_lr_ = 0.0;
  double eps_ = 1e-8;
};

// Stepped with the metric, after the optimizer (and usually once an epoch):
//   opt.step(); sched.step(val_loss);
// Not an LRScheduler: it has no schedule, only the metric's history.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options = {});

  void step(double metrics);
  // A one-element tensor, as PyTorch's float(metrics).
  void step(const Tensor& metrics);

  // Each group's lr after the last step (their lrs at construction before the
  // first, where PyTorch 1.13 has none yet).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  Optimizer& optimizer() const { return *optimizer_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }
  int64_t last_epoch() const { return last_epoch_; }
  // Whether metric a improves on best, by the mode and the threshold.
  bool is_better(double a, double best) const;

  // Everything but the optimizer, under PyTorch's names ({"factor", "min_lrs",
  // "patience", "cooldown", "cooldown_counter", "mode", "threshold",
  // "threshold_mode", "best", "num_bad_epochs", "mode_worse", "eps",
  // "last_epoch", "_last_lr"}); an infinite best is written as "inf"/"-inf".
  nlohmann::json state_dict() const;
  // Restores what state_dict wrote; a bad mode is PyTorch's error, and any
  // error leaves the scheduler as it was.
  void load_state_dict(const nlohmann::json& state_dict);

 private:
  void reset();
  void reduce_lr();

  Optimizer* optimizer_;
  double factor_;
  std::vector<double> min_lrs_;
  int64_t patience_;
  int64_t cooldown_;
  int64_t cooldown_counter_ = 0;
  std::string mode_;
  double threshold_;
  std::string threshold_mode_;
  double best_ = 0;
  int64_t num_bad_epochs_ = 0;
  double mode_worse_ = 0;
  double eps_;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace gradiens::optim
