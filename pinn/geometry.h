// PINN domains: each answers inside / on-boundary / outward boundary normal
// for points [N, d] (float64) and samples its interior and boundary with any
// sampler of pinn/sampling.h. Box (Interval, Rectangle, any dimension), Ball
// (Disk, any dimension), Ellipse, Polygon (Triangle), CSG union / difference /
// intersection, a point cloud with normals, and a time interval crossed with
// any of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/generator.h"
#include "engine/tensor.h"
#include "pinn/sampling.h"

namespace gradiens::pinn {

class Geometry {
 public:
  explicit Geometry(int64_t dim) : dim_(dim) {}
  virtual ~Geometry() = default;
  int64_t dim() const { return dim_; }
  virtual std::string name() const = 0;
  // The axis-aligned bounding box: lower and upper corners.
  virtual std::pair<std::vector<double>, std::vector<double>> bbox() const = 0;

  // bool [N]: the point lies in the closed domain (boundary included).
  virtual Tensor inside(const Tensor& points) const = 0;
  // bool [N]: the point lies on the boundary, within tolerance().
  virtual Tensor on_boundary(const Tensor& points) const = 0;
  // float64 [N, d]: the outward unit normal at boundary points, zero rows elsewhere.
  virtual Tensor boundary_normal(const Tensor& points) const = 0;

  // n points of the interior: the sampler's points of the bounding box that
  // fall inside, in sequence order (about n for the uniform grid).
  virtual Tensor sample_interior(int64_t n, Sampler sampler, Generator& generator) const;
  // n points of the boundary.
  virtual Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const = 0;

  // The distance under which a point counts as on the boundary: 1e-9 of the
  // bounding box's diameter (at least 1e-12).
  double tolerance() const;

 protected:
  // `points` as float64 [N, d], contiguous, or an Error naming `what`.
  Tensor checked(const Tensor& points, const std::string& what) const;
  // The rows of `points` where `keep` (bool [N]) is true.
  static Tensor rows_where(const Tensor& points, const Tensor& keep);

 private:
  int64_t dim_;
};

using GeometryPtr = std::shared_ptr<const Geometry>;

// The box [lower, upper] in any dimension (1: an interval, 2: a rectangle).
class Box : public Geometry {
 public:
  Box(std::vector<double> lower, std::vector<double> upper);
  std::string name() const override;
  std::pair<std::vector<double>, std::vector<double>> bbox() const override { return {lower_, upper_}; }
  Tensor inside(const Tensor& points) const override;
  Tensor on_boundary(const Tensor& points) const override;
  Tensor boundary_normal(const Tensor& points) const override;
  Tensor sample_interior(int64_t n, Sampler sampler, Generator& generator) const override;
  Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const override;

 private:
  std::vector<double> lower_, upper_;
};
GeometryPtr Interval(double lower, double upper);
GeometryPtr Rectangle(std::vector<double> lower, std::vector<double> upper);

// The closed ball |x - center| <= radius in any dimension (2: a disk).
class Ball : public Geometry {
 public:
  Ball(std::vector<double> center, double radius);
  std::string name() const override;
  std::pair<std::vector<double>, std::vector<double>> bbox() const override;
  Tensor inside(const Tensor& points) const override;
  Tensor on_boundary(const Tensor& points) const override;
  Tensor boundary_normal(const Tensor& points) const override;
  Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const override;

 private:
  std::vector<double> center_;
  double radius_;
};
GeometryPtr Disk(std::vector<double> center, double radius);

// The ellipse with semi-axes a (along `angle` radians from the x axis) and b.
class Ellipse : public Geometry {
 public:
  Ellipse(std::vector<double> center, double a, double b, double angle = 0);
  std::string name() const override { return "Ellipse"; }
  std::pair<std::vector<double>, std::vector<double>> bbox() const override;
  Tensor inside(const Tensor& points) const override;
  Tensor on_boundary(const Tensor& points) const override;
  Tensor boundary_normal(const Tensor& points) const override;
  // Uniform in arc length.
  Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const override;

