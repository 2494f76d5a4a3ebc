// The ATen-spelled losses and layers: each builds its nn::functional twin's
// options from the positional arguments.
#include "nn/functional/aten.h"

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "nn/functional/activation.h"
#include "nn/functional/distance.h"
#include "nn/functional/embedding_bag.h"
#include "nn/functional/loss.h"
#include "nn/functional/normalization.h"

namespace gradiens {

namespace {

nn::Reduction reduction_of(int64_t code) {
  switch (code) {
    case 0: return nn::Reduction::None;
    case 1: return nn::Reduction::Mean;
    case 2: return nn::Reduction::Sum;
    default: throw Error(fmt::format("{} is not a valid value for reduction", code));
  }
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return nn::functional::mse_loss(input, target,
                                  nn::functional::MSELossFuncOptions().reduction(reduction_of(reduction)));
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction) {
  // As ATen's kernel, on the squeezed tensors: an input [N, 1] goes with a target [N].
  auto options = nn::functional::BinaryCrossEntropyFuncOptions().reduction(reduction_of(reduction));
  if (weight.defined()) options.weight(weight.squeeze());
  Tensor loss = nn::functional::binary_cross_entropy(input.squeeze(), target.squeeze(), options);
  return reduction == 0 ? loss.reshape(input.sizes()) : loss;
}

Tensor elu(const Tensor& input, double alpha, double scale, double input_scale) {
  if (scale == 1.0 && input_scale == 1.0) return nn::functional::elu(input, alpha);
  // Only x <= 0 reaches expm1, so a large positive x never overflows there.
  return (relu(input) + alpha * expm1(input_scale * clamp_max(input, 0))) * scale;
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  bool /*cudnn_enabled*/) {
  return nn::functional::group_norm(
      input, nn::functional::GroupNormFuncOptions(num_groups).weight(weight).bias(bias).eps(eps));
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  auto options = nn::functional::PairwiseDistanceFuncOptions().p(p).eps(eps).keepdim(keepdim);
  return nn::functional::pairwise_distance(x1, x2, options);
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  GD_CHECK(!sparse, "embedding: sparse gradients are not supported");
  if (!scale_grad_by_freq || !GradMode::is_enabled() || indices.numel() == 0) {
    return embedding(weight, indices, padding_idx);
  }
  Tensor flat = indices.reshape({-1});
  Tensor rows = nn::functional::detail::scale_grad_by_freq(embedding(weight, flat, padding_idx), flat);
  DimVector shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(weight.size(1));
  return rows.reshape(shape);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  return nn::functional::cosine_similarity(x1, x2, nn::functional::CosineSimilarityFuncOptions().dim(dim).eps(eps));
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const Tensor& per_sample_weights,
                                                         bool include_last_offset, std::optional<int64_t> padding_idx) {
  GD_CHECK(mode >= 0 && mode <= 2, fmt::format("embedding_bag: unknown mode {} (0 sum, 1 mean, 2 max)", mode));
  auto options = nn::functional::EmbeddingBagFuncOptions()
                     .offsets(offsets)
                     .scale_grad_by_freq(scale_grad_by_freq)
                     .mode(static_cast<nn::EmbeddingBagMode::Kind>(mode))
                     .sparse(sparse)
                     .per_sample_weights(per_sample_weights)
                     .include_last_offset(include_last_offset)
                     .padding_idx(padding_idx);
  return {nn::functional::embedding_bag(indices, weight, options), Tensor(), Tensor(), Tensor()};
}

Tensor remainder(const Tensor& x, Scalar divisor) {
  if (x.is_floating_point()) {
    Tensor quotient;
    {
      NoGradGuard no_grad;
      quotient = floor(x / divisor);
    }
    return x - quotient * divisor;
  }
  GD_CHECK(!divisor.is_integral() || divisor.to_long() != 0, "ZeroDivisionError");
  const Tensor wide = x.to(kFloat64);
  const Tensor result = wide - floor(wide / divisor.to_double()) * divisor.to_double();
  return result.to(divisor.is_floating_point() ? get_default_dtype() : x.dtype());
}

}  // namespace gradiens
