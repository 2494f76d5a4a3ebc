// Walking a tensor line by line along one dim (the loop shape of sort, topk,
// cumsum, softmax...): every combination of the other dims is one line.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "engine/tensor.h"
#include "kernels/cpu/lines.h"
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

// Calls f(offsets) once per line (kernels/cpu/lines.h).
using kernels::cpu::for_each_line;

}  // namespace gradiens
