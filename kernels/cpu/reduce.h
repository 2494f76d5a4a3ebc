// Reduction loops over strided buffers: the reduced dimensions of a tensor are
// walked for each output element (outer loop, parallel above a grain size).
#pragma once

#include <cstdint>

#include "kernels/cpu/parallel.h"
#include "kernels/reduction_layout.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels::cpu {

using kernels::ReductionLayout;

// For each output element o (row-major over kept dims), calls
// visit(o, in + offset_of(o), reduced_sizes, reduced_strides) where the callee
// walks the reduced sub-tensor.
template <class T, class Visit>
void for_each_output(const ReductionLayout& layout, const T* in, Visit&& visit) {
  int64_t outputs = layout.output_numel();
  int64_t work_per_output = std::max<int64_t>(layout.reduced_numel(), 1);
  int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / work_per_output);
  parallel_for(0, outputs, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      int64_t rem = o, offset = 0;
      for (size_t d = layout.kept_sizes.size(); d-- > 0;) {
        offset += (rem % layout.kept_sizes[d]) * layout.kept_strides[d];
        rem /= layout.kept_sizes[d];
      }
      visit(o, in + offset);
    }
  });
}

// sum of x[i]^2 over n contiguous elements, in double. Sixteen accumulators
// break the add chain (one alone is latency-bound, several times slower) and
// let the compiler use vector registers; they are added pairwise at the end,
// so the result may differ from a sequential sum in a double's last bits.
template <class T>
double sum_of_squares(const T* x, int64_t n) {
  constexpr int kLanes = 16;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const double v = static_cast<double>(x[i + j]);
      acc[j] += v * v;
    }
  for (; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    acc[0] += v * v;
  }
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int j = 0; j < width; ++j) acc[j] += acc[j + width];
  return acc[0];
}

// Walks the innermost reduced runs of the sub-tensor starting at `base`, in
// row-major order: f(row, linear_index of its first element) for each, a run
// being reduced_sizes.back() elements reduced_strides.back() apart.
template <class T, class F>
void for_each_reduced_row(const ReductionLayout& layout, const T* base, F&& f) {
  const size_t nd = layout.reduced_sizes.size();
  const int64_t total = layout.reduced_numel();
  if (nd == 0 || total == 0) return;
  const int64_t inner = layout.reduced_sizes[nd - 1];
  DimVector index(nd, 0);
  const T* row = base;
  for (int64_t linear = 0; linear < total; linear += inner) {
    f(row, linear);
    // Advance the outer reduced index.
    for (size_t d = nd - 1; d-- > 0;) {
      row += layout.reduced_strides[d];
      if (++index[d] < layout.reduced_sizes[d]) break;
      row -= index[d] * layout.reduced_strides[d];
      index[d] = 0;
    }
  }
}

// Walks the reduced sub-tensor starting at `base`, calling f(value, linear_index).
template <class T, class F>
void for_each_reduced(const ReductionLayout& layout, const T* base, F&& f) {
  if (layout.reduced_sizes.empty()) {
    f(*base, int64_t{0});
    return;
  }
  const int64_t inner = layout.reduced_sizes.back(), inner_stride = layout.reduced_strides.back();
  for_each_reduced_row(layout, base, [&](const T* row, int64_t linear) {
    for (int64_t j = 0; j < inner; ++j) f(row[j * inner_stride], linear + j);
  });
}

}  // namespace gradiens::kernels::cpu
