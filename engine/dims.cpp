// Dimension helpers shared by the ops.
#include "engine/dims.h"

#include <fmt/format.h>

#include "kernels/error.h"

namespace gradiens {

int64_t wrap_dim(int64_t dim, int64_t ndim, std::string_view op) {
  int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    throw Error(fmt::format("{}{}Dimension out of range (expected to be in range of [{}, {}], but got {})", op,
                            op.empty() ? "" : ": ", -n, n - 1, dim));
  return dim < 0 ? dim + n : dim;
}

std::string shape_to_string(IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size(), 1);
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

int64_t checked_numel(IntArrayRef sizes, std::string_view op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    GD_CHECK(s >= 0, fmt::format("{}{}negative dimension {} in shape {}", op, op.empty() ? "" : ": ", s,
                                 shape_to_string(sizes)));
    GD_CHECK(!__builtin_mul_overflow(n, s, &n),
             fmt::format("{}{}shape {} has too many elements", op, op.empty() ? "" : ": ", shape_to_string(sizes)));
  }
  // A shape with a zero dimension has no elements, but its contiguous strides are
  // still the products of the other sizes: they must fit in int64 too.
  int64_t span = 1;
  for (int64_t s : sizes)
    GD_CHECK(!__builtin_mul_overflow(span, std::max<int64_t>(s, 1), &span),
             fmt::format("{}{}shape {} is too large: its strides overflow int64", op, op.empty() ? "" : ": ",
                         shape_to_string(sizes)));
  return n;
}

}  // namespace gradiens
