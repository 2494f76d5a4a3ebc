// nn::Module: registration, traversal, conversion, state_dict (and its
// safetensors files) and hooks.
#include "nn/module.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <string_view>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/io/safetensors.h"
#include "engine/type_name.h"
#include "engine/warning.h"
#include "nn/cloneable.h"

namespace gradiens::nn {

namespace {

// The module's C++ class, e.g. "gradiens::nn::LinearImpl".
std::string class_name_of(const Module& m) { return demangled_type_name(typeid(m)); }

// The module's name when its constructor gave none: the C++ class name as
// libtorch's (a user's "app::Net" stays so), without gradiens' own namespaces
// ("gradiens::nn::LinearImpl" -> "Linear", as PyTorch prints it), anonymous
// namespaces, the enclosing function of a local class, or a trailing "Impl".
std::string type_name_of(const Module& m) {
  std::string name = class_name_of(m);
  if (auto pos = name.rfind("()::"); pos != std::string::npos) name = name.substr(pos + 4);
  for (std::string_view drop : {"(anonymous namespace)::", "gradiens::nn::", "gradiens::"}) {
    for (auto pos = name.find(drop); pos != std::string::npos; pos = name.find(drop)) name.erase(pos, drop.size());
  }
  if (name.size() > 4 && name.ends_with("Impl")) name.resize(name.size() - 4);
  return name;
}

void check_name(const std::string& name, const char* what) {
  GD_CHECK(!name.empty(), fmt::format("{} name must not be empty", what));
  GD_CHECK(name.find('.') == std::string::npos, fmt::format("{} name must not contain a dot (got '{}')", what, name));
}

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace

Module::Module(std::string name) {
  if (!name.empty()) name_ = std::move(name);
}

const std::string& Module::name() const {
  if (!name_) name_ = type_name_of(*this);
  return *name_;
}

// ---- registration ----

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name(name, "Parameter");
  GD_CHECK(!buffers_.contains(name) && !children_.contains(name),
           fmt::format("attribute '{}' already exists", name));
  if (tensor.defined()) {
    // A parameter is a leaf of its own, as torch.nn.Parameter(tensor) detaches.
    tensor = tensor.detach();
    tensor.requires_grad_(requires_grad);
  } else if (requires_grad) {
    warn("An undefined tensor cannot require grad. Ignoring the `requires_grad=true` function parameter.");
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_name(name, "Buffer");
  GD_CHECK(!parameters_.contains(name) && !children_.contains(name),
           fmt::format("attribute '{}' already exists", name));
  if (!persistent) non_persistent_buffers_.push_back(name);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::register_module_impl(std::string name, std::shared_ptr<Module> module) {
  check_name(name, "Submodule");
  GD_CHECK(module != nullptr, fmt::format("Submodule '{}' is an empty module", name));
  GD_CHECK(!parameters_.contains(name) && !buffers_.contains(name),
           fmt::format("attribute '{}' already exists", name));
  children_.insert(std::move(name), std::move(module));
}

void Module::replace_module_impl(const std::string& name, std::shared_ptr<Module> module) {
  GD_CHECK(children_.contains(name), fmt::format("Submodule '{}' is not defined", name));
  children_[name] = std::move(module);
}

Tensor Module::unregister_parameter(const std::string& name) { return parameters_.erase(name); }
Tensor Module::unregister_buffer(const std::string& name) {
  std::erase(non_persistent_buffers_, name);
  return buffers_.erase(name);
}
std::shared_ptr<Module> Module::unregister_module(const std::string& name) {
  GD_CHECK(children_.contains(name), fmt::format("No Module with name `{}` is registered", name));
  return children_.erase(name);
}

Tensor& Module::parameter(const std::string& name) { return parameters_[name]; }
Tensor& Module::buffer(const std::string& name) { return buffers_[name]; }

// ---- traversal ----

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }
OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& name_prefix,
                                                                        bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  // A module reachable along two paths is listed once, under its first name (PyTorch's memo).
  std::vector<const Module*> seen;
  std::function<void(const std::string&, const std::shared_ptr<Module>&)> visit =
      [&](const std::string& prefix, const std::shared_ptr<Module>& m) {
        if (std::find(seen.begin(), seen.end(), m.get()) != seen.end()) return;
        seen.push_back(m.get());
        out.insert(prefix, m);
        for (const auto& child : m->children_) visit(join_name(prefix, child.key()), child.value());
      };
  if (include_self) {
    visit(name_prefix, shared_from_this_checked());
  } else {
    seen.push_back(this);
    for (const auto& child : children_) visit(join_name(name_prefix, child.key()), child.value());
  }
  return out;
}

std::shared_ptr<Module> Module::shared_from_this_checked() {
  try {
    return shared_from_this();
  } catch (const std::bad_weak_ptr&) {
    throw Error(
        "It looks like you attempted to retrieve your top-level module as a shared_ptr, but it is not stored in a "
        "shared_ptr. Use std::make_shared instead of creating your module on the stack, or alternatively do not try "
        "to access your top-level module at all by passing /*include_self=*/false to modules() or named_modules()");
  }
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

namespace {

// Each module's own tensors of one kind under dotted names, pre-order; a tensor
// shared by two modules is listed once, as PyTorch's named_parameters does.
OrderedDict<std::string, Tensor> collect(const Module& root, bool recurse,
                                         const std::function<const OrderedDict<std::string, Tensor>&(const Module&)>& own,
                                         const std::function<bool(const Module&, const std::string&)>& keep = {}) {
  OrderedDict<std::string, Tensor> out;
  std::vector<const TensorImpl*> seen;
  std::vector<const Module*> visited;
  std::function<void(const std::string&, const Module&)> visit = [&](const std::string& prefix, const Module& m) {
    if (std::find(visited.begin(), visited.end(), &m) != visited.end()) return;
    visited.push_back(&m);
    for (const auto& item : own(m)) {
      if (!item.value().defined()) continue;
      if (keep && !keep(m, item.key())) continue;
      if (std::find(seen.begin(), seen.end(), item.value().impl()) != seen.end()) continue;
      seen.push_back(item.value().impl());
      out.insert(join_name(prefix, item.key()), item.value());
    }
    if (!recurse) return;
    for (const auto& child : m.named_children()) visit(join_name(prefix, child.key()), *child.value());
  };
  visit("", root);
  return out;
}

}  // namespace

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  return collect(*this, recurse, [](const Module& m) -> const OrderedDict<std::string, Tensor>& { return m.parameters_; });
}
std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  return collect(*this, recurse, [](const Module& m) -> const OrderedDict<std::string, Tensor>& { return m.buffers_; });
}
std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

