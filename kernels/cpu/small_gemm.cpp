// Direct float64 GEMM for thin products: register tiles of C accumulated with FMAs
// straight from A and B as stored, compiled per SIMD target with Highway.

// Note [Small float64 GEMM]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A PINN's hidden layers are 20 to 64 wide: its products are [10000, 20] x
// [20, 20] or [8192, 64] x [64, 64] (forward and input gradients) and their
// [n, N] x [N, n] weight gradients. OpenBLAS packs A and B into its panel layout
// on every call; for these shapes the packing (dgemm_itcopy/oncopy/otcopy, plus
// a memset of C) took a third of dgemm's time in the PINN profiles. Here C is cut
// into column panels of at most four vectors (32 columns with AVX-512), and a
// tile of MR rows of a panel stays in registers while the kernel walks the
// reduction index p: per p it loads the panel's B row and broadcasts MR elements
// of op(A). A panel's last columns go in a half-width vector when they fit in
// one (20 = 8 + 8 + 4 with AVX-512): on CPUs that execute a 512-bit FMA as two
// 256-bit halves (AMD Zen 4) that costs half a masked full vector, and no more
// elsewhere; two rows share one when it is exactly half full (Note [Paired
// tails]). Neither operand is copied, except a transposed B, which is small
// here (k <= 64) and packed once on the stack. Long reductions (k large, m <= 64:
// weight gradients) are summed in chunks of kChunk (256) reduction rows, each
// added to C when done, and the tiles of C pass over a chunk in passes of at
// most kPass (64) rows, so that a pass's rows of A and B stay in L1: a pass that
// ends inside its chunk leaves its accumulators in a buffer of partial sums, from
// which the next pass goes on with the same FMA chain. The passes change the
// speed, not the rounding: on Zen 5 the Taylor Poisson block's [64, 126] x
// [126, 64] weight gradient went from 86 to 103-113 GFLOP/s (a single pass over
// the chunk ran it out of L2).
//
// Note [Passes in L1]
// ~~~~~~~~~~~~~~~~~~~
// A row block's tiles read, per reduction row, the block's kRowBlock elements of
// op(A) and the whole row of B: (kRowBlock + n) doubles. A pass is the most rows,
// halving from kPass, whose share fits in the core's L1 data cache (sysconf). At
// n = 64 that is 64 rows (40 KiB) in Zen 5's 48 KiB L1, and 32 in the 32 KiB L1 of
// Zen 3 and most AVX2 cores, where 64 rows ran out of L1: on Zen 3 the [64, 8192] x
// [8192, 64] weight gradient went from 22-23 to 27-28 GFLOP/s and [64, 126] x
// [126, 64] from 26-31 to 29-36; 20-wide products keep 64 rows (18 KiB), as 32
// ran them 3-20% slower.
//
// Note [Paired tails]
// ~~~~~~~~~~~~~~~~~~~
// A half-width tail costs a full FMA slot on cores whose FMA units are 512 bits
// wide (Zen 5, Intel's AVX-512 cores): 20 = 8 + 8 + 4 columns issue 12 FMAs per
// reduction step of a 4-row tile for 10 vectors' work. When the tail fills its
// half vector exactly and the tile has an even number of rows, rows 2h and 2h + 1
// share one accumulator instead: lower half row 2h's tail, upper half row
// 2h + 1's, the B row's tail loaded into both halves and the two rows' A elements
// joined in one vector. Each C element is still one FMA chain over p in order,
// so results are bit for bit those of separate tails. On Zen 5 the [10000, 20] x
// [20, 20] products went from 92-95 to 100-109 GFLOP/s and the Taylor Burgers
// block's [404, 20] ones from 91-96 to 109-114: pinn_burgers_taylor_f64 -6%,
// pinn_burgers_f64 -5%. Remainder tiles (fewer rows than a tile) keep a tail per row.
//
// Note [Prefetching streamed operands]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// In a training step the weight gradient's operands are a gradient just made and
// an activation saved in the forward pass, long gone from the caches: the
// [20, 10000] x [10000, 20] products of the Burgers PINN ran at 47 GFLOP/s inside
// the step against 86 on warm operands, the hardware prefetchers not keeping
// ahead of two interleaved row streams. When a long reduction's operands exceed
// kStreamedBytes, the first tile of each row block fetches the rows kPrefetchRows
// ahead of the one it reads (66 GFLOP/s in the step; pinn_burgers_f64 -8%,
// pinn_poisson5d_f64 -5% on Zen 5). Likewise a large C that is read back
// (beta != 0: the engine's accumulating input gradients) is fetched a few row
// blocks ahead. Operands that fit in L2 (the Taylor engine's sample blocks) are
// not prefetched: there it only cost time.
//
// Summation order: each C element is one FMA chain over p in order per chunk of
// kChunk reduction rows (k <= 64: one chunk); the first chunk's sum s gives
// fma(beta, C, alpha s) (alpha s alone when beta == 0), each later one C plus
// alpha s rounded. As in OpenBLAS's kernel for k within a block, so results
// agree with it to rounding; a kernel test holds it to this order bit for bit.
// Only AVX2 and AVX-512 copies are used: they have masked loads that do not touch
// memory past the last column. Other CPUs keep OpenBLAS (small_gemm_applies).

