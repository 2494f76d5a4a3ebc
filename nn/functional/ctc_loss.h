// The connectionist temporal classification loss (torch.nn.functional.ctc_loss):
// the negative log-likelihood of each target sequence summed over all its
// alignments with the input, by the forward (alpha) recursion in log space.
#pragma once

#include <cstdint>

#include "engine/tensor.h"
#include "nn/functional/loss.h"

namespace gradiens::nn {

struct CTCLossOptions : detail::ReductionOption<CTCLossOptions> {
  CTCLossOptions() = default;  // not an aggregate: the base's constructor is protected
  // The class index of the blank label.
  GRADIENS_ARG(int64_t, blank) = 0;
  // An infinite loss (no alignment fits in the input) and its gradient become 0.
  GRADIENS_ARG(bool, zero_infinity) = false;
};

namespace functional {

using CTCLossFuncOptions = CTCLossOptions;

// log_probs [T, N, C] (log_softmax over C) or unbatched [T, C]; targets [N, S] padded or 1-D, the targets
// concatenated; input_lengths and target_lengths [N] (integral). kMean divides each loss by its target length
// (at least 1) and averages over the batch. A composite of logsumexp, gather and where over the T steps, so
// differentiable in log_probs to any order.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options = {});

}  // namespace functional
}  // namespace gradiens::nn
