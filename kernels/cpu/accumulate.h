// The CPU's in-place accumulation dst += src over a broadcasting iterator
// (kernels::add_into).
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/cpu/elementwise.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cpu {

// Operands (dst, dst, src): dst = dst + src, numeric dtypes, parallel above
// `grain` (an unbounded grain keeps it on one thread).
void add_into(ScalarType dtype, const ElementwiseIterator& iter, int64_t grain, std::string_view name);

}  // namespace gradiens::kernels::cpu
