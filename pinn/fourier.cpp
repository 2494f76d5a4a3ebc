// Fourier-feature embeddings (pinn/fourier.h).
#include "pinn/fourier.h"

#include <numbers>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::pinn {

FourierFeaturesImpl::FourierFeaturesImpl(int64_t in_features_, int64_t features_, double sigma_)
    : Module("FourierFeatures"), in_features(in_features_), features(features_), sigma(sigma_) {
  GD_CHECK(in_features > 0 && features > 0,
           fmt::format("FourierFeatures: in_features ({}) and features ({}) must be positive", in_features, features));
  GD_CHECK(sigma > 0, fmt::format("FourierFeatures: sigma must be positive, got {}", sigma));
  frequencies = register_buffer("frequencies", randn({in_features, features}) * sigma);
}

Tensor FourierFeaturesImpl::forward(const Tensor& x) {
  GD_CHECK(x.dim() == 2 && x.size(1) == in_features,
           fmt::format("FourierFeatures: expected input [N, {}], got [{}]", in_features, fmt::join(x.sizes(), ", ")));
  Tensor z = matmul(x, frequencies) * (2 * std::numbers::pi);
  return cat({sin(z), cos(z)}, 1);
}

std::string FourierFeaturesImpl::extra_repr() const {
  return fmt::format("in_features={}, features={}, sigma={}", in_features, features, sigma);
}

}  // namespace gradiens::pinn
