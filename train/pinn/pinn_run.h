// A gradiens-train run of a PINN: the problem built from the config's "pinn"
// section, the generator its points are drawn from, resampling and residual-
// based refinement between steps, and the evaluation against the reference
// solution on a fixed set of points (a grid when the reference has one or
// the domain is a box in at most two coordinates).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/generator.h"
#include "nn/modules/container.h"
#include "pinn/adaptive.h"
#include "pinn/problem.h"
#include "train/config/spec.h"
#include "train/pinn/context.h"

namespace gradiens::train {

// The spec of the "pinn" section.
std::shared_ptr<ObjectSpec> pinn_section_spec();

class PinnRun {
 public:
  PinnRun(pinn::Problem problem, PinnContext context) : problem(std::move(problem)), context(std::move(context)) {}

  pinn::Problem problem;
  PinnContext context;
  Generator generator;  // draws every point after the first sampling
  int64_t resample_every = 0;
  int64_t resample_until = 0;  // the last step that resamples (0: none)
  pinn::RefinementOptions refinement;
  PinnReference reference;     // solution empty when the config has none
  Tensor eval_points;          // [M, d] float64
  Tensor eval_reference;       // [M, 1] float64
  std::vector<int64_t> eval_grid;  // points per coordinate when eval_points is a grid (x fastest), else empty

  bool has_reference() const { return static_cast<bool>(reference.solution); }
  // The losses at the current points (and, when due at `step`, the weights
  // updated first from these terms).
  pinn::Losses losses(const nn::AnyModule& net, int64_t step, const std::vector<Tensor>& parameters);
  // Resampling and refinement after optimizer step `step` (counted from 1).
  // Returns a line for the log when points changed, else empty.
  std::string after_step(int64_t step, const nn::AnyModule& net);
  // The network's solution at the evaluation points, float64 [M, 1].
  Tensor predict(const nn::AnyModule& net) const;
  // "loss" (the mean squared error against the reference), "rel_l2" and
  // "max_abs_error" on the evaluation points.
  std::map<std::string, double> evaluate(const nn::AnyModule& net, const std::vector<std::string>& metrics) const;

  // Points, weights, parameters and the generator, for checkpoints.
  std::map<std::string, Tensor> state_dict() const;
  void load_state_dict(const std::map<std::string, Tensor>& state);
};

// Builds the run from the resolved "pinn" section; the network's input is the
// domain's coordinates. Errors name their JSON paths.
std::shared_ptr<PinnRun> build_pinn_run(json& config, ScalarType dtype, uint64_t seed, const std::string& base_dir);

}  // namespace gradiens::train
