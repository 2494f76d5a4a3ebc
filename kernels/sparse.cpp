// The sparse times dense product (kernels/sparse.h): the CPU loop, and the
// dispatch to its CUDA kernel.
#include "kernels/sparse.h"

#include <algorithm>

#include "kernels/cpu/parallel.h"
#include "kernels/cuda/indexing.h"
#include "kernels/error.h"

namespace gradiens::kernels {

void sparse_dense_mm(ScalarType dtype, const int64_t* row_start, const int64_t* col_of, const void* values,
                     int64_t nnz, const void* dense, int64_t rows, int64_t n, void* out, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::sparse_dense_mm(dtype, row_start, col_of, values, dense, rows, n, out, device.stream);
    return;
  }
  dispatch_floating(dtype, "sparse.mm", [&]<class T> {
    const T* v = static_cast<const T*>(values);
    const T* d = static_cast<const T*>(dense);
    T* o = static_cast<T*>(out);
    // Rows per thread: at least ~2^17 multiply-adds each, since a sparse row is
    // memory-bound and a thread team costs more than a small product.
    const int64_t work_per_row = std::max<int64_t>(1, n * std::max<int64_t>(1, nnz / std::max<int64_t>(1, rows)));
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 17) / work_per_row);
    cpu::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        T* orow = o + r * n;
        for (int64_t k = row_start[r]; k < row_start[r + 1]; ++k) {
          const T vk = v[k];
          const T* drow = d + col_of[k] * n;
          for (int64_t j = 0; j < n; ++j) orow[j] += vk * drow[j];
        }
      }
    });
  });
}

}  // namespace gradiens::kernels
