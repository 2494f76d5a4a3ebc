// nn::Functional (nn/modules/functional.h).
#include "nn/modules/functional.h"

#include "kernels/error.h"

namespace gradiens::nn {

FunctionalImpl::FunctionalImpl(Function function) : Cloneable("Functional"), function_(std::move(function)) {
  GD_CHECK(static_cast<bool>(function_), "Functional: the function is empty");
}

Tensor FunctionalImpl::forward(const Tensor& input) { return function_(input); }

}  // namespace gradiens::nn
