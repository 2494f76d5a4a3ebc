// ATen-spelled free functions of the losses and layers that libtorch also has
// as torch::mse_loss, torch::binary_cross_entropy, torch::elu, torch::group_norm,
// torch::pairwise_distance, torch::cosine_similarity and torch::embedding_bag: positional arguments and an
// int64_t reduction (0 none, 1 mean, 2 sum) instead of an options struct. Each
// one calls its nn::functional twin. Also remainder and operator% (x % 3).
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include "engine/tensor.h"

namespace gradiens {

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
// weight (undefined: none) multiplies each element's loss. As ATen's, on input, target and weight squeezed (an
// input [N, 1] with a target [N]); reduction 0 gives the losses in input's shape.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            int64_t reduction = 1);
// scale * x for x > 0, scale * alpha * (exp(input_scale * x) - 1) otherwise.
Tensor elu(const Tensor& input, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0);
// cudnn_enabled is ignored.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5, bool cudnn_enabled = true);
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6, bool keepdim = false);
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// The rows of weight picked by indices, as gradiens::embedding (engine/nn_ops.h), with scale_grad_by_freq;
// sparse = true (sparse gradients) is an error.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse = false);
// mode 0 sum, 1 mean, 2 max. Returns (output, offset2bag, bag_size, max_indices) as ATen's signature; only
// output is computed, the other three are undefined.
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq = false,
                                                         int64_t mode = 0, bool sparse = false,
                                                         const Tensor& per_sample_weights = {},
                                                         bool include_last_offset = false,
                                                         std::optional<int64_t> padding_idx = std::nullopt);

// The remainder of x / divisor with the divisor's sign (Python's %, torch.remainder): x - divisor * floor(x /
// divisor), computed in float64 for integral x (exact below 2^53) and returned in x's dtype. The gradient in x is 1.
Tensor remainder(const Tensor& x, Scalar divisor);
inline Tensor operator%(const Tensor& x, Scalar divisor) { return remainder(x, divisor); }

}  // namespace gradiens
