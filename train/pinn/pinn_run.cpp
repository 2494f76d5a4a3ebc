// The "pinn" section: its spec, building the problem, evaluation and checkpoint state (train/pinn/pinn_run.h).
#include "train/pinn/pinn_run.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"
#include "pinn/expression.h"
#include "pinn/tensor_expression.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"

namespace gradiens::train {

std::shared_ptr<ObjectSpec> pinn_section_spec() {
  auto pinn = std::make_shared<ObjectSpec>();
  pinn->description = "a physics-informed network: domain, PDE, conditions, reference solution and training aids";
  pinn->add("domain", Typed(kGeometry), "the spatial domain").require();
  pinn->add("time", Array(Number(), 2, 2), "[t0, t1]: the time interval crossed with the domain (time is the last "
            "coordinate)");
  pinn->add("coordinates", Array(String(), 1), "the coordinates' names in expressions; default x, y, z (x1, x2, ... "
            "beyond three), then t");
  auto parameter = std::make_shared<ObjectSpec>();
  parameter->description = "a trainable scalar PDE coefficient (inverse problems)";
  parameter->add("name", String(), "the name a PDE coefficient refers to").require();
  parameter->add("initial", Number(), "its initial value").require();
  pinn->add("parameters", Array(Object(parameter)), "trainable PDE coefficients, optimized beside the network")
      .default_(json::array());
  pinn->add("pde", Typed(kPde), "the PDE: its residual on interior points is the first loss term").require();
  pinn->add("conditions", Array(Typed(kCondition)), "boundary, initial and data conditions, one loss term each")
      .default_(json::array());
  pinn->add("reference", Typed(kReference), "the exact or reference solution; the evaluation's error is against it");
  auto evaluation = std::make_shared<ObjectSpec>();
  evaluation->description = "the fixed points the solution is scored on (val/rel_l2)";
  evaluation->add("grid", Array(Integer(2), 1), "points per coordinate of a grid over the domain's bounding box "
                  "(points outside the domain are left out)");
  evaluation->add("points", Integer(1), "or this many Sobol points of the domain");
  evaluation->check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
    if (has(config, "grid") && has(config, "points")) diagnostics.error(path, "give \"grid\" or \"points\", not both");
  };
  pinn->add("evaluation", Object(evaluation), "default: the reference's own grid; else a grid of 101 per coordinate up "
            "to two coordinates, 10000 Sobol points beyond").default_(json::object());
  pinn->add("output_transform", AnyOf({String(), Array(String(), 1)}),
            "hard constraints: the solution as an expression of the coordinates, the PDE parameters and the network's "
            "output net, e.g. \"sin(pi*x) + x*(1-x)*t*net\"; for a solution of k components, k expressions of the "
            "outputs net1 ... netk (the network needs k outputs). Taylor mode carries derivatives up to order 2 through it "
            "by the chain rule; higher orders come from the nested engine");
  pinn->add("engine", Enum({"auto", "nested", "taylor"}),
            "how derivatives are computed: Taylor mode for MLPs (auto picks it where it can), or nested reverse mode")
      .default_("auto");
  auto weighting = std::make_shared<ObjectSpec>();
  weighting->description = "how the terms' weights adapt (pinn/weighting.h gives the formulas)";
  weighting->add("method", Enum({"fixed", "lr_annealing", "grad_norm"}), "fixed weights, learning-rate annealing, or "
                 "gradient-norm balancing").default_("fixed");
  weighting->add("every", Integer(1), "steps between updates").default_(100);
  weighting->add("alpha", Number(0, 1), "the moving average's factor").default_(0.9);
  weighting->add("max_weight", PositiveNumber(), "the cap on a term's new weight (none when absent)");
  pinn->add("weighting", Object(weighting), "loss weighting").default_(json::object());
  auto causal = std::make_shared<ObjectSpec>();
  causal->description = "causal training of the PDE term (pinn/problem.h): time slices weighted by how well the earlier "
                        "ones are fitted";
  causal->add("chunks", Integer(0), "time slices (0: off)").default_(0);
  causal->add("epsilon", Number(0), "the weights' decay: w_i = exp(-epsilon * sum of the earlier slices' losses)")
      .default_(1.0);
  pinn->add("causal", Object(causal), "causal training").default_(json::object());
  pinn->add("resample_every", Integer(0), "draw fresh points for every randomly sampled term every this many steps "
            "(0: never)").default_(0);
  pinn->add("resample_until", Integer(0), "the last step that draws fresh points: later steps keep the points of "
            "then, so the last phase can converge on one set (0: no last step)").default_(0);
  auto refinement = std::make_shared<ObjectSpec>();
  refinement->description = "residual-based refinement of the PDE's points (pinn/adaptive.h)";
  refinement->add("method", Enum({"none", "RAR", "RAD", "RAR-D"}), "RAR adds the worst points; RAD redraws all by "
                  "the residual density; RAR-D adds points drawn by it").default_("none");
  refinement->add("every", Integer(1), "steps between refinements").default_(1000);
  refinement->add("candidates", Integer(0), "candidate points per refinement (0: 10x the PDE's points)").default_(0);
  refinement->add("add", Integer(1), "points added per refinement (RAR, RAR-D)").default_(10);
  refinement->add("k", Number(0), "the density's exponent: |r|^k").default_(1.0);
  refinement->add("c", Number(0), "the density's offset").default_(1.0);
  refinement->add("max_points", Integer(0), "stop adding beyond this many PDE points (0: no cap)").default_(0);
  pinn->add("refinement", Object(refinement), "adaptive sampling").default_(json::object());
  return pinn;
}

