// The autograd entry points: grad(), backward(), gradcheck/gradgradcheck and
// anomaly detection.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/tensor.h"

namespace gradiens::autograd {

// Gradients of `outputs` with respect to `inputs`, weighted by `grad_outputs`
// (may be empty for scalar outputs). retain_graph defaults to create_graph.
// With create_graph the results are themselves differentiable.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false);

// A new leaf holding data's values (sharing its storage) outside any graph,
// requiring grad if asked (libtorch's make_variable).
inline Tensor make_variable(const Tensor& data, bool requires_grad = false) {
  Tensor variable = data.detach();
  if (requires_grad) variable.requires_grad_(true);
  return variable;
}

// Accumulates gradients of `tensors` into the .grad of the leaves, or with
// `inputs` into theirs only (a non-leaf input retains its grad from then on).
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const std::vector<Tensor>& inputs = {});

// Makes every handle of `target` refer to `value`: its data, dtype and place in
// the graph (gradients flow through `value`). Parametrized module weights use
// it: the module's own `weight` handle is re-pointed at the freshly computed
// weight before each forward. A graph recorded before a rebind keeps the data
// it saved. `value` that is itself a leaf requiring grad is bound through a
// differentiable alias, so gradients still reach it.
void rebind(const Tensor& target, const Tensor& value);

// Clears the gradients of `tensors`: set_to_none drops them (the next backward
// allocates new ones); otherwise they are detached and zeroed in place. What
// Module::zero_grad and Optimizer::zero_grad do.
void zero_grad(const std::vector<Tensor>& tensors, bool set_to_none = true);

using TensorFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  bool raise_exception = true;  // throw an Error describing the mismatch, or return false
  // Also check forward-mode AD: each Jacobian column J e_m from dual tensors
  // (engine/autograd/forward_ad.h) against the same finite differences.
  bool check_forward_ad = false;
  // Check the reverse-mode Jacobian (turn off to check forward mode alone, e.g.
  // for a function that runs under NoGradGuard).
  bool check_backward_ad = true;
};

// Compares the analytic Jacobian of `fn` at `inputs` (float64, those that
// require grad) with central finite differences.
bool gradcheck(const TensorFunction& fn, const std::vector<Tensor>& inputs, GradcheckOptions options = {});
// gradcheck of the first derivative: checks second derivatives through create_graph.
bool gradgradcheck(const TensorFunction& fn, const std::vector<Tensor>& inputs, GradcheckOptions options = {});

// While alive, nodes remember the forward op that created them (and, for a node
// created by a create_graph backward, the node whose backward did); a node whose
// backward fails warns with that history before the error goes on, and with
// `check_nan` backward also fails on NaN in any node's outputs.
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool check_nan = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_, previous_check_nan_;
};

}  // namespace gradiens::autograd
