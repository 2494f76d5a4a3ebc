// Problems: the engine each term gets, both engines giving the same losses and
// parameter gradients, trainable PDE parameters, checkpoint state, loss
// weighting against its formulas, and residual-based refinement (RAR adds
// the worst points; RAD / RAR-D draw by the residual density).
#include <cmath>
#include <numbers>

#include <doctest/doctest.h>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "pinn/adaptive.h"
#include "pinn/problem.h"
#include "tests/pinn/pinn_test_util.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;

namespace {

using gp::testing::kF64;
using gp::testing::max_error;
using gp::testing::tanh_mlp;

gp::PointFunction sine_of_x() {
  return [](const gd::Tensor& x) { return -gd::sin(std::numbers::pi * x.narrow(1, 0, 1)); };
}

// Burgers on [-1, 1] x [0, 1] with an unknown viscosity parameter.
gp::Problem burgers(gd::Tensor* nu_out = nullptr) {
  gp::Problem problem(std::make_shared<gp::GeometryXTime>(gp::Interval(-1, 1), 0.0, 1.0));
  gd::Tensor nu = problem.add_parameter("nu", 0.05);
  if (nu_out) *nu_out = nu;
  gp::DerivativeNeeds needs{{{0}, {1}, {0, 0}}, false, {}};
  problem.add(std::make_shared<gp::OperatorCondition>(
      "pde", gp::PointSpec::interior(200, gp::Sampler::kLHS), needs,
      [nu](gp::Solution& s) { return s.d(1) + s.u() * s.d(0) - nu * s.d({0, 0}); }));
  problem.add(std::make_shared<gp::DirichletBC>("bc", gp::PointSpec::boundary(40), sine_of_x()), 2.0);
  problem.add(std::make_shared<gp::InitialCondition>("ic", gp::PointSpec::initial(40), sine_of_x()));
  return problem;
}

// The residual u - f(x) on `points`, f as point data: with zero_output(),
// |r| = |f| exactly.
gp::TermPtr u_minus(gp::PointSpec points, gp::PointFunction f) {
  return std::make_shared<gp::OperatorCondition>(
      "pde", std::move(points), gp::DerivativeNeeds{},
      [](gp::Solution& s, const std::vector<gd::Tensor>& data) { return s.u() - data[0]; },
      std::vector<gp::PointFunction>{std::move(f)});
}

// tanh_mlp's network with its last layer zeroed: it outputs 0 everywhere.
gd::nn::Sequential zero_output(int64_t in, uint64_t seed) {
  gd::nn::Sequential net = tanh_mlp(in, 4, 1, seed);
  gd::NoGradGuard no_grad;
  for (gd::Tensor& p : (*net)[4]->parameters()) p.zero_();
  return net;
}

std::vector<gd::Tensor> all_grads(const std::vector<gd::Tensor>& params) {
  std::vector<gd::Tensor> out;
  for (const gd::Tensor& p : params) out.push_back(p.grad().defined() ? p.grad().clone() : gd::zeros_like(p));
  return out;
}

}  // namespace

TEST_CASE("problem: auto picks Taylor mode for an MLP; both engines give the same losses and gradients") {
  gd::Tensor nu;
  gp::Problem problem = burgers(&nu);
  gd::Generator generator(21);
  problem.sample(generator);
  gd::nn::Sequential net = tanh_mlp(2, 8, 1, 3);
  gd::nn::AnyModule module(net);
  std::vector<gd::Tensor> params = net->parameters();
  params.push_back(nu);

  gp::Losses taylor = problem.losses(module);
  CHECK(problem.last_engines() == std::vector<gp::Engine>(3, gp::Engine::kTaylor));
  CHECK(taylor.names == std::vector<std::string>{"pde", "bc", "ic"});
  taylor.total.backward();
  std::vector<gd::Tensor> taylor_grads = all_grads(params);
  gd::autograd::zero_grad(params);

  problem.set_engine(gp::Engine::kNested);
  gp::Losses nested = problem.losses(module);
  CHECK(problem.last_engines() == std::vector<gp::Engine>(3, gp::Engine::kNested));
  nested.total.backward();
  std::vector<gd::Tensor> nested_grads = all_grads(params);
  for (size_t i = 0; i < 3; ++i)
    CHECK(std::abs(taylor.values[i].item<double>() - nested.values[i].item<double>()) < 1e-12);
  // The total weighs bc by 2.
  const double expected_total =
      nested.values[0].item<double>() + 2 * nested.values[1].item<double>() + nested.values[2].item<double>();
  CHECK(nested.total.item<double>() == doctest::Approx(expected_total).epsilon(1e-15));
  for (size_t i = 0; i < params.size(); ++i) CHECK(max_error(taylor_grads[i], nested_grads[i]) < 1e-12);
  // The viscosity gets a gradient: d(pde loss)/d nu = mean(2 r (-u_xx)), nonzero.
  CHECK(nested_grads.back().abs().item<double>() > 0);
}