#include "kernels/cpu/small_gemm.h"

#include <unistd.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/gemm.h"
#include "kernels/error.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/small_gemm.cpp"
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)  // Note [Compiled SIMD targets]
#include "hwy/foreach_target.h"  // must come before highway.h

#include "hwy/highway.h"
#include "kernels/cpu/rounding-inl.h"
#include "hwy/cache_control.h"

#ifndef GRADIENS_SMALL_GEMM_OPERANDS
#define GRADIENS_SMALL_GEMM_OPERANDS
namespace gradiens::kernels::cpu {
namespace {
// op(A)[i, p] = a[i * a_row + p * a_col]; op(B)[p, j] = b[p * ldb + j].
struct SmallGemmOperands {
  const double* a;
  int64_t a_row, a_col;
  const double* b;
  int64_t ldb;
  double* c;
  int64_t ldc;
  int64_t n, k;
  double alpha, beta;
  const double* bias = nullptr;  // n values added to every row of the result (k within one chunk)
  // Note [Prefetching streamed operands]: a long reduction's A and B, or a C read
  // back (beta != 0), larger than kStreamedBytes.
  bool stream_reduction = false, stream_c = false;
  // The current pass over the tiles and its rounding chunk (Note [Small float64 GEMM]):
  bool first_chunk = true;     // the chunk is the first: beta applies
  bool resume = false;         // the accumulators start from `partial`, not zero
  bool suspend = false;        // the accumulators go to `partial`: the chunk goes on in the next pass
  double* partial = nullptr;   // [m, n] (row length n): the chunk's sums so far
};
constexpr int64_t kChunk = 256;       // reduction rows summed before they reach C (Note [Small float64 GEMM])
constexpr int64_t kPass = 64;         // reduction rows per pass over the tiles (Note [Small float64 GEMM])
constexpr int64_t kMaxShortK = 64;    // k up to which any m is handled
constexpr int64_t kMaxLongM = 64;     // m up to which any k is handled
constexpr int64_t kRowBlock = 16;     // rows of C that pass over every column panel in turn
constexpr int64_t kLineDoubles = 8;   // doubles per 64-byte cache line
constexpr int64_t kPrefetchRows = 64; // rows ahead a streamed operand is fetched (Note [Prefetching streamed operands])
constexpr int64_t kStreamedBytes = int64_t{512} << 10;  // operands larger than this come from beyond L2
constexpr int64_t kMinThreadedLongFlops = int64_t{4} << 20;  // a long reduction worth a second thread
constexpr int64_t kMinLongRowsPerThread = 8;

// Reduction rows per pass of a long reduction with n columns (Note [Passes in L1]).
int64_t long_pass_rows(int64_t n) {
  static const int64_t l1_bytes = [] {
    const long reported = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return reported > 0 ? static_cast<int64_t>(reported) : int64_t{32} << 10;
  }();
  const int64_t bytes_per_row = (kRowBlock + n) * static_cast<int64_t>(sizeof(double));
  int64_t rows = kPass;
  while (rows > 8 && rows * bytes_per_row > l1_bytes) rows /= 2;
  return rows;
}
}  // namespace
}  // namespace gradiens::kernels::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace gradiens::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
constexpr bool kSmallGemmTarget = true;
#else
constexpr bool kSmallGemmTarget = false;
#endif

// How a panel's last columns are held (Note [Small float64 GEMM]): none left,
// a half-width vector, a half-width vector shared by two rows (Note [Paired
// tails]), or a full-width masked vector.
enum class Tail { kNone, kHalf, kPaired, kFull };

