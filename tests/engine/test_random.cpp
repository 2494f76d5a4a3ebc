// Tests for Generator, manual_seed and the random ops: the Philox stream
// contract, determinism across thread counts, statistics, state save/restore,
// the in-place rules and PyTorch's error messages.
#include <doctest/doctest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "engine/generator.h"
#include "engine/tensor_data.h"
#include "gradiens.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/random.h"

namespace gd = gradiens;
namespace kcpu = gradiens::kernels::cpu;

namespace {

constexpr double kSigmas = 5.0;
constexpr int64_t kBig = 200'000;  // above the kernels' grain size, so fills run threaded

template <class T>
std::vector<T> elements(const gd::Tensor& t) {
  gd::Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return {p, p + c.numel()};
}

struct Moments {
  double mean, variance;
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

// Restores the library thread count when a test ends.
struct ThreadCountGuard {
  int saved = gd::get_num_threads();
  ~ThreadCountGuard() { gd::set_num_threads(saved); }
};

}  // namespace

TEST_CASE("random: the factories follow the Philox stream contract") {
  // Reference: the kernels called directly on (seed, offset), with the offset
  // advanced by the blocks each fill consumes (Note [Philox stream layout]).
  gd::Generator g(1234);
  std::vector<float> u(10);
  std::vector<double> n(5), u64(3);
  kcpu::fill_uniform(u.data(), 10, {1234, 0}, 0.f, 1.f);     // 10 32-bit draws: blocks 0..2
  kcpu::fill_normal(n.data(), 5, {1234, 3}, 0.0, 1.0);       // 5 64-bit draws: blocks 3..5
  kcpu::fill_uniform(u64.data(), 3, {1234, 6}, -1.0, 1.0);   // 3 64-bit draws: blocks 6..7
  CHECK(elements<float>(gd::rand({10}, g)) == u);
  CHECK(g.offset() == 3);
  CHECK(elements<double>(gd::randn({5}, g, gd::kFloat64)) == n);
  CHECK(g.offset() == 6);
  gd::Tensor x = gd::empty({3}, gd::kFloat64);
  gd::uniform_(x, -1, 1, g);
  CHECK(elements<double>(x) == u64);
  CHECK(g.offset() == 8);
  CHECK(g.current_seed() == 1234);
}

TEST_CASE("random: determinism under manual_seed") {
  // clang-format off
  gd::manual_seed(42); auto a = gd::rand({1000});
  gd::manual_seed(42); auto b = gd::rand({1000});
  CHECK(gd::equal(a, b));
  gd::manual_seed(43); auto c = gd::rand({1000});
  CHECK_FALSE(gd::equal(a, c));
  gd::manual_seed(42); auto d1 = gd::randn({100}), d2 = gd::randn({100});
  CHECK_FALSE(gd::equal(d1, d2));                                   // consecutive draws continue the stream
  gd::manual_seed(42); auto i1 = gd::randint(0, 1000, {100}), i2 = gd::randint(0, 1000, {100});
  CHECK_FALSE(gd::equal(i1, i2));
  gd::manual_seed(42); CHECK(gd::equal(gd::randint(0, 1000, {100}), i1));
  gd::manual_seed(5); auto p1 = gd::randperm(50);
  gd::manual_seed(5); CHECK(gd::equal(gd::randperm(50), p1));
  // clang-format on
  CHECK(gd::default_generator().current_seed() == 5);
  CHECK(gd::default_generator().offset() > 0);
  gd::manual_seed(5);
  CHECK(gd::default_generator().offset() == 0);
}

TEST_CASE("random: an explicit generator leaves the default one alone") {
  gd::manual_seed(7);
  const gd::GeneratorState before = gd::default_generator().get_state();
  gd::Generator g(7);
  auto from_g = gd::rand({20}, g);
  CHECK(gd::default_generator().get_state() == before);
  CHECK(gd::equal(gd::rand({20}), from_g));  // same seed, same stream
}

TEST_CASE("random: generator copies share a stream, clones do not") {
  gd::Generator g(99);
  gd::Generator shared = g;
  gd::Generator cloned = g.clone();
  auto first = gd::rand({8}, shared);
  CHECK(g.offset() == 2);
  CHECK(cloned.offset() == 0);
  CHECK(gd::equal(gd::rand({8}, cloned), first));
  const uint64_t fresh = g.seed();  // reseeds from a nondeterministic source and returns the seed
  CHECK(fresh == g.current_seed());
  CHECK(g.offset() == 0);
}

TEST_CASE("random: saving and restoring the state reproduces the continuation") {
  gd::Generator g(2024);
  gd::rand({13}, g);
  const gd::GeneratorState saved = g.get_state();
  auto a = gd::randn({50}, g, gd::kFloat64);
  auto b = gd::randint(-5, 5, {17}, g);
  auto c = gd::randperm(9, g);
  g.set_state(saved);
  CHECK(gd::equal(gd::randn({50}, g, gd::kFloat64), a));
  CHECK(gd::equal(gd::randint(-5, 5, {17}, g), b));
  CHECK(gd::equal(gd::randperm(9, g), c));

  // The same through the default generator, as a checkpoint would do it.
  gd::manual_seed(3);
  gd::rand({5});
  const gd::GeneratorState checkpoint = gd::default_generator().get_state();
  auto expected = gd::rand({100}, gd::kFloat64);
  gd::manual_seed(77);
  gd::default_generator().set_state(checkpoint);
  CHECK(gd::equal(gd::rand({100}, gd::kFloat64), expected));
}

TEST_CASE("random: the same seed gives the same numbers for any thread count") {
  ThreadCountGuard guard;
  auto draw = [](int threads) {
    gd::set_num_threads(threads);
    gd::manual_seed(9);
    std::vector<gd::Tensor> out = {gd::rand({kBig}), gd::rand({kBig}, gd::kFloat64), gd::randn({kBig}),
                                   gd::randn({kBig}, gd::kFloat64), gd::randint(0, 1 << 20, {kBig})};
    gd::Tensor strided = gd::empty({kBig, 2}, gd::kFloat64).t();
    strided.normal_(1, 2);
    out.push_back(strided);
    return out;
  };
  const auto one = draw(1), two = draw(2);
  for (size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(gd::equal(one[i], two[i]));
  }
}

TEST_CASE("random: statistics within 5 sigma") {
  gd::manual_seed(31337);
  const double n = static_cast<double>(kBig);
  SUBCASE("rand float32: U(0, 1), mean 1/2, variance 1/12") {
    auto x = elements<float>(gd::rand({kBig}));
    auto m = moments(x);
    CHECK(*std::min_element(x.begin(), x.end()) >= 0.f);
    CHECK(*std::max_element(x.begin(), x.end()) < 1.f);
    CHECK(std::abs(m.mean - 0.5) < kSigmas * std::sqrt(1.0 / 12 / n));
    CHECK(std::abs(m.variance - 1.0 / 12) < kSigmas * std::sqrt(1.0 / 180 / n));  // Var((x-mu)^2) = 1/80 - 1/144
  }
  SUBCASE("uniform_(-2, 3) float64: mean 1/2, variance 25/12") {
    gd::Tensor t = gd::empty({kBig}, gd::kFloat64);
    t.uniform_(-2, 3);
    auto x = elements<double>(t);
    auto m = moments(x);
    CHECK(*std::min_element(x.begin(), x.end()) >= -2.0);
    CHECK(*std::max_element(x.begin(), x.end()) < 3.0);
    CHECK(std::abs(m.mean - 0.5) < kSigmas * std::sqrt(25.0 / 12 / n));
    CHECK(std::abs(m.variance - 25.0 / 12) < kSigmas * 25.0 * std::sqrt(1.0 / 180 / n));
  }
  SUBCASE("randn float64 and normal(3, 2) float32") {
    auto z = moments(elements<double>(gd::randn({kBig}, gd::kFloat64)));
    CHECK(std::abs(z.mean) < kSigmas / std::sqrt(n));
    CHECK(std::abs(z.variance - 1) < kSigmas * std::sqrt(2 / n));  // Var(s^2) = 2 sigma^4 / n
    auto y = moments(elements<float>(gd::normal(3, 2, {kBig})));
    CHECK(std::abs(y.mean - 3) < kSigmas * 2 / std::sqrt(n));
    CHECK(std::abs(y.variance - 4) < kSigmas * 4 * std::sqrt(2 / n));
  }
  SUBCASE("randint(-3, 7): each of the 10 values with probability 1/10") {
    std::map<int64_t, int64_t> counts;
    for (int64_t v : elements<int64_t>(gd::randint(-3, 7, {kBig}))) ++counts[v];
    CHECK(counts.size() == 10);
    CHECK(counts.begin()->first == -3);
    CHECK(counts.rbegin()->first == 6);
    for (auto [value, count] : counts) {
      CAPTURE(value);
      CHECK(std::abs(static_cast<double>(count) - n / 10) < kSigmas * std::sqrt(n * 0.1 * 0.9));
    }
  }
  SUBCASE("randperm(3): each of the 6 orders with probability 1/6") {
    constexpr int kDraws = 6000;
    std::map<std::vector<int64_t>, int> counts;
    for (int i = 0; i < kDraws; ++i) ++counts[elements<int64_t>(gd::randperm(3))];
    CHECK(counts.size() == 6);
    for (const auto& [order, count] : counts) {
      CHECK(std::abs(count - kDraws / 6.0) < kSigmas * std::sqrt(kDraws * (1.0 / 6) * (5.0 / 6)));
    }
  }
}

TEST_CASE("random: randperm is a permutation in the requested dtype") {
  gd::manual_seed(1);
  auto p = elements<int64_t>(gd::randperm(1000));
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) CHECK(sorted[static_cast<size_t>(i)] == i);
  CHECK(gd::randperm(0).numel() == 0);
  CHECK(elements<int64_t>(gd::randperm(1)) == std::vector<int64_t>{0});
  CHECK(gd::randperm(5, gd::kFloat64).dtype() == gd::kFloat64);
  auto bytes = elements<uint8_t>(gd::randperm(256, gd::kUInt8));
  CHECK(*std::max_element(bytes.begin(), bytes.end()) == 255);  // torch.randperm(256, dtype=torch.uint8).max()
}