TEST_CASE("problem: a mixed derivative means the nested engine; an output transform keeps Taylor mode") {
  gp::Problem problem(gp::Rectangle({0, 0}, {1, 1}));
  gp::DerivativeNeeds mixed{{{0, 1}}, false, {}};
  problem.add(std::make_shared<gp::OperatorCondition>("pde", gp::PointSpec::interior(20), mixed,
                                                      [](gp::Solution& s) { return s.d({0, 1}); }));
  gd::Generator generator(22);
  problem.sample(generator);
  gd::nn::Sequential net = tanh_mlp(2, 5, 1, 4);
  gd::nn::AnyModule module(net);
  problem.losses(module);
  CHECK(problem.last_engines() == std::vector<gp::Engine>{gp::Engine::kNested});
  problem.set_engine(gp::Engine::kTaylor);
  CHECK_THROWS_WITH_AS(problem.losses(module), doctest::Contains("mixed derivative"), gd::Error);

  // Hard constraint u = x (1 - x) y (1 - y) N(x): zero on the boundary exactly.
  gp::Problem hard(gp::Rectangle({0, 0}, {1, 1}));
  hard.set_output_transform([](const gd::Tensor& x, const gd::Tensor& y) {
    gd::Tensor a = x.narrow(1, 0, 1), b = x.narrow(1, 1, 1);
    return a * (1 - a) * b * (1 - b) * y;
  });
  hard.add(std::make_shared<gp::DirichletBC>(
      "bc", gp::PointSpec::boundary(30), [](const gd::Tensor& x) { return gd::zeros({x.size(0), 1}, kF64); }));
  hard.sample(generator);
  gp::Losses losses = hard.losses(module);
  CHECK(hard.last_engines() == std::vector<gp::Engine>{gp::Engine::kTaylor});
  CHECK(losses.values[0].item<double>() < 1e-30);
}

TEST_CASE("problem: the checkpoint state restores points, weights and parameters exactly") {
  gd::Tensor nu;
  gp::Problem a = burgers(&nu);
  gd::Generator generator(23);
  a.sample(generator);
  a.weights().set_values({1.0, 3.5, 0.25});
  {
    gd::NoGradGuard no_grad;
    nu.fill_(0.125);
  }
  std::map<std::string, gd::Tensor> state = a.state_dict();
  gp::Problem b = burgers();
  b.load_state_dict(state);
  for (const char* name : {"pde", "bc", "ic"}) CHECK(max_error(a.term(name).points(), b.term(name).points()) == 0);
  CHECK(b.weights().values() == std::vector<double>{1.0, 3.5, 0.25});
  CHECK(b.parameters()[0].second.item<double>() == 0.125);
  gd::nn::Sequential net = tanh_mlp(2, 4, 1, 5);
  CHECK(a.losses(gd::nn::AnyModule(net)).total.item<double>() == b.losses(gd::nn::AnyModule(net)).total.item<double>());
  state.erase("points/bc");
  CHECK_THROWS_WITH_AS(b.load_state_dict(state), doctest::Contains("points/bc"), gd::Error);
  CHECK_THROWS_AS(a.add(std::make_shared<gp::DirichletBC>("bc", gp::PointSpec::boundary(4), sine_of_x())), gd::Error);
  CHECK_THROWS_WITH_AS(a.term("nope"), doctest::Contains("pde, bc, ic"), gd::Error);
  CHECK_THROWS_AS(a.add_parameter("nu", 1.0), gd::Error);
}

