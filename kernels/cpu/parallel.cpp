// The library-wide CPU thread count (OpenMP loops and large GEMMs).
#include "kernels/cpu/parallel.h"

#include <atomic>

namespace gradiens::kernels::cpu {
namespace {
int initial_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
std::atomic<int> thread_count{initial_threads()};
}  // namespace

int num_threads() { return thread_count.load(std::memory_order_relaxed); }
void set_num_threads(int n) { thread_count.store(n < 1 ? 1 : n, std::memory_order_relaxed); }

}  // namespace gradiens::kernels::cpu
