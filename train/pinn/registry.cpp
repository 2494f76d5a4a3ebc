// The types of a config's "pinn" section: domains (pinn.domain), PDEs
// (pinn.pde), conditions (pinn.conditions[i]) and reference solutions
// (pinn.reference), each with its spec and builder.
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "engine/functions.h"
#include "engine/generator.h"
#include "kernels/error.h"
#include "pinn/expression.h"
#include "pinn/reference/allen_cahn.h"
#include "pinn/reference/burgers.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"

namespace gradiens::train {

namespace {

TypePtr Value() { return AnyOf({Number(), String()}); }
TypePtr Point(int64_t dims = -1) { return dims > 0 ? Array(Number(), dims, dims) : Array(Number(), 1); }

std::vector<double> numbers(const json& config, const std::string& key) { return config.at(key).get<std::vector<double>>(); }

// --- domains ---------------------------------------------------------------

void register_geometries(Builders& b) {
  auto add = [&b](ObjectSpec spec, GeometryFactory build) { b.add(b.geometries, kGeometry, std::move(spec), std::move(build)); };
  ObjectSpec interval("Interval", "the interval [lower, upper]");
  interval.add("lower", Number(), "the left end").require();
  interval.add("upper", Number(), "the right end").require();
  add(std::move(interval), [](const json& c, const std::string&, const Builders&) {
    return pinn::Interval(number(c, "lower"), number(c, "upper"));
  });
  ObjectSpec rectangle("Rectangle", "the rectangle [lower, upper] in 2-D");
  rectangle.add("lower", Point(2), "the lower corner").require();
  rectangle.add("upper", Point(2), "the upper corner").require();
  add(std::move(rectangle), [](const json& c, const std::string&, const Builders&) {
    return pinn::Rectangle(numbers(c, "lower"), numbers(c, "upper"));
  });
  ObjectSpec box("Box", "the box [lower, upper] in any dimension");
  box.add("lower", Point(), "the lower corner").require();
  box.add("upper", Point(), "the upper corner").require();
  add(std::move(box), [](const json& c, const std::string& path, const Builders&) -> pinn::GeometryPtr {
    if (c["lower"].size() != c["upper"].size())
      throw Error(fmt::format("{}: lower has {} coordinates and upper {}", path, c["lower"].size(), c["upper"].size()));
    return std::make_shared<pinn::Box>(numbers(c, "lower"), numbers(c, "upper"));
  });
  ObjectSpec disk("Disk", "the closed disk of a center and radius in 2-D");
  disk.add("center", Point(2), "the center").require();
  disk.add("radius", PositiveNumber(), "the radius").require();
  add(std::move(disk), [](const json& c, const std::string&, const Builders&) {
    return pinn::Disk(numbers(c, "center"), number(c, "radius"));
  });
  ObjectSpec ball("Ball", "the closed ball of a center and radius in any dimension");
  ball.add("center", Point(), "the center").require();
  ball.add("radius", PositiveNumber(), "the radius").require();
  add(std::move(ball), [](const json& c, const std::string&, const Builders&) -> pinn::GeometryPtr {
    return std::make_shared<pinn::Ball>(numbers(c, "center"), number(c, "radius"));
  });
  ObjectSpec ellipse("Ellipse", "the ellipse of semi-axes a (turned by angle radians) and b");
  ellipse.add("center", Point(2), "the center").require();
  ellipse.add("a", PositiveNumber(), "the first semi-axis").require();
  ellipse.add("b", PositiveNumber(), "the second semi-axis").require();
  ellipse.add("angle", Number(), "the first axis' angle from the x axis, radians").default_(0.0);
  add(std::move(ellipse), [](const json& c, const std::string&, const Builders&) -> pinn::GeometryPtr {
    return std::make_shared<pinn::Ellipse>(numbers(c, "center"), number(c, "a"), number(c, "b"), number(c, "angle"));
  });
  for (const char* name : {"Polygon", "Triangle"}) {
    const bool triangle = std::string(name) == "Triangle";
    ObjectSpec polygon(name, triangle ? "the triangle of three vertices" : "the simple polygon of its vertices");
    polygon.add("vertices", Array(Point(2), 3, triangle ? 3 : -1), "the vertices [x, y] in order").require();
    add(std::move(polygon), [](const json& c, const std::string&, const Builders&) -> pinn::GeometryPtr {
      std::vector<std::pair<double, double>> vertices;
      for (const json& v : c["vertices"]) vertices.emplace_back(v[0].get<double>(), v[1].get<double>());
      return std::make_shared<pinn::Polygon>(std::move(vertices));
    });
  }
  for (const char* name : {"Union", "Difference", "Intersection"}) {
    ObjectSpec csg(name, fmt::format("the {} of two domains of one dimension", std::string(name) == "Union" ? "union"
                                     : std::string(name) == "Difference" ? "difference a - b" : "intersection"));
    csg.add("a", Typed(kGeometry), "the first domain").require();
    csg.add("b", Typed(kGeometry), "the second domain").require();
    const std::string kind = name;
    add(std::move(csg), [kind](const json& c, const std::string& path, const Builders& builders) {
      auto build = [&](const char* key) {
        return builders.geometries.at(text(c[key], "type"))(c[key], join_path(path, key), builders);
      };
      pinn::GeometryPtr a = build("a"), bb = build("b");
      if (a->dim() != bb->dim())
        throw Error(fmt::format("{}: a is {}-dimensional and b {}-dimensional", path, a->dim(), bb->dim()));
      if (kind == "Union") return pinn::Union(a, bb);
      if (kind == "Difference") return pinn::Difference(a, bb);
      return pinn::Intersection(a, bb);
    });
  }
}

// --- PDEs ------------------------------------------------------------------

ObjectSpec pde_spec(const std::string& name, const std::string& description) {
  ObjectSpec spec(name, description);
  spec.add("points", Integer(1), "collocation points in the domain").require();
  spec.add("sampler", Enum(pinn::sampler_names()), "how they are drawn").default_("pseudo");
  spec.add("weight", Number(0), "the term's weight in the loss").default_(1.0);
  return spec;
}

pinn::PointSpec interior_points(const json& c) {
  return pinn::PointSpec::interior(integer(c, "points"), pinn::parse_sampler(text(c, "sampler")));
}

void require_time(const PinnContext& context, const std::string& path, const std::string& what, bool time) {
  if (context.has_time != time)
    throw Error(fmt::format("{}: {} {} a time coordinate (pinn.time)", path, what, time ? "needs" : "has no"));
}

// Laplacian weights over the spatial coordinates (time, if any, gets 0).
std::vector<double> spatial_weights(const PinnContext& context, const std::vector<double>& per_dim) {
  std::vector<double> weights = per_dim;
  if (context.has_time) weights.push_back(0.0);
  return weights;
}

using Residual = pinn::OperatorCondition::Residual;

pinn::TermPtr operator_term(const json& c, const pinn::DerivativeNeeds& needs, Residual residual,
                            std::vector<pinn::PointFunction> data = {}) {
  return std::make_shared<pinn::OperatorCondition>("pde", interior_points(c), needs, std::move(residual), std::move(data));
}

void register_pdes(Builders& b) {
  auto add = [&b](ObjectSpec spec, TermFactory build) { b.add(b.pdes, kPde, std::move(spec), std::move(build)); };

  ObjectSpec burgers = pde_spec("burgers", "u_t + u u_x = nu u_xx in one space dimension");
  burgers.add("nu", Value(), "the viscosity: a number, an expression (\"0.01/pi\"), or a parameter's name").require();
  add(std::move(burgers), [](const json& c, const std::string& path, const PinnContext& context) {
    require_time(context, path, "burgers", true);
    if (context.spatial_dims() != 1) throw Error(fmt::format("{}: burgers is one-dimensional in space", path));
    const Coefficient nu = context.coefficient(c, "nu", path);
    pinn::DerivativeNeeds needs{{{0}, {1}, {0, 0}}, false, {}};
    return operator_term(c, needs, [nu](pinn::Solution& s, const std::vector<Tensor>&) {
      return s.d(1) + s.u() * s.d(0) - scale(nu, s.d({0, 0}));
    });
  });

  ObjectSpec poisson = pde_spec("poisson", "-(laplacian u) = f in any dimension");
  poisson.add("source", Value(), "f, an expression of the coordinates").default_(0.0);
  add(std::move(poisson), [](const json& c, const std::string& path, const PinnContext& context) {
    require_time(context, path, "poisson", false);
    pinn::DerivativeNeeds needs;
    needs.laplacian = true;
    return operator_term(c, needs, [](pinn::Solution& s, const std::vector<Tensor>& f) { return s.laplacian() + f[0]; },
                         {context.expression(c, "source", path)});
  });

  ObjectSpec heat = pde_spec("heat", "u_t = sum_i k_i u_{x_i x_i} + f");
  heat.add("diffusivity", AnyOf({Value(), Array(Value(), 1)}),
           "k: one for every coordinate (a number, expression or parameter name), or one per spatial coordinate")
      .require();
  heat.add("source", Value(), "f, an expression of the coordinates and t").default_(0.0);
  add(std::move(heat), [](const json& c, const std::string& path, const PinnContext& context) {
    require_time(context, path, "heat", true);
    pinn::DerivativeNeeds needs;
    needs.laplacian = true;
    const int64_t time = context.dims() - 1;
    needs.partials.push_back({time});
    std::vector<pinn::PointFunction> data{context.expression(c, "source", path)};
    if (c["diffusivity"].is_array()) {
      if (static_cast<int64_t>(c["diffusivity"].size()) != context.spatial_dims())
        throw Error(fmt::format("{}: {} diffusivities for {} spatial coordinates", join_path(path, "diffusivity"),
                                c["diffusivity"].size(), context.spatial_dims()));
      std::vector<double> k;
      for (size_t i = 0; i < c["diffusivity"].size(); ++i) {
        json item = {{"k", c["diffusivity"][i]}};
        k.push_back(value_of(context.coefficient(item, "k", join_path(join_path(path, "diffusivity"), i))));
      }
      needs.laplacian_weights = spatial_weights(context, k);
      return operator_term(c, needs, [time](pinn::Solution& s, const std::vector<Tensor>& f) {
        return s.d(time) - s.laplacian() - f[0];
      }, data);
    }
    const Coefficient k = context.coefficient(c, "diffusivity", path);
    needs.laplacian_weights = spatial_weights(context, std::vector<double>(static_cast<size_t>(context.spatial_dims()), 1.0));
    return operator_term(c, needs, [time, k](pinn::Solution& s, const std::vector<Tensor>& f) {
      return s.d(time) - scale(k, s.laplacian()) - f[0];
    }, data);
  });

  ObjectSpec wave = pde_spec("wave", "u_tt = c^2 (laplacian u) in the space coordinates");
  wave.add("speed", Value(), "c").require();
  add(std::move(wave), [](const json& c, const std::string& path, const PinnContext& context) {
    require_time(context, path, "wave", true);
    const int64_t time = context.dims() - 1;
    const Coefficient speed = context.coefficient(c, "speed", path);
    pinn::DerivativeNeeds needs{{{time, time}}, true, {}};
    needs.laplacian_weights = spatial_weights(context, std::vector<double>(static_cast<size_t>(context.spatial_dims()), 1.0));
    return operator_term(c, needs, [time, speed](pinn::Solution& s, const std::vector<Tensor>&) {
      return s.d({time, time}) - scale(speed, scale(speed, s.laplacian()));
    });
  });

  ObjectSpec beam = pde_spec("beam", "the Euler-Bernoulli beam EI u_xxxx = q on an interval (fourth order)");
  beam.add("rigidity", Value(), "EI, the flexural rigidity").default_(1.0);
  beam.add("load", Value(), "q, an expression of x").default_(0.0);
  add(std::move(beam), [](const json& c, const std::string& path, const PinnContext& context) {
    require_time(context, path, "beam", false);
    if (context.spatial_dims() != 1) throw Error(fmt::format("{}: beam is one-dimensional", path));
    const Coefficient rigidity = context.coefficient(c, "rigidity", path);
    pinn::DerivativeNeeds needs{{{0, 0, 0, 0}}, false, {}};
    return operator_term(c, needs, [rigidity](pinn::Solution& s, const std::vector<Tensor>& q) {
      return scale(rigidity, s.d({0, 0, 0, 0})) - q[0];
    }, {context.expression(c, "load", path)});
  });

  ObjectSpec allen_cahn = pde_spec("allen_cahn", "u_t = d (laplacian u) + r (u - u^3)");
  allen_cahn.add("diffusion", Value(), "d").require();
  allen_cahn.add("reaction", Value(), "r").require();
  add(std::move(allen_cahn), [](const json& c, const std::string& path, const PinnContext& context) {
    require_time(context, path, "allen_cahn", true);
    const int64_t time = context.dims() - 1;
    const Coefficient d = context.coefficient(c, "diffusion", path), r = context.coefficient(c, "reaction", path);
    pinn::DerivativeNeeds needs{{{time}}, true, {}};
    needs.laplacian_weights = spatial_weights(context, std::vector<double>(static_cast<size_t>(context.spatial_dims()), 1.0));
    return operator_term(c, needs, [time, d, r](pinn::Solution& s, const std::vector<Tensor>&) {
      Tensor u = s.u();
      return s.d(time) - scale(d, s.laplacian()) - scale(r, u - u * u * u);
    });
  });
}

// --- conditions --------------------------------------------------------------

ObjectSpec condition_spec(const std::string& name, const std::string& description, bool sampled = true) {
  ObjectSpec spec(name, description);
  spec.add("name", String(), "the term's name in the metrics (train/loss_<name>); default: the type");
  if (sampled) {
    spec.add("points", Integer(1), "points drawn for the term").require();
    spec.add("sampler", Enum(pinn::sampler_names()), "how they are drawn").default_("pseudo");
    spec.add("filter", Value(), "keep only the drawn points where this expression is nonzero (e.g. \"x < 0\")");
  }
  spec.add("weight", Number(0), "the term's weight in the loss").default_(1.0);
  spec.add("component", Integer(0), "the output column the condition is on").default_(0);
  return spec;
}

pinn::PointSpec condition_points(const json& c, pinn::PointSpec::Where where, const std::string& path,
                                 const PinnContext& context) {
  pinn::PointSpec spec;
  spec.where = where;
  spec.count = integer(c, "points");
  spec.sampler = pinn::parse_sampler(text(c, "sampler"));
  if (has(c, "filter")) {
    pinn::PointFunction keep = context.expression(c, "filter", path);
    spec.filter = [keep](const Tensor& x) { return keep(x).reshape({-1}) != 0; };
  }
  return spec;
}

std::string term_name(const json& c) { return has(c, "name") ? text(c, "name") : text(c, "type"); }

void register_conditions(Builders& b) {
  auto add = [&b](ObjectSpec spec, TermFactory build) { b.add(b.conditions, kCondition, std::move(spec), std::move(build)); };
  using Where = pinn::PointSpec::Where;

  ObjectSpec dirichlet = condition_spec("dirichlet", "u = g on the boundary");
  dirichlet.add("value", Value(), "g, an expression of the coordinates").default_(0.0);
  add(std::move(dirichlet), [](const json& c, const std::string& path, const PinnContext& context) -> pinn::TermPtr {
    return std::make_shared<pinn::DirichletBC>(term_name(c), condition_points(c, Where::kBoundary, path, context),
                                               context.expression(c, "value", path), integer(c, "component"));
  });
  ObjectSpec neumann = condition_spec("neumann", "du/dn = g on the boundary (n the outward normal)");
  neumann.add("value", Value(), "g, an expression of the coordinates").default_(0.0);
  add(std::move(neumann), [](const json& c, const std::string& path, const PinnContext& context) -> pinn::TermPtr {
    return std::make_shared<pinn::NeumannBC>(term_name(c), condition_points(c, Where::kBoundary, path, context),
                                             context.expression(c, "value", path), integer(c, "component"));
  });
  ObjectSpec robin = condition_spec("robin", "du/dn = a u + g on the boundary");
  robin.add("coefficient", Value(), "a, an expression of the coordinates").require();
  robin.add("value", Value(), "g, an expression of the coordinates").default_(0.0);
  add(std::move(robin), [](const json& c, const std::string& path, const PinnContext& context) {
    return pinn::RobinBC(term_name(c), condition_points(c, Where::kBoundary, path, context),
                         context.expression(c, "coefficient", path), context.expression(c, "value", path),
                         integer(c, "component"));
  });
  ObjectSpec periodic = condition_spec("periodic", "u (and its derivatives up to an order) equal on two opposite faces");
  periodic.add("coordinate", AnyOf({Integer(0), String()}), "the periodic coordinate, by index or name").require();
  periodic.add("derivative_order", Integer(0, 4), "match derivatives up to this order too").default_(0);
  add(std::move(periodic), [](const json& c, const std::string& path, const PinnContext& context) -> pinn::TermPtr {
    const int64_t dim = context.coordinate(c, "coordinate", path);
    auto [lower, upper] = context.domain->bbox();
    return std::make_shared<pinn::PeriodicBC>(term_name(c), condition_points(c, Where::kBoundary, path, context), dim,
                                              lower[static_cast<size_t>(dim)], upper[static_cast<size_t>(dim)],
                                              integer(c, "derivative_order"), integer(c, "component"));
  });
  ObjectSpec initial = condition_spec("initial", "d^k u/dt^k = g at the initial time (k = 0: the initial value)");
  initial.add("value", Value(), "g, an expression of the coordinates").default_(0.0);
  initial.add("time_derivative", Integer(0, 4), "k").default_(0);
  add(std::move(initial), [](const json& c, const std::string& path, const PinnContext& context) -> pinn::TermPtr {
    require_time(context, path, "an initial condition", true);
    return std::make_shared<pinn::InitialCondition>(term_name(c), condition_points(c, Where::kInitial, path, context),
                                                    context.expression(c, "value", path), integer(c, "component"),
                                                    integer(c, "time_derivative"));
  });
  ObjectSpec data = condition_spec("data", "observations of u: the reference solution at points of the domain, plus "
                                   "Gaussian noise (inverse problems)", false);
  data.add("points", Integer(1), "observation points, drawn once from the domain's interior").require();
  data.add("sampler", Enum(pinn::sampler_names()), "how they are drawn").default_("pseudo");
  data.add("noise", Number(0), "the noise's standard deviation, relative to the observed values' RMS").default_(0.0);
  add(std::move(data), [](const json& c, const std::string& path, const PinnContext& context) -> pinn::TermPtr {
    if (!context.reference)
      throw Error(fmt::format("{}: observations are drawn from the reference solution; give pinn.reference", path));
    Generator generator(context.seed * 4 + 3);
    Tensor points = context.domain->sample_interior(integer(c, "points"), pinn::parse_sampler(text(c, "sampler")), generator);
    Tensor values = context.reference(points);
    const double noise = number(c, "noise");
    if (noise > 0) {
      const double rms = values.square().mean().sqrt().item<double>();
      values = values + randn(values.sizes(), generator, values.options()) * (noise * rms);
    }
    return std::make_shared<pinn::DataCondition>(term_name(c), points, values,
                                                 std::vector<int64_t>{integer(c, "component")});
  });
}

// --- references --------------------------------------------------------------

void register_references(Builders& b) {
  auto add = [&b](ObjectSpec spec, ReferenceFactory build) { b.add(b.references, kReference, std::move(spec), std::move(build)); };
  ObjectSpec expression("expression", "an exact solution in closed form");
  expression.add("u", Value(), "u, an expression of the coordinates").require();
  add(std::move(expression), [](const json& c, const std::string& path, const PinnContext& context) {
    PinnReference reference;
    reference.solution = context.expression(c, "u", path);
    reference.description = fmt::format("exact solution u = {}", c["u"].is_string() ? text(c, "u") : c["u"].dump());
    return reference;
  });

  auto space_time_1d = [](const PinnContext& context, const std::string& path, const std::string& what) {
    if (!context.has_time || context.spatial_dims() != 1)
      throw Error(fmt::format("{}: the {} reference is for one space dimension and time", path, what));
  };
  ObjectSpec burgers("burgers", "the Cole-Hopf solution of u_t + u u_x = nu u_xx, u(0, x) = -sin(pi x), u(t, +-1) = 0, "
                     "by Gauss-Hermite quadrature; scored on Raissi et al.'s 256 x 100 grid");
  burgers.add("nu", Value(), "the viscosity").default_("0.01/pi");
  burgers.add("nodes", Integer(1, 700), "Gauss-Hermite nodes").default_(pinn::BurgersExact::kDefaultNodes);
  add(std::move(burgers), [space_time_1d](const json& c, const std::string& path, const PinnContext& context) {
    space_time_1d(context, path, "burgers");
    const double nu = value_of(context.coefficient(c, "nu", path));
    if (!(nu > 0)) throw Error(fmt::format("{}: the viscosity must be positive, got {}", join_path(path, "nu"), nu));
    auto exact = std::make_shared<pinn::BurgersExact>(nu, static_cast<int>(integer(c, "nodes")));
    PinnReference reference;
    reference.solution = [exact](const Tensor& points) { return exact->on_points(points); };
    reference.description = fmt::format("Cole-Hopf, {} Gauss-Hermite nodes", exact->nodes());
    reference.grid = {pinn::burgers_reference_x(), pinn::burgers_reference_t()};
    return reference;
  });
  ObjectSpec allen_cahn("allen_cahn", "u_t = nu u_xx + r (u - u^3), periodic on [-1, 1], u(0, x) = x^2 cos(pi x), by a "
                        "Fourier ETDRK4 solver in float64; scored on the 512 x 201 grid of Raissi et al.'s AC.mat");
  allen_cahn.add("diffusion", Number(0), "nu").default_(1e-4);
  allen_cahn.add("reaction", Number(), "r").default_(5.0);
  allen_cahn.add("modes", Integer(16), "Fourier modes (even)").default_(4096);
  allen_cahn.add("steps", Integer(1), "ETDRK4 time steps").default_(1000);
  add(std::move(allen_cahn), [space_time_1d](const json& c, const std::string& path, const PinnContext& context) {
    space_time_1d(context, path, "allen_cahn");
    pinn::AllenCahnOptions options;
    options.diffusion = number(c, "diffusion");
    options.reaction = number(c, "reaction");
    options.modes = integer(c, "modes");
    options.steps = integer(c, "steps");
    const auto [lower, upper] = context.domain->bbox();
    options.t_end = upper.back();
    auto solver = std::make_shared<pinn::AllenCahnReference>(options);
    PinnReference reference;
    reference.solution = [solver](const Tensor& points) { return solver->on_points(points); };
    reference.description = fmt::format("ETDRK4, {} modes, {} steps", options.modes, options.steps);
    reference.grid = {pinn::allen_cahn_reference_x(), pinn::allen_cahn_reference_t()};
    return reference;
  });
}

}  // namespace

void register_pinn(Builders& b) {
  register_geometries(b);
  register_pdes(b);
  register_conditions(b);
  register_references(b);
}

}  // namespace gradiens::train
