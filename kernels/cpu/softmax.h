// The CPU's softmax and log_softmax along one dim, and their fused backward.
#pragma once

#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels::cpu {

// y = exp(x - max) / sum, or for log: y = (x - max) - log(sum), along `dim` of
// `sizes`; x and y with their own strides (x_contiguous: x is row-major).
void softmax(bool log, ScalarType dtype, const void* x, IntArrayRef x_strides, bool x_contiguous, void* y,
             IntArrayRef y_strides, IntArrayRef sizes, int64_t dim);
// softmax: out = y * (g - sum(g * y)); log_softmax: out = g - exp(y) * sum(g).
void softmax_backward(bool log, ScalarType dtype, const void* g, IntArrayRef g_strides, const void* y,
                      IntArrayRef y_strides, void* out, IntArrayRef out_strides, IntArrayRef sizes, int64_t dim);

}  // namespace gradiens::kernels::cpu
