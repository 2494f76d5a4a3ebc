// The CPU's loops of advanced indexing and of the indexed writes along one dim
// (kernels/indexing.h): strided iterators over (target, int64 index or offset,
// other), serial where two indices may name one element; whole-row copies and
// additions; nonzero.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "kernels/cpu/elementwise.h"
#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cpu {

// Remembers the first out-of-range index a (possibly parallel) loop meets, so
// it is reported after the loop rather than thrown from inside a thread team.
class BadIndex {
 public:
  void record(int64_t value) {
    bool expected = false;
    if (seen_.compare_exchange_strong(expected, true)) value_ = value;
  }
  std::optional<int64_t> first() const { return seen_.load() ? std::optional<int64_t>(value_) : std::nullopt; }

 private:
  std::atomic<bool> seen_{false};
  int64_t value_ = 0;
};

// Operands (offsets, index), both int64: offsets += (k < 0 ? k + size : k) *
// stride for each index k in [-size, size); the first k outside is returned.
std::optional<int64_t> add_index_offsets(const ElementwiseIterator& iter, int64_t size, int64_t stride);
// Operands (out, src, offsets): out = src[offsets].
void gather_at_offsets(ScalarType dtype, const ElementwiseIterator& iter);
// Operands (dst, values, offsets): dst[offsets] = values (+= with accumulate), serially.
void put_at_offsets(ScalarType dtype, const ElementwiseIterator& iter, bool accumulate);
// Operands (dst, index, src): dst[k * index_scale] = src for each index k in
// [0, index_limit), serially (the last write wins); the first k outside is returned.
std::optional<int64_t> scatter_along(ScalarType dtype, const ElementwiseIterator& iter, int64_t index_scale,
                                     int64_t index_limit);
// As scatter_along with dst[k * index_scale] += alpha * src, alpha and the
// product in opmath_t (numeric dtypes).
std::optional<int64_t> add_along(ScalarType dtype, const ElementwiseIterator& iter, int64_t index_scale,
                                 int64_t index_limit, const Number& alpha);

// kernels::gather_rows, add_rows, count_nonzero and nonzero_indices.
bool gather_rows(const void* src, int64_t rows, int64_t row_bytes, const int64_t* index, int64_t count, void* out);
std::optional<int64_t> add_rows(ScalarType dtype, void* dst, int64_t rows, const void* src, int64_t width,
                                const int64_t* index, int64_t count, const Number& alpha);
int64_t count_nonzero(ScalarType dtype, const void* in, int64_t n);
void nonzero_indices(ScalarType dtype, const void* in, IntArrayRef sizes, int64_t* out);

}  // namespace gradiens::kernels::cpu