TEST_CASE("random: dtypes, shapes and options of the factories") {
  // clang-format off
  CHECK(gd::rand({2, 3}).dtype() == gd::kFloat32);
  CHECK(gd::rand({2, 3}).sizes() == gd::IntArrayRef{2, 3});
  CHECK(gd::randn({4}, gd::kFloat64).dtype() == gd::kFloat64);
  CHECK(gd::randint(0, 10, {3}).dtype() == gd::kInt64);                    // torch.randint(0, 10, (3,)).dtype
  CHECK(gd::randint(10, {3}).dtype() == gd::kInt64);
  CHECK(gd::randperm(3).dtype() == gd::kInt64);                            // torch.randperm(3).dtype
  CHECK(gd::normal(0, 1, {3}).dtype() == gd::kFloat32);                    // torch.normal(0., 1., (3,)).dtype
  CHECK(gd::randint(0, 2, {8}, gd::kBool).dtype() == gd::kBool);
  CHECK(gd::rand({0}).numel() == 0);
  CHECK(gd::rand({3}, gd::requires_grad()).requires_grad());
  CHECK(gd::rand({3}, gd::requires_grad()).is_leaf());
  CHECK(gd::rand_like(gd::zeros({2, 5}, gd::kFloat64)).dtype() == gd::kFloat64);
  CHECK(gd::rand_like(gd::zeros({2, 5}, gd::kFloat64)).sizes() == gd::IntArrayRef{2, 5});
  CHECK(gd::randn_like(gd::zeros({2, 5}, gd::kFloat64), gd::kFloat32).dtype() == gd::kFloat32);
  // clang-format on
  auto f = elements<double>(gd::randint(-4, 4, {1000}, gd::kFloat64));
  CHECK(std::all_of(f.begin(), f.end(), [](double v) { return v == std::floor(v) && v >= -4 && v < 4; }));
  // torch.zeros(3).uniform_(1, 1) -> tensor([1., 1., 1.])
  gd::Tensor ones = gd::zeros({3});
  CHECK(elements<float>(ones.uniform_(1, 1)) == std::vector<float>{1, 1, 1});
}

