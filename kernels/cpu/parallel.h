// parallel_for over an index range with OpenMP, single-threaded below a grain
// size so small tensors never pay for a thread team.
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gradiens::kernels::cpu {

// Elementwise loops below this many elements run on one thread.
inline constexpr int64_t kElementwiseGrainSize = 32768;

int num_threads();
void set_num_threads(int n);

// f(begin, end) over disjoint chunks covering [begin, end).
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, F&& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
#ifdef _OPENMP
  int threads = num_threads();
  if (threads > 1 && n > grain_size && !omp_in_parallel()) {
    int64_t chunks = std::min<int64_t>(threads, (n + grain_size - 1) / grain_size);
#pragma omp parallel num_threads(static_cast<int>(chunks))
    {
      int64_t t = omp_get_thread_num();
      int64_t step = (n + chunks - 1) / chunks;
      int64_t lo = begin + t * step, hi = std::min(end, lo + step);
      if (lo < hi) f(lo, hi);
    }
    return;
  }
#endif
  f(begin, end);
}

}  // namespace gradiens::kernels::cpu
