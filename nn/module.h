// nn::Module: the base of every layer, as libtorch's torch::nn::Module —
// registered parameters, buffers and submodules, named traversal, train/eval,
// to(dtype), apply, zero_grad, state_dict/load_state_dict, forward hooks, and
// PyTorch's printed tree.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/tensor.h"
#include "nn/ordered_dict.h"

namespace gradiens::nn {

template <class Contained>
class ModuleHolder;
namespace detail {
struct ModuleCloner;  // below
}

// Removes the hook it was returned for (PyTorch's RemovableHandle).
class HookHandle {
 public:
  HookHandle() = default;
  explicit HookHandle(std::function<void()> remover) : remover_(std::move(remover)) {}
  void remove() {
    if (remover_) remover_();
    remover_ = nullptr;
  }

 private:
  std::function<void()> remover_;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  // `name` is the type name printed and used in messages; empty takes the C++
  // class name without namespace and "Impl" suffix (LinearImpl -> "Linear").
  explicit Module(std::string name = "");
  virtual ~Module() = default;
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;

  const std::string& name() const;
  // Renames the module's type: PyTorch's lazy layers become their eager class
  // (LazyLinear prints as Linear once its parameters exist), and a
  // parametrized Linear prints as ParametrizedLinear.
  void set_name(std::string name) { name_ = std::move(name); }

  // ---- traversal (pre-order, in registration order, as PyTorch) ----
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  // "" names the module itself; descendants are "encoder", "encoder.fc1", ...
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& name_prefix = "",
                                                                  bool include_self = true);

