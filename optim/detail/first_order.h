// What the first-order optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) share:
// option and gradient checks, the step skeleton, and the gathering of a group's
// parameters into the raw-pointer lists of one multi-tensor update per dtype.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/tensor.h"
#include "optim/detail/multi_tensor.h"
#include "optim/optimizer.h"

namespace gradiens::optim::detail {

// A double as Python's repr prints it ("1.0", "-0.1", "1e-05", "inf"), so that
// option errors read exactly as PyTorch's "Invalid learning rate: -0.1".
std::string python_float(double value);

// `param` is float32 or float64 and its gradient is one the kernels can read:
// dense, on the CPU, with the parameter's dtype and shape. `sparse_message` is
// PyTorch's text for a sparse gradient ("Adam does not support sparse
// gradients, ...").
void check_grad(const Tensor& param, const Tensor& grad, std::string_view optimizer, std::string_view sparse_message);

// Makes `state` a contiguous buffer shaped, typed and placed like `param`:
// zeros (or `fill`) when undefined; converted when a loaded state or a later
// Module::to left it in another dtype; an error naming the optimizer and the
// state's name when its shape does not match the parameter's.
void prepare_state(Tensor& state, const Tensor& param, std::string_view optimizer, std::string_view name,
                   double fill = 0.0);

// The options of `group` as the optimizer's own type; an error when a group
// was given another optimizer's options (SGDOptions to Adam).
template <class Options>
const Options& group_options(const OptimizerParamGroup& group, std::string_view optimizer) {
  const auto* options = dynamic_cast<const Options*>(&group.options());
  GD_CHECK(options != nullptr,
           std::string(optimizer) + ": a parameter group holds the options of another optimizer");
  return *options;
}

// The defaults, checked, for the Optimizer base; an invalid value throws
// PyTorch's message before any group is added.
template <class Options>
std::unique_ptr<OptimizerOptions> validated(const Options& defaults) {
  defaults.validate();
  return std::make_unique<Options>(defaults);
}

// Checks every group's own options, which must be the optimizer's kind.
template <class Options>
void validate_groups(const std::vector<OptimizerParamGroup>& groups, std::string_view optimizer) {
  for (const auto& group : groups) group_options<Options>(group, optimizer).validate();
}

// The one group of the optimizers' (params, options) constructors. The options
// are checked first and an empty list is an error, in PyTorch's order.
template <class Options>
std::vector<OptimizerParamGroup> single_group(std::vector<Tensor> params, const Options& defaults) {
  defaults.validate();
  GD_CHECK(!params.empty(), "optimizer got an empty parameter list");
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::move(params));
  return groups;
}

// The Tensor saved under `name`; an error naming `what` and `name` when missing.
Tensor required_state_tensor(const std::map<std::string, Tensor>& tensors, const std::string& name,
                             const std::string& what);
// The Tensor saved under `name`, or an undefined one (saved as JSON null, or absent).
Tensor optional_state_tensor(const std::map<std::string, Tensor>& tensors, const std::string& name);
// The step count saved under "step": a non-negative whole number (PyTorch saves
// it as a float tensor, so 3.0 is accepted).
int64_t load_step(const nlohmann::json& scalars, const std::string& what);

// One step of a first-order optimizer: the closure runs with grad enabled; then,
// under no-grad, every group's options and every gradient are checked before
// the first update, so an error leaves all parameters as they were; then
// update_group(group, options) runs group by group.
template <class Options, class UpdateGroup>
Tensor first_order_step(std::vector<OptimizerParamGroup>& groups, const Optimizer::LossClosure& closure,
                        std::string_view optimizer, std::string_view sparse_message, UpdateGroup&& update_group) {
  Tensor loss;
  if (closure) {
    AutoGradMode enable_grad(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  for (const auto& group : groups) {
    group_options<Options>(group, optimizer);
    for (const Tensor& p : group.params()) {
      const Tensor grad = p.grad();
      if (grad.defined()) check_grad(p, grad, optimizer, sparse_message);
    }
  }
  for (auto& group : groups) update_group(group, group_options<Options>(group, optimizer));
  return loss;
}

// What a parameter brings to its group's update once its state is ready: the
// state buffers in the order the kernel reads them (nullptr where unused), its
// step count (the key of the kernel's scalar table), and whether this step
// created the state.
struct ParamBuffers {
  std::array<Tensor*, 3> states{};
  int64_t step = 0;
  bool fresh = false;
};

// The parameters of one group that have a gradient, gathered for one
// multi-tensor update per dtype: raw pointers to each parameter, gradient and
// state, and the distinct step counts (almost always one; more when some
// parameters missed a gradient on earlier steps, as PyTorch counts steps per
// parameter). A parameter or gradient that is not contiguous is worked on
// through a contiguous copy, written back after the update: the only case that
// allocates per parameter.
class GroupBuffers {
 public:
  // ready(param, state_of(param)) makes a parameter's state ready and returns
  // its ParamBuffers; it runs once per parameter with a gradient, in order.
  template <class StateOf, class Ready>
  GroupBuffers(const OptimizerParamGroup& group, StateOf&& state_of, Ready&& ready)
      : group_size_(group.params().size()) {
    for (const Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (grad.defined()) add(param, grad, ready(param, state_of(param)));
    }
  }

  // The distinct step counts: slot.scalars indexes this list.
  const std::vector<int64_t>& steps() const { return steps_; }

  // Runs the kernel over the float32 and the float64 parameters, then writes
  // the contiguous copies back.
  void update(const AnyKernel& kernel);

 private:
  void add(const Tensor& param, const Tensor& grad, const ParamBuffers& buffers);
  void write_back();

  size_t group_size_;  // what a list may need to hold, reserved on its first slot
  std::optional<Device> device_;  // where the group's parameters live (all in one place)
  TensorList<float> float32_;
  TensorList<double> float64_;
  std::vector<int64_t> steps_;
  std::vector<std::pair<Tensor, Tensor>> param_copies_;  // (parameter, its contiguous copy)
  std::vector<Tensor> grad_copies_;                       // kept alive until the update ran
};

}  // namespace gradiens::optim::detail
