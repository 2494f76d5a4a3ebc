// Input embeddings of PINNs.
// FourierFeatures (Tancik et al., 2020; Wang, Wang and Perdikaris, 2021):
// x [N, d] -> [sin(2 pi x B), cos(2 pi x B)] [N, 2k] with a fixed Gaussian
// matrix B [d, k] of standard deviation sigma (or one per coordinate), so that an MLP after it learns
// high frequencies. B is a buffer: saved in state_dict, moved by to(), never
// trained.
// PeriodicEmbedding (Dong and Ni, 2021): each periodic coordinate x_j of
// period P_j becomes [cos(2 pi k x_j / P_j), sin(2 pi k x_j / P_j)] for
// k = 1 .. harmonics, the others pass through, so every network after it is
// exactly periodic in x_j: a periodic boundary condition holds by construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/module.h"

namespace gradiens::pinn {

class FourierFeaturesImpl : public nn::Module {
 public:
  // B drawn from N(0, sigma^2) by the global generator (manual_seed).
  FourierFeaturesImpl(int64_t in_features, int64_t features, double sigma);
  // Row i of B from N(0, sigmas[i]^2): a scale per coordinate, for solutions
  // whose frequencies differ by coordinate (in_features = sigmas.size()).
  FourierFeaturesImpl(int64_t features, std::vector<double> sigmas);
  Tensor forward(const Tensor& x);
  std::string extra_repr() const override;

  int64_t in_features, features;
  std::vector<double> sigmas;  // per coordinate
  Tensor frequencies;          // B [in_features, features]
};
GRADIENS_MODULE(FourierFeatures);

class PeriodicEmbeddingImpl : public nn::Module {
 public:
  // periods[j] > 0: coordinate j is periodic with that period; 0: it passes
  // through. At least one coordinate must be periodic.
  explicit PeriodicEmbeddingImpl(std::vector<double> periods, int64_t harmonics = 1);
  Tensor forward(const Tensor& x);
  std::string extra_repr() const override;
  int64_t in_features() const { return static_cast<int64_t>(periods.size()); }
  // Two columns per harmonic of each periodic coordinate, one per other coordinate.
  int64_t out_features() const;

  std::vector<double> periods;
  int64_t harmonics;
};
GRADIENS_MODULE(PeriodicEmbedding);

}  // namespace gradiens::pinn