 private:
  // A point in the ellipse's own frame (axes along x and y).
  std::pair<double, double> local(double x, double y) const;
  // sqrt((u/a)^2 + (v/b)^2) of each point in that frame: 1 on the curve.
  Tensor level(const Tensor& x) const;
  std::vector<double> center_;
  double a_, b_, cos_, sin_;
  std::vector<double> arc_;  // cumulative arc length at equally spaced parameters
};

// A simple polygon (vertices in either orientation); Triangle is one with three.
class Polygon : public Geometry {
 public:
  explicit Polygon(std::vector<std::pair<double, double>> vertices);
  std::string name() const override { return vertices_.size() == 3 ? "Triangle" : "Polygon"; }
  std::pair<std::vector<double>, std::vector<double>> bbox() const override;
  Tensor inside(const Tensor& points) const override;
  Tensor on_boundary(const Tensor& points) const override;
  // An edge's outward normal; at a vertex, the normalized sum of its two edges'.
  Tensor boundary_normal(const Tensor& points) const override;
  // Uniform in arc length along the perimeter.
  Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const override;
  double area() const;

 private:
  std::vector<std::pair<double, double>> vertices_;  // counter-clockwise
  std::vector<double> perimeter_;                     // cumulative edge lengths
};
GeometryPtr Triangle(std::pair<double, double> a, std::pair<double, double> b, std::pair<double, double> c);

// Constructive solid geometry of two domains of the same dimension.
class CSG : public Geometry {
 public:
  enum class Operation { kUnion, kDifference, kIntersection };
  CSG(Operation operation, GeometryPtr a, GeometryPtr b);
  std::string name() const override;
  std::pair<std::vector<double>, std::vector<double>> bbox() const override;
  Tensor inside(const Tensor& points) const override;
  Tensor on_boundary(const Tensor& points) const override;
  Tensor boundary_normal(const Tensor& points) const override;
  // Points of each operand's boundary that lie on this boundary.
  Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const override;

 private:
  // bool [N]: inside and not on the boundary.
  static Tensor strictly_inside(const Geometry& g, const Tensor& points);
  Tensor boundary_parts(const Tensor& points, Tensor& on_a) const;
  Operation operation_;
  GeometryPtr a_, b_;
};
GeometryPtr Union(GeometryPtr a, GeometryPtr b);
GeometryPtr Difference(GeometryPtr a, GeometryPtr b);
GeometryPtr Intersection(GeometryPtr a, GeometryPtr b);

// A domain known only by points: interior points, and boundary points with
// their outward normals. A point is inside or on the boundary when it is one
// of them (within tolerance); sampling picks among them.
class PointCloud : public Geometry {
 public:
  PointCloud(Tensor interior, Tensor boundary = {}, Tensor normals = {});
  std::string name() const override { return "PointCloud"; }
  std::pair<std::vector<double>, std::vector<double>> bbox() const override;
  Tensor inside(const Tensor& points) const override;
  Tensor on_boundary(const Tensor& points) const override;
  Tensor boundary_normal(const Tensor& points) const override;
  // n of the stored points: the first n for the uniform and sequence samplers,
  // a random choice for pseudo and LHS; more than are stored is an Error.
  Tensor sample_interior(int64_t n, Sampler sampler, Generator& generator) const override;
  Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const override;

 private:
  // For each point, the index of the stored row it matches, or -1.
  std::vector<int64_t> match(const Tensor& points, const Tensor& stored) const;
  Tensor interior_, boundary_, normals_;
};

// A spatial domain crossed with the time interval [t0, t1]: points are
// (x, t), the last coordinate time. The boundary is the spatial boundary at
// every time; the initial slice t = t0 is apart (on_initial, sample_initial).
class GeometryXTime : public Geometry {
 public:
  GeometryXTime(GeometryPtr space, double t0, double t1);
  std::string name() const override;
  std::pair<std::vector<double>, std::vector<double>> bbox() const override;
  Tensor inside(const Tensor& points) const override;
  Tensor on_boundary(const Tensor& points) const override;
  Tensor boundary_normal(const Tensor& points) const override;
  Tensor on_initial(const Tensor& points) const;
  // Spatial boundary points, each at a stratified random time.
  Tensor sample_boundary(int64_t n, Sampler sampler, Generator& generator) const override;
  // Spatial interior points at t0.
  Tensor sample_initial(int64_t n, Sampler sampler, Generator& generator) const;
  const Geometry& space() const { return *space_; }

 private:
  GeometryPtr space_;
  double t0_, t1_;
};

}  // namespace gradiens::pinn
