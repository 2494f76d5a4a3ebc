// A PINN problem's terms, losses, parameters and checkpoint state (pinn/problem.h).
#include "pinn/problem.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::pinn {

Problem::Problem(GeometryPtr domain) : domain_(std::move(domain)) {
  GD_CHECK(domain_ != nullptr, "pinn::Problem: no domain");
}

Problem& Problem::add(TermPtr term, double weight) {
  GD_CHECK(term != nullptr, "pinn::Problem: adding an empty term");
  GD_CHECK(!has_term(term->name()), fmt::format("pinn::Problem: a term named {} exists already", term->name()));
  GD_CHECK(term->name().find('/') == std::string::npos && !term->name().empty(),
           fmt::format("pinn::Problem: a term name must be non-empty and without '/', got \"{}\"", term->name()));
  terms_.push_back(std::move(term));
  std::vector<double> w = weights_.values();
  w.push_back(weight);
  weights_.set_values(std::move(w));
  return *this;
}

bool Problem::has_term(const std::string& name) const {
  return std::any_of(terms_.begin(), terms_.end(), [&](const TermPtr& t) { return t->name() == name; });
}

Term& Problem::term(const std::string& name) const {
  for (const TermPtr& t : terms_)
    if (t->name() == name) return *t;
  std::vector<std::string> names;
  for (const TermPtr& t : terms_) names.push_back(t->name());
  throw Error(fmt::format("pinn::Problem: no term named {} (terms: {})", name, fmt::join(names, ", ")));
}

Tensor Problem::add_parameter(const std::string& name, double initial, ScalarType dtype) {
  for (const auto& [existing, value] : parameters_)
    GD_CHECK(existing != name, fmt::format("pinn::Problem: a parameter named {} exists already", name));
  Tensor p = full({}, initial, TensorOptions().dtype(dtype)).requires_grad_();
  parameters_.emplace_back(name, p);
  return p;
}

std::vector<Tensor> Problem::parameter_tensors() const {
  std::vector<Tensor> out;
  for (const auto& [name, value] : parameters_) out.push_back(value);
  return out;
}

void Problem::set_weighting(WeightingOptions options) { weights_ = LossWeights(weights_.values(), options); }

void Problem::set_causal(const std::string& name, CausalOptions options) {
  term(name);  // an Error naming the terms if there is none
  GD_CHECK(options.chunks >= 0, fmt::format("pinn::Problem: causal chunks must be >= 0, got {}", options.chunks));
  GD_CHECK(options.epsilon >= 0, fmt::format("pinn::Problem: causal epsilon must be >= 0, got {}", options.epsilon));
  GD_CHECK(options.chunks == 0 || dynamic_cast<const GeometryXTime*>(domain_.get()) != nullptr,
           fmt::format("pinn::Problem: causal training needs a time coordinate, but the domain is {}", domain_->name()));
  causal_term_ = name;
  causal_ = options;
}

void Problem::hold_causal_weights(bool hold) {
  hold_causal_ = hold;
  held_causal_weights_ = Tensor();
}

namespace {

// Residuals r [N, k] at points x [N, d] (time last) in [t0, t1] by time
// slice: each point's slice [N], and each slice's mean squared residual [M].
struct CausalSlices {
  Tensor slice, counts, means;
};

CausalSlices causal_slices(const Tensor& r, const Tensor& x, double t0, double t1, int64_t m) {
  Tensor per_point = r.square().mean({1});
  // Truncation is the floor here: the scaled times are clamped to [0, m - 1] first.
  Tensor slice = ((x.select(1, x.size(1) - 1).detach().to(kFloat64) - t0) * (static_cast<double>(m) / (t1 - t0)))
                     .clamp(0, static_cast<double>(m - 1))
                     .to(kInt64);
  Tensor sums = zeros({m}, per_point.options().requires_grad(false)).index_add(0, slice, per_point);
  const auto f64 = TensorOptions().dtype(kFloat64);
  Tensor counts = zeros({m}, f64).index_add(0, slice, ones({x.size(0)}, f64));
  return {slice, counts, sums / counts.clamp_min(1).to(sums.scalar_type())};
}

// The slices' weights w_i = exp(-epsilon sum_{k<i} L_k), no gradient; `held`
// holds the weights to use, or is filled with them when undefined.
Tensor causal_weights(const Tensor& means, const CausalOptions& options, Tensor* held) {
  if (held && held->defined()) return *held;
  Tensor before = means.detach().cumsum(0) - means.detach();  // sum_{k<i} L_k
  Tensor w = (before * -options.epsilon).exp();
  if (held) *held = w;
  return w;
}

}  // namespace

void Problem::sample(Generator& generator) {
  for (const TermPtr& t : terms_) t->sample(*domain_, generator);
}

void Problem::resample(const std::string& name, Generator& generator) { term(name).sample(*domain_, generator); }

Solution Problem::solve(const nn::AnyModule& net, const Tensor& x, const DerivativeNeeds& needs,
                         std::vector<JetProbe>* probes) const {
  return Solution(net, x, needs, engine_, transform_, probes);
}

