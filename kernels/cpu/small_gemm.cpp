// Direct float64 GEMM for thin products: register tiles of C accumulated with FMAs
// straight from A and B as stored, compiled per SIMD target with Highway.

// Note [Small float64 GEMM]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A PINN's hidden layers are 20 wide: its products are [10000, 20] x [20, 20]
// (forward and input gradients) and [20, 10000] x [10000, 20] (weight gradients).
// OpenBLAS packs A and B into its panel layout on every call; for these shapes
// the packing (dgemm_itcopy/oncopy/otcopy, plus a memset of C) took a third of
// dgemm's time in the pinn_burgers_f64 profile. With n <= 32 a whole row of C is
// at most four AVX-512 vectors, so a tile of MR rows of C stays in registers
// while the kernel walks the reduction index p: per p it loads the B row (NV
// vectors, the last one masked) and broadcasts MR elements of op(A). Neither
// operand is copied, except a transposed B, which is small here (k <= 64) and
// packed once on the stack. Long reductions (k large, m <= 32: weight gradients)
// are cut into chunks of kChunk rows so that A's and B's chunk stay in L2 while
// every tile of C passes over them.
// Summation order: each C element is one FMA chain over p in order (then scaled
// by alpha and added to beta * C), as in OpenBLAS's kernel for k within a block,
// so results agree with it to rounding.
// Only AVX2 and AVX-512 copies are used: they have masked loads that do not touch
// memory past the last column. Other CPUs keep OpenBLAS (small_gemm_applies).

#include "kernels/cpu/small_gemm.h"

#include <algorithm>

#include "kernels/cpu/gemm.h"
#include "kernels/error.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/small_gemm.cpp"
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)  // Note [Compiled SIMD targets]
#include "hwy/foreach_target.h"  // must come before highway.h

#include "hwy/highway.h"

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
};
constexpr int64_t kChunk = 256;       // reduction rows per pass (Note [Small float64 GEMM])
constexpr int64_t kMaxShortK = 64;    // k up to which any m is handled
constexpr int64_t kMaxLongM = 32;     // m up to which any k is handled
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

// Rows [i0, i0 + MR) of C over the reduction rows [p0, p1). The first chunk
// applies beta (reading C only when beta != 0); later chunks add to C.
template <int MR, int NV>
HWY_INLINE void tile(const SmallGemmOperands& o, int64_t i0, int64_t p0, int64_t p1, bool first_chunk) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto last_mask = hn::FirstN(d, static_cast<size_t>(o.n - (NV - 1) * lanes));
  V acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
  const double* a_tile = o.a + i0 * o.a_row;
  for (int64_t p = p0; p < p1; ++p) {
    const double* b_row = o.b + p * o.ldb;
    V b_vec[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV - 1; ++v) b_vec[v] = hn::LoadU(d, b_row + v * lanes);
    b_vec[NV - 1] = hn::MaskedLoad(last_mask, d, b_row + (NV - 1) * lanes);
    const double* a_p = a_tile + p * o.a_col;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const V a_vec = hn::Set(d, a_p[r * o.a_row]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(a_vec, b_vec[v], acc[r][v]);
    }
  }
  const V alpha = hn::Set(d, o.alpha);
  const V beta = hn::Set(d, o.beta);
  const bool read_c = !first_chunk || o.beta != 0.0;
  for (int r = 0; r < MR; ++r) {
    double* c_row = o.c + (i0 + r) * o.ldc;
    for (int v = 0; v < NV; ++v) {
      double* c_ptr = c_row + v * lanes;
      const bool last = v == NV - 1;
      V result = hn::Mul(alpha, acc[r][v]);
      if (read_c) {
        const V old = last ? hn::MaskedLoad(last_mask, d, c_ptr) : hn::LoadU(d, c_ptr);
        result = first_chunk ? hn::MulAdd(beta, old, result) : hn::Add(old, result);
      }
      if (last) {
        hn::BlendedStore(result, last_mask, d, c_ptr);
      } else {
        hn::StoreU(result, d, c_ptr);
      }
    }
  }
}

