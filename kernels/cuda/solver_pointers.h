// The device arrays of matrix pointers that the batched cuBLAS and cuSOLVER
// routines take (kernels/cuda/solver.cpp). Needs no CUDA headers.
#pragma once

#include <cstdint>

#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda::solver {

// pointers[b] = base + b * stride_bytes for b in [0, batch), written by a kernel
// on `stream` into `pointers` (device memory of batch entries). batch >= 1.
void fill_matrix_pointers(void** pointers, void* base, int64_t stride_bytes, int64_t batch, StreamHandle stream);

}  // namespace gradiens::kernels::cuda::solver
