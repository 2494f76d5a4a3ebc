// Device-neutral entry points of the indexed copies along one dim (gather and
// scatter_add): a strided CPU loop, or kernels/cuda/indexing.h on a cuda device.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels {

// Over `shape`, every operand walked with its own element strides (src's, or
// dst's, 0 along the indexed dim, whose real stride is index_scale):
//   index_gather:      out[i] = src[i + index[i] * index_scale], any dtype
//   index_scatter_add: dst[i + index[i] * index_scale] += src[i], numeric dtypes
// index is int64, each value meant to lie in [0, index_limit). On the CPU a value
// outside is skipped and the first one met is returned (the engine words the
// error); on a cuda device the caller has checked them (a kernel cannot throw)
// and nothing is returned. `deterministic` orders scatter_add's repeated targets
// on a cuda device (the CPU loop is serial).
std::optional<int64_t> index_gather(ScalarType dtype, IntArrayRef shape, const StridedRef& out, const StridedRef& src,
                                    const StridedRef& index, int64_t index_scale, int64_t index_limit,
                                    const DeviceRef& device);
std::optional<int64_t> index_scatter_add(ScalarType dtype, IntArrayRef shape, const StridedRef& dst,
                                         const StridedRef& src, const StridedRef& index, int64_t index_scale,
                                         int64_t index_limit, bool deterministic, const DeviceRef& device);

}  // namespace gradiens::kernels
