// The CPU's cumulative sum and product along one dim (kernels/ordering.h).
#pragma once

#include <cstdint>

#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels::cpu {

// kernels::cumulative on CPU buffers, each with its own element strides.
void cumulative(bool product, ScalarType dtype, IntArrayRef sizes, int64_t dim, void* out, IntArrayRef out_strides,
                const void* in, IntArrayRef in_strides);

}  // namespace gradiens::kernels::cpu
