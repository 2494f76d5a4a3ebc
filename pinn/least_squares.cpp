// Weighted residuals and their per-sample Jacobian (pinn/least_squares.h).
#include "pinn/least_squares.h"

#include <fmt/format.h>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::pinn {

namespace {

// Where each parameter's columns start.
std::vector<int64_t> column_offsets(const std::vector<Tensor>& params) {
  std::vector<int64_t> offsets;
  int64_t next = 0;
  for (const Tensor& p : params) {
    offsets.push_back(next);
    next += p.numel();
  }
  offsets.push_back(next);
  return offsets;
}

int64_t index_of(const std::vector<Tensor>& params, const Tensor& t) {
  if (!t.defined()) return -1;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].is_same(t)) return static_cast<int64_t>(i);
  return -1;
}

// Columns of one residual component rho_c [N] (the term's rows for it) into
// jacobian [N, P].
void fill_component(const Tensor& rho_c, const std::vector<JetProbe>& probes, const std::vector<Tensor>& params,
                    const std::vector<int64_t>& offsets, const Tensor& jacobian) {
  const int64_t n = rho_c.size(0);
  std::vector<bool> covered(params.size(), false);
  std::vector<Tensor> leaves;
  for (const JetProbe& probe : probes) leaves.push_back(probe.probe);
  if (!leaves.empty() && rho_c.requires_grad()) {
    const std::vector<Tensor> sensitivities =
        autograd::grad({rho_c.sum()}, leaves, {}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
    NoGradGuard no_grad;
    for (size_t l = 0; l < probes.size(); ++l) {
      const Tensor& D = sensitivities[l];  // [K, N, out]
      const int64_t w = index_of(params, probes[l].weight), b = index_of(params, probes[l].bias);
      if (w >= 0) covered[static_cast<size_t>(w)] = true;
      if (b >= 0) covered[static_cast<size_t>(b)] = true;
      if (!D.defined()) continue;
      if (w >= 0) {  // sum_k D[k, n]^T H[k, n], row-major as the weight [out, in]
        const Tensor& H = probes[l].input;
        const Tensor block = matmul(D.permute({1, 2, 0}), H.permute({1, 0, 2}).to(D.scalar_type()));
        jacobian.narrow(1, offsets[static_cast<size_t>(w)], block.size(1) * block.size(2))
            .copy_(block.reshape({n, -1}));
      }
      if (b >= 0) jacobian.narrow(1, offsets[static_cast<size_t>(b)], D.size(2)).copy_(D.select(0, 0));
    }
  }
  // The rest (scalar PDE parameters): rho_c depends on p row by row, so with
  // v a vector of ones, d/dv of the gradient of <rho_c, v> by p is d rho_c / dp.
  for (size_t i = 0; i < params.size(); ++i) {
    if (covered[i] || !rho_c.requires_grad()) continue;
    const Tensor& p = params[i];
    Tensor v = ones({n}, rho_c.options().requires_grad(false)).requires_grad_();
    const Tensor g = autograd::grad({(rho_c * v).sum()}, {p}, {}, /*retain_graph=*/true, /*create_graph=*/true,
                                    /*allow_unused=*/true)[0];
    if (!g.defined() || !g.requires_grad()) continue;  // unread, or read only linearly through nothing per row
    GD_CHECK(p.numel() <= 64, fmt::format("pinn::weighted_residuals: parameter {} ({} values) is neither a Linear "
                                          "layer's weight or bias nor a small PDE parameter",
                                          i, p.numel()));
    const Tensor flat = g.reshape({-1});
    for (int64_t e = 0; e < p.numel(); ++e) {
      const Tensor column = autograd::grad({flat.select(0, e)}, {v}, {}, /*retain_graph=*/true,
                                           /*create_graph=*/false, /*allow_unused=*/true)[0];
      NoGradGuard no_grad;
      if (column.defined()) jacobian.select(1, offsets[i] + e).copy_(column);
    }
  }
}

}  // namespace

bool least_squares_supported(const Problem& problem, const nn::AnyModule& net, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (problem.engine() == Engine::kNested) return fail("the nested engine is chosen, and per-sample Jacobians need Taylor mode");
  for (const TermPtr& t : problem.terms()) {
    if (dynamic_cast<const PeriodicBC*>(t.get()))
      return fail(fmt::format("term {} is a periodic condition, whose residuals pair points (make the network "
                              "periodic, e.g. with a PeriodicEmbedding, instead)", t->name()));
    std::string reason;
    if (!taylor_can_serve(net, t->needs(), static_cast<bool>(problem.output_transform()), &reason))
      return fail(fmt::format("term {} cannot use the Taylor engine: {}", t->name(), reason));
  }
  return true;
}

WeightedResiduals weighted_residuals(const Problem& problem, const nn::AnyModule& net, const std::vector<Tensor>& params,
                                     bool jacobian) {
  GD_CHECK(!problem.terms().empty(), "pinn::weighted_residuals: the problem has no terms");
  AutoGradMode grad_mode(true);
  const std::vector<int64_t> offsets = column_offsets(params);
  const ScalarType dtype = net.ptr()->parameters().empty() ? kFloat64 : net.ptr()->parameters().front().scalar_type();
  WeightedResiduals out;
  std::vector<Tensor> residual_parts, jacobian_parts;
  for (size_t i = 0; i < problem.terms().size(); ++i) {
    Term& t = *problem.terms()[i];
    GD_CHECK(t.points().defined(),
             fmt::format("pinn::weighted_residuals: term {} has no points; call sample() first", t.name()));
    GD_CHECK(dynamic_cast<const PeriodicBC*>(&t) == nullptr,
             fmt::format("pinn::weighted_residuals: term {} is a periodic condition, whose residuals pair points; "
                         "least squares needs one point per residual (make the network periodic, e.g. with a "
                         "PeriodicEmbedding, instead)", t.name()));
    std::vector<JetProbe> probes;
    Solution solution = problem.solve(net, t.points().to(dtype), t.needs(), jacobian ? &probes : nullptr);
    const Tensor r = t.residual(solution);  // [N, k]
    const Tensor f = problem.point_weights(i, r);
    const Tensor rho = r * f.sqrt().to(r.scalar_type()).unsqueeze(1);
    out.names.push_back(t.name());
    const double w = problem.weights().values()[i];
    out.values.push_back(w != 0 ? (r.detach().to(kFloat64).square() * f.unsqueeze(1)).sum() / w
                                : r.detach().to(kFloat64).square().mean());
    residual_parts.push_back(rho.detach().to(kFloat64).reshape({-1}));
    if (!jacobian) continue;
    const int64_t n = r.size(0), k = r.size(1);
    Tensor block = zeros({n, k, offsets.back()}, TensorOptions().dtype(kFloat64));
    for (int64_t c = 0; c < k; ++c) {
      if (k == 1) {
        fill_component(rho.select(1, c), probes, params, offsets, block.select(1, 0));
        continue;
      }
      Tensor rows = zeros({n, offsets.back()}, TensorOptions().dtype(kFloat64));
      fill_component(rho.select(1, c), probes, params, offsets, rows);
      NoGradGuard no_grad;
      block.select(1, c).copy_(rows);
    }
    jacobian_parts.push_back(block.reshape({n * k, offsets.back()}));
  }
  out.residuals = cat(residual_parts, 0);
  if (jacobian) out.jacobian = cat(jacobian_parts, 0);
  return out;
}

}  // namespace gradiens::pinn
