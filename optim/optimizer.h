// optim::Optimizer: the base of every optimizer, as libtorch's
// torch::optim::Optimizer — parameter groups with per-group options,
// per-parameter state, step(closure), zero_grad, and state_dict() as JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/tensor.h"

namespace gradiens::optim {

// The hyperparameters of one parameter group. Each optimizer's options
// (SGDOptions, AdamOptions, ...) derive from OptimizerCloneableOptions<Self>.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // The momentum that OneCycleLR and CyclicLR vary: SGD's and RMSprop's
  // `momentum`, Adam's beta1 (PyTorch's use_beta1). nullopt when the optimizer
  // has none.
  virtual std::optional<double> get_momentum() const { return std::nullopt; }
  virtual void set_momentum(double momentum);
  // The options under PyTorch's names ({"lr": 0.1, "momentum": 0.9, "betas":
  // [0.9, 0.999], ...}), as in its state_dict's param_groups.
  virtual nlohmann::json to_json() const = 0;
  // Reads what to_json wrote; a missing key or a wrong type is an error naming it.
  virtual void from_json(const nlohmann::json& j) = 0;
};

template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  // Equal when every option is, as libtorch's operator== of each options class.
  friend bool operator==(const Derived& a, const Derived& b) { return a.to_json() == b.to_json(); }
};

// A list of parameters and the options they are optimized with (the
// optimizer's defaults when none are given).
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }

  // What schedulers keep with the group, as PyTorch keeps extra keys in its
  // param_group dict ("initial_lr", "max_lr", "min_lr", "base_momentum",
  // "max_momentum"); saved in state_dict with the options.
  std::map<std::string, double>& values() { return values_; }
  const std::map<std::string, double>& values() const { return values_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::map<std::string, double> values_;
};

// The state an optimizer keeps for one parameter (Adam's step, exp_avg, ...).
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const = 0;
  // Writes the state under PyTorch's names: numbers into `scalars`, tensors
  // into `tensors` ({"step": 3} and {"exp_avg": ..., "exp_avg_sq": ...}).
  virtual void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const = 0;
  // Reads what save wrote; a missing entry is an error naming it.
  virtual void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) = 0;
};

template <class Derived>
class OptimizerCloneableParamState : public OptimizerParamState {
 public:
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update. The closure, when given, re-evaluates the model and returns the
  // loss (it runs with grad enabled, and must zero the gradients and call
  // backward itself, as in PyTorch); step returns its loss (undefined without a
  // closure). Updates run under no-grad: they never record on the tape.
  virtual Tensor step(LossClosure closure = nullptr) = 0;

  // Adds a group; its missing options are the defaults. A tensor that is not a
  // leaf, or that is already in a group, is an error (PyTorch's messages).
  void add_param_group(const OptimizerParamGroup& group);
  // set_to_none: drop the gradients (the next backward allocates them);
  // otherwise zero them in place.
  void zero_grad(bool set_to_none = true);

  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  OptimizerOptions& defaults() { return *defaults_; }
  // Every parameter, group after group.
  std::vector<Tensor> parameters() const;
  // The number of parameters.
  size_t size() const;

  // The state kept for `param`, or nullptr before its first update.
  OptimizerParamState* state(const Tensor& param);
  const OptimizerParamState* state(const Tensor& param) const;

  // PyTorch's layout, with tensors embedded (see tensor_to_json):
  //   {"state": {"0": {"step": 3, "exp_avg": {tensor}, ...}, ...},
  //    "param_groups": [{"lr": 0.001, ..., "params": [0, 1]}, ...]}
  // Parameters are numbered in group order, as PyTorch does.
  nlohmann::json state_dict() const;
  // Restores options, scheduler values and per-parameter state (tensors are
  // converted to each parameter's dtype, the step counts kept). The groups must
  // match in number and sizes (PyTorch's messages); the round trip is exact.
  void load_state_dict(const nlohmann::json& state_dict);

 protected:
  // A new, empty state of this optimizer's kind (filled by load_state_dict).
  virtual std::unique_ptr<OptimizerParamState> make_param_state() const = 0;

  // The state of `param`, created empty by make_param_state() on first use.
  template <class State>
  State& param_state(const Tensor& param) {
    auto& slot = state_[param.impl()];
    if (!slot) slot = make_param_state();
    return static_cast<State&>(*slot);
  }
  bool has_state(const Tensor& param) const { return state_.count(param.impl()) != 0; }

  std::vector<OptimizerParamGroup> param_groups_;
  std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>> state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

// A tensor as JSON, exactly: {"dtype": "float64", "shape": [2, 3], "data":
// base64 of its little-endian row-major bytes}. NaN payloads and -0.0 survive.
nlohmann::json tensor_to_json(const Tensor& tensor);
// Reads tensor_to_json's form; a bad dtype, shape or byte count is an error.
Tensor tensor_from_json(const nlohmann::json& j);

[[noreturn]] void throw_json_error(const std::string& what, const std::string& key, const std::string& problem);

// Reads j[key] as T, or throws an Error naming `what` and the key ("Adam
// options: 'betas' is missing"), for the from_json/load implementations.
template <class T>
T json_get(const nlohmann::json& j, const std::string& key, const std::string& what) {
  if (!j.is_object()) throw_json_error(what, key, "cannot be read: not a JSON object");
  auto it = j.find(key);
  if (it == j.end()) throw_json_error(what, key, "is missing");
  try {
    return it->template get<T>();
  } catch (const nlohmann::json::exception&) {
    throw_json_error(what, key, "has the wrong type (" + std::string(it->type_name()) + ")");
  }
}

}  // namespace gradiens::optim