// Accumulator registers: AVX-512 has 32 vector registers, AVX2 16; keep one per
// vector of the B row, one for the broadcast and the rest for the tile. At most 4
// rows: with more, GCC keeps the accumulator array on the stack (a store and a
// load per FMA) and the kernel runs at 28 GFLOP/s instead of 70 ([10000,20] x [20,20]).
template <int Vectors>
constexpr int rows_per_tile() {
  constexpr int registers = HWY_TARGET == HWY_AVX3 ? 32 : 16;
  return std::clamp((registers - Vectors - 2) / Vectors, 1, 4);
}

// Vectors per column panel: four on AVX-512 (32 columns), three on AVX2.
constexpr int kPanelVectors = HWY_TARGET == HWY_AVX3 ? 4 : 3;

// Paired tails' vector moves (Note [Paired tails]); only the targets that run
// the kernel have them, the others keep stand-ins that are never called.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
// The half vectors at `lower` and `upper` as one vector's lower and upper halves.
template <class D>
HWY_INLINE hn::Vec<D> load_halves(D d, const double* lower, const double* upper) {
  const hn::Half<D> dh;
  return hn::Combine(d, hn::LoadU(dh, upper), hn::LoadU(dh, lower));
}
// The lower half of `lower` and the upper half of `upper`.
template <class D, class V>
HWY_INLINE V join_halves(D d, V lower, V upper) {
  return hn::ConcatUpperLower(d, upper, lower);
}
// The lower half to `lower`, the upper half to `upper`.
template <class D, class V>
HWY_INLINE void store_halves(D d, V value, double* lower, double* upper) {
  const hn::Half<D> dh;
  hn::StoreU(hn::LowerHalf(dh, value), dh, lower);
  hn::StoreU(hn::UpperHalf(dh, value), dh, upper);
}
#else
template <class D>
HWY_INLINE hn::Vec<D> load_halves(D d, const double*, const double*) {
  return hn::Zero(d);
}
template <class D, class V>
HWY_INLINE V join_halves(D, V lower, V) {
  return lower;
}
template <class D, class V>
HWY_INLINE void store_halves(D, V, double*, double*) {}
#endif

