// Tests for Generator, manual_seed and the random ops (factories, in-place
// fills, bernoulli, multinomial, tensor normal): the Philox stream contract,
// determinism across thread counts, statistics, state save/restore, the
// in-place rules and PyTorch's error messages.
#include <doctest/doctest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "engine/autograd/node.h"
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
  return std::vector<T>(p, p + c.numel());  // not {p, p + n}: for bool that is a list of two pointers' truth values
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

// ---- bernoulli, multinomial, normal with tensor parameters ----

TEST_CASE("random: bernoulli follows the sampling layout, and the others advance the stream by their draws") {
  // Reference: Note [Sampling layout] -- element i is 1 iff u_i < p_i, with u
  // the double uniform fill of the stream, one 64-bit draw per element.
  gd::Tensor p = gd::linspace(0.05, 0.95, 7, gd::kFloat64);
  std::vector<double> u(7);
  kcpu::fill_uniform(u.data(), 7, {77, 0}, 0.0, 1.0);
  std::vector<double> want;
  for (size_t i = 0; i < 7; ++i) want.push_back(u[i] < elements<double>(p)[i] ? 1.0 : 0.0);
  gd::Generator g(77);
  CHECK(elements<double>(gd::bernoulli(p, g)) == want);
  CHECK(g.offset() == 4);                                             // ceil(7 / 2) blocks
  gd::Tensor self = gd::empty({7}, gd::kInt64);
  gd::Generator h(77);
  gd::bernoulli_(self, 0.5, h);
  for (size_t i = 0; i < 7; ++i) CHECK(elements<int64_t>(self)[i] == (u[i] < 0.5 ? 1 : 0));
  // clang-format off
  gd::Generator m(1);
  gd::multinomial(gd::ones({3, 5}), 4, true, m);   CHECK(m.offset() == 6);    // with replacement: 3 * 4 draws
  gd::multinomial(gd::ones({3, 5}), 4, false, m);  CHECK(m.offset() == 14);   // without: 3 * 5 draws
  gd::normal(gd::zeros({5}), gd::ones({2, 1}), m); CHECK(m.offset() == 17);   // normal: the 2 x 5 broadcast shape, 32-bit draws
  // clang-format on
}

TEST_CASE("random: bernoulli, multinomial and normal give the same numbers for any thread count") {
  ThreadCountGuard guard;
  gd::Tensor p = gd::rand({kBig}, gd::kFloat64);
  gd::Tensor weights = gd::rand({400, 500});
  gd::Tensor mean = gd::linspace(-1, 1, kBig, gd::kFloat64);
  auto draw = [&](int threads) {
    gd::set_num_threads(threads);
    gd::manual_seed(17);
    gd::Tensor into = gd::empty({kBig, 2}, gd::kFloat32).t();
    gd::bernoulli_(into, 0.3);
    return std::vector<gd::Tensor>{gd::bernoulli(p), into, gd::multinomial(weights, 20, true),
                                   gd::multinomial(weights, 20, false), gd::normal(mean, p),
                                   gd::normal(mean, 2.0), gd::normal(1.0, p)};
  };
  const auto one = draw(1), two = draw(2);
  for (size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(gd::equal(one[i], two[i]));
  }
  gd::manual_seed(17);
  CHECK_FALSE(gd::equal(gd::bernoulli(p), gd::bernoulli(p)));  // consecutive draws continue the stream
}

