// The loss modules (nn::CrossEntropyLoss, nn::MSELoss, ...): each holds its
// options and calls its nn::functional form. Class weights and pos_weight are
// registered as buffers, as in PyTorch, so to(dtype) converts them. repr()
// prints as PyTorch ("MSELoss()"), pretty_print() as libtorch
// ("torch::nn::MSELoss()", with the options libtorch prints for some).
#pragma once

#include <ostream>
#include <string>
#include <utility>

#include "nn/functional/ctc_loss.h"
#include "nn/functional/loss.h"
#include "nn/module.h"

namespace gradiens::nn {

namespace detail {
// What every loss module shares: its options, buffers for its weights, and
// libtorch's printing, "torch::nn::Name(" + libtorch_arguments() + ")".
template <class Options>
class LossModuleBase : public Module {
 public:
  LossModuleBase(std::string name, Options options) : Module(std::move(name)), options(std::move(options)) {
    if constexpr (requires { this->options.weight(); })
      if (this->options.weight().defined()) register_buffer("weight", this->options.weight());
    if constexpr (requires { this->options.pos_weight(); })
      if (this->options.pos_weight().defined()) register_buffer("pos_weight", this->options.pos_weight());
  }
  void pretty_print(std::ostream& stream) const { stream << "torch::nn::" << name() << "(" << libtorch_arguments() << ")"; }

  Options options;

 protected:
  virtual std::string libtorch_arguments() const { return ""; }
};

// A loss of (input, target): `Fn` is the functional form taking (input, target, options).
template <class Options, Tensor (*Fn)(const Tensor&, const Tensor&, const Options&)>
class LossModule : public LossModuleBase<Options> {
 public:
  using LossModuleBase<Options>::LossModuleBase;
  Tensor forward(const Tensor& input, const Tensor& target) { return Fn(input, target, this->options); }
};

// A loss of three tensors: (input1, input2, target) or (anchor, positive, negative).
template <class Options, Tensor (*Fn)(const Tensor&, const Tensor&, const Tensor&, const Options&)>
class TernaryLossModule : public LossModuleBase<Options> {
 public:
  using LossModuleBase<Options>::LossModuleBase;
  Tensor forward(const Tensor& a, const Tensor& b, const Tensor& c) { return Fn(a, b, c, this->options); }
};

// A reduction as libtorch's pretty_print writes it: kNone, kMean, kSum, kBatchMean.
std::string libtorch_reduction(Reduction reduction);
// A double as libtorch's pretty_print writes it: 0.5, 1, 1e-06 (nn/modules/activation.cpp).
std::string libtorch_float(double value);
}  // namespace detail

#define GRADIENS_LOSS_MODULE(Name, Options, fn)                                               \
  class Name##Impl : public detail::LossModule<Options, fn> {                                \
   public:                                                                                   \
    explicit Name##Impl(Options options = {}) : LossModule(#Name, std::move(options)) {}    \
  };                                                                                         \
  GRADIENS_MODULE(Name)

GRADIENS_LOSS_MODULE(CrossEntropyLoss, CrossEntropyLossOptions, functional::cross_entropy);
GRADIENS_LOSS_MODULE(NLLLoss, NLLLossOptions, functional::nll_loss);
GRADIENS_LOSS_MODULE(BCELoss, BCELossOptions, functional::binary_cross_entropy);
GRADIENS_LOSS_MODULE(BCEWithLogitsLoss, BCEWithLogitsLossOptions, functional::binary_cross_entropy_with_logits);
GRADIENS_LOSS_MODULE(MSELoss, MSELossOptions, functional::mse_loss);
GRADIENS_LOSS_MODULE(L1Loss, L1LossOptions, functional::l1_loss);
GRADIENS_LOSS_MODULE(HuberLoss, HuberLossOptions, functional::huber_loss);
GRADIENS_LOSS_MODULE(SmoothL1Loss, SmoothL1LossOptions, functional::smooth_l1_loss);
GRADIENS_LOSS_MODULE(KLDivLoss, KLDivLossOptions, functional::kl_div);
GRADIENS_LOSS_MODULE(MultiLabelMarginLoss, MultiLabelMarginLossOptions, functional::multilabel_margin_loss);
GRADIENS_LOSS_MODULE(SoftMarginLoss, SoftMarginLossOptions, functional::soft_margin_loss);
GRADIENS_LOSS_MODULE(MultiLabelSoftMarginLoss, MultiLabelSoftMarginLossOptions,
                     functional::multilabel_soft_margin_loss);
