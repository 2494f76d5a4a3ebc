// The solution at a batch of points and its derivatives by either engine (pinn/solution.h).
#include "pinn/solution.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/enum_names.h"
#include "pinn/taylor.h"

namespace gradiens::pinn {

namespace {

const std::vector<std::string> kEngineNames = {"auto", "nested", "taylor"};  // in Engine's order

}  // namespace

Engine parse_engine(const std::string& name) {
  return parse_enum_name<Engine>(name, kEngineNames, "differentiation engine");
}

std::string engine_name(Engine engine) { return enum_name(engine, kEngineNames); }

DerivativeNeeds DerivativeNeeds::merged(const DerivativeNeeds& other) const {
  DerivativeNeeds out = *this;
  for (const auto& p : other.partials)
    if (std::find(out.partials.begin(), out.partials.end(), p) == out.partials.end()) out.partials.push_back(p);
  if (other.laplacian) {
    GD_CHECK(!out.laplacian || out.laplacian_weights == other.laplacian_weights,
             "pinn: two terms ask for Laplacians with different coordinate weights");
    out.laplacian = true;
    out.laplacian_weights = other.laplacian_weights;
  }
  return out;
}

namespace {

bool is_pure(const std::vector<int64_t>& dims) {
  return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return d == dims.front(); });
}

// The Taylor request that serves `needs`: every pure derivative of order >= 2.
TaylorRequest taylor_request(const DerivativeNeeds& needs) {
  TaylorRequest request;
  request.laplacian = needs.laplacian;
  request.laplacian_weights = needs.laplacian_weights;
  for (const auto& dims : needs.partials) {
    if (dims.size() < 2) continue;
    if (std::find(request.pure_dims.begin(), request.pure_dims.end(), dims.front()) == request.pure_dims.end())
      request.pure_dims.push_back(dims.front());
    request.pure_order = std::max(request.pure_order, static_cast<int>(dims.size()));
  }
  return request;
}

// The name of the first layer (depth first) that Taylor mode cannot carry.
std::string first_unsupported_layer(const nn::Module& net) {
  if (auto* sequential = dynamic_cast<const nn::SequentialImpl*>(&net)) {
    for (const nn::AnyModule& layer : *sequential) {
      std::string name = first_unsupported_layer(*layer.ptr());
      if (!name.empty()) return name;
    }
    return "";
  }
  return taylor_supported(net) ? "" : net.name();
}

}  // namespace

bool taylor_can_serve(const nn::AnyModule& net, const DerivativeNeeds& needs, bool has_transform, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (!taylor_supported(*net.ptr()))
    return fail(fmt::format("the network has a {} layer, and Taylor mode takes MLPs of Linear (or FourierFeatures, "
                            "PeriodicEmbedding) layers and elementwise activations",
                            first_unsupported_layer(*net.ptr())));
  for (const auto& dims : needs.partials) {
    if (!is_pure(dims)) return fail(fmt::format("the mixed derivative over coordinates [{}] is needed", fmt::join(dims, ", ")));
    if (dims.size() > 4) return fail(fmt::format("a derivative of order {} is needed (at most 4)", dims.size()));
    if (has_transform && dims.size() > 2)
      return fail(fmt::format("a derivative of order {} is needed under an output transform (hard constraint), where "
                              "Taylor mode carries orders up to 2", dims.size()));
  }
  return true;
}

