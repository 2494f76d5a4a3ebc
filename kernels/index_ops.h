// Device-neutral entry point of the reducing scatter along one dim, the kernel
// behind index_fill, index_copy, scatter_reduce and embedding_bag: a serial CPU
// loop, or kernels/cuda/index_ops.h (and indexing.h) on a cuda device.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels {

// How a scattered value meets the element it lands on.
enum class ScatterReduce : int8_t {
  Set,   // slot = value (with repeated targets the last write wins on the CPU)
  Sum,   // slot = slot + value
  Prod,  // slot = slot * value
  Max,   // slot = max(slot, value), NaN propagating
  Min,   // slot = min(slot, value), NaN propagating
};

// Over `shape`, every operand walked with its own element strides (dst's 0
// along the indexed dim, whose real stride is index_scale):
//   dst[i + index[i] * index_scale] = reduce(dst[...], src[i])
// index is int64, each value meant to lie in [0, index_limit). On the CPU a
// value outside is skipped and the first one met is returned (the engine words
// the error); on a cuda device the caller has checked them and nothing is
// returned. Set takes any dtype; the others numeric dtypes (float32, float64,
// int32 and int64 on a cuda device). `deterministic` makes Set and Sum on a
// cuda device do repeated targets in the CPU's order; Max and Min do not
// depend on the order, Prod of floats does (atomics, as PyTorch's).
std::optional<int64_t> index_scatter_reduce(ScatterReduce op, ScalarType dtype, IntArrayRef shape,
                                            const StridedRef& dst, const StridedRef& src, const StridedRef& index,
                                            int64_t index_scale, int64_t index_limit, bool deterministic,
                                            const DeviceRef& device);

}  // namespace gradiens::kernels
