// parallel_for over an index range with OpenMP, single-threaded below a grain
// size so small tensors never pay for a thread team.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>

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

// f(part, begin, end) for `parts` contiguous pieces of [0, count), at most one
// piece per thread at a time. The pieces depend on `parts` alone, not on how many
// threads OpenMP grants, so a caller that keeps one result per part and combines
// them in part order gets the same numbers however many it grants. parts == 1 runs on the
// calling thread. An exception thrown by f is rethrown here once every part ends.
template <class F>
void parallel_parts(int64_t count, int parts, F&& f) {
  parts = static_cast<int>(std::clamp<int64_t>(parts, 1, std::max<int64_t>(count, 1)));
  const auto piece = [&](int part, int64_t& lo, int64_t& hi) {
    lo = count * part / parts;
    hi = count * (part + 1) / parts;
  };
  if (parts == 1) {
    f(0, int64_t{0}, count);
    return;
  }
  std::exception_ptr error;
#ifdef _OPENMP
#pragma omp parallel num_threads(parts)
#endif
  {
#ifdef _OPENMP
    const int first = omp_get_thread_num(), stride = omp_get_num_threads();
#else
    const int first = 0, stride = 1;
#endif
    for (int part = first; part < parts; part += stride) {
      int64_t lo = 0, hi = 0;
      piece(part, lo, hi);
      try {
        f(part, lo, hi);
      } catch (...) {
#ifdef _OPENMP
#pragma omp critical(gradiens_parallel_parts_error)
#endif
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace gradiens::kernels::cpu
