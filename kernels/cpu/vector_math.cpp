// Elementwise math kernels of vector_math.h: Highway code compiled once per SIMD
// target and chosen at runtime, with SLEEF for sin/cos/tan/erf/erfc, which Highway lacks.

// Note [Compiled SIMD targets]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// hwy/foreach_target.h re-includes this file once per target, each copy
// compiled with that target's instruction set; HWY_DYNAMIC_DISPATCH then calls
// the best copy the running CPU supports. The library is built without -march,
// so every x86-64 CPU can load it. The copies built here are:
//   AVX3   (AVX-512 F/BW/DQ/VL, 512-bit vectors)   Skylake-X and later, Zen 4
//   AVX2   (AVX2 + FMA, 256-bit)                    Haswell and later, Zen
//   SSE4   (SSE4.2, 128-bit)                        anything since about 2008
//   SCALAR (GCC < 12.3) or EMU128 (newer GCC, clang) the fallback Highway always keeps
// SSSE3 is disabled: CPUs that have it but lack SSE4 are nearly extinct and the
// copy would cost compile time. AVX3_DL adds nothing to float math and Highway
// leaves it out unless asked to. Each extra target costs a full compile of the
// math below; keep the list short.
//
// Note [SLEEF entry points per target]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// libsleef exports one function per ISA and vector width (Sleef_sind8_u10avx512f,
// Sleef_sind4_u10avx2, Sleef_sind2_u10sse4, ...). Each Highway target calls the
// one matching its own vector register, passing the raw __m512d/__m256d/__m128d
// inside Highway's vector. sleef.h only declares the AVX and AVX-512 entry
// points when the whole file is compiled with -mavx, which we must not do, so
// they are declared below; the call sites sit inside functions compiled for
// AVX2/AVX-512, so the vectors travel in ymm/zmm registers as libsleef expects.
// Targets without a matching SLEEF build (SCALAR, EMU128, non-x86) go lane by
// lane through libm.
// Cost: SLEEF's erf/erfc work in double-double and are slow. Measured on 10k
// doubles (AMD EPYC VM with AVX-512): erf about 5 ns/element on AVX3 and 15 on
// AVX2, against about 11-15 for a scalar std::erf loop; on SSE4 (about 30) they
// lose to libm. A Highway-native erf (e.g. the rational fits of FreeBSD's
// s_erf.c) would fix that if gelu ever dominates a profile.

#include "kernels/cpu/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels/error.h"
#include "kernels/reduced_float.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/vector_math.cpp"
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)  // Note [Compiled SIMD targets]
#include "hwy/foreach_target.h"  // must come before highway.h

#include "hwy/highway.h"
#include "kernels/cpu/rounding-inl.h"
#include "hwy/contrib/math/math-inl.h"

#if HWY_ARCH_X86 && !defined(GRADIENS_VECTOR_MATH_SLEEF_DECLARED)
#define GRADIENS_VECTOR_MATH_SLEEF_DECLARED
#include <immintrin.h>
#include <sleef.h>

// Note [SLEEF entry points per target]: the ones sleef.h hides without -mavx /
// -mavx512f (under the same guards, so a -march=native build sees only its own).
// The target attributes state what the callee needs; clang refuses to pass a
// __m256/__m512 to a function declared without them.
#define GRADIENS_SLEEF_AVX2 __attribute__((target("avx2,fma")))
#define GRADIENS_SLEEF_AVX512 __attribute__((target("avx512f")))
extern "C" {
#ifndef __AVX__
GRADIENS_SLEEF_AVX2 __m256d Sleef_sind4_u10avx2(__m256d);
GRADIENS_SLEEF_AVX2 __m256d Sleef_cosd4_u10avx2(__m256d);
GRADIENS_SLEEF_AVX2 __m256d Sleef_tand4_u10avx2(__m256d);
GRADIENS_SLEEF_AVX2 __m256d Sleef_erfd4_u10avx2(__m256d);
GRADIENS_SLEEF_AVX2 __m256d Sleef_erfcd4_u15avx2(__m256d);
GRADIENS_SLEEF_AVX2 __m256 Sleef_sinf8_u10avx2(__m256);
GRADIENS_SLEEF_AVX2 __m256 Sleef_cosf8_u10avx2(__m256);
GRADIENS_SLEEF_AVX2 __m256 Sleef_tanf8_u10avx2(__m256);
GRADIENS_SLEEF_AVX2 __m256 Sleef_erff8_u10avx2(__m256);
GRADIENS_SLEEF_AVX2 __m256 Sleef_erfcf8_u15avx2(__m256);
#endif
#ifndef __AVX512F__
GRADIENS_SLEEF_AVX512 __m512d Sleef_sind8_u10avx512f(__m512d);
GRADIENS_SLEEF_AVX512 __m512d Sleef_cosd8_u10avx512f(__m512d);
GRADIENS_SLEEF_AVX512 __m512d Sleef_tand8_u10avx512f(__m512d);
GRADIENS_SLEEF_AVX512 __m512d Sleef_erfd8_u10avx512f(__m512d);
GRADIENS_SLEEF_AVX512 __m512d Sleef_erfcd8_u15avx512f(__m512d);
GRADIENS_SLEEF_AVX512 __m512 Sleef_sinf16_u10avx512f(__m512);
GRADIENS_SLEEF_AVX512 __m512 Sleef_cosf16_u10avx512f(__m512);
GRADIENS_SLEEF_AVX512 __m512 Sleef_tanf16_u10avx512f(__m512);
GRADIENS_SLEEF_AVX512 __m512 Sleef_erff16_u10avx512f(__m512);
GRADIENS_SLEEF_AVX512 __m512 Sleef_erfcf16_u15avx512f(__m512);
#endif
}
#undef GRADIENS_SLEEF_AVX2
#undef GRADIENS_SLEEF_AVX512
#endif

HWY_BEFORE_NAMESPACE();
namespace gradiens::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- SLEEF calls (Note [SLEEF entry points per target]) ----------------------

enum class SleefFunction { Sin, Cos, Tan, Erf, Erfc };

template <SleefFunction kFunction, class T>
T libm_function(T x) {
  if constexpr (kFunction == SleefFunction::Sin) return std::sin(x);
  if constexpr (kFunction == SleefFunction::Cos) return std::cos(x);
  if constexpr (kFunction == SleefFunction::Tan) return std::tan(x);
  if constexpr (kFunction == SleefFunction::Erf) return std::erf(x);
  if constexpr (kFunction == SleefFunction::Erfc) return std::erfc(x);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define GRADIENS_SLEEF_HAS_TARGET_VECTORS 1
template <SleefFunction kFunction>
HWY_INLINE __m512d sleef_vector(__m512d x) {
  if constexpr (kFunction == SleefFunction::Sin) return Sleef_sind8_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Cos) return Sleef_cosd8_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Tan) return Sleef_tand8_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Erf) return Sleef_erfd8_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Erfc) return Sleef_erfcd8_u15avx512f(x);
}
template <SleefFunction kFunction>
HWY_INLINE __m512 sleef_vector(__m512 x) {
  if constexpr (kFunction == SleefFunction::Sin) return Sleef_sinf16_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Cos) return Sleef_cosf16_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Tan) return Sleef_tanf16_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Erf) return Sleef_erff16_u10avx512f(x);
  if constexpr (kFunction == SleefFunction::Erfc) return Sleef_erfcf16_u15avx512f(x);
}
#elif HWY_TARGET == HWY_AVX2
#define GRADIENS_SLEEF_HAS_TARGET_VECTORS 1
template <SleefFunction kFunction>
HWY_INLINE __m256d sleef_vector(__m256d x) {
  if constexpr (kFunction == SleefFunction::Sin) return Sleef_sind4_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Cos) return Sleef_cosd4_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Tan) return Sleef_tand4_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Erf) return Sleef_erfd4_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Erfc) return Sleef_erfcd4_u15avx2(x);
}
template <SleefFunction kFunction>
HWY_INLINE __m256 sleef_vector(__m256 x) {
  if constexpr (kFunction == SleefFunction::Sin) return Sleef_sinf8_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Cos) return Sleef_cosf8_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Tan) return Sleef_tanf8_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Erf) return Sleef_erff8_u10avx2(x);
  if constexpr (kFunction == SleefFunction::Erfc) return Sleef_erfcf8_u15avx2(x);
}
#elif HWY_TARGET == HWY_SSE4
#define GRADIENS_SLEEF_HAS_TARGET_VECTORS 1
template <SleefFunction kFunction>
HWY_INLINE __m128d sleef_vector(__m128d x) {
  if constexpr (kFunction == SleefFunction::Sin) return Sleef_sind2_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Cos) return Sleef_cosd2_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Tan) return Sleef_tand2_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Erf) return Sleef_erfd2_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Erfc) return Sleef_erfcd2_u15sse4(x);
}
template <SleefFunction kFunction>
HWY_INLINE __m128 sleef_vector(__m128 x) {
  if constexpr (kFunction == SleefFunction::Sin) return Sleef_sinf4_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Cos) return Sleef_cosf4_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Tan) return Sleef_tanf4_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Erf) return Sleef_erff4_u10sse4(x);
  if constexpr (kFunction == SleefFunction::Erfc) return Sleef_erfcf4_u15sse4(x);
}
#else
#define GRADIENS_SLEEF_HAS_TARGET_VECTORS 0
#endif

