// Printing of the distance modules.
#include "nn/modules/distance.h"

#include <ostream>

#include "nn/modules/activation.h"  // detail::libtorch_float

namespace gradiens::nn {

void CosineSimilarityImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::CosineSimilarity(dim=" << options.dim() << ", eps=" << detail::libtorch_float(options.eps())
         << ")";
}

void PairwiseDistanceImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::PairwiseDistance(p=" << detail::libtorch_float(options.p())
         << ", eps=" << detail::libtorch_float(options.eps()) << ", keepdim=" << (options.keepdim() ? "true" : "false")
         << ")";
}

}  // namespace gradiens::nn
