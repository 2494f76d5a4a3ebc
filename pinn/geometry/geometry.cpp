// The Geometry base (checks, tolerance, interior sampling by rejection from
// the bounding box), Box and Ball.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"
#include "pinn/geometry.h"

namespace gradiens::pinn {

namespace {

std::string list(const std::vector<double>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + fmt::format("{}", values[i]);
  return "[" + text + "]";
}

}  // namespace

Tensor Geometry::rows_where(const Tensor& points, const Tensor& keep) {
  return points.index_select(0, nonzero(keep).reshape({-1}));
}

double Geometry::tolerance() const {
  auto [lower, upper] = bbox();
  double diameter = 0;
  for (size_t i = 0; i < lower.size(); ++i) diameter += (upper[i] - lower[i]) * (upper[i] - lower[i]);
  return std::max(1e-12, 1e-9 * std::sqrt(diameter));
}

Tensor Geometry::checked(const Tensor& points, const std::string& what) const {
  GD_CHECK(points.defined() && points.dim() == 2 && points.size(1) == dim(),
           fmt::format("{}.{}: expected points [N, {}], got {}", name(), what, dim(),
                       points.defined() ? fmt::format("[{}]", fmt::join(points.sizes(), ", ")) : "an undefined tensor"));
  GD_CHECK(points.is_floating_point(),
           fmt::format("{}.{}: expected floating-point points, got {}", name(), what, dtype_name(points.scalar_type())));
  return points.to(kFloat64).contiguous();
}

Tensor Geometry::sample_interior(int64_t n, Sampler sampler, Generator& generator) const {
  GD_CHECK(n >= 1, fmt::format("{}.sample_interior: n must be at least 1, got {}", name(), n));
  auto [lower, upper] = bbox();
  Tensor low = tensor(lower, kFloat64), span = tensor(upper, kFloat64) - low;
  if (sampler == Sampler::kUniform) {
    // A grid over the box, as fine as n points of the domain need, kept inside.
    Tensor probe = sample_unit_cube(4096, dim(), Sampler::kHalton, generator) * span + low;
    const double fraction = std::max(inside(probe).to(kFloat64).mean().item<double>(), 1e-3);
    Tensor points = sample_unit_cube(static_cast<int64_t>(std::ceil(static_cast<double>(n) / fraction)), dim(),
                                     Sampler::kUniform, generator) * span + low;
    return rows_where(points, inside(points));
  }
  // Draw more points of the same sequence until n fall inside.
  for (int64_t draw = 2 * n;; draw *= 2) {
    Tensor points = sample_unit_cube(draw, dim(), sampler, generator) * span + low;
    Tensor kept = rows_where(points, inside(points));
    if (kept.size(0) >= n) return kept.narrow(0, 0, n);
    GD_CHECK(draw < (int64_t{1} << 26), fmt::format("{}.sample_interior: the domain fills too little of its bounding box "
                                                   "to sample", name()));
  }
}

// ---- Box ----

Box::Box(std::vector<double> lower, std::vector<double> upper)
    : Geometry(static_cast<int64_t>(lower.size())), lower_(std::move(lower)), upper_(std::move(upper)) {
  GD_CHECK(!lower_.empty() && lower_.size() == upper_.size(),
           fmt::format("Box: lower {} and upper {} must have the same, nonzero length", list(lower_), list(upper_)));
  for (size_t i = 0; i < lower_.size(); ++i)
    GD_CHECK(lower_[i] < upper_[i], fmt::format("Box: lower {} must be below upper {} in every coordinate", list(lower_),
                                               list(upper_)));
}

std::string Box::name() const { return dim() == 1 ? "Interval" : dim() == 2 ? "Rectangle" : "Box"; }

Tensor Box::inside(const Tensor& points) const {
  Tensor x = checked(points, "inside");
  const double tol = tolerance();
  return (x >= tensor(lower_, kFloat64) - tol).all(1) & (x <= tensor(upper_, kFloat64) + tol).all(1);
}

Tensor Box::on_boundary(const Tensor& points) const {
  Tensor x = checked(points, "on_boundary");
  const double tol = tolerance();
  Tensor near = ((x - tensor(lower_, kFloat64)).abs() <= tol) | ((x - tensor(upper_, kFloat64)).abs() <= tol);
  return near.any(1) & inside(x);
}

Tensor Box::boundary_normal(const Tensor& points) const {
  Tensor x = checked(points, "boundary_normal");
  const double tol = tolerance();
  // -1 on a lower face, +1 on an upper one; at an edge or corner the sum of
  // the faces' normals, normalized.
  Tensor normal = ((x - tensor(upper_, kFloat64)).abs() <= tol).to(kFloat64) -
                  ((x - tensor(lower_, kFloat64)).abs() <= tol).to(kFloat64);
  Tensor length = normal.norm(2, {1}, true);
  return where(length > 0, normal / length.clamp_min(1e-300), zeros_like(normal)) * inside(x).unsqueeze(1).to(kFloat64);
}

Tensor Box::sample_interior(int64_t n, Sampler sampler, Generator& generator) const {
  return sample_unit_cube(n, dim(), sampler, generator) * (tensor(upper_, kFloat64) - tensor(lower_, kFloat64)) +
         tensor(lower_, kFloat64);
}

Tensor Box::sample_boundary(int64_t n, Sampler sampler, Generator& generator) const {
  const int64_t d = dim();
  if (d == 1) {  // the two end points, alternately
    Tensor points = empty({n, 1}, kFloat64);
    for (int64_t i = 0; i < n; ++i) points.cpu_data_ptr<double>()[i] = i % 2 == 0 ? lower_[0] : upper_[0];
    return points;
  }
  // A point of the unit cube in d - 1 dimensions plus a face chosen by the
  // first coordinate, with probability proportional to the face's area.
  std::vector<double> face_area(static_cast<size_t>(2 * d));
  double total = 0;
  for (int64_t f = 0; f < 2 * d; ++f) {
    double area = 1;
    for (int64_t j = 0; j < d; ++j)
      if (j != f / 2) area *= upper_[j] - lower_[j];
    face_area[f] = area;
    total += area;
  }
  Tensor u = sample_unit_cube(n, d, sampler == Sampler::kUniform ? Sampler::kHammersley : sampler, generator);
  Tensor points = empty({n, d}, kFloat64);
  const double* in = u.cpu_data_ptr<double>();
  double* out = points.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    double pick = in[i * d] * total;
    int64_t face = 0;
    while (face + 1 < 2 * d && pick >= face_area[face]) pick -= face_area[face++];
    const int64_t axis = face / 2;
    int64_t k = 1;
    for (int64_t j = 0; j < d; ++j) {
      if (j == axis) out[i * d + j] = face % 2 == 0 ? lower_[j] : upper_[j];
      else out[i * d + j] = lower_[j] + in[i * d + k++] * (upper_[j] - lower_[j]);
    }
  }
  return points;
}

