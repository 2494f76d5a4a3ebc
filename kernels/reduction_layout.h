// ReductionLayout: a tensor seen by a reduction kernel of any backend, kept
// dims first and reduced dims last, each with element strides.
#pragma once

#include <cstdint>

#include "kernels/small_vector.h"

namespace gradiens::kernels {

// The input viewed as kept dims (matching the output's elements, row-major)
// followed by reduced dims, each with element strides.
struct ReductionLayout {
  DimVector kept_sizes, kept_strides;
  DimVector reduced_sizes, reduced_strides;
  int64_t output_numel() const {
    int64_t n = 1;
    for (int64_t s : kept_sizes) n *= s;
    return n;
  }
  int64_t reduced_numel() const {
    int64_t n = 1;
    for (int64_t s : reduced_sizes) n *= s;
    return n;
  }
};

}  // namespace gradiens::kernels
