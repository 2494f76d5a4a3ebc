// Every condition's residual against the nested operators and closed forms
// (normals of a box, periodic pairs, time derivatives), and point drawing
// with filters.
#include <cmath>
#include <numbers>

#include <doctest/doctest.h>

#include "engine/functions.h"
#include "engine/generator.h"
#include "kernels/error.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "pinn/conditions.h"
#include "tests/pinn/pinn_test_util.h"
#include "pinn/operators.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;

namespace {

using gp::testing::kF64;
using gp::testing::max_error;
using gp::testing::tanh_mlp;

// The residual of `term` at its points by the nested engine.
gd::Tensor nested_residual(gp::Term& term, gd::nn::Sequential net) {
  gp::Solution s(gd::nn::AnyModule(net), term.points(), term.needs(), gp::Engine::kNested);
  return term.residual(s).detach();
}

// u and its nested derivatives at `x`, for building expected residuals.
struct Fields {
  gd::Tensor x, u;
};
Fields fields(gd::nn::Sequential net, const gd::Tensor& points) {
  Fields f;
  f.x = points.detach().clone().requires_grad_();
  f.u = net->forward(f.x);
  return f;
}

gp::PointFunction constant(double value) {
  return [value](const gd::Tensor& x) { return gd::full({x.size(0), 1}, value, kF64); };
}

}  // namespace

TEST_CASE("conditions: Dirichlet, Neumann and Robin residuals on a box") {
  auto square = gp::Rectangle({0, 0}, {1, 1});
  gd::nn::Sequential net = tanh_mlp(2, 6, 1, 11);
  gd::Generator generator(5);
  // g(x) = x + 2y, as a point function.
  gp::PointFunction g = [](const gd::Tensor& x) { return x.narrow(1, 0, 1) + 2 * x.narrow(1, 1, 1); };

  gp::DirichletBC dirichlet("bc", gp::PointSpec::boundary(64), g);
  dirichlet.sample(*square, generator);
  REQUIRE(dirichlet.points().sizes() == gd::IntArrayRef({64, 2}));
  CHECK(square->on_boundary(dirichlet.points()).all().item<bool>());
  Fields f = fields(net, dirichlet.points());
  CHECK(max_error(nested_residual(dirichlet, net), f.u.detach() - g(dirichlet.points())) < 1e-15);

  // Neumann: du/dn with the box's normals, checked face by face.
  gp::NeumannBC neumann("flux", gp::PointSpec::boundary(64), g);
  neumann.sample(*square, generator);
  gd::Tensor x = neumann.points();
  f = fields(net, x);
  gd::Tensor grad = gp::grad(f.u, f.x).detach();
  std::vector<double> expected;
  for (int64_t i = 0; i < x.size(0); ++i) {
    const double px = x[i][0].item<double>(), py = x[i][1].item<double>();
    double dn = 0;  // corners excluded by the sampler's measure-zero chance
    if (std::abs(px) < 1e-12) dn = -grad[i][0].item<double>();
    else if (std::abs(px - 1) < 1e-12) dn = grad[i][0].item<double>();
    else if (std::abs(py) < 1e-12) dn = -grad[i][1].item<double>();
    else dn = grad[i][1].item<double>();
    expected.push_back(dn - (px + 2 * py));
  }
  gd::Tensor want = gd::from_blob(expected.data(), {x.size(0), 1}, kF64).clone();
  CHECK(max_error(nested_residual(neumann, net), want) < 1e-14);

  // Robin: du/dn = 3 u + g.
  gp::TermPtr robin = gp::RobinBC("robin", gp::PointSpec::points(x), constant(3.0), g);
  robin->sample(*square, generator);
  CHECK(max_error(nested_residual(*robin, net), want - 3 * f.u.detach()) < 1e-14);
}

TEST_CASE("conditions: periodic pairs match values and derivatives across the faces") {
  auto domain = std::make_shared<gp::GeometryXTime>(gp::Interval(-1, 1), 0.0, 1.0);
  gd::nn::Sequential net = tanh_mlp(2, 6, 1, 12);
  gd::Generator generator(6);
  gp::PeriodicBC periodic("periodic", gp::PointSpec::boundary(20), /*dim=*/0, -1.0, 1.0, /*derivative_order=*/1);
  periodic.sample(*domain, generator);
  const gd::Tensor& x = periodic.points();
  REQUIRE(x.sizes() == gd::IntArrayRef({40, 2}));
  CHECK((x.narrow(0, 0, 20).narrow(1, 0, 1) == -1).all().item<bool>());
  CHECK((x.narrow(0, 20, 20).narrow(1, 0, 1) == 1).all().item<bool>());
  CHECK(max_error(x.narrow(0, 0, 20).narrow(1, 1, 1), x.narrow(0, 20, 20).narrow(1, 1, 1)) == 0);
  Fields f = fields(net, x);
  gd::Tensor u = f.u.detach(), ux = gp::partial(f.u, f.x, {0}).detach();
  gd::Tensor want = gd::cat({u.narrow(0, 0, 20) - u.narrow(0, 20, 20), ux.narrow(0, 0, 20) - ux.narrow(0, 20, 20)}, 1);
  CHECK(max_error(nested_residual(periodic, net), want) < 1e-15);
  CHECK_THROWS_AS(gp::PeriodicBC("p", gp::PointSpec::boundary(4), 0, 1.0, -1.0), gd::Error);
  CHECK_THROWS_AS(gp::PeriodicBC("p", gp::PointSpec::boundary(4), 0, -1.0, 1.0, 5), gd::Error);
  gp::PeriodicBC out_of_range("p", gp::PointSpec::boundary(4), 3, -1.0, 1.0);
  CHECK_THROWS_AS(out_of_range.sample(*domain, generator), gd::Error);
}