Solution::Solution(const nn::AnyModule& net, const Tensor& x, const DerivativeNeeds& needs, Engine engine,
                   const OutputTransform& transform, std::vector<JetProbe>* probes)
    : needs_(needs) {
  GD_CHECK(x.defined() && x.dim() == 2,
           fmt::format("pinn::Solution: points must be [N, d], got {} dimensions", x.defined() ? x.dim() : 0));
  GD_CHECK(x.is_floating_point(), "pinn::Solution: points must be floating point");
  for (const auto& dims : needs.partials)
    for (int64_t dim : dims)
      GD_CHECK(dim >= 0 && dim < x.size(1), fmt::format("pinn::Solution: a derivative over coordinate {} was asked of "
                                                        "points with {} coordinates", dim, x.size(1)));
  GD_CHECK(needs.laplacian_weights.empty() || static_cast<int64_t>(needs.laplacian_weights.size()) == x.size(1),
           fmt::format("pinn::Solution: {} Laplacian weights for {} coordinates", needs.laplacian_weights.size(), x.size(1)));
  std::string why;
  const bool taylor_ok = taylor_can_serve(net, needs, static_cast<bool>(transform), &why);
  GD_CHECK(engine != Engine::kTaylor || taylor_ok, fmt::format("pinn: the Taylor engine cannot be used: {}", why));
  engine_ = (engine == Engine::kTaylor || (engine == Engine::kAuto && taylor_ok)) ? Engine::kTaylor : Engine::kNested;
  GD_CHECK(probes == nullptr || engine_ == Engine::kTaylor,
           fmt::format("pinn::Solution: per-sample Jacobians need the Taylor engine, which cannot be used: {}",
                       engine == Engine::kNested ? "the nested engine was asked for" : why));

  if (engine_ == Engine::kTaylor) {
    x_ = x.detach();
    TaylorOutputs jet = taylor_forward(*net.ptr(), x_, taylor_request(needs), probes);
    if (transform) {
      std::map<int64_t, Tensor> second;
      for (const auto& dims : needs.partials)
        if (dims.size() == 2) second[dims.front()] = jet.pure(dims.front(), 2);
      transform_jet(transform, jet.value, jet.gradient, jet.laplacian, second);
      return;
    }
    output_ = jet.value;
    for (int64_t c = 0; c < output_.size(1); ++c) {
      gradients_[c] = jet.gradient.select(1, c);
      if (needs.laplacian) laplacians_[c] = jet.laplacian.narrow(1, c, 1);
      for (const auto& dims : needs.partials)
        if (dims.size() >= 2) partials_[{c, dims}] = jet.pure(dims.front(), static_cast<int>(dims.size())).narrow(1, c, 1);
    }
    return;
  }
  x_ = x.detach().requires_grad_();
  Tensor y = net.forward(x_);
  GD_CHECK(y.dim() == 2 && y.size(0) == x_.size(0),
           fmt::format("pinn::Solution: the network's output must be [N, m] with N = {}, got [{}]", x_.size(0),
                       fmt::join(y.sizes(), ", ")));
  output_ = transform ? transform(x_, y) : y;
  GD_CHECK(output_.dim() == 2 && output_.size(0) == x_.size(0),
           fmt::format("pinn::Solution: the output transform must return [N, m] with N = {}, got [{}]", x_.size(0),
                       fmt::join(output_.sizes(), ", ")));
}

