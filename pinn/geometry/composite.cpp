// Domains built from others: CSG union / difference / intersection, the
// point cloud, and a spatial domain crossed with a time interval.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/geometry.h"

namespace gradiens::pinn {

// ---- CSG ----

CSG::CSG(Operation operation, GeometryPtr a, GeometryPtr b)
    : Geometry(a ? a->dim() : 0), operation_(operation), a_(std::move(a)), b_(std::move(b)) {
  GD_CHECK(a_ && b_, "CSG: both operands must be given");
  GD_CHECK(a_->dim() == b_->dim(), fmt::format("CSG: a {}-dimensional {} and a {}-dimensional {} cannot be combined",
                                              a_->dim(), a_->name(), b_->dim(), b_->name()));
}

std::string CSG::name() const {
  const char* op = operation_ == Operation::kUnion ? "Union" : operation_ == Operation::kDifference ? "Difference"
                                                                                                     : "Intersection";
  return fmt::format("{}({}, {})", op, a_->name(), b_->name());
}

std::pair<std::vector<double>, std::vector<double>> CSG::bbox() const {
  auto [lower, upper] = a_->bbox();
  if (operation_ == Operation::kDifference) return {lower, upper};
  auto [lower_b, upper_b] = b_->bbox();
  for (size_t i = 0; i < lower.size(); ++i) {
    if (operation_ == Operation::kUnion) {
      lower[i] = std::min(lower[i], lower_b[i]);
      upper[i] = std::max(upper[i], upper_b[i]);
    } else {
      lower[i] = std::max(lower[i], lower_b[i]);
      upper[i] = std::min(upper[i], upper_b[i]);
    }
  }
  return {lower, upper};
}

Tensor CSG::strictly_inside(const Geometry& g, const Tensor& points) { return g.inside(points) & ~g.on_boundary(points); }

Tensor CSG::inside(const Tensor& points) const {
  Tensor x = checked(points, "inside");
  switch (operation_) {
    case Operation::kUnion: return a_->inside(x) | b_->inside(x);
    case Operation::kDifference: return a_->inside(x) & ~strictly_inside(*b_, x);
    case Operation::kIntersection: return a_->inside(x) & b_->inside(x);
  }
  return Tensor();
}

// Which boundary points come from a's boundary (`on_a`), and all of them.
Tensor CSG::boundary_parts(const Tensor& x, Tensor& on_a) const {
  Tensor a_edge = a_->on_boundary(x), b_edge = b_->on_boundary(x);
  Tensor on_b;
  switch (operation_) {
    case Operation::kUnion:
      on_a = a_edge & ~strictly_inside(*b_, x);
      on_b = b_edge & ~strictly_inside(*a_, x);
      break;
    case Operation::kDifference:
      on_a = a_edge & ~strictly_inside(*b_, x);
      on_b = b_edge & a_->inside(x);
      break;
    case Operation::kIntersection:
      on_a = a_edge & b_->inside(x);
      on_b = b_edge & a_->inside(x);
      break;
  }
  return on_a | on_b;
}

Tensor CSG::on_boundary(const Tensor& points) const {
  Tensor x = checked(points, "on_boundary"), on_a;
  return boundary_parts(x, on_a);
}

Tensor CSG::boundary_normal(const Tensor& points) const {
  Tensor x = checked(points, "boundary_normal"), on_a;
  Tensor on = boundary_parts(x, on_a);
  // b's outward normal points into a difference's domain: it flips.
  Tensor b_normal = b_->boundary_normal(x) * (operation_ == Operation::kDifference ? -1.0 : 1.0);
  Tensor normal = where(on_a.unsqueeze(1), a_->boundary_normal(x), b_normal);
  return normal * on.unsqueeze(1).to(kFloat64);
}

Tensor CSG::sample_boundary(int64_t n, Sampler sampler, Generator& generator) const {
  GD_CHECK(n >= 1, fmt::format("{}.sample_boundary: n must be at least 1, got {}", name(), n));
  for (int64_t draw = n;; draw *= 2) {
    Tensor candidates = cat({a_->sample_boundary(draw, sampler, generator), b_->sample_boundary(draw, sampler, generator)});
    Tensor kept = rows_where(candidates, on_boundary(candidates));
    if (kept.size(0) >= n) {
      // Interleave the two operands' points so that a prefix draws on both.
      Tensor order = randperm(kept.size(0), generator);
      return kept.index_select(0, order.narrow(0, 0, n));
    }
    GD_CHECK(draw < (int64_t{1} << 24), fmt::format("{}.sample_boundary: the boundary is too small to sample", name()));
  }
}

GeometryPtr Union(GeometryPtr a, GeometryPtr b) { return std::make_shared<CSG>(CSG::Operation::kUnion, a, b); }
GeometryPtr Difference(GeometryPtr a, GeometryPtr b) { return std::make_shared<CSG>(CSG::Operation::kDifference, a, b); }
GeometryPtr Intersection(GeometryPtr a, GeometryPtr b) {
  return std::make_shared<CSG>(CSG::Operation::kIntersection, a, b);
}

// ---- PointCloud ----

PointCloud::PointCloud(Tensor interior, Tensor boundary, Tensor normals)
    : Geometry(interior.defined() && interior.dim() == 2 ? interior.size(1) : 0) {
  GD_CHECK(interior.defined() && interior.dim() == 2 && interior.size(0) > 0 && interior.size(1) > 0,
           "PointCloud: the interior points must be a non-empty [N, d] tensor");
  interior_ = interior.to(kFloat64).contiguous();
  if (boundary.defined()) {
    GD_CHECK(boundary.dim() == 2 && boundary.size(1) == dim(),
             fmt::format("PointCloud: the boundary points must be [M, {}]", dim()));
    GD_CHECK(normals.defined() && normals.sizes() == boundary.sizes(),
             "PointCloud: the boundary points need normals of the same shape");
    boundary_ = boundary.to(kFloat64).contiguous();
    normals_ = (normals.to(kFloat64) / normals.to(kFloat64).norm(2, {1}, true).clamp_min(1e-300)).contiguous();
  }
}

std::pair<std::vector<double>, std::vector<double>> PointCloud::bbox() const {
  Tensor all = boundary_.defined() ? cat({interior_, boundary_}) : interior_;
  Tensor low = std::get<0>(all.min(0)).contiguous(), high = std::get<0>(all.max(0)).contiguous();
  std::vector<double> lower(low.cpu_data_ptr<double>(), low.cpu_data_ptr<double>() + dim());
  std::vector<double> upper(high.cpu_data_ptr<double>(), high.cpu_data_ptr<double>() + dim());
  for (int64_t j = 0; j < dim(); ++j)
    if (upper[j] <= lower[j]) upper[j] = lower[j] + 1;  // a flat cloud still has a box
  return {lower, upper};
}

std::vector<int64_t> PointCloud::match(const Tensor& points, const Tensor& stored) const {
  const int64_t n = points.size(0), d = dim();
  std::vector<int64_t> index(static_cast<size_t>(n), -1);
  if (!stored.defined()) return index;
  const double tol = tolerance();
  const double* p = points.cpu_data_ptr<double>();
  const double* s = stored.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < stored.size(0) && index[i] < 0; ++r) {
      double distance2 = 0;
      for (int64_t j = 0; j < d; ++j) distance2 += (p[i * d + j] - s[r * d + j]) * (p[i * d + j] - s[r * d + j]);
      if (distance2 <= tol * tol) index[i] = r;
    }
  return index;
}

