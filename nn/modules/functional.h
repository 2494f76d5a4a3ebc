// nn::Functional: a function Tensor -> Tensor as a module, so that Sequential can
// hold relu or a lambda, as libtorch's torch::nn::Functional.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "nn/cloneable.h"
#include "nn/module.h"

namespace gradiens::nn {

class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  using Function = std::function<Tensor(Tensor)>;
  // Functional(relu), Functional([](Tensor x) { return x * 2; }).
  explicit FunctionalImpl(Function function);
  // Functional(leaky_relu, 0.2): the extra arguments are bound after the input,
  // as libtorch's std::bind.
  template <class F, class... Args>
    requires(sizeof...(Args) > 0)
  explicit FunctionalImpl(F original, Args&&... args)
      : FunctionalImpl(Function([original, ... bound = std::forward<Args>(args)](Tensor input) {
          return original(std::move(input), bound...);
        })) {}

  Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::Functional()"; }

 private:
  Function function_;
};
GRADIENS_MODULE(Functional);

}  // namespace gradiens::nn
