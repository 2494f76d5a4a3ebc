// The CPU's named reduction kernels over a ReductionLayout (see kernels/cpu/reduce.h).
#pragma once

#include <string_view>

#include "kernels/reduction_layout.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cpu {

// out = the sum over the reduced dims, accumulated in double for floating
// outputs and int64 for integer ones, each output's values added in order.
void sum(ScalarType in_dtype, const void* in, const ReductionLayout& layout, ScalarType out_dtype, void* out,
         std::string_view name);
// out = the product over the reduced dims (numeric dtypes), in double for
// floating types; integer products wrap modulo 2^64 as in PyTorch.
void prod(ScalarType dtype, const void* in, const ReductionLayout& layout, void* out, std::string_view name);
// out = the largest (or smallest) value over the reduced dims, any dtype; NaN is
// both the largest and the smallest value. Every reduction must be non-empty.
void extremum(bool is_max, ScalarType dtype, const void* in, const ReductionLayout& layout, void* out,
              std::string_view name);

// out = ||x||_p over the reduced dims, accumulated in double (floating dtypes).
// p = 0 counts the nonzero elements; +-inf take the largest/smallest |x| (a
// NaN wins); an empty reduction gives 0.
void vector_norm(double p, ScalarType dtype, const void* in, const ReductionLayout& layout, void* out,
                 std::string_view name);

// out (int64) = the linear index, within its reduced sub-tensor, of the first
// largest (or smallest) value, NaN counting as both, and values (when not
// null, of dtype) = that value; bool inputs only when allow_bool. Every
// reduction must be non-empty.
void arg_extremum(bool is_max, ScalarType dtype, const void* in, const ReductionLayout& layout, int64_t* out,
                  void* values, bool allow_bool, std::string_view name);

}  // namespace gradiens::kernels::cpu
