// Printing of the activation modules that carry options.
#include "nn/modules/activation.h"

#include <fmt/format.h>

namespace gradiens::nn {

namespace detail {

std::string python_float(double value) {
  // fmt's shortest form already switches to exponents where Python does
  // (1e-05, 1e+16); Python also marks an integral value as a float.
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eni") == std::string::npos) text += ".0";
  return text;
}

}  // namespace detail

std::string SoftplusImpl::extra_repr() const { return fmt::format("beta={}, threshold={}", beta, threshold); }

std::string LeakyReLUImpl::extra_repr() const {
  return "negative_slope=" + detail::python_float(options.negative_slope_) + (options.inplace_ ? ", inplace=True" : "");
}

std::string ELUImpl::extra_repr() const {
  return "alpha=" + detail::python_float(options.alpha_) + (options.inplace_ ? ", inplace=True" : "");
}

}  // namespace gradiens::nn
