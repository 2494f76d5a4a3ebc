// cosine_similarity and pairwise_distance as compositions of norm, division
// and sums: their derivatives are those ops'.
#include "nn/functional/distance.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "engine/functions.h"
#include "engine/tensor_data.h"

namespace gradiens::nn::functional {

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options) {
  // Broadcast first, so the norms are taken over the common shape's dim.
  DimVector shape = broadcast_shapes(x1.sizes(), x2.sizes());
  Tensor a = x1.expand(shape), b = x2.expand(shape);
  if (!a.is_floating_point()) a = a.to(kFloat32);
  if (!b.is_floating_point()) b = b.to(kFloat32);
  const int64_t dim = options.dim();
  Tensor a_norm = norm(a, 2, {dim}, true).clamp_min(options.eps());
  Tensor b_norm = norm(b, 2, {dim}, true).clamp_min(options.eps());
  return ((a / a_norm) * (b / b_norm)).sum({dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options) {
  const int64_t innermost = std::max(x1.dim(), x2.dim()) - 1;
  return norm(x1 - x2 + options.eps(), options.p(), {innermost}, options.keepdim());
}

Tensor pdist(const Tensor& input, double p) {
  GD_CHECK(input.dim() == 2, fmt::format("pdist only supports 2D tensors, got: {}D", input.dim()));
  GD_CHECK(input.is_floating_point(), "pdist only supports floating-point dtypes");
  GD_CHECK(p >= 0, "pdist only supports non-negative p values");
  const int64_t n = input.size(0);
  std::vector<int64_t> first, second;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      first.push_back(i);
      second.push_back(j);
    }
  }
  const TensorOptions index_options = TensorOptions().dtype(kInt64);
  const Tensor rows_i = tensor(first, index_options).to(input.device());
  const Tensor rows_j = tensor(second, index_options).to(input.device());
  return norm(input.index_select(0, rows_i) - input.index_select(0, rows_j), p, {1});
}

}  // namespace gradiens::nn::functional
