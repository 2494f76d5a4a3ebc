// nn::Cloneable<Derived>: the base that gives a user's module clone(), a deep
// copy, as libtorch's torch::nn::Cloneable (Note [Cloning a module]).
#pragma once

#include <memory>
#include <optional>

#include "nn/module.h"

namespace gradiens::nn {

// A module deriving from Cloneable<Self> (CRTP) can be deep-copied with clone().
// A user's module registers everything in reset() and calls reset() from its
// constructor, as in libtorch.
template <class Derived>
class Cloneable : public Module {
 public:
  using Module::Module;

  // Registers the module's parameters, buffers and submodules afresh.
  virtual void reset() {
    throw Error("reset() is not implemented for " + name() +
                ": a Cloneable module registers its parameters, buffers and submodules in reset()");
  }

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_module(static_cast<const Derived&>(*this), device);
  }
};

}  // namespace gradiens::nn