TEST_CASE("random: statistics of bernoulli, multinomial and normal within 5 sigma") {
  gd::manual_seed(2718);
  const double n = static_cast<double>(kBig);
  SUBCASE("bernoulli(p): mean p per element, bernoulli_(p): mean p") {
    gd::Tensor p = gd::tensor({0.0, 0.1, 0.5, 0.9, 1.0}, gd::kFloat64).expand({kBig, 5});
    gd::Tensor draws = gd::bernoulli(p.contiguous());
    auto means = elements<double>(draws.mean({0}));
    const std::vector<double> want = {0.0, 0.1, 0.5, 0.9, 1.0};
    for (size_t k = 0; k < 5; ++k) {
      CAPTURE(k);
      CHECK(std::abs(means[k] - want[k]) <= kSigmas * std::sqrt(want[k] * (1 - want[k]) / n));
    }
    gd::Tensor b = gd::empty({kBig}, gd::kFloat32);
    gd::bernoulli_(b, 0.25);
    CHECK(std::abs(elements<double>(b.to(gd::kFloat64).mean())[0] - 0.25) < kSigmas * std::sqrt(0.25 * 0.75 / n));
  }
  SUBCASE("multinomial with replacement: category frequencies w / sum(w)") {
    gd::Tensor w = gd::tensor({1.0, 0.0, 3.0, 6.0}, gd::kFloat64);  // probabilities 0.1, 0, 0.3, 0.6
    std::map<int64_t, int64_t> counts;
    for (int64_t v : elements<int64_t>(gd::multinomial(w, kBig, true))) ++counts[v];
    CHECK(counts.count(1) == 0);
    const std::map<int64_t, double> want = {{0, 0.1}, {2, 0.3}, {3, 0.6}};
    for (auto [k, q] : want) {
      CAPTURE(k);
      CHECK(std::abs(static_cast<double>(counts[k]) - n * q) < kSigmas * std::sqrt(n * q * (1 - q)));
    }
  }
  SUBCASE("multinomial without replacement: distinct indices; first and second draw in closed form") {
    // For weights (0.5, 0.3, 0.2): P(first = 0) = 0.5 and
    // P(second = 0) = 0.3 * 0.5 / 0.7 + 0.2 * 0.5 / 0.8 = 0.3392857...
    const int64_t rows = 50'000;
    gd::Tensor w = gd::tensor({0.5, 0.3, 0.2}, gd::kFloat64).expand({rows, 3}).contiguous();
    auto s = elements<int64_t>(gd::multinomial(w, 3, false));
    int64_t first0 = 0, second0 = 0, repeated = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t* row = &s[static_cast<size_t>(3 * r)];
      repeated += row[0] == row[1] || row[1] == row[2] || row[0] == row[2];
      first0 += row[0] == 0;
      second0 += row[1] == 0;
    }
    CHECK(repeated == 0);
    const double second = 0.3 * 0.5 / 0.7 + 0.2 * 0.5 / 0.8, m = static_cast<double>(rows);
    CHECK(std::abs(static_cast<double>(first0) - m * 0.5) < kSigmas * std::sqrt(m * 0.25));
    CHECK(std::abs(static_cast<double>(second0) - m * second) < kSigmas * std::sqrt(m * second * (1 - second)));
  }
  SUBCASE("normal(mean tensor, std tensor): per-column mean and variance") {
    gd::Tensor mean = gd::tensor({-2.0, 3.0}, gd::kFloat64).expand({kBig, 2});
    gd::Tensor std = gd::tensor({0.5, 2.0}, gd::kFloat64);
    gd::Tensor x = gd::normal(mean, std);
    CHECK(x.sizes() == gd::IntArrayRef{kBig, 2});
    for (int64_t c = 0; c < 2; ++c) {
      CAPTURE(c);
      auto mo = moments(elements<double>(x.select(1, c)));
      const double mu = c == 0 ? -2.0 : 3.0, sigma = c == 0 ? 0.5 : 2.0;
      CHECK(std::abs(mo.mean - mu) < kSigmas * sigma / std::sqrt(n));
      CHECK(std::abs(mo.variance - sigma * sigma) < kSigmas * sigma * sigma * std::sqrt(2 / n));
    }
  }
}

