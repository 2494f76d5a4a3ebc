// Device-neutral entry point of the sparse (COO, rows sorted) times dense product.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// out (rows x n, row-major, zeroed) += S @ dense (row-major, n columns), S's
// entries k in row order: row r holds entries row_start[r] .. row_start[r + 1],
// entry k at column col_of[k] with value values[k]. Each output row is summed by
// one thread in entry order, so the result does not depend on the thread count.
// float32/float64. On a CUDA device every pointer is device memory.
void sparse_dense_mm(ScalarType dtype, const int64_t* row_start, const int64_t* col_of, const void* values,
                     int64_t nnz, const void* dense, int64_t rows, int64_t n, void* out, const DeviceRef& device);

}  // namespace gradiens::kernels
