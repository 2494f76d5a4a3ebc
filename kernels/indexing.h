// Device-neutral entry points of the indexed copies: along one dim (gather,
// scatter, scatter_add, index_select, index_add) and through the element
// offsets of advanced indexing (index, index_put_): a strided CPU loop, or
// kernels/cuda/indexing.h on a cuda device.
#pragma once

#include <cstdint>
#include <functional>
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

// As index_scatter_add, with the other writes along one dim:
//   index_scatter: dst[i + index[i] * index_scale] = src[i], any dtype; with
//                  repeated targets the last write wins (on a cuda device only
//                  when deterministic)
//   index_add:     dst[i + index[i] * index_scale] += alpha * src[i], numeric
//                  dtypes, alpha and the product in opmath_t (a cuda device:
//                  float32, float64, int32 and int64)
std::optional<int64_t> index_scatter(ScalarType dtype, IntArrayRef shape, const StridedRef& dst, const StridedRef& src,
                                     const StridedRef& index, int64_t index_scale, int64_t index_limit,
                                     bool deterministic, const DeviceRef& device);
std::optional<int64_t> index_add(ScalarType dtype, IntArrayRef shape, const StridedRef& dst, const StridedRef& src,
                                 const StridedRef& index, int64_t index_scale, int64_t index_limit,
                                 const Number& alpha, bool deterministic, const DeviceRef& device);

// Advanced indexing (engine/ops/advanced_indexing.cpp, Note [Advanced indexing
// layout]) over `shape`, with `offsets` the int64 element offsets into the
// indexed view, checked when they were built:
//   add_index_offsets: offsets += (k < 0 ? k + size : k) * stride for each
//                      int64 index k in [-size, size); the first k outside is
//                      returned. CPU only: a cuda device builds the offsets
//                      from tensor ops.
//   gather_at_offsets: out[i] = src[i + offsets[i]], any dtype
//   put_at_offsets:    dst[i + offsets[i]] = values[i] (+= with accumulate),
//                      any dtype; repeated targets are written in row-major
//                      order on the CPU (serially), and on a cuda device when
//                      deterministic (index_scatter)
std::optional<int64_t> add_index_offsets(IntArrayRef shape, const StridedRef& offsets, const StridedRef& index,
                                         int64_t size, int64_t stride, const DeviceRef& device);
void gather_at_offsets(ScalarType dtype, IntArrayRef shape, const StridedRef& out, const StridedRef& src,
                       const StridedRef& offsets, const DeviceRef& device);
void put_at_offsets(ScalarType dtype, IntArrayRef shape, const StridedRef& dst, const StridedRef& values,
                    const StridedRef& offsets, bool accumulate, bool deterministic, const DeviceRef& device);

// The CPU's fast paths over whole rows. CPU only: a cuda device takes the
// strided kernels above.
//   gather_rows:     out row i = src row index[i], for `count` int64 indices
//                    into `rows` contiguous rows of `row_bytes` bytes; false,
//                    having copied nothing, when an index lies outside [0, rows)
//   add_rows:        dst row index[i] += alpha * src row i (rows of `width`
//                    elements, numeric dtypes, alpha in opmath_t), in index
//                    order as index_add's loop; an index outside [0, rows) is
//                    skipped and the first one returned
bool gather_rows(const void* src, int64_t rows, int64_t row_bytes, const int64_t* index, int64_t count, void* out,
                 const DeviceRef& device);
std::optional<int64_t> add_rows(ScalarType dtype, void* dst, int64_t rows, const void* src, int64_t width,
                                const int64_t* index, int64_t count, const Number& alpha, const DeviceRef& device);

// nonzero: the multi-index within the row-major `sizes` of each nonzero element
// (NaN counts as nonzero) of the contiguous `in`, in order, written as
// count x ndim int64 to the buffer that `allocate(count)` returns on `device`.
// Only the host learns the count, so on a cuda device this waits for the stream
// (as PyTorch's nonzero does): the positions are compacted first, then
// unravelled into the buffer.
void nonzero_indices(ScalarType dtype, const void* in, IntArrayRef sizes,
                     const std::function<int64_t*(int64_t count)>& allocate, const DeviceRef& device);

}  // namespace gradiens::kernels
