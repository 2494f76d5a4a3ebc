// Printing of the activation modules that carry options.
#include "nn/modules/activation.h"

#include <fmt/format.h>

namespace gradiens::nn {

std::string SoftplusImpl::extra_repr() const { return fmt::format("beta={}, threshold={}", beta, threshold); }

}  // namespace gradiens::nn
