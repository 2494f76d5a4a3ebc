// autograd::functional: jacobian, hessian, vjp, jvp, hvp and vhp of a C++
// function at a point, as torch.autograd.functional computes them (libtorch has none).
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::autograd::functional {

// The three shapes of function these tools accept. A function of one tensor
// gets the plain-Tensor overloads; a function of several tensors takes and
// returns std::vector<Tensor>, the C++ form of PyTorch's tuples.
using TensorToTensor = std::function<Tensor(const Tensor&)>;
using TensorsToTensor = std::function<Tensor(const std::vector<Tensor>&)>;
using TensorsToTensors = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Note [Functional results layout]
// A Jacobian block d output_i / d input_j has shape output_i.sizes() +
// input_j.sizes(), as in torch.autograd.functional.jacobian. Where PyTorch
// returns nested tuples, these return nested vectors indexed [output][input]:
//   one input, one output      -> Tensor                  J
//   several inputs, one output -> std::vector<Tensor>     J[j]
//   several of each            -> Jacobian                J[i][j]
// hessian of a scalar function: H[i][j] = d^2 f / d input_i d input_j, shaped
// input_i.sizes() + input_j.sizes(). vjp/jvp/hvp/vhp return the pair
// (function value, product), one product per input (vjp, hvp, vhp) or per
// output (jvp).
//
// Common arguments, as in PyTorch:
//   create_graph  the results keep their history, so they can be
//                 differentiated again (with respect to the inputs, when the
//                 inputs require grad); otherwise every result is detached.
//   strict        an output independent of an input (or a derivative that is
//                 identically zero through lack of dependence) is an error
//                 instead of a block of zeros.
//   v             one tensor per output (vjp) or per input (jvp, hvp, vhp), of
//                 that tensor's shape; may be left undefined/empty only when
//                 that side is a single one-element tensor.
// The inputs are never modified, and their .grad is never touched.
using Jacobian = std::vector<std::vector<Tensor>>;

// `vectorize` is accepted for PyTorch compatibility. gradiens has no vmap, so
// the Jacobian is always built one reverse pass per output element; the values
// are the same either way. strict together with vectorize is refused, as in PyTorch.
Tensor jacobian(const TensorToTensor& fn, const Tensor& input, bool create_graph = false, bool strict = false,
                bool vectorize = false);
std::vector<Tensor> jacobian(const TensorsToTensor& fn, const std::vector<Tensor>& inputs, bool create_graph = false,
                             bool strict = false, bool vectorize = false);
Jacobian jacobian(const TensorsToTensors& fn, const std::vector<Tensor>& inputs, bool create_graph = false,
                  bool strict = false, bool vectorize = false);

// The Hessian of a function returning a one-element tensor: the Jacobian of its gradient.
Tensor hessian(const TensorToTensor& fn, const Tensor& input, bool create_graph = false, bool strict = false,
               bool vectorize = false);
Jacobian hessian(const TensorsToTensor& fn, const std::vector<Tensor>& inputs, bool create_graph = false,
                 bool strict = false, bool vectorize = false);

// (fn(inputs), v^T J): one reverse pass.
std::pair<Tensor, Tensor> vjp(const TensorToTensor& fn, const Tensor& input, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);
std::pair<std::vector<Tensor>, std::vector<Tensor>> vjp(const TensorsToTensors& fn, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v = {}, bool create_graph = false,
                                                        bool strict = false);

// (fn(inputs), J v), by the double-backward trick: u -> u^T J is linear in u,
// so differentiating it with respect to u in direction v gives J v.
std::pair<Tensor, Tensor> jvp(const TensorToTensor& fn, const Tensor& input, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(const TensorsToTensors& fn, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v = {}, bool create_graph = false,
                                                        bool strict = false);

// (f(inputs), v^T H) for a function returning a one-element tensor: two reverse passes.
std::pair<Tensor, Tensor> vhp(const TensorToTensor& fn, const Tensor& input, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);
std::pair<Tensor, std::vector<Tensor>> vhp(const TensorsToTensor& fn, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v = {}, bool create_graph = false,
                                           bool strict = false);

// (f(inputs), H v), by the double-backward trick on top of vhp, as PyTorch does;
// it costs one more reverse pass than vhp. For a twice continuously
// differentiable f, H is symmetric and vhp gives the same numbers faster.
std::pair<Tensor, Tensor> hvp(const TensorToTensor& fn, const Tensor& input, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);
std::pair<Tensor, std::vector<Tensor>> hvp(const TensorsToTensor& fn, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v = {}, bool create_graph = false,
                                           bool strict = false);

}  // namespace gradiens::autograd::functional
