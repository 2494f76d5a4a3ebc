// nn::functional distances: cosine_similarity and pairwise_distance, with
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

}  // namespace functional
}  // namespace gradiens::nn