// Only full vectors (ScalableTag) reach this, so .raw is a whole register.
template <SleefFunction kFunction, class D, class V>
HWY_INLINE V call_sleef(D d, V x) {
#if GRADIENS_SLEEF_HAS_TARGET_VECTORS
  (void)d;
  V result;
  result.raw = sleef_vector<kFunction>(x.raw);
  return result;
#else
  using T = hn::TFromD<D>;
  HWY_ALIGN T lanes[hn::MaxLanes(d)];
  hn::Store(x, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) lanes[i] = libm_function<kFunction>(lanes[i]);
  return hn::Load(d, lanes);
#endif
}
#undef GRADIENS_SLEEF_HAS_TARGET_VECTORS

// ---- per-element kernels -----------------------------------------------------
// Each takes and returns one full vector. Highway's polynomial kernels are only
// specified on their "valid range"; the IfThenElse fix-ups give the IEEE/PyTorch
// answers outside it (NaN, infinities, zeros, negative logs).

template <class V>
HWY_INLINE V keep_nan(V x, V result) {
  return hn::IfThenElse(hn::IsNaN(x), x, result);
}

template <class D>
HWY_INLINE hn::Vec<D> infinity(D d) {
  return hn::Set(d, std::numeric_limits<hn::TFromD<D>>::infinity());
}

template <class D>
HWY_INLINE hn::Vec<D> quiet_nan(D d) {
  return hn::Set(d, std::numeric_limits<hn::TFromD<D>>::quiet_NaN());
}

// The largest x whose exp is finite. Past it Highway's range reduction wraps
// the exponent around (exp(1000) comes out as 8e-29) instead of saturating.
template <class D>
HWY_INLINE hn::Vec<D> largest_finite_exp_argument(D d) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 4) return hn::Set(d, T(0x1.62e42ep+6f));  // 88.72283
  return hn::Set(d, T(0x1.62e42fefa39efp+9));                             // 709.78271289338397
}

// Highway's Exp is right up to overflow and flushes to 0 below the subnormal
// range; overflow and NaN (which comes out as 0) need fixing up.
template <class D, class V>
HWY_INLINE V exp_kernel(D d, V x) {
  const V result = hn::IfThenElse(hn::Gt(x, largest_finite_exp_argument(d)), infinity(d),
                                  hn::Exp(d, x));
  return keep_nan(x, result);
}

// Same overflow fix-up as exp_kernel; and expm1(-0) must stay -0, where
// Highway's polynomial returns +0.
template <class D, class V>
HWY_INLINE V expm1_kernel(D d, V x) {
  V result = hn::Expm1(d, x);
  result = hn::IfThenElse(hn::Gt(x, largest_finite_exp_argument(d)), infinity(d), result);
  result = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, result);
  return keep_nan(x, result);
}

template <class D, class V>
HWY_INLINE V log_kernel(D d, V x) {
  const V zero = hn::Zero(d);
  V result = hn::Log(d, x);
  result = hn::IfThenElse(hn::Eq(x, zero), hn::Neg(infinity(d)), result);  // log(+-0) = -inf
  result = hn::IfThenElse(hn::Eq(x, infinity(d)), x, result);
  result = hn::IfThenElse(hn::Lt(x, zero), quiet_nan(d), result);
  return keep_nan(x, result);
}

template <class D, class V>
HWY_INLINE V log1p_kernel(D d, V x) {
  const V minus_one = hn::Set(d, hn::TFromD<D>(-1));
  V result = hn::Log1p(d, x);
  result = hn::IfThenElse(hn::Eq(x, minus_one), hn::Neg(infinity(d)), result);
  result = hn::IfThenElse(hn::Eq(x, infinity(d)), x, result);
  result = hn::IfThenElse(hn::Lt(x, minus_one), quiet_nan(d), result);
  return keep_nan(x, result);
}

// Note [Stable sigmoid]: with e = exp(-|x|), which lies in [0, 1] and never
// overflows, sigmoid(|x|) = 1 / (1 + e) and sigmoid(-|x|) = e / (1 + e). The
// naive 1 / (1 + exp(-x)) gets the same answer for x > 0, but for x < 0 it
// rounds to 0 once exp(-x) overflows, while e / (1 + e) still gives the
// (subnormal) true value.
template <class D, class V>
HWY_INLINE V sigmoid_kernel(D d, V x) {
  const V one = hn::Set(d, hn::TFromD<D>(1));
  const V exp_minus_abs = exp_kernel(d, hn::Neg(hn::Abs(x)));
  const V sigmoid_of_abs = hn::Div(one, hn::Add(one, exp_minus_abs));
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(exp_minus_abs, sigmoid_of_abs),
                        sigmoid_of_abs);
}

// x * sigmoid(x). At x = -inf that is -inf * 0 = NaN; return the limit -0.
template <class D, class V>
HWY_INLINE V silu_kernel(D d, V x) {
  const V result = hn::Mul(x, sigmoid_kernel(d, x));
  return hn::IfThenElse(hn::Eq(x, hn::Neg(infinity(d))), hn::Set(d, hn::TFromD<D>(-0.0)), result);
}

// Exact GELU as 0.5 * x * erfc(-x / sqrt 2), which equals x * 0.5 * (1 + erf(x /
// sqrt 2)) but does not cancel for x < 0: 1 + erf(-5 / sqrt 2) loses 24 bits,
// erfc keeps them all. At x = -inf the product is -inf * 0; return the limit -0.
template <class D, class V>
HWY_INLINE V gelu_kernel(D d, V x) {
  using T = hn::TFromD<D>;
  const V minus_inv_sqrt2 = hn::Set(d, T(-0.70710678118654752440));
  const V half = hn::Set(d, T(0.5));
  const V erfc_term = call_sleef<SleefFunction::Erfc>(d, hn::Mul(x, minus_inv_sqrt2));
  const V result = hn::Mul(hn::Mul(x, half), erfc_term);
  return hn::IfThenElse(hn::Eq(x, hn::Neg(infinity(d))), hn::Set(d, T(-0.0)), result);
}

// max(x, 0) + log1p(exp(-|x|)): exp's argument is never positive, so nothing
// overflows, and for x << 0 log1p keeps the full precision of exp(x).
template <class D, class V>
HWY_INLINE V softplus_kernel(D d, V x) {
  const V positive_part = hn::IfThenZeroElse(hn::Le(x, hn::Zero(d)), x);
  const V exp_minus_abs = exp_kernel(d, hn::Neg(hn::Abs(x)));
  return hn::Add(positive_part, hn::Log1p(d, exp_minus_abs));
}

