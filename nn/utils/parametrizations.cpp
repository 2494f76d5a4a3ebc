// weight_norm and spectral_norm: the two parametrizations and their registration.
#include "nn/utils/parametrizations.h"

#include <fmt/format.h>


#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens::nn::utils::parametrizations {

namespace {

// F.normalize(x, dim=0) of a vector: x / max(||x||, eps).
Tensor normalize(const Tensor& x, double eps) { return x / x.norm().clamp_min(eps); }

}  // namespace

// As ATen's norm_except_dim, including its dispatch on dim: -1 is the whole
// tensor, and a middle dim is moved to the front and back.
Tensor norm_except_dim(const Tensor& v, double pow, int64_t dim) {
  if (dim == -1) return v.norm(pow);
  int64_t last = v.dim() - 1;
  if (dim == 0 || dim == last) {
    DimVector output_size(static_cast<size_t>(v.dim()), int64_t{1});
    output_size[dim] = v.size(dim);
    Tensor rows = dim == 0 ? v.reshape({v.size(0), -1}) : v.reshape({-1, v.size(last)});
    return rows.norm(pow, {dim == 0 ? int64_t{1} : int64_t{0}}).view(output_size);
  }
  return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim);
}

// ---- weight norm ----

WeightNormParametrization::WeightNormParametrization(std::optional<int64_t> dim_)
    : Parametrization("_WeightNorm"), dim(dim_.value_or(-1)) {}

Tensor WeightNormParametrization::forward_originals(const std::vector<Tensor>& originals) {
  GD_CHECK(originals.size() == 2, fmt::format("_WeightNorm takes the two tensors g and v, got {}", originals.size()));
  const Tensor& g = originals[0];
  const Tensor& v = originals[1];
  return v * (g / norm_except_dim(v, 2, dim));
}

std::optional<parametrize::Originals> WeightNormParametrization::right_inverse(const Tensor& weight) {
  return parametrize::Originals(std::vector<Tensor>{norm_except_dim(weight, 2, dim), weight});
}

Module& weight_norm(Module& module, const std::string& name, std::optional<int64_t> dim) {
  // unsafe: g has another shape than the weight, as in PyTorch.
  return parametrize::register_parametrization(module, name, std::make_shared<WeightNormParametrization>(dim),
                                               /*unsafe=*/true);
}

// ---- spectral norm ----

SpectralNormParametrization::SpectralNormParametrization(const Tensor& weight, int64_t n_power_iterations_,
                                                         int64_t dim_, double eps_)
    : Parametrization("_SpectralNorm"), dim(dim_), n_power_iterations(n_power_iterations_), eps(eps_) {
  int64_t ndim = weight.dim();
  GD_CHECK(dim < ndim && dim >= -ndim,
           fmt::format("Dimension out of range (expected to be in range of [-{}, {}] but got {})", ndim, ndim - 1,
                       dim));
  GD_CHECK(n_power_iterations > 0,
           fmt::format("Expected n_power_iterations to be positive, but got n_power_iterations={}",
                       n_power_iterations));
  if (dim < 0) dim += ndim;
  if (ndim > 1) {
    NoGradGuard no_grad;
    Tensor weight_matrix = reshape_weight_to_matrix(weight.detach());
    int64_t h = weight_matrix.size(0), w = weight_matrix.size(1);
    u = register_buffer("_u", normalize(empty({h}, weight.options()).normal_(0, 1), eps));
    v = register_buffer("_v", normalize(empty({w}, weight.options()).normal_(0, 1), eps));
    power_method(weight_matrix, 15);
  }
}

Tensor SpectralNormParametrization::reshape_weight_to_matrix(const Tensor& weight) const {
  Tensor w = weight;
  if (dim != 0) {
    std::vector<int64_t> order{dim};
    for (int64_t d = 0; d < weight.dim(); ++d)
      if (d != dim) order.push_back(d);
    w = w.permute(order);
  }
  return w.flatten(1);
}

void SpectralNormParametrization::power_method(const Tensor& weight_matrix, int64_t iterations) {
  NoGradGuard no_grad;
  Tensor w = weight_matrix.detach();
  for (int64_t i = 0; i < iterations; ++i) {
    u.copy_(normalize(w.mv(v), eps));
    v.copy_(normalize(w.t().mv(u), eps));
  }
}

Tensor SpectralNormParametrization::forward(const Tensor& weight) {
  if (weight.dim() == 1) return normalize(weight, eps);
  Tensor weight_matrix = reshape_weight_to_matrix(weight);
  if (is_training()) power_method(weight_matrix, n_power_iterations);
  // Copies, so the in-place power iteration of a later forward leaves this graph's u and v alone.
  Tensor u_now = u.clone(), v_now = v.clone();
  Tensor sigma = u_now.dot(weight_matrix.mv(v_now));
  return weight / sigma;
}

Module& spectral_norm(Module& module, const std::string& name, int64_t n_power_iterations, double eps,
                      std::optional<int64_t> dim) {
  Tensor weight;
  if (parametrize::is_parametrized(module, name)) {
    weight = parametrize::recompute(module, name);
  } else if (module.named_parameters(false).contains(name)) {
    weight = module.parameter(name);
  } else if (module.named_buffers(false).contains(name)) {
    weight = module.buffer(name);
  }
  GD_CHECK(weight.defined(),
           fmt::format("Module '{}' has no parameter or buffer with name '{}'", module.repr(), name));
  int64_t d = dim.value_or(module.name().starts_with("ConvTranspose") ? 1 : 0);
  return parametrize::register_parametrization(
      module, name, std::make_shared<SpectralNormParametrization>(weight.detach(), n_power_iterations, d, eps));
}

}  // namespace gradiens::nn::utils::parametrizations
