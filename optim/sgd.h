// optim::SGD (momentum, dampening, Nesterov, weight decay, maximize), as
// libtorch's torch::optim::SGD with PyTorch 1.13's update and messages.
#pragma once

#include <memory>
#include <vector>

#include "optim/optimizer.h"

namespace gradiens::optim {

class SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
 public:
  // The learning rate has no default, as in PyTorch and libtorch.
  SGDOptions(double lr) : lr_(lr) {}

  SGDOptions& lr(double lr) { lr_ = lr; return *this; }
  double lr() const { return lr_; }
  SGDOptions& momentum(double momentum) { momentum_ = momentum; return *this; }
  double momentum() const { return momentum_; }
  SGDOptions& dampening(double dampening) { dampening_ = dampening; return *this; }
  double dampening() const { return dampening_; }
  SGDOptions& weight_decay(double weight_decay) { weight_decay_ = weight_decay; return *this; }
  double weight_decay() const { return weight_decay_; }
  SGDOptions& nesterov(bool nesterov) { nesterov_ = nesterov; return *this; }
  bool nesterov() const { return nesterov_; }
  SGDOptions& maximize(bool maximize) { maximize_ = maximize; return *this; }
  bool maximize() const { return maximize_; }

  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::optional<double> get_momentum() const override { return momentum_; }
  void set_momentum(double momentum) override { momentum_ = momentum; }
  // {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"}.
  nlohmann::json to_json() const override;
  // "nesterov" and "maximize" may be missing (false), as PyTorch's __setstate__ allows.
  void from_json(const nlohmann::json& j) override;
  // Throws PyTorch's message for the first invalid value.
  void validate() const;

 private:
  double lr_;
  double momentum_ = 0;
  double dampening_ = 0;
  double weight_decay_ = 0;
  bool nesterov_ = false;
  bool maximize_ = false;
};

// "momentum_buffer": undefined (saved as null, as PyTorch's None) until an
// update with momentum creates it.
class SGDParamState : public OptimizerCloneableParamState<SGDParamState> {
 public:
  const Tensor& momentum_buffer() const { return momentum_buffer_; }
  SGDParamState& momentum_buffer(const Tensor& t) { momentum_buffer_ = t; return *this; }

  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override;
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override;

 private:
  friend class SGD;
  Tensor momentum_buffer_;
};

class SGD : public Optimizer {
 public:
  explicit SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  explicit SGD(std::vector<Tensor> params, SGDOptions defaults);

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace gradiens::optim