// sign(+-0) = +0 and sign(NaN) = NaN.
template <class D, class V>
HWY_INLINE V sign_kernel(D d, V x) {
  using T = hn::TFromD<D>;
  const V zero = hn::Zero(d);
  const V negative_or_zero = hn::IfThenElseZero(hn::Lt(x, zero), hn::Set(d, T(-1)));
  return keep_nan(x, hn::IfThenElse(hn::Gt(x, zero), hn::Set(d, T(1)), negative_or_zero));
}

template <UnaryMath kOp, class D, class V>
HWY_INLINE V apply_unary(D d, V x) {
  using T = hn::TFromD<D>;
  const V one = hn::Set(d, T(1));
  if constexpr (kOp == UnaryMath::Exp) return exp_kernel(d, x);
  if constexpr (kOp == UnaryMath::Expm1) return expm1_kernel(d, x);
  if constexpr (kOp == UnaryMath::Log) return log_kernel(d, x);
  if constexpr (kOp == UnaryMath::Log1p) return log1p_kernel(d, x);
  if constexpr (kOp == UnaryMath::Sqrt) return hn::Sqrt(x);
  // A true divide, not the 12-bit rsqrt estimate, so it is as exact as 1/std::sqrt.
  if constexpr (kOp == UnaryMath::Rsqrt) return hn::Div(one, hn::Sqrt(x));
  // Highway's Tanh saturates to +-1 past |x| = 18.7 and keeps NaN and -0.
  if constexpr (kOp == UnaryMath::Tanh) return hn::Tanh(d, x);
  if constexpr (kOp == UnaryMath::Sigmoid) return sigmoid_kernel(d, x);
  if constexpr (kOp == UnaryMath::Sin) return call_sleef<SleefFunction::Sin>(d, x);
  if constexpr (kOp == UnaryMath::Cos) return call_sleef<SleefFunction::Cos>(d, x);
  if constexpr (kOp == UnaryMath::Tan) return call_sleef<SleefFunction::Tan>(d, x);
  if constexpr (kOp == UnaryMath::Erf) return call_sleef<SleefFunction::Erf>(d, x);
  if constexpr (kOp == UnaryMath::Abs) return hn::Abs(x);
  if constexpr (kOp == UnaryMath::Neg) return hn::Neg(x);
  if constexpr (kOp == UnaryMath::Reciprocal) return hn::Div(one, x);
  if constexpr (kOp == UnaryMath::Square) return hn::Mul(x, x);
  // Not max(x, 0): x86 max returns its second operand for NaN, and PyTorch
  // keeps NaN. relu(-0) = +0 like PyTorch.
  if constexpr (kOp == UnaryMath::Relu) return hn::IfThenZeroElse(hn::Le(x, hn::Zero(d)), x);
  if constexpr (kOp == UnaryMath::Sign) return sign_kernel(d, x);
  if constexpr (kOp == UnaryMath::Gelu) return gelu_kernel(d, x);
  if constexpr (kOp == UnaryMath::Silu) return silu_kernel(d, x);
  if constexpr (kOp == UnaryMath::Softplus) return softplus_kernel(d, x);
  // The result always has x's sign; CopySign restores the zeros' signs that
  // Highway's scalar target loses (floor(-0), ceil(-0.5), round(-0.5) are -0).
  if constexpr (kOp == UnaryMath::Floor) return hn::CopySign(hn::Floor(x), x);
  if constexpr (kOp == UnaryMath::Ceil) return hn::CopySign(hn::Ceil(x), x);
  if constexpr (kOp == UnaryMath::Round) return hn::CopySign(hn::Round(x), x);
  if constexpr (kOp == UnaryMath::Trunc) return hn::CopySign(hn::Trunc(x), x);
}

// ---- loops -------------------------------------------------------------------
// Note [Vector math tail]: Highway 1.0.3 has no LoadN/StoreN, so the last
// partial vector is copied into a zero-padded aligned buffer, computed whole and
// copied back. Every kernel is defined at 0, so the padding lanes are harmless.
// Each vector is loaded before its slot is stored, so out may alias the inputs.

template <UnaryMath kOp, class T>
void unary_loop(const T* in, T* out, size_t count) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    hn::StoreU(apply_unary<kOp>(d, hn::LoadU(d, in + i)), d, out + i);
  }
  if (i == count) return;
  const size_t tail = count - i;
  HWY_ALIGN T padded[hn::MaxLanes(d)] = {};
  std::memcpy(padded, in + i, tail * sizeof(T));
  hn::Store(apply_unary<kOp>(d, hn::Load(d, padded)), d, padded);
  std::memcpy(out + i, padded, tail * sizeof(T));
}

template <class Kernel, class T>
void binary_loop(const T* a, const T* b, T* out, size_t count) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    hn::StoreU(Kernel::apply(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  }
  if (i == count) return;
  const size_t tail = count - i;
  HWY_ALIGN T padded_a[hn::MaxLanes(d)] = {};
  HWY_ALIGN T padded_b[hn::MaxLanes(d)] = {};
  std::memcpy(padded_a, a + i, tail * sizeof(T));
  std::memcpy(padded_b, b + i, tail * sizeof(T));
  hn::Store(Kernel::apply(d, hn::Load(d, padded_a), hn::Load(d, padded_b)), d, padded_a);
  std::memcpy(out + i, padded_a, tail * sizeof(T));
}

// grad * (1 - y*y), computed as grad * ((1 - y) * (1 + y)): for y near +-1,
// 1 - y is exact while 1 - y*y would lose the low bits of y*y (no FMA on SSE4).
struct TanhBackward {
  template <class D, class V>
  static HWY_INLINE V apply(D d, V grad, V y) {
    const V one = hn::Set(d, hn::TFromD<D>(1));
    return hn::Mul(grad, hn::Mul(hn::Sub(one, y), hn::Add(one, y)));
  }
};

// grad * y * (1 - y).
struct SigmoidBackward {
  template <class D, class V>
  static HWY_INLINE V apply(D d, V grad, V y) {
    const V one = hn::Set(d, hn::TFromD<D>(1));
    return hn::Mul(grad, hn::Mul(y, hn::Sub(one, y)));
  }
};

