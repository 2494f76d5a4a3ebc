// The plane domains: Ellipse and Polygon (Triangle).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/geometry.h"

namespace gradiens::pinn {

namespace {

// The position along a cumulative-length table (values at equally spaced
// parameters 0..1) whose length is `target`, by linear interpolation.
double parameter_at(const std::vector<double>& cumulative, double target) {
  auto it = std::lower_bound(cumulative.begin(), cumulative.end(), target);
  if (it == cumulative.begin()) return 0;
  if (it == cumulative.end()) return 1;
  const auto i = static_cast<size_t>(it - cumulative.begin());
  const double span = cumulative[i] - cumulative[i - 1];
  const double fraction = span > 0 ? (target - cumulative[i - 1]) / span : 0;
  return (static_cast<double>(i - 1) + fraction) / static_cast<double>(cumulative.size() - 1);
}

Tensor boundary_parameters(int64_t n, Sampler sampler, Generator& generator) {
  return sample_unit_cube(n, 1, sampler == Sampler::kUniform ? Sampler::kHammersley : sampler, generator);
}

}  // namespace

// ---- Ellipse ----

Ellipse::Ellipse(std::vector<double> center, double a, double b, double angle)
    : Geometry(2), center_(std::move(center)), a_(a), b_(b), cos_(std::cos(angle)), sin_(std::sin(angle)) {
  GD_CHECK(center_.size() == 2, "Ellipse: the center must have two coordinates");
  GD_CHECK(a_ > 0 && b_ > 0, fmt::format("Ellipse: the semi-axes must be positive, got {} and {}", a_, b_));
  constexpr int kSteps = 4096;
  arc_.assign(kSteps + 1, 0.0);
  for (int i = 1; i <= kSteps; ++i) {
    const double t0 = 2 * M_PI * (i - 1) / kSteps, t1 = 2 * M_PI * i / kSteps;
    arc_[i] = arc_[i - 1] + std::hypot(a_ * (std::cos(t1) - std::cos(t0)), b_ * (std::sin(t1) - std::sin(t0)));
  }
}

std::pair<std::vector<double>, std::vector<double>> Ellipse::bbox() const {
  const double half_x = std::hypot(a_ * cos_, b_ * sin_), half_y = std::hypot(a_ * sin_, b_ * cos_);
  return {{center_[0] - half_x, center_[1] - half_y}, {center_[0] + half_x, center_[1] + half_y}};
}

std::pair<double, double> Ellipse::local(double x, double y) const {
  const double dx = x - center_[0], dy = y - center_[1];
  return {cos_ * dx + sin_ * dy, -sin_ * dx + cos_ * dy};
}

Tensor Ellipse::level(const Tensor& x) const {
  const int64_t n = x.size(0);
  Tensor result = empty({n}, kFloat64);
  const double* p = x.cpu_data_ptr<double>();
  double* out = result.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    auto [u, v] = local(p[2 * i], p[2 * i + 1]);
    out[i] = std::sqrt((u / a_) * (u / a_) + (v / b_) * (v / b_));
  }
  return result;
}

// Both tests scale the tolerance by the smaller semi-axis: within tolerance of
// the curve counts as on it.
Tensor Ellipse::inside(const Tensor& points) const {
  return level(checked(points, "inside")) <= 1 + tolerance() / std::min(a_, b_);
}

Tensor Ellipse::on_boundary(const Tensor& points) const {
  return (level(checked(points, "on_boundary")) - 1).abs() <= tolerance() / std::min(a_, b_);
}

Tensor Ellipse::boundary_normal(const Tensor& points) const {
  Tensor x = checked(points, "boundary_normal");
  Tensor on = on_boundary(x);
  const int64_t n = x.size(0);
  Tensor normals = zeros({n, 2}, kFloat64);
  const double* p = x.cpu_data_ptr<double>();
  double* out = normals.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    if (!on.cpu_data_ptr<bool>()[i]) continue;
    auto [u, v] = local(p[2 * i], p[2 * i + 1]);
    // The gradient of (u/a)^2 + (v/b)^2, rotated back.
    const double gu = u / (a_ * a_), gv = v / (b_ * b_), length = std::hypot(gu, gv);
    out[2 * i] = (cos_ * gu - sin_ * gv) / length;
    out[2 * i + 1] = (sin_ * gu + cos_ * gv) / length;
  }
  return normals;
}

Tensor Ellipse::sample_boundary(int64_t n, Sampler sampler, Generator& generator) const {
  Tensor s = boundary_parameters(n, sampler, generator);
  Tensor points = empty({n, 2}, kFloat64);
  const double* in = s.cpu_data_ptr<double>();
  double* out = points.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    const double t = 2 * M_PI * parameter_at(arc_, in[i] * arc_.back());
    const double u = a_ * std::cos(t), v = b_ * std::sin(t);
    out[2 * i] = center_[0] + cos_ * u - sin_ * v;
    out[2 * i + 1] = center_[1] + sin_ * u + cos_ * v;
  }
  return points;
}

// ---- Polygon ----

Polygon::Polygon(std::vector<std::pair<double, double>> vertices) : Geometry(2), vertices_(std::move(vertices)) {
  GD_CHECK(vertices_.size() >= 3, fmt::format("Polygon: needs at least 3 vertices, got {}", vertices_.size()));
  double twice_area = 0;
  for (size_t i = 0; i < vertices_.size(); ++i) {
    const auto& [x0, y0] = vertices_[i];
    const auto& [x1, y1] = vertices_[(i + 1) % vertices_.size()];
    twice_area += x0 * y1 - x1 * y0;
  }
  GD_CHECK(std::abs(twice_area) > 0, "Polygon: the vertices enclose no area");
  if (twice_area < 0) std::reverse(vertices_.begin(), vertices_.end());
  perimeter_.push_back(0);
  for (size_t i = 0; i < vertices_.size(); ++i) {
    const auto& [x0, y0] = vertices_[i];
    const auto& [x1, y1] = vertices_[(i + 1) % vertices_.size()];
    perimeter_.push_back(perimeter_.back() + std::hypot(x1 - x0, y1 - y0));
  }
}