Tensor PointCloud::on_boundary(const Tensor& points) const {
  Tensor x = checked(points, "on_boundary");
  std::vector<int64_t> index = match(x, boundary_);
  Tensor result = empty({x.size(0)}, kBool);
  for (size_t i = 0; i < index.size(); ++i) result.cpu_data_ptr<bool>()[i] = index[i] >= 0;
  return result;
}

Tensor PointCloud::inside(const Tensor& points) const {
  Tensor x = checked(points, "inside");
  std::vector<int64_t> index = match(x, interior_);
  Tensor result = on_boundary(x);
  for (size_t i = 0; i < index.size(); ++i) result.cpu_data_ptr<bool>()[i] |= index[i] >= 0;
  return result;
}

Tensor PointCloud::boundary_normal(const Tensor& points) const {
  Tensor x = checked(points, "boundary_normal");
  std::vector<int64_t> index = match(x, boundary_);
  Tensor normals = zeros({x.size(0), dim()}, kFloat64);
  for (size_t i = 0; i < index.size(); ++i)
    if (index[i] >= 0) normals[static_cast<int64_t>(i)].copy_(normals_[index[i]]);
  return normals;
}

namespace {

Tensor pick(const Tensor& stored, int64_t n, Sampler sampler, Generator& generator, const std::string& what) {
  GD_CHECK(stored.defined() && n >= 1 && n <= stored.size(0),
           fmt::format("PointCloud.{}: asked for {} points of the {} stored", what, n, stored.defined() ? stored.size(0) : 0));
  if (sampler == Sampler::kPseudo || sampler == Sampler::kLHS)
    return stored.index_select(0, randperm(stored.size(0), generator).narrow(0, 0, n));
  return stored.narrow(0, 0, n);
}

}  // namespace

