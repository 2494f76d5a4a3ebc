// Residual-based adaptive sampling of a PINN's operator condition (the PDE):
//   RAR   (Lu et al., 2021, DeepXDE): add the `add` candidates with the
//         largest residual |r| to the term's points.
//   RAD   (Wu et al., 2023): replace the term's points by as many candidates,
//         drawn without replacement with probability
//           p(x) proportional to |r(x)|^k / mean(|r|^k) + c.
//   RAR-D (Wu et al., 2023): add `add` candidates drawn by that density.
// Candidates are fresh pseudo-random points of the domain's interior; drawing
// without replacement by weight uses exponential keys (Efraimidis and
// Spirakis, 2006): the n largest of log(u) / p, u uniform.
#pragma once

#include <cstdint>
#include <string>

#include "pinn/problem.h"

namespace gradiens::pinn {

enum class Refinement { kNone, kRAR, kRAD, kRARD };
Refinement parse_refinement(const std::string& name);  // "none", "RAR", "RAD", "RAR-D"
std::string refinement_name(Refinement refinement);

struct RefinementOptions {
  Refinement method = Refinement::kNone;
  std::string term = "pde";  // the operator condition refined
  int64_t every = 1000;      // steps between refinements
  int64_t candidates = 0;    // candidate points per refinement; 0: 10x the term's points
  int64_t add = 10;          // RAR and RAR-D: points added per refinement
  double k = 1, c = 1;       // RAD and RAR-D: the density's exponent and offset
  int64_t max_points = 0;    // RAR and RAR-D: stop adding beyond this many points (0: no cap)
};

// One refinement of `options.term` by `options.method`; returns the points
// added (RAR, RAR-D) or drawn (RAD). kNone does nothing.
Tensor refine(Problem& problem, const nn::AnyModule& net, const RefinementOptions& options, Generator& generator);

// The indices of `count` rows drawn without replacement with probabilities
// proportional to `weights` [N] (all >= 0, at least `count` positive).
Tensor sample_without_replacement(const Tensor& weights, int64_t count, Generator& generator);

}  // namespace gradiens::pinn
