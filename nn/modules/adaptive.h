// AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation
// for GPUs"): a head over the frequent classes and one cluster per tail range,
// each cluster a low-rank projection, as torch.nn.AdaptiveLogSoftmaxWithLoss.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "nn/cloneable.h"
#include "nn/functional/options.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"

namespace gradiens::nn {

struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  GRADIENS_ARG(int64_t, in_features);
  GRADIENS_ARG(int64_t, n_classes);
  // Increasing class indices in [1, n_classes - 1] where the clusters start.
  GRADIENS_ARG(std::vector<int64_t>, cutoffs);
  // Cluster i projects in_features down to in_features / div_value^(i + 1).
  GRADIENS_ARG(double, div_value) = 4.0;
  GRADIENS_ARG(bool, head_bias) = false;
};

// forward's result: each target's log-probability and the mean negative log-likelihood.
struct ASMoutput {
  ASMoutput(Tensor output, double loss) : output(std::move(output)), loss(loss) {}
  Tensor output;
  double loss;
};

class AdaptiveLogSoftmaxWithLossImpl : public Cloneable<AdaptiveLogSoftmaxWithLossImpl> {
 public:
  AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options);

  // input [B, in_features] with target [B], or unbatched [in_features] with a 0-d target.
  ASMoutput forward(const Tensor& input, const Tensor& target);
  // The log-probabilities of every class, [B, n_classes].
  Tensor log_prob(const Tensor& input);
  // The most probable class of each row, [B].
  Tensor predict(const Tensor& input);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  AdaptiveLogSoftmaxWithLossOptions options;
  std::vector<int64_t> cutoffs;  // options.cutoffs and n_classes
  int64_t shortlist_size = 0, n_clusters = 0, head_size = 0;
  Linear head{nullptr};
  ModuleList tail{nullptr};

 private:
  Tensor full_log_prob(const Tensor& input, const Tensor& head_output);
};
GRADIENS_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace gradiens::nn
