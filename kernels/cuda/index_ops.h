// The CUDA kernel of the reducing scatters scatter_reduce needs beyond
// indexing.h's Set and Add: products, maxima and minima through atomic
// compare-and-swap. No CUDA headers here: engine code includes this file.
#pragma once

#include <cstdint>

#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {

enum class AtomicReduce { Prod, Max, Min };
// dst[i + index[i] * index_scale] = op(dst[...], src[i]) over `shape`, each
// operand at its own strided offset; float32, float64, int32 and int64. Max and
// Min propagate NaN; integer products wrap. The indices are trusted.
void index_scatter_atomic(AtomicReduce op, ScalarType dtype, const Shape& shape, const Strided& dst, const Strided& src,
                          const Strided& index, int64_t index_scale, StreamHandle stream);

}  // namespace gradiens::kernels::cuda
