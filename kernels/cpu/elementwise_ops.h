// The CPU's named elementwise kernels over the broadcasting iterator
// (kernels/cpu/elementwise.h): arithmetic with a tensor or a scalar operand,
// comparisons, where, casts and fills. Operand 0 of each iterator is the output.
#pragma once

#include <string_view>

#include "kernels/cpu/elementwise.h"
#include "kernels/device_ref.h"
#include "kernels/math_ops.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cpu {

// out = op(a, b), all of `dtype`; float16/bfloat16 compute in float32 and round
// once; bool Add/Maximum are `or`, Mul/Minimum `and`. `name` is the op that
// unsupported dtypes are reported for.
void binary(Binary op, ScalarType dtype, const ElementwiseIterator& iter, const Number& alpha, std::string_view name);
// out = op(a, s), or op(s, a) when scalar_first; s converted to the compute type
// (float32 for float16/bfloat16).
void binary_scalar(Binary op, ScalarType dtype, const ElementwiseIterator& iter, const Number& scalar,
                   bool scalar_first, const Number& alpha, std::string_view name);
// (binary_scalar on one element: binary_scalar_one, kernels/cpu/binary_function.h.)
// out = a * a, computed as one multiply.
void square(ScalarType dtype, const ElementwiseIterator& iter, std::string_view name);
void square_one(ScalarType dtype, void* out, const void* a, std::string_view name);

// out = op(in) for the integer forms of Neg, Abs, Sign and Relu (any numeric dtype).
void integer_math(UnaryMath op, ScalarType dtype, const ElementwiseIterator& iter, std::string_view name);

// out (bool) = a op b, a and b of `dtype` (any dtype).
void compare(Compare op, ScalarType dtype, const ElementwiseIterator& iter, std::string_view name);
// out = cond ? a : b; operands out, cond (bool), a, b.
void where(ScalarType dtype, const ElementwiseIterator& iter);
// out = static_cast<dst_dtype>(in).
void cast(ScalarType dst_dtype, ScalarType src_dtype, const ElementwiseIterator& iter);
// Every element of the iterator's one operand set to value.
void fill(ScalarType dtype, const ElementwiseIterator& iter, const Number& value);

}  // namespace gradiens::kernels::cpu
