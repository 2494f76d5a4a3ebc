// The CPU's order statistics along lines (kernels/sorting.h): each line copied
// as (value, position) pairs and ordered by std::sort, std::partial_sort or
// std::nth_element under a strict total order.
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"
#include "kernels/sorting.h"

namespace gradiens::kernels::cpu {

// kernels::select_positions and kernels::median_positions on CPU buffers, each
// with its own element strides.
void select_positions(Selection how, ScalarType dtype, IntArrayRef sizes, int64_t dim, int64_t count,
                      bool descending, void* out, IntArrayRef out_strides, const void* in, IntArrayRef in_strides,
                      std::string_view name);
void median_positions(ScalarType dtype, IntArrayRef sizes, int64_t dim, void* out, IntArrayRef out_strides,
                      const void* in, IntArrayRef in_strides);

}  // namespace gradiens::kernels::cpu