template <class T>
void unary_math_on_target(UnaryMath op, const T* in, T* out, size_t count) {
  switch (op) {
    case UnaryMath::Exp: return unary_loop<UnaryMath::Exp>(in, out, count);
    case UnaryMath::Expm1: return unary_loop<UnaryMath::Expm1>(in, out, count);
    case UnaryMath::Log: return unary_loop<UnaryMath::Log>(in, out, count);
    case UnaryMath::Log1p: return unary_loop<UnaryMath::Log1p>(in, out, count);
    case UnaryMath::Sqrt: return unary_loop<UnaryMath::Sqrt>(in, out, count);
    case UnaryMath::Rsqrt: return unary_loop<UnaryMath::Rsqrt>(in, out, count);
    case UnaryMath::Tanh: return unary_loop<UnaryMath::Tanh>(in, out, count);
    case UnaryMath::Sigmoid: return unary_loop<UnaryMath::Sigmoid>(in, out, count);
    case UnaryMath::Sin: return unary_loop<UnaryMath::Sin>(in, out, count);
    case UnaryMath::Cos: return unary_loop<UnaryMath::Cos>(in, out, count);
    case UnaryMath::Tan: return unary_loop<UnaryMath::Tan>(in, out, count);
    case UnaryMath::Erf: return unary_loop<UnaryMath::Erf>(in, out, count);
    case UnaryMath::Abs: return unary_loop<UnaryMath::Abs>(in, out, count);
    case UnaryMath::Neg: return unary_loop<UnaryMath::Neg>(in, out, count);
    case UnaryMath::Reciprocal: return unary_loop<UnaryMath::Reciprocal>(in, out, count);
    case UnaryMath::Square: return unary_loop<UnaryMath::Square>(in, out, count);
    case UnaryMath::Relu: return unary_loop<UnaryMath::Relu>(in, out, count);
    case UnaryMath::Sign: return unary_loop<UnaryMath::Sign>(in, out, count);
    case UnaryMath::Gelu: return unary_loop<UnaryMath::Gelu>(in, out, count);
    case UnaryMath::Silu: return unary_loop<UnaryMath::Silu>(in, out, count);
    case UnaryMath::Softplus: return unary_loop<UnaryMath::Softplus>(in, out, count);
    case UnaryMath::Floor: return unary_loop<UnaryMath::Floor>(in, out, count);
    case UnaryMath::Ceil: return unary_loop<UnaryMath::Ceil>(in, out, count);
    case UnaryMath::Round: return unary_loop<UnaryMath::Round>(in, out, count);
    case UnaryMath::Trunc: return unary_loop<UnaryMath::Trunc>(in, out, count);
  }
  // No default above, so -Wswitch flags a new UnaryMath left out of this table.
  GD_INTERNAL_ASSERT(false, "unary_math: UnaryMath value " +
                                std::to_string(static_cast<int>(op)) + " has no kernel");
}

// ---- float16 / bfloat16 conversions -------------------------------------------
// The lane code repeats the scalar steps of kernels/reduced_float.h (Note [Half
// conversion by float arithmetic]) op for op, so every target gives the scalar
// bits. Highway 1.0.3's own f16 PromoteTo/DemoteTo are exact only with F16C:
// its SSE4 emulation truncates and maps inf to 65536; its bf16 DemoteTo truncates.

template <class DF>
HWY_INLINE hn::Vec<DF> half_to_float_lanes(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> h) {
  const hn::RebindToUnsigned<DF> du;
  const auto w = hn::ShiftLeft<16>(hn::PromoteTo(du, h));
  const auto sign = hn::And(w, hn::Set(du, 0x80000000u));
  const auto two_w = hn::Add(w, w);
  const auto normalized =
      hn::Mul(hn::BitCast(df, hn::Add(hn::ShiftRight<4>(two_w), hn::Set(du, 0xE0u << 23))), hn::Set(df, 0x1.0p-112f));
  const auto denormalized =
      hn::Sub(hn::BitCast(df, hn::Or(hn::ShiftRight<17>(two_w), hn::Set(du, 126u << 23))), hn::Set(df, 0.5f));
  // The scalar test two_w < 2^27, i.e. a zero exponent field.
  const auto is_subnormal = hn::Eq(hn::And(w, hn::Set(du, 0x7C000000u)), hn::Zero(du));
  const auto magnitude = hn::IfThenElse(is_subnormal, hn::BitCast(du, denormalized), hn::BitCast(du, normalized));
  return hn::BitCast(df, hn::Or(sign, magnitude));
}

template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> float_to_half_lanes(DF df, hn::Vec<DF> f) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> du16;
  const auto w = hn::BitCast(du, f);
  const auto sign = hn::ShiftRight<16>(hn::And(w, hn::Set(du, 0x80000000u)));
  auto base = hn::Mul(hn::Mul(hn::Abs(f), hn::Set(df, 0x1.0p+112f)), hn::Set(df, 0x1.0p-110f));
  // The scalar max(exponent << 24, 0x71 << 24), taken on the exponent alone so a
  // signed lane compare does (exponents are at most 255).
  const auto exponent = hn::BitCast(di, hn::And(hn::ShiftRight<23>(w), hn::Set(du, 0xFFu)));
  const auto bias = hn::BitCast(du, hn::Max(exponent, hn::Set(di, 0x71)));
  base = hn::Add(hn::BitCast(df, hn::Add(hn::ShiftLeft<23>(bias), hn::Set(du, 0x07800000u))), base);
  const auto bits = hn::BitCast(du, base);
  const auto nonsign =
      hn::Add(hn::And(hn::ShiftRight<13>(bits), hn::Set(du, 0x7C00u)), hn::And(bits, hn::Set(du, 0x0FFFu)));
  const auto magnitude = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(f)), hn::Set(du, 0x7E00u), nonsign);
  return hn::DemoteTo(du16, hn::BitCast(di, hn::Or(sign, magnitude)));
}

template <class DF>
HWY_INLINE hn::Vec<DF> bfloat16_to_float_lanes(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> b) {
  const hn::RebindToUnsigned<DF> du;
  return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, b)));
}

template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> float_to_bfloat16_lanes(DF, hn::Vec<DF> f) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> du16;
  const auto w = hn::BitCast(du, f);
  const auto lsb = hn::And(hn::ShiftRight<16>(w), hn::Set(du, 1u));
  const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(w, hn::Set(du, 0x7FFFu)), lsb));
  const auto result = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(f)), hn::Set(du, 0x7FC0u), rounded);
  return hn::DemoteTo(du16, hn::BitCast(di, result));
}

// The tails go through the scalar conversions, which give the same bits.
void half_to_float_loop(const uint16_t* in, float* out, size_t count) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) hn::StoreU(half_to_float_lanes(df, hn::LoadU(du16, in + i)), df, out + i);
  for (; i < count; ++i) out[i] = gradiens::detail::half_bits_to_float(in[i]);
}
void float_to_half_loop(const float* in, uint16_t* out, size_t count) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) hn::StoreU(float_to_half_lanes(df, hn::LoadU(df, in + i)), du16, out + i);
  for (; i < count; ++i) out[i] = gradiens::detail::float_to_half_bits(in[i]);
}
void bfloat16_to_float_loop(const uint16_t* in, float* out, size_t count) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes)
    hn::StoreU(bfloat16_to_float_lanes(df, hn::LoadU(du16, in + i)), df, out + i);
  for (; i < count; ++i) out[i] = gradiens::detail::bfloat16_bits_to_float(in[i]);
}
void float_to_bfloat16_loop(const float* in, uint16_t* out, size_t count) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> du16;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes)
    hn::StoreU(float_to_bfloat16_lanes(df, hn::LoadU(df, in + i)), du16, out + i);
  for (; i < count; ++i) out[i] = gradiens::detail::float_to_bfloat16_bits(in[i]);
}

template <Arith kOp, class T>
void arith_loop(const T* a, const T* b, T* out, size_t count) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  auto apply = [](auto x, auto y) {
    if constexpr (kOp == Arith::Add) return x + y;
    else if constexpr (kOp == Arith::Sub) return x - y;
    else return x * y;
  };
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) hn::StoreU(apply(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  for (; i < count; ++i) out[i] = apply(a[i], b[i]);
}

template <class T>
void arith_on_target(Arith op, const T* a, const T* b, T* out, size_t count) {
  switch (op) {
    case Arith::Add: return arith_loop<Arith::Add>(a, b, out, count);
    case Arith::Sub: return arith_loop<Arith::Sub>(a, b, out, count);
    case Arith::Mul: return arith_loop<Arith::Mul>(a, b, out, count);
  }
}

// The fused second-order kernels (vector_math.h): only multiplies, subtracts and
// adds in the scalar formulas' order, so every target rounds as the scalar code.
// Stores v at p, or p + v where `add` (an output that accumulates).
template <class D, class V, class T>
HWY_INLINE void store_or_add(D d, V v, T* p, bool add) {
  if (add) {
    v.raw = rounded(v.raw);
    v = hn::Add(hn::LoadU(d, p), v);
  }
  hn::StoreU(v, d, p);
}

template <class T>
void tanh_backward_backward_loop(const T* gg, const T* grad, const T* y, T* d_grad, T* d_y, size_t count,
                                 uint32_t accumulate) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  const auto minus_two = hn::Set(d, T(-2));
  const bool add_grad = (accumulate & 1) != 0, add_y = (accumulate & 2) != 0;
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    const auto g2 = hn::LoadU(d, gg + i), g = hn::LoadU(d, grad + i), v = hn::LoadU(d, y + i);
    store_or_add(d, TanhBackward::apply(d, g2, v), d_grad + i, add_grad);
    store_or_add(d, hn::Mul(minus_two, hn::Mul(hn::Mul(g2, g), v)), d_y + i, add_y);
  }
  for (; i < count; ++i) {
    const T g2 = gg[i], g = grad[i], v = y[i];
    const T dg = g2 * ((T(1) - v) * (T(1) + v)), dy = T(-2) * (g2 * g * v);
    d_grad[i] = add_grad ? d_grad[i] + rounded(dg) : dg;
    d_y[i] = add_y ? d_y[i] + rounded(dy) : dy;
  }
}

