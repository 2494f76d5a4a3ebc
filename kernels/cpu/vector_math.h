// Vectorized elementwise math on contiguous float/double buffers (exp, log, tanh,
// erf, gelu, ...) plus fused tanh/sigmoid backward, with the SIMD target picked at runtime.
#pragma once

#include <cstdint>

#include "kernels/math_ops.h"

namespace gradiens {
struct Half;
struct BFloat16;
}  // namespace gradiens

namespace gradiens::kernels::cpu {

using kernels::UnaryMath;
using kernels::Arith;

// Applies op to n contiguous elements; out may equal in (in place).
void unary_math(UnaryMath op, const float* in, float* out, int64_t n);
void unary_math(UnaryMath op, const double* in, double* out, int64_t n);

// float16/bfloat16: computed in float32 block by block, each result rounded once.
void unary_math(UnaryMath op, const Half* in, Half* out, int64_t n);
void unary_math(UnaryMath op, const BFloat16* in, BFloat16* out, int64_t n);

// Fused backward kernels over n contiguous elements; out may alias any input.
// grad * (1 - y*y), where y = tanh(x) is the saved forward output.
void tanh_backward(const float* grad, const float* y, float* out, int64_t n);
void tanh_backward(const double* grad, const double* y, double* out, int64_t n);
void tanh_backward(const Half* grad, const Half* y, Half* out, int64_t n);
void tanh_backward(const BFloat16* grad, const BFloat16* y, BFloat16* out, int64_t n);
// grad * y * (1 - y), where y = sigmoid(x) is the saved forward output.
void sigmoid_backward(const float* grad, const float* y, float* out, int64_t n);
void sigmoid_backward(const double* grad, const double* y, double* out, int64_t n);
void sigmoid_backward(const Half* grad, const Half* y, Half* out, int64_t n);
void sigmoid_backward(const BFloat16* grad, const BFloat16* y, BFloat16* out, int64_t n);

// ReLU's backward (PyTorch's threshold_backward): out = self <= threshold ? 0 : grad.
void threshold_backward(const float* grad, const float* self, float threshold, float* out, int64_t n);
void threshold_backward(const double* grad, const double* self, double threshold, double* out, int64_t n);

// The LSTM cell's backward over `batch` rows of `hidden` units, PyTorch's gate order:
// act [batch, 4H] holds the activated gates i, f, g, o (sigmoid, sigmoid, tanh,
// sigmoid), tanh_c [batch, H] = tanh(c), cprev [batch, H] the previous cell; dh and
// dc [batch, H] are the incoming gradients of h and c (null: zero). Writes the
// gradient of the gates' pre-activations, dgates [batch, 4H], and of cprev:
//   dct = dc + dh o (1 - tanh_c^2)
//   dgates = [dct g i (1 - i), dct cprev f (1 - f), dct i (1 - g^2), dh tanh_c o (1 - o)]
//   dcprev = dct f
void lstm_cell_backward(const float* act, const float* tanh_c, const float* cprev, const float* dh, const float* dc,
                        int64_t batch, int64_t hidden, float* dgates, float* dcprev);
void lstm_cell_backward(const double* act, const double* tanh_c, const double* cprev, const double* dh,
                        const double* dc, int64_t batch, int64_t hidden, double* dgates, double* dcprev);

// A 2x2, stride-2 max pool over `planes` row-major planes of in_h x in_w (2 * out_h <=
// in_h, 2 * out_w <= in_w, and in_h * in_w < 2^31 for float): the max of each window and
// its flat index h * in_w + w in the plane, with PyTorch's rules (the first maximum wins;
// NaN is the largest value and the last NaN wins).
void max_pool_2x2_planes(const float* input, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                         int64_t out_w, float* output, int64_t* indices);
void max_pool_2x2_planes(const double* input, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                         int64_t out_w, double* output, int64_t* indices);
// The same with int32 indices (half the bytes of int64: the pool is memory-bound).
void max_pool_2x2_planes(const float* input, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                         int64_t out_w, float* output, int32_t* indices);

// out = a + b, a - b or a * b over n contiguous elements; out may alias a or b.
void arith(Arith op, const float* a, const float* b, float* out, int64_t n);
void arith(Arith op, const double* a, const double* b, double* out, int64_t n);

// Both gradients of tanh_backward(grad, y) for the incoming gg, in one pass:
// d_grad = tanh_backward(gg, y) and d_y = -2 * (gg * grad * y), multiplied left
// to right (the rounding of the two separate kernels). Bit k of `accumulate`
// makes output k (d_grad, d_y) add its result to what it holds, as a separate
// add would (Note [Accumulating in place] in engine/autograd/engine.cpp).
void tanh_backward_backward(const float* gg, const float* grad, const float* y, float* d_grad, float* d_y, int64_t n,
                            uint32_t accumulate = 0);
void tanh_backward_backward(const double* gg, const double* grad, const double* y, double* d_grad, double* d_y,
                            int64_t n, uint32_t accumulate = 0);
// The gradients of tanh_backward_backward's two outputs (d_grad = gg (1 - y^2) and
// d_y = -2 gg grad y) for the incoming g_first and g_second, in one pass:
//   d_gg = g_first (1 - y^2) + -2 g_second grad y,  d_grad = -2 gg g_second y,
//   d_y = -2 g_first gg y + -2 gg grad g_second,
// each term rounded as tanh_backward or scaled_product would round it, then the
// two added. Bit k of `accumulate`: output k (d_gg, d_grad, d_y) adds to what it holds.
void tanh_backward_backward_backward(const float* g_first, const float* g_second, const float* gg, const float* grad,
                                     const float* y, float* d_gg, float* d_grad, float* d_y, int64_t n,
                                     uint32_t accumulate = 0);
void tanh_backward_backward_backward(const double* g_first, const double* g_second, const double* gg,
                                     const double* grad, const double* y, double* d_gg, double* d_grad, double* d_y,
                                     int64_t n, uint32_t accumulate = 0);
// out = s * (a * b * c), multiplied left to right.
void scaled_product(const float* a, const float* b, const float* c, float s, float* out, int64_t n);
void scaled_product(const double* a, const double* b, const double* c, double s, double* out, int64_t n);
// The three gradients of scaled_product for the incoming g, in one pass: each is
// scaled_product with its factor replaced by g (s * (g * b * c), s * (a * g * c),
// s * (a * b * g)). Bit k of `accumulate`: output k adds to what it holds.
void scaled_product_backward(const float* g, const float* a, const float* b, const float* c, float s, float* grad_a,
                             float* grad_b, float* grad_c, int64_t n, uint32_t accumulate = 0);
void scaled_product_backward(const double* g, const double* a, const double* b, const double* c, double s,
                             double* grad_a, double* grad_b, double* grad_c, int64_t n, uint32_t accumulate = 0);

// Bulk conversions of n contiguous elements between float32 and the 16-bit
// floats, bit for bit the scalar Half(float) / float(Half) of kernels/reduced_float.h
// (round-to-nearest-even; Note [Half conversion by float arithmetic]).
void convert(const float* in, Half* out, int64_t n);
void convert(const Half* in, float* out, int64_t n);
void convert(const float* in, BFloat16* out, int64_t n);
void convert(const BFloat16* in, float* out, int64_t n);

// Name of the SIMD target chosen at runtime ("AVX3" = AVX-512, "AVX2", "SSE4",
// "SCALAR"), for benchmark reports.
const char* simd_target_name();

}  // namespace gradiens::kernels::cpu
