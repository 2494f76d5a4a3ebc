// Device-neutral entry point of the reductions: a tensor seen through its
// ReductionLayout (kept dims first, reduced dims last) reduced into a
// contiguous output, on the CPU or on a cuda device's stream.
#pragma once

#include "kernels/device_ref.h"
#include "kernels/math_ops.h"
#include "kernels/reduction_layout.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// out (contiguous, row-major over the kept dims) = op over the reduced dims of
// `in` (its first element; the layout's strides in elements). in_dtype and
// out_dtype are equal except a Sum into a wider type (bool or integer into
// int64, any into a requested dtype on the CPU). CPU: Sum only.
void reduce(Reduce op, ScalarType in_dtype, const void* in, const ReductionLayout& layout, ScalarType out_dtype,
            void* out, const DeviceRef& device);

}  // namespace gradiens::kernels
