// Input embeddings. FourierFeatures with a scale per coordinate: its rows'
// spreads, the same draw as one scale. PeriodicEmbedding: its columns against
// the closed form, a network after it periodic to 1e-12 with its derivatives,
// its gradient against finite differences, Taylor mode through it equal to
// the nested engine, and its errors.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "engine/autograd/autograd.h"
#include "engine/tensor_data.h"
#include "pinn/fourier.h"
#include "pinn/operators.h"
#include "pinn/solution.h"
#include "pinn_test_util.h"

namespace gd = gradiens;
namespace gp = gradiens::pinn;
namespace nn = gradiens::nn;
using gp::testing::kF64;
using gp::testing::max_error;

namespace {

// (x, t) -> PeriodicEmbedding(period 2 in x) -> 16 -> 16 -> 1, tanh between.
nn::Sequential periodic_net(int64_t harmonics, uint64_t seed) {
  gd::manual_seed(seed);
  gp::PeriodicEmbedding embedding(std::vector<double>{2.0, 0.0}, harmonics);
  const int64_t width = embedding->out_features();
  nn::Sequential net(embedding, nn::Linear(width, 16), nn::Tanh(), nn::Linear(16, 16), nn::Tanh(), nn::Linear(16, 1));
  net->to(gd::kFloat64);
  return net;
}

}  // namespace

TEST_CASE("FourierFeatures: one scale per coordinate draws row i of B from N(0, sigma_i^2)") {
  gd::manual_seed(8);
  gp::FourierFeatures same(2, 8, 0.5);
  gd::manual_seed(8);
  gp::FourierFeatures listed(8, std::vector<double>{0.5, 0.5});
  CHECK(gd::equal(same->frequencies, listed->frequencies));
  CHECK(same->extra_repr() == "in_features=2, features=8, sigma=0.5");

  gd::manual_seed(9);
  gp::FourierFeatures scaled(4000, std::vector<double>{1.0, 100.0, 0.01});
  CHECK(scaled->in_features == 3);
  CHECK(scaled->extra_repr() == "in_features=3, features=4000, sigma=[1, 100, 0.01]");
  // 4000 normal draws: the sample standard deviation is within 5% (4.5 sigma of its 1.1% spread).
  const double expected[3] = {1.0, 100.0, 0.01};
  for (int64_t i = 0; i < 3; ++i)
    CHECK(scaled->frequencies[i].to(gd::kFloat64).std().item<double>() == doctest::Approx(expected[i]).epsilon(0.05));
  CHECK_THROWS_WITH_AS(gp::FourierFeatures(4, std::vector<double>{1.0, -2.0}), doctest::Contains("sigma must be positive"),
                       gd::Error);
  CHECK_THROWS_WITH_AS(gp::FourierFeatures(4, std::vector<double>{}), doctest::Contains("in_features (0)"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::FourierFeatures(-1, 4, 1.0), doctest::Contains("in_features (-1)"), gd::Error);
}

TEST_CASE("PeriodicEmbedding: cos and sin of each harmonic of a periodic coordinate, the others passed through") {
  gp::PeriodicEmbedding embedding(std::vector<double>{0.0, 2.0, 0.0}, 2);
  CHECK(embedding->out_features() == 1 + 4 + 1);
  const gd::Tensor x = gd::tensor({{0.25, 0.3, 0.7}, {-1.5, 1.9, 0.1}}, kF64);
  const gd::Tensor y = embedding->forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{2, 6});
  const double pi = std::numbers::pi;
  for (int64_t n = 0; n < 2; ++n) {
    const double a = x[n][0].item<double>(), b = x[n][1].item<double>(), c = x[n][2].item<double>();
    const double expected[6] = {a, std::cos(pi * b), std::sin(pi * b), std::cos(2 * pi * b), std::sin(2 * pi * b), c};
    for (int64_t j = 0; j < 6; ++j) CHECK(y[n][j].item<double>() == doctest::Approx(expected[j]).epsilon(1e-15));
  }
}

