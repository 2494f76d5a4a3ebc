// Loss-term weighting: fixed, learning-rate annealing, gradient-norm balancing (pinn/weighting.h).
#include "pinn/weighting.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/enum_names.h"

namespace gradiens::pinn {

namespace {

const std::vector<std::string> kWeightingNames = {"fixed", "lr_annealing", "grad_norm"};  // in Weighting's order

}  // namespace

Weighting parse_weighting(const std::string& name) {
  return parse_enum_name<Weighting>(name, kWeightingNames, "loss weighting");
}

std::string weighting_name(Weighting weighting) { return enum_name(weighting, kWeightingNames); }

LossWeights::LossWeights(std::vector<double> initial, WeightingOptions options) : options_(options) {
  GD_CHECK(options_.every > 0, fmt::format("loss weighting: every must be positive, got {}", options_.every));
  GD_CHECK(options_.alpha >= 0 && options_.alpha <= 1,
           fmt::format("loss weighting: alpha must be in [0, 1], got {}", options_.alpha));
  GD_CHECK(options_.max_weight > 0, fmt::format("loss weighting: max_weight must be positive, got {}",
                                                options_.max_weight));
  set_values(std::move(initial));
}

void LossWeights::set_values(std::vector<double> weights) {
  for (double w : weights)
    GD_CHECK(std::isfinite(w) && w >= 0, fmt::format("loss weighting: weights must be finite and >= 0, got {}", w));
  weights_ = std::move(weights);
}

namespace {

struct GradientStats {
  double max_abs = 0, mean_abs = 0, norm = 0;
};

// Statistics of d(term)/d(parameters) over every parameter entry.
GradientStats gradient_stats(const Tensor& term, const std::vector<Tensor>& parameters) {
  GradientStats stats;
  if (!term.requires_grad()) return stats;
  std::vector<Tensor> grads = autograd::grad({term}, parameters, {}, /*retain_graph=*/true, /*create_graph=*/false,
                                             /*allow_unused=*/true);
  NoGradGuard no_grad;
  double sum_abs = 0, sum_sq = 0;
  int64_t count = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    count += parameters[i].numel();
    if (!grads[i].defined()) continue;
    Tensor g = grads[i].to(kFloat64);
    stats.max_abs = std::max(stats.max_abs, g.abs().max().item<double>());
    sum_abs += g.abs().sum().item<double>();
    sum_sq += g.square().sum().item<double>();
  }
  stats.mean_abs = count > 0 ? sum_abs / static_cast<double>(count) : 0;
  stats.norm = std::sqrt(sum_sq);
  return stats;
}

}  // namespace

void LossWeights::update(const std::vector<Tensor>& terms, const std::vector<Tensor>& parameters) {
  GD_CHECK(terms.size() == weights_.size(),
           fmt::format("loss weighting: {} terms for {} weights", terms.size(), weights_.size()));
  if (!adaptive() || terms.empty()) return;
  std::vector<GradientStats> stats;
  for (const Tensor& term : terms) stats.push_back(gradient_stats(term, parameters));
  const double alpha = options_.alpha;
  if (options_.method == Weighting::kLRAnnealing) {
    for (size_t i = 1; i < terms.size(); ++i) {
      if (stats[i].mean_abs <= 0 || !std::isfinite(stats[i].mean_abs)) continue;  // no signal: keep the weight
      const double hat = std::min(stats[0].max_abs / stats[i].mean_abs, options_.max_weight);
      if (std::isfinite(hat)) weights_[i] = (1 - alpha) * weights_[i] + alpha * hat;
    }
    return;
  }
  double total = 0;
  for (const GradientStats& s : stats) total += s.norm;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (stats[i].norm <= 0 || !std::isfinite(stats[i].norm)) continue;
    const double hat = std::min(total / stats[i].norm, options_.max_weight);
    if (std::isfinite(hat)) weights_[i] = alpha * weights_[i] + (1 - alpha) * hat;
  }
}

}  // namespace gradiens::pinn