double Polygon::area() const {
  double twice_area = 0;
  for (size_t i = 0; i < vertices_.size(); ++i) {
    const auto& [x0, y0] = vertices_[i];
    const auto& [x1, y1] = vertices_[(i + 1) % vertices_.size()];
    twice_area += x0 * y1 - x1 * y0;
  }
  return twice_area / 2;
}

std::pair<std::vector<double>, std::vector<double>> Polygon::bbox() const {
  std::vector<double> lower = {vertices_[0].first, vertices_[0].second}, upper = lower;
  for (const auto& [x, y] : vertices_) {
    lower = {std::min(lower[0], x), std::min(lower[1], y)};
    upper = {std::max(upper[0], x), std::max(upper[1], y)};
  }
  return {lower, upper};
}

namespace {

// The distance from (x, y) to the segment from (x0, y0) to (x1, y1).
double segment_distance(double x, double y, double x0, double y0, double x1, double y1) {
  const double dx = x1 - x0, dy = y1 - y0, length2 = dx * dx + dy * dy;
  const double t = std::clamp(((x - x0) * dx + (y - y0) * dy) / length2, 0.0, 1.0);
  return std::hypot(x - (x0 + t * dx), y - (y0 + t * dy));
}

}  // namespace

Tensor Polygon::on_boundary(const Tensor& points) const {
  Tensor x = checked(points, "on_boundary");
  const int64_t n = x.size(0);
  Tensor result = empty({n}, kBool);
  const double* p = x.cpu_data_ptr<double>();
  bool* out = result.cpu_data_ptr<bool>();
  const double tol = tolerance();
  for (int64_t i = 0; i < n; ++i) {
    out[i] = false;
    for (size_t e = 0; e < vertices_.size() && !out[i]; ++e) {
      const auto& [x0, y0] = vertices_[e];
      const auto& [x1, y1] = vertices_[(e + 1) % vertices_.size()];
      out[i] = segment_distance(p[2 * i], p[2 * i + 1], x0, y0, x1, y1) <= tol;
    }
  }
  return result;
}

Tensor Polygon::inside(const Tensor& points) const {
  Tensor x = checked(points, "inside");
  const int64_t n = x.size(0);
  Tensor result = on_boundary(x);
  const double* p = x.cpu_data_ptr<double>();
  bool* out = result.cpu_data_ptr<bool>();
  for (int64_t i = 0; i < n; ++i) {
    if (out[i]) continue;
    // Even-odd crossings of a ray towards +x.
    bool in = false;
    const double px = p[2 * i], py = p[2 * i + 1];
    for (size_t e = 0; e < vertices_.size(); ++e) {
      const auto& [x0, y0] = vertices_[e];
      const auto& [x1, y1] = vertices_[(e + 1) % vertices_.size()];
      if ((y0 > py) != (y1 > py) && px < x0 + (py - y0) * (x1 - x0) / (y1 - y0)) in = !in;
    }
    out[i] = in;
  }
  return result;
}

Tensor Polygon::boundary_normal(const Tensor& points) const {
  Tensor x = checked(points, "boundary_normal");
  const int64_t n = x.size(0);
  Tensor normals = zeros({n, 2}, kFloat64);
  const double* p = x.cpu_data_ptr<double>();
  double* out = normals.cpu_data_ptr<double>();
  const double tol = tolerance();
  for (int64_t i = 0; i < n; ++i) {
    double nx = 0, ny = 0;
    for (size_t e = 0; e < vertices_.size(); ++e) {
      const auto& [x0, y0] = vertices_[e];
      const auto& [x1, y1] = vertices_[(e + 1) % vertices_.size()];
      if (segment_distance(p[2 * i], p[2 * i + 1], x0, y0, x1, y1) > tol) continue;
      const double length = std::hypot(x1 - x0, y1 - y0);
      nx += (y1 - y0) / length;  // counter-clockwise: outward is the edge turned clockwise
      ny += -(x1 - x0) / length;
    }
    const double length = std::hypot(nx, ny);
    if (length > 0) {
      out[2 * i] = nx / length;
      out[2 * i + 1] = ny / length;
    }
  }
  return normals;
}

Tensor Polygon::sample_boundary(int64_t n, Sampler sampler, Generator& generator) const {
  Tensor s = boundary_parameters(n, sampler, generator);
  Tensor points = empty({n, 2}, kFloat64);
  const double* in = s.cpu_data_ptr<double>();
  double* out = points.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    const double target = in[i] * perimeter_.back();
    size_t e = static_cast<size_t>(std::upper_bound(perimeter_.begin(), perimeter_.end(), target) - perimeter_.begin());
    e = std::clamp<size_t>(e, 1, vertices_.size()) - 1;
    const double length = perimeter_[e + 1] - perimeter_[e], t = length > 0 ? (target - perimeter_[e]) / length : 0;
    const auto& [x0, y0] = vertices_[e];
    const auto& [x1, y1] = vertices_[(e + 1) % vertices_.size()];
    out[2 * i] = x0 + t * (x1 - x0);
    out[2 * i + 1] = y0 + t * (y1 - y0);
  }
  return points;
}

GeometryPtr Triangle(std::pair<double, double> a, std::pair<double, double> b, std::pair<double, double> c) {
  return std::make_shared<Polygon>(std::vector{a, b, c});
}

}  // namespace gradiens::pinn
