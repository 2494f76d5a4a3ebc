// nn::utils::parametrize: a module tensor computed from other tensors, as
// torch.nn.utils.parametrize (register_parametrization, is_parametrized,
// remove_parametrizations). weight_norm and spectral_norm are built on it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "nn/module.h"

namespace gradiens::nn::utils::parametrize {

// What right_inverse gives: one tensor (kept as "original") or a sequence of
// them (kept as "original0", "original1", ...), as in PyTorch.
using Originals = std::variant<Tensor, std::vector<Tensor>>;

// A parametrization: a module mapping the unconstrained tensors to the tensor
// the host module uses. Override forward (one input) or forward_originals
// (the first parametrization of a tensor whose right_inverse returns several).
class Parametrization : public Module {
 public:
  explicit Parametrization(std::string name = "") : Module(std::move(name)) {}

  virtual Tensor forward(const Tensor& x);
  // Default: the single original through forward(x).
  virtual Tensor forward_originals(const std::vector<Tensor>& originals);
  // The originals that forward maps to `value`. std::nullopt means "not
  // implemented": registration then keeps the tensor itself as the original,
  // and ParametrizationList::right_inverse refuses to assign.
  virtual std::optional<Originals> right_inverse(const Tensor& value);
};

// module.parametrizations.<name>: the chain of parametrizations of one tensor
// (children "0", "1", ...) and the originals it starts from (PyTorch's
// ParametrizationList).
class ParametrizationListImpl : public Module {
 public:
  ParametrizationListImpl() : Module("ParametrizationList") {}

  // The parametrized value: the originals through every parametrization in order.
  Tensor forward();
  // Sets the originals so that forward() gives `value` (PyTorch's
  // `module.weight = value`); every parametrization needs a right_inverse.
  void right_inverse(const Tensor& value);

  size_t size() const { return chain_.size(); }
  const std::shared_ptr<Parametrization>& operator[](size_t index) const;
  // "original" when right_inverse returned one tensor, else original0, original1, ...
  bool is_tensor() const { return is_tensor_; }
  size_t ntensors() const { return ntensors_; }
  Tensor& original();
  Tensor& original(size_t index);
  bool unsafe() const { return unsafe_; }

 private:
  friend struct ParametrizationAccess;
  std::vector<std::shared_ptr<Parametrization>> chain_;
  bool is_tensor_ = true;
  size_t ntensors_ = 1;
  bool unsafe_ = false;
  // The host module's own handle of the tensor (e.g. LinearImpl::weight): each
  // recompute rebinds it to the fresh value (autograd::rebind).
  Tensor target_;
  HookHandle hook_;
};

// Parametrizes module.<tensor_name> (a parameter, a buffer, or a tensor that
// is already parametrized, in which case `parametrization` is appended to its
// chain). The tensor moves to module.parametrizations.<tensor_name>.original
// (or original0, original1, ... when right_inverse returns a sequence) and is
// recomputed, with its graph, by a forward pre-hook before every call of the
// module through its holder or a container; the module's own handle (e.g.
// lin->weight) is valid right after registration. unsafe skips the checks that
// the parametrization keeps the shape and dtype (and the call they need).
//
// The originals are new tensors: collect the parameters for an optimizer after
// registering. Module::forward called directly bypasses the hook: call
// recompute() first (also after load_state_dict or an optimizer step when the
// value is read outside a forward).
Module& register_parametrization(Module& module, const std::string& tensor_name,
                                 std::shared_ptr<Parametrization> parametrization, bool unsafe = false);

// Whether module has any parametrized tensor, or (with a name) that one.
bool is_parametrized(const Module& module, const std::optional<std::string>& tensor_name = std::nullopt);

// The parametrization chain of module.<tensor_name>, or an error.
ParametrizationListImpl& parametrizations_of(const Module& module, const std::string& tensor_name);

// Recomputes module.<tensor_name> from its originals now (under the current
// grad mode) and rebinds the module's handle to it; returns the value.
Tensor recompute(Module& module, const std::string& tensor_name);
// recompute for every parametrized tensor of module.
void recompute(Module& module);

// Undoes register_parametrization: module.<tensor_name> becomes a plain
// parameter (or buffer, as the original was) again, under its old name and
// through the module's own handle, holding the current parametrized value
// (leave_parametrized) or the original (only for a single original).
Module& remove_parametrizations(Module& module, const std::string& tensor_name, bool leave_parametrized = true);

}  // namespace gradiens::nn::utils::parametrize
