// The per-batch cyclic schedulers, as PyTorch 1.13's: OneCycleLR (Smith and
// Topin's 1cycle) and CyclicLR (Smith's CLR), both cycling the momentum too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "optim/schedulers/base.h"

namespace gradiens::optim {

// OneCycleLR's arguments, PyTorch's defaults. The length of the cycle is
// total_steps, or else epochs * steps_per_epoch.
class OneCycleLROptions {
 public:
  OneCycleLROptions(PerGroup max_lr) : max_lr_(std::move(max_lr)) {}

  OneCycleLROptions& max_lr(PerGroup v) { max_lr_ = std::move(v); return *this; }
  const PerGroup& max_lr() const { return max_lr_; }
  OneCycleLROptions& total_steps(int64_t v) { total_steps_ = v; return *this; }
  const std::optional<int64_t>& total_steps() const { return total_steps_; }
  OneCycleLROptions& epochs(int64_t v) { epochs_ = v; return *this; }
  const std::optional<int64_t>& epochs() const { return epochs_; }
  OneCycleLROptions& steps_per_epoch(int64_t v) { steps_per_epoch_ = v; return *this; }
  const std::optional<int64_t>& steps_per_epoch() const { return steps_per_epoch_; }
  // The fraction of the cycle spent increasing the lr.
  OneCycleLROptions& pct_start(double v) { pct_start_ = v; return *this; }
  double pct_start() const { return pct_start_; }
  // "cos" or "linear".
  OneCycleLROptions& anneal_strategy(std::string v) { anneal_strategy_ = std::move(v); return *this; }
  const std::string& anneal_strategy() const { return anneal_strategy_; }
  // Cycle the momentum (Adam's beta1) inversely to the lr, between base_momentum and max_momentum.
  OneCycleLROptions& cycle_momentum(bool v) { cycle_momentum_ = v; return *this; }
  bool cycle_momentum() const { return cycle_momentum_; }
  OneCycleLROptions& base_momentum(PerGroup v) { base_momentum_ = std::move(v); return *this; }
  const PerGroup& base_momentum() const { return base_momentum_; }
  OneCycleLROptions& max_momentum(PerGroup v) { max_momentum_ = std::move(v); return *this; }
  const PerGroup& max_momentum() const { return max_momentum_; }
  // initial_lr = max_lr / div_factor; min_lr = initial_lr / final_div_factor.
  OneCycleLROptions& div_factor(double v) { div_factor_ = v; return *this; }
  double div_factor() const { return div_factor_; }
  OneCycleLROptions& final_div_factor(double v) { final_div_factor_ = v; return *this; }
  double final_div_factor() const { return final_div_factor_; }
  // Up to max_lr, back down to initial_lr symmetrically, then down to min_lr
  // (the paper's schedule), instead of fastai's two phases.
  OneCycleLROptions& three_phase(bool v) { three_phase_ = v; return *this; }
  bool three_phase() const { return three_phase_; }
  // The index of the last batch when resuming; -1 starts the cycle.
  OneCycleLROptions& last_epoch(int64_t v) { last_epoch_ = v; return *this; }
  int64_t last_epoch() const { return last_epoch_; }

 private:
  PerGroup max_lr_;
  std::optional<int64_t> total_steps_, epochs_, steps_per_epoch_;
  double pct_start_ = 0.3;
  std::string anneal_strategy_ = "cos";
  bool cycle_momentum_ = true;
  PerGroup base_momentum_ = 0.85;
  PerGroup max_momentum_ = 0.95;
  double div_factor_ = 25.;
  double final_div_factor_ = 1e4;
  bool three_phase_ = false;
  int64_t last_epoch_ = -1;
};

// Keeps "initial_lr", "max_lr", "min_lr" and, cycling momentum, "max_momentum"
// and "base_momentum" with each group. Stepping past total_steps is an error.
// Not chainable: it sets the lr from those values alone.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);
  std::string_view name() const override { return "OneCycleLR"; }
  int64_t total_steps() const { return total_steps_; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

  // A phase of the cycle: it ends at end_step, annealing between the group
  // values named by its keys ("initial_lr" to "max_lr", ...).
  struct Phase {
    double end_step;
    std::string start_lr, end_lr, start_momentum, end_momentum;
  };

 protected:
  std::vector<double> get_lr() override;

 private:
  double anneal(double start, double end, double pct) const;

  int64_t total_steps_;
  std::vector<Phase> phases_;
  std::string anneal_strategy_;
  bool cycle_momentum_;
};

// CyclicLR's arguments, PyTorch's defaults.
class CyclicLROptions {
 public:
  using ScaleFn = std::function<double(double)>;