TEST_CASE("PeriodicEmbedding: a network after it and its derivatives repeat with the period") {
  for (const int64_t harmonics : {1, 3}) {
    nn::Sequential net = periodic_net(harmonics, 11);
    gd::manual_seed(5);
    const gd::Tensor x = (gd::rand({64, 2}, kF64) * 2 - 1).requires_grad_(true);
    const gd::Tensor shifted = (x.detach() + gd::tensor({2.0, 0.0}, kF64)).requires_grad_(true);
    const gd::Tensor u = net->forward(x), v = net->forward(shifted);
    CHECK(max_error(u, v) < 1e-12);
    CHECK(max_error(gp::partial(u, x, {0}), gp::partial(v, shifted, {0})) < 1e-12);
    CHECK(max_error(gp::partial(u, x, {0, 0}), gp::partial(v, shifted, {0, 0})) < 1e-11);
    CHECK(max_error(gp::partial(u, x, {1}), gp::partial(v, shifted, {1})) < 1e-12);
    // And it is not constant in x: the embedding carries the coordinate.
    CHECK(gp::partial(u, x, {0}).abs().max().item<double>() > 1e-3);
  }
}

TEST_CASE("PeriodicEmbedding: gradients in x and second derivatives match finite differences") {
  gp::PeriodicEmbedding embedding(std::vector<double>{2.0, 0.0, 1.5}, 2);
  gd::manual_seed(3);
  const gd::Tensor x = gd::rand({5, 3}, kF64).requires_grad_(true);
  auto f = [&](const std::vector<gd::Tensor>& in) { return std::vector<gd::Tensor>{embedding->forward(in[0])}; };
  CHECK(gd::autograd::gradcheck(f, {x}));
  CHECK(gd::autograd::gradgradcheck(f, {x}));
}

TEST_CASE("PeriodicEmbedding: Taylor mode carries it, equal to the nested engine to 1e-12") {
  for (const int64_t harmonics : {1, 2}) {
    CAPTURE(harmonics);
    nn::Sequential net = periodic_net(harmonics, 2);
    gp::DerivativeNeeds needs{{{1}, {0, 0}, {1, 1}}, true, {1.0, 0.25}};
    CHECK(gp::taylor_can_serve(nn::AnyModule(net), needs, /*has_transform=*/false));
    gd::Generator generator(3);
    const gd::Tensor x = gd::rand({9, 2}, generator, kF64) * 2 - 1;
    gp::Solution taylor(nn::AnyModule(net), x, needs);
    gp::Solution nested(nn::AnyModule(net), x, needs, gp::Engine::kNested);
    CHECK(taylor.engine() == gp::Engine::kTaylor);
    gp::testing::check_same_second_order(taylor, nested);
    // Fourth order along the periodic coordinate too (Faa di Bruno through sin).
    gp::DerivativeNeeds fourth{{{0, 0, 0, 0}}, false, {}};
    CHECK(max_error(gp::Solution(nn::AnyModule(net), x, fourth).d({0, 0, 0, 0}),
                    gp::Solution(nn::AnyModule(net), x, fourth, gp::Engine::kNested).d({0, 0, 0, 0})) < 1e-10);
  }
}

TEST_CASE("PeriodicEmbedding: bad periods and inputs are errors") {
  CHECK_THROWS_WITH_AS(gp::PeriodicEmbedding(std::vector<double>{}), doctest::Contains("periods is empty"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::PeriodicEmbedding(std::vector<double>{2.0, -1.0}),
                       doctest::Contains("the period of coordinate 1 must be positive"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::PeriodicEmbedding(std::vector<double>{0.0, 0.0}), doctest::Contains("no coordinate is periodic"),
                       gd::Error);
  CHECK_THROWS_WITH_AS(gp::PeriodicEmbedding(std::vector<double>{2.0}, 0), doctest::Contains("harmonics must be positive"),
                       gd::Error);
  gp::PeriodicEmbedding embedding(std::vector<double>{2.0, 0.0});
  CHECK_THROWS_WITH_AS(embedding->forward(gd::zeros({4, 3}, kF64)),
                       doctest::Contains("expected input [N, 2], got [4, 3]"), gd::Error);
}
