// The CUDA kernels' host entry points: elementwise math, copies and casts,
// fills, comparisons, selects and reductions on device buffers described by
// dtype, sizes and element strides. Every call is asynchronous on `stream`.
// This header needs no CUDA headers, so engine code can include it.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/device_ref.h"
#include "kernels/error.h"
#include "kernels/math_ops.h"
#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels::cuda {

// A cudaStream_t, passed opaquely (nullptr is never used: callers pass the
// current stream).
using StreamHandle = void*;

constexpr int kMaxDims = 16;

// The iteration shape shared by every operand of one call.
struct Shape {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= sizes[d];
    return n;
  }
};

// The Shape of `sizes`; a gradiens::Error past kMaxDims dimensions.
inline Shape shape_of(IntArrayRef sizes) {
  GD_CHECK(sizes.size() <= static_cast<size_t>(kMaxDims), "CUDA kernels take tensors of at most " +
                                                               std::to_string(kMaxDims) + " dimensions, got " +
                                                               std::to_string(sizes.size()));
  Shape shape;
  shape.ndim = static_cast<int>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) shape.sizes[d] = sizes[d];
  return shape;
}

// One operand over a Shape: its base pointer (already offset to the first
// element) and its stride in elements per dimension (0 for a broadcast one).
struct Strided {
  void* data = nullptr;
  int64_t strides[kMaxDims] = {};
};
// An entry point's operand walked with its own strides (no broadcasting); the
// strides beyond kMaxDims are dropped, so the caller checks the rank first.
inline Strided strided_of(const StridedRef& ref) {
  Strided operand;
  operand.data = ref.data;
  for (size_t d = 0; d < ref.strides.size() && d < static_cast<size_t>(kMaxDims); ++d)
    operand.strides[d] = ref.strides[d];
  return operand;
}

// out[i] = value (converted as Number::to does) for n contiguous elements of any dtype (bool: value != 0).
void fill(ScalarType dtype, void* out, int64_t n, const Number& value, StreamHandle stream);

// dst = src elementwise over `shape`, converting src_dtype to dst_dtype as a
// static_cast would (float to bool is != 0; float16/bfloat16 round to nearest
// even). Any strides; dst and src must not overlap.
void copy(ScalarType dst_dtype, const Strided& dst, ScalarType src_dtype, const Strided& src, const Shape& shape,
          StreamHandle stream);

// out = op(in) over n contiguous float32/float64 elements; out may equal in.
// Same edge values as kernels::cpu::unary_math.
void unary_math(UnaryMath op, ScalarType dtype, const void* in, void* out, int64_t n, StreamHandle stream);

using kernels::Binary;  // kernels/math_ops.h
// out = op(a, b) over `shape`, every operand of `dtype` (float32, float64,
// int32 or int64; integer Div/Pow/Atan2 are not supported); any strides.
// alpha scales b for Add and Sub (x + 1 * y rounds as x + y).
void binary(Binary op, ScalarType dtype, const Strided& out, const Strided& a, const Strided& b, const Shape& shape,
            double alpha, StreamHandle stream);

// binary() with b (or, when scalar_first, a) a host scalar of `dtype`: the
// same values as a 0-dim operand holding it, without a device buffer for it.
void binary_scalar(Binary op, ScalarType dtype, const Strided& out, const Strided& a, const Shape& shape, double scalar,
                   bool scalar_first, double alpha, StreamHandle stream);

using kernels::Compare;  // kernels/math_ops.h
// out (bool) = a op b over `shape`, a and b of `dtype` (any dtype); any strides.
// And, Or and Xor are logical: an operand counts as true when it is nonzero.
void compare(Compare op, ScalarType dtype, const Strided& out, const Strided& a, const Strided& b, const Shape& shape,
             StreamHandle stream);

// out = cond ? a : b over `shape`; cond is bool, a, b and out of `dtype`.
void where(ScalarType dtype, const Strided& out, const Strided& cond, const Strided& a, const Strided& b,
           const Shape& shape, StreamHandle stream);

// Fused backward kernels over n contiguous float32/float64 elements, with the
// same formulas and evaluation order as their kernels::cpu twins.
void tanh_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n, StreamHandle stream);
void sigmoid_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n, StreamHandle stream);
// out = self <= threshold ? 0 : grad (ReLU's backward).
void threshold_backward(ScalarType dtype, const void* grad, const void* self, double threshold, void* out, int64_t n,
                        StreamHandle stream);