// ---- mode and conversion ----

void Module::train(bool on) {
  is_training_ = on;
  for (const auto& child : children_) child.value()->train(on);
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& m : modules(true)) fn(*m);
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& name_prefix) {
  for (auto& item : named_modules(name_prefix, true)) fn(item.key(), *item.value());
}

void Module::apply(const std::function<void(const Module&)>& fn) const {
  const_cast<Module*>(this)->apply([&fn](Module& m) { fn(m); });
}

void Module::apply(const std::function<void(const std::string&, const Module&)>& fn,
                   const std::string& name_prefix) const {
  const_cast<Module*>(this)->apply([&fn](const std::string& name, Module& m) { fn(name, m); }, name_prefix);
}

void Module::apply(const std::function<void(const std::shared_ptr<Module>&)>& fn) {
  for (const auto& m : modules(true)) fn(m);
}

void Module::apply(const std::function<void(const std::string&, const std::shared_ptr<Module>&)>& fn,
                   const std::string& name_prefix) {
  for (auto& item : named_modules(name_prefix, true)) fn(item.key(), item.value());
}

void Module::convert_own(const std::function<Tensor(const Tensor&)>& f) {
  NoGradGuard no_grad;
  for (auto& item : parameters_) {
    Tensor& p = item.value();
    if (!p.defined()) continue;
    Tensor old_grad = p.grad();
    p.set_data(f(p));
    if (old_grad.defined()) p.set_grad(f(old_grad));
  }
  for (auto& item : buffers_)
    if (item.value().defined()) item.value().set_data(f(item.value()));
}

// Each module converts its own tensors and passes the call on to its children
// through the virtual to(), so a module with state of its own to convert (a
// lazy layer remembering the dtype for parameters it has not created yet)
// sees the call wherever it sits in the tree.
void Module::to(ScalarType dtype) {
  GD_CHECK(is_floating_point(dtype),
           fmt::format("nn.Module.to only accepts floating point dtypes, but got desired dtype={}", dtype_name(dtype)));
  convert_own([dtype](const Tensor& t) { return t.is_floating_point() ? t.to(dtype) : t; });
  for (auto& child : children_) child.value()->to(dtype);
}

void Module::to(Device device) {
  convert_own([device](const Tensor& t) { return t.to(device); });
  for (auto& child : children_) child.value()->to(device);
}

void Module::zero_grad(bool set_to_none) { autograd::zero_grad(parameters(), set_to_none); }

// ---- state_dict ----

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  std::function<void(const std::string&, const Module&)> visit = [&](const std::string& prefix, const Module& m) {
    for (const auto& item : m.parameters_)
      if (item.value().defined()) out.insert(join_name(prefix, item.key()), item.value().detach());
    for (const auto& item : m.buffers_) {
      const auto& np = m.non_persistent_buffers_;
      if (item.value().defined() && std::find(np.begin(), np.end(), item.key()) == np.end())
        out.insert(join_name(prefix, item.key()), item.value().detach());
    }
    for (const auto& child : m.children_) visit(join_name(prefix, child.key()), *child.value());
  };
  visit("", *this);
  return out;
}

