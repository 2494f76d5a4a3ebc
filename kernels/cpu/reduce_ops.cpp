// The CPU's named reduction kernels (kernels/cpu/reduce_ops.h).
#include "kernels/cpu/reduce_ops.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/cpu/reduce.h"

namespace gradiens::kernels::cpu {

namespace {

// Sums n contiguous values with four accumulators (breaks the add chain).
template <class Acc, class T>
Acc sum_contiguous(const T* p, int64_t n) {
  Acc a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 += static_cast<Acc>(p[i]);
    a1 += static_cast<Acc>(p[i + 1]);
    a2 += static_cast<Acc>(p[i + 2]);
    a3 += static_cast<Acc>(p[i + 3]);
  }
  for (; i < n; ++i) a0 += static_cast<Acc>(p[i]);
  return (a0 + a1) + (a2 + a3);
}

template <class T>
using SumAcc = std::conditional_t<is_floating_type_v<T>, double, int64_t>;

}  // namespace

void sum(ScalarType in_dtype, const void* in_data, const ReductionLayout& layout, ScalarType out_dtype,
         void* out_data) {
  dispatch_all(in_dtype, "sum", [&]<class T>() {
    dispatch_numeric_and_reduced(out_dtype, "sum", [&]<class O>() {
      O* o = static_cast<O*>(out_data);
      const T* in = static_cast<const T*>(in_data);
      // Innermost reduced elements adjacent: sum each run in four lanes (over
      // [N, C, H, W] to [C], a bias gradient, the runs are the planes).
      const bool contiguous_runs = !layout.reduced_sizes.empty() && layout.reduced_strides.back() == 1;
      const int64_t run = contiguous_runs ? layout.reduced_sizes.back() : 0;
      if (layout.kept_sizes.size() == 1 && layout.kept_strides[0] == 1 && layout.reduced_sizes.size() == 1) {
        // Summing over leading rows into a contiguous row (a bias gradient):
        // add whole rows, which vectorizes, instead of striding down each
        // column. Each output still adds its rows in order, so the result is
        // the same bits as the column walk, for any number of threads.
        const int64_t width = layout.kept_sizes[0], rows = layout.reduced_sizes[0];
        const int64_t row_stride = layout.reduced_strides[0];
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(rows, 1));
        parallel_for(0, width, grain, [&](int64_t lo, int64_t hi) {
          std::vector<SumAcc<O>> acc(static_cast<size_t>(hi - lo), SumAcc<O>(0));
          for (int64_t r = 0; r < rows; ++r) {
            const T* row = in + r * row_stride;
            for (int64_t j = lo; j < hi; ++j) acc[j - lo] += static_cast<SumAcc<O>>(row[j]);
          }
          for (int64_t j = lo; j < hi; ++j) o[j] = static_cast<O>(acc[j - lo]);
        });
        return;
      }
      for_each_output(layout, in, [&](int64_t index, const T* base) {
        SumAcc<O> acc = 0;
        if (layout.reduced_sizes.empty()) acc = static_cast<SumAcc<O>>(*base);
        else if (contiguous_runs)
          for_each_reduced_row(layout, base, [&](const T* row, int64_t) { acc += sum_contiguous<SumAcc<O>>(row, run); });
        else for_each_reduced(layout, base, [&](T v, int64_t) { acc += static_cast<SumAcc<O>>(v); });
        o[index] = static_cast<O>(acc);
      });
    });
  });
}

}  // namespace gradiens::kernels::cpu
