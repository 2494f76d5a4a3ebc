// Device-neutral entry points of 2-D convolution (forward and both adjoints) and
// max/average pooling on dense NCHW or NHWC buffers: kernels/cpu/conv.h on the
// CPU, kernels/cuda/conv.h on a cuda device. Shapes only: no autograd here.
#pragma once

#include <cstdint>

#include "kernels/conv_geometry.h"
#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {


// output = conv(input, weight) + bias, float32 or float64 (a cuda device also
// takes float16 and bfloat16). bias may be null, and must be on a cuda device
// (the engine adds it there). `deterministic` keeps
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


// Max over each window and the flat index h * W + w of the max within its plane
// (the first one on ties; NaN counts as the largest and the last NaN wins).
void max_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output, int64_t* indices,
                        const DeviceRef& device);
// grad_input (overwritten) = each grad_output element added at its window's argmax.
void max_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, const int64_t* indices,
                         void* grad_input, const DeviceRef& device);
// The same with int32 indices: float32 on the CPU only, for planes of fewer than
// 2^31 elements (the engine's max_pool2d keeps such indices to itself).
void max_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, int32_t* indices,
                        const DeviceRef& device);
void max_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, const int32_t* indices,
                         float* grad_input, const DeviceRef& device);
// Mean over each window (dilation 1); count_include_pad divides by the window
// clipped to the padded plane, else by the window clipped to the plane.
void avg_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output,
                        bool count_include_pad, const DeviceRef& device);
void avg_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, void* grad_input,
                         bool count_include_pad, const DeviceRef& device);

}  // namespace gradiens::kernels
