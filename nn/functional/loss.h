// The losses of torch.nn.functional (cross_entropy, nll_loss, the two binary
// cross entropies, mse, l1, huber, smooth_l1, kl_div, the margin and embedding
// losses, poisson_nll) and their options structs, named as in libtorch
// (CrossEntropyLossOptions / CrossEntropyFuncOptions, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "engine/tensor.h"
#include "nn/functional/options.h"

namespace gradiens::nn {

// How a loss reduces its elementwise values: kNone keeps them, kMean averages
// (the weighted rule for nll_loss and cross_entropy), kSum adds; kBatchMean
// (kl_div only) divides the sum by the batch size.
enum class Reduction { None, Mean, Sum, BatchMean };

// "none", "mean", "sum", "batchmean".
std::string_view reduction_name(Reduction reduction);
// The Reduction a PyTorch name stands for; any other name is an error
// ("avg is not a valid value for reduction").
Reduction reduction_from_name(std::string_view name);

namespace detail {
// The reduction option every loss options struct shares; its setters return the
// derived struct so that calls chain in any order, as libtorch's TORCH_ARG does.
template <class Derived>
class ReductionOption {
 public:
  using reduction_t = Reduction;  // libtorch's name for the type of the option
  Derived& reduction(Reduction reduction) {
    reduction_ = reduction;
    return static_cast<Derived&>(*this);
  }
  // PyTorch's names, for code and configs that spell the reduction as a string.
  Derived& reduction(std::string_view name) { return reduction(reduction_from_name(name)); }
  Reduction reduction() const { return reduction_; }

 protected:
  ReductionOption() = default;
  explicit ReductionOption(Reduction reduction) : reduction_(reduction) {}

