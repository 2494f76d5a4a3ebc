// PINN loss terms: point drawing and the residual of each condition (pinn/conditions.h).
#include "pinn/conditions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::pinn {

namespace {

PointSpec drawn(PointSpec::Where where, int64_t count, Sampler sampler, PointFunction filter = {}) {
  PointSpec spec;
  spec.where = where;
  spec.count = count;
  spec.sampler = sampler;
  spec.filter = std::move(filter);
  return spec;
}

}  // namespace

PointSpec PointSpec::interior(int64_t count, Sampler sampler) { return drawn(Where::kInterior, count, sampler); }

PointSpec PointSpec::boundary(int64_t count, Sampler sampler, PointFunction filter) {
  return drawn(Where::kBoundary, count, sampler, std::move(filter));
}

PointSpec PointSpec::initial(int64_t count, Sampler sampler) { return drawn(Where::kInitial, count, sampler); }

PointSpec PointSpec::points(Tensor points) {
  PointSpec spec;
  spec.where = Where::kGiven;
  spec.given = std::move(points);
  return spec;
}

std::string where_name(PointSpec::Where where) {
  switch (where) {
    case PointSpec::Where::kInterior: return "interior";
    case PointSpec::Where::kBoundary: return "boundary";
    case PointSpec::Where::kInitial: return "initial";
    case PointSpec::Where::kGiven: return "given";
  }
  return "?";
}

namespace {

Tensor draw_unfiltered(const PointSpec& spec, int64_t n, const Geometry& domain, Generator& generator) {
  switch (spec.where) {
    case PointSpec::Where::kInterior: return domain.sample_interior(n, spec.sampler, generator);
    case PointSpec::Where::kBoundary: return domain.sample_boundary(n, spec.sampler, generator);
    case PointSpec::Where::kInitial: {
      auto* xt = dynamic_cast<const GeometryXTime*>(&domain);
      GD_CHECK(xt != nullptr, fmt::format("pinn: initial points need a space-time domain, but the domain is {}", domain.name()));
      return xt->sample_initial(n, spec.sampler, generator);
    }
    case PointSpec::Where::kGiven: break;
  }
  return spec.given;
}

}  // namespace

Tensor draw_points(const PointSpec& spec, const Geometry& domain, Generator& generator) {
  if (spec.where == PointSpec::Where::kGiven) {
    GD_CHECK(spec.given.defined() && spec.given.dim() == 2 && spec.given.size(1) == domain.dim(),
             fmt::format("pinn: given points must be [N, {}] for the {} domain", domain.dim(), domain.name()));
    return spec.given.detach().to(kFloat64).contiguous();
  }
  GD_CHECK(spec.count > 0, fmt::format("pinn: the number of {} points must be positive, got {}", where_name(spec.where),
                                       spec.count));
  if (!spec.filter) return draw_unfiltered(spec, spec.count, domain, generator);
  // Draw more, in growing rounds, until enough points pass the filter.
  std::vector<Tensor> kept;
  int64_t have = 0;
  for (int round = 0; round < 12 && have < spec.count; ++round) {
    Tensor drawn = draw_unfiltered(spec, spec.count << round, domain, generator);
    Tensor keep = spec.filter(drawn);
    GD_CHECK(keep.defined() && keep.dim() == 1 && keep.size(0) == drawn.size(0),
             "pinn: a point filter must return one bool per point");
    Tensor passed = drawn.index_select(0, keep.to(kBool).nonzero().reshape({-1}));
    if (spec.sampler == Sampler::kPseudo || spec.sampler == Sampler::kLHS) {
      kept.push_back(passed);
      have += passed.size(0);
    } else {  // deterministic sequences: each round's draw contains the last one
      kept = {passed};
      have = passed.size(0);
    }
  }
  GD_CHECK(have >= spec.count, fmt::format("pinn: the filter of {} points keeps {} of the {} asked for; does it select "
                                           "part of the {} domain's {}?", where_name(spec.where), have, spec.count,
                                           domain.name(), where_name(spec.where)));
  return cat(kept, 0).narrow(0, 0, spec.count).contiguous();
}

void Term::set_points(const Tensor& drawn, const Geometry& domain) {
  GD_CHECK(drawn.defined() && drawn.dim() == 2 && drawn.size(1) == domain.dim(),
           fmt::format("pinn: term {}: points must be [N, {}], got {}", name_, domain.dim(),
                       drawn.defined() ? fmt::format("[{}]", fmt::join(drawn.sizes(), ", ")) : "undefined"));
  drawn_ = drawn.detach().to(kFloat64).contiguous();
  points_ = arrange(drawn_);
  prepare(domain);
}

void Term::sample(const Geometry& domain, Generator& generator) { set_points(draw_points(spec_, domain, generator), domain); }

void Term::add_points(const Tensor& drawn, const Geometry& domain) {
  set_points(drawn_.defined() ? cat({drawn_, drawn.detach().to(kFloat64)}, 0) : drawn, domain);
}