namespace {

Tensor grid_over(const std::vector<std::vector<double>>& axes) {
  int64_t total = 1;
  for (const auto& axis : axes) total *= static_cast<int64_t>(axis.size());
  const auto d = static_cast<int64_t>(axes.size());
  Tensor points = empty({total, d}, TensorOptions().dtype(kFloat64));
  double* p = points.cpu_data_ptr<double>();
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i;
    for (int64_t j = 0; j < d; ++j) {  // coordinate 0 fastest
      const auto& axis = axes[static_cast<size_t>(j)];
      const auto n = static_cast<int64_t>(axis.size());
      p[i * d + j] = axis[static_cast<size_t>(rest % n)];
      rest /= n;
    }
  }
  return points;
}

std::vector<double> linspace_values(double a, double b, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(a + (b - a) * static_cast<double>(i) / static_cast<double>(n - 1));
  return v;
}

void set_evaluation(PinnRun& run, const json& config) {
  const pinn::Geometry& domain = run.problem.domain();
  const auto [lower, upper] = domain.bbox();
  const int64_t d = domain.dim();
  std::vector<std::vector<double>> axes;
  if (has(config, "grid")) {
    const auto counts = config["grid"].get<std::vector<int64_t>>();
    if (static_cast<int64_t>(counts.size()) != d)
      throw Error(fmt::format("pinn.evaluation.grid: {} counts for {} coordinates", counts.size(), d));
    for (int64_t j = 0; j < d; ++j)
      axes.push_back(linspace_values(lower[static_cast<size_t>(j)], upper[static_cast<size_t>(j)], counts[static_cast<size_t>(j)]));
  } else if (!has(config, "points") && !run.reference.grid.empty()) {
    axes = run.reference.grid;
  } else if (!has(config, "points") && d <= 2) {
    for (int64_t j = 0; j < d; ++j)
      axes.push_back(linspace_values(lower[static_cast<size_t>(j)], upper[static_cast<size_t>(j)], 101));
  }
  if (!axes.empty()) {
    Tensor points = grid_over(axes);
    Tensor inside = domain.inside(points);
    if (inside.all().item<bool>()) {
      for (const auto& axis : axes) run.eval_grid.push_back(static_cast<int64_t>(axis.size()));
      run.eval_points = points;
    } else {
      run.eval_points = points.index_select(0, inside.nonzero().reshape({-1})).contiguous();
    }
  } else {
    Generator generator(0);
    run.eval_points = domain.sample_interior(has(config, "points") ? integer(config, "points") : 10000,
                                             pinn::Sampler::kSobol, generator);
  }
  if (run.eval_points.size(0) == 0) throw Error("pinn.evaluation: no evaluation point lies in the domain");
}

// u = the expressions of pinn.output_transform at (x, net(x)).
pinn::OutputTransform output_transform(const json& config, const PinnContext& context) {
  const bool several = config.is_array();
  const std::vector<std::string> texts = several ? config.get<std::vector<std::string>>()
                                                 : std::vector<std::string>{config.get<std::string>()};
  const auto outputs = static_cast<int64_t>(texts.size());
  std::vector<std::string> variables = context.names;
  std::vector<Tensor> parameters;
  for (const auto& [name, value] : context.parameters) {
    variables.push_back(name);
    parameters.push_back(value);
  }
  for (int64_t k = 0; k < outputs; ++k) variables.push_back(several ? fmt::format("net{}", k + 1) : "net");
  std::vector<pinn::TensorExpression> expressions;
  for (size_t k = 0; k < texts.size(); ++k) {
    try {
      expressions.emplace_back(texts[k], variables);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", several ? join_path("pinn.output_transform", k) : "pinn.output_transform",
                              e.what()));
    }
  }
  const int64_t dims = context.dims();
  return [expressions, parameters, outputs, dims](const Tensor& x, const Tensor& y) {
    if (y.dim() != 2 || y.size(1) != outputs)
      throw Error(fmt::format("pinn.output_transform: {} expression{} for a network with {} outputs; the network needs "
                              "one output per expression", outputs, outputs == 1 ? "" : "s",
                              y.dim() == 2 ? y.size(1) : y.numel()));
    std::vector<Tensor> values;
    for (int64_t j = 0; j < dims; ++j) values.push_back(x.narrow(1, j, 1));
    for (const Tensor& p : parameters) values.push_back(p.to(x.scalar_type()));
    for (int64_t k = 0; k < outputs; ++k) values.push_back(y.narrow(1, k, 1));
    std::vector<Tensor> columns;
    for (const pinn::TensorExpression& expression : expressions) columns.push_back(expression.evaluate(values));
    return outputs == 1 ? columns.front() : cat(columns, 1);
  };
}

}  // namespace

