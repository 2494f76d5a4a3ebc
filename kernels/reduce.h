// Device-neutral entry point of the reductions: a tensor seen through its
// ReductionLayout (kept dims first, reduced dims last) reduced into a
// contiguous output, on the CPU or on a cuda device's stream.
#pragma once

#include <string_view>

#include "kernels/device_ref.h"
#include "kernels/math_ops.h"
#include "kernels/reduction_layout.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// out (contiguous, row-major over the kept dims) = op over the reduced dims of
// `in` (its first element; the layout's strides in elements). in_dtype and
// out_dtype are equal except a Sum into a wider type (bool or integer into
// int64, any into a requested dtype on the CPU). Max and Min take NaN as the
// largest and smallest value and need every reduction non-empty. CPU: Sum,
// Prod, Max and Min. `name` is the op that unsupported dtypes are reported for.
void reduce(Reduce op, ScalarType in_dtype, const void* in, const ReductionLayout& layout, ScalarType out_dtype,
            void* out, const DeviceRef& device, std::string_view name);

// out = ||x||_p over the reduced dims (floating dtypes), accumulated in double:
// p = 0 counts the nonzeros, +-inf take the largest/smallest |x| (a NaN wins),
// an empty reduction gives 0.
void vector_norm(double p, ScalarType dtype, const void* in, const ReductionLayout& layout, void* out,
                 const DeviceRef& device, std::string_view name);

// out (int64, contiguous) = the position of the first largest (or smallest)
// value of each reduction (NaN counting as both), as a linear index into the
// reduced dims, and values (of dtype, contiguous; skipped when null) = the
// element there; every reduction non-empty; bool inputs only when allow_bool.
void arg_extremum(bool is_max, ScalarType dtype, const void* in, const ReductionLayout& layout, int64_t* out,
                  void* values, bool allow_bool, const DeviceRef& device, std::string_view name);

}  // namespace gradiens::kernels
