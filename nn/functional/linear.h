// nn::functional::linear: y = x W^T + b, the product behind nn::Linear, as
// torch::nn::functional::linear; bilinear, behind nn::Bilinear.
#pragma once

#include "engine/tensor.h"

namespace gradiens::nn::functional {

// input [..., in], weight [out, in], bias [out] or undefined. As in PyTorch, a
// 2-D input takes one addmm (grad_fn AddmmBackward0), a contiguous 3-D one an
// addmm over its rows viewed back (ViewBackward0), any other matmul and then
// the bias.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});

// y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]: input1 [..., in1], input2 [..., in2]
// (the same leading sizes), weight [out, in1, in2], bias [out] or undefined. A composite of matmul, mul and sum.
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = {});

}  // namespace gradiens::nn::functional