TEST_CASE("random: in-place fills follow the in-place rules") {
  auto leaf = gd::zeros({3}, gd::requires_grad());
  // clang-format off
  CHECK_THROWS_WITH_AS(leaf.uniform_(), "a leaf Variable that requires grad is being used in an in-place operation.", gd::Error);
  CHECK_THROWS_WITH_AS(leaf.normal_(), "a leaf Variable that requires grad is being used in an in-place operation.", gd::Error);
  // clang-format on
  {
    gd::NoGradGuard no_grad;  // how nn::init fills parameters
    const auto version = leaf._version();
    leaf.uniform_(-1, 1);
    CHECK(leaf._version() == version + 1);
    leaf.normal_();
    CHECK(leaf._version() == version + 2);
  }
  CHECK(leaf.requires_grad());
  CHECK(leaf.is_leaf());

  // A non-contiguous tensor gets the numbers in its logical order.
  gd::Tensor base = gd::zeros({4, 6});
  gd::Tensor view = base.t();
  gd::manual_seed(11);
  view.uniform_();
  gd::manual_seed(11);
  CHECK(gd::equal(view, gd::rand({6, 4})));
  CHECK(gd::equal(base.t(), view));

  // A slice is written, the rest of its base is not.
  gd::Tensor row = gd::zeros({10}, gd::kFloat64);
  row.slice(0, 2, 8).normal_(5, 1);
  auto r = elements<double>(row);
  CHECK(r[0] == 0);
  CHECK(r[1] == 0);
  CHECK(r[8] == 0);
  CHECK(r[9] == 0);
  CHECK(std::count(r.begin(), r.end(), 0.0) == 4);

  // A non-leaf loses its history: its new values do not depend on its inputs.
  auto x = gd::ones({3}, gd::requires_grad());
  auto y = x * 2.0;
  y.uniform_();
  CHECK_FALSE(y.requires_grad());
}