// Rows [i0, i0 + MR) and columns [j0, j0 + NV * lanes + tail) of C over the
// reduction rows [p0, p1), one pass (Note [Small float64 GEMM]). The pass that
// ends a chunk writes C: the first chunk applies beta (reading C only when
// beta != 0), later chunks add to C.
// CHUNKED: a long reduction, whose pass may resume or suspend its chunk in `partial`.
// PREFETCH: also fetch the rows of A and B kPrefetchRows ahead
// (Note [Prefetching streamed operands]).
template <int MR, int NV, Tail TAIL, bool CHUNKED, bool PREFETCH = false>
HWY_INLINE void tile(const SmallGemmOperands& o, int64_t i0, int64_t j0, int64_t tail, int64_t p0, int64_t p1) {
  const hn::ScalableTag<double> d;
  const hn::Half<decltype(d)> dh;
  using V = hn::Vec<decltype(d)>;
  using VH = hn::Vec<decltype(dh)>;
  // The tail's vector type: the half vector, or the full one (a paired tail holds two rows' halves).
  using DT = std::conditional_t<TAIL == Tail::kHalf, hn::Half<decltype(d)>, hn::ScalableTag<double>>;
  using VT = hn::Vec<DT>;
  static_assert(TAIL != Tail::kHalf || std::is_same_v<VT, VH>);
  const DT dt;
  constexpr bool kHasTail = TAIL != Tail::kNone;
  constexpr bool kPairedTail = TAIL == Tail::kPaired;  // rows 2h and 2h + 1 share acc_tail[h]
  constexpr bool kRowTail = kHasTail && !kPairedTail;
  static_assert(!kPairedTail || MR % 2 == 0, "paired tails need an even number of rows");
  constexpr int kFull = NV > 0 ? NV : 1;  // array extents must be positive
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto tail_mask = hn::FirstN(dt, static_cast<size_t>(kHasTail ? tail : 0));
  // A tail that fills its (half) vector takes plain loads and stores: AVX-512
  // masked ones cost Zen cores far more, even with every lane on.
  const bool whole_tail = kHasTail && tail == static_cast<int64_t>(hn::Lanes(dt));
  V acc[MR][kFull];
  VT acc_tail[kPairedTail ? MR / 2 : MR];
  // A pass that resumes its chunk starts from the sums the previous one left.
  const auto partial_at = [&](int r) { return o.partial + (i0 + r) * o.n + j0; };
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
    if constexpr (kRowTail) acc_tail[r] = hn::Zero(dt);
    if constexpr (kPairedTail) acc_tail[r / 2] = hn::Zero(dt);
  }
  if (CHUNKED && o.resume) {
    for (int r = 0; r < MR; ++r) {
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::LoadU(d, partial_at(r) + v * lanes);
      if constexpr (kRowTail) {
        double* tail_ptr = partial_at(r) + NV * lanes;
        acc_tail[r] = whole_tail ? hn::LoadU(dt, tail_ptr) : hn::MaskedLoad(tail_mask, dt, tail_ptr);
      }
      if constexpr (kPairedTail)
        if (r % 2 == 0) acc_tail[r / 2] = load_halves(d, partial_at(r) + NV * lanes, partial_at(r + 1) + NV * lanes);
    }
  }
  const double* a_tile = o.a + i0 * o.a_row;
  const double* b_panel = o.b + j0;
  for (int64_t p = p0; p < p1; ++p) {
    const double* b_row = b_panel + p * o.ldb;
    if constexpr (PREFETCH) {
      for (int64_t j = 0; j < NV * lanes + (kHasTail ? tail : 0); j += kLineDoubles)
        hwy::Prefetch(b_row + kPrefetchRows * o.ldb + j);
      for (int64_t x = 0; x < kRowBlock; x += kLineDoubles)
        hwy::Prefetch(a_tile + (p + kPrefetchRows) * o.a_col + x * o.a_row);
    }
    V b_vec[kFull];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) b_vec[v] = hn::LoadU(d, b_row + v * lanes);
    VT b_tail;
    if constexpr (kRowTail)
      b_tail = whole_tail ? hn::LoadU(dt, b_row + NV * lanes) : hn::MaskedLoad(tail_mask, dt, b_row + NV * lanes);
    if constexpr (kPairedTail)  // the B row's last half vector in both halves
      b_tail = load_halves(d, b_row + NV * lanes, b_row + NV * lanes);
    const double* a_p = a_tile + p * o.a_col;
    V a_previous = hn::Zero(d);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const double a_value = a_p[r * o.a_row];
      const V a_vec = hn::Set(d, a_value);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(a_vec, b_vec[v], acc[r][v]);
      if constexpr (TAIL == Tail::kHalf) acc_tail[r] = hn::MulAdd(hn::LowerHalf(dh, a_vec), b_tail, acc_tail[r]);
      if constexpr (TAIL == Tail::kFull) acc_tail[r] = hn::MulAdd(a_vec, b_tail, acc_tail[r]);
      if constexpr (kPairedTail) {  // lower half row r - 1's element, upper half row r's
        if (r % 2 == 1)
          acc_tail[r / 2] = hn::MulAdd(join_halves(d, a_previous, a_vec), b_tail, acc_tail[r / 2]);
        a_previous = a_vec;
      }
    }
  }
  if (CHUNKED && o.suspend) {  // the chunk goes on: keep its sums as they are
    for (int r = 0; r < MR; ++r) {
      for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, partial_at(r) + v * lanes);
      if constexpr (kRowTail) {
        if (whole_tail) hn::StoreU(acc_tail[r], dt, partial_at(r) + NV * lanes);
        else hn::BlendedStore(acc_tail[r], tail_mask, dt, partial_at(r) + NV * lanes);
      }
      if constexpr (kPairedTail)
        if (r % 2 == 0) store_halves(d, acc_tail[r / 2], partial_at(r) + NV * lanes, partial_at(r + 1) + NV * lanes);
    }
    return;
  }
  const bool first_chunk = o.first_chunk;
  const bool read_c = !first_chunk || o.beta != 0.0;
  // result = alpha * acc (+ beta * old on the first chunk, + old on later ones).
  // result = alpha * acc (+ beta * old on the first chunk, + old on later ones,
  // rounded before the add: Note [Accumulating outputs round twice]).
  auto finish = [&](auto tag, auto sum, auto old) {
    auto result = hn::Mul(hn::Set(tag, o.alpha), sum);
    if (!read_c) return result;
    if (first_chunk) return hn::MulAdd(hn::Set(tag, o.beta), old, result);
    result.raw = rounded(result.raw);
    return hn::Add(old, result);
  };
  if (o.bias) {  // + bias, after the product's rounding as a separate add (beta == 0, one chunk)
    const double* bias = o.bias + j0;
    for (int r = 0; r < MR; ++r) {
      double* c_row = o.c + (i0 + r) * o.ldc + j0;
      for (int v = 0; v < NV; ++v)
        hn::StoreU(hn::Add(finish(d, acc[r][v], hn::Zero(d)), hn::LoadU(d, bias + v * lanes)), d,
                   c_row + v * lanes);
      if constexpr (kRowTail) {
        if (whole_tail) {
          hn::StoreU(hn::Add(finish(dt, acc_tail[r], hn::Zero(dt)), hn::LoadU(dt, bias + NV * lanes)), dt,
                     c_row + NV * lanes);
        } else {
          const VT tail_bias = hn::MaskedLoad(tail_mask, dt, bias + NV * lanes);
          hn::BlendedStore(hn::Add(finish(dt, acc_tail[r], hn::Zero(dt)), tail_bias), tail_mask, dt,
                           c_row + NV * lanes);
        }
      }
    }
    if constexpr (kPairedTail) {
      const V tail_bias = load_halves(d, bias + NV * lanes, bias + NV * lanes);
      for (int h = 0; h < MR / 2; ++h) {
        double* c_ptr = o.c + (i0 + 2 * h) * o.ldc + j0 + NV * lanes;
        store_halves(d, hn::Add(finish(d, acc_tail[h], hn::Zero(d)), tail_bias), c_ptr, c_ptr + o.ldc);
      }
    }
    return;
  }
  for (int r = 0; r < MR; ++r) {
    double* c_row = o.c + (i0 + r) * o.ldc + j0;
    for (int v = 0; v < NV; ++v) {
      double* c_ptr = c_row + v * lanes;
      hn::StoreU(finish(d, acc[r][v], read_c ? hn::LoadU(d, c_ptr) : hn::Zero(d)), d, c_ptr);
    }
    if constexpr (kRowTail) {
      double* c_ptr = c_row + NV * lanes;
      if (whole_tail) {
        hn::StoreU(finish(dt, acc_tail[r], read_c ? hn::LoadU(dt, c_ptr) : hn::Zero(dt)), dt, c_ptr);
      } else {
        const VT old = read_c ? hn::MaskedLoad(tail_mask, dt, c_ptr) : hn::Zero(dt);
        hn::BlendedStore(finish(dt, acc_tail[r], old), tail_mask, dt, c_ptr);
      }
    }
  }
  if constexpr (kPairedTail) {
    for (int h = 0; h < MR / 2; ++h) {
      double* c_ptr = o.c + (i0 + 2 * h) * o.ldc + j0 + NV * lanes;
      const V old = read_c ? load_halves(d, c_ptr, c_ptr + o.ldc) : hn::Zero(d);
      store_halves(d, finish(d, acc_tail[h], old), c_ptr, c_ptr + o.ldc);
    }
  }
}

