// Weights of a PINN's loss terms, L = sum_i lambda_i L_i:
//   fixed          lambda_i as given.
//   lr_annealing   learning-rate annealing (Wang, Teng and Perdikaris, 2021,
//                  Algorithm 1): the first term (the PDE residual, r) keeps
//                  its weight; every `every` steps each other term gets
//                    lambda_hat_i = max_theta |dL_r/dtheta| / mean_theta |dL_i/dtheta|
//                    lambda_i <- (1 - alpha) lambda_i + alpha lambda_hat_i.
//   grad_norm      gradient-norm balancing (Wang et al., 2023, "An expert's
//                  guide to training PINNs", Algorithm 1): every term gets
//                    lambda_hat_i = (sum_j ||dL_j/dtheta||) / ||dL_i/dtheta||
//                    lambda_i <- alpha lambda_i + (1 - alpha) lambda_hat_i,
//                  so that every weighted term has the same gradient norm.
// The gradients are taken with respect to the network's parameters (and any
// trainable PDE parameters), each term's separately, on the current graph.
// Both adaptive methods clip lambda_hat_i to max_weight: a term whose
// gradient vanishes (a condition already met) would otherwise get an
// unbounded weight that swamps the others.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::pinn {

enum class Weighting { kFixed, kLRAnnealing, kGradNorm };
Weighting parse_weighting(const std::string& name);  // "fixed", "lr_annealing", "grad_norm"
std::string weighting_name(Weighting weighting);

struct WeightingOptions {
  Weighting method = Weighting::kFixed;
  int64_t every = 100;  // steps between updates (adaptive methods)
  double alpha = 0.9;   // the moving-average factor of the formulas above
  double max_weight = std::numeric_limits<double>::infinity();  // the cap on lambda_hat_i
};

class LossWeights {
 public:
  LossWeights() = default;
  // `initial` has one weight per term (all >= 0, finite).
  LossWeights(std::vector<double> initial, WeightingOptions options);

  const std::vector<double>& values() const { return weights_; }
  void set_values(std::vector<double> weights);
  const WeightingOptions& options() const { return options_; }
  bool adaptive() const { return options_.method != Weighting::kFixed; }
  // Whether `step` (counted from 1) updates the weights.
  bool due(int64_t step) const { return adaptive() && step % options_.every == 0; }
  // Updates the weights from the unweighted terms (scalars still attached to
  // their graphs) and the parameters they depend on.
  void update(const std::vector<Tensor>& terms, const std::vector<Tensor>& parameters);

 private:
  std::vector<double> weights_;
  WeightingOptions options_;
};

}  // namespace gradiens::pinn
