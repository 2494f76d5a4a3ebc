// set_num_threads / get_num_threads: one thread count for the elementwise and
// reduction loops, the OpenMP regions (random fills) and the large GEMMs.
#include "engine/functions.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gradiens {

void set_num_threads(int n) {
  GD_CHECK(n > 0, "set_num_threads expects a positive integer");
  kernels::cpu::set_num_threads(n);
  kernels::cpu::set_gemm_threads(n);
#ifdef _OPENMP
  // OpenMP keeps this per calling thread; it bounds the `omp parallel` regions
  // that do not ask kernels::cpu::num_threads() themselves.
  omp_set_num_threads(n);
#endif
}

int get_num_threads() { return kernels::cpu::num_threads(); }

}  // namespace gradiens