Tensor PointCloud::sample_interior(int64_t n, Sampler sampler, Generator& generator) const {
  return pick(interior_, n, sampler, generator, "sample_interior");
}

Tensor PointCloud::sample_boundary(int64_t n, Sampler sampler, Generator& generator) const {
  return pick(boundary_, n, sampler, generator, "sample_boundary");
}

// ---- GeometryXTime ----

GeometryXTime::GeometryXTime(GeometryPtr space, double t0, double t1)
    : Geometry(space ? space->dim() + 1 : 0), space_(std::move(space)), t0_(t0), t1_(t1) {
  GD_CHECK(space_ != nullptr, "GeometryXTime: the spatial domain must be given");
  GD_CHECK(t0_ < t1_, fmt::format("GeometryXTime: the time interval [{}, {}] is empty", t0_, t1_));
}

std::string GeometryXTime::name() const { return space_->name() + "XTime"; }

std::pair<std::vector<double>, std::vector<double>> GeometryXTime::bbox() const {
  auto [lower, upper] = space_->bbox();
  lower.push_back(t0_);
  upper.push_back(t1_);
  return {lower, upper};
}

Tensor GeometryXTime::inside(const Tensor& points) const {
  Tensor x = checked(points, "inside");
  Tensor t = x.select(1, dim() - 1);
  const double tol = tolerance();
  return space_->inside(x.narrow(1, 0, dim() - 1).contiguous()) & (t >= t0_ - tol) & (t <= t1_ + tol);
}

Tensor GeometryXTime::on_boundary(const Tensor& points) const {
  Tensor x = checked(points, "on_boundary");
  return space_->on_boundary(x.narrow(1, 0, dim() - 1).contiguous()) & inside(x);
}

Tensor GeometryXTime::on_initial(const Tensor& points) const {
  Tensor x = checked(points, "on_initial");
  return ((x.select(1, dim() - 1) - t0_).abs() <= tolerance()) & inside(x);
}

Tensor GeometryXTime::boundary_normal(const Tensor& points) const {
  Tensor x = checked(points, "boundary_normal");
  Tensor spatial = space_->boundary_normal(x.narrow(1, 0, dim() - 1).contiguous());
  return cat({spatial, zeros({x.size(0), 1}, kFloat64)}, 1) * inside(x).unsqueeze(1).to(kFloat64);
}

Tensor GeometryXTime::sample_boundary(int64_t n, Sampler sampler, Generator& generator) const {
  Tensor space = space_->sample_boundary(n, sampler, generator);
  // One time in each of n equal strata, in a random order.
  Tensor strata = randperm(n, generator).to(kFloat64);
  Tensor t = ((strata + rand({n}, generator, TensorOptions().dtype(kFloat64))) / static_cast<double>(n)) * (t1_ - t0_) + t0_;
  return cat({space, t.unsqueeze(1)}, 1);
}

Tensor GeometryXTime::sample_initial(int64_t n, Sampler sampler, Generator& generator) const {
  Tensor space = space_->sample_interior(n, sampler, generator);
  return cat({space, full({space.size(0), 1}, t0_, kFloat64)}, 1);
}

}  // namespace gradiens::pinn