// Accumulator registers: AVX-512 has 32 vector registers, AVX2 16; keep NV for
// the B row, one for the broadcast and the rest for the tile. At most 4 rows:
// with more, GCC keeps the accumulator array on the stack (a store and a load per
// FMA) and the kernel runs at 28 GFLOP/s instead of 70 ([10000,20] x [20,20]).
template <int NV>
constexpr int rows_per_tile() {
  constexpr int registers = HWY_TARGET == HWY_AVX3 ? 32 : 16;
  return std::clamp((registers - NV - 2) / NV, 1, 4);
}

template <int NV, int MR = rows_per_tile<NV>()>
HWY_INLINE void remainder_tile(const SmallGemmOperands& o, int64_t i0, int64_t rows, int64_t p0, int64_t p1,
                               bool first_chunk) {
  if constexpr (MR > 1) {
    if (rows == MR - 1) return tile<MR - 1, NV>(o, i0, p0, p1, first_chunk);
    return remainder_tile<NV, MR - 1>(o, i0, rows, p0, p1, first_chunk);
  }
}

template <int NV>
void rows_of_c(const SmallGemmOperands& o, int64_t i_begin, int64_t i_end) {
  constexpr int MR = rows_per_tile<NV>();
  const int64_t chunk = o.k <= kMaxShortK ? o.k : kChunk;
  for (int64_t p0 = 0; p0 < o.k; p0 += chunk) {
    const int64_t p1 = std::min(o.k, p0 + chunk);
    int64_t i = i_begin;
    for (; i + MR <= i_end; i += MR) tile<MR, NV>(o, i, p0, p1, p0 == 0);
    if (i < i_end) remainder_tile<NV>(o, i, i_end - i, p0, p1, p0 == 0);
  }
}

bool small_gemm_on_target() { return kSmallGemmTarget; }

void small_gemm_rows(const SmallGemmOperands& o, int64_t i_begin, int64_t i_end) {
  if constexpr (kSmallGemmTarget) {
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<double>()));
    switch ((o.n + lanes - 1) / lanes) {
      case 1: return rows_of_c<1>(o, i_begin, i_end);
      case 2: return rows_of_c<2>(o, i_begin, i_end);
      case 3: return rows_of_c<3>(o, i_begin, i_end);
      case 4: return rows_of_c<4>(o, i_begin, i_end);
#if HWY_TARGET == HWY_AVX2
      case 5: return rows_of_c<5>(o, i_begin, i_end);
      case 6: return rows_of_c<6>(o, i_begin, i_end);
      case 7: return rows_of_c<7>(o, i_begin, i_end);
      case 8: return rows_of_c<8>(o, i_begin, i_end);
#endif
      default: break;
    }
  }
  GD_INTERNAL_ASSERT(false, "small_gemm: called for an unsupported target or width");
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

void small_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                double* c, int64_t ldc) {
  GD_INTERNAL_ASSERT(small_gemm_applies(trans_a, trans_b, m, n, k),
                     "small_gemm: called for a shape it does not handle");
  SmallGemmOperands o{a, trans_a ? 1 : lda, trans_a ? lda : 1, b, ldb, c, ldc, n, k, alpha, beta};
  double packed_b[kMaxShortK * kSmallGemmMaxN];
  if (trans_b) {  // op(B)[p, j] = B[j, p]: make the rows of op(B) contiguous
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) packed_b[p * n + j] = b[j * ldb + p];
    o.b = packed_b;
    o.ldb = n;
  }
  // Tall products split their rows over gemm_threads(); long reductions stay on one.
  const int64_t grain_rows = std::max<int64_t>(256, (int64_t{1} << 18) / (n * k));
  const int64_t chunks = k <= kMaxShortK ? std::min<int64_t>(gemm_threads(), m / grain_rows) : 1;
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