TEST_CASE("weighting: gradient-norm balancing and learning-rate annealing follow their formulas") {
  // Two parameters p = (p0, p1); L0 = 3 p0 + p1, L1 = p0 - 4 p1:
  // gradients (3, 1) and (1, -4).
  gd::Tensor p = gd::tensor({0.5, -0.25}, kF64).requires_grad_();
  auto terms = [&] { return std::vector<gd::Tensor>{3 * p[0] + p[1], p[0] - 4 * p[1]}; };
  const double n0 = std::sqrt(10.0), n1 = std::sqrt(17.0);

  gp::LossWeights grad_norm({1.0, 1.0}, {gp::Weighting::kGradNorm, 10, 0.0});
  grad_norm.update(terms(), {p});
  CHECK(grad_norm.values()[0] == doctest::Approx((n0 + n1) / n0).epsilon(1e-14));
  CHECK(grad_norm.values()[1] == doctest::Approx((n0 + n1) / n1).epsilon(1e-14));
  gp::LossWeights smoothed({1.0, 1.0}, {gp::Weighting::kGradNorm, 10, 0.9});
  smoothed.update(terms(), {p});
  CHECK(smoothed.values()[1] == doctest::Approx(0.9 + 0.1 * (n0 + n1) / n1).epsilon(1e-14));
  // Capped at 2: (n0 + n1) / n0 = 2.30 is clipped, (n0 + n1) / n1 = 1.77 is not.
  gp::LossWeights capped({1.0, 1.0}, {gp::Weighting::kGradNorm, 10, 0.0, 2.0});
  capped.update(terms(), {p});
  CHECK(capped.values()[0] == 2.0);
  CHECK(capped.values()[1] == doctest::Approx((n0 + n1) / n1).epsilon(1e-14));

  // lambda_hat_1 = max |grad L0| / mean |grad L1| = 3 / 2.5; the first keeps 1.
  gp::LossWeights annealing({1.0, 2.0}, {gp::Weighting::kLRAnnealing, 10, 0.9});
  annealing.update(terms(), {p});
  CHECK(annealing.values()[0] == 1.0);
  CHECK(annealing.values()[1] == doctest::Approx(0.1 * 2.0 + 0.9 * 3.0 / 2.5).epsilon(1e-14));
  gp::LossWeights annealing_capped({1.0, 2.0}, {gp::Weighting::kLRAnnealing, 10, 0.9, 1.0});
  annealing_capped.update(terms(), {p});
  CHECK(annealing_capped.values()[1] == doctest::Approx(0.1 * 2.0 + 0.9 * 1.0).epsilon(1e-14));
  CHECK(annealing.due(20));
  CHECK_FALSE(annealing.due(25));
  gp::LossWeights fixed({1.0, 2.0}, {});
  fixed.update(terms(), {p});
  CHECK(fixed.values() == std::vector<double>{1.0, 2.0});
  CHECK_FALSE(fixed.due(100));

  CHECK_THROWS_AS(gp::LossWeights({-1.0}, {}), gd::Error);
  CHECK_THROWS_AS(gp::LossWeights({1.0}, {gp::Weighting::kGradNorm, 0, 0.9}), gd::Error);
  CHECK_THROWS_WITH_AS(gp::LossWeights({1.0}, {gp::Weighting::kGradNorm, 10, 0.9, 0.0}),
                       doctest::Contains("max_weight must be positive"), gd::Error);
  CHECK_THROWS_AS(grad_norm.update({terms()[0]}, {p}), gd::Error);
  CHECK(gp::parse_weighting("grad_norm") == gp::Weighting::kGradNorm);
  CHECK_THROWS_WITH_AS(gp::parse_weighting("softadapt"), doctest::Contains("lr_annealing"), gd::Error);
}

