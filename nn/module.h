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
#include <vector>

#include "engine/tensor.h"
#include "nn/ordered_dict.h"

namespace gradiens::nn {

template <class Contained>
class ModuleHolder;

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
  void apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& name_prefix = "");
  virtual void zero_grad(bool set_to_none = true);

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
  // Removes a registered parameter/buffer/submodule (one level) and returns it,
  // as Python's `del module.name` / libtorch's unregister_module.
  Tensor unregister_parameter(const std::string& name);
  Tensor unregister_buffer(const std::string& name);
  std::shared_ptr<Module> unregister_module(const std::string& name);
  // The registered parameter/buffer/submodule named `name` (one level), or an error.
  Tensor& parameter(const std::string& name);
  Tensor& buffer(const std::string& name);

 protected:
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
  // Shared with the handles (weakly), so removing a hook after the module is gone is harmless.
  struct Hooks {
    std::vector<std::pair<int, ForwardPreHook>> pre;
    std::vector<std::pair<int, ForwardHook>> post;
    int next_id = 0;
  };
  std::shared_ptr<Hooks> hooks_ = std::make_shared<Hooks>();
};

std::ostream& operator<<(std::ostream& os, const Module& module);

// ---- ModuleHolder: the libtorch handle (`nn::Linear lin(3, 4); lin->weight`) ----

template <class Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  // Constructs the module from the arguments, as `nn::Linear(3, 4)`.
  template <class... Args>
    requires(std::is_constructible_v<Contained, Args...> &&
             !(sizeof...(Args) == 1 && (std::is_base_of_v<ModuleHolder, std::decay_t<Args>> && ...)))
  explicit ModuleHolder(Args&&... args) : impl_(std::make_shared<Contained>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}
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
