// Convolution and pooling (engine/ops/convolution.cpp), as torch.nn.functional's
// conv1d/2d/3d, conv_transpose1d/2d/3d, max/avg/adaptive pooling in 1, 2 and 3
// dims, on [N, C, *spatial] (batched) or [C, *spatial] (unbatched)
// float32/float64 tensors. The 2-D ops are primitives with kernels; the 1-D ones
// are them on an unsqueezed height of 1, and the 3-D ones and the transposed
// convolutions are composites of them (so every derivative order carries over).
#pragma once

#include <optional>
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

// Mean over each window; count_include_pad counts the zero padding in the divisor;
// divisor_override, when set, divides every window's sum by it instead.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

// Output [..., OH, OW]; output cell i averages input rows floor(i H / OH) up to
// ceil((i + 1) H / OH), likewise for columns.
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

// ---- 1-D and 3-D convolutions; transposed convolutions ----
// Sizes, strides, paddings and dilations take one value for every dim or one
// per dim. conv1d: input [N, C, L] or [C, L], weight [O, C / groups, K].
// conv3d: input [N, C, D, H, W] or [C, D, H, W], weight [O, C / groups, KD, KH, KW]
// (a sum over the depth taps of conv2d on the depth planes).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// The adjoint of conv{1,2,3}d in its input, plus bias: weight [C_in, C_out / groups,
// *kernel], output size (in - 1) stride - 2 padding + dilation (kernel - 1) +
// output_padding + 1 per dim; output_padding must be less than stride or dilation.
// The arguments are in ATen's order (groups before dilation).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);

// ---- 1-D and 3-D pooling ----
// Indices are flat positions within each input plane (l; d H W + h W + w), as
// PyTorch's. Max pooling in 3-D is separable: the max over each plane's (height,
// width) window, then over the depth window, so ties resolve to the first in
// (d, h, w) order as in PyTorch; average pooling likewise (the divisor is a
// product of per-dim counts).
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

// Adaptive pooling: output cell i of a dim of size `in` pooled to `out` covers
// [floor(i in / out), ceil((i + 1) in / out)). The max forms return (values,
// indices) with indices as max pooling's.
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input, IntArrayRef output_size);

}  // namespace gradiens
