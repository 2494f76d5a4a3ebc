// The loss modules that check their options or print more than their name.
#include "nn/modules/loss.h"

#include <fmt/format.h>

#include <sstream>

#include "kernels/error.h"

namespace gradiens::nn {

namespace detail {
std::string libtorch_reduction(Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return "kNone";
    case Reduction::Mean: return "kMean";
    case Reduction::Sum: return "kSum";
    case Reduction::BatchMean: return "kBatchMean";
  }
  return "unknown";
}
}  // namespace detail

MultiMarginLossImpl::MultiMarginLossImpl(MultiMarginLossOptions options_)
    : LossModule("MultiMarginLoss", std::move(options_)) {
  GD_CHECK(options.p() == 1 || options.p() == 2, "only p == 1 and p == 2 supported");
  GD_CHECK(!options.weight().defined() || options.weight().dim() == 1,
           fmt::format("MultiMarginLoss: weight must be 1-D, got {}-D", options.weight().dim()));
}

std::string MultiMarginLossImpl::libtorch_arguments() const {
  std::ostringstream weight;
  if (options.weight().defined())
    weight << options.weight();
  else
    weight << "[ Tensor (undefined) ]";
  return fmt::format("p={}, margin={}, weight={}, reduction={}", options.p(), detail::libtorch_float(options.margin()),
                     weight.str(), detail::libtorch_reduction(options.reduction()));
}

std::string TripletMarginLossImpl::libtorch_arguments() const {
  return fmt::format("margin={}, p={}, eps={}, swap={}", detail::libtorch_float(options.margin()),
                     detail::libtorch_float(options.p()), detail::libtorch_float(options.eps()), options.swap());
}

std::string TripletMarginWithDistanceLossImpl::libtorch_arguments() const {
  return fmt::format("margin={}, swap={}", detail::libtorch_float(options.margin()), options.swap());
}

}  // namespace gradiens::nn
