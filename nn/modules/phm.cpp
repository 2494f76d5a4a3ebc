// PHMLinear: parameters, initialization (Note [PHM initialization]) and printing;
// the product itself is nn::functional::phm_linear.
#include "nn/modules/phm.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens::nn {

PHMLinearImpl::PHMLinearImpl(const PHMLinearOptions& options_) : Cloneable("PHMLinear"), options(options_) {
  const int64_t in = options.in_features_, out = options.out_features_, n = options.n_;
  GD_CHECK(n >= 1, fmt::format("PHMLinear: n must be positive, got {}", n));
  GD_CHECK(in >= 0 && out >= 0,
           fmt::format("PHMLinear: in_features and out_features must be non-negative, got {} and {}", in, out));
  GD_CHECK(in % n == 0 && out % n == 0,
           fmt::format("PHMLinear: n ({}) must divide in_features ({}) and out_features ({})", n, in, out));
  A = register_parameter("A", empty({n, n, n}));
  S = register_parameter("S", empty({n, out / n, in / n}));
  if (options.bias_) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void PHMLinearImpl::reset_parameters() {
  NoGradGuard no_grad;
  const double n = static_cast<double>(options.n_);
  const double in = static_cast<double>(options.in_features_);
  const double a_bound = std::sqrt(3.0 / n);  // xavier_uniform_ of an n x n matrix
  const double s_bound = in > 0 ? 1.0 / std::sqrt(in) : 0.0;
  A.uniform_(-a_bound, a_bound);
  S.uniform_(-s_bound, s_bound);
  if (bias.defined()) bias.uniform_(-s_bound, s_bound);
}

Tensor PHMLinearImpl::forward(const Tensor& input) { return functional::phm_linear(input, A, S, bias); }

Tensor PHMLinearImpl::weight() const { return functional::phm_weight(A, S); }

std::string PHMLinearImpl::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, n={}, bias={}", options.in_features_, options.out_features_,
                     options.n_, bias.defined() ? "True" : "False");
}

}  // namespace gradiens::nn