// The three gradients of the pair (gg (1 - y^2), -2 gg grad y) for the incoming
// g_first and g_second, each term rounded as the separate kernel that made it and
// the two terms of d_gg and d_y added after (Note [Accumulating outputs round twice]).
template <class T>
void tanh_backward_backward_backward_loop(const T* g_first, const T* g_second, const T* gg, const T* grad, const T* y,
                                          T* d_gg, T* d_grad, T* d_y, size_t count, uint32_t accumulate) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  const auto minus_two = hn::Set(d, T(-2));
  const bool add_gg = (accumulate & 1) != 0, add_grad = (accumulate & 2) != 0, add_y = (accumulate & 4) != 0;
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    const auto g1 = hn::LoadU(d, g_first + i), g2 = hn::LoadU(d, g_second + i);
    const auto a = hn::LoadU(d, gg + i), b = hn::LoadU(d, grad + i), v = hn::LoadU(d, y + i);
    auto first = TanhBackward::apply(d, g1, v), second = hn::Mul(minus_two, hn::Mul(hn::Mul(g2, b), v));
    first.raw = rounded(first.raw);
    second.raw = rounded(second.raw);
    store_or_add(d, hn::Add(first, second), d_gg + i, add_gg);
    store_or_add(d, hn::Mul(minus_two, hn::Mul(hn::Mul(a, g2), v)), d_grad + i, add_grad);
    first = hn::Mul(minus_two, hn::Mul(hn::Mul(g1, a), v));
    second = hn::Mul(minus_two, hn::Mul(hn::Mul(a, b), g2));
    first.raw = rounded(first.raw);
    second.raw = rounded(second.raw);
    store_or_add(d, hn::Add(first, second), d_y + i, add_y);
  }
  for (; i < count; ++i) {
    const T g1 = g_first[i], g2 = g_second[i], a = gg[i], b = grad[i], v = y[i];
    const T dgg = rounded(g1 * ((T(1) - v) * (T(1) + v))) + rounded(T(-2) * (g2 * b * v));
    const T dgrad = T(-2) * (a * g2 * v);
    const T dy = rounded(T(-2) * (g1 * a * v)) + rounded(T(-2) * (a * b * g2));
    d_gg[i] = add_gg ? d_gg[i] + rounded(dgg) : dgg;
    d_grad[i] = add_grad ? d_grad[i] + rounded(dgrad) : dgrad;
    d_y[i] = add_y ? d_y[i] + rounded(dy) : dy;
  }
}

// ReLU's backward: grad where self > threshold, else 0 (a NaN self passes grad, as PyTorch).
template <class T>
void threshold_backward_loop(const T* grad, const T* self, T threshold, T* out, size_t count) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  const auto limit = hn::Set(d, threshold);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes)
    hn::StoreU(hn::IfThenZeroElse(hn::Le(hn::LoadU(d, self + i), limit), hn::LoadU(d, grad + i)), d, out + i);
  for (; i < count; ++i) out[i] = self[i] <= threshold ? T(0) : grad[i];
}

template <class T>
void scaled_product_loop(const T* a, const T* b, const T* c, T s, T* out, size_t count) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  const auto scale = hn::Set(d, s);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes)
    hn::StoreU(hn::Mul(scale, hn::Mul(hn::Mul(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), hn::LoadU(d, c + i))), d,
               out + i);
  for (; i < count; ++i) out[i] = s * (a[i] * b[i] * c[i]);
}

template <class T>
void scaled_product_backward_loop(const T* g, const T* a, const T* b, const T* c, T s, T* grad_a, T* grad_b,
                                  T* grad_c, size_t count, uint32_t accumulate) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  const auto scale = hn::Set(d, s);
  const bool add_a = (accumulate & 1) != 0, add_b = (accumulate & 2) != 0, add_c = (accumulate & 4) != 0;
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    const auto vg = hn::LoadU(d, g + i), va = hn::LoadU(d, a + i), vb = hn::LoadU(d, b + i), vc = hn::LoadU(d, c + i);
    store_or_add(d, hn::Mul(scale, hn::Mul(hn::Mul(vg, vb), vc)), grad_a + i, add_a);
    store_or_add(d, hn::Mul(scale, hn::Mul(hn::Mul(va, vg), vc)), grad_b + i, add_b);
    store_or_add(d, hn::Mul(scale, hn::Mul(hn::Mul(va, vb), vg)), grad_c + i, add_c);
  }
  for (; i < count; ++i) {
    const T ga = s * (g[i] * b[i] * c[i]), gb = s * (a[i] * g[i] * c[i]), gc = s * (a[i] * b[i] * g[i]);
    grad_a[i] = add_a ? grad_a[i] + rounded(ga) : ga;
    grad_b[i] = add_b ? grad_b[i] + rounded(gb) : gb;
    grad_c[i] = add_c ? grad_c[i] + rounded(gc) : gc;
  }
}