void tanh_backward_backward(ScalarType dtype, const void* gg, const void* grad, const void* y, void* d_grad,
                            void* d_y, int64_t n, StreamHandle stream);
void scaled_product(ScalarType dtype, const void* a, const void* b, const void* c, double s, void* out, int64_t n,
                    StreamHandle stream);
void scaled_product_backward(ScalarType dtype, const void* g, const void* a, const void* b, const void* c, double s,
                             void* grad_a, void* grad_b, void* grad_c, int64_t n, StreamHandle stream);

using kernels::Predicate;  // kernels/math_ops.h
// out (bool) = pred(in) over `shape`, in of any dtype; any strides.
void predicate(Predicate pred, ScalarType dtype, const Strided& out, const Strided& in, const Shape& shape,
               StreamHandle stream);
// out = in clamped to [lo, hi] over `shape` (a null bound is absent; NaN in,
// or a NaN bound, gives NaN), any dtype but bool; any strides.
void clamp(ScalarType dtype, const Strided& out, const Strided& in, const Shape& shape, const Number* lo,
           const Number* hi, StreamHandle stream);
// out = softplus(in) with beta and threshold (kernels::cpu::softplus's formula),
// floating dtypes; any strides.
void softplus(ScalarType dtype, const Strided& out, const Strided& in, const Shape& shape, const Number& beta,
              const Number& threshold, StreamHandle stream);

// Factories over contiguous out, values as the CPU's loops make them:
// the rows x columns identity (any dtype); linspace's `steps` values (the first
// half counting up from start, the second down from end); arange's n values
// start + i * step (in int64 when `integral`, in double otherwise). linspace
// and range take any dtype but bool.
void eye(ScalarType dtype, void* out, int64_t rows, int64_t columns, StreamHandle stream);
void linspace(ScalarType dtype, void* out, double start, double end, int64_t steps, StreamHandle stream);
void range(ScalarType dtype, void* out, int64_t n, const Number& start, const Number& step, bool integral,
           StreamHandle stream);

// Along dimension `dim` of `shape` (kernels/cpu/softmax.h's formulas, sums in
// float64): y = softmax(x), or log_softmax when log; and its backward
// out = y * (g - sum(g * y)), or g - exp(y) * sum(g) when log. float32/float64,
// any strides.
void softmax(bool log, ScalarType dtype, const Strided& x, const Strided& y, const Shape& shape, int dim,
             StreamHandle stream);
void softmax_backward(bool log, ScalarType dtype, const Strided& g, const Strided& y, const Strided& out,
                      const Shape& shape, int dim, StreamHandle stream);

// Over the trailing `reduced_ndim` dimensions of `shape` (the leading ones kept,
// outputs contiguous in row-major order, every reduction non-empty):
// indices (int64) = the position of the first largest (smallest) value, NaN
// counting as both, as a linear index into the reduced dims, and values (of
// dtype, when not null) = the element there. Bool only when allow_bool.
// `device` (the stream's) lends scratch memory to long reductions.
void arg_extremum(bool is_max, ScalarType dtype, const Strided& in, const Shape& shape, int reduced_ndim,
                  int64_t* indices, void* values, bool allow_bool, int device, StreamHandle stream);
// out = ||in||_p over the trailing `reduced_ndim` dimensions, accumulated in
// float64 as kernels::cpu::vector_norm does; floating dtypes. As arg_extremum.
void vector_norm(double p, ScalarType dtype, const Strided& in, const Shape& shape, int reduced_ndim, void* out,
                 int device, StreamHandle stream);

using kernels::Reduce;  // kernels/math_ops.h
// Reduces the trailing `reduced_ndim` dimensions of `shape` (the leading ones
// are kept): out, contiguous, gets shape.sizes[0 .. ndim - reduced_ndim) in
// row-major order. in_dtype and out_dtype are equal, except a Sum of bool or
// an integer dtype into int64. Floating sums accumulate in float64 for float64
// and in float32 otherwise, in an order fixed by the shape alone, so results
// are deterministic run to run. An empty reduction gives the identity (Sum 0,
// Prod 1); Max/Min of an empty reduction is the caller's error to prevent.
void reduce(Reduce op, ScalarType in_dtype, const Strided& in, const Shape& shape, int reduced_ndim,
            ScalarType out_dtype, void* out, StreamHandle stream);

}  // namespace gradiens::kernels::cuda
