// Device-neutral entry points of the strided elementwise ops: arithmetic,
// comparisons, where, copies with casts and fills, on operands described by a
// data pointer and element strides over one iteration shape (the output's).
// Each runs the CPU's broadcasting iterator or the CUDA kernels on the stream.
#pragma once

#include <string_view>

#include "kernels/cpu/binary_function.h"
#include "kernels/device_ref.h"
#include "kernels/math_ops.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// out = op(a, b) (a + alpha * b for Add and Sub), every operand of `dtype`.
// `name` is the op that errors name.
void binary(Binary op, ScalarType dtype, const StridedRef& out, const StridedRef& a, const StridedRef& b,
            IntArrayRef shape, const Number& alpha, const DeviceRef& device, std::string_view name);
// binary() with b, or a when scalar_first, the number `scalar` of `dtype`.
void binary_scalar(Binary op, ScalarType dtype, const StridedRef& out, const StridedRef& a, IntArrayRef shape,
                   const Number& scalar, bool scalar_first, const Number& alpha, const DeviceRef& device,
                   std::string_view name);
// binary_scalar over one element of an op known at compile time: `ndim` is the
// rank of out and a (all sizes 1). On the CPU it is computed inline: the
// per-op overhead path of scalar bookkeeping.
void binary_scalar_one_element(Binary op, ScalarType dtype, void* out, const void* a, int64_t ndim,
                               const Number& scalar, bool scalar_first, const Number& alpha, const DeviceRef& device,
                               std::string_view name);
template <Binary Op>
void binary_scalar_one(ScalarType dtype, void* out, const void* a, int64_t ndim, const Number& scalar,
                       bool scalar_first, const Number& alpha, const DeviceRef& device, std::string_view name) {
  if (!device.is_cuda()) return cpu::binary_scalar_one<Op>(dtype, out, a, scalar, scalar_first, alpha, name);
  binary_scalar_one_element(Op, dtype, out, a, ndim, scalar, scalar_first, alpha, device, name);
}

// out = a * a.
void square(ScalarType dtype, const StridedRef& out, const StridedRef& a, IntArrayRef shape, const DeviceRef& device,
            std::string_view name);

// out = op(in) for an integer dtype: Neg, Abs, Sign or Relu (CUDA: Neg only).
void integer_math(UnaryMath op, ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape,
                  const DeviceRef& device, std::string_view name);

// out (bool) = a op b, a and b of `dtype`.
void compare(Compare op, ScalarType dtype, const StridedRef& out, const StridedRef& a, const StridedRef& b,
             IntArrayRef shape, const DeviceRef& device, std::string_view name);
// out (bool) = pred(in); out = in clamped to [lo, hi] (a null bound is absent;
// on a cuda device a NaN bound gives NaN, as in PyTorch); out = softplus(in)
// with beta and threshold.
void predicate(Predicate pred, ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape,
               const DeviceRef& device, std::string_view name);
void clamp(ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape, const Number* lo,
           const Number* hi, const DeviceRef& device);
void softplus(ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape, const Number& beta,
              const Number& threshold, const DeviceRef& device);

// out = cond ? a : b; cond is bool, out, a and b of `dtype`.
void where(ScalarType dtype, const StridedRef& out, const StridedRef& cond, const StridedRef& a, const StridedRef& b,
           IntArrayRef shape, const DeviceRef& device);

// dst = src converted as a static_cast would; dst and src must not overlap.
void copy(ScalarType dst_dtype, const StridedRef& dst, ScalarType src_dtype, const StridedRef& src, IntArrayRef shape,
          const DeviceRef& device);
// Every element of out set to value. On a cuda device out must be dense
// (row-major strides).
void fill(ScalarType dtype, const StridedRef& out, IntArrayRef shape, const Number& value, const DeviceRef& device);

// dst += src (src broadcast to shape), numeric dtypes. `serial` keeps the CPU
// loop on one thread, for a dst whose elements alias each other (an
// overlapping view), so that every addition lands; on a cuda device dst's
// elements must be distinct. `name` is the op errors name.
void add_into(ScalarType dtype, const StridedRef& dst, const StridedRef& src, IntArrayRef shape, bool serial,
              const DeviceRef& device, std::string_view name);

// Whether strides are the row-major strides of shape (size-1 dims ignored).
bool is_row_major(IntArrayRef shape, IntArrayRef strides);

}  // namespace gradiens::kernels
