// Fourier-feature input embeddings (Tancik et al., 2020; Wang, Wang and
// Perdikaris, 2021): x [N, d] -> [sin(2 pi x B), cos(2 pi x B)] [N, 2k] with a
// fixed Gaussian matrix B [d, k] of standard deviation sigma, so that an MLP
// after it learns high frequencies. B is a buffer: saved in state_dict, moved
// by to(), never trained.
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace gradiens::pinn {

class FourierFeaturesImpl : public nn::Module {
 public:
  // B drawn from N(0, sigma^2) by the global generator (manual_seed).
  FourierFeaturesImpl(int64_t in_features, int64_t features, double sigma);
  Tensor forward(const Tensor& x);
  std::string extra_repr() const override;

  int64_t in_features, features;
  double sigma;
  Tensor frequencies;  // B [in_features, features]
};
GRADIENS_MODULE(FourierFeatures);

}  // namespace gradiens::pinn