namespace {

// f(x) as a float64 [N, k] target for `term`.
Tensor evaluate_target(const PointFunction& f, const Tensor& x, const std::string& term) {
  Tensor value = f(x);
  GD_CHECK(value.defined(), fmt::format("pinn: term {}: the value function returned nothing", term));
  if (value.dim() == 1) value = value.unsqueeze(1);
  GD_CHECK(value.dim() == 2 && value.size(0) == x.size(0),
           fmt::format("pinn: term {}: the value function must return [N, k] with N = {}, got [{}]", term, x.size(0),
                       fmt::join(value.sizes(), ", ")));
  return value.detach().to(kFloat64);
}

// The target (kept on the host) in the solution's dtype (float32 runs) and on its device.
Tensor as_dtype(const Tensor& target, const Solution& solution) {
  return target.to(solution.output().device(), solution.output().scalar_type());
}

}  // namespace

OperatorCondition::OperatorCondition(std::string name, PointSpec spec, DerivativeNeeds needs, Residual residual,
                                     std::vector<PointFunction> data)
    : Term(std::move(name), std::move(spec)), needs_(std::move(needs)), residual_(std::move(residual)),
      data_functions_(std::move(data)) {
  GD_CHECK(static_cast<bool>(residual_), fmt::format("pinn: operator condition {} has no residual function", this->name()));
}

OperatorCondition::OperatorCondition(std::string name, PointSpec spec, DerivativeNeeds needs,
                                     std::function<Tensor(Solution&)> residual)
    : OperatorCondition(std::move(name), std::move(spec), std::move(needs),
                        residual ? Residual([residual](Solution& s, const std::vector<Tensor>&) { return residual(s); })
                                 : Residual()) {}

std::vector<Tensor> OperatorCondition::evaluate_data(const Tensor& x) const {
  std::vector<Tensor> data;
  for (const PointFunction& f : data_functions_) data.push_back(evaluate_target(f, x, name()));
  return data;
}

void OperatorCondition::prepare(const Geometry&) { data_ = evaluate_data(points()); }

namespace {

Tensor checked_residual(Tensor r, const Solution& solution, const std::string& name) {
  GD_CHECK(r.defined() && r.dim() >= 1 && r.size(0) == solution.size(),
           fmt::format("pinn: the residual of {} must have one row per point ({})", name, solution.size()));
  return r.dim() == 1 ? r.unsqueeze(1) : r;
}

}  // namespace

Tensor OperatorCondition::residual(Solution& solution) {
  std::vector<Tensor> data;
  for (const Tensor& d : data_) data.push_back(as_dtype(d, solution));
  return checked_residual(residual_(solution, data), solution, name());
}

Tensor OperatorCondition::residual_at(Solution& solution) const {
  std::vector<Tensor> data;
  // The data functions evaluate on the host.
  for (const Tensor& d : evaluate_data(solution.x().cpu())) data.push_back(as_dtype(d, solution));
  return checked_residual(residual_(solution, data), solution, name());
}

DirichletBC::DirichletBC(std::string name, PointSpec spec, PointFunction value, int64_t component)
    : Term(std::move(name), std::move(spec)), value_(std::move(value)), component_(component) {
  GD_CHECK(static_cast<bool>(value_), fmt::format("pinn: Dirichlet condition {} has no value function", this->name()));
}

void DirichletBC::prepare(const Geometry&) { target_ = evaluate_target(value_, points(), name()); }

Tensor DirichletBC::residual(Solution& solution) { return solution.u(component_) - as_dtype(target_, solution); }

NeumannBC::NeumannBC(std::string name, PointSpec spec, PointFunction value, int64_t component, PointFunction coefficient)
    : Term(std::move(name), std::move(spec)), value_(std::move(value)), coefficient_(std::move(coefficient)),
      component_(component) {
  GD_CHECK(static_cast<bool>(value_), fmt::format("pinn: Neumann/Robin condition {} has no value function", this->name()));
}

void NeumannBC::prepare(const Geometry& domain) {
  target_ = evaluate_target(value_, points(), name());
  coefficients_ = coefficient_ ? evaluate_target(coefficient_, points(), name()) : Tensor();
  normals_ = domain.boundary_normal(points());
  dims_ = domain.dim();
}

DerivativeNeeds NeumannBC::needs() const {
  DerivativeNeeds needs;
  for (int64_t i = 0; i < dims_; ++i) needs.partials.push_back({i});
  return needs;
}

Tensor NeumannBC::residual(Solution& solution) {
  Tensor du_dn = (solution.gradient(component_) * as_dtype(normals_, solution)).sum({1}, /*keepdim=*/true);
  Tensor rhs = as_dtype(target_, solution);
  if (coefficients_.defined()) rhs = rhs + as_dtype(coefficients_, solution) * solution.u(component_);
  return du_dn - rhs;
}

