// Forward-mode AD with dual tensors, as torch.autograd.forward_ad: inside a
// DualLevel, make_dual attaches a tangent to a tensor and every op carries
// tangents forward (out' = J in'); unpack_dual reads them back. autograd::jvp
// wraps the three steps for a function.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::autograd {

namespace forward_ad {

// Note [Dual levels]
// Tangents live on a tensor for one dual level: constructing a DualLevel opens
// it, destroying it closes it and removes every tangent attached inside, as
// leaving PyTorch's `with fwAD.dual_level():` does. One level may be open at a
// time (PyTorch's limit too). Ops with a forward formula (`jvp` beside their
// forward and backward) compute the output tangent directly; any other op gets
// it from its backward formula by the double-backward trick (u -> u^T J is
// linear in u, so differentiating it in direction t gives J t), which is exact
// but costs one extra reverse pass. Tangents are computed under the caller's
// grad mode, so a tangent is itself differentiable in reverse mode.
class DualLevel {
 public:
  DualLevel();
  ~DualLevel();
  DualLevel(const DualLevel&) = delete;
  DualLevel& operator=(const DualLevel&) = delete;
};

// A view of `primal` carrying `tangent` (same shape and dtype) at the open level.
// Reverse-mode gradients still flow from the result to `primal`.
Tensor make_dual(const Tensor& primal, const Tensor& tangent);

struct UnpackedDual {
  Tensor primal;   // a view of the tensor without its tangent (differentiable in reverse mode)
  Tensor tangent;  // undefined when the tensor has no tangent at the open level
};
UnpackedDual unpack_dual(const Tensor& tensor);

}  // namespace forward_ad

// (fn(primals), J tangents) in one forward pass with dual tensors, as
// torch.func.jvp: one tangent per primal, of its shape and dtype.
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& primals,
    const std::vector<Tensor>& tangents);
std::pair<Tensor, Tensor> jvp(const std::function<Tensor(const Tensor&)>& fn, const Tensor& primal,
                              const Tensor& tangent);

}  // namespace gradiens::autograd
