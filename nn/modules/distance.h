// CosineSimilarity and PairwiseDistance: modules over their nn::functional forms.
#pragma once

#include <iosfwd>

#include "nn/functional/distance.h"
#include "nn/module.h"

namespace gradiens::nn {

class CosineSimilarityImpl : public Module {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {})
      : Module("CosineSimilarity"), options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2) {
    return functional::cosine_similarity(input1, input2, options);
  }
  // torch::nn::CosineSimilarity(dim=1, eps=1e-08); repr() is PyTorch's "CosineSimilarity()".
  void pretty_print(std::ostream& stream) const;
  CosineSimilarityOptions options;
};
GRADIENS_MODULE(CosineSimilarity);

class PairwiseDistanceImpl : public Module {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {})
      : Module("PairwiseDistance"), options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2) {
    return functional::pairwise_distance(input1, input2, options);
  }
  // torch::nn::PairwiseDistance(p=2, eps=1e-06, keepdim=false); repr() is PyTorch's "PairwiseDistance()".
  void pretty_print(std::ostream& stream) const;
  PairwiseDistanceOptions options;
};
GRADIENS_MODULE(PairwiseDistance);

}  // namespace gradiens::nn
