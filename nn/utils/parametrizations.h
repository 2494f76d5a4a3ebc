// nn::utils::parametrizations: weight_norm and spectral_norm as
// parametrizations (torch.nn.utils.parametrizations), registered through
// nn::utils::parametrize::register_parametrization.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "nn/utils/parametrize.h"

namespace gradiens::nn::utils::parametrizations {

// The pow-norm of v over every dimension except `dim`, shaped to broadcast
// against v (size 1 except along dim); dim = -1 is the norm of the whole
// tensor (0-dim). torch.norm_except_dim.
Tensor norm_except_dim(const Tensor& v, double pow, int64_t dim);

// weight = g * v / norm_except_dim(v, 2, dim): magnitude g and direction v
// (original0 = g, original1 = v). Printed as PyTorch's _WeightNorm.
class WeightNormParametrization : public parametrize::Parametrization {
 public:
  // std::nullopt (PyTorch's None) normalizes over the whole tensor, as dim = -1.
  explicit WeightNormParametrization(std::optional<int64_t> dim = 0);
  Tensor forward_originals(const std::vector<Tensor>& originals) override;  // {g, v}
  // {g = norm_except_dim(weight, 2, dim), v = weight}
  std::optional<parametrize::Originals> right_inverse(const Tensor& weight) override;

  int64_t dim;
};

// weight / sigma, sigma the largest singular value of the weight seen as a
// matrix (`dim` first, the other dimensions flattened), estimated by power
// iteration on the buffers _u and _v. Printed as PyTorch's _SpectralNorm.
class SpectralNormParametrization : public parametrize::Parametrization {
 public:
  // Draws _u and _v from N(0, 1) (normalized) and runs 15 power iterations on
  // `weight`. A 1-D weight is just divided by its norm (no buffers).
  explicit SpectralNormParametrization(const Tensor& weight, int64_t n_power_iterations = 1, int64_t dim = 0,
                                       double eps = 1e-12);
  // In training mode, first n_power_iterations steps of the power method
  // (in place on _u and _v, without autograd); sigma = u . (W v).
  Tensor forward(const Tensor& weight) override;
  std::optional<parametrize::Originals> right_inverse(const Tensor& value) override { return value; }

  int64_t dim;
  int64_t n_power_iterations;
  double eps;
  Tensor u;  // the buffer "_u" [rows], undefined for a 1-D weight
  Tensor v;  // the buffer "_v" [columns]

 private:
  Tensor reshape_weight_to_matrix(const Tensor& weight) const;
  void power_method(const Tensor& weight_matrix, int64_t iterations);
};

// Reparametrizes module.<name> as magnitude and direction (Salimans & Kingma,
// 2016), as torch.nn.utils.parametrizations.weight_norm: the state_dict holds
// parametrizations.<name>.original0 (g, PyTorch 1.x's weight_g) and
// parametrizations.<name>.original1 (v, weight_v). dim = 0 gives one magnitude
// per output row; std::nullopt or -1 one for the whole tensor.
Module& weight_norm(Module& module, const std::string& name = "weight", std::optional<int64_t> dim = 0);

// Spectral normalization (Miyato et al., 2018), as
// torch.nn.utils.parametrizations.spectral_norm: the state_dict holds
// parametrizations.<name>.original and the power-iteration vectors
// parametrizations.<name>.0._u / ._v. dim defaults to 0, or 1 for a
// ConvTranspose module. In eval mode the stored u and v are used unchanged.
Module& spectral_norm(Module& module, const std::string& name = "weight", int64_t n_power_iterations = 1,
                      double eps = 1e-12, std::optional<int64_t> dim = std::nullopt);

}  // namespace gradiens::nn::utils::parametrizations