  // ---- mode, conversion, utilities ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return is_training_; }
  // Converts floating parameters and buffers (and their gradients) in place:
  // the tensors keep their identity, so an optimizer built before still holds them.
  virtual void to(ScalarType dtype);
  virtual void to(Device device);
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const Module&)>& fn) const;
  void apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& name_prefix = "");
  void apply(const std::function<void(const std::string&, const Module&)>& fn, const std::string& name_prefix = "") const;
  // The callbacks that take the module's shared_ptr (the module must be held by one).
  void apply(const std::function<void(const std::shared_ptr<Module>&)>& fn);
  void apply(const std::function<void(const std::string&, const std::shared_ptr<Module>&)>& fn,
             const std::string& name_prefix = "");
  virtual void zero_grad(bool set_to_none = true);

  // A deep copy: new parameters and buffers holding this module's values (on
  // `device` when given), as libtorch's clone(). Modules get it by deriving from
  // nn::Cloneable<Self> (nn/cloneable.h); others throw, naming that remedy.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  // ---- libtorch's printing (c10::str(module) under <torch/torch.h>) ----
  // This module's own line, e.g. "torch::nn::Linear(in_features=3, out_features=4, bias=true)";
  // by default the module's C++ class name.
  virtual void pretty_print(std::ostream& stream) const;
  // The tree: each child on its own line under "(name): ", indented.
  void pretty_print_recursive(std::ostream& stream, const std::string& indentation = "") const;

  // This module as a T, or nullptr when it is not one; for a holder type
  // (as<nn::Linear>()) the module class it holds (LinearImpl*), as libtorch.
  template <class T>
  auto* as() noexcept {
    if constexpr (requires { typename T::ContainedType; }) return as<typename T::ContainedType>();
    else return dynamic_cast<T*>(this);
  }
  template <class T>
  const auto* as() const noexcept {
    if constexpr (requires { typename T::ContainedType; }) return as<typename T::ContainedType>();
    else return dynamic_cast<const T*>(this);
  }

  // ---- state ----
  // Parameters and persistent buffers under their dotted names, in PyTorch's
  // order (each module's own parameters, then its buffers, then its children),
  // sharing storage with the module (detached).
  OrderedDict<std::string, Tensor> state_dict() const;
  // Copies values into the registered tensors (no autograd). strict: missing,
  // unexpected and wrong-shaped keys are one error listing them all, as in
  // PyTorch; non-strict still refuses wrong shapes.
  void load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict = true);
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);
  // state_dict() in a safetensors file (engine/io/safetensors.h), written
  // atomically, under the names PyTorch's state_dict uses ("0.weight",
  // "1.running_mean", ...): `safetensors.torch.load_file` + `load_state_dict`
  // read it in PyTorch, and a PyTorch state_dict saved with
  // `safetensors.torch.save_file` loads here. The metadata records
  // {"format": "pt"}, as Hugging Face's writers do.
  void save(const std::string& path) const;
  // Reads a safetensors file and load_state_dict()s it (values converted to
  // each tensor's dtype, as PyTorch's copy_); strict as load_state_dict.
  void load(const std::string& path, bool strict = true);

  // ---- forward hooks (run when the module is called through its holder or a container) ----
  // A pre-hook sees the inputs and may return replacements; a hook sees inputs
  // and output and may return a replacement output.
  using ForwardPreHook = std::function<std::optional<std::vector<Tensor>>(Module&, const std::vector<Tensor>&)>;
  using ForwardHook = std::function<std::optional<Tensor>(Module&, const std::vector<Tensor>&, const Tensor&)>;
  HookHandle register_forward_pre_hook(ForwardPreHook hook);
  HookHandle register_forward_hook(ForwardHook hook);
  bool has_forward_hooks() const { return !hooks_->pre.empty() || !hooks_->post.empty(); }
  // Runs the hooks around `forward` (which receives the possibly replaced inputs).
  Tensor call_with_hooks(std::vector<Tensor> inputs, const std::function<Tensor(const std::vector<Tensor>&)>& forward);

  // ---- printing ----
  // The text between the parentheses of this module's line, e.g.
  // "in_features=3, out_features=4, bias=True"; PyTorch's extra_repr.
  virtual std::string extra_repr() const { return ""; }
  // The whole tree as PyTorch prints it.
  std::string repr() const;

  // ---- registration ----
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // A non-persistent buffer is left out of state_dict, as in PyTorch.
  Tensor& register_buffer(std::string name, Tensor tensor, bool persistent = true);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    register_module_impl(std::move(name), module);
    return module;
  }
  template <class M>
  std::shared_ptr<M> register_module(std::string name, ModuleHolder<M> holder) {
    return register_module(std::move(name), holder.ptr());
  }
  // Replaces a registered submodule (same name), as libtorch's replace_module.
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_module_impl(name, module);
    return module;
  }
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, ModuleHolder<M> holder) {
    return replace_module(name, holder.ptr());
  }
  // Removes a registered parameter/buffer/submodule (one level) and returns it,
  // as Python's `del module.name` / libtorch's unregister_module.
  Tensor unregister_parameter(const std::string& name);
  Tensor unregister_buffer(const std::string& name);
  std::shared_ptr<Module> unregister_module(const std::string& name);
  // The registered parameter/buffer/submodule named `name` (one level), or an error.
  Tensor& parameter(const std::string& name);
  Tensor& buffer(const std::string& name);

 protected:
  friend struct detail::ModuleCloner;
  // Makes this module, a child just rebuilt inside a clone, a copy of `other`
  // (the original's child), so handles to it held by the parent stay valid:
  // the values of other's parameters and buffers go into this module's
  // same-named tensors, recursively through its children.
  virtual void clone_(Module& other, const std::optional<Device>& device);
  void register_module_impl(std::string name, std::shared_ptr<Module> module);
  void replace_module_impl(const std::string& name, std::shared_ptr<Module> module);

  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  std::vector<std::string> non_persistent_buffers_;
  bool is_training_ = true;

 private:
  // shared_from_this(), or an Error saying the module is not held by a shared_ptr.
  std::shared_ptr<Module> shared_from_this_checked();
  // Converts this module's own parameters (and gradients) and buffers in place.
  void convert_own(const std::function<Tensor(const Tensor&)>& f);
  mutable std::optional<std::string> name_;
  // How clone() rebuilds this module when its class does not override clone():
  // set by the holder that constructed it (Note [Cloning a module]).
  using Cloner = std::shared_ptr<Module> (*)(const Module&, const std::optional<Device>&);
  Cloner cloner_ = nullptr;
  // Shared with the handles (weakly), so removing a hook after the module is gone is harmless.
  struct Hooks {
    std::vector<std::pair<int, ForwardPreHook>> pre;
    std::vector<std::pair<int, ForwardHook>> post;
    int next_id = 0;
  };
  std::shared_ptr<Hooks> hooks_ = std::make_shared<Hooks>();
};

std::ostream& operator<<(std::ostream& os, const Module& module);

namespace detail {

// Note [Cloning a module]
// clone() rebuilds the module's structure and then copies values into it:
// - a module with an `options` member it can be constructed from (every
//   built-in layer) is constructed anew from those options;
// - any other (a user's nn::Cloneable) is copy-constructed, emptied of what it
//   registered, and rebuilt by its reset(), which registers every parameter,
//   buffer and submodule (it must: libtorch's contract, checked below).
// A Cloneable's clone() does this; for other module classes, the holder that
// constructs the module (nn::Linear(3, 4)) installs it as the module's cloner.
// The new parameters and buffers then take clones of the original's values
// (set_data, so the tensors registered by reset() stay the ones its members
// hold), and each rebuilt submodule is made a copy of the original's through
// clone_. Gradients and hooks are not copied, as in libtorch.
struct ModuleCloner {
  template <class M>
  static constexpr bool constructible_from_options = requires(const M& m) {
    requires std::is_constructible_v<M, const std::decay_t<decltype(m.options)>&>;
  };

  template <class Derived>
  static std::shared_ptr<Derived> clone(const Derived& self, const std::optional<Device>& device) {
    NoGradGuard no_grad;
    std::shared_ptr<Derived> copy;
    if constexpr (constructible_from_options<Derived>) {
      copy = std::make_shared<Derived>(self.options);
    } else {
      copy = std::make_shared<Derived>(self);
      copy->parameters_.clear();
      copy->buffers_.clear();
      copy->children_.clear();
      copy->reset();
    }
    copy->is_training_ = self.is_training_;
    copy_values(*copy, self, device);
    return copy;
  }