TEST_CASE("random: bernoulli, multinomial and normal shapes, dtypes, edge values and autograd") {
  gd::manual_seed(4);
  // clang-format off
  CHECK(gd::bernoulli(gd::full({2, 3}, 0.5)).dtype() == gd::kFloat32);                                   // torch.bernoulli(torch.full((2, 3), .5)).dtype
  CHECK(gd::bernoulli(gd::zeros({3}, gd::kInt64), 0.5).dtype() == gd::kInt64);                           // torch.bernoulli(torch.zeros(3, dtype=torch.long), .5).dtype
  CHECK(elements<double>(gd::bernoulli(gd::tensor({0.0, 1.0, 1.0, 0.0}, gd::kFloat64))) == std::vector<double>{0, 1, 1, 0});
  gd::Tensor grid = gd::zeros({2, 3});
  CHECK(elements<float>(gd::bernoulli_(grid, gd::tensor({0.0, 1.0, 0.0}))) == std::vector<float>{0, 1, 0, 0, 1, 0});  // p broadcast to self
  gd::Tensor flags = gd::zeros({4}, gd::kBool);
  CHECK(elements<bool>(gd::bernoulli_(flags, 1.0)) == std::vector<bool>{true, true, true, true});
  CHECK(elements<bool>(gd::bernoulli_(flags, 0.0)) == std::vector<bool>{false, false, false, false});
  CHECK(gd::multinomial(gd::ones({5}), 3).sizes() == gd::IntArrayRef{3});
  CHECK(gd::multinomial(gd::ones({5}), 3).dtype() == gd::kInt64);
  CHECK(gd::multinomial(gd::ones({2, 5}), 7, true).sizes() == gd::IntArrayRef{2, 7});
  CHECK(gd::multinomial(gd::ones({0, 3}), 2).sizes() == gd::IntArrayRef{0, 2});                         // torch.multinomial(torch.ones(0, 3), 2).shape
  CHECK(elements<int64_t>(gd::multinomial(gd::tensor({0.0, 1.0, 0.0}), 3)) == std::vector<int64_t>{1, 0, 2});  // torch.multinomial(torch.tensor([0., 1., 0.]), 3)
  CHECK(elements<int64_t>(gd::multinomial(gd::tensor({0.0, 0.0, 1.0}), 3, true)) == std::vector<int64_t>{2, 2, 2});  // torch.multinomial(torch.tensor([0., 0., 1.]), 3, True)
  CHECK(gd::normal(gd::zeros({2, 3}), gd::ones({3})).sizes() == gd::IntArrayRef{2, 3});                 // torch.normal(torch.zeros(2, 3), torch.ones(3)).shape
  CHECK(gd::normal(gd::zeros({3}), gd::ones({2, 1})).sizes() == gd::IntArrayRef{2, 3});
  CHECK(gd::normal(gd::zeros({3}), gd::ones({3}, gd::kFloat64)).dtype() == gd::kFloat32);               // the mean's dtype, as torch
  CHECK(gd::normal(gd::zeros({3}, gd::kFloat64), gd::ones({3})).dtype() == gd::kFloat64);
  CHECK(gd::normal(1.0, gd::ones({3}, gd::kFloat64)).dtype() == gd::kFloat64);
  CHECK(elements<double>(gd::normal(gd::tensor({1.0, -2.0}, gd::kFloat64), gd::zeros({2}, gd::kFloat64))) == std::vector<double>{1.0, -2.0});  // std 0: the mean
  // clang-format on
  // As in PyTorch, bernoulli(p) and normal(mean, std) pass a zero gradient
  // (torch: NormalBackward3/1/2, BernoulliBackward0); multinomial has none.
  gd::Tensor m = gd::zeros({3}, gd::kFloat64).requires_grad_();
  gd::Tensor s = gd::ones({2, 3}, gd::kFloat64).requires_grad_();
  gd::Tensor y = gd::normal(m, s);
  CHECK(y.grad_fn()->name() == "NormalBackward3");
  CHECK(gd::normal(m, 1.0).grad_fn()->name() == "NormalBackward1");
  CHECK(gd::normal(0.0, s).grad_fn()->name() == "NormalBackward2");
  y.sum().backward();
  CHECK(elements<double>(m.grad()) == std::vector<double>(3, 0.0));
  CHECK(elements<double>(s.grad()) == std::vector<double>(6, 0.0));
  gd::Tensor q = gd::full({3}, 0.5, gd::kFloat64).requires_grad_();
  gd::Tensor b = gd::bernoulli(q);
  CHECK(b.grad_fn()->name() == "BernoulliBackward0");
  b.sum().backward();
  CHECK(elements<double>(q.grad()) == std::vector<double>(3, 0.0));
  CHECK_FALSE(gd::multinomial(q, 2).requires_grad());
  CHECK_FALSE(gd::bernoulli(q, 0.5).requires_grad());
  CHECK_THROWS_WITH_AS(gd::bernoulli_(q, 0.5), "a leaf Variable that requires grad is being used in an in-place operation.", gd::Error);
}

