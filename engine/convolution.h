// 2-D convolution and pooling (engine/ops/convolution.cpp), as torch.nn.functional's
// conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d, on NCHW (batched) or CHW
// (unbatched) float32/float64 tensors.
#pragma once

#include <tuple>

#include "engine/tensor.h"

namespace gradiens {

// Sizes, strides, paddings and dilations take one value for both dims or two
// (height, width), as in PyTorch.
//
// Derivatives:
// - conv2d: any order. Its backward is two ops, conv2d_backward_input and
//   conv2d_backward_weight, whose own backwards are conv2d and these two again.
// - max_pool2d / max_pool2d_with_indices: any order. The backward scatters the
//   gradient to the argmax indices, which are constants of the input (so the second
//   derivative is zero wherever the argmax is unique, as in PyTorch); the
//   scatter's own backward gathers at the same indices.
// - avg_pool2d: any order (linear; its backward is an op whose backward is
//   avg_pool2d). adaptive_avg_pool2d: any order (two matmuls with averaging matrices).

// input [N, C, H, W] or [C, H, W]; weight [O, C / groups, KH, KW]; bias [O] or
// undefined. Output [N, O, OH, OW] with OH = (H + 2 pad - dilation (KH - 1) - 1) /
// stride + 1.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = {1, 1},
              IntArrayRef padding = {0, 0}, IntArrayRef dilation = {1, 1}, int64_t groups = 1);

// The two halves of conv2d's backward, as differentiable ops on 4-D tensors:
// the gradient of <grad_output, conv2d(x, weight)> w.r.t. x (of size input_size),
// and w.r.t. weight (of size weight_size).
Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_size,
                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, IntArrayRef weight_size,
                              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);

// Max over each kernel window; stride defaults to the kernel size; padding is -inf;
// ceil_mode rounds the output size up (a window must still start inside the input
// or its left padding).
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0, 0}, IntArrayRef dilation = {1, 1}, bool ceil_mode = false);
// (output, indices): indices are int64, the flat position h * W + w of each max
// within its input plane, as PyTorch's.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = {0, 0},
                                                   IntArrayRef dilation = {1, 1}, bool ceil_mode = false);

// Mean over each window; count_include_pad counts the zero padding in the divisor.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true);

// Output [..., OH, OW]; output cell i averages input rows floor(i H / OH) up to
// ceil((i + 1) H / OH), likewise for columns.
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace gradiens