std::shared_ptr<PinnRun> build_pinn_run(json& config, ScalarType dtype, uint64_t seed, const std::string& base_dir) {
  const Builders& builders = builtin();
  PinnContext context;
  context.dtype = dtype;
  context.seed = seed;
  context.base_dir = base_dir;
  const json& domain_config = config["domain"];
  pinn::GeometryPtr space = builders.geometries.at(text(domain_config, "type"))(domain_config, "pinn.domain", builders);
  context.has_time = has(config, "time");
  if (context.has_time) {
    const auto t = config["time"].get<std::vector<double>>();
    if (!(t[0] < t[1])) throw Error(fmt::format("pinn.time: t0 ({}) must be below t1 ({})", t[0], t[1]));
    context.domain = std::make_shared<pinn::GeometryXTime>(space, t[0], t[1]);
  } else {
    context.domain = space;
  }
  context.names = has(config, "coordinates") ? config["coordinates"].get<std::vector<std::string>>()
                                             : pinn::coordinate_names(space->dim(), context.has_time);
  if (context.dims() != context.domain->dim())
    throw Error(fmt::format("pinn.coordinates: {} names for the {} coordinates of the domain{}", context.dims(),
                            context.domain->dim(), context.has_time ? " and time" : ""));

  auto run = std::make_shared<PinnRun>(pinn::Problem(context.domain), context);
  pinn::Problem& problem = run->problem;
  for (size_t i = 0; i < config["parameters"].size(); ++i) {
    const json& p = config["parameters"][i];
    const std::string name = text(p, "name");
    if (run->context.parameters.count(name) || std::find(run->context.names.begin(), run->context.names.end(), name) !=
                                                   run->context.names.end())
      throw Error(fmt::format("{}: the name {} is taken", join_path(join_path("pinn.parameters", i), "name"), name));
    run->context.parameters[name] = problem.add_parameter(name, number(p, "initial"), dtype);
  }
  const json& pde = config["pde"];
  problem.add(builders.pdes.at(text(pde, "type"))(pde, "pinn.pde", run->context), number(pde, "weight"));
  if (has(config, "reference")) {  // before the conditions: observations are drawn from it
    const json& reference = config["reference"];
    run->reference = builders.references.at(text(reference, "type"))(reference, "pinn.reference", run->context);
    run->context.reference = run->reference.solution;
  }
  for (size_t i = 0; i < config["conditions"].size(); ++i) {
    const json& condition = config["conditions"][i];
    const std::string path = join_path("pinn.conditions", i);
    pinn::TermPtr term = builders.conditions.at(text(condition, "type"))(condition, path, run->context);
    if (problem.has_term(term->name()))
      throw Error(fmt::format("{}: a term named {} exists already; give this one a \"name\"", path, term->name()));
    problem.add(term, number(condition, "weight"));
  }
  if (has(config, "output_transform"))
    problem.set_output_transform(output_transform(config["output_transform"], run->context));
  problem.set_engine(pinn::parse_engine(text(config, "engine")));
  const json& weighting = config["weighting"];
  pinn::WeightingOptions weighting_options{pinn::parse_weighting(text(weighting, "method")), integer(weighting, "every"),
                                           number(weighting, "alpha")};
  if (has(weighting, "max_weight")) weighting_options.max_weight = number(weighting, "max_weight");
  problem.set_weighting(weighting_options);
  if (integer(config["causal"], "chunks") > 0) {
    if (!run->context.has_time) throw Error("pinn.causal: causal training needs a time coordinate (pinn.time)");
    problem.set_causal("pde", {integer(config["causal"], "chunks"), number(config["causal"], "epsilon")});
  }
  run->resample_every = integer(config, "resample_every");
  run->resample_until = integer(config, "resample_until");
  const json& refinement = config["refinement"];
  run->refinement.method = pinn::parse_refinement(text(refinement, "method"));
  run->refinement.term = "pde";
  run->refinement.every = integer(refinement, "every");
  run->refinement.candidates = integer(refinement, "candidates");
  run->refinement.add = integer(refinement, "add");
  run->refinement.k = number(refinement, "k");
  run->refinement.c = number(refinement, "c");
  run->refinement.max_points = integer(refinement, "max_points");

  run->generator = Generator(seed * 4 + 1);
  problem.sample(run->generator);
  set_evaluation(*run, config["evaluation"]);
  if (run->has_reference()) run->eval_reference = run->reference.solution(run->eval_points).to(kFloat64).contiguous();
  return run;
}