template <int NV, Tail TAIL, bool CHUNKED, int MR = rows_per_tile<NV + (TAIL != Tail::kNone ? 1 : 0)>()>
HWY_INLINE void remainder_tile(const SmallGemmOperands& o, int64_t i0, int64_t rows, int64_t j0, int64_t tail,
                               int64_t p0, int64_t p1) {
  if constexpr (MR > 1) {
    if (rows == MR - 1) return tile<MR - 1, NV, TAIL, CHUNKED>(o, i0, j0, tail, p0, p1);
    return remainder_tile<NV, TAIL, CHUNKED, MR - 1>(o, i0, rows, j0, tail, p0, p1);
  }
}

template <int NV, Tail TAIL, bool CHUNKED>
void panel_tiles(const SmallGemmOperands& o, int64_t i_begin, int64_t i_end, int64_t j0, int64_t tail, int64_t p0,
                 int64_t p1) {
  constexpr int MR = rows_per_tile<NV + (TAIL != Tail::kNone ? 1 : 0)>();
  int64_t i = i_begin;
  // Streamed operands: the row block's first tile fetches ahead for all of them.
  if constexpr (CHUNKED) {
    if (o.stream_reduction && i + MR <= i_end) {
      tile<MR, NV, TAIL, CHUNKED, true>(o, i, j0, tail, p0, p1);
      i += MR;
    }
  }
  const int64_t panel_width = NV * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<double>())) + tail;
  for (; i + MR <= i_end; i += MR) {
    if constexpr (CHUNKED) {
      if (o.resume)  // the next tile's sums so far, to L1 while this one runs (its loads start the FMA chains)
        for (int64_t r = i + MR; r < std::min(i_end, i + 2 * MR); ++r)
          for (int64_t x = 0; x < panel_width; x += kLineDoubles) hwy::Prefetch(o.partial + r * o.n + j0 + x);
    }
    tile<MR, NV, TAIL, CHUNKED>(o, i, j0, tail, p0, p1);
  }
  // Remainder tiles hold a tail per row.
  constexpr Tail kRemainderTail = TAIL == Tail::kPaired ? Tail::kHalf : TAIL;
  if (i < i_end) remainder_tile<NV, kRemainderTail, CHUNKED>(o, i, i_end - i, j0, tail, p0, p1);
}