TEST_CASE("random: errors with PyTorch's messages") {
  // Each message: python3 -c "import torch; <the expression in the comment>"
  gd::Tensor f32 = gd::zeros({3});
  gd::Tensor i64 = gd::zeros({3}, gd::kInt64);
  // clang-format off
  CHECK_THROWS_WITH_AS(gd::rand({3}, gd::kInt64), "\"check_uniform_bounds\" not implemented for 'Long'", gd::Error);     // torch.rand(3, dtype=torch.long)
  CHECK_THROWS_WITH_AS(gd::rand({3}, gd::kBool), "\"check_uniform_bounds\" not implemented for 'Bool'", gd::Error);      // torch.rand(3, dtype=torch.bool)
  CHECK_THROWS_WITH_AS(gd::randn({3}, gd::kInt32), "\"normal_kernel_cpu\" not implemented for 'Int'", gd::Error);        // torch.randn(3, dtype=torch.int32)
  CHECK_THROWS_WITH_AS(i64.uniform_(), "\"check_uniform_bounds\" not implemented for 'Long'", gd::Error);                // torch.zeros(3, dtype=torch.long).uniform_()
  CHECK_THROWS_WITH_AS(i64.normal_(), "\"normal_kernel_cpu\" not implemented for 'Long'", gd::Error);                    // torch.zeros(3, dtype=torch.long).normal_()
  CHECK_THROWS_WITH_AS(f32.uniform_(2, 1), "uniform_ expects to return a [from, to) range, but found from=2 > to=1", gd::Error);  // torch.zeros(3).uniform_(2, 1)
  CHECK_THROWS_WITH_AS(f32.uniform_(-3e38, 3e38),                                                                          // torch.zeros(3).uniform_(-3e38, 3e38)
                       "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and from=-3e+38 which result in to-from to exceed the limit", gd::Error);
  CHECK_THROWS_WITH_AS(f32.uniform_(std::nan(""), 1), "from is out of bounds for float", gd::Error);                     // torch.zeros(3).uniform_(float("nan"), 1)
  CHECK_THROWS_WITH_AS(f32.normal_(0, -1), "normal expects std >= 0.0, but found std -1", gd::Error);                    // torch.zeros(3).normal_(0, -1)
  CHECK_THROWS_WITH_AS(gd::normal(0, -1, {3}), "normal expects std >= 0.0, but found std -1", gd::Error);                // torch.normal(0., -1., (3,))
  CHECK_THROWS_WITH_AS(gd::randint(5, 3, {3}), "random_ expects 'from' to be less than 'to', but got from=5 >= to=3", gd::Error);  // torch.randint(5, 3, (3,))
  CHECK_THROWS_WITH_AS(gd::randint(0, 300, {3}, gd::kUInt8), "to - 1 is out of bounds for unsigned char", gd::Error);    // torch.randint(0, 300, (3,), dtype=torch.uint8)
  CHECK_THROWS_WITH_AS(gd::randint(-1, 2, {3}, gd::kBool), "from is out of bounds for bool", gd::Error);                 // torch.randint(-1, 2, (3,), dtype=torch.bool)
  CHECK_THROWS_WITH_AS(gd::randint(0, (int64_t{1} << 31) + 1, {3}, gd::kInt32), "to - 1 is out of bounds for int", gd::Error);  // torch.randint(0, 2**31 + 1, (3,), dtype=torch.int32)
  CHECK_THROWS_WITH_AS(gd::randperm(-1), "Trying to create tensor with negative dimension -1: [-1]", gd::Error);          // torch.randperm(-1)
  CHECK_THROWS_WITH_AS(gd::randperm(5, gd::kBool), "\"randperm\" not implemented for 'Bool'", gd::Error);                // torch.randperm(5, dtype=torch.bool)
  CHECK_THROWS_WITH_AS(gd::randperm(257, gd::kUInt8), "value cannot be converted to type uint8_t without overflow", gd::Error);  // torch.randperm(257, dtype=torch.uint8)
  CHECK_THROWS_WITH_AS(gd::randperm((int64_t{1} << 24) + 2, gd::kFloat32), "n cannot be greater than 2^24+1 for Float type.", gd::Error);  // torch.randperm(2**24 + 2, dtype=torch.float32)
  CHECK_THROWS_WITH_AS(gd::zeros({3}).expand({2, 3}).uniform_(),                                                          // torch.zeros(3).expand(2, 3).uniform_()
                       "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.", gd::Error);
  CHECK_THROWS_WITH_AS(gd::set_num_threads(0), "set_num_threads expects a positive integer", gd::Error);                 // torch.set_num_threads(0)
  // clang-format on
}

TEST_CASE("set_num_threads sets the loops', OpenMP's and the GEMMs' thread counts") {
  ThreadCountGuard guard;
  gd::set_num_threads(3);
  CHECK(gd::get_num_threads() == 3);
  CHECK(kcpu::num_threads() == 3);
  CHECK(kcpu::gemm_threads() == 3);
  CHECK(omp_get_max_threads() == 3);
  gd::set_num_threads(1);
  CHECK(gd::get_num_threads() == 1);
  CHECK(kcpu::gemm_threads() == 1);
  CHECK(omp_get_max_threads() == 1);
}
