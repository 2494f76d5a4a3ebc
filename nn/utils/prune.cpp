// Pruning through masks: the pruning methods, how a second pruning combines
// with the first (PyTorch's PruningContainer), and the forward pre-hook that
// rebinds the module's tensor handle to orig * mask.
#include "nn/utils/prune.h"

#include <fmt/format.h>

#include <cmath>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/generator.h"

namespace gradiens::nn::utils::prune {

namespace {

// Python's repr of a float, as PyTorch's messages print the amount (2.0, 1.5, 1e-05).
std::string python_float(double x) {
  std::string s = fmt::format("{}", x);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

std::string range_message(const std::string& amount) {
  return fmt::format("amount={} should either be a float in the range [0, 1] or a non-negative integer", amount);
}

}  // namespace

// ---- amount ----

PruningAmount::PruningAmount(double fraction) : fraction_(fraction) {
  GD_CHECK(fraction >= 0.0 && fraction <= 1.0, range_message(python_float(fraction)));
}

PruningAmount::PruningAmount(int64_t count, int) : count_(count), is_count_(true) {
  GD_CHECK(count >= 0, range_message(std::to_string(count)));
}

int64_t PruningAmount::entries_of(int64_t size) const {
  if (!is_count_) return static_cast<int64_t>(std::nearbyint(fraction_ * static_cast<double>(size)));
  GD_CHECK(count_ <= size, fmt::format("amount={} should be smaller than the number of parameters to prune={}",
                                       count_, size));
  return count_;
}

// ---- the methods ----

namespace {

// mask with the entries at `flat_indices` (of its flattened form) set to 0.
Tensor zero_entries(const Tensor& default_mask, const Tensor& flat_indices) {
  Tensor mask = default_mask.clone(MemoryFormat::Contiguous);
  if (flat_indices.numel() > 0) mask.view({-1}).index_put_({flat_indices}, 0.0);
  return mask;
}

class IdentityMethod : public PruningMethod {
 public:
  Tensor compute_mask(const Tensor&, const Tensor& default_mask) const override { return default_mask; }
};

class RandomUnstructuredMethod : public PruningMethod {
 public:
  explicit RandomUnstructuredMethod(PruningAmount amount) : amount_(amount) {}
  Tensor compute_mask(const Tensor& t, const Tensor& default_mask) const override {
    int64_t n = amount_.entries_of(t.numel());
    if (n == 0) return default_mask.clone(MemoryFormat::Contiguous);
    Tensor probability = rand_like(t);
    return zero_entries(default_mask, std::get<1>(probability.reshape({-1}).topk(n)));
  }

 private:
  PruningAmount amount_;
};

class L1UnstructuredMethod : public PruningMethod {
 public:
  explicit L1UnstructuredMethod(PruningAmount amount) : amount_(amount) {}
  Tensor compute_mask(const Tensor& t, const Tensor& default_mask) const override {
    int64_t n = amount_.entries_of(t.numel());
    if (n == 0) return default_mask.clone(MemoryFormat::Contiguous);
    return zero_entries(default_mask, std::get<1>(t.abs().reshape({-1}).topk(n, -1, /*largest=*/false)));
  }

 private:
  PruningAmount amount_;
};

class CustomFromMaskMethod : public PruningMethod {
 public:
  explicit CustomFromMaskMethod(Tensor mask) : mask_(std::move(mask)) {}
  Type type() const override { return Type::kGlobal; }
  Tensor compute_mask(const Tensor&, const Tensor& default_mask) const override {
    GD_CHECK(default_mask.sizes() == mask_.sizes(),
             fmt::format("custom_from_mask: the mask has shape {} but the tensor has shape {}",
                         shape_to_string(mask_.sizes()), shape_to_string(default_mask.sizes())));
    return default_mask * mask_.to(default_mask.dtype());
  }

