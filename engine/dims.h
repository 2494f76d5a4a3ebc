// Dimension helpers shared by the ops: negative-index wrapping with PyTorch's
// error text, and shape printing for messages.
#pragma once

#include <string>
#include <string_view>

#include "kernels/small_vector.h"

namespace gradiens {

// Maps dim in [-ndim, ndim) to [0, ndim); a 0-dim tensor accepts 0 and -1.
int64_t wrap_dim(int64_t dim, int64_t ndim, std::string_view op = "");
// "[2, 3]"
std::string shape_to_string(IntArrayRef sizes);
// Contiguous strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
// Product of sizes, with an error on overflow.
int64_t checked_numel(IntArrayRef sizes, std::string_view op = "");

}  // namespace gradiens