TermPtr RobinBC(std::string name, PointSpec spec, PointFunction coefficient, PointFunction value, int64_t component) {
  GD_CHECK(static_cast<bool>(coefficient), fmt::format("pinn: Robin condition {} has no coefficient function", name));
  return std::make_shared<NeumannBC>(std::move(name), std::move(spec), std::move(value), component, std::move(coefficient));
}

PeriodicBC::PeriodicBC(std::string name, PointSpec spec, int64_t dim, double lower, double upper, int64_t derivative_order,
                       int64_t component)
    : Term(std::move(name), std::move(spec)), dim_(dim), lower_(lower), upper_(upper), order_(derivative_order),
      component_(component) {
  GD_CHECK(dim_ >= 0, fmt::format("pinn: periodic condition {}: coordinate {} is negative", this->name(), dim_));
  GD_CHECK(lower_ < upper_, fmt::format("pinn: periodic condition {}: lower ({}) must be below upper ({})", this->name(),
                                        lower_, upper_));
  GD_CHECK(order_ >= 0 && order_ <= 4, fmt::format("pinn: periodic condition {}: derivative order {} is outside 0..4",
                                                   this->name(), order_));
}

Tensor PeriodicBC::arrange(const Tensor& drawn) const {
  GD_CHECK(dim_ < drawn.size(1), fmt::format("pinn: periodic condition {}: coordinate {} is out of range for {}-dimensional "
                                             "points", name(), dim_, drawn.size(1)));
  Tensor low = drawn.clone(), high = drawn.clone();
  low.narrow(1, dim_, 1).fill_(lower_);
  high.narrow(1, dim_, 1).fill_(upper_);
  return cat({low, high}, 0);
}

DerivativeNeeds PeriodicBC::needs() const {
  DerivativeNeeds needs;
  for (int64_t k = 1; k <= order_; ++k) needs.partials.emplace_back(static_cast<size_t>(k), dim_);
  return needs;
}

Tensor PeriodicBC::residual(Solution& solution) {
  const int64_t n = solution.size() / 2;
  std::vector<Tensor> columns;
  for (int64_t k = 0; k <= order_; ++k) {
    Tensor v = solution.d(std::vector<int64_t>(static_cast<size_t>(k), dim_), component_);
    columns.push_back(v.narrow(0, 0, n) - v.narrow(0, n, n));
  }
  return columns.size() == 1 ? columns[0] : cat(columns, 1);
}

InitialCondition::InitialCondition(std::string name, PointSpec spec, PointFunction value, int64_t component,
                                   int64_t time_derivative)
    : Term(std::move(name), std::move(spec)), value_(std::move(value)), component_(component), order_(time_derivative) {
  GD_CHECK(static_cast<bool>(value_), fmt::format("pinn: initial condition {} has no value function", this->name()));
  GD_CHECK(order_ >= 0 && order_ <= 4, fmt::format("pinn: initial condition {}: time derivative order {} is outside 0..4",
                                                   this->name(), order_));
}

void InitialCondition::prepare(const Geometry& domain) {
  target_ = evaluate_target(value_, points(), name());
  time_dim_ = domain.dim() - 1;
}

DerivativeNeeds InitialCondition::needs() const {
  DerivativeNeeds needs;
  if (order_ > 0) needs.partials.emplace_back(static_cast<size_t>(order_), time_dim_);
  return needs;
}

Tensor InitialCondition::residual(Solution& solution) {
  return solution.d(std::vector<int64_t>(static_cast<size_t>(order_), time_dim_), component_) - as_dtype(target_, solution);
}

DataCondition::DataCondition(std::string name, Tensor points, Tensor values, std::vector<int64_t> components)
    : Term(std::move(name), PointSpec::points(std::move(points))), components_(std::move(components)) {
  GD_CHECK(values.defined(), fmt::format("pinn: data condition {} has no values", this->name()));
  if (values.dim() == 1) values = values.unsqueeze(1);
  GD_CHECK(values.dim() == 2 && values.size(0) == spec().given.size(0),
           fmt::format("pinn: data condition {}: values must be [N, k] with N = {} (the points), got [{}]", this->name(),
                       spec().given.size(0), fmt::join(values.sizes(), ", ")));
  values_ = values.detach().to(kFloat64).contiguous();
  if (components_.empty())
    for (int64_t k = 0; k < values_.size(1); ++k) components_.push_back(k);
  GD_CHECK(static_cast<int64_t>(components_.size()) == values_.size(1),
           fmt::format("pinn: data condition {}: {} components for {} value columns", this->name(), components_.size(),
                       values_.size(1)));
}

Tensor DataCondition::residual(Solution& solution) {
  std::vector<Tensor> columns;
  for (int64_t c : components_) columns.push_back(solution.u(c));
  Tensor u = columns.size() == 1 ? columns[0] : cat(columns, 1);
  return u - as_dtype(values_, solution);
}

}  // namespace gradiens::pinn