 private:
  Tensor mask_;
};

// PyTorch's PruningContainer.compute_mask: the new method prunes among the
// entries the existing mask keeps (unstructured), or over all of them (global).
Tensor combine_masks(const PruningMethod& method, const Tensor& t, const Tensor& mask) {
  Tensor new_mask = mask.to(t.dtype()).clone(MemoryFormat::Contiguous);
  if (method.type() == PruningMethod::Type::kGlobal) return method.compute_mask(t, mask).to(new_mask.dtype());
  Tensor kept = nonzero(mask.reshape({-1}) == 1.0).reshape({-1});
  Tensor partial = method.compute_mask(t.reshape({-1}).index_select(0, kept), mask.reshape({-1}).index_select(0, kept));
  if (kept.numel() > 0) new_mask.view({-1}).index_put_({kept}, partial.to(new_mask.dtype()));
  return new_mask;
}

// ---- the per-tensor state ----

// One pruned tensor of one module: what PyTorch keeps in the forward pre-hook object.
struct PruningState {
  std::string name;
  Tensor target;  // the module's own handle of the tensor, rebound to orig * mask
  std::weak_ptr<TensorImpl> mask;
  std::vector<std::shared_ptr<PruningMethod>> methods;
  HookHandle hook;
};

// The states by the impl of their <name>_mask buffer. The module's hook owns
// its state, so an entry expires with the module.
std::mutex registry_mutex;
std::unordered_map<const TensorImpl*, std::weak_ptr<PruningState>> registry;

std::shared_ptr<PruningState> find_state(const Module& module, const std::string& name) {
  auto buffers = module.named_buffers(false);
  const Tensor* mask = buffers.find(name + "_mask");
  if (!mask || !mask->defined()) return nullptr;
  std::lock_guard lock(registry_mutex);
  auto it = registry.find(mask->impl());
  if (it == registry.end()) return nullptr;
  auto state = it->second.lock();
  if (!state || state->mask.lock().get() != mask->impl() || state->name != name) return nullptr;
  return state;
}

void add_state(const std::shared_ptr<PruningState>& state) {
  std::lock_guard lock(registry_mutex);
  std::erase_if(registry, [](const auto& entry) { return entry.second.expired(); });
  registry[state->mask.lock().get()] = state;
}

void drop_state(const PruningState& state) {
  std::lock_guard lock(registry_mutex);
  std::erase_if(registry, [&](const auto& entry) {
    auto s = entry.second.lock();
    return !s || s.get() == &state;
  });
}

void refresh(Module& module, const PruningState& state) {
  const Tensor& orig = module.parameter(state.name + "_orig");
  const Tensor& mask = module.buffer(state.name + "_mask");
  autograd::rebind(state.target, mask.to(orig.dtype()) * orig);
}

std::string not_pruned_message(const Module& module, const std::string& name) {
  return fmt::format("Parameter '{}' of module {} has to be pruned before pruning can be removed", name,
                     module.repr());
}

}  // namespace

// ---- apply and the named methods ----

Module& apply(Module& module, const std::string& name, std::shared_ptr<PruningMethod> method,
              const Tensor& importance_scores) {
  GD_CHECK(method != nullptr, "prune::apply: the pruning method is empty");
  std::shared_ptr<PruningState> state = find_state(module, name);
  Tensor current;  // PyTorch's getattr(module, name): the parameter, or the pruned value
  if (state) {
    current = state->target;
  } else {
    bool is_parameter = module.named_parameters(false).contains(name);
    if (!is_parameter && module.named_buffers(false).contains(name))
      throw Error(fmt::format("cannot assign 'torch.{}' object to parameter '{}_orig' (torch.nn.Parameter or None "
                              "required)",
                              legacy_tensor_type_name(module.buffer(name).dtype()), name));
    GD_CHECK(is_parameter, fmt::format("'{}' object has no attribute '{}'", module.name(), name));
    for (const std::string& taken : {name + "_orig", name + "_mask"})
      GD_CHECK(!module.named_parameters(false).contains(taken) && !module.named_buffers(false).contains(taken),
               fmt::format("attribute '{}' already exists", taken));
    current = module.parameter(name);
  }
  Tensor scores = importance_scores.defined() ? importance_scores : current;
  GD_CHECK(scores.sizes() == current.sizes(),
           fmt::format("importance_scores should have the same shape as parameter {} of {}", name, module.repr()));

  // The mask comes first: an invalid amount leaves the module untouched.
  Tensor mask;
  {
    NoGradGuard no_grad;
    scores = scores.detach();
    mask = state ? combine_masks(*method, scores, module.buffer(name + "_mask").detach().clone())
                 : method->compute_mask(scores, ones_like(current));
  }

  if (!state) {
    state = std::make_shared<PruningState>();
    state->name = name;
    state->target = current;
    module.unregister_parameter(name);
    module.register_parameter(name + "_orig", current, current.requires_grad());
    module.register_buffer(name + "_mask", mask);
    state->mask = module.buffer(name + "_mask").impl_ptr();
    add_state(state);
  } else {
    NoGradGuard no_grad;
    module.buffer(name + "_mask").copy_(mask);
    state->hook.remove();
  }
  state->methods.push_back(std::move(method));
  refresh(module, *state);
  // The hook owns the state (see the registry).
  state->hook = module.register_forward_pre_hook([state](Module& m, const std::vector<Tensor>&) {
    refresh(m, *state);
    return std::optional<std::vector<Tensor>>();
  });
  return module;
}

Module& identity(Module& module, const std::string& name) {
  return apply(module, name, std::make_shared<IdentityMethod>());
}

Module& random_unstructured(Module& module, const std::string& name, PruningAmount amount) {
  return apply(module, name, std::make_shared<RandomUnstructuredMethod>(amount));
}

Module& l1_unstructured(Module& module, const std::string& name, PruningAmount amount,
                        const Tensor& importance_scores) {
  return apply(module, name, std::make_shared<L1UnstructuredMethod>(amount), importance_scores);
}

Module& custom_from_mask(Module& module, const std::string& name, const Tensor& mask) {
  GD_CHECK(mask.defined(), "custom_from_mask: the mask is undefined");
  return apply(module, name, std::make_shared<CustomFromMaskMethod>(mask.detach()));
}

// ---- remove, is_pruned, recompute ----

Module& remove(Module& module, const std::string& name) {
  std::shared_ptr<PruningState> state = find_state(module, name);
  GD_CHECK(state != nullptr, not_pruned_message(module, name));
  Tensor orig = module.parameter(name + "_orig");
  Tensor value;
  {
    NoGradGuard no_grad;
    value = (module.buffer(name + "_mask").to(orig.dtype()) * orig).detach();
  }
  state->hook.remove();
  drop_state(*state);
  module.unregister_parameter(name + "_orig");
  module.unregister_buffer(name + "_mask");
  // The module's handle becomes the leaf parameter again (registered itself:
  // register_parameter would store a detached copy of the handle).
  Tensor target = state->target;
  autograd::rebind(target, value);
  target.requires_grad_(orig.requires_grad());
  module.register_parameter(name, target, orig.requires_grad()) = target;
  return module;
}

bool is_pruned(Module& module) {
  for (const auto& m : module.modules())
    for (const auto& buffer : m->named_buffers(false)) {
      const std::string& key = buffer.key();
      if (key.size() > 5 && key.ends_with("_mask") && find_state(*m, key.substr(0, key.size() - 5))) return true;
    }
  return false;
}

Tensor recompute(Module& module, const std::string& name) {
  std::shared_ptr<PruningState> state = find_state(module, name);
  GD_CHECK(state != nullptr, fmt::format("Parameter '{}' of module {} is not pruned", name, module.repr()));
  refresh(module, *state);
  return state->target;
}

}  // namespace gradiens::nn::utils::prune
