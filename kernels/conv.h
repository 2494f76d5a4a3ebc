// Device-neutral entry points of 2-D convolution (forward and both adjoints) and
// max/average pooling on dense NCHW or NHWC buffers: kernels/cpu/conv.h on the
// CPU, kernels/cuda/conv.h on a cuda device. Shapes only: no autograd here.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// The order of a dense 4-d buffer: NCHW (row-major) or NHWC (channels last: the
// C values of one pixel are adjacent). A weight [O, C / G, KH, KW] is likewise
// OIHW (NCHW) or OHWI (NHWC).
enum class ConvLayout : uint8_t { NCHW, NHWC };

// Shape legend: N batch, C input channels, H x W input plane, O output channels,
// KH x KW kernel, OH x OW output plane, G groups. Input [N, C, H, W], weight
// [O, C / G, KH, KW], bias [O], output [N, O, OH, OW], each dense in its layout:
// `layout` for input, output and their gradients, `weight_layout` for the weight
// and its gradient. On a cuda device weight_layout must equal layout (and
// float64 takes NCHW only).
struct Conv2dGeometry {
  int64_t batch, in_channels, in_h, in_w;
  int64_t out_channels, kernel_h, kernel_w;
  int64_t out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
  ConvLayout layout = ConvLayout::NCHW;
  ConvLayout weight_layout = ConvLayout::NCHW;
};

// output = conv(input, weight) + bias, float32 or float64. bias may be null, and
// must be on a cuda device (the engine adds it there). `deterministic` keeps
// cuDNN to engines without its nondeterministic note (the CPU always is).
void conv2d_forward(ScalarType dtype, const Conv2dGeometry& g, const void* input, const void* weight,
                    const void* bias, void* output, const DeviceRef& device, bool deterministic);
// grad_input (overwritten) = the adjoint of conv(., weight) applied to grad_output.
void conv2d_backward_input(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* weight,
                           void* grad_input, const DeviceRef& device, bool deterministic);
// grad_weight (overwritten) = the adjoint of conv(input, .) applied to grad_output.
void conv2d_backward_weight(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* input,
                            void* grad_weight, const DeviceRef& device, bool deterministic);
// The three float32 gradients in one call (kernels::cpu::conv2d_backward): any of
// grad_input, grad_weight, grad_bias may be null. Returns whether grad_bias was
// written (else the caller sums). CPU only.
[[nodiscard]] bool conv2d_backward_fused(const Conv2dGeometry& g, const float* grad_output, const float* input,
                                         const float* weight, float* grad_input, float* grad_weight,
                                         float* grad_bias, const DeviceRef& device);

// Pooling over N x C planes of H x W, stored NCHW or NHWC; windows start at
// o * stride - pad and take kernel taps dilation apart. Output, indices and
// gradients have the input's layout.
struct Pool2dGeometry {
  int64_t batch, channels, in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  ConvLayout layout = ConvLayout::NCHW;
};

// Max over each window and the flat index h * W + w of the max within its plane
// (the first one on ties; NaN counts as the largest and the last NaN wins).
void max_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output, int64_t* indices,
                        const DeviceRef& device);
// grad_input (overwritten) = each grad_output element added at its window's argmax.
void max_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, const int64_t* indices,
                         void* grad_input, const DeviceRef& device);
// Mean over each window (dilation 1); count_include_pad divides by the window
// clipped to the padded plane, else by the window clipped to the plane.
void avg_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output,
                        bool count_include_pad, const DeviceRef& device);
void avg_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, void* grad_input,
                         bool count_include_pad, const DeviceRef& device);

}  // namespace gradiens::kernels
