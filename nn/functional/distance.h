// nn::functional distances: cosine_similarity, pairwise_distance and pdist, with
// libtorch's options structs (CosineSimilarityOptions, PairwiseDistanceOptions).
#pragma once

#include <cstdint>

#include "engine/tensor.h"
#include "nn/functional/options.h"

namespace gradiens::nn {

struct CosineSimilarityOptions {
  GRADIENS_ARG(int64_t, dim) = 1;
  GRADIENS_ARG(double, eps) = 1e-8;
};

struct PairwiseDistanceOptions {
  GRADIENS_ARG(double, p) = 2.0;
  GRADIENS_ARG(double, eps) = 1e-6;
  GRADIENS_ARG(bool, keepdim) = false;
};

namespace functional {

using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;

// sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along dim, the inputs
// broadcast against each other (PyTorch's formula since 1.12: each input is
// normalized first, so |result| <= 1 and nothing overflows).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});
// The p-norm of x1 - x2 + eps along the last dim of the broadcast shape.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options = {});
// The p-norm distance between every two rows i < j of the 2-D input [N, M], in the order of the upper triangle
// (N (N - 1) / 2 values), as torch.nn.functional.pdist.
Tensor pdist(const Tensor& input, double p = 2.0);

}  // namespace functional
}  // namespace gradiens::nn
