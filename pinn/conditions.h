// The loss terms of a PINN, each a named mean squared residual over its own
// points: the PDE itself (an operator condition on interior points),
// Dirichlet, Neumann, Robin, periodic and initial conditions, and observed
// data (inverse problems). A term draws its points from the domain (interior,
// boundary or initial slice, optionally filtered) or takes given points, and
// computes per-point data (boundary values, normals) once per draw.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/generator.h"
#include "engine/tensor.h"
#include "pinn/geometry.h"
#include "pinn/solution.h"

namespace gradiens::pinn {

// A function of the points x [N, d]: values [N, 1] (or [N, k]), or a mask bool [N].
using PointFunction = std::function<Tensor(const Tensor& x)>;

// Where a term's points come from.
struct PointSpec {
  enum class Where { kInterior, kBoundary, kInitial, kGiven };
  Where where = Where::kInterior;
  int64_t count = 0;                 // points to draw (not for kGiven)
  Sampler sampler = Sampler::kPseudo;
  PointFunction filter;              // optional: keep the drawn points where it is true
  Tensor given;                      // kGiven: the points [N, d]

  static PointSpec interior(int64_t count, Sampler sampler = Sampler::kPseudo);
  static PointSpec boundary(int64_t count, Sampler sampler = Sampler::kPseudo, PointFunction filter = {});
  static PointSpec initial(int64_t count, Sampler sampler = Sampler::kPseudo);
  static PointSpec points(Tensor points);
};
std::string where_name(PointSpec::Where where);

// Draws `spec.count` points of `domain` (float64 [count, d]); with a filter,
// more are drawn until enough pass it, or an Error says none (or too few) do.
Tensor draw_points(const PointSpec& spec, const Geometry& domain, Generator& generator);

class Term {
 public:
  Term(std::string name, PointSpec spec) : name_(std::move(name)), spec_(std::move(spec)) {}
  virtual ~Term() = default;
  const std::string& name() const { return name_; }
  const PointSpec& spec() const { return spec_; }
  // The derivatives residual() reads.
  virtual DerivativeNeeds needs() const = 0;
  // The residual at points(), [N, k], from the solution there.
  virtual Tensor residual(Solution& solution) = 0;

  // The points the solution is evaluated at (after arrange()).
  const Tensor& points() const { return points_; }
  // Takes drawn (or given) points: arranges them and computes per-point data.
  void set_points(const Tensor& drawn, const Geometry& domain);
  // Draws fresh points by the spec (given points are taken as they are).
  void sample(const Geometry& domain, Generator& generator);
  // Appends points (residual-based refinement), keeping the ones there.
  void add_points(const Tensor& drawn, const Geometry& domain);
  // The drawn points before arrange() (what a checkpoint keeps).
  const Tensor& drawn() const { return drawn_; }

 protected:
  // The evaluation points for drawn ones (periodic pairs them); identity by default.
  virtual Tensor arrange(const Tensor& drawn) const { return drawn; }
  // Per-point data for the current points.
  virtual void prepare(const Geometry& /*domain*/) {}

 private:
  std::string name_;
  PointSpec spec_;
  Tensor drawn_, points_;
};
using TermPtr = std::shared_ptr<Term>;

// residual(solution, data) on the term's points: the PDE, or any operator
// condition. `data` holds the point functions (sources, coefficients)
// evaluated at the same points, computed once per draw.
class OperatorCondition : public Term {
 public:
  using Residual = std::function<Tensor(Solution&, const std::vector<Tensor>& data)>;
  OperatorCondition(std::string name, PointSpec spec, DerivativeNeeds needs, Residual residual,
                    std::vector<PointFunction> data = {});
  // A residual that reads no point data.
  OperatorCondition(std::string name, PointSpec spec, DerivativeNeeds needs, std::function<Tensor(Solution&)> residual);
  DerivativeNeeds needs() const override { return needs_; }
  Tensor residual(Solution& solution) override;
  // The residual at the solution's own points (any, e.g. refinement
  // candidates), with the point data evaluated there.
  Tensor residual_at(Solution& solution) const;

 protected:
  void prepare(const Geometry& domain) override;

 private:
  std::vector<Tensor> evaluate_data(const Tensor& x) const;
  DerivativeNeeds needs_;
  Residual residual_;
  std::vector<PointFunction> data_functions_;
  std::vector<Tensor> data_;
};

// u_c = g(x).
class DirichletBC : public Term {
 public:
  DirichletBC(std::string name, PointSpec spec, PointFunction value, int64_t component = 0);
  DerivativeNeeds needs() const override { return {}; }
  Tensor residual(Solution& solution) override;

 protected:
  void prepare(const Geometry& domain) override;

 private:
  PointFunction value_;
  int64_t component_;
  Tensor target_;
};

// du_c/dn = a(x) u_c + g(x) with n the domain's outward normal: Neumann
// without a (coefficient unset), Robin with it.
class NeumannBC : public Term {
 public:
  NeumannBC(std::string name, PointSpec spec, PointFunction value, int64_t component = 0, PointFunction coefficient = {});
  DerivativeNeeds needs() const override;
  Tensor residual(Solution& solution) override;

 protected:
  void prepare(const Geometry& domain) override;

 private:
  PointFunction value_, coefficient_;
  int64_t component_;
  Tensor target_, coefficients_, normals_;
  int64_t dims_ = 0;
};
// The Robin condition du/dn = a(x) u + g(x).
TermPtr RobinBC(std::string name, PointSpec spec, PointFunction coefficient, PointFunction value, int64_t component = 0);

// d^k u_c / dx_dim^k equal at x_dim = lower and x_dim = upper, for every k up
// to derivative_order: the drawn points are moved onto both faces in pairs.
class PeriodicBC : public Term {
 public:
  PeriodicBC(std::string name, PointSpec spec, int64_t dim, double lower, double upper, int64_t derivative_order = 0,
             int64_t component = 0);
  DerivativeNeeds needs() const override;
  Tensor residual(Solution& solution) override;

 protected:
  Tensor arrange(const Tensor& drawn) const override;

 private:
  int64_t dim_;
  double lower_, upper_;
  int64_t order_, component_;
};

// d^k u_c / dt^k = g(x) at the initial time (t is the last coordinate); k = 0
// is the initial value, k = 1 the initial velocity.
class InitialCondition : public Term {
 public:
  InitialCondition(std::string name, PointSpec spec, PointFunction value, int64_t component = 0,
                   int64_t time_derivative = 0);
  DerivativeNeeds needs() const override;
  Tensor residual(Solution& solution) override;

 protected:
  void prepare(const Geometry& domain) override;

 private:
  PointFunction value_;
  int64_t component_, order_;
  Tensor target_;
  int64_t time_dim_ = 0;
};

// Observations: u at given points equals given values [N, k] (columns
// `components`, default the first k).
class DataCondition : public Term {
 public:
  DataCondition(std::string name, Tensor points, Tensor values, std::vector<int64_t> components = {});
  DerivativeNeeds needs() const override { return {}; }
  Tensor residual(Solution& solution) override;

 private:
  Tensor values_;
  std::vector<int64_t> components_;
};

}  // namespace gradiens::pinn
