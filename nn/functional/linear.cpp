// nn::functional::linear (nn/functional/linear.h).
#include "nn/functional/linear.h"

#include <fmt/format.h>

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

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  GD_CHECK(input1.dim() == input2.dim(),
           fmt::format("bilinear(): input dimensions do not match: got {} and {}", input1.dim(), input2.dim()));
  GD_CHECK(input1.dim() >= 1, "bilinear(): inputs must have at least one dimension");
  for (int64_t d = 0; d + 1 < input1.dim(); ++d)
    GD_CHECK(input1.size(d) == input2.size(d),
             fmt::format("bilinear(): input batch dimensions do not match at dim {}: got {} and {}", d,
                         input1.size(d), input2.size(d)));
  GD_CHECK(weight.dim() == 3, fmt::format("bilinear(): weight must be three-dimensional, got {}", weight.dim()));
  GD_CHECK(input1.size(-1) == weight.size(1),
           fmt::format("bilinear(): input1 size does not match weight size: got {} but expected {}", input1.size(-1),
                       weight.size(1)));
  GD_CHECK(input2.size(-1) == weight.size(2),
           fmt::format("bilinear(): input2 size does not match weight size: got {} but expected {}", input2.size(-1),
                       weight.size(2)));
  GD_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
           fmt::format("bilinear(): bias size does not match weight size: got {} but expected {}",
                       bias.defined() ? bias.size(-1) : 0, weight.size(0)));
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  DimVector batch(input1.sizes().begin(), input1.sizes().end() - 1);
  const Tensor x1 = input1.reshape({-1, in1}), x2 = input2.reshape({-1, in2});
  // (x1 W_o) for every o at once: [N, in1] x [in1, out * in2] -> [N, out, in2], then the dot product with x2.
  const Tensor left = x1.matmul(weight.permute({1, 0, 2}).reshape({in1, out * in2})).reshape({-1, out, in2});
  Tensor y = (left * x2.unsqueeze(1)).sum({2});
  if (bias.defined()) y = y + bias;
  batch.push_back(out);
  return y.reshape(batch);
}

}  // namespace gradiens::nn::functional