TEST_CASE("refinement: RAR adds the candidates of largest residual") {
  // A network that outputs 0 (its last layer zeroed) and the residual
  // u - f(x) with f a bump at x = 0.7: |r| = f, largest near the bump.
  gp::Problem problem(gp::Interval(0, 1));
  gp::PointFunction bump = [](const gd::Tensor& x) { return gd::exp(-200 * (x - 0.7).square()); };
  problem.add(u_minus(gp::PointSpec::interior(50), bump));
  gd::Generator generator(24);
  problem.sample(generator);
  gd::nn::Sequential net = zero_output(1, 6);
  gd::nn::AnyModule module(net);
  gp::RefinementOptions options;
  options.method = gp::Refinement::kRAR;
  options.candidates = 1000;
  options.add = 5;
  gd::Generator replay = generator.clone();  // draws the same candidates
  gd::Tensor added = gp::refine(problem, module, options, generator);
  REQUIRE(added.sizes() == gd::IntArrayRef({5, 1}));
  CHECK(problem.term("pde").points().size(0) == 55);
  CHECK(max_error(problem.term("pde").points().narrow(0, 50, 5), added) == 0);
  gd::Tensor candidates = problem.domain().sample_interior(1000, gp::Sampler::kPseudo, replay);
  gd::Tensor f = bump(candidates).reshape({-1});
  gd::Tensor worst = candidates.index_select(0, std::get<1>(gd::topk(f, 5)));
  CHECK(max_error(added, worst) == 0);
  CHECK(((added - 0.7).abs() < 0.02).all().item<bool>());
  // The residual magnitude is |f| there.
  CHECK(max_error(problem.residual_magnitude(module, "pde", candidates), f) < 1e-15);
  // max_points caps the growth.
  options.max_points = 57;
  CHECK(gp::refine(problem, module, options, generator).size(0) == 2);
  CHECK(gp::refine(problem, module, options, generator).size(0) == 0);

  // RAD redraws as many points as there are, concentrated near the bump
  // (with c = 0 the density is f itself).
  options.method = gp::Refinement::kRAD;
  options.k = 1;
  options.c = 0;
  gd::Tensor drawn = gp::refine(problem, module, options, generator);
  CHECK(drawn.size(0) == 57);
  CHECK(problem.term("pde").points().size(0) == 57);
  CHECK(((drawn - 0.7).abs() < 0.25).all().item<bool>());
  options.method = gp::Refinement::kRARD;
  options.max_points = 0;
  options.add = 10;
  CHECK(gp::refine(problem, module, options, generator).size(0) == 10);
  CHECK(problem.term("pde").points().size(0) == 67);
  // Only operator conditions can be refined.
  gp::Problem other(gp::Interval(0, 1));
  other.add(std::make_shared<gp::DirichletBC>("bc", gp::PointSpec::boundary(2), bump));
  other.sample(generator);
  options.term = "bc";
  CHECK_THROWS_WITH_AS(gp::refine(other, module, options, generator), doctest::Contains("operator condition"), gd::Error);
}

TEST_CASE("refinement: drawing without replacement follows the weights") {
  gd::Generator generator(25);
  gd::Tensor weights = gd::tensor({0.0, 1.0, 3.0}, kF64);
  int64_t third = 0;
  const int trials = 4000;
  for (int i = 0; i < trials; ++i) {
    gd::Tensor one = gp::sample_without_replacement(weights, 1, generator);
    const int64_t index = one[0].item<int64_t>();
    CHECK(index != 0);
    third += index == 2;
  }
  // P(index 2) = 3/4; 4000 draws give a standard deviation of 0.0068.
  CHECK(std::abs(static_cast<double>(third) / trials - 0.75) < 0.03);
  gd::Tensor both = gp::sample_without_replacement(weights, 2, generator);
  CHECK(gd::equal(std::get<0>(gd::sort(both)), gd::tensor({int64_t{1}, int64_t{2}})));
  CHECK_THROWS_AS(gp::sample_without_replacement(weights, 3, generator), gd::Error);
  CHECK_THROWS_AS(gp::sample_without_replacement(gd::tensor({-1.0, 1.0}, kF64), 1, generator), gd::Error);
  CHECK(gp::parse_refinement("RAR-D") == gp::Refinement::kRARD);
  CHECK_THROWS_AS(gp::parse_refinement("rar"), gd::Error);
}

