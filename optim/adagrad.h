// optim::Adagrad (Duchi et al., with lr decay), as libtorch's
// torch::optim::Adagrad with PyTorch 1.13's update and messages.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "optim/optimizer.h"

namespace gradiens::optim {

class AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
 public:
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}

  AdagradOptions& lr(double lr) { lr_ = lr; return *this; }
  double lr() const { return lr_; }
  AdagradOptions& lr_decay(double lr_decay) { lr_decay_ = lr_decay; return *this; }
  double lr_decay() const { return lr_decay_; }
  AdagradOptions& weight_decay(double weight_decay) { weight_decay_ = weight_decay; return *this; }
  double weight_decay() const { return weight_decay_; }
  AdagradOptions& initial_accumulator_value(double value) { initial_accumulator_value_ = value; return *this; }
  double initial_accumulator_value() const { return initial_accumulator_value_; }
  AdagradOptions& eps(double eps) { eps_ = eps; return *this; }
  double eps() const { return eps_; }
  AdagradOptions& maximize(bool maximize) { maximize_ = maximize; return *this; }
  bool maximize() const { return maximize_; }

  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // {"lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value", "maximize"}.
  nlohmann::json to_json() const override;
  // "maximize" may be missing (false), as PyTorch's __setstate__ allows.
  void from_json(const nlohmann::json& j) override;
  // Throws PyTorch's message for the first invalid value.
  void validate() const;

 private:
  double lr_;
  double lr_decay_ = 0;
  double weight_decay_ = 0;
  double initial_accumulator_value_ = 0;
  double eps_ = 1e-10;
  bool maximize_ = false;
};

// "step" and "sum" (the accumulated squared gradients).
class AdagradParamState : public OptimizerCloneableParamState<AdagradParamState> {
 public:
  int64_t step() const { return step_; }
  AdagradParamState& step(int64_t step) { step_ = step; return *this; }
  const Tensor& sum() const { return sum_; }
  AdagradParamState& sum(const Tensor& t) { sum_ = t; return *this; }

  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override;
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override;

 private:
  friend class Adagrad;
  int64_t step_ = 0;
  Tensor sum_;
};

// As in PyTorch, every parameter's state exists from construction on ("sum"
// filled with initial_accumulator_value). Unlike PyTorch 1.13, which fills it
// with the constructor's value for every group, each group's own
// initial_accumulator_value is used, as libtorch does.
class Adagrad : public Optimizer {
 public:
  explicit Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  explicit Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace gradiens::optim
