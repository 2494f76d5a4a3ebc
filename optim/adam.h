// optim::Adam (Kingma and Ba, with AMSGrad and maximize), as libtorch's
// torch::optim::Adam with PyTorch 1.13's update, defaults and messages.
#pragma once

#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

#include "optim/optimizer.h"

namespace gradiens::optim {

class AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
 public:
  AdamOptions(double lr = 1e-3) : lr_(lr) {}

  AdamOptions& lr(double lr) { lr_ = lr; return *this; }
  double lr() const { return lr_; }
  AdamOptions& betas(std::tuple<double, double> betas) { betas_ = betas; return *this; }
  const std::tuple<double, double>& betas() const { return betas_; }
  AdamOptions& eps(double eps) { eps_ = eps; return *this; }
  double eps() const { return eps_; }
  AdamOptions& weight_decay(double weight_decay) { weight_decay_ = weight_decay; return *this; }
  double weight_decay() const { return weight_decay_; }
  AdamOptions& amsgrad(bool amsgrad) { amsgrad_ = amsgrad; return *this; }
  bool amsgrad() const { return amsgrad_; }
  AdamOptions& maximize(bool maximize) { maximize_ = maximize; return *this; }
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
  // Throws PyTorch's message for the first invalid value ("Invalid learning rate: -0.1").
  void validate() const;

 private:
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  bool amsgrad_ = false;
  bool maximize_ = false;
};

// "step", "exp_avg", "exp_avg_sq" and, with amsgrad, "max_exp_avg_sq".
class AdamParamState : public OptimizerCloneableParamState<AdamParamState> {
 public:
  int64_t step() const { return step_; }
  AdamParamState& step(int64_t step) { step_ = step; return *this; }
  const Tensor& exp_avg() const { return exp_avg_; }
  AdamParamState& exp_avg(const Tensor& t) { exp_avg_ = t; return *this; }
  const Tensor& exp_avg_sq() const { return exp_avg_sq_; }
  AdamParamState& exp_avg_sq(const Tensor& t) { exp_avg_sq_ = t; return *this; }
  // Undefined unless amsgrad was on.
  const Tensor& max_exp_avg_sq() const { return max_exp_avg_sq_; }
  AdamParamState& max_exp_avg_sq(const Tensor& t) { max_exp_avg_sq_ = t; return *this; }

  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override;
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override;

 private:
  friend struct AdamUpdate;
  int64_t step_ = 0;
  Tensor exp_avg_, exp_avg_sq_, max_exp_avg_sq_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  explicit Adam(std::vector<Tensor> params, AdamOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

// The Adam/AdamW update of one parameter, in one pass over its elements
// (shared by Adam and AdamW, which differ only in how weight decay enters).
struct AdamUpdate {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize;
  bool decoupled_weight_decay;  // AdamW: param *= 1 - lr * weight_decay first
  const char* optimizer;        // "Adam" or "AdamW", for messages

  void apply(const Tensor& param, const Tensor& grad, AdamParamState& state) const;
};

}  // namespace gradiens::optim
