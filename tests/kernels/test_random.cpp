// Tests for kernels/cpu/random: Philox known answers, the stream layout of
// Note [Philox stream layout], thread-count independence and statistics.
#include <Random123/philox.h>
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "kernels/cpu/random.h"
#include "kernels/error.h"

namespace {

using gradiens::kernels::cpu::fill_normal;
using gradiens::kernels::cpu::fill_randint;
using gradiens::kernels::cpu::fill_random_bits;
using gradiens::kernels::cpu::fill_uniform;
using gradiens::kernels::cpu::philox_block;
using gradiens::kernels::cpu::PhiloxState;
using Words = std::array<uint32_t, 4>;

constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ull;
constexpr int64_t kBig = 1'000'000;  // above the grain size, so the fills run threaded
constexpr double kSigmas = 5.0;
// Kolmogorov distribution: P(sqrt(n) * D > 1.95) is about 0.001.
constexpr double kKolmogorovCritical = 1.95;

// ---- helpers ---------------------------------------------------------------

template <class T>
bool bitwise_equal(const T* a, const T* b, int64_t n) {
  return n == 0 || std::memcmp(a, b, static_cast<size_t>(n) * sizeof(T)) == 0;
}

// Runs fill(out, n) with OpenMP limited to `threads`, restoring the old limit.
template <class T, class Fill>
std::vector<T> fill_with_threads(int threads, int64_t n, Fill fill) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  std::vector<T> out(static_cast<size_t>(n));
  fill(out.data(), n);
  omp_set_num_threads(saved);
  return out;
}

struct Moments {
  double mean;
  double variance;  // unbiased
};

template <class T>
Moments moments(const std::vector<T>& x) {
  double sum = 0;
  for (T v : x) sum += static_cast<double>(v);
  const double mean = sum / static_cast<double>(x.size());
  double squares = 0;
  for (T v : x) squares += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  return {mean, squares / static_cast<double>(x.size() - 1)};
}

// sqrt(n) * sup |F_n(x) - F(x)|, the Kolmogorov-Smirnov statistic scaled so
// that its distribution does not depend on n.
template <class T, class Cdf>
double scaled_ks_statistic(std::vector<T> x, Cdf cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(static_cast<double>(x[i]));
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return std::sqrt(n) * d;
}

// Mean and variance of n draws of a distribution with variance `var` and
// fourth central moment `mu4` against the truth, each within kSigmas
// standard errors: se(mean) = sqrt(var / n), se(s^2) ~ sqrt((mu4 - var^2) / n).
template <class T>
void check_moments(const std::vector<T>& x, double mean, double var, double mu4) {
  const double n = static_cast<double>(x.size());
  const Moments m = moments(x);
  CHECK(std::abs(m.mean - mean) < kSigmas * std::sqrt(var / n));
  CHECK(std::abs(m.variance - var) < kSigmas * std::sqrt((mu4 - var * var) / n));
}

template <class T>
void check_uniform_statistics(const std::vector<T>& x, double low, double high) {
  const double width = high - low;
  CHECK(static_cast<double>(*std::min_element(x.begin(), x.end())) >= low);
  CHECK(static_cast<double>(*std::max_element(x.begin(), x.end())) < high);
  check_moments(x, (low + high) / 2, width * width / 12, std::pow(width, 4) / 80);
  CHECK(scaled_ks_statistic(x, [&](double v) { return (v - low) / width; }) < kKolmogorovCritical);
}

template <class T>
void check_normal_statistics(const std::vector<T>& x, double mean, double std) {
  CHECK(std::all_of(x.begin(), x.end(), [](T v) { return std::isfinite(v); }));
  const double var = std * std;
  check_moments(x, mean, var, 3 * var * var);
  const auto cdf = [&](double v) { return 0.5 * std::erfc(-(v - mean) / (std * std::sqrt(2.0))); };
  CHECK(scaled_ks_statistic(x, cdf) < kKolmogorovCritical);
}

