// nn::Cloneable<Derived>: the base that gives a user's module clone(), a deep
// copy, as libtorch's torch::nn::Cloneable (Note [Cloning a module]).
#pragma once

#include <memory>
#include <optional>
#include <type_traits>

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

 protected:
  // As a child inside a clone: becomes a whole copy of `other` (its fields
  // that are not parameters, buffers or submodules too), as libtorch's.
  void clone_(Module& other, const std::optional<Device>& device) override {
    if constexpr (std::is_copy_assignable_v<Derived>) {
      auto copy = std::dynamic_pointer_cast<Derived>(other.clone(device));
      GD_CHECK(copy != nullptr, "Attempted to clone submodule, but it is of a different type than the submodule it "
                                "was to be cloned into");
      static_cast<Derived&>(*this) = *copy;
    } else {
      Module::clone_(other, device);
    }
  }
};

}  // namespace gradiens::nn