pinn::Losses PinnRun::losses(const nn::AnyModule& net, int64_t step, const std::vector<Tensor>& parameters) {
  pinn::Losses losses = problem.losses(net);
  if (!problem.weights().due(step)) return losses;
  problem.weights().update(losses.values, parameters);
  const std::vector<double>& w = problem.weights().values();
  Tensor total;
  for (size_t i = 0; i < losses.values.size(); ++i) {
    Tensor weighted = losses.values[i] * w[i];
    total = total.defined() ? total + weighted : weighted;
  }
  losses.total = total;
  return losses;
}

std::string PinnRun::after_step(int64_t step, const nn::AnyModule& net) {
  std::string message;
  if (resample_every > 0 && step % resample_every == 0 && (resample_until == 0 || step <= resample_until)) {
    for (const pinn::TermPtr& term : problem.terms()) {
      const pinn::PointSpec& spec = term->spec();
      const bool random = spec.sampler == pinn::Sampler::kPseudo || spec.sampler == pinn::Sampler::kLHS;
      if (spec.where != pinn::PointSpec::Where::kGiven && random) term->sample(problem.domain(), generator);
    }
  }
  if (refinement.method != pinn::Refinement::kNone && step % refinement.every == 0) {
    Tensor changed = pinn::refine(problem, net, refinement, generator);
    message = fmt::format("step {}: {} {} {} points; pde has {}", step, pinn::refinement_name(refinement.method),
                          refinement.method == pinn::Refinement::kRAD ? "redrew" : "added", changed.size(0),
                          problem.term("pde").points().size(0));
  }
  return message;
}

Tensor PinnRun::predict(const nn::AnyModule& net) const {
  NoGradGuard no_grad;
  const std::vector<Tensor> params = net.ptr()->parameters();
  const ScalarType dtype = params.empty() ? kFloat64 : params.front().scalar_type();
  const Device device = params.empty() ? Device(kCPU) : params.front().device();
  std::vector<Tensor> parts;
  const int64_t chunk = 65536;
  for (int64_t start = 0; start < eval_points.size(0); start += chunk) {
    // The points go to the network's device; the prediction comes back to the host.
    Tensor x = eval_points.narrow(0, start, std::min(chunk, eval_points.size(0) - start)).to(device, dtype);
    Tensor y = net.forward(x);
    if (problem.output_transform()) y = problem.output_transform()(x, y);
    parts.push_back(y.narrow(1, 0, 1).to(kFloat64).cpu());
  }
  return cat(parts, 0);
}

std::map<std::string, double> PinnRun::evaluate(const nn::AnyModule& net, const std::vector<std::string>& metrics) const {
  std::map<std::string, double> values;
  if (!has_reference()) return values;
  NoGradGuard no_grad;
  const bool training = net.ptr()->is_training();
  net.ptr()->eval();
  Tensor error = predict(net) - eval_reference;
  net.ptr()->train(training);
  for (const std::string& name : metrics) {
    if (name == "loss") values["loss"] = error.square().mean().item<double>();
    else if (name == "rel_l2") values["rel_l2"] = error.norm().item<double>() / eval_reference.norm().item<double>();
    else if (name == "max_abs_error") values["max_abs_error"] = error.abs().max().item<double>();
  }
  return values;
}

std::map<std::string, Tensor> PinnRun::state_dict() const {
  std::map<std::string, Tensor> state = problem.state_dict();
  const GeneratorState g = generator.get_state();
  state["generator"] = tensor({static_cast<int64_t>(g.seed), static_cast<int64_t>(g.offset)}, TensorOptions().dtype(kInt64));
  return state;
}

void PinnRun::load_state_dict(const std::map<std::string, Tensor>& state) {
  problem.load_state_dict(state);
  auto it = state.find("generator");
  if (it == state.end() || it->second.numel() != 2) throw Error("pinn: the checkpoint has no generator state");
  const Tensor g = it->second.to(kInt64).contiguous();
  generator.set_state({static_cast<uint64_t>(g.cpu_data_ptr<int64_t>()[0]), static_cast<uint64_t>(g.cpu_data_ptr<int64_t>()[1])});
}

}  // namespace gradiens::train
