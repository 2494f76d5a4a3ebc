// How the line ops (sort, topk, cumsum, softmax...) see a tensor: every
// combination of the other dims is one line along the op's dim.
#pragma once

#include "engine/tensor.h"
#include "kernels/small_vector.h"

namespace gradiens {

// Sizes and strides as a line op sees them: a 0-dim tensor is one line of one
// element, so the ops need no special case for it.
struct LineGeometry {
  DimVector sizes, strides;
};
inline LineGeometry line_geometry(const Tensor& t) {
  if (t.dim() == 0) return {{1}, {1}};
  return {t.sizes().dims(), t.strides().dims()};
}

}  // namespace gradiens
