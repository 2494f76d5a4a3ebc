// RAR, RAD and RAR-D refinement of a PINN's collocation points (pinn/adaptive.h).
#include "pinn/adaptive.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/enum_names.h"

namespace gradiens::pinn {

namespace {

const std::vector<std::string> kRefinementNames = {"none", "RAR", "RAD", "RAR-D"};  // in Refinement's order

}  // namespace

Refinement parse_refinement(const std::string& name) {
  return parse_enum_name<Refinement>(name, kRefinementNames, "refinement");
}

std::string refinement_name(Refinement refinement) { return enum_name(refinement, kRefinementNames); }

Tensor sample_without_replacement(const Tensor& weights, int64_t count, Generator& generator) {
  GD_CHECK(weights.defined() && weights.dim() == 1, "sample_without_replacement: weights must be [N]");
  NoGradGuard no_grad;
  const Tensor w = weights.detach().to(kFloat64);
  GD_CHECK(w.isfinite().all().item<bool>() && (w >= 0).all().item<bool>(),
           "sample_without_replacement: weights must be finite and >= 0");
  const int64_t positive = (w > 0).sum().item<int64_t>();
  GD_CHECK(count >= 0 && count <= positive,
           fmt::format("sample_without_replacement: {} draws from {} rows of positive weight", count, positive));
  // log(u) / w: the largest keys win; rows of weight 0 get -inf and never do.
  Tensor u = rand({w.size(0)}, generator, TensorOptions().dtype(kFloat64)).clamp_min(1e-300);
  Tensor keys = u.log() / w;
  return std::get<1>(topk(keys, count, 0, /*largest=*/true, /*sorted=*/true));
}

Tensor refine(Problem& problem, const nn::AnyModule& net, const RefinementOptions& options, Generator& generator) {
  if (options.method == Refinement::kNone) return {};
  Term& term = problem.term(options.term);
  GD_CHECK(term.drawn().defined(), fmt::format("pinn: refining {}: it has no points yet", options.term));
  const int64_t current = term.drawn().size(0);
  const int64_t n_candidates = options.candidates > 0 ? options.candidates : 10 * current;
  GD_CHECK(options.add > 0 || options.method == Refinement::kRAD,
           fmt::format("pinn: refining {}: the number of points to add must be positive", options.term));
  GD_CHECK(options.k >= 0 && options.c >= 0, "pinn: refinement density: k and c must be >= 0");
  const Tensor candidates = problem.domain().sample_interior(n_candidates, Sampler::kPseudo, generator);
  const Tensor r = problem.residual_magnitude(net, options.term, candidates);
  if (options.method == Refinement::kRAR || options.method == Refinement::kRARD) {
    int64_t add = std::min(options.add, candidates.size(0));
    if (options.max_points > 0) add = std::min(add, std::max<int64_t>(options.max_points - current, 0));
    if (add == 0) return candidates.narrow(0, 0, 0);
    Tensor chosen;
    if (options.method == Refinement::kRAR) {
      chosen = std::get<1>(topk(r, add, 0, /*largest=*/true, /*sorted=*/true));
    } else {
      Tensor density = r.pow(options.k);
      density = density / density.mean().clamp_min(1e-300) + options.c;
      chosen = sample_without_replacement(density, add, generator);
    }
    Tensor added = candidates.index_select(0, chosen);
    term.add_points(added, problem.domain());
    return added;
  }
  // RAD: as many points as the term has, drawn afresh by the density.
  GD_CHECK(candidates.size(0) >= current,
           fmt::format("pinn: RAD on {} needs at least {} candidates, got {}", options.term, current, candidates.size(0)));
  Tensor density = r.pow(options.k);
  density = density / density.mean().clamp_min(1e-300) + options.c;
  Tensor drawn = candidates.index_select(0, sample_without_replacement(density, current, generator));
  term.set_points(drawn, problem.domain());
  return drawn;
}

}  // namespace gradiens::pinn
