// nn::functional::linear (nn/functional/linear.h).
#include "nn/functional/linear.h"

#include "engine/functions.h"

namespace gradiens::nn::functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input.dim() == 2 && bias.defined()) return addmm(bias, input, weight.t());
  if (input.dim() == 3 && bias.defined() && input.is_contiguous()) {
    // PyTorch's _flatten_nd_linear: one addmm over the rows, viewed back (ViewBackward0).
    const Tensor rows = addmm(bias, input.view({input.size(0) * input.size(1), input.size(2)}), weight.t());
    return rows.view({input.size(0), input.size(1), rows.size(1)});
  }
  Tensor y = input.matmul(weight.t());
  return bias.defined() ? y + bias : y;
}

}  // namespace gradiens::nn::functional