TEST_CASE("conditions: initial value and velocity, data and operator conditions") {
  auto domain = std::make_shared<gp::GeometryXTime>(gp::Interval(0, 1), 0.0, 2.0);
  gd::nn::Sequential net = tanh_mlp(2, 6, 2, 13);
  gd::Generator generator(7);
  gp::PointFunction sine = [](const gd::Tensor& x) { return gd::sin(std::numbers::pi * x.narrow(1, 0, 1)); };
  gp::InitialCondition value("ic", gp::PointSpec::initial(16), sine);
  gp::InitialCondition velocity("ic_t", gp::PointSpec::initial(16), sine, /*component=*/1, /*time_derivative=*/1);
  value.sample(*domain, generator);
  velocity.sample(*domain, generator);
  CHECK((value.points().narrow(1, 1, 1) == 0).all().item<bool>());
  Fields f = fields(net, velocity.points());
  gd::Tensor ut = gp::partial(f.u, f.x, {1}, 1).detach();
  CHECK(max_error(nested_residual(velocity, net), ut - sine(velocity.points())) < 1e-15);
  f = fields(net, value.points());
  CHECK(max_error(nested_residual(value, net), f.u.narrow(1, 0, 1).detach() - sine(value.points())) < 1e-15);

  // Data: the second component observed at 5 points.
  gd::Tensor at = gd::rand({5, 2}, generator, kF64), observed = gd::rand({5, 1}, generator, kF64);
  gp::DataCondition data("data", at, observed, {1});
  data.sample(*domain, generator);  // given points are kept as they are
  CHECK(max_error(data.points(), at) == 0);
  f = fields(net, at);
  CHECK(max_error(nested_residual(data, net), f.u.narrow(1, 1, 1).detach() - observed) < 1e-15);
  CHECK_THROWS_AS(gp::DataCondition("d", at, gd::rand({4, 1}, kF64)), gd::Error);
  CHECK_THROWS_AS(gp::DataCondition("d", at, observed, {0, 1}), gd::Error);

  // An operator condition: u_t - u_xx - f(x) with the source as point data.
  gp::DerivativeNeeds needs{{{1}, {0, 0}}, false, {}};
  gp::OperatorCondition heat(
      "pde", gp::PointSpec::interior(32), needs,
      [](gp::Solution& s, const std::vector<gd::Tensor>& data) { return s.d(1) - s.d({0, 0}) - data[0]; }, {sine});
  heat.sample(*domain, generator);
  f = fields(net, heat.points());
  gd::Tensor want = gp::partial(f.u, f.x, {1}).detach() - gp::partial(f.u, f.x, {0, 0}).detach() - sine(heat.points());
  CHECK(max_error(nested_residual(heat, net), want) < 1e-14);
  // Initial points need a space-time domain.
  gp::InitialCondition no_time("ic", gp::PointSpec::initial(4), sine);
  CHECK_THROWS_WITH_AS(no_time.sample(*gp::Interval(0, 1), generator), doctest::Contains("space-time"), gd::Error);
}

TEST_CASE("conditions: filtered boundary points, and filters that keep too few") {
  auto square = gp::Rectangle({0, 0}, {1, 1});
  gd::Generator generator(8);
  gp::PointFunction left = [](const gd::Tensor& x) { return x.narrow(1, 0, 1).reshape({-1}).abs() < 1e-12; };
  for (gp::Sampler sampler : {gp::Sampler::kPseudo, gp::Sampler::kSobol}) {
    gd::Tensor points = gp::draw_points(gp::PointSpec::boundary(50, sampler, left), *square, generator);
    REQUIRE(points.sizes() == gd::IntArrayRef({50, 2}));
    CHECK((points.narrow(1, 0, 1) == 0).all().item<bool>());
    // Distinct points along the face.
    gd::Tensor ys = std::get<0>(gd::sort(points.narrow(1, 1, 1).reshape({-1})));
    CHECK((ys.narrow(0, 1, 49) > ys.narrow(0, 0, 49)).all().item<bool>());
  }
  gp::PointFunction nowhere = [](const gd::Tensor& x) { return x.narrow(1, 0, 1).reshape({-1}) > 2; };
  CHECK_THROWS_WITH_AS(gp::draw_points(gp::PointSpec::boundary(10, gp::Sampler::kPseudo, nowhere), *square, generator),
                       doctest::Contains("keeps 0 of the 10"), gd::Error);
  CHECK_THROWS_AS(gp::draw_points(gp::PointSpec::interior(0), *square, generator), gd::Error);
  CHECK_THROWS_AS(gp::draw_points(gp::PointSpec::points(gd::zeros({3, 3}, kF64)), *square, generator), gd::Error);
}
