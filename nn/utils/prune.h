// nn::utils::prune: pruning a module tensor through a mask, as
// torch.nn.utils.prune (identity, random_unstructured, l1_unstructured,
// custom_from_mask, remove, is_pruned).
#pragma once

#include <cstdint>
#include <concepts>
#include <memory>
#include <string>

#include "nn/module.h"

namespace gradiens::nn::utils::prune {

// How much to prune: a fraction in [0, 1] of the entries (a floating-point
// value) or a count (an integer), as PyTorch tells the two apart by type.
class PruningAmount {
 public:
  PruningAmount(double fraction);
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  PruningAmount(I count) : PruningAmount(static_cast<int64_t>(count), 0) {}

  bool is_count() const { return is_count_; }
  // The number of entries to prune out of `size` (a fraction is rounded half
  // to even, as Python's round), checked against size as PyTorch does.
  int64_t entries_of(int64_t size) const;

 private:
  PruningAmount(int64_t count, int);
  double fraction_ = 0;
  int64_t count_ = 0;
  bool is_count_ = false;
};

// A way to choose the entries to prune (PyTorch's BasePruningMethod).
// Unstructured methods see only the still-unpruned entries when a tensor is
// pruned again; global ones see the whole tensor.
class PruningMethod {
 public:
  enum class Type { kUnstructured, kGlobal };
  virtual ~PruningMethod() = default;
  virtual Type type() const { return Type::kUnstructured; }
  // A mask of t's shape: default_mask with the entries chosen here set to 0.
  virtual Tensor compute_mask(const Tensor& t, const Tensor& default_mask) const = 0;
};

// Prunes module.<name> with `method`: the parameter moves to <name>_orig, the
// mask is the buffer <name>_mask, and a forward pre-hook sets the module's
// own handle (e.g. lin->weight) to <name>_orig * <name>_mask before every
// call through the module's holder or a container; gradients reach
// <name>_orig, zero at pruned entries. Pruning an already pruned tensor
// combines the masks (PyTorch's PruningContainer). importance_scores (t's
// shape) replace the tensor's values when choosing entries.
//
// <name>_orig is a new tensor: collect the parameters for an optimizer after
// pruning.
Module& apply(Module& module, const std::string& name, std::shared_ptr<PruningMethod> method,
              const Tensor& importance_scores = {});

// Prunes nothing, but sets up the mask (all ones) and the reparametrization.
Module& identity(Module& module, const std::string& name);
// Prunes `amount` entries chosen uniformly at random (gradiens' generator).
Module& random_unstructured(Module& module, const std::string& name, PruningAmount amount);
// Prunes the `amount` entries of smallest absolute value (of importance_scores if given).
Module& l1_unstructured(Module& module, const std::string& name, PruningAmount amount,
                        const Tensor& importance_scores = {});
// Prunes where `mask` is 0.
Module& custom_from_mask(Module& module, const std::string& name, const Tensor& mask);

// Makes the pruning permanent: module.<name> is a plain parameter again (the
// module's own handle) holding <name>_orig * <name>_mask; <name>_orig,
// <name>_mask and the hook are gone.
Module& remove(Module& module, const std::string& name);

// Whether module or any of its submodules has a pruned tensor.
bool is_pruned(Module& module);

// Recomputes module.<name> = <name>_orig * <name>_mask now (as the hook does)
// and returns it; for reading the pruned value outside a forward.
Tensor recompute(Module& module, const std::string& name);

}  // namespace gradiens::nn::utils::prune
