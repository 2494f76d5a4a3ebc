// Philox4x32-10 random fills on the CPU; the stream layout they all share is
// Note [Philox stream layout] in random.h.
#include "kernels/cpu/random.h"

#include "kernels/cpu/parallel.h"

#include <Random123/philox.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/error.h"

namespace gradiens::kernels::cpu {
namespace {

// Below this many elements a fill stays on one thread: starting a team costs
// more than the Philox rounds it would share out.
constexpr int64_t kGrainSize = 32768;

using Words = std::array<uint32_t, 4>;

Words philox_words(uint64_t seed, uint64_t offset, uint64_t block) {
  const uint64_t counter = offset + block;
  const uint32_t carry = counter < offset ? 1u : 0u;  // 128-bit counter: offset + block
  const r123::Philox4x32::ctr_type ctr = {
      {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), carry, 0u}};
  const r123::Philox4x32::key_type key = {
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  const r123::Philox4x32::ctr_type out = r123::Philox4x32()(ctr, key);
  return {out[0], out[1], out[2], out[3]};
}

// Runs emit(words, first, count) for every block of an n-element fill that
// takes kPerBlock elements per block: the block's words, the index of its
// first element and how many of its elements exist (fewer in the tail).
// Returns the blocks consumed. Each block depends only on its index, so the
// split across threads never changes the result.
template <int kPerBlock, class Emit>
uint64_t for_each_block(const char* name, int64_t n, PhiloxState s, Emit emit) {
  GD_CHECK(n >= 0, fmt::format("{}: expected a non-negative number of elements, got {}", name, n));
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
#pragma omp parallel for schedule(static) if (n > kGrainSize) num_threads(num_threads())
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t first = b * kPerBlock;
    const int count = static_cast<int>(std::min<int64_t>(kPerBlock, n - first));
    emit(philox_words(s.seed, s.offset, static_cast<uint64_t>(b)), first, count);
  }
  return static_cast<uint64_t>(blocks);
}

// High 64 bits of the 128-bit product (GCC/Clang extension; __extension__ keeps -Wpedantic quiet).
uint64_t mul_high(uint64_t a, uint64_t b) {
  __extension__ using Uint128 = unsigned __int128;
  return static_cast<uint64_t>((static_cast<Uint128>(a) * b) >> 64);
}

uint64_t join64(uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; }

// [0, 1) and (0, 1] with the full mantissa of the type.
float unit_float(uint32_t w) { return static_cast<float>(w >> 8) * 0x1p-24f; }
float unit_float_open_below(uint32_t w) { return static_cast<float>((w >> 8) + 1) * 0x1p-24f; }
double unit_double(uint64_t w) { return static_cast<double>(w >> 11) * 0x1p-53; }
double unit_double_open_below(uint64_t w) { return static_cast<double>((w >> 11) + 1) * 0x1p-53; }

// low + u * (high - low) can round up to high when u is just below 1; the
// documented range is half-open, so that one value steps back by an ulp.
template <class T>
T scale_half_open(T u, T low, T high) {
  const T y = low + u * (high - low);
  return y < high ? y : std::nextafter(high, low);
}

template <class T>
void check_uniform_range(T low, T high) {
  GD_CHECK(low < high, fmt::format("uniform: expected low < high, got low={} and high={}", low, high));
  GD_CHECK(std::isfinite(high - low),
           fmt::format("uniform: high - low must be finite, got low={} and high={}", low, high));
}

template <class T>
void check_normal_params(T mean, T std) {
  GD_CHECK(std::isfinite(mean), fmt::format("normal: expected a finite mean, got {}", mean));
  GD_CHECK(std >= 0 && std::isfinite(std), fmt::format("normal: expected a finite std >= 0, got {}", std));
}

// Box-Muller: u1 in (0, 1], so the log never sees 0; returns {r cos, r sin}.
template <class T>
std::array<T, 2> box_muller(T u1, T u2) {
  const T radius = std::sqrt(T(-2) * std::log(u1));
  const T theta = T(2) * std::numbers::pi_v<T> * u2;
  return {radius * std::cos(theta), radius * std::sin(theta)};
}

}  // namespace

std::array<uint32_t, 4> philox_block(PhiloxState s, uint64_t block) {
  return philox_words(s.seed, s.offset, block);
}

uint64_t fill_random_bits(uint32_t* out, int64_t n, PhiloxState s) {
  return for_each_block<4>("random_bits", n, s, [&](const Words& w, int64_t first, int count) {
    for (int k = 0; k < count; ++k) out[first + k] = w[k];
  });
}

uint64_t fill_uniform(float* out, int64_t n, PhiloxState s, float low, float high) {
  check_uniform_range(low, high);
  return for_each_block<4>("uniform", n, s, [&](const Words& w, int64_t first, int count) {
    for (int k = 0; k < count; ++k) out[first + k] = scale_half_open(unit_float(w[k]), low, high);
  });
}

uint64_t fill_uniform(double* out, int64_t n, PhiloxState s, double low, double high) {
  check_uniform_range(low, high);
  return for_each_block<2>("uniform", n, s, [&](const Words& w, int64_t first, int count) {
    for (int k = 0; k < count; ++k) {
      out[first + k] = scale_half_open(unit_double(join64(w[2 * k], w[2 * k + 1])), low, high);
    }
  });
}

uint64_t fill_normal(float* out, int64_t n, PhiloxState s, float mean, float std) {
  check_normal_params(mean, std);
  return for_each_block<4>("normal", n, s, [&](const Words& w, int64_t first, int count) {
    for (int pair = 0; 2 * pair < count; ++pair) {  // words 2p, 2p+1 give elements 2p, 2p+1
      const auto z = box_muller(unit_float_open_below(w[2 * pair]), unit_float(w[2 * pair + 1]));
      out[first + 2 * pair] = mean + std * z[0];
      if (2 * pair + 1 < count) out[first + 2 * pair + 1] = mean + std * z[1];
    }
  });
}

uint64_t fill_normal(double* out, int64_t n, PhiloxState s, double mean, double std) {
  check_normal_params(mean, std);
  return for_each_block<2>("normal", n, s, [&](const Words& w, int64_t first, int count) {
    const auto z = box_muller(unit_double_open_below(join64(w[0], w[1])), unit_double(join64(w[2], w[3])));
    for (int k = 0; k < count; ++k) out[first + k] = mean + std * z[k];
  });
}

uint64_t fill_randint(int64_t* out, int64_t n, PhiloxState s, int64_t low, int64_t high) {
  GD_CHECK(low < high, fmt::format("randint: expected low < high, got low={} and high={}", low, high));
  // The width as unsigned: high - low can exceed INT64_MAX (up to 2^64 - 1).
  const uint64_t width = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return for_each_block<2>("randint", n, s, [&](const Words& w, int64_t first, int count) {
    for (int k = 0; k < count; ++k) {
      const uint64_t draw = join64(w[2 * k], w[2 * k + 1]);
      // Unsigned so the sum wraps mod 2^64; the result lies in [low, high), so it fits.
      out[first + k] = static_cast<int64_t>(static_cast<uint64_t>(low) + mul_high(draw, width));
    }
  });
}

}  // namespace gradiens::kernels::cpu