GeometryPtr Interval(double lower, double upper) { return std::make_shared<Box>(std::vector{lower}, std::vector{upper}); }
GeometryPtr Rectangle(std::vector<double> lower, std::vector<double> upper) {
  GD_CHECK(lower.size() == 2 && upper.size() == 2, "Rectangle: lower and upper must have two coordinates each");
  return std::make_shared<Box>(std::move(lower), std::move(upper));
}

// ---- Ball ----

Ball::Ball(std::vector<double> center, double radius)
    : Geometry(static_cast<int64_t>(center.size())), center_(std::move(center)), radius_(radius) {
  GD_CHECK(!center_.empty(), "Ball: the center needs at least one coordinate");
  GD_CHECK(radius_ > 0 && std::isfinite(radius_), fmt::format("Ball: the radius must be positive, got {}", radius_));
}

std::string Ball::name() const { return dim() == 2 ? "Disk" : "Ball"; }

std::pair<std::vector<double>, std::vector<double>> Ball::bbox() const {
  std::vector<double> lower = center_, upper = center_;
  for (size_t i = 0; i < center_.size(); ++i) {
    lower[i] -= radius_;
    upper[i] += radius_;
  }
  return {lower, upper};
}

Tensor Ball::inside(const Tensor& points) const {
  Tensor x = checked(points, "inside");
  return (x - tensor(center_, kFloat64)).norm(2, {1}, false) <= radius_ + tolerance();
}

Tensor Ball::on_boundary(const Tensor& points) const {
  Tensor x = checked(points, "on_boundary");
  return ((x - tensor(center_, kFloat64)).norm(2, {1}, false) - radius_).abs() <= tolerance();
}

Tensor Ball::boundary_normal(const Tensor& points) const {
  Tensor x = checked(points, "boundary_normal");
  Tensor offset = x - tensor(center_, kFloat64);
  return offset / offset.norm(2, {1}, true).clamp_min(1e-300) * on_boundary(x).unsqueeze(1).to(kFloat64);
}

Tensor Ball::sample_boundary(int64_t n, Sampler sampler, Generator& generator) const {
  const int64_t d = dim();
  Tensor direction;
  if (d == 1) {
    direction = empty({n, 1}, kFloat64);
    for (int64_t i = 0; i < n; ++i) direction.cpu_data_ptr<double>()[i] = i % 2 == 0 ? -1.0 : 1.0;
  } else if (d == 2) {  // equally spaced (or sequence-spaced) angles
    Tensor angle = sample_unit_cube(n, 1, sampler == Sampler::kUniform ? Sampler::kHammersley : sampler, generator) *
                   (2 * M_PI);
    direction = cat({cos(angle), sin(angle)}, 1);
  } else {
    // Points of the unit ball, projected onto the sphere: uniform on it. The
    // few near the centre (a sequence may hit it exactly) are passed over.
    Ball unit(std::vector<double>(static_cast<size_t>(d), 0.0), 1.0);
    Tensor inner = unit.sample_interior(2 * n, sampler == Sampler::kUniform ? Sampler::kHalton : sampler, generator);
    Tensor length = inner.norm(2, {1}, true);
    inner = inner.index_select(0, nonzero(length.squeeze(1) > 1e-3).reshape({-1})).narrow(0, 0, n);
    direction = inner / inner.norm(2, {1}, true);
  }
  return direction * radius_ + tensor(center_, kFloat64);
}

GeometryPtr Disk(std::vector<double> center, double radius) {
  GD_CHECK(center.size() == 2, "Disk: the center must have two coordinates");
  return std::make_shared<Ball>(std::move(center), radius);
}

}  // namespace gradiens::pinn