GRADIENS_LOSS_MODULE(PoissonNLLLoss, PoissonNLLLossOptions, functional::poisson_nll_loss);

#undef GRADIENS_LOSS_MODULE

class HingeEmbeddingLossImpl
    : public detail::LossModule<HingeEmbeddingLossOptions, functional::hinge_embedding_loss> {
 public:
  explicit HingeEmbeddingLossImpl(HingeEmbeddingLossOptions options = {})
      : LossModule("HingeEmbeddingLoss", std::move(options)) {}

 protected:
  std::string libtorch_arguments() const override { return "margin=" + detail::libtorch_float(options.margin()); }
};
GRADIENS_MODULE(HingeEmbeddingLoss);

// p other than 1 or 2 is an error at construction.
class MultiMarginLossImpl : public detail::LossModule<MultiMarginLossOptions, functional::multi_margin_loss> {
 public:
  explicit MultiMarginLossImpl(MultiMarginLossOptions options = {});

 protected:
  std::string libtorch_arguments() const override;
};
GRADIENS_MODULE(MultiMarginLoss);

// forward(input1, input2, target).
class CosineEmbeddingLossImpl
    : public detail::TernaryLossModule<CosineEmbeddingLossOptions, functional::cosine_embedding_loss> {
 public:
  explicit CosineEmbeddingLossImpl(CosineEmbeddingLossOptions options = {})
      : TernaryLossModule("CosineEmbeddingLoss", std::move(options)) {}

 protected:
  std::string libtorch_arguments() const override { return "margin=" + detail::libtorch_float(options.margin()); }
};
GRADIENS_MODULE(CosineEmbeddingLoss);

// forward(input1, input2, target).
class MarginRankingLossImpl
    : public detail::TernaryLossModule<MarginRankingLossOptions, functional::margin_ranking_loss> {
 public:
  explicit MarginRankingLossImpl(MarginRankingLossOptions options = {})
      : TernaryLossModule("MarginRankingLoss", std::move(options)) {}
};
GRADIENS_MODULE(MarginRankingLoss);

// forward(anchor, positive, negative).
class TripletMarginLossImpl
    : public detail::TernaryLossModule<TripletMarginLossOptions, functional::triplet_margin_loss> {
 public:
  explicit TripletMarginLossImpl(TripletMarginLossOptions options = {})
      : TernaryLossModule("TripletMarginLoss", std::move(options)) {}

 protected:
  std::string libtorch_arguments() const override;
};
GRADIENS_MODULE(TripletMarginLoss);

// forward(log_probs, targets, input_lengths, target_lengths); see functional::ctc_loss.
class CTCLossImpl : public detail::LossModuleBase<CTCLossOptions> {
 public:
  explicit CTCLossImpl(CTCLossOptions options = {}) : LossModuleBase("CTCLoss", std::move(options)) {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) {
    return functional::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
  }
};
GRADIENS_MODULE(CTCLoss);

// forward(anchor, positive, negative).
class TripletMarginWithDistanceLossImpl
    : public detail::TernaryLossModule<TripletMarginWithDistanceLossOptions,
                                       functional::triplet_margin_with_distance_loss> {
 public:
  explicit TripletMarginWithDistanceLossImpl(TripletMarginWithDistanceLossOptions options = {})
      : TernaryLossModule("TripletMarginWithDistanceLoss", std::move(options)) {}

 protected:
  std::string libtorch_arguments() const override;
};
GRADIENS_MODULE(TripletMarginWithDistanceLoss);

}  // namespace gradiens::nn
