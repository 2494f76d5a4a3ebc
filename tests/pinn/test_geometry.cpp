// Geometry against closed forms: inside / boundary / normals at known points,
// sampled points on the boundary with the right normals, and areas by Sobol
// Monte Carlo against the exact values.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "pinn/geometry.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;

namespace {

gd::Tensor points(std::initializer_list<std::initializer_list<double>> rows) {
  std::vector<double> flat;
  int64_t width = 0;
  for (const auto& row : rows) {
    width = static_cast<int64_t>(row.size());
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return gd::tensor(flat, gd::kFloat64).reshape({static_cast<int64_t>(rows.size()), width});
}

std::vector<bool> bools(const gd::Tensor& t) {
  std::vector<bool> out;
  for (int64_t i = 0; i < t.size(0); ++i) out.push_back(t[i].item<bool>());
  return out;
}

// The share of 2^16 Sobol points of the bounding box inside, times its volume.
double volume(const gp::Geometry& g) {
  gd::Generator generator(0);
  auto [lower, upper] = g.bbox();
  gd::Tensor low = gd::tensor(lower, gd::kFloat64), span = gd::tensor(upper, gd::kFloat64) - low;
  gd::Tensor x = gp::sample_unit_cube(1 << 16, g.dim(), gp::Sampler::kSobol, generator) * span + low;
  return g.inside(x).to(gd::kFloat64).mean().item<double>() * span.prod().item<double>();
}

// Every sampled boundary point is on the boundary, inside, with a unit normal.
void check_boundary_samples(const gp::Geometry& g, gp::Sampler sampler) {
  gd::Generator generator(5);
  gd::Tensor x = g.sample_boundary(200, sampler, generator);
  CHECK(x.size(0) == 200);
  CHECK(g.on_boundary(x).all().item<bool>());
  CHECK(g.inside(x).all().item<bool>());
  CHECK((g.boundary_normal(x).norm(2, {1}, false) - 1.0).abs().max().item<double>() < 1e-12);
  gd::Tensor interior = g.sample_interior(300, sampler, generator);
  CHECK(g.inside(interior).all().item<bool>());
}

}  // namespace

TEST_CASE("geometry: box, interval and rectangle") {
  gp::Box box({0, -1, 2}, {1, 1, 3});
  CHECK(box.name() == "Box");
  gd::Tensor x = points({{0.5, 0, 2.5}, {1, 0, 2.5}, {0, -1, 2}, {1.5, 0, 2.5}});
  CHECK(bools(box.inside(x)) == std::vector<bool>{true, true, true, false});
  CHECK(bools(box.on_boundary(x)) == std::vector<bool>{false, true, true, false});
  gd::Tensor normal = box.boundary_normal(x);
  CHECK(gd::equal(normal[1], gd::tensor({1.0, 0.0, 0.0}, gd::kFloat64)));
  // A corner: the three faces' normals summed and normalized.
  CHECK((normal[2] - gd::full({3}, -1.0 / std::sqrt(3.0), gd::kFloat64)).abs().max().item<double>() < 1e-15);
  CHECK(gd::equal(normal[0], gd::zeros({3}, gd::kFloat64)));
  CHECK(volume(box) == doctest::Approx(2.0).epsilon(1e-12));
  for (gp::Sampler s : {gp::Sampler::kPseudo, gp::Sampler::kSobol, gp::Sampler::kHammersley}) check_boundary_samples(box, s);
  auto interval = gp::Interval(-1, 2);
  CHECK(interval->name() == "Interval");
  CHECK(bools(interval->on_boundary(points({{-1}, {2}, {0}}))) == std::vector<bool>{true, true, false});
  CHECK(interval->boundary_normal(points({{-1}}))[0][0].item<double>() == -1.0);
  CHECK_THROWS_WITH(gp::Box({0, 1}, {1, 1}), "Box: lower [0, 1] must be below upper [1, 1] in every coordinate");
  CHECK_THROWS_WITH(box.inside(points({{0.5, 0.5}})), "Box.inside: expected points [N, 3], got [1, 2]");
}

TEST_CASE("geometry: ball and disk") {
  gp::Ball ball({1, 0, 0, 0, 0}, 2.0);
  gd::Tensor x = points({{3, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {1, 2, 1, 0, 0}});
  CHECK(bools(ball.inside(x)) == std::vector<bool>{true, true, false});
  CHECK(bools(ball.on_boundary(x)) == std::vector<bool>{true, false, false});
  CHECK(gd::equal(ball.boundary_normal(x)[0], gd::tensor({1.0, 0.0, 0.0, 0.0, 0.0}, gd::kFloat64)));
  check_boundary_samples(ball, gp::Sampler::kSobol);
  check_boundary_samples(ball, gp::Sampler::kPseudo);
  auto disk = gp::Disk({0, 0}, 0.5);
  CHECK(volume(*disk) == doctest::Approx(M_PI * 0.25).epsilon(2e-3));
  // A point at angle 1 on the circle: its normal is (cos 1, sin 1).
  gd::Tensor on = points({{0.5 * std::cos(1.0), 0.5 * std::sin(1.0)}});
  CHECK((disk->boundary_normal(on)[0] - gd::tensor({std::cos(1.0), std::sin(1.0)}, gd::kFloat64)).abs().max().item<double>() <
        1e-15);
  check_boundary_samples(*disk, gp::Sampler::kHammersley);
}

TEST_CASE("geometry: ellipse") {
  // Semi-axes 2 and 1, turned by 30 degrees.
  const double angle = M_PI / 6;
  gp::Ellipse ellipse({1, 1}, 2, 1, angle);
  auto rotate = [&](double u, double v) { return std::vector<double>{1 + std::cos(angle) * u - std::sin(angle) * v,
                                                                      1 + std::sin(angle) * u + std::cos(angle) * v}; };
  auto tip = rotate(2, 0), top = rotate(0, 1), outside = rotate(0, 1.01);
  gd::Tensor x = points({{tip[0], tip[1]}, {top[0], top[1]}, {outside[0], outside[1]}, {1, 1}});
  CHECK(bools(ellipse.inside(x)) == std::vector<bool>{true, true, false, true});
  CHECK(bools(ellipse.on_boundary(x)) == std::vector<bool>{true, true, false, false});
  gd::Tensor normal = ellipse.boundary_normal(x);
  CHECK((normal[0] - gd::tensor({std::cos(angle), std::sin(angle)}, gd::kFloat64)).abs().max().item<double>() < 1e-12);
  CHECK((normal[1] - gd::tensor({-std::sin(angle), std::cos(angle)}, gd::kFloat64)).abs().max().item<double>() < 1e-12);
  CHECK(volume(ellipse) == doctest::Approx(2 * M_PI).epsilon(2e-3));
  check_boundary_samples(ellipse, gp::Sampler::kSobol);
}

TEST_CASE("geometry: polygon and triangle") {
  // An L shape, given clockwise: area 3.
  gp::Polygon shape({{0, 0}, {0, 2}, {1, 2}, {1, 1}, {2, 1}, {2, 0}});
  CHECK(shape.area() == 3.0);
  gd::Tensor x = points({{0.5, 0.5}, {1.5, 1.5}, {1.5, 1}, {0, 1}, {1, 1.5}});
  CHECK(bools(shape.inside(x)) == std::vector<bool>{true, false, true, true, true});
  CHECK(bools(shape.on_boundary(x)) == std::vector<bool>{false, false, true, true, true});
  gd::Tensor normal = shape.boundary_normal(x);
  CHECK(gd::equal(normal[2], gd::tensor({0.0, 1.0}, gd::kFloat64)));
  CHECK(gd::equal(normal[3], gd::tensor({-1.0, 0.0}, gd::kFloat64)));
  CHECK(gd::equal(normal[4], gd::tensor({1.0, 0.0}, gd::kFloat64)));
  CHECK(volume(shape) == doctest::Approx(3.0).epsilon(2e-3));
  check_boundary_samples(shape, gp::Sampler::kSobol);
  auto triangle = gp::Triangle({0, 0}, {1, 0}, {0, 1});
  CHECK(triangle->name() == "Triangle");
  CHECK(bools(triangle->on_boundary(points({{0.5, 0.5}, {0.2, 0.2}}))) == std::vector<bool>{true, false});
  gd::Tensor hypotenuse = triangle->boundary_normal(points({{0.5, 0.5}}))[0];
  CHECK((hypotenuse - gd::full({2}, 1 / std::sqrt(2.0), gd::kFloat64)).abs().max().item<double>() < 1e-15);
  CHECK(volume(*triangle) == doctest::Approx(0.5).epsilon(2e-3));
  check_boundary_samples(*triangle, gp::Sampler::kPseudo);
  CHECK_THROWS_WITH(gp::Polygon({{0, 0}, {1, 1}, {2, 2}}), "Polygon: the vertices enclose no area");
}

TEST_CASE("geometry: CSG union, difference and intersection") {
  auto square = gp::Rectangle({0, 0}, {2, 2});
  auto hole = gp::Disk({1, 1}, 0.5);
  auto plate = gp::Difference(square, hole);
  CHECK(volume(*plate) == doctest::Approx(4 - M_PI / 4).epsilon(2e-3));
  gd::Tensor x = points({{1, 1}, {1.5, 1}, {0, 1}, {0.2, 0.2}});
  CHECK(bools(plate->inside(x)) == std::vector<bool>{false, true, true, true});
  CHECK(bools(plate->on_boundary(x)) == std::vector<bool>{false, true, true, false});
  // The hole's edge: the normal points into the hole (out of the plate).
  CHECK(gd::equal(plate->boundary_normal(x)[1], gd::tensor({-1.0, 0.0}, gd::kFloat64)));
  CHECK(gd::equal(plate->boundary_normal(x)[2], gd::tensor({-1.0, 0.0}, gd::kFloat64)));
  check_boundary_samples(*plate, gp::Sampler::kSobol);

  auto right = gp::Rectangle({1, 0}, {3, 2});
  auto both = gp::Union(square, right);
  CHECK(volume(*both) == doctest::Approx(6.0).epsilon(1e-9));
  // (1.5, 0.5) is inside both squares: inside the union, not on its boundary.
  CHECK(bools(both->on_boundary(points({{1.5, 0.5}, {3, 1}}))) == std::vector<bool>{false, true});
  check_boundary_samples(*both, gp::Sampler::kHalton);

  auto lens = gp::Intersection(gp::Disk({0, 0}, 1), gp::Disk({1, 0}, 1));
  // The lens of two unit circles one apart: 2 pi / 3 - sqrt(3) / 2.
  CHECK(volume(*lens) == doctest::Approx(2 * M_PI / 3 - std::sqrt(3.0) / 2).epsilon(3e-3));
  check_boundary_samples(*lens, gp::Sampler::kSobol);
  CHECK_THROWS_WITH(gp::Union(square, gp::Interval(0, 1)),
                    "CSG: a 2-dimensional Rectangle and a 1-dimensional Interval cannot be combined");
}

TEST_CASE("geometry: point cloud with normals") {
  gd::Tensor interior = points({{0.5, 0.5}, {0.25, 0.75}, {0.75, 0.25}});
  gd::Tensor boundary = points({{0, 0.5}, {1, 0.5}});
  gd::Tensor normals = points({{-2, 0}, {3, 0}});  // normalized on construction
  gp::PointCloud cloud(interior, boundary, normals);
  gd::Tensor x = points({{0.5, 0.5}, {1, 0.5}, {0.4, 0.4}});
  CHECK(bools(cloud.inside(x)) == std::vector<bool>{true, true, false});
  CHECK(bools(cloud.on_boundary(x)) == std::vector<bool>{false, true, false});
  CHECK(gd::equal(cloud.boundary_normal(x)[1], gd::tensor({1.0, 0.0}, gd::kFloat64)));
  gd::Generator generator(0);
  CHECK(gd::equal(cloud.sample_interior(2, gp::Sampler::kSobol, generator), interior.narrow(0, 0, 2)));
  CHECK(cloud.sample_boundary(2, gp::Sampler::kPseudo, generator).size(0) == 2);
  CHECK_THROWS_WITH(cloud.sample_interior(4, gp::Sampler::kSobol, generator),
                    "PointCloud.sample_interior: asked for 4 points of the 3 stored");
}

TEST_CASE("geometry: space crossed with time") {
  gp::GeometryXTime domain(gp::Interval(-1, 1), 0, 0.99);
  CHECK(domain.dim() == 2);
  gd::Tensor x = points({{-1, 0.5}, {0.2, 0}, {0.2, 0.5}, {0.2, 1.5}});
  CHECK(bools(domain.inside(x)) == std::vector<bool>{true, true, true, false});
  CHECK(bools(domain.on_boundary(x)) == std::vector<bool>{true, false, false, false});
  CHECK(bools(domain.on_initial(x)) == std::vector<bool>{false, true, false, false});
  CHECK(gd::equal(domain.boundary_normal(x)[0], gd::tensor({-1.0, 0.0}, gd::kFloat64)));
  gd::Generator generator(2);
  gd::Tensor edge = domain.sample_boundary(100, gp::Sampler::kSobol, generator);
  CHECK(domain.on_boundary(edge).all().item<bool>());
  // Stratified times: one in each hundredth of [0, 0.99].
  gd::Tensor strata = std::get<0>((edge.select(1, 1) / 0.99 * 100).to(gd::kInt64).sort());
  CHECK(gd::equal(strata, gd::arange(100)));
  gd::Tensor initial = domain.sample_initial(50, gp::Sampler::kHammersley, generator);
  CHECK(domain.on_initial(initial).all().item<bool>());
  gd::Tensor interior = domain.sample_interior(500, gp::Sampler::kSobol, generator);
  CHECK(domain.inside(interior).all().item<bool>());
  CHECK(interior.select(1, 1).max().item<double>() <= 0.99);
}