 private:
  Reduction reduction_ = Reduction::Mean;
};
}  // namespace detail

// `weight`: a 1-D tensor of C class weights (undefined: all 1). Targets equal to
// `ignore_index` add nothing to the loss nor to the mean's denominator.
struct NLLLossOptions : detail::ReductionOption<NLLLossOptions> {
  NLLLossOptions& weight(const Tensor& weight) {
    weight_ = weight;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  NLLLossOptions& ignore_index(int64_t ignore_index) {
    ignore_index_ = ignore_index;
    return *this;
  }
  int64_t ignore_index() const { return ignore_index_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
};

// NLLLossOptions plus label_smoothing in [0, 1]: the target distribution mixes
// the one-hot target with the uniform one, (1 - s) * onehot + s / C.
struct CrossEntropyLossOptions : detail::ReductionOption<CrossEntropyLossOptions> {
  CrossEntropyLossOptions& weight(const Tensor& weight) {
    weight_ = weight;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  CrossEntropyLossOptions& ignore_index(int64_t ignore_index) {
    ignore_index_ = ignore_index;
    return *this;
  }
  int64_t ignore_index() const { return ignore_index_; }
  CrossEntropyLossOptions& label_smoothing(double label_smoothing) {
    label_smoothing_ = label_smoothing;
    return *this;
  }
  double label_smoothing() const { return label_smoothing_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
  double label_smoothing_ = 0.0;
};

// `weight` rescales each element's loss (broadcast against the input).
struct BCELossOptions : detail::ReductionOption<BCELossOptions> {
  BCELossOptions& weight(const Tensor& weight) {
    weight_ = weight;
    return *this;
  }
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

// `pos_weight` multiplies the loss of the positive term (broadcast against the
// target, typically one value per class); `weight` as in BCELossOptions.
struct BCEWithLogitsLossOptions : detail::ReductionOption<BCEWithLogitsLossOptions> {
  BCEWithLogitsLossOptions& weight(const Tensor& weight) {
    weight_ = weight;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  BCEWithLogitsLossOptions& pos_weight(const Tensor& pos_weight) {
    pos_weight_ = pos_weight;
    return *this;
  }
  const Tensor& pos_weight() const { return pos_weight_; }

 private:
  Tensor weight_;
  Tensor pos_weight_;
};

// The options that hold only a reduction convert from it, as in libtorch, so
// F::mse_loss(input, target, gd::kSum) works.
struct MSELossOptions : detail::ReductionOption<MSELossOptions> {
  MSELossOptions() = default;
  MSELossOptions(Reduction reduction) : ReductionOption(reduction) {}  // NOLINT: implicit as libtorch's
};

struct L1LossOptions : detail::ReductionOption<L1LossOptions> {
  L1LossOptions() = default;
  L1LossOptions(Reduction reduction) : ReductionOption(reduction) {}  // NOLINT: implicit as libtorch's
};

// Quadratic for |x - y| < delta, linear (slope delta) beyond; delta > 0.
struct HuberLossOptions : detail::ReductionOption<HuberLossOptions> {
  HuberLossOptions() = default;
  HuberLossOptions(Reduction reduction) : ReductionOption(reduction) {}  // NOLINT: implicit as libtorch's
  HuberLossOptions& delta(double delta) {
    delta_ = delta;
    return *this;
  }
  double delta() const { return delta_; }

 private:
  double delta_ = 1.0;
};

// Huber divided by beta: quadratic (0.5 d^2 / beta) for |d| < beta, |d| - beta/2
// beyond; beta = 0 is l1_loss, a negative beta an error.
struct SmoothL1LossOptions : detail::ReductionOption<SmoothL1LossOptions> {
  SmoothL1LossOptions() = default;
  SmoothL1LossOptions(Reduction reduction) : ReductionOption(reduction) {}  // NOLINT: implicit as libtorch's
  SmoothL1LossOptions& beta(double beta) {
    beta_ = beta;
    return *this;
  }
  double beta() const { return beta_; }

 private:
  double beta_ = 1.0;
};

// `log_target`: the target holds log-probabilities. kBatchMean divides the sum
// by the input's first size (the KL divergence's definition); kMean, the
// default as in PyTorch, divides by every element.
struct KLDivLossOptions : detail::ReductionOption<KLDivLossOptions> {
  KLDivLossOptions() = default;
  KLDivLossOptions(Reduction reduction) : ReductionOption(reduction) {}  // NOLINT: implicit as libtorch's
  KLDivLossOptions& log_target(bool log_target) {
    log_target_ = log_target;
    return *this;
  }
  bool log_target() const { return log_target_; }

 private:
  bool log_target_ = false;
};

// Per element: x where y == 1, max(0, margin - x) where y == -1 (y broadcast against x).
struct HingeEmbeddingLossOptions : detail::ReductionOption<HingeEmbeddingLossOptions> {
  HingeEmbeddingLossOptions() = default;  // not an aggregate: the base's constructor is protected
  GRADIENS_ARG(double, margin) = 1.0;
};

// Per sample of an (N, C) or (C) input and class-index target: the sum over
// classes i != y of max(0, margin - x[y] + x[i])^p (times weight[y]) over C.
struct MultiMarginLossOptions : detail::ReductionOption<MultiMarginLossOptions> {
  MultiMarginLossOptions() = default;  // not an aggregate: the base's constructor is protected
  GRADIENS_ARG(int64_t, p) = 1;
  GRADIENS_ARG(double, margin) = 1.0;
  GRADIENS_ARG(Tensor, weight);
};

// Per pair of rows: 1 - cos where y == 1, max(0, cos - margin) where y == -1.
struct CosineEmbeddingLossOptions : detail::ReductionOption<CosineEmbeddingLossOptions> {
  CosineEmbeddingLossOptions() = default;  // not an aggregate: the base's constructor is protected
  GRADIENS_ARG(double, margin) = 0.0;
};

// Per sample: the target lists class indices up to its first -1; the sum over
// listed j and unlisted i of max(0, 1 - (x[j] - x[i])), over C.
struct MultiLabelMarginLossOptions : detail::ReductionOption<MultiLabelMarginLossOptions> {
  MultiLabelMarginLossOptions() = default;
  MultiLabelMarginLossOptions(Reduction reduction) : ReductionOption(reduction) {}  // NOLINT: implicit as libtorch's
};

// log(1 + exp(-y x)) per element.
struct SoftMarginLossOptions : detail::ReductionOption<SoftMarginLossOptions> {
  SoftMarginLossOptions() = default;
  SoftMarginLossOptions(Reduction reduction) : ReductionOption(reduction) {}  // NOLINT: implicit as libtorch's
};

// The mean over classes of the binary cross entropy of logits, per sample;
// `weight` rescales each class.
struct MultiLabelSoftMarginLossOptions : detail::ReductionOption<MultiLabelSoftMarginLossOptions> {
  MultiLabelSoftMarginLossOptions() = default;  // not an aggregate: the base's constructor is protected
  GRADIENS_ARG(Tensor, weight);
};

// max(0, margin + d(a, p) - d(a, n)) with d the p-norm pairwise distance;
// swap: d(a, n) becomes min(d(a, n), d(p, n)).
struct TripletMarginLossOptions : detail::ReductionOption<TripletMarginLossOptions> {
  TripletMarginLossOptions() = default;  // not an aggregate: the base's constructor is protected
  GRADIENS_ARG(double, margin) = 1.0;
  GRADIENS_ARG(double, p) = 2.0;
  GRADIENS_ARG(double, eps) = 1e-6;
  GRADIENS_ARG(bool, swap) = false;
};

// TripletMarginLoss with any distance function (default: pairwise_distance).
struct TripletMarginWithDistanceLossOptions : detail::ReductionOption<TripletMarginWithDistanceLossOptions> {
  TripletMarginWithDistanceLossOptions() = default;  // not an aggregate: the base's constructor is protected
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  GRADIENS_ARG(std::optional<distance_function_t>, distance_function) = std::nullopt;
  GRADIENS_ARG(double, margin) = 1.0;
  GRADIENS_ARG(bool, swap) = false;
};

// max(0, -y (x1 - x2) + margin) per element.
struct MarginRankingLossOptions : detail::ReductionOption<MarginRankingLossOptions> {
  MarginRankingLossOptions() = default;  // not an aggregate: the base's constructor is protected
  GRADIENS_ARG(double, margin) = 0.0;
};

// log_input: exp(x) - y x; otherwise x - y log(x + eps). full adds Stirling's
// approximation of log(y!) where y > 1.
struct PoissonNLLLossOptions : detail::ReductionOption<PoissonNLLLossOptions> {
  PoissonNLLLossOptions() = default;  // not an aggregate: the base's constructor is protected
  GRADIENS_ARG(bool, log_input) = true;
  GRADIENS_ARG(bool, full) = false;
  GRADIENS_ARG(double, eps) = 1e-8;
};

namespace functional {

using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;

// Shapes (C = classes): input (N, C, d1, ...), (N, C) or unbatched (C).
// Class-index target: integer (int64 or uint8) of shape (N, d1, ...), (N) or ();
// probability target (cross_entropy only): floating, shaped like input.
// Every loss is a composition of differentiable ops (log_softmax, gather,
// where, ...) or a fused op whose backward is itself differentiable, so
// derivatives of every order exist, also for the weights.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});
// input holds log-probabilities (e.g. from log_softmax).
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});
// input holds probabilities in [0, 1]; each log is clamped at -100 as in PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});
// input holds logits; computed as (1 - y) x - (1 + (p - 1) y) log_sigmoid(x), finite for any finite x.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options = {});
// The regression losses broadcast input against target.
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {});
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {});
// The same with beta given apart from the options (libtorch's form); it replaces options.beta().
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options, double beta);
// input holds log-probabilities; target probabilities (or log-probabilities with log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});
// The margin and embedding losses, as PyTorch computes them (compositions
// throughout; the derivative at a hinge's kink is clamp_min's).
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& options = {});
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options = {});
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options = {});
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options = {});
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options = {});
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options = {});
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options = {});
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options = {});
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options = {});
// input holds log-rates (log_input) or rates; target counts.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options = {});

// Class indices (int64) as one-hot int64 vectors along a new last dim of
// num_classes entries (-1: the largest index + 1). Not differentiable.
Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1);

}  // namespace functional
}  // namespace gradiens::nn

namespace gradiens {
// libtorch's torch::kNone, torch::kMean, ... for the reduction options.
inline constexpr nn::Reduction kNone = nn::Reduction::None;
inline constexpr nn::Reduction kMean = nn::Reduction::Mean;
inline constexpr nn::Reduction kSum = nn::Reduction::Sum;
inline constexpr nn::Reduction kBatchMean = nn::Reduction::BatchMean;
}  // namespace gradiens
