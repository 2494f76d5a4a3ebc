// The CUDA kernels of the indexing family: gathers and scatters through int64
// index tensors (index, index_select, gather, index_put_, scatter, index_add,
// embedding), nonzero's compaction, the segmented sort behind sort/topk/
// kthvalue/median, and cumulative sums and products. No CUDA headers here:
// engine code includes this file. Index bounds are the engine's to check
// before a launch; the kernels trust every index they are given.
#pragma once

#include <cstdint>

#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {

// out[i] = src[i + index[i] * index_scale] over `shape`, where for each element
// the three operands are at their own strided offsets: the src operand's
// strides walk the dims not picked by the index (0 on the indexed dim) and the
// index (int64) supplies the rest. Any dtype.
void index_gather(ScalarType dtype, const Shape& shape, const Strided& out, const Strided& src, const Strided& index,
                  int64_t index_scale, StreamHandle stream);

enum class ScatterMode {
  Set,  // dst = src; with repeated targets one of the writes wins (the last one when deterministic)
  Add,  // dst = dst + alpha * src; float32, float64, int32 and int64
};
// dst[i + index[i] * index_scale] = src[i] (or += alpha * src[i]) over `shape`.
// deterministic: the writes to one element happen in the row-major order of
// `shape`, one after the other, as a serial CPU loop does them (the targets are
// sorted with CUB and each run of equal targets is done by one thread);
// otherwise Add uses atomicAdd and Set lets any write win. Scratch memory comes
// from `device`'s caching allocator.
void index_scatter(ScatterMode mode, ScalarType dtype, const Shape& shape, const Strided& dst, const Strided& src,
                   const Strided& index, int64_t index_scale, double alpha, bool deterministic, int device,
                   StreamHandle stream);

// nonzero, first step: writes the linear positions of the n contiguous
// elements of `in` that are nonzero (NaN counts as nonzero) to positions (room
// for n), in increasing order, and returns how many there are (a copy to the
// host: this call waits for the stream).
int64_t select_nonzero(ScalarType dtype, const void* in, int64_t n, int64_t* positions, int device,
                       StreamHandle stream);
// nonzero, second step: out (count x shape.ndim, row-major) = the multi-index
// of each linear position within the row-major `shape`.
void unravel_positions(const int64_t* positions, int64_t count, const Shape& shape, int64_t* out, StreamHandle stream);

// Sorts each of `lines` contiguous lines of `length` keys (float32, float64,
// uint8, int32 or int64) and writes, for each sorted place, the position of
// its key within the line (int64, lines x length). Stable: equal keys keep
// their order. NaN orders above every number (last ascending, first
// descending), and -0 equals +0, as the CPU's comparators do.
void sort_lines(ScalarType dtype, const void* keys, int64_t lines, int64_t length, bool descending,
                int64_t* positions, int device, StreamHandle stream);

// Inclusive cumulative sum (or product) along dimension `dim` of `shape`,
// one thread per line, accumulating as the CPU does: floating dtypes in
// double, integers in uint64 (wrapping); float32, float64, float16, bfloat16,
// uint8, int32 and int64.
void cumulative(bool product, ScalarType dtype, const Shape& shape, int dim, const Strided& out, const Strided& in,
                StreamHandle stream);

// out (rows x n, row-major) += S @ dense (row-major, n columns), S's entries in
// row order: row r holds entries row_start[r] .. row_start[r + 1], entry k at
// column col_of[k] with value values[k]; row_start and col_of are device
// memory. Each output element sums its entries in order, as the CPU does.
// float32/float64.
void sparse_dense_mm(ScalarType dtype, const int64_t* row_start, const int64_t* col_of, const void* values,
                     const void* dense, int64_t rows, int64_t n, void* out, StreamHandle stream);

}  // namespace gradiens::kernels::cuda