// HWY_EXPORT needs plain (non-template) functions, one per dtype.
void unary_math_float(UnaryMath op, const float* in, float* out, size_t count) {
  unary_math_on_target(op, in, out, count);
}
void unary_math_double(UnaryMath op, const double* in, double* out, size_t count) {
  unary_math_on_target(op, in, out, count);
}
void tanh_backward_float(const float* grad, const float* y, float* out, size_t count) {
  binary_loop<TanhBackward>(grad, y, out, count);
}
void tanh_backward_double(const double* grad, const double* y, double* out, size_t count) {
  binary_loop<TanhBackward>(grad, y, out, count);
}
void sigmoid_backward_float(const float* grad, const float* y, float* out, size_t count) {
  binary_loop<SigmoidBackward>(grad, y, out, count);
}
void sigmoid_backward_double(const double* grad, const double* y, double* out, size_t count) {
  binary_loop<SigmoidBackward>(grad, y, out, count);
}
void arith_float(Arith op, const float* a, const float* b, float* out, size_t count) {
  arith_on_target(op, a, b, out, count);
}
void arith_double(Arith op, const double* a, const double* b, double* out, size_t count) {
  arith_on_target(op, a, b, out, count);
}
void tanh_backward_backward_float(const float* gg, const float* grad, const float* y, float* d_grad, float* d_y,
                                  size_t count, uint32_t accumulate) {
  tanh_backward_backward_loop(gg, grad, y, d_grad, d_y, count, accumulate);
}
void tanh_backward_backward_double(const double* gg, const double* grad, const double* y, double* d_grad,
                                   double* d_y, size_t count, uint32_t accumulate) {
  tanh_backward_backward_loop(gg, grad, y, d_grad, d_y, count, accumulate);
}
void tanh_backward_backward_backward_float(const float* g_first, const float* g_second, const float* gg,
                                           const float* grad, const float* y, float* d_gg, float* d_grad, float* d_y,
                                           size_t count, uint32_t accumulate) {
  tanh_backward_backward_backward_loop(g_first, g_second, gg, grad, y, d_gg, d_grad, d_y, count, accumulate);
}
void tanh_backward_backward_backward_double(const double* g_first, const double* g_second, const double* gg,
                                            const double* grad, const double* y, double* d_gg, double* d_grad,
                                            double* d_y, size_t count, uint32_t accumulate) {
  tanh_backward_backward_backward_loop(g_first, g_second, gg, grad, y, d_gg, d_grad, d_y, count, accumulate);
}
void threshold_backward_float(const float* grad, const float* self, float threshold, float* out, size_t count) {
  threshold_backward_loop(grad, self, threshold, out, count);
}
void threshold_backward_double(const double* grad, const double* self, double threshold, double* out,
                               size_t count) {
  threshold_backward_loop(grad, self, threshold, out, count);
}
void scaled_product_float(const float* a, const float* b, const float* c, float s, float* out, size_t count) {
  scaled_product_loop(a, b, c, s, out, count);
}
void scaled_product_double(const double* a, const double* b, const double* c, double s, double* out, size_t count) {
  scaled_product_loop(a, b, c, s, out, count);
}
void scaled_product_backward_float(const float* g, const float* a, const float* b, const float* c, float s,
                                   float* grad_a, float* grad_b, float* grad_c, size_t count, uint32_t accumulate) {
  scaled_product_backward_loop(g, a, b, c, s, grad_a, grad_b, grad_c, count, accumulate);
}
void scaled_product_backward_double(const double* g, const double* a, const double* b, const double* c, double s,
                                    double* grad_a, double* grad_b, double* grad_c, size_t count,
                                    uint32_t accumulate) {
  scaled_product_backward_loop(g, a, b, c, s, grad_a, grad_b, grad_c, count, accumulate);
}
// Note [Vectorized 2x2 max pool]
// Each vector holds N adjacent outputs of one row: LoadInterleaved2 splits the
// top and bottom input rows into their even and odd columns, so the four taps of
// N windows are four vectors, compared in PyTorch's order (top-left, top-right,
// bottom-left, bottom-right: a later tap wins only if greater, or if it is NaN, so
// the first maximum wins and so does the last NaN). A row's last, partial vector
// loads whole vectors, reading on into the next rows, wherever those still lie
// inside the call's planes: the extra lanes are computed but never stored, and
// AVX-512 masked loads cost Zen cores far more (the 2x2 pool after a 28 x 28
// convolution took twice as long with them). Only the rows at the very end take
// masked loads on AVX-512 (masked-off lanes are neither read nor faulted on), or
// else a zero-padded copy. The partial stores are masked, or go through a copy.
template <class T, class IndexOut>
void max_pool_2x2_planes_loop(const T* input, size_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                              int64_t out_w, T* output, IndexOut* indices) {
  static_assert(sizeof(IndexOut) == sizeof(int64_t) || sizeof(IndexOut) == sizeof(T), "int64 or lane-sized indices");
  using Index = hwy::MakeSigned<T>;  // int32 lanes beside float, int64 beside double
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
#if HWY_TARGET != HWY_AVX3 && HWY_TARGET != HWY_AVX3_DL
  HWY_ALIGN T top_copy[2 * hn::MaxLanes(d)], bottom_copy[2 * hn::MaxLanes(d)], out_copy[hn::MaxLanes(d)];
  HWY_ALIGN Index index_copy[hn::MaxLanes(di)];
#endif
  static_assert(sizeof(Index) == sizeof(T));
  const auto two_lanes = hn::Mul(hn::Iota(di, 0), hn::Set(di, Index{2}));
  const auto row_step = hn::Set(di, static_cast<Index>(in_w));
  const auto one = hn::Set(di, Index{1});
  const T* input_end = input + static_cast<int64_t>(planes) * in_h * in_w;
  for (size_t p = 0; p < planes; ++p) {
    const T* plane = input + static_cast<int64_t>(p) * in_h * in_w;
    T* out_plane = output + static_cast<int64_t>(p) * out_h * out_w;
    IndexOut* index_plane = indices + static_cast<int64_t>(p) * out_h * out_w;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const T* top = plane + 2 * oh * in_w;
      const T* bottom = top + in_w;
      for (int64_t ow = 0; ow < out_w; ow += lanes) {
        const int64_t n = std::min(lanes, out_w - ow);
        hn::Vec<decltype(d)> tl, tr, bl, br;
        if (n == lanes || bottom + 2 * (ow + lanes) <= input_end) {
          // A partial vector may read on into the next rows of the buffer: those
          // lanes are not stored, and plain loads run far faster than masked ones.
          hn::LoadInterleaved2(d, top + 2 * ow, tl, tr);
          hn::LoadInterleaved2(d, bottom + 2 * ow, bl, br);
        } else {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
          // Masked loads: lanes past the row are neither read nor faulted on.
          const auto first = hn::FirstN(d, static_cast<size_t>(std::min(2 * n, lanes)));
          const auto second = hn::FirstN(d, static_cast<size_t>(std::max<int64_t>(2 * n - lanes, 0)));
          const auto split = [&](const T* row, hn::Vec<decltype(d)>& even, hn::Vec<decltype(d)>& odd) {
            const auto lo = hn::MaskedLoad(first, d, row), hi = hn::MaskedLoad(second, d, row + lanes);
            even = hn::ConcatEven(d, hi, lo);
            odd = hn::ConcatOdd(d, hi, lo);
          };
          split(top + 2 * ow, tl, tr);
          split(bottom + 2 * ow, bl, br);
#else
          std::fill(top_copy, top_copy + 2 * lanes, T(0));
          std::fill(bottom_copy, bottom_copy + 2 * lanes, T(0));
          std::copy(top + 2 * ow, top + 2 * (ow + n), top_copy);
          std::copy(bottom + 2 * ow, bottom + 2 * (ow + n), bottom_copy);
          hn::LoadInterleaved2(d, top_copy, tl, tr);
          hn::LoadInterleaved2(d, bottom_copy, bl, br);
#endif
        }
        auto best = tl;
        auto tap = hn::Zero(di);
        const auto take = [&](hn::Vec<decltype(d)> v, Index k) {
          const auto wins = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
          best = hn::IfThenElse(wins, v, best);
          tap = hn::IfThenElse(hn::RebindMask(di, wins), hn::Set(di, k), tap);
        };
        take(tr, 1);
        take(bl, 2);
        take(br, 3);
        // Tap k = 2 * row + column sits at (k >> 1) * in_w + (k & 1) from its window's corner.
        const auto corner = hn::Add(two_lanes, hn::Set(di, static_cast<Index>(2 * oh * in_w + 2 * ow)));
        const auto at = hn::Add(corner, hn::Add(hn::Mul(hn::ShiftRight<1>(tap), row_step), hn::And(tap, one)));
        IndexOut* index_out = index_plane + oh * out_w + ow;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
        const auto fill = [&](auto tag, int64_t count) { return hn::FirstN(tag, static_cast<size_t>(count)); };
        hn::BlendedStore(best, fill(d, n), d, out_plane + oh * out_w + ow);
        if constexpr (sizeof(IndexOut) == sizeof(Index)) {
          hn::BlendedStore(at, fill(di, n), di, reinterpret_cast<Index*>(index_out));
        } else {
          const hn::Half<decltype(di)> half;
          const hn::Rebind<int64_t, decltype(half)> wide;
          const int64_t half_lanes = lanes / 2;
          hn::BlendedStore(hn::PromoteTo(wide, hn::LowerHalf(half, at)), fill(wide, std::min(n, half_lanes)), wide,
                           index_out);
          if (n > half_lanes)
            hn::BlendedStore(hn::PromoteTo(wide, hn::UpperHalf(half, at)), fill(wide, n - half_lanes), wide,
                             index_out + half_lanes);
        }
#else
        if (n == lanes) {
          hn::StoreU(best, d, out_plane + oh * out_w + ow);
        } else {
          hn::Store(best, d, out_copy);
          std::copy(out_copy, out_copy + n, out_plane + oh * out_w + ow);
        }
        hn::Store(at, di, index_copy);
        for (int64_t j = 0; j < n; ++j) index_out[j] = static_cast<IndexOut>(index_copy[j]);
#endif
      }
    }
  }
}