TEST_CASE("causal training: time slices weighted by the earlier slices' losses") {
  // u = 0 (the last layer zeroed) and the residual u - t: r^2 = t^2 at four
  // given points. Two slices of [0, 1]: L_0 = (0.1^2 + 0.3^2) / 2 = 0.05,
  // L_1 = (0.6^2 + 0.9^2) / 2 = 0.585; the loss is (L_0 + e^{-eps L_0} L_1) / 2.
  gp::Problem problem(std::make_shared<gp::GeometryXTime>(gp::Interval(0, 1), 0.0, 1.0));
  gd::Tensor points = gd::tensor({0.5, 0.1, 0.2, 0.3, 0.7, 0.6, 0.4, 0.9}, kF64).reshape({4, 2});
  gp::PointFunction time = [](const gd::Tensor& x) { return x.narrow(1, 1, 1); };
  problem.add(u_minus(gp::PointSpec::points(points), time));
  gd::Generator generator(26);
  problem.sample(generator);
  gd::nn::Sequential net = zero_output(2, 7);
  gd::nn::AnyModule module(net);
  CHECK(problem.losses(module).values[0].item<double>() == doctest::Approx((0.01 + 0.09 + 0.36 + 0.81) / 4).epsilon(1e-14));
  problem.set_causal("pde", {2, 3.0});
  gp::Losses causal = problem.losses(module);
  CHECK(causal.values[0].item<double>() == doctest::Approx((0.05 + std::exp(-3.0 * 0.05) * 0.585) / 2).epsilon(1e-14));
  // The weights carry no gradient: with u = b (the last bias), d/db of slice
  // j's mean is -2 mean(t) there, and the loss's is (1/2) sum_j w_j of that.
  causal.total.backward();
  const gd::Tensor bias = (*net)[4]->named_parameters()["bias"];
  CHECK(bias.grad().item<double>() == doctest::Approx((-0.4 + std::exp(-0.15) * -1.5) / 2).epsilon(1e-14));
  // Held (one L-BFGS step): u = 0.2 gives L_0 = 0.01, L_1 = (0.4^2 + 0.7^2) / 2
  // = 0.325, weighted by the first call's e^{-3 * 0.05}; released, by e^{-3 * 0.01}.
  problem.hold_causal_weights(true);
  CHECK(problem.losses(module).values[0].item<double>() == doctest::Approx(causal.values[0].item<double>()).epsilon(1e-14));
  {
    gd::NoGradGuard no_grad;
    gd::Tensor(bias).fill_(0.2);
  }
  CHECK(problem.losses(module).values[0].item<double>() == doctest::Approx((0.01 + std::exp(-0.15) * 0.325) / 2).epsilon(1e-14));
  problem.hold_causal_weights(false);
  CHECK(problem.losses(module).values[0].item<double>() == doctest::Approx((0.01 + std::exp(-0.03) * 0.325) / 2).epsilon(1e-14));
  {
    gd::NoGradGuard no_grad;
    gd::Tensor(bias).fill_(0.0);
  }
  // epsilon 0: every slice weighs 1, the mean of the slice means.
  problem.set_causal("pde", {2, 0.0});
  CHECK(problem.losses(module).values[0].item<double>() == doctest::Approx((0.05 + 0.585) / 2).epsilon(1e-14));
  // Eight slices, four of them empty (a loss of 0): the points fall in 0, 2, 4 and 7.
  problem.set_causal("pde", {8, 1.0});
  const double l = (0.01 + std::exp(-0.01) * 0.09 + std::exp(-0.1) * 0.36 + std::exp(-0.46) * 0.81) / 8;
  CHECK(problem.losses(module).values[0].item<double>() == doctest::Approx(l).epsilon(1e-14));
  CHECK_THROWS_AS(problem.set_causal("nope", {2, 1.0}), gd::Error);
  CHECK_THROWS_AS(problem.set_causal("pde", {-1, 1.0}), gd::Error);
  gp::Problem no_time(gp::Interval(0, 1));
  no_time.add(std::make_shared<gp::DirichletBC>("bc", gp::PointSpec::boundary(2), time));
  CHECK_THROWS_WITH_AS(no_time.set_causal("bc", {2, 1.0}), doctest::Contains("time coordinate"), gd::Error);
}
