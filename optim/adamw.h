// optim::AdamW (Adam with decoupled weight decay, Loshchilov and Hutter), as
// libtorch's torch::optim::AdamW with PyTorch 1.13's update and messages.
#pragma once

#include <memory>
#include <tuple>
#include <vector>

#include "optim/adam.h"

namespace gradiens::optim {

class AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
 public:
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}

  AdamWOptions& lr(double lr) { lr_ = lr; return *this; }
  double lr() const { return lr_; }
  AdamWOptions& betas(std::tuple<double, double> betas) { betas_ = betas; return *this; }
  const std::tuple<double, double>& betas() const { return betas_; }
  AdamWOptions& eps(double eps) { eps_ = eps; return *this; }
  double eps() const { return eps_; }
  AdamWOptions& weight_decay(double weight_decay) { weight_decay_ = weight_decay; return *this; }
  double weight_decay() const { return weight_decay_; }
  AdamWOptions& amsgrad(bool amsgrad) { amsgrad_ = amsgrad; return *this; }
  bool amsgrad() const { return amsgrad_; }
  AdamWOptions& maximize(bool maximize) { maximize_ = maximize; return *this; }
  bool maximize() const { return maximize_; }

  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // beta1, as PyTorch's cyclic schedulers vary it (use_beta1).
  std::optional<double> get_momentum() const override { return std::get<0>(betas_); }
  void set_momentum(double momentum) override { std::get<0>(betas_) = momentum; }
  // {"lr", "betas": [b1, b2], "eps", "weight_decay", "amsgrad", "maximize"}.
  nlohmann::json to_json() const override;
  // "amsgrad" and "maximize" may be missing (false), as PyTorch's __setstate__ allows.
  void from_json(const nlohmann::json& j) override;
  // Throws PyTorch's message for the first invalid value.
  void validate() const;

 private:
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_ = 1e-2;
  bool amsgrad_ = false;
  bool maximize_ = false;
};

// The same entries as Adam's: "step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq".
using AdamWParamState = AdamParamState;

class AdamW : public Optimizer {
 public:
  explicit AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  explicit AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace gradiens::optim
