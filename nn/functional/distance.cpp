// cosine_similarity and pairwise_distance as compositions of norm, division
// and sums: their derivatives are those ops'.
#include "nn/functional/distance.h"

#include <algorithm>

#include "engine/functions.h"

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

}  // namespace gradiens::nn::functional