void Solution::transform_jet(const OutputTransform& transform, const Tensor& y_in, const Tensor& gradient,
                             const Tensor& laplacian, const std::map<int64_t, Tensor>& second) {
  const bool differentiable = GradMode::is_enabled();  // the caller's mode: parameters may enter through T too
  AutoGradMode grad_mode(true);  // T's partial derivatives come from autograd, under no-grad callers too
  const Tensor x = x_.detach().requires_grad_();
  // Without a graph to the parameters (no-grad callers) y becomes a leaf of its own.
  const Tensor y = y_in.requires_grad() ? y_in : y_in.detach().requires_grad_();
  output_ = transform(x, y);
  GD_CHECK(output_.dim() == 2 && output_.size(0) == x.size(0),
           fmt::format("pinn::Solution: the output transform must return [N, m] with N = {}, got [{}]", x.size(0),
                       fmt::join(output_.sizes(), ", ")));
  const int64_t d = x.size(1);
  // d/dx and d/dy of a per-point quantity q (zeros where q does not depend on them).
  auto partials = [&](const Tensor& q) {
    std::vector<Tensor> found;
    if (q.requires_grad())
      found = autograd::grad({q.sum()}, {x, y}, {}, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
    found.resize(2);
    if (!found[0].defined()) found[0] = zeros_like(x);
    if (!found[1].defined()) found[1] = zeros_like(y);
    return std::pair<Tensor, Tensor>{found[0], found[1]};
  };
  auto row_dot = [](const Tensor& a, const Tensor& b) { return (a * b).sum({1}, /*keepdim=*/true); };
  for (int64_t c = 0; c < output_.size(1); ++c) {
    const auto [t_x, t_y] = partials(output_.narrow(1, c, 1));
    gradients_[c] = t_x + (t_y.unsqueeze(2) * gradient).sum({1});  // [N, d]
    // u_ii for each coordinate the needs read: the Laplacian's and the declared pure ones.
    auto second_along = [&](int64_t i, const Tensor& y_ii) {
      const Tensor y_i = gradient.select(2, i);  // [N, m]
      const Tensor directional = t_x.narrow(1, i, 1) + row_dot(t_y, y_i);
      const auto [g_x, g_y] = partials(directional);
      Tensor u_ii = g_x.narrow(1, i, 1) + row_dot(g_y, y_i);
      return y_ii.defined() ? u_ii + row_dot(t_y, y_ii) : u_ii;
    };
    for (const auto& [i, y_ii] : second) partials_[{c, {i, i}}] = second_along(i, y_ii);
    if (needs_.laplacian) {
      Tensor sum = row_dot(t_y, laplacian);
      for (int64_t i = 0; i < d; ++i) {
        const double w = needs_.laplacian_weights.empty() ? 1.0 : needs_.laplacian_weights[static_cast<size_t>(i)];
        if (w != 0) sum = sum + second_along(i, Tensor()) * w;
      }
      laplacians_[c] = sum;
    }
  }
  if (!differentiable) {  // nothing downstream differentiates: drop the graphs
    output_ = output_.detach();
    for (auto& [c, g] : gradients_) g = g.detach();
    for (auto& [key, p] : partials_) p = p.detach();
    for (auto& [c, l] : laplacians_) l = l.detach();
  }
}

Tensor Solution::check_component(int64_t component) const {
  GD_CHECK(component >= 0 && component < output_.size(1),
           fmt::format("pinn::Solution: component {} is out of range for a solution with {} components", component,
                       output_.size(1)));
  return output_.narrow(1, component, 1);
}

Tensor Solution::u(int64_t component) const { return check_component(component); }

std::string Solution::describe(const std::vector<int64_t>& dims) const {
  return fmt::format("d^{}u/d[{}]", dims.size(), fmt::join(dims, ", "));
}

Tensor Solution::gradient(int64_t component) {
  Tensor column = check_component(component);
  if (auto it = gradients_.find(component); it != gradients_.end()) return it->second;
  Tensor g;
  if (column.requires_grad())
    g = autograd::grad({column}, {x_}, {ones_like(column)}, /*retain_graph=*/true, /*create_graph=*/true,
                       /*allow_unused=*/true)[0];
  if (!g.defined()) g = zeros_like(x_);
  return gradients_[component] = g;
}

Tensor Solution::d(const std::vector<int64_t>& dims_in, int64_t component) {
  check_component(component);
  for (int64_t dim : dims_in)
    GD_CHECK(dim >= 0 && dim < x_.size(1), fmt::format("pinn::Solution: coordinate {} is out of range for points with {} "
                                                       "coordinates", dim, x_.size(1)));
  if (dims_in.empty()) return u(component);
  if (dims_in.size() == 1) return gradient(component).narrow(1, dims_in[0], 1);
  std::vector<int64_t> dims = dims_in;
  std::sort(dims.begin(), dims.end());  // mixed partials of a smooth network commute
  if (auto it = partials_.find({component, dims}); it != partials_.end()) return it->second;
  GD_CHECK(engine_ == Engine::kNested,
           fmt::format("pinn::Solution: {} was not declared in the derivative needs, and the Taylor engine carries only "
                       "those (declare it, or use the nested engine)", describe(dims)));
  // Differentiate the partial over all but the last coordinate once more.
  std::vector<int64_t> head(dims.begin(), dims.end() - 1);
  Tensor base = d(head, component);
  Tensor g;
  if (base.requires_grad())
    g = autograd::grad({base}, {x_}, {ones_like(base)}, /*retain_graph=*/true, /*create_graph=*/true,
                       /*allow_unused=*/true)[0];
  // The gradient of `base` serves every partial that extends head by one coordinate.
  for (int64_t j = 0; j < x_.size(1); ++j) {
    std::vector<int64_t> key = head;
    key.push_back(j);
    std::sort(key.begin(), key.end());
    if (!partials_.count({component, key}))
      partials_[{component, key}] = g.defined() ? g.narrow(1, j, 1) : zeros({x_.size(0), 1}, x_.options().requires_grad(false));
  }
  return partials_.at({component, dims});
}

Tensor Solution::laplacian(int64_t component) {
  check_component(component);
  if (auto it = laplacians_.find(component); it != laplacians_.end()) return it->second;
  GD_CHECK(engine_ == Engine::kNested || needs_.laplacian,
           "pinn::Solution: the Laplacian was not declared in the derivative needs (the Taylor engine carries only those)");
  Tensor sum;
  for (int64_t i = 0; i < x_.size(1); ++i) {
    const double c = needs_.laplacian_weights.empty() ? 1.0 : needs_.laplacian_weights[static_cast<size_t>(i)];
    if (c == 0) continue;
    Tensor term = d({i, i}, component);
    if (c != 1) term = term * c;
    sum = sum.defined() ? sum + term : term;
  }
  if (!sum.defined()) sum = zeros({x_.size(0), 1}, x_.options().requires_grad(false));
  return laplacians_[component] = sum;
}

}  // namespace gradiens::pinn