// One column panel of rows [i_begin, i_end) of C over the reduction rows [p0, p1).
template <int NV, Tail TAIL>
void panel(const SmallGemmOperands& o, int64_t i_begin, int64_t i_end, int64_t j0, int64_t tail, int64_t p0,
           int64_t p1) {
  if (o.k > kMaxShortK) return panel_tiles<NV, TAIL, true>(o, i_begin, i_end, j0, tail, p0, p1);
  panel_tiles<NV, TAIL, false>(o, i_begin, i_end, j0, tail, p0, p1);
}

// The panel kernel for `width` columns (at most kPanelVectors vectors, counting a tail).
template <int NV = 0>
void panel_for_width(const SmallGemmOperands& o, int64_t i_begin, int64_t i_end, int64_t j0, int64_t width,
                     int64_t p0, int64_t p1) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<double>()));
  if constexpr (NV <= kPanelVectors) {
    if (width / lanes == NV) {
      const int64_t tail = width - NV * lanes;
      if (tail == 0) {
        if constexpr (NV > 0) return panel<NV, Tail::kNone>(o, i_begin, i_end, j0, tail, p0, p1);
      } else if constexpr (NV < kPanelVectors) {
        if constexpr (kSmallGemmTarget && rows_per_tile<NV + 1>() % 2 == 0)
          if (2 * tail == lanes) return panel<NV, Tail::kPaired>(o, i_begin, i_end, j0, tail, p0, p1);
        if (2 * tail <= lanes) return panel<NV, Tail::kHalf>(o, i_begin, i_end, j0, tail, p0, p1);
        return panel<NV, Tail::kFull>(o, i_begin, i_end, j0, tail, p0, p1);
      }
      GD_INTERNAL_ASSERT(false, "small_gemm: a panel of an unsupported width");
      return;
    }
    return panel_for_width<NV + 1>(o, i_begin, i_end, j0, width, p0, p1);
  }
  GD_INTERNAL_ASSERT(false, "small_gemm: a panel wider than kPanelVectors vectors");
}

// Rows [i_begin, i_end) of C: reduction chunks outermost, then row blocks that
// pass over every column panel while their rows of A are in L1.
void rows_of_c(const SmallGemmOperands& o, int64_t i_begin, int64_t i_end) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<double>()));
  const int64_t panel_cols = kPanelVectors * lanes;
  const int64_t chunk = o.k <= kMaxShortK ? o.k : kChunk;
  const int64_t pass_rows = o.k <= kMaxShortK ? o.k : long_pass_rows(o.n);
  for (int64_t p0 = 0; p0 < o.k; p0 += chunk) {
    const int64_t p1 = std::min(o.k, p0 + chunk);
    for (int64_t q0 = p0; q0 < p1; q0 += pass_rows) {
      const int64_t q1 = std::min(p1, q0 + pass_rows);
      SmallGemmOperands pass = o;
      pass.first_chunk = p0 == 0;
      pass.resume = q0 > p0;
      pass.suspend = q1 < p1;
      for (int64_t i0 = i_begin; i0 < i_end; i0 += kRowBlock) {
        const int64_t i1 = std::min(i_end, i0 + kRowBlock);
        if (o.stream_c)  // Note [Prefetching streamed operands]
          for (int64_t i = i0 + kPrefetchRows / 2; i < std::min(i_end, i0 + kPrefetchRows / 2 + kRowBlock); ++i)
            for (int64_t j = 0; j < o.n; j += kLineDoubles) hwy::Prefetch(o.c + i * o.ldc + j);
        for (int64_t j0 = 0; j0 < o.n; j0 += panel_cols)
          panel_for_width(pass, i0, i1, j0, std::min(panel_cols, o.n - j0), q0, q1);
      }
    }
  }
}

