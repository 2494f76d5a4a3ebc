// Half and BFloat16 value types: exhaustive round trips, round-to-nearest-even
// against PyTorch's bits, numeric_limits, float32 arithmetic, and the
// vectorized bulk conversions against the scalar ones.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "hwy/targets.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/reduced_float.h"
#include "tests/kernels/simd_targets.h"

namespace gd = gradiens;
using gd::BFloat16;
using gd::Half;

namespace {

Half half_bits(uint16_t b) { return Half(b, Half::from_bits()); }
BFloat16 bf16_bits(uint16_t b) { return BFloat16(b, BFloat16::from_bits()); }
bool is_half_nan(uint16_t b) { return (b & 0x7C00) == 0x7C00 && (b & 0x03FF) != 0; }
bool is_bf16_nan(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0; }

// binary16 decoded from its fields (closed form): subnormal m 2^-24, normal (1 + m/1024) 2^(e-15).
double half_value(uint16_t b) {
  const int e = (b >> 10) & 0x1F, m = b & 0x3FF;
  const double sign = (b & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

using gd::testing::for_each_simd_target;  // tests/kernels/simd_targets.h

}  // namespace

TEST_CASE("Half: every bit pattern converts to its exact value and back to itself") {
  int mismatches = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float f = half_bits(bits);
    if (is_half_nan(bits)) {
      mismatches += !std::isnan(f) || !std::isnan(float(Half(f)));
      continue;
    }
    mismatches += static_cast<double>(f) != half_value(bits) || std::signbit(f) != bool(bits & 0x8000);
    mismatches += Half(f).x != bits;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("BFloat16: every bit pattern converts to float and back to itself") {
  int mismatches = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float f = bf16_bits(bits);
    if (is_bf16_nan(bits)) {
      mismatches += !std::isnan(f) || !std::isnan(float(BFloat16(f)));
      continue;
    }
    mismatches += std::bit_cast<uint32_t>(f) != (b << 16);
    mismatches += BFloat16(f).x != bits;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("Half and BFloat16 round float32 to nearest even, as PyTorch") {
  // python3 -c "import torch; x = torch.tensor(cases, dtype=torch.float32);
  //             print(x.half().view(torch.int16), x.bfloat16().view(torch.int16))"
  struct Case {
    float value;
    uint16_t half, bf16;
  };
  const Case cases[] = {
      {1.0f, 0x3C00, 0x3F80},
      {1.0f + 0x1p-11f, 0x3C00, 0x3F80},             // half tie: to even (down)
      {1.0f + 3 * 0x1p-11f, 0x3C02, 0x3F80},         // half tie: to even (up)
      {1.0f + 0x1p-11f + 0x1p-23f, 0x3C01, 0x3F80},  // just above the tie
      {1.0f - 0x1p-12f, 0x3C00, 0x3F80},
      {65504.0f, 0x7BFF, 0x4780},                    // half's largest finite
      {65519.99609375f, 0x7BFF, 0x4780},             // just below the overflow tie
      {65520.0f, 0x7C00, 0x4780},                    // the tie rounds to inf
      {1e6f, 0x7C00, 0x4974},
      {-65520.0f, 0xFC00, 0xC780},
      {0x1p-24f, 0x0001, 0x3380},                    // half's smallest subnormal
      {0x1p-25f, 0x0000, 0x3300},                    // tie with 0: to even
      {0x1p-25f + 0x1p-40f, 0x0001, 0x3300},
      {3 * 0x1p-25f, 0x0002, 0x33C0},                // subnormal tie: to even (up)
      {0x1p-26f, 0x0000, 0x3280},
      {1023.5f * 0x1p-24f, 0x0400, 0x3880},          // largest subnormal tie: up to the smallest normal
      {1022.5f * 0x1p-24f, 0x03FE, 0x3880},
      {0x1p-14f, 0x0400, 0x3880},
      {0x1p-14f - 0x1p-25f, 0x0400, 0x3880},
      {-0.0f, 0x8000, 0x8000},
      {INFINITY, 0x7C00, 0x7F80},
      {-INFINITY, 0xFC00, 0xFF80},
      {0.1f, 0x2E66, 0x3DCD},
      {-2.5f, 0xC100, 0xC020},
      {3.14159265f, 0x4248, 0x4049},
  };
  for (const Case& c : cases) {
    CAPTURE(c.value);
    CHECK(Half(c.value).x == c.half);
    CHECK(BFloat16(c.value).x == c.bf16);
  }
}

TEST_CASE("BFloat16 rounding near its ties, its overflow and float32 subnormals, as PyTorch") {
  // python3 -c "import torch; print(torch.tensor(cases, dtype=torch.float32).bfloat16().view(torch.int16))"
  struct Case {
    uint32_t float_bits;
    uint16_t bf16;
  };
  const Case cases[] = {
      {0x3F808000, 0x3F80},  // 1 + 2^-8: tie, to even (down)
      {0x3F818000, 0x3F82},  // 1 + 3 2^-8: tie, to even (up)
      {0x3F808001, 0x3F81},
      {0x7F7F0000, 0x7F7F},  // bfloat16's largest finite
      {0x7F7F7FFF, 0x7F7F},
      {0x7F7F8000, 0x7F80},  // the overflow tie rounds to inf
      {0x7F7FFFFF, 0x7F80},  // float32's largest finite
      {0x00010000, 0x0001},  // float32 subnormals keep their top bits
      {0x00008000, 0x0000},
      {0x00018000, 0x0002},
      {0x000116C2, 0x0001},
  };
  for (const Case& c : cases) {
    CAPTURE(c.float_bits);
    CHECK(BFloat16(std::bit_cast<float>(c.float_bits)).x == c.bf16);
  }
}

TEST_CASE("NaN stays NaN: PyTorch's quiet NaNs") {
  // torch.tensor([nan, -nan]).half().view(torch.int16) is [0x7E00, 0xFE00].
  CHECK(Half(NAN).x == 0x7E00);
  CHECK(Half(-NAN).x == 0xFE00);
  CHECK(Half(std::bit_cast<float>(0x7F800001u)).x == 0x7E00);  // a signaling NaN
  // c10::BFloat16(nan) is 0x7FC0 whatever the sign.
  CHECK(BFloat16(NAN).x == 0x7FC0);
  CHECK(BFloat16(-NAN).x == 0x7FC0);
  CHECK(std::isnan(float(half_bits(0x7C01))));
  CHECK(std::isnan(float(bf16_bits(0xFF81))));
}

TEST_CASE("numeric_limits of Half and BFloat16") {
  using HL = std::numeric_limits<Half>;
  using BL = std::numeric_limits<BFloat16>;
  CHECK(float(HL::max()) == 65504.0f);
  CHECK(float(HL::lowest()) == -65504.0f);
  CHECK(float(HL::min()) == 0x1p-14f);
  CHECK(float(HL::denorm_min()) == 0x1p-24f);
  CHECK(float(HL::epsilon()) == 0x1p-10f);
  CHECK(std::isinf(float(HL::infinity())));
  CHECK(std::isnan(float(HL::quiet_NaN())));
  CHECK(HL::digits == 11);
  CHECK(float(BL::max()) == std::bit_cast<float>(0x7F7F0000u));
  CHECK(float(BL::min()) == std::numeric_limits<float>::min());
  CHECK(float(BL::epsilon()) == 0x1p-7f);
  CHECK(float(BL::denorm_min()) == std::bit_cast<float>(0x00010000u));
  CHECK(std::isinf(float(BL::infinity())));
  CHECK(std::isnan(float(BL::quiet_NaN())));
  CHECK(BL::digits == 8);
}

TEST_CASE("Half arithmetic is float32 arithmetic, rounded once when stored") {
  const Half a(0.1f), b(0.2f);
  static_assert(std::is_same_v<decltype(a + b), float>);
  static_assert(std::is_same_v<gd::opmath_t<Half>, float> && std::is_same_v<gd::opmath_t<double>, double>);
  CHECK(a + b == float(a) + float(b));
  CHECK(Half(a + b).x == Half(float(a) + float(b)).x);
  // 2048 + 1 is not a half: compound assignment rounds (to even, back to 2048).
  Half acc(2048.0f);
  acc += 1.0f;
  CHECK(float(acc) == 2048.0f);
  acc += 3.0f;
  CHECK(float(acc) == 2052.0f);
  BFloat16 x(1.0f);
  x *= 3.0f;
  CHECK(float(x) == 3.0f);
  CHECK(a < b);
  CHECK(std::abs(Half(-1.5f)) == 1.5f);
  CHECK(std::isnan(Half(NAN)));
}

TEST_CASE("bulk conversions give the scalar conversions' bits on every SIMD target and length") {
  std::vector<uint16_t> patterns(65536);
  for (uint32_t b = 0; b < 65536; ++b) patterns[b] = static_cast<uint16_t>(b);
  std::mt19937 rng(7);
  std::vector<float> random_floats(4099);  // every class: subnormal, normal, inf, NaN
  for (float& v : random_floats) v = std::bit_cast<float>(static_cast<uint32_t>(rng()));

  const std::vector<std::string> targets = for_each_simd_target([&] {
    // All 65536 patterns of each 16-bit type to float32 and back.
    std::vector<float> widened(65536);
    std::vector<uint16_t> narrowed(65536);
    int mismatches = 0;
    gd::kernels::cpu::convert(reinterpret_cast<const Half*>(patterns.data()), widened.data(), 65536);
    for (uint32_t b = 0; b < 65536; ++b) {
      const float want = half_bits(static_cast<uint16_t>(b));
      const bool same = std::bit_cast<uint32_t>(widened[b]) == std::bit_cast<uint32_t>(want);
      mismatches += std::isnan(want) ? !std::isnan(widened[b]) : !same;
    }
    gd::kernels::cpu::convert(widened.data(), reinterpret_cast<Half*>(narrowed.data()), 65536);
    for (uint32_t b = 0; b < 65536; ++b) mismatches += narrowed[b] != Half(widened[b]).x;
    gd::kernels::cpu::convert(reinterpret_cast<const BFloat16*>(patterns.data()), widened.data(), 65536);
    for (uint32_t b = 0; b < 65536; ++b) mismatches += std::bit_cast<uint32_t>(widened[b]) != (b << 16);
    CHECK(mismatches == 0);

    // Random float32 bits at lengths that leave partial vectors.
    for (int64_t n : {0, 1, 3, 7, 15, 17, 33, 100, 4099}) {
      CAPTURE(n);
      std::vector<Half> h(static_cast<size_t>(n));
      std::vector<BFloat16> bf(static_cast<size_t>(n));
      gd::kernels::cpu::convert(random_floats.data(), h.data(), n);
      gd::kernels::cpu::convert(random_floats.data(), bf.data(), n);
      int bad = 0;
      for (size_t i = 0; i < h.size(); ++i)
        bad += h[i].x != Half(random_floats[i]).x || bf[i].x != BFloat16(random_floats[i]).x;
      CHECK(bad == 0);
    }
  });
  MESSAGE("conversions checked on ", targets.size(), " SIMD targets");
  CHECK(!targets.empty());
}
