// optim::RMSprop (Hinton's, with momentum and the centered variant), as
// libtorch's torch::optim::RMSprop with PyTorch 1.13's update and messages.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "optim/optimizer.h"

namespace gradiens::optim {

class RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
 public:
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}

  RMSpropOptions& lr(double lr) { lr_ = lr; return *this; }
  double lr() const { return lr_; }
  RMSpropOptions& alpha(double alpha) { alpha_ = alpha; return *this; }
  double alpha() const { return alpha_; }
  RMSpropOptions& eps(double eps) { eps_ = eps; return *this; }
  double eps() const { return eps_; }
  RMSpropOptions& weight_decay(double weight_decay) { weight_decay_ = weight_decay; return *this; }
  double weight_decay() const { return weight_decay_; }
  RMSpropOptions& momentum(double momentum) { momentum_ = momentum; return *this; }
  double momentum() const { return momentum_; }
  RMSpropOptions& centered(bool centered) { centered_ = centered; return *this; }
  bool centered() const { return centered_; }
  RMSpropOptions& maximize(bool maximize) { maximize_ = maximize; return *this; }
  bool maximize() const { return maximize_; }

  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::optional<double> get_momentum() const override { return momentum_; }
  void set_momentum(double momentum) override { momentum_ = momentum; }
  // {"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"}.
  nlohmann::json to_json() const override;
  // "momentum", "centered" and "maximize" may be missing (0, false), as
  // PyTorch's __setstate__ allows.
  void from_json(const nlohmann::json& j) override;
  // Throws PyTorch's message for the first invalid value.
  void validate() const;

 private:
  double lr_;
  double alpha_ = 0.99;
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  double momentum_ = 0;
  bool centered_ = false;
  bool maximize_ = false;
};

// "step", "square_avg", and "momentum_buffer" (with momentum > 0) and
// "grad_avg" (centered), each created when first needed.
class RMSpropParamState : public OptimizerCloneableParamState<RMSpropParamState> {
 public:
  int64_t step() const { return step_; }
  RMSpropParamState& step(int64_t step) { step_ = step; return *this; }
  const Tensor& square_avg() const { return square_avg_; }
  RMSpropParamState& square_avg(const Tensor& t) { square_avg_ = t; return *this; }
  const Tensor& momentum_buffer() const { return momentum_buffer_; }
  RMSpropParamState& momentum_buffer(const Tensor& t) { momentum_buffer_ = t; return *this; }
  const Tensor& grad_avg() const { return grad_avg_; }
  RMSpropParamState& grad_avg(const Tensor& t) { grad_avg_ = t; return *this; }

  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override;
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override;

 private:
  friend class RMSprop;
  int64_t step_ = 0;
  Tensor square_avg_, momentum_buffer_, grad_avg_;
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});
  explicit RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace gradiens::optim