void max_pool_2x2_planes_float(const float* input, size_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                               int64_t out_w, float* output, int64_t* indices) {
  max_pool_2x2_planes_loop(input, planes, in_h, in_w, out_h, out_w, output, indices);
}
void max_pool_2x2_planes_double(const double* input, size_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                                int64_t out_w, double* output, int64_t* indices) {
  max_pool_2x2_planes_loop(input, planes, in_h, in_w, out_h, out_w, output, indices);
}
void max_pool_2x2_planes_float_int32(const float* input, size_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                                     int64_t out_w, float* output, int32_t* indices) {
  max_pool_2x2_planes_loop(input, planes, in_h, in_w, out_h, out_w, output, indices);
}
// The LSTM cell's backward (formulas in vector_math.h), a row of H units at a time.
template <class T>
void lstm_cell_backward_loop(const T* act, const T* tanh_c, const T* cprev, const T* dh, const T* dc, size_t batch,
                             size_t hidden, T* dgates, T* dcprev) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d), H = hidden;
  const auto one = hn::Set(d, T(1));
  for (size_t b = 0; b < batch; ++b) {
    const T* a = act + b * 4 * H;
    const T *t = tanh_c + b * H, *cp = cprev + b * H;
    const T* dhr = dh != nullptr ? dh + b * H : nullptr;
    const T* dcr = dc != nullptr ? dc + b * H : nullptr;
    T* dg = dgates + b * 4 * H;
    T* dcx = dcprev + b * H;
    size_t j = 0;
    for (; j + lanes <= H; j += lanes) {
      const auto i = hn::LoadU(d, a + j), f = hn::LoadU(d, a + H + j), g = hn::LoadU(d, a + 2 * H + j),
                 o = hn::LoadU(d, a + 3 * H + j), tc = hn::LoadU(d, t + j);
      const auto dhv = dhr != nullptr ? hn::LoadU(d, dhr + j) : hn::Zero(d);
      const auto dcv = dcr != nullptr ? hn::LoadU(d, dcr + j) : hn::Zero(d);
      const auto dct = hn::MulAdd(hn::Mul(dhv, o), hn::NegMulAdd(tc, tc, one), dcv);
      hn::StoreU(hn::Mul(hn::Mul(dct, g), hn::Mul(i, hn::Sub(one, i))), d, dg + j);
      hn::StoreU(hn::Mul(hn::Mul(dct, hn::LoadU(d, cp + j)), hn::Mul(f, hn::Sub(one, f))), d, dg + H + j);
      hn::StoreU(hn::Mul(hn::Mul(dct, i), hn::NegMulAdd(g, g, one)), d, dg + 2 * H + j);
      hn::StoreU(hn::Mul(hn::Mul(dhv, tc), hn::Mul(o, hn::Sub(one, o))), d, dg + 3 * H + j);
      hn::StoreU(hn::Mul(dct, f), d, dcx + j);
    }
    for (; j < H; ++j) {
      const T i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j], tc = t[j];
      const T dhv = dhr != nullptr ? dhr[j] : T(0), dcv = dcr != nullptr ? dcr[j] : T(0);
      const T dct = dcv + dhv * o * (T(1) - tc * tc);
      dg[j] = dct * g * (i * (T(1) - i));
      dg[H + j] = dct * cp[j] * (f * (T(1) - f));
      dg[2 * H + j] = dct * i * (T(1) - g * g);
      dg[3 * H + j] = dhv * tc * (o * (T(1) - o));
      dcx[j] = dct * f;
    }
  }
}

void lstm_cell_backward_float(const float* act, const float* tanh_c, const float* cprev, const float* dh,
                              const float* dc, size_t batch, size_t hidden, float* dgates, float* dcprev) {
  lstm_cell_backward_loop(act, tanh_c, cprev, dh, dc, batch, hidden, dgates, dcprev);
}
void lstm_cell_backward_double(const double* act, const double* tanh_c, const double* cprev, const double* dh,
                               const double* dc, size_t batch, size_t hidden, double* dgates, double* dcprev) {
  lstm_cell_backward_loop(act, tanh_c, cprev, dh, dc, batch, hidden, dgates, dcprev);
}

