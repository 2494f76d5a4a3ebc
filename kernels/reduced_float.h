// Half (IEEE binary16) and BFloat16 (the top 16 bits of a float32): storage
// types whose arithmetic is float32. Each converts to float implicitly, so
// `a + b` on two Halves is a float32 sum that rounds once when stored back.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace gradiens {

namespace detail {

inline float float_from_bits(uint32_t w) { return std::bit_cast<float>(w); }
inline uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }

// Note [Half conversion by float arithmetic]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Both directions are the branch-free algorithms of the FP16 library (which
// c10::Half uses), so results match PyTorch bit for bit: the rounding of
// float32 -> float16 is done by the FPU's own round-to-nearest-even in one
// float addition that lines the value's significand up with half's. They use
// only normal float32 intermediates (correct under flush-to-zero), and
// kernels/cpu/vector_math.cpp runs the same steps on SIMD lanes.
//   half -> float: exact. Normal values rebias the exponent by a multiply by
//     2^-112 (inf and NaN stay inf and NaN); a subnormal with significand m is
//     (0.5 + m * 2^-24) - 0.5, m written into the low bits of a float in [0.5, 1).
//   float -> half: round-to-nearest-even; above 65504 + half an ulp gives inf;
//     NaN gives the quiet NaN 0x7E00 with the input's sign.
inline float half_bits_to_float(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const uint32_t normalized = float_bits(float_from_bits((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f);
  const uint32_t denormalized = float_bits(float_from_bits((two_w >> 17) | (126u << 23)) - 0.5f);
  // Both candidates are computed and picked by a mask, not a branch: a loop of
  // conversions then vectorizes (GCC will not if-convert float ops that may trap).
  const uint32_t subnormal = 0u - static_cast<uint32_t>(two_w < (1u << 27));
  return float_from_bits(sign | (denormalized & subnormal) | (normalized & ~subnormal));
}

inline uint16_t float_to_half_bits(float f) {
  const uint32_t w = float_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  // |f| scaled up (values beyond half's range overflow to inf here) and back.
  float base = (float_from_bits(w & 0x7FFFFFFFu) * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;  // half's subnormals share one exponent
  base = float_from_bits((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = float_bits(base);
  const uint32_t nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
  const uint32_t nan = 0u - static_cast<uint32_t>(shl1_w > 0xFF000000u);  // a mask, as above
  return static_cast<uint16_t>((sign >> 16) | (0x7E00u & nan) | (nonsign & ~nan));
}

inline float bfloat16_bits_to_float(uint16_t b) { return float_from_bits(static_cast<uint32_t>(b) << 16); }

// Round-to-nearest-even on the dropped 16 bits; the carry walks into the
// exponent, so the largest finite floats round to inf. NaN becomes 0x7FC0.
inline uint16_t float_to_bfloat16_bits(float f) {
  if (f != f) return 0x7FC0u;
  const uint32_t w = float_bits(f);
  return static_cast<uint16_t>((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16);
}

}  // namespace detail

// A float16 value. Arithmetic on Halves is float arithmetic (no operators of
// its own); compound assignments round the float result back.
struct alignas(2) Half {
  uint16_t x;

  struct FromBits {};
  static constexpr FromBits from_bits() { return {}; }

  Half() = default;
  constexpr Half(uint16_t bits, FromBits) : x(bits) {}
  Half(float value) : x(detail::float_to_half_bits(value)) {}
  operator float() const { return detail::half_bits_to_float(x); }

  Half& operator+=(float v) { return *this = Half(float(*this) + v); }
  Half& operator-=(float v) { return *this = Half(float(*this) - v); }
  Half& operator*=(float v) { return *this = Half(float(*this) * v); }
  Half& operator/=(float v) { return *this = Half(float(*this) / v); }
};

// A bfloat16 value: float32's sign, exponent and top 7 significand bits.
struct alignas(2) BFloat16 {
  uint16_t x;

  struct FromBits {};
  static constexpr FromBits from_bits() { return {}; }

  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, FromBits) : x(bits) {}
  BFloat16(float value) : x(detail::float_to_bfloat16_bits(value)) {}
  operator float() const { return detail::bfloat16_bits_to_float(x); }

  BFloat16& operator+=(float v) { return *this = BFloat16(float(*this) + v); }
  BFloat16& operator-=(float v) { return *this = BFloat16(float(*this) - v); }
  BFloat16& operator*=(float v) { return *this = BFloat16(float(*this) * v); }
  BFloat16& operator/=(float v) { return *this = BFloat16(float(*this) / v); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);
static_assert(std::is_trivially_copyable_v<Half> && std::is_trivially_copyable_v<BFloat16>);

template <class T>
inline constexpr bool is_reduced_floating_point_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
// std::is_floating_point_v plus the reduced types (std's trait may not be specialized).
template <class T>
inline constexpr bool is_floating_type_v = std::is_floating_point_v<T> || is_reduced_floating_point_v<T>;

// Note [Reduced floats compute in float32]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An op on float16/bfloat16 tensors computes in float32 and rounds each stored
// result once, as PyTorch 2 does on the CPU; only the storage is 16-bit.
//  - Elementwise loops dispatch with dispatch_*_and_reduced and compute in
//    opmath_t<T> (a scalar operand stays a float32, not rounded to T first).
//  - Accumulators (sum, prod, cumsum, norm) are double, as for float32.
//  - Ops whose kernel exists only for float32/float64 (the vectorized math,
//    softmax, GEMM) or that are composites of several ops (mean, var, std,
//    logsumexp) run once on a float32 copy and round the result.
//  - LAPACK-backed linalg, convolution and pooling refuse them with an error.

// The type a kernel computes in for storage type T: float for Half and
// BFloat16 (one rounding per stored result, as PyTorch's opmath_type), T otherwise.
template <class T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <class T>
using opmath_t = typename OpMath<T>::type;

}  // namespace gradiens

namespace gradiens::detail {
// The numeric_limits traits Half and BFloat16 share: signed binary floating
// types with infinities, NaNs and subnormals, rounding to nearest.
struct ReducedFloatLimits {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int radix = 2;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
};
}  // namespace gradiens::detail

namespace std {

template <>
class numeric_limits<gradiens::Half> : public gradiens::detail::ReducedFloatLimits {
  using H = gradiens::Half;
  static constexpr H bits(uint16_t b) { return H(b, H::from_bits()); }

 public:
  static constexpr bool is_iec559 = true;
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr int min_exponent = -13;
  static constexpr int min_exponent10 = -4;
  static constexpr int max_exponent = 16;
  static constexpr int max_exponent10 = 4;
  static constexpr H min() { return bits(0x0400); }
  static constexpr H lowest() { return bits(0xFBFF); }
  static constexpr H max() { return bits(0x7BFF); }
  static constexpr H epsilon() { return bits(0x1400); }
  static constexpr H round_error() { return bits(0x3800); }
  static constexpr H infinity() { return bits(0x7C00); }
  static constexpr H quiet_NaN() { return bits(0x7E00); }
  static constexpr H signaling_NaN() { return bits(0x7D00); }
  static constexpr H denorm_min() { return bits(0x0001); }
};

template <>
class numeric_limits<gradiens::BFloat16> : public gradiens::detail::ReducedFloatLimits {
  using B = gradiens::BFloat16;
  static constexpr B bits(uint16_t b) { return B(b, B::from_bits()); }

 public:
  static constexpr bool is_iec559 = false;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int min_exponent = -125;
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr B min() { return bits(0x0080); }
  static constexpr B lowest() { return bits(0xFF7F); }
  static constexpr B max() { return bits(0x7F7F); }
  static constexpr B epsilon() { return bits(0x3C00); }
  static constexpr B round_error() { return bits(0x3F00); }
  static constexpr B infinity() { return bits(0x7F80); }
  static constexpr B quiet_NaN() { return bits(0x7FC0); }
  static constexpr B signaling_NaN() { return bits(0x7FA0); }
  static constexpr B denorm_min() { return bits(0x0001); }
};

}  // namespace std