void Module::load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict) {
  OrderedDict<std::string, Tensor> own = state_dict();
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& item : own)
    if (!state.contains(item.key())) missing.push_back(item.key());
  for (const auto& item : state) {
    const Tensor* target = own.find(item.key());
    if (!target) {
      unexpected.push_back(item.key());
      continue;
    }
    if (item.value().sizes() != target->sizes())
      mismatched.push_back(fmt::format("size mismatch for {}: copying a param with shape torch.Size({}) from "
                                       "checkpoint, the shape in current model is torch.Size({}).",
                                       item.key(), shape_to_string(item.value().sizes()),
                                       shape_to_string(target->sizes())));
  }
  std::vector<std::string> problems;
  auto quoted = [](const std::vector<std::string>& keys) {
    std::vector<std::string> q;
    for (const auto& k : keys) q.push_back("\"" + k + "\"");
    return fmt::format("{}", fmt::join(q, ", "));
  };
  if (strict && !missing.empty()) problems.push_back("Missing key(s) in state_dict: " + quoted(missing) + ". ");
  if (strict && !unexpected.empty()) problems.push_back("Unexpected key(s) in state_dict: " + quoted(unexpected) + ". ");
  for (const auto& m : mismatched) problems.push_back(m);
  if (!problems.empty())
    throw Error(fmt::format("Error(s) in loading state_dict for {}:\n\t{}", name(), fmt::join(problems, "\n\t")));
  NoGradGuard no_grad;
  for (auto& item : own)
    if (const Tensor* src = state.find(item.key())) item.value().copy_(*src);
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  OrderedDict<std::string, Tensor> ordered;
  for (const auto& [k, v] : state) ordered.insert(k, v);
  load_state_dict(ordered, strict);
}

void Module::save(const std::string& path) const {
  std::map<std::string, Tensor> tensors;
  for (const auto& item : state_dict()) tensors.emplace(item.key(), item.value());
  gradiens::save(tensors, path, {{"format", "pt"}});
}

void Module::load(const std::string& path, bool strict) { load_state_dict(gradiens::load(path), strict); }

// ---- hooks ----

HookHandle Module::register_forward_pre_hook(ForwardPreHook hook) {
  int id = hooks_->next_id++;
  hooks_->pre.emplace_back(id, std::move(hook));
  std::weak_ptr<Hooks> weak = hooks_;
  return HookHandle([weak, id] {
    if (auto hooks = weak.lock()) std::erase_if(hooks->pre, [id](const auto& h) { return h.first == id; });
  });
}

HookHandle Module::register_forward_hook(ForwardHook hook) {
  int id = hooks_->next_id++;
  hooks_->post.emplace_back(id, std::move(hook));
  std::weak_ptr<Hooks> weak = hooks_;
  return HookHandle([weak, id] {
    if (auto hooks = weak.lock()) std::erase_if(hooks->post, [id](const auto& h) { return h.first == id; });
  });
}

Tensor Module::call_with_hooks(std::vector<Tensor> inputs,
                               const std::function<Tensor(const std::vector<Tensor>&)>& forward) {
  for (const auto& [id, hook] : std::vector(hooks_->pre))
    if (auto replaced = hook(*this, inputs)) {
      GD_CHECK(replaced->size() == inputs.size(),
               fmt::format("forward pre-hook of {} returned {} inputs, but forward takes {}", name(), replaced->size(),
                           inputs.size()));
      inputs = std::move(*replaced);
    }
  Tensor output = forward(inputs);
  for (const auto& [id, hook] : std::vector(hooks_->post))
    if (auto replaced = hook(*this, inputs, output)) output = std::move(*replaced);
  return output;
}

// ---- printing ----

std::string Module::repr() const {
  std::string extra = extra_repr();
  if (children_.is_empty()) return name() + "(" + extra + ")";
  std::string out = name() + "(\n";
  auto indent = [](const std::string& text) {
    std::string r;
    for (char c : text) {
      r += c;
      if (c == '\n') r += "  ";
    }
    return r;
  };
  if (!extra.empty()) out += "  " + indent(extra) + "\n";
  for (const auto& child : children_) out += "  (" + child.key() + "): " + indent(child.value()->repr()) + "\n";
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.repr(); }

void Module::pretty_print(std::ostream& stream) const { stream << name(); }

void Module::pretty_print_recursive(std::ostream& stream, const std::string& indentation) const {
  pretty_print(stream);
  if (children_.is_empty()) return;
  stream << "(\n";
  const std::string next_indentation = indentation + "  ";
  for (const auto& child : children_) {
    stream << next_indentation << "(" << child.key() << "): ";
    child.value()->pretty_print_recursive(stream, next_indentation);
    stream << '\n';
  }
  stream << indentation << ")";
}

}  // namespace gradiens::nn

namespace gradiens::nn {

std::shared_ptr<Module> Module::clone(const std::optional<Device>& device) const {
  if (cloner_ != nullptr) return cloner_(*this, device);
  throw Error("clone() has not been implemented for " + name() + ". Subclass torch::nn::Cloneable<" + name() +
              "> instead of torch::nn::Module to inherit the ability to clone.");
}

void Module::clone_(Module& other, const std::optional<Device>& device) {
  detail::ModuleCloner::copy_values(*this, other, device);
}

}  // namespace gradiens::nn