  // other's parameter and buffer values into `into`'s same-named tensors, and
  // each child of `into` made a copy of other's same-named child.
  static void copy_values(Module& into, const Module& other, const std::optional<Device>& device) {
    GD_CHECK(into.parameters_.size() == other.parameters_.size(),
             "The cloned module does not have the same number of parameters as the original module after calling "
             "reset(). Are you sure you called register_parameter() inside reset() and not the constructor?");
    for (const auto& item : other.parameters_) into.parameters_[item.key()].set_data(copied(item.value(), device));
    GD_CHECK(into.buffers_.size() == other.buffers_.size(),
             "The cloned module does not have the same number of buffers as the original module after calling "
             "reset(). Are you sure you called register_buffer() inside reset() and not the constructor?");
    for (const auto& item : other.buffers_) into.buffers_[item.key()].set_data(copied(item.value(), device));
    GD_CHECK(into.children_.size() == other.children_.size(),
             "The cloned module does not have the same number of child modules as the original module after calling "
             "reset(). Are you sure you called register_module() inside reset() and not the constructor?");
    for (const auto& item : other.children_) into.children_[item.key()]->clone_(*item.value(), device);
    into.is_training_ = other.is_training_;
  }

  template <class M>
  static constexpr bool can_clone = constructible_from_options<M> ||
                                    (std::is_copy_constructible_v<M> && requires(M& m) { m.reset(); });

  // Gives `module` (of exactly class M) the cloner above, unless M cannot be rebuilt.
  template <class M>
  static void install(M& module) {
    if constexpr (can_clone<M>) {
      if (typeid(module) == typeid(M))
        module.cloner_ = [](const Module& self, const std::optional<Device>& device) -> std::shared_ptr<Module> {
          return clone(static_cast<const M&>(self), device);
        };
    }
  }

  static Tensor copied(const Tensor& t, const std::optional<Device>& device) {
    if (!t.defined()) return t;
    return device && t.device() != *device ? t.to(*device, /*non_blocking=*/false, /*copy=*/true) : t.clone();
  }
};

}  // namespace detail

// A deep copy of `self` (Note [Cloning a module]), for a module class to return
// from its clone() override.
template <class Derived>
std::shared_ptr<Derived> clone_module(const Derived& self, const std::optional<Device>& device = std::nullopt) {
  return detail::ModuleCloner::clone(self, device);
}


// ---- ModuleHolder: the libtorch handle (`nn::Linear lin(3, 4); lin->weight`) ----

template <class Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  // Constructs the module from the arguments, as `nn::Linear(3, 4)`.
  template <class... Args>
    requires(std::is_constructible_v<Contained, Args...> &&
             !(sizeof...(Args) == 1 && (std::is_base_of_v<ModuleHolder, std::decay_t<Args>> && ...)))
  explicit ModuleHolder(Args&&... args) : impl_(std::make_shared<Contained>(std::forward<Args>(args)...)) {
    detail::ModuleCloner::install(*impl_);
  }
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {
    if (impl_) detail::ModuleCloner::install(*impl_);
  }
  // An empty holder (`nn::Linear lin{nullptr};`), assigned later.
  ModuleHolder(std::nullptr_t) {}

  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }
  Contained* get() const {
    GD_CHECK(impl_ != nullptr, "Accessing empty ModuleHolder");
    return impl_.get();
  }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  // Indexes a container module (Sequential, ModuleList, ModuleDict).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }

  // Calls forward through the module's hooks.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    Contained& m = *get();
    if constexpr ((std::is_convertible_v<Args, const Tensor&> && ...) &&
                  std::is_same_v<decltype(m.forward(std::forward<Args>(args)...)), Tensor>) {
      if (m.has_forward_hooks()) return call_hooked(m, std::index_sequence_for<Args...>{}, std::forward<Args>(args)...);
    }
    return m.forward(std::forward<Args>(args)...);
  }

 private:
  template <size_t... I, class... Args>
  static Tensor call_hooked(Contained& m, std::index_sequence<I...>, Args&&... args) {
    return m.call_with_hooks({Tensor(args)...}, [&m](const std::vector<Tensor>& xs) { return m.forward(xs[I]...); });
  }
  std::shared_ptr<Contained> impl_;
};

template <class Contained>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Contained>& holder) {
  return os << *holder;
}

}  // namespace gradiens::nn

// Declares the holder `Name` for the module class `NameImpl`, as TORCH_MODULE.
#define GRADIENS_MODULE(Name)                                        \
  class Name : public ::gradiens::nn::ModuleHolder<Name##Impl> {     \
   public:                                                           \
    using ::gradiens::nn::ModuleHolder<Name##Impl>::ModuleHolder;    \
  }