Tensor Problem::point_weights(size_t index, const Tensor& r) const {
  GD_CHECK(index < terms_.size(), fmt::format("pinn::Problem: term index {} is out of range ({} terms)", index,
                                              terms_.size()));
  const Term& t = *terms_[index];
  GD_CHECK(r.dim() == 2 && r.size(0) == t.points().size(0),
           fmt::format("pinn::Problem: the residual of {} must be [{}, k]", t.name(), t.points().size(0)));
  const double w = weights_.values()[index];
  const auto f64 = TensorOptions().dtype(kFloat64);
  const auto per_value = static_cast<double>(r.size(0) * r.size(1));
  if (causal_.chunks == 0 || t.name() != causal_term_) return full({r.size(0)}, w / per_value, f64);
  // (1/M) sum_i w_i mean_{n in slice i}(mean_c r_nc^2): each point's share.
  const auto [lower, upper] = domain_->bbox();
  const CausalSlices slices = causal_slices(r.detach(), t.points(), lower.back(), upper.back(), causal_.chunks);
  const Tensor c = causal_weights(slices.means, causal_, hold_causal_ ? &held_causal_weights_ : nullptr).to(kFloat64);
  const Tensor share = c / (slices.counts.clamp_min(1) * static_cast<double>(causal_.chunks * r.size(1)));
  return share.index_select(0, slices.slice) * w;
}

Losses Problem::losses(const nn::AnyModule& net) const {
  GD_CHECK(!terms_.empty(), "pinn::Problem: no terms to train on");
  Losses out;
  last_engines_.clear();
  const std::vector<double>& w = weights_.values();
  for (size_t i = 0; i < terms_.size(); ++i) {
    Term& t = *terms_[i];
    GD_CHECK(t.points().defined(), fmt::format("pinn::Problem: term {} has no points; call sample() first", t.name()));
    // Points live on the host; they follow the network to its device and dtype.
    const std::vector<Tensor> params = net.ptr()->parameters();
    const Tensor x = params.empty() ? t.points().to(kFloat64)
                                    : t.points().to(params.front().device(), params.front().scalar_type());
    Solution solution = solve(net, x, t.needs());
    last_engines_.push_back(solution.engine());
    Tensor r = t.residual(solution);
    Tensor value;
    if (causal_.chunks > 0 && t.name() == causal_term_) {
      const auto [lower, upper] = domain_->bbox();
      const CausalSlices slices = causal_slices(r, t.points(), lower.back(), upper.back(), causal_.chunks);
      value = (causal_weights(slices.means, causal_, hold_causal_ ? &held_causal_weights_ : nullptr) * slices.means).mean();
    } else {
      value = r.square().mean();
    }
    out.names.push_back(t.name());
    out.values.push_back(value);
    Tensor weighted = w[i] == 1.0 ? value : value * w[i];
    out.total = out.total.defined() ? out.total + weighted : weighted;
  }
  return out;
}

Tensor Problem::residual_magnitude(const nn::AnyModule& net, const std::string& name, const Tensor& points,
                                   int64_t chunk) const {
  auto* op = dynamic_cast<const OperatorCondition*>(&term(name));
  GD_CHECK(op != nullptr, fmt::format("pinn::Problem: residual-based sampling needs an operator condition (the PDE); {} "
                                      "is not one", name));
  GD_CHECK(points.defined() && points.dim() == 2 && points.size(1) == domain_->dim(),
           fmt::format("pinn::Problem: candidate points must be [N, {}]", domain_->dim()));
  GD_CHECK(chunk > 0, "pinn::Problem: chunk must be positive");
  const std::vector<Tensor> params = net.ptr()->parameters();
  const ScalarType dtype = params.empty() ? kFloat64 : params.front().scalar_type();
  const Device device = params.empty() ? Device(kCPU) : params.front().device();
  std::vector<Tensor> parts;
  AutoGradMode grad_mode(true);  // the nested engine differentiates by x
  for (int64_t start = 0; start < points.size(0); start += chunk) {
    const int64_t n = std::min(chunk, points.size(0) - start);
    Solution solution = solve(net, points.narrow(0, start, n).to(device, dtype), op->needs());
    Tensor r = op->residual_at(solution).detach().to(kFloat64);
    parts.push_back(r.square().sum({1}).sqrt().cpu());  // refinement draws on the host
  }
  return parts.empty() ? empty({0}, TensorOptions().dtype(kFloat64)) : cat(parts, 0);
}

std::map<std::string, Tensor> Problem::state_dict() const {
  std::map<std::string, Tensor> state;
  for (const TermPtr& t : terms_)
    if (t->drawn().defined()) state["points/" + t->name()] = t->drawn();
  const std::vector<double>& w = weights_.values();
  state["weights"] = from_blob(const_cast<double*>(w.data()), {static_cast<int64_t>(w.size())},
                               TensorOptions().dtype(kFloat64)).clone();
  for (const auto& [name, value] : parameters_) state["parameters/" + name] = value.detach().clone();
  return state;
}

void Problem::load_state_dict(const std::map<std::string, Tensor>& state) {
  auto find = [&](const std::string& key) -> const Tensor& {
    auto it = state.find(key);
    GD_CHECK(it != state.end(), fmt::format("pinn::Problem: the saved state has no {}", key));
    return it->second;
  };
  for (const TermPtr& t : terms_) t->set_points(find("points/" + t->name()), *domain_);
  const Tensor w = find("weights").to(kFloat64).contiguous();
  GD_CHECK(w.dim() == 1 && w.size(0) == static_cast<int64_t>(terms_.size()),
           fmt::format("pinn::Problem: the saved state has {} weights for {} terms", w.numel(), terms_.size()));
  weights_.set_values(std::vector<double>(w.cpu_data_ptr<double>(), w.cpu_data_ptr<double>() + w.numel()));
  NoGradGuard no_grad;
  for (auto& [name, value] : parameters_) {
    const Tensor& saved = find("parameters/" + name);
    GD_CHECK(saved.numel() == 1, fmt::format("pinn::Problem: the saved parameter {} is not a scalar", name));
    value.copy_(saved.reshape({}).to(value.scalar_type()));
  }
}

}  // namespace gradiens::pinn
