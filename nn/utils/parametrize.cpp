// register_parametrization and friends: the originals live in a
// ParametrizationList under module.parametrizations, and a forward pre-hook
// rebinds the module's own tensor handle to the recomputed value.
#include "nn/utils/parametrize.h"

#include <fmt/format.h>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "nn/modules/container.h"

namespace gradiens::nn::utils::parametrize {

namespace {

std::string torch_dtype(ScalarType dtype) { return fmt::format("torch.{}", dtype_name(dtype)); }
std::string torch_size(IntArrayRef sizes) { return fmt::format("torch.Size({})", shape_to_string(sizes)); }

std::shared_ptr<ModuleDictImpl> parametrizations_dict(const Module& module) {
  for (const auto& child : module.named_children())
    if (child.key() == "parametrizations") return std::dynamic_pointer_cast<ModuleDictImpl>(child.value());
  return nullptr;
}

std::vector<Tensor> as_sequence(const Originals& originals) {
  if (const Tensor* t = std::get_if<Tensor>(&originals)) return {*t};
  return std::get<std::vector<Tensor>>(originals);
}

}  // namespace

// ---- Parametrization ----

Tensor Parametrization::forward(const Tensor&) {
  throw Error(fmt::format("parametrization {} does not implement forward(Tensor)", name()));
}

Tensor Parametrization::forward_originals(const std::vector<Tensor>& originals) {
  GD_CHECK(originals.size() == 1, fmt::format("parametrization {} takes one tensor, but got {} originals "
                                              "(override forward_originals)",
                                              name(), originals.size()));
  return forward(originals[0]);
}

std::optional<Originals> Parametrization::right_inverse(const Tensor&) { return std::nullopt; }

// ---- ParametrizationList ----

// What the free functions change inside a ParametrizationList.
struct ParametrizationAccess {
  static void append(ParametrizationListImpl& list, std::shared_ptr<Parametrization> p) {
    list.register_module(std::to_string(list.chain_.size()), p);
    list.chain_.push_back(std::move(p));
  }
  static Tensor& target(ParametrizationListImpl& list) { return list.target_; }
  static HookHandle& hook(ParametrizationListImpl& list) { return list.hook_; }
  static void set_layout(ParametrizationListImpl& list, bool is_tensor, size_t ntensors, bool unsafe) {
    list.is_tensor_ = is_tensor;
    list.ntensors_ = ntensors;
    list.unsafe_ = unsafe;
  }
  static void add_unsafe(ParametrizationListImpl& list, bool unsafe) { list.unsafe_ |= unsafe; }
  // A parameter (requires_grad as the tensor it replaces) or a buffer, as PyTorch's
  // _register_parameter_or_buffer.
  static void register_original(ParametrizationListImpl& list, const std::string& name, const Tensor& value,
                                bool as_parameter, bool requires_grad) {
    if (as_parameter) {
      list.register_parameter(name, value, requires_grad);
    } else {
      list.register_buffer(name, value.detach());
    }
  }
};

const std::shared_ptr<Parametrization>& ParametrizationListImpl::operator[](size_t index) const {
  GD_CHECK(index < chain_.size(), fmt::format("index {} is out of range for a ParametrizationList of size {}", index,
                                              chain_.size()));
  return chain_[index];
}

Tensor& ParametrizationListImpl::original() {
  GD_CHECK(is_tensor_, "this ParametrizationList holds original0, original1, ...: ask for original(i)");
  return parameters_.contains("original") ? parameters_["original"] : buffers_["original"];
}

Tensor& ParametrizationListImpl::original(size_t index) {
  GD_CHECK(!is_tensor_, "this ParametrizationList holds one tensor, 'original'");
  GD_CHECK(index < ntensors_, fmt::format("original{} does not exist: there are {} originals", index, ntensors_));
  std::string key = fmt::format("original{}", index);
  return parameters_.contains(key) ? parameters_[key] : buffers_[key];
}

Tensor ParametrizationListImpl::forward() {
  GD_CHECK(!chain_.empty(), "ParametrizationList requires one or more modules.");
  Tensor x;
  if (is_tensor_) {
    x = chain_[0]->forward_originals({original()});
  } else {
    std::vector<Tensor> originals;
    for (size_t i = 0; i < ntensors_; ++i) originals.push_back(original(i));
    x = chain_[0]->forward_originals(originals);
  }
  for (size_t i = 1; i < chain_.size(); ++i) x = chain_[i]->forward(x);
  return x;
}

void ParametrizationListImpl::right_inverse(const Tensor& value_in) {
  NoGradGuard no_grad;
  Originals value = value_in;
  for (size_t i = chain_.size(); i-- > 0;) {
    const Tensor* single = std::get_if<Tensor>(&value);
    GD_CHECK(single != nullptr, fmt::format("parametrization {} got a sequence of tensors from the "
                                            "right_inverse of the parametrization after it",
                                            chain_[i]->name()));
    std::optional<Originals> inverted = chain_[i]->right_inverse(*single);
    GD_CHECK(inverted.has_value(),
             fmt::format("parametrization {} does not implement right_inverse.", chain_[i]->name()));
    value = std::move(*inverted);
  }
  if (is_tensor_) {
    const Tensor* single = std::get_if<Tensor>(&value);
    GD_CHECK(single != nullptr, "`right_inverse` should return a tensor. Got list");
    GD_CHECK(single->dtype() == original().dtype(),
             fmt::format("The tensor returned by `right_inverse` has dtype {} while `original` has dtype {}",
                         torch_dtype(single->dtype()), torch_dtype(original().dtype())));
    original().set_data(single->detach().clone());
    return;
  }
  GD_CHECK(std::holds_alternative<std::vector<Tensor>>(value),
           "'right_inverse' must return a sequence of tensors. Got Tensor.");
  const auto& tensors = std::get<std::vector<Tensor>>(value);
  GD_CHECK(tensors.size() == ntensors_,
           fmt::format("'right_inverse' must return a sequence of tensors of length {}. Got a sequence of lenght {}.",
                       ntensors_, tensors.size()));
  for (size_t i = 0; i < tensors.size(); ++i) {
    GD_CHECK(tensors[i].dtype() == original(i).dtype(),
             fmt::format("Tensor {} returned by `right_inverse` has dtype {} while `original{}` has dtype {}", i,
                         torch_dtype(tensors[i].dtype()), i, torch_dtype(original(i).dtype())));
    original(i).set_data(tensors[i].detach().clone());
  }
}

// ---- the free functions ----

bool is_parametrized(const Module& module, const std::optional<std::string>& tensor_name) {
  auto dict = parametrizations_dict(module);
  if (!dict) return false;
  return tensor_name ? dict->contains(*tensor_name) : !dict->is_empty();
}

ParametrizationListImpl& parametrizations_of(const Module& module, const std::string& tensor_name) {
  auto dict = parametrizations_dict(module);
  GD_CHECK(dict && dict->contains(tensor_name),
           fmt::format("Module {} does not have a parametrization on {}", module.repr(), tensor_name));
  auto list = std::dynamic_pointer_cast<ParametrizationListImpl>((*dict)[tensor_name]);
  GD_CHECK(list != nullptr, fmt::format("module.parametrizations.{} is not a ParametrizationList", tensor_name));
  return *list;
}

Tensor recompute(Module& module, const std::string& tensor_name) {
  ParametrizationListImpl& list = parametrizations_of(module, tensor_name);
  Tensor value = list.forward();
  autograd::rebind(ParametrizationAccess::target(list), value);
  return ParametrizationAccess::target(list);
}

void recompute(Module& module) {
  if (auto dict = parametrizations_dict(module))
    for (const std::string& name : dict->keys()) recompute(module, name);
}

namespace {

// The first parametrization of a parameter or buffer: builds its
// ParametrizationList and returns it with the value it computes (when checked).
std::shared_ptr<ParametrizationListImpl> make_list(const Tensor& original, bool is_parameter,
                                                   std::shared_ptr<Parametrization> parametrization, bool unsafe,
                                                   Tensor& checked_value) {
  auto list = std::make_shared<ParametrizationListImpl>();
  ParametrizationAccess::append(*list, parametrization);
  std::optional<Originals> inverted;
  {
    NoGradGuard no_grad;
    inverted = parametrization->right_inverse(original.detach());
  }
  Originals originals = inverted ? std::move(*inverted) : Originals(original.detach());
  bool is_tensor = std::holds_alternative<Tensor>(originals);
  std::vector<Tensor> tensors = as_sequence(originals);
  if (is_tensor) {
    GD_CHECK(tensors[0].dtype() == original.dtype(),
             fmt::format("When `right_inverse` outputs one tensor, it may not change the dtype.\noriginal.dtype: "
                         "{}\nright_inverse(original).dtype: {}",
                         torch_dtype(original.dtype()), torch_dtype(tensors[0].dtype())));
  }
  ParametrizationAccess::set_layout(*list, is_tensor, tensors.size(), unsafe);
  for (size_t i = 0; i < tensors.size(); ++i) {
    GD_CHECK(tensors[i].defined(), fmt::format("'right_inverse' must return a Tensor or a Sequence of tensors "
                                               "(list, tuple...). Got element {} of the sequence undefined.",
                                               i));
    ParametrizationAccess::register_original(*list, is_tensor ? "original" : fmt::format("original{}", i),
                                             tensors[i].detach(), is_parameter, original.requires_grad());
  }
  if (!unsafe) {
    Tensor z = list->forward();
    GD_CHECK(z.dtype() == original.dtype(),
             fmt::format("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                         "flag is enabled.\nunparametrized dtype: {}\nparametrized dtype: {}",
                         torch_dtype(original.dtype()), torch_dtype(z.dtype())));
    GD_CHECK(z.sizes() == original.sizes(),
             fmt::format("Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                         "flag is enabled.\nunparametrized shape: {}\nparametrized shape: {}",
                         torch_size(original.sizes()), torch_size(z.sizes())));
    checked_value = z;
  }
  return list;
}

// The checks PyTorch makes before appending to an existing chain; returns the new value.
Tensor check_appended(const std::string& tensor_name, const Tensor& current, Parametrization& parametrization) {
  Tensor x = parametrization.forward(current);
  GD_CHECK(x.dtype() == current.dtype(),
           fmt::format("Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` "
                       "flag is enabled.\nmodule.{0}.dtype: {1}\nparametrization(module.{0}).dtype: {2}",
                       tensor_name, torch_dtype(current.dtype()), torch_dtype(x.dtype())));
  GD_CHECK(x.sizes() == current.sizes(),
           fmt::format("Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
                       "flag is enabled.\nmodule.{0}.shape: {1}\nparametrization(module.{0}).shape: {2}",
                       tensor_name, torch_size(current.sizes()), torch_size(x.sizes())));
  std::optional<Originals> inverted;
  {
    NoGradGuard no_grad;
    inverted = parametrization.right_inverse(x.detach());
  }
  if (inverted) {
    const Tensor* z = std::get_if<Tensor>(&*inverted);
    GD_CHECK(z != nullptr, "parametrization.right_inverse must return a tensor. Got: list");
    GD_CHECK(z->dtype() == current.dtype(),
             fmt::format("The tensor returned by parametrization.right_inverse must have the same dtype as "
                         "module.{}, unless the `unsafe` flag is enabled.\nmodule.{}.dtype: {}\nreturned dtype: {}",
                         tensor_name, tensor_name, torch_dtype(current.dtype()), torch_dtype(z->dtype())));
    GD_CHECK(z->sizes() == current.sizes(),
             fmt::format("The tensor returned by parametrization.right_inverse must have the same shape as "
                         "module.{}, unless the `unsafe` flag is enabled.\nmodule.{}.shape: {}\nreturned shape: {}",
                         tensor_name, tensor_name, torch_size(current.sizes()), torch_size(z->sizes())));
  }
  return x;
}

}  // namespace

Module& register_parametrization(Module& module, const std::string& tensor_name,
                                 std::shared_ptr<Parametrization> parametrization, bool unsafe) {
  GD_CHECK(parametrization != nullptr, "register_parametrization: the parametrization is an empty module");
  parametrization->train(module.is_training());

  if (is_parametrized(module, tensor_name)) {
    ParametrizationListImpl& list = parametrizations_of(module, tensor_name);
    Tensor value;
    if (!unsafe) value = check_appended(tensor_name, recompute(module, tensor_name), *parametrization);
    ParametrizationAccess::append(list, parametrization);
    ParametrizationAccess::add_unsafe(list, unsafe);
    if (value.defined()) {
      autograd::rebind(ParametrizationAccess::target(list), value);
    } else {
      recompute(module, tensor_name);
    }
    return module;
  }

  bool is_parameter = module.named_parameters(false).contains(tensor_name);
  bool is_buffer = !is_parameter && module.named_buffers(false).contains(tensor_name);
  GD_CHECK(is_parameter || is_buffer,
           fmt::format("Module '{}' does not have a parameter, a buffer, or a parametrized element with name '{}'",
                       module.repr(), tensor_name));
  Tensor target = is_parameter ? module.parameter(tensor_name) : module.buffer(tensor_name);
  Tensor value;
  auto list = make_list(target, is_parameter, parametrization, unsafe, value);

  if (is_parameter) {
    module.unregister_parameter(tensor_name);
  } else {
    module.unregister_buffer(tensor_name);
  }
  auto dict = parametrizations_dict(module);
  if (!dict) {
    dict = module.register_module("parametrizations", std::make_shared<ModuleDictImpl>());
    module.set_name("Parametrized" + module.name());  // PyTorch's ParametrizedLinear, ...
  }
  dict->update(tensor_name, list);
  ParametrizationAccess::target(*list) = target;
  autograd::rebind(target, value.defined() ? value : list->forward());
  std::weak_ptr<ParametrizationListImpl> weak_list = list;
  auto refresh = [weak_list](Module&, const std::vector<Tensor>&) {
    if (auto l = weak_list.lock()) autograd::rebind(ParametrizationAccess::target(*l), l->forward());
    return std::optional<std::vector<Tensor>>();
  };
  ParametrizationAccess::hook(*list) = module.register_forward_pre_hook(refresh);
  return module;
}

Module& remove_parametrizations(Module& module, const std::string& tensor_name, bool leave_parametrized) {
  GD_CHECK(is_parametrized(module, tensor_name),
           fmt::format("Module {} does not have a parametrization on {}", module.repr(), tensor_name));
  ParametrizationListImpl& list = parametrizations_of(module, tensor_name);
  Tensor value;
  bool as_parameter = false, requires_grad = false;
  if (list.is_tensor()) {
    Tensor& original = list.original();
    as_parameter = list.named_parameters(false).contains("original");
    requires_grad = original.requires_grad();
    if (leave_parametrized) {
      NoGradGuard no_grad;
      value = list.forward();
      GD_CHECK(value.dtype() == original.dtype(),
               fmt::format("remove_parametrizations: the parametrized value has dtype {} but the original has {}",
                           torch_dtype(value.dtype()), torch_dtype(original.dtype())));
    } else {
      value = original;
    }
  } else {
    GD_CHECK(leave_parametrized,
             "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a "
             "sequence of tensors.");
    for (size_t i = 0; i < list.ntensors(); ++i) requires_grad = requires_grad || list.original(i).requires_grad();
    // As PyTorch: a Parameter when the value requires grad, else a buffer.
    as_parameter = requires_grad;
    NoGradGuard no_grad;
    value = list.forward();
  }

  Tensor target = ParametrizationAccess::target(list);
  ParametrizationAccess::hook(list).remove();
  auto dict = parametrizations_dict(module);
  dict->pop(tensor_name);
  if (dict->is_empty()) {
    module.unregister_module("parametrizations");
    module.set_name(module.name().substr(std::string("Parametrized").size()));
  }

  // The module's handle becomes a leaf holding the value, and is registered
  // itself (register_parameter would store a detached copy of the handle).
  autograd::rebind(target, value.detach());
  if (as_parameter) {
    target.requires_grad_(requires_grad);
    module.register_parameter(tensor_name, target, requires_grad) = target;
  } else {
    module.register_buffer(tensor_name, target);
  }
  return module;
}

}  // namespace gradiens::nn::utils::parametrize
