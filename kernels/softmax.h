// Device-neutral entry points of the fused softmax and log_softmax along one
// dim and their backward, on buffers with their own strides.
#pragma once

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels {

// y = softmax(x) (log_softmax when log) along `dim` of `sizes`, float32/float64;
// x_contiguous says x is row-major (the CPU's fast path).
void softmax(bool log, ScalarType dtype, const void* x, IntArrayRef x_strides, bool x_contiguous, void* y,
             IntArrayRef y_strides, IntArrayRef sizes, int64_t dim, const DeviceRef& device);
// softmax: out = y * (g - sum(g * y)); log_softmax: out = g - exp(y) * sum(g),
// sums along `dim`.
void softmax_backward(bool log, ScalarType dtype, const void* g, IntArrayRef g_strides, const void* y,
                      IntArrayRef y_strides, void* out, IntArrayRef out_strides, IntArrayRef sizes, int64_t dim,
                      const DeviceRef& device);

}  // namespace gradiens::kernels
