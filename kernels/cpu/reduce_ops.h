// The CPU's named reduction kernels over a ReductionLayout (see kernels/cpu/reduce.h).
#pragma once

#include "kernels/reduction_layout.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cpu {

// out = the sum over the reduced dims, accumulated in double for floating
// outputs and int64 for integer ones, each output's values added in order.
void sum(ScalarType in_dtype, const void* in, const ReductionLayout& layout, ScalarType out_dtype, void* out);

}  // namespace gradiens::kernels::cpu
