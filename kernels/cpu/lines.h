// Walking buffers line by line along one dim (the loop shape of softmax, sort,
// cumsum...): every combination of the other dims is one line.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/cpu/parallel.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels::cpu {

// Calls f(offsets) once per line, where offsets[i] is the element offset of the
// line's first element in operand i. `sizes` are the operands' common sizes
// outside `dim`; strides[i] are operand i's strides (its size along `dim` may
// differ: topk writes k of n). Lines run in parallel; `work_per_line` (about
// the elements touched) sets the grain so small tensors stay on one thread.
template <size_t N, class F>
void for_each_line(IntArrayRef sizes, int64_t dim, const std::array<DimVector, N>& strides, int64_t work_per_line,
                   F&& f) {
  DimVector outer_sizes;
  std::array<DimVector, N> outer_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (static_cast<int64_t>(d) == dim) continue;
    outer_sizes.push_back(sizes[d]);
    for (size_t i = 0; i < N; ++i) outer_strides[i].push_back(strides[i][d]);
  }
  int64_t lines = 1;
  for (int64_t s : outer_sizes) lines *= s;
  int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(work_per_line, 1));
  parallel_for(0, lines, grain, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      std::array<int64_t, N> offsets{};
      int64_t rem = line;
      for (size_t d = outer_sizes.size(); d-- > 0;) {
        int64_t index = rem % outer_sizes[d];
        rem /= outer_sizes[d];
        for (size_t i = 0; i < N; ++i) offsets[i] += index * outer_strides[i][d];
      }
      f(offsets);
    }
  });
}

}  // namespace gradiens::kernels::cpu
