// Shared by the indexing ops (gather/scatter_add in indexing.cpp, scatter and
// the advanced indexing in advanced_indexing.cpp): the 0-dim-as-1-D layout,
// deferred out-of-range errors (and their check before a CUDA launch), zero
// padding for gradients, and scatter's shape rules.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens {

// PyTorch treats a 0-dim tensor as a 1-element 1-dim one in the dim-wise ops.
struct DimGeometry {
  DimVector sizes, strides;
};
inline DimGeometry nonempty_layout(const Tensor& t) {
  if (t.dim() == 0) return {{1}, {1}};
  return {t.sizes().dims(), t.strides().dims()};
}

// Throws "<prefix>index {} is out of bounds for dimension {} with size {}" for
// the first value of the int64 `index` outside [low, size) in row-major order,
// the one a serial CPU loop meets first. A kernel cannot throw, so on a cuda
// device this runs before the launch: one reduction and one copy to the host
// when all is well.
inline void check_index_range(const Tensor& index, int64_t low, int64_t size, int64_t dim,
                              std::string_view prefix = "") {
  if (index.numel() == 0) return;
  NoGradGuard no_grad;
  if (!any(logical_or(lt(index, low), ge(index, size))).item<bool>()) return;
  Tensor host = index.cpu().contiguous();
  const int64_t* values = host.cpu_data_ptr<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i)
    if (values[i] < low || values[i] >= size)
      throw Error(
          fmt::format("{}index {} is out of bounds for dimension {} with size {}", prefix, values[i], dim, size));
}

// Zero-pads `t` at the end of each dim up to `sizes` (differentiably, through cat).
inline Tensor pad_to(Tensor t, IntArrayRef sizes) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t missing = sizes[d] - t.sizes()[d];
    if (missing <= 0) continue;
    DimVector zero_shape = t.sizes().dims();
    zero_shape[d] = missing;
    t = cat({t, zeros(zero_shape, t.options())}, d);
  }
  return t;
}

// The shape rules of PyTorch's scatter: index no larger than self apart from
// `dim`, and (with a src tensor) no larger than src. Ranks of self and index
// are checked by the caller, which words that message per op.
inline void check_scatter_shapes(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src) {
  if (index.numel() == 0) return;
  DimGeometry s = nonempty_layout(self), i = nonempty_layout(index);
  bool wrong = false;
  for (size_t d = 0; d < s.sizes.size(); ++d)
    if (static_cast<int64_t>(d) != dim && i.sizes[d] > s.sizes[d]) wrong = true;
  if (!src) {
    GD_CHECK(!wrong, fmt::format("Expected index {} to be smaller than self {} apart from dimension {}",
                                 shape_to_string(index.sizes()), shape_to_string(self.sizes()), dim));
    return;
  }
  // src's rank is checked after the sizes, as PyTorch does.
  DimGeometry r = nonempty_layout(*src);
  for (size_t d = 0; d < i.sizes.size() && d < r.sizes.size(); ++d)
    if (i.sizes[d] > r.sizes[d]) wrong = true;
  GD_CHECK(!wrong, fmt::format("Expected index {} to be smaller than self {} apart from dimension {} and to be smaller "
                               "size than src {}",
                               shape_to_string(index.sizes()), shape_to_string(self.sizes()), dim,
                               shape_to_string(src->sizes())));
  GD_CHECK(r.sizes.size() == i.sizes.size(), "Index tensor must have the same number of dimensions as src tensor");
}

}  // namespace gradiens
