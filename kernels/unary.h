// Device-neutral entry points of the dense elementwise math: unary math and the
// fused backward kernels over n contiguous elements. Each runs kernels::cpu
// (split across threads) or kernels::cuda (on the device's stream).
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/math_ops.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// out = op(in), float32/float64 (and float16/bfloat16 on the CPU); out may equal in.
void unary_math(UnaryMath op, ScalarType dtype, const void* in, void* out, int64_t n, const DeviceRef& device);

// grad * (1 - y*y) and grad * y * (1 - y), y the saved forward output; float32,
// float64 (and float16/bfloat16 on the CPU).
void tanh_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n, const DeviceRef& device);
void sigmoid_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n,
                      const DeviceRef& device);
// out = self <= threshold ? 0 : grad (ReLU's backward), float32/float64.
void threshold_backward(ScalarType dtype, const void* grad, const void* self, const Number& threshold, void* out,
                        int64_t n, const DeviceRef& device);
// Both gradients of tanh_backward(grad, y) for gg in one pass (see kernels/cpu/vector_math.h).
// Bit k of `accumulate` (the CPU only): output k adds its result to what it holds.
void tanh_backward_backward(ScalarType dtype, const void* gg, const void* grad, const void* y, void* d_grad,
                            void* d_y, int64_t n, const DeviceRef& device, uint32_t accumulate = 0);
// The three gradients of tanh_backward_backward's pair of outputs for g_first and
// g_second in one pass (kernels/cpu/vector_math.h); the CPU only.
void tanh_backward_backward_backward(ScalarType dtype, const void* g_first, const void* g_second, const void* gg,
                                     const void* grad, const void* y, void* d_gg, void* d_grad, void* d_y, int64_t n,
                                     const DeviceRef& device, uint32_t accumulate = 0);
// out = s * (a * b * c), and its three gradients for g in one pass; float32/float64.
void scaled_product(ScalarType dtype, const void* a, const void* b, const void* c, double s, void* out, int64_t n,
                    const DeviceRef& device);
void scaled_product_backward(ScalarType dtype, const void* g, const void* a, const void* b, const void* c, double s,
                             void* grad_a, void* grad_b, void* grad_c, int64_t n, const DeviceRef& device,
                             uint32_t accumulate = 0);

}  // namespace gradiens::kernels