TEST_CASE("random: bernoulli, multinomial and normal errors with PyTorch's messages") {
  // Each message: python3 -c "import torch; <the expression in the comment>"
  gd::Tensor f32 = gd::zeros({3});
  // clang-format off
  CHECK_THROWS_WITH_AS(gd::bernoulli(gd::tensor({1.5})), "Expected p_in >= 0 && p_in <= 1 to be true, but got false.", gd::Error);           // torch.bernoulli(torch.tensor([1.5]))
  CHECK_THROWS_WITH_AS(gd::bernoulli(gd::tensor({std::nan("")})), "Expected p_in >= 0 && p_in <= 1 to be true, but got false.", gd::Error);   // torch.bernoulli(torch.tensor([float('nan')]))
  CHECK_THROWS_WITH_AS(gd::bernoulli(gd::tensor({1}, gd::kInt64)), "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'", gd::Error);        // torch.bernoulli(torch.tensor([1]))
  CHECK_THROWS_WITH_AS(gd::bernoulli_(f32, 1.5), "bernoulli_ expects p to be in [0, 1], but got p=1.5", gd::Error);                         // torch.zeros(3).bernoulli_(1.5)
  CHECK_THROWS_WITH_AS(gd::bernoulli_(f32, -0.1), "bernoulli_ expects p to be in [0, 1], but got p=-0.1", gd::Error);                       // torch.zeros(3).bernoulli_(-0.1)
  CHECK_THROWS_WITH_AS(gd::bernoulli(f32, 1.5), "bernoulli_ expects p to be in [0, 1], but got p=1.5", gd::Error);                          // torch.bernoulli(torch.zeros(3), 1.5)
  CHECK_THROWS_WITH_AS(gd::bernoulli_(f32, gd::tensor({1.5, 0.0, 0.0})), "Expected p_in >= 0 && p_in <= 1 to be true, but got false.", gd::Error);  // torch.zeros(3).bernoulli_(torch.tensor([1.5, 0, 0]))
  CHECK_THROWS_WITH_AS(gd::bernoulli_(f32, gd::tensor({1, 0, 1}, gd::kInt64)), "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'", gd::Error);  // torch.zeros(3).bernoulli_(torch.tensor([1, 0, 1]))
  gd::Tensor expanded = gd::zeros({3}).expand({2, 3});
  CHECK_THROWS_WITH_AS(gd::bernoulli_(expanded, 0.5),                                                                                       // torch.zeros(3).expand(2, 3).bernoulli_(0.5)
                       "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.", gd::Error);
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1.0, 2.0}), 3), "cannot sample n_sample > prob_dist.size(-1) samples without replacement", gd::Error);  // torch.multinomial(torch.tensor([1., 2.]), 3)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::ones({0}), 1), "cannot sample n_sample > prob_dist.size(-1) samples without replacement", gd::Error);             // torch.multinomial(torch.ones(0), 1)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1.0, -2.0}), 1), "probability tensor contains either `inf`, `nan` or element < 0", gd::Error);           // torch.multinomial(torch.tensor([1., -2.]), 1)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1.0, std::nan("")}), 1), "probability tensor contains either `inf`, `nan` or element < 0", gd::Error);   // torch.multinomial(torch.tensor([1., float('nan')]), 1)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1.0, -2.0}), 2, true), "invalid multinomial distribution (encountering probability entry < 0)", gd::Error);  // torch.multinomial(torch.tensor([1., -2.]), 2, True)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1.0, double{INFINITY}}), 2, true), "invalid multinomial distribution (encountering probability entry = infinity or NaN)", gd::Error);  // torch.multinomial(torch.tensor([1., float('inf')]), 2, True)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1.0, std::nan("")}), 2, true), "invalid multinomial distribution (encountering probability entry < 0)", gd::Error);  // torch.multinomial(torch.tensor([1., float('nan')]), 2, True)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::zeros({2}), 1), "invalid multinomial distribution (sum of probabilities <= 0)", gd::Error);                      // torch.multinomial(torch.tensor([0., 0.]), 1)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1.0, 1.0, 0.0, 0.0}).view({2, 2}), 2, true), "invalid multinomial distribution (sum of probabilities <= 0)", gd::Error);  // torch.multinomial(torch.tensor([[1., 1.], [0., 0.]]), 2, True)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::ones({2}), 0), "cannot sample n_sample <= 0 samples", gd::Error);                                               // torch.multinomial(torch.tensor([1., 1.]), 0)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::tensor({1, 1}, gd::kInt64), 1), "multinomial only supports floating-point dtypes for input, got: Long", gd::Error);  // torch.multinomial(torch.tensor([1, 1]), 1)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::ones({2, 2, 2}), 1), "prob_dist must be 1 or 2 dim", gd::Error);                                                 // torch.multinomial(torch.ones(2, 2, 2), 1)
  CHECK_THROWS_WITH_AS(gd::multinomial(gd::scalar_tensor(1.0), 1), "prob_dist must be 1 or 2 dim", gd::Error);                                              // torch.multinomial(torch.tensor(1.), 1)
  CHECK_THROWS_WITH_AS(gd::normal(gd::zeros({3}), gd::tensor({1.0, -1.0, 1.0})), "normal expects all elements of std >= 0.0", gd::Error);                  // torch.normal(torch.zeros(3), torch.tensor([1., -1., 1.]))
  CHECK_THROWS_WITH_AS(gd::normal(gd::zeros({3}), gd::tensor({std::nan(""), 1.0, 1.0})), "normal expects all elements of std >= 0.0", gd::Error);          // torch.normal(torch.zeros(3), torch.tensor([float('nan'), 1., 1.]))
  CHECK_THROWS_WITH_AS(gd::normal(gd::zeros({3}), -1.0), "normal expects std >= 0.0, but found std -1", gd::Error);                                        // torch.normal(torch.zeros(3), -1.)
  CHECK_THROWS_WITH_AS(gd::normal(0.0, gd::tensor({-1.0})), "normal expects all elements of std >= 0.0", gd::Error);                                        // torch.normal(0., torch.tensor([-1.]))
  CHECK_THROWS_WITH_AS(gd::normal(gd::zeros({3}, gd::kInt64), gd::ones({3})), "\"normal_kernel_cpu\" not implemented for 'Long'", gd::Error);              // torch.normal(torch.zeros(3, dtype=torch.long), torch.ones(3))
  CHECK_THROWS_WITH_AS(gd::normal(gd::zeros({2, 3}), gd::ones({4})), "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", gd::Error);  // torch.normal(torch.zeros(2, 3), torch.ones(4))
  // clang-format on
}