const char* this_target_name() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace gradiens::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gradiens::kernels::cpu {

HWY_EXPORT(unary_math_float);
HWY_EXPORT(unary_math_double);
HWY_EXPORT(tanh_backward_float);
HWY_EXPORT(tanh_backward_double);
HWY_EXPORT(sigmoid_backward_float);
HWY_EXPORT(sigmoid_backward_double);
HWY_EXPORT(arith_float);
HWY_EXPORT(arith_double);
HWY_EXPORT(tanh_backward_backward_float);
HWY_EXPORT(tanh_backward_backward_double);
HWY_EXPORT(tanh_backward_backward_backward_float);
HWY_EXPORT(tanh_backward_backward_backward_double);
HWY_EXPORT(threshold_backward_float);
HWY_EXPORT(threshold_backward_double);
HWY_EXPORT(scaled_product_float);
HWY_EXPORT(scaled_product_double);
HWY_EXPORT(scaled_product_backward_float);
HWY_EXPORT(scaled_product_backward_double);
HWY_EXPORT(max_pool_2x2_planes_float);
HWY_EXPORT(max_pool_2x2_planes_float_int32);
HWY_EXPORT(max_pool_2x2_planes_double);
HWY_EXPORT(lstm_cell_backward_float);
HWY_EXPORT(lstm_cell_backward_double);
HWY_EXPORT(this_target_name);
HWY_EXPORT(half_to_float_loop);
HWY_EXPORT(float_to_half_loop);
HWY_EXPORT(bfloat16_to_float_loop);
HWY_EXPORT(float_to_bfloat16_loop);

namespace {
size_t checked_count(const char* function, int64_t n) {
  GD_CHECK(n >= 0, std::string(function) + ": element count must be non-negative, got " +
                       std::to_string(n));
  return static_cast<size_t>(n);
}
}  // namespace

void unary_math(UnaryMath op, const float* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(unary_math_float)(op, in, out, checked_count("unary_math", n));
}
void unary_math(UnaryMath op, const double* in, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(unary_math_double)(op, in, out, checked_count("unary_math", n));
}
void tanh_backward(const float* grad, const float* y, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(tanh_backward_float)(grad, y, out, checked_count("tanh_backward", n));
}
void tanh_backward(const double* grad, const double* y, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(tanh_backward_double)(grad, y, out, checked_count("tanh_backward", n));
}
void sigmoid_backward(const float* grad, const float* y, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(sigmoid_backward_float)(grad, y, out, checked_count("sigmoid_backward", n));
}
void sigmoid_backward(const double* grad, const double* y, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(sigmoid_backward_double)(grad, y, out,
                                                checked_count("sigmoid_backward", n));
}
void arith(Arith op, const float* a, const float* b, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(arith_float)(op, a, b, out, checked_count("arith", n));
}
void arith(Arith op, const double* a, const double* b, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(arith_double)(op, a, b, out, checked_count("arith", n));
}
void tanh_backward_backward(const float* gg, const float* grad, const float* y, float* d_grad, float* d_y, int64_t n,
                            uint32_t accumulate) {
  HWY_DYNAMIC_DISPATCH(tanh_backward_backward_float)(gg, grad, y, d_grad, d_y,
                                                     checked_count("tanh_backward_backward", n), accumulate);
}
void tanh_backward_backward(const double* gg, const double* grad, const double* y, double* d_grad, double* d_y,
                            int64_t n, uint32_t accumulate) {
  HWY_DYNAMIC_DISPATCH(tanh_backward_backward_double)(gg, grad, y, d_grad, d_y,
                                                      checked_count("tanh_backward_backward", n), accumulate);
}
void tanh_backward_backward_backward(const float* g_first, const float* g_second, const float* gg, const float* grad,
                                     const float* y, float* d_gg, float* d_grad, float* d_y, int64_t n,
                                     uint32_t accumulate) {
  HWY_DYNAMIC_DISPATCH(tanh_backward_backward_backward_float)(
      g_first, g_second, gg, grad, y, d_gg, d_grad, d_y, checked_count("tanh_backward_backward_backward", n),
      accumulate);
}
void tanh_backward_backward_backward(const double* g_first, const double* g_second, const double* gg,
                                     const double* grad, const double* y, double* d_gg, double* d_grad, double* d_y,
                                     int64_t n, uint32_t accumulate) {
  HWY_DYNAMIC_DISPATCH(tanh_backward_backward_backward_double)(
      g_first, g_second, gg, grad, y, d_gg, d_grad, d_y, checked_count("tanh_backward_backward_backward", n),
      accumulate);
}
void threshold_backward(const float* grad, const float* self, float threshold, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(threshold_backward_float)(grad, self, threshold, out, checked_count("threshold_backward", n));
}
void threshold_backward(const double* grad, const double* self, double threshold, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(threshold_backward_double)(grad, self, threshold, out, checked_count("threshold_backward", n));
}
void max_pool_2x2_planes(const float* input, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                         int64_t out_w, float* output, int64_t* indices) {
  HWY_DYNAMIC_DISPATCH(max_pool_2x2_planes_float)(input, checked_count("max_pool_2x2_planes", planes), in_h, in_w,
                                                  out_h, out_w, output, indices);
}
void max_pool_2x2_planes(const double* input, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                         int64_t out_w, double* output, int64_t* indices) {
  HWY_DYNAMIC_DISPATCH(max_pool_2x2_planes_double)(input, checked_count("max_pool_2x2_planes", planes), in_h, in_w,
                                                   out_h, out_w, output, indices);
}
void max_pool_2x2_planes(const float* input, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
                         int64_t out_w, float* output, int32_t* indices) {
  HWY_DYNAMIC_DISPATCH(max_pool_2x2_planes_float_int32)(input, checked_count("max_pool_2x2_planes", planes), in_h,
                                                        in_w, out_h, out_w, output, indices);
}
void lstm_cell_backward(const float* act, const float* tanh_c, const float* cprev, const float* dh, const float* dc,
                        int64_t batch, int64_t hidden, float* dgates, float* dcprev) {
  HWY_DYNAMIC_DISPATCH(lstm_cell_backward_float)(act, tanh_c, cprev, dh, dc, checked_count("lstm_cell_backward", batch),
                                                 checked_count("lstm_cell_backward", hidden), dgates, dcprev);
}
void lstm_cell_backward(const double* act, const double* tanh_c, const double* cprev, const double* dh,
                        const double* dc, int64_t batch, int64_t hidden, double* dgates, double* dcprev) {
  HWY_DYNAMIC_DISPATCH(lstm_cell_backward_double)(act, tanh_c, cprev, dh, dc,
                                                  checked_count("lstm_cell_backward", batch),
                                                  checked_count("lstm_cell_backward", hidden), dgates, dcprev);
}
void scaled_product(const float* a, const float* b, const float* c, float s, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(scaled_product_float)(a, b, c, s, out, checked_count("scaled_product", n));
}
void scaled_product(const double* a, const double* b, const double* c, double s, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(scaled_product_double)(a, b, c, s, out, checked_count("scaled_product", n));
}
void scaled_product_backward(const float* g, const float* a, const float* b, const float* c, float s, float* grad_a,
                             float* grad_b, float* grad_c, int64_t n, uint32_t accumulate) {
  HWY_DYNAMIC_DISPATCH(scaled_product_backward_float)(g, a, b, c, s, grad_a, grad_b, grad_c,
                                                      checked_count("scaled_product_backward", n), accumulate);
}
void scaled_product_backward(const double* g, const double* a, const double* b, const double* c, double s,
                             double* grad_a, double* grad_b, double* grad_c, int64_t n, uint32_t accumulate) {
  HWY_DYNAMIC_DISPATCH(scaled_product_backward_double)(g, a, b, c, s, grad_a, grad_b, grad_c,
                                                       checked_count("scaled_product_backward", n), accumulate);
}
const char* simd_target_name() { return HWY_DYNAMIC_DISPATCH(this_target_name)(); }

namespace {
// Runs a float32 kernel over 16-bit buffers a block at a time through stack
// buffers: one pass over memory, no allocation, one rounding per result.
constexpr int64_t kReducedBlock = 512;

template <class T, class Kernel>
void unary_through_float(const T* in, T* out, int64_t n, Kernel kernel) {
  float buffer[kReducedBlock];
  for (int64_t i = 0; i < n; i += kReducedBlock) {
    const int64_t m = std::min(kReducedBlock, n - i);
    convert(in + i, buffer, m);
    kernel(buffer, m);
    convert(buffer, out + i, m);
  }
}

template <class T, class Kernel>
void binary_through_float(const T* a, const T* b, T* out, int64_t n, Kernel kernel) {
  float buffer_a[kReducedBlock], buffer_b[kReducedBlock];
  for (int64_t i = 0; i < n; i += kReducedBlock) {
    const int64_t m = std::min(kReducedBlock, n - i);
    convert(a + i, buffer_a, m);
    convert(b + i, buffer_b, m);
    kernel(buffer_a, buffer_b, m);
    convert(buffer_a, out + i, m);
  }
}
}  // namespace

void unary_math(UnaryMath op, const Half* in, Half* out, int64_t n) {
  unary_through_float(in, out, n, [op](float* x, int64_t m) { unary_math(op, x, x, m); });
}
void unary_math(UnaryMath op, const BFloat16* in, BFloat16* out, int64_t n) {
  unary_through_float(in, out, n, [op](float* x, int64_t m) { unary_math(op, x, x, m); });
}
void tanh_backward(const Half* grad, const Half* y, Half* out, int64_t n) {
  binary_through_float(grad, y, out, n, [](float* g, const float* v, int64_t m) { tanh_backward(g, v, g, m); });
}
void tanh_backward(const BFloat16* grad, const BFloat16* y, BFloat16* out, int64_t n) {
  binary_through_float(grad, y, out, n, [](float* g, const float* v, int64_t m) { tanh_backward(g, v, g, m); });
}
void sigmoid_backward(const Half* grad, const Half* y, Half* out, int64_t n) {
  binary_through_float(grad, y, out, n, [](float* g, const float* v, int64_t m) { sigmoid_backward(g, v, g, m); });
}
void sigmoid_backward(const BFloat16* grad, const BFloat16* y, BFloat16* out, int64_t n) {
  binary_through_float(grad, y, out, n, [](float* g, const float* v, int64_t m) { sigmoid_backward(g, v, g, m); });
}

// Half and BFloat16 are their uint16_t bits (standard layout, first member).
void convert(const float* in, Half* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(float_to_half_loop)(in, reinterpret_cast<uint16_t*>(out), checked_count("convert", n));
}
void convert(const Half* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(half_to_float_loop)(reinterpret_cast<const uint16_t*>(in), out, checked_count("convert", n));
}
void convert(const float* in, BFloat16* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(float_to_bfloat16_loop)(in, reinterpret_cast<uint16_t*>(out), checked_count("convert", n));
}
void convert(const BFloat16* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(bfloat16_to_float_loop)(reinterpret_cast<const uint16_t*>(in), out,
                                               checked_count("convert", n));
}

}  // namespace gradiens::kernels::cpu
#endif  // HWY_ONCE