  CyclicLROptions(PerGroup base_lr, PerGroup max_lr) : base_lr_(std::move(base_lr)), max_lr_(std::move(max_lr)) {}

  // The lower and upper lr of the cycle.
  CyclicLROptions& base_lr(PerGroup v) { base_lr_ = std::move(v); return *this; }
  const PerGroup& base_lr() const { return base_lr_; }
  CyclicLROptions& max_lr(PerGroup v) { max_lr_ = std::move(v); return *this; }
  const PerGroup& max_lr() const { return max_lr_; }
  // Batches going up, and going down (step_size_up when not given).
  CyclicLROptions& step_size_up(double v) { step_size_up_ = v; return *this; }
  double step_size_up() const { return step_size_up_; }
  CyclicLROptions& step_size_down(double v) { step_size_down_ = v; return *this; }
  const std::optional<double>& step_size_down() const { return step_size_down_; }
  // "triangular", "triangular2" (the amplitude halves each cycle) or "exp_range"
  // (it shrinks by gamma^iteration); ignored when scale_fn is given.
  CyclicLROptions& mode(std::string v) { mode_ = std::move(v); return *this; }
  const std::string& mode() const { return mode_; }
  CyclicLROptions& gamma(double v) { gamma_ = v; return *this; }
  double gamma() const { return gamma_; }
  // A custom amplitude scale in [0, 1], of the cycle number (scale_mode
  // "cycle") or of the iteration ("iterations"). Not saved by state_dict.
  CyclicLROptions& scale_fn(ScaleFn v) { scale_fn_ = std::move(v); return *this; }
  const ScaleFn& scale_fn() const { return scale_fn_; }
  CyclicLROptions& scale_mode(std::string v) { scale_mode_ = std::move(v); return *this; }
  const std::string& scale_mode() const { return scale_mode_; }
  // Cycle the momentum (Adam's beta1) inversely to the lr, between base_momentum and max_momentum.
  CyclicLROptions& cycle_momentum(bool v) { cycle_momentum_ = v; return *this; }
  bool cycle_momentum() const { return cycle_momentum_; }
  CyclicLROptions& base_momentum(PerGroup v) { base_momentum_ = std::move(v); return *this; }
  const PerGroup& base_momentum() const { return base_momentum_; }
  CyclicLROptions& max_momentum(PerGroup v) { max_momentum_ = std::move(v); return *this; }
  const PerGroup& max_momentum() const { return max_momentum_; }
  // The index of the last batch when resuming; -1 starts the cycle.
  CyclicLROptions& last_epoch(int64_t v) { last_epoch_ = v; return *this; }
  int64_t last_epoch() const { return last_epoch_; }

 private:
  PerGroup base_lr_, max_lr_;
  double step_size_up_ = 2000;
  std::optional<double> step_size_down_;
  std::string mode_ = "triangular";
  double gamma_ = 1.;
  ScaleFn scale_fn_;
  std::string scale_mode_ = "cycle";
  bool cycle_momentum_ = true;
  PerGroup base_momentum_ = 0.8;
  PerGroup max_momentum_ = 0.9;
  int64_t last_epoch_ = -1;
};

// Not chainable: it sets the lr from base_lr and max_lr alone.
class CyclicLR : public LRScheduler {
 public:
  CyclicLR(Optimizer& optimizer, const CyclicLROptions& options);
  std::string_view name() const override { return "CyclicLR"; }
  // The custom scale function is not saved: the loading scheduler keeps its own.
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;

 private:
  double scale(double x) const;

  std::vector<double> max_lrs_;
  double total_size_;
  double step_ratio_;
  std::string mode_;
  double gamma_;
  CyclicLROptions::ScaleFn scale_fn_custom_;
  std::string scale_mode_;
  bool cycle_momentum_;
  std::vector<double> base_momentums_, max_momentums_;
};

}  // namespace gradiens::optim