// The stream layout seen from outside: a fill is the prefix of any longer
// fill, and the fill that starts at offset + (blocks returned) continues the
// longer fill at the next block boundary, so consecutive fills never overlap.
template <class T, class Fill>
void check_stream_continues(Fill fill, int64_t per_block) {
  const PhiloxState s{kSeed, 11};
  for (int64_t n1 : {0, 1, 2, 3, 4, 5, 7, 8, 9}) {
    CAPTURE(n1);
    const int64_t n2 = 13;
    std::vector<T> first(static_cast<size_t>(n1) + 1), second(static_cast<size_t>(n2));
    const T sentinel = first.back();  // a tail block must not write past n
    const uint64_t used = fill(first.data(), n1, s);
    CHECK(used == static_cast<uint64_t>((n1 + per_block - 1) / per_block));
    CHECK(bitwise_equal(&first.back(), &sentinel, 1));
    CHECK(fill(second.data(), n2, PhiloxState{s.seed, s.offset + used}) ==
          static_cast<uint64_t>((n2 + per_block - 1) / per_block));

    const int64_t skip = static_cast<int64_t>(used) * per_block;
    std::vector<T> whole(static_cast<size_t>(skip + n2));
    fill(whole.data(), skip + n2, s);
    CHECK(bitwise_equal(first.data(), whole.data(), n1));
    CHECK(bitwise_equal(second.data(), whole.data() + skip, n2));
  }
}

Words philox(Words ctr, std::array<uint32_t, 2> key) {
  const r123::Philox4x32::ctr_type c = {{ctr[0], ctr[1], ctr[2], ctr[3]}};
  const r123::Philox4x32::key_type k = {{key[0], key[1]}};
  const auto out = r123::Philox4x32()(c, k);
  return {out[0], out[1], out[2], out[3]};
}

// Each fill with one signature, for the tests that run over all of them.
const auto uniform_f32 = [](float* o, int64_t n, PhiloxState s) { return fill_uniform(o, n, s, -2.f, 3.f); };
const auto uniform_f64 = [](double* o, int64_t n, PhiloxState s) { return fill_uniform(o, n, s, -2.0, 3.0); };
const auto normal_f32 = [](float* o, int64_t n, PhiloxState s) { return fill_normal(o, n, s, 1.5f, 2.f); };
const auto normal_f64 = [](double* o, int64_t n, PhiloxState s) { return fill_normal(o, n, s, 1.5, 2.0); };
const auto randint_i64 = [](int64_t* o, int64_t n, PhiloxState s) { return fill_randint(o, n, s, -7, 1000); };
const auto bits_u32 = [](uint32_t* o, int64_t n, PhiloxState s) { return fill_random_bits(o, n, s); };

}  // namespace

// ---- Philox itself -----------------------------------------------------------

