// Input embeddings: Fourier features and periodic coordinates (pinn/fourier.h).
#include "pinn/fourier.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"

namespace gradiens::pinn {

namespace {

std::vector<double> same_sigma(int64_t in_features, int64_t features, double sigma) {
  GD_CHECK(in_features > 0 && features > 0,
           fmt::format("FourierFeatures: in_features ({}) and features ({}) must be positive", in_features, features));
  return std::vector<double>(static_cast<size_t>(in_features), sigma);
}

}  // namespace

FourierFeaturesImpl::FourierFeaturesImpl(int64_t in_features_, int64_t features_, double sigma)
    : FourierFeaturesImpl(features_, same_sigma(in_features_, features_, sigma)) {}

FourierFeaturesImpl::FourierFeaturesImpl(int64_t features_, std::vector<double> sigmas_)
    : Module("FourierFeatures"), in_features(static_cast<int64_t>(sigmas_.size())), features(features_),
      sigmas(std::move(sigmas_)) {
  GD_CHECK(in_features > 0 && features > 0,
           fmt::format("FourierFeatures: in_features ({}) and features ({}) must be positive", in_features, features));
  for (double sigma : sigmas)
    GD_CHECK(std::isfinite(sigma) && sigma > 0, fmt::format("FourierFeatures: sigma must be positive, got {}", sigma));
  const Tensor draw = randn({in_features, features});
  frequencies = register_buffer("frequencies", draw * tensor(sigmas, draw.options()).reshape({in_features, 1}));
}

Tensor FourierFeaturesImpl::forward(const Tensor& x) {
  GD_CHECK(x.dim() == 2 && x.size(1) == in_features,
           fmt::format("FourierFeatures: expected input [N, {}], got [{}]", in_features, fmt::join(x.sizes(), ", ")));
  Tensor z = matmul(x, frequencies) * (2 * std::numbers::pi);
  return cat({sin(z), cos(z)}, 1);
}

std::string FourierFeaturesImpl::extra_repr() const {
  const bool same = std::all_of(sigmas.begin(), sigmas.end(), [&](double s) { return s == sigmas.front(); });
  if (same) return fmt::format("in_features={}, features={}, sigma={}", in_features, features, sigmas.front());
  return fmt::format("in_features={}, features={}, sigma=[{}]", in_features, features, fmt::join(sigmas, ", "));
}

PeriodicEmbeddingImpl::PeriodicEmbeddingImpl(std::vector<double> periods_, int64_t harmonics_)
    : Module("PeriodicEmbedding"), periods(std::move(periods_)), harmonics(harmonics_) {
  GD_CHECK(!periods.empty(), "PeriodicEmbedding: periods is empty (give one per input coordinate, 0 for a "
                             "coordinate that is not periodic)");
  GD_CHECK(harmonics > 0, fmt::format("PeriodicEmbedding: harmonics must be positive, got {}", harmonics));
  bool any = false;
  for (size_t j = 0; j < periods.size(); ++j) {
    GD_CHECK(std::isfinite(periods[j]) && periods[j] >= 0,
             fmt::format("PeriodicEmbedding: the period of coordinate {} must be positive (or 0: not periodic), "
                         "got {}", j, periods[j]));
    any = any || periods[j] > 0;
  }
  GD_CHECK(any, fmt::format("PeriodicEmbedding: no coordinate is periodic (periods [{}]); give a positive period "
                            "for at least one", fmt::join(periods, ", ")));
}

int64_t PeriodicEmbeddingImpl::out_features() const {
  int64_t out = 0;
  for (double period : periods) out += period > 0 ? 2 * harmonics : 1;
  return out;
}

Tensor PeriodicEmbeddingImpl::forward(const Tensor& x) {
  GD_CHECK(x.dim() == 2 && x.size(1) == in_features(),
           fmt::format("PeriodicEmbedding: expected input [N, {}], got [{}]", in_features(),
                       fmt::join(x.sizes(), ", ")));
  std::vector<Tensor> columns;
  for (int64_t j = 0; j < in_features(); ++j) {
    Tensor coordinate = x.narrow(1, j, 1);
    const double period = periods[static_cast<size_t>(j)];
    if (period == 0) {
      columns.push_back(coordinate);
      continue;
    }
    for (int64_t k = 1; k <= harmonics; ++k) {
      Tensor angle = coordinate * (2 * std::numbers::pi * static_cast<double>(k) / period);
      columns.push_back(cos(angle));
      columns.push_back(sin(angle));
    }
  }
  return cat(columns, 1);
}

std::string PeriodicEmbeddingImpl::extra_repr() const {
  return fmt::format("periods=[{}], harmonics={}", fmt::join(periods, ", "), harmonics);
}

}  // namespace gradiens::pinn