bool small_gemm_on_target() { return kSmallGemmTarget; }

void small_gemm_rows(const SmallGemmOperands& o, int64_t i_begin, int64_t i_end) {
  if constexpr (kSmallGemmTarget) return rows_of_c(o, i_begin, i_end);
  GD_INTERNAL_ASSERT(false, "small_gemm: called for an unsupported target");
}

}  // namespace HWY_NAMESPACE
}  // namespace gradiens::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gradiens::kernels::cpu {

HWY_EXPORT(small_gemm_on_target);
HWY_EXPORT(small_gemm_rows);

bool small_gemm_applies(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k) {
  (void)trans_a;
  static const bool supported = HWY_DYNAMIC_DISPATCH(small_gemm_on_target)();
  if (!supported || n < 1 || n > kSmallGemmMaxN || k < 1 || m < 1) return false;
  return k <= kMaxShortK || (m <= kMaxLongM && !trans_b);
}

bool small_gemm_bias_applies(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k) {
  return small_gemm_applies(trans_a, trans_b, m, n, k) && k <= kMaxShortK;
}

void small_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                double* c, int64_t ldc, const double* bias) {
  GD_INTERNAL_ASSERT(small_gemm_applies(trans_a, trans_b, m, n, k),
                     "small_gemm: called for a shape it does not handle");
  GD_INTERNAL_ASSERT(bias == nullptr || (k <= kMaxShortK && beta == 0.0),
                     "small_gemm: a bias needs one reduction chunk and beta == 0");
  SmallGemmOperands o{a, trans_a ? 1 : lda, trans_a ? lda : 1, b, ldb, c, ldc, n, k, alpha, beta, bias};
  o.stream_reduction = k > kMaxShortK && k * (m + n) * int64_t{sizeof(double)} > kStreamedBytes;
  o.stream_c = beta != 0.0 && k <= kMaxShortK && m * n * int64_t{sizeof(double)} > kStreamedBytes;
  double packed_b[kMaxShortK * kSmallGemmMaxN];
  // A long reduction's chunk sums between passes, [m, n]; the threads of a split product keep to their rows.
  thread_local double partial[kMaxLongM * kSmallGemmMaxN];
  if (k > kMaxShortK) o.partial = partial;
  if (trans_b) {  // op(B)[p, j] = B[j, p]: make the rows of op(B) contiguous
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) packed_b[p * n + j] = b[j * ldb + p];
    o.b = packed_b;
    o.ldb = n;
  }
  // Tall products split their rows over gemm_threads(), and so do long reductions
  // of kMinThreadedLongFlops or more, kMinLongRowsPerThread rows or more a thread:
  // each row of C is the same FMA chains whichever thread runs it (Note [Small
  // float64 GEMM]), and each reads all of B. A product inside a parallel region
  // (the Taylor engine's sample blocks) stays on its thread.
  int64_t chunks = 1;
  if (k <= kMaxShortK) {
    chunks = std::min<int64_t>(gemm_threads(), m / std::max<int64_t>(256, (int64_t{1} << 18) / (n * k)));
  } else if (2 * m * n * k >= kMinThreadedLongFlops) {
    chunks = std::min<int64_t>(gemm_threads(), m / kMinLongRowsPerThread);
  }
#ifdef _OPENMP
  if (omp_in_parallel()) chunks = 1;
#endif
  if (chunks > 1) {
    const int64_t step = (m + chunks - 1) / chunks;
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
    for (int64_t t = 0; t < chunks; ++t)
      HWY_DYNAMIC_DISPATCH(small_gemm_rows)(o, t * step, std::min(m, (t + 1) * step));
  } else {
    HWY_DYNAMIC_DISPATCH(small_gemm_rows)(o, 0, m);
  }
}

}  // namespace gradiens::kernels::cpu
#endif  // HWY_ONCE