TEST_CASE("random: Philox4x32-10 matches Random123's known-answer vectors") {
  // kat_vectors of Random123: counter, key -> output.
  CHECK(philox({0, 0, 0, 0}, {0, 0}) == Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("random: block b of (seed, offset) is Philox(counter offset + b, key seed)") {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  // Seed 0, offset 0 is the all-zero known answer, and fill_random_bits starts there.
  CHECK(philox_block({0, 0}, 0) == Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  std::array<uint32_t, 4> bits{};
  CHECK(fill_random_bits(bits.data(), 4, {0, 0}) == 1);
  CHECK(bits == Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});

  CHECK(philox_block({0x0123456789abcdefull, 0x1122334455667788ull}, 3) ==
        philox({0x5566778b, 0x11223344, 0, 0}, {0x89abcdef, 0x01234567}));
  CHECK(philox_block({1, 0xfffffffeull}, 1) == philox({0xffffffff, 0, 0, 0}, {1, 0}));
  CHECK(philox_block({1, kMax}, 0) == philox({0xffffffff, 0xffffffff, 0, 0}, {1, 0}));
  CHECK(philox_block({1, kMax}, 1) == philox({0, 0, 1, 0}, {1, 0}));  // carry into word 2
  // Both halves of the seed are key material.
  CHECK(philox_block({1, 0}, 0) != philox_block({1 + (1ull << 32), 0}, 0));
}

// ---- layout, offsets and edge cases -----------------------------------------

TEST_CASE("random: consecutive offsets give non-overlapping streams, tails stay in bounds") {
  check_stream_continues<float>(uniform_f32, 4);
  check_stream_continues<double>(uniform_f64, 2);
  check_stream_continues<float>(normal_f32, 4);
  check_stream_continues<double>(normal_f64, 2);
  check_stream_continues<int64_t>(randint_i64, 2);
  check_stream_continues<uint32_t>(bits_u32, 4);
}

TEST_CASE("random: the block count a fill returns is the one announced before it") {
  using gradiens::kernels::cpu::philox_blocks_for_32bit_draws;
  using gradiens::kernels::cpu::philox_blocks_for_64bit_draws;
  for (int64_t n : {0, 1, 3, 4, 5, 1001}) {
    CAPTURE(n);
    std::vector<float> f(static_cast<size_t>(n));
    std::vector<double> d(static_cast<size_t>(n));
    std::vector<int64_t> i(static_cast<size_t>(n));
    std::vector<uint32_t> u(static_cast<size_t>(n));
    const PhiloxState s{kSeed, 0};
    CHECK(fill_uniform(f.data(), n, s, 0.f, 1.f) == philox_blocks_for_32bit_draws(n));
    CHECK(fill_normal(f.data(), n, s, 0.f, 1.f) == philox_blocks_for_32bit_draws(n));
    CHECK(fill_random_bits(u.data(), n, s) == philox_blocks_for_32bit_draws(n));
    CHECK(fill_uniform(d.data(), n, s, 0.0, 1.0) == philox_blocks_for_64bit_draws(n));
    CHECK(fill_normal(d.data(), n, s, 0.0, 1.0) == philox_blocks_for_64bit_draws(n));
    CHECK(fill_randint(i.data(), n, s, 0, 10) == philox_blocks_for_64bit_draws(n));
  }
}

TEST_CASE("random: a fill of zero elements writes nothing and consumes nothing") {
  const PhiloxState s{kSeed, 0};
  CHECK(fill_uniform(static_cast<float*>(nullptr), 0, s, 0.f, 1.f) == 0);
  CHECK(fill_uniform(static_cast<double*>(nullptr), 0, s, 0.0, 1.0) == 0);
  CHECK(fill_normal(static_cast<float*>(nullptr), 0, s, 0.f, 1.f) == 0);
  CHECK(fill_normal(static_cast<double*>(nullptr), 0, s, 0.0, 1.0) == 0);
  CHECK(fill_randint(nullptr, 0, s, 0, 1) == 0);
  CHECK(fill_random_bits(nullptr, 0, s) == 0);
}

TEST_CASE("random: different seeds and offsets give different streams") {
  std::vector<uint32_t> a(1000), b(1000), c(1000);
  const uint64_t used = fill_random_bits(a.data(), 1000, {kSeed, 0});
  fill_random_bits(b.data(), 1000, {kSeed, used});
  fill_random_bits(c.data(), 1000, {kSeed + 1, 0});
  const std::set<uint32_t> first(a.begin(), a.end());
  CHECK(std::none_of(b.begin(), b.end(), [&](uint32_t v) { return first.count(v) > 0; }));
  CHECK(std::none_of(c.begin(), c.end(), [&](uint32_t v) { return first.count(v) > 0; }));
}

TEST_CASE("random: bad arguments are user errors") {
  float f = 0;
  double d = 0;
  int64_t i = 0;
  uint32_t u = 0;
  const PhiloxState s{kSeed, 0};
  const float inf = std::numeric_limits<float>::infinity();
  CHECK_THROWS_AS(fill_random_bits(&u, -1, s), gradiens::Error);
  CHECK_THROWS_AS(fill_uniform(&f, 1, s, 1.f, 1.f), gradiens::Error);
  CHECK_THROWS_AS(fill_uniform(&f, 1, s, 2.f, 1.f), gradiens::Error);
  CHECK_THROWS_AS(fill_uniform(&f, 1, s, -3e38f, 3e38f), gradiens::Error);  // width overflows
  CHECK_THROWS_AS(fill_uniform(&f, 1, s, 0.f, inf), gradiens::Error);
  CHECK_THROWS_AS(fill_uniform(&d, 1, s, std::nan(""), 1.0), gradiens::Error);
  CHECK_THROWS_AS(fill_normal(&f, 1, s, 0.f, -1.f), gradiens::Error);
  CHECK_THROWS_AS(fill_normal(&d, 1, s, 0.0, std::nan("")), gradiens::Error);
  CHECK_THROWS_AS(fill_normal(&d, 1, s, std::numeric_limits<double>::infinity(), 1.0), gradiens::Error);
  CHECK_THROWS_AS(fill_randint(&i, 1, s, 5, 5), gradiens::Error);
  CHECK_THROWS_WITH(fill_randint(&i, 1, s, 5, 4), "randint: expected low < high, got low=5 and high=4");
}

// ---- threads -------------------------------------------------------------------

TEST_CASE("random: output is identical for 1, 2 and 3 OpenMP threads (n = 1e6)") {
  const auto same_for_any_thread_count = [](auto fill, auto tag) {
    using T = decltype(tag);
    const auto run = [&](T* out, int64_t n) { fill(out, n, PhiloxState{kSeed, 42}); };
    const std::vector<T> one = fill_with_threads<T>(1, kBig, run);
    CHECK(bitwise_equal(one.data(), fill_with_threads<T>(2, kBig, run).data(), kBig));
    CHECK(bitwise_equal(one.data(), fill_with_threads<T>(3, kBig, run).data(), kBig));
  };
  same_for_any_thread_count(uniform_f32, float{});
  same_for_any_thread_count(uniform_f64, double{});
  same_for_any_thread_count(normal_f32, float{});
  same_for_any_thread_count(normal_f64, double{});
  same_for_any_thread_count(randint_i64, int64_t{});
  same_for_any_thread_count(bits_u32, uint32_t{});
}

// ---- statistics (n = 1e6, bounds of kSigmas standard errors) --------------------

TEST_CASE("random: uniform float32 and float64 on [-2, 3)") {
  std::vector<float> f(kBig);
  std::vector<double> d(kBig);
  fill_uniform(f.data(), kBig, {kSeed, 0}, -2.f, 3.f);
  fill_uniform(d.data(), kBig, {kSeed, 0}, -2.0, 3.0);
  check_uniform_statistics(f, -2.0, 3.0);
  check_uniform_statistics(d, -2.0, 3.0);
}

TEST_CASE("random: float64 uniform has 53-bit resolution") {
  // With 53 random bits, u * 2^53 is an integer that uses the low bits too;
  // a 32-bit uniform would leave the low 21 bits all zero.
  std::vector<double> d(1000);
  fill_uniform(d.data(), 1000, {kSeed, 0}, 0.0, 1.0);
  uint64_t low_bits = 0;
  for (double v : d) low_bits |= static_cast<uint64_t>(v * 0x1p53) & ((1ull << 21) - 1);
  CHECK(low_bits == (1ull << 21) - 1);
}

TEST_CASE("random: uniform never returns high, even when low + u * width rounds up to it") {
  // Width of one ulp: every u >= 1/2 rounds to high before the clamp.
  std::vector<float> f(10000);
  std::vector<double> d(10000);
  fill_uniform(f.data(), 10000, {kSeed, 0}, 1.f, std::nextafter(1.f, 2.f));
  fill_uniform(d.data(), 10000, {kSeed, 0}, 1.0, std::nextafter(1.0, 2.0));
  CHECK(std::all_of(f.begin(), f.end(), [](float v) { return v == 1.f; }));
  CHECK(std::all_of(d.begin(), d.end(), [](double v) { return v == 1.0; }));
  // A few ulps wide at a large magnitude: both ends of [1e6, 1e6 + 4 ulp).
  const float low = 1e6f, high = 1e6f + 0.25f;
  fill_uniform(f.data(), 10000, {kSeed, 1}, low, high);
  CHECK(std::all_of(f.begin(), f.end(), [&](float v) { return v >= low && v < high; }));
  CHECK(*std::min_element(f.begin(), f.end()) == low);
  CHECK(*std::max_element(f.begin(), f.end()) == std::nextafter(high, low));
}

TEST_CASE("random: normal float32 and float64 (mean 1.5, std 2)") {
  std::vector<float> f(kBig);
  std::vector<double> d(kBig);
  fill_normal(f.data(), kBig, {kSeed, 0}, 1.5f, 2.f);
  fill_normal(d.data(), kBig, {kSeed, 0}, 1.5, 2.0);
  check_normal_statistics(f, 1.5, 2.0);
  check_normal_statistics(d, 1.5, 2.0);
  // u1 >= 2^-24 (float) or 2^-53 (double) bounds the Box-Muller radius: no log(0).
  const double float_radius = std::sqrt(-2 * std::log(0x1p-24));
  const double double_radius = std::sqrt(-2 * std::log(0x1p-53));
  const auto within = [](double radius) { return [=](auto v) { return std::abs(v - 1.5) <= 2 * radius; }; };
  CHECK(std::all_of(f.begin(), f.end(), within(float_radius * (1 + 1e-6))));
  CHECK(std::all_of(d.begin(), d.end(), within(double_radius * (1 + 1e-12))));
}

TEST_CASE("random: float32 normal stays finite when a Box-Muller word is all zero bits") {
  // Found by search: word 2 of this block has its top 24 bits zero, the word
  // a 24-bit u1 = bits * 2^-24 would turn into log(0).
  const PhiloxState s{kSeed, 1904343};
  REQUIRE((philox_block(s, 0)[2] >> 8) == 0);
  std::array<float, 4> z{};
  fill_normal(z.data(), 4, s, 0.f, 1.f);
  CHECK(std::all_of(z.begin(), z.end(), [](float v) { return std::isfinite(v); }));
  CHECK(std::hypot(z[2], z[3]) == doctest::Approx(std::sqrt(-2 * std::log(0x1p-24))).epsilon(1e-6));
}

TEST_CASE("random: normal with std 0 is the mean") {
  std::vector<double> d(9);
  fill_normal(d.data(), 9, {kSeed, 0}, -4.0, 0.0);
  CHECK(std::all_of(d.begin(), d.end(), [](double v) { return v == -4.0; }));
}

TEST_CASE("random: randint on [-3, 7) hits every value equally often") {
  std::vector<int64_t> x(kBig);
  fill_randint(x.data(), kBig, {kSeed, 0}, -3, 7);
  REQUIRE(std::all_of(x.begin(), x.end(), [](int64_t v) { return v >= -3 && v < 7; }));
  std::array<int64_t, 10> counts{};
  for (int64_t v : x) ++counts[static_cast<size_t>(v + 3)];
  const double expected = kBig / 10.0, sd = std::sqrt(kBig * 0.1 * 0.9);
  for (int64_t c : counts) CHECK(std::abs(static_cast<double>(c) - expected) < kSigmas * sd);
}

TEST_CASE("random: randint spans the widest int64 range and width 1") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> x(kBig);
  fill_randint(x.data(), kBig, {kSeed, 0}, kMin, kMax);
  std::vector<double> scaled(x.size());  // onto [-1, 1)
  for (size_t k = 0; k < x.size(); ++k) scaled[k] = static_cast<double>(x[k]) * 0x1p-63;
  CHECK(*std::max_element(x.begin(), x.end()) < kMax);
  check_moments(scaled, 0.0, 1.0 / 3, 1.0 / 5);

  fill_randint(x.data(), 1000, {kSeed, 0}, kMax - 1, kMax);
  CHECK(std::all_of(x.begin(), x.begin() + 1000, [](int64_t v) { return v == kMax - 1; }));
}

TEST_CASE("random: every bit of the raw words is set half the time") {
  std::vector<uint32_t> x(kBig);
  fill_random_bits(x.data(), kBig, {kSeed, 0});
  const double expected = kBig / 2.0, sd = std::sqrt(kBig * 0.25);
  for (int bit = 0; bit < 32; ++bit) {
    CAPTURE(bit);
    int64_t set = 0;
    for (uint32_t v : x) set += (v >> bit) & 1u;
    CHECK(std::abs(static_cast<double>(set) - expected) < kSigmas * sd);
  }
}
