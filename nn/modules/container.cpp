// Sequential, ModuleList and ModuleDict.
#include "nn/modules/container.h"

#include <fmt/format.h>

namespace gradiens::nn {

namespace {

size_t wrap_index(int64_t index, size_t size, const char* container) {
  int64_t n = static_cast<int64_t>(size);
  GD_CHECK(index >= -n && index < n, fmt::format("Index out of range: {} for a {} of size {}", index, container, n));
  return static_cast<size_t>(index < 0 ? index + n : index);
}

}  // namespace

// ---- Sequential ----

SequentialImpl::SequentialImpl(std::initializer_list<std::pair<std::string, AnyModule>> named)
    : Cloneable("Sequential") {
  for (const auto& [name, module] : named) push_back(name, module);
}

void SequentialImpl::push_back(AnyModule module) { push_back(std::to_string(modules_.size()), std::move(module)); }

void SequentialImpl::push_back(std::string name, AnyModule module) {
  register_module_impl(std::move(name), module.ptr());
  all_tensor_modules_ = all_tensor_modules_ && module.is_tensor_module();
  modules_.push_back(std::move(module));
}

void SequentialImpl::extend(const SequentialImpl& other) {
  for (const AnyModule& m : other.modules_) push_back(m);
}

Tensor SequentialImpl::forward_tensors(const Tensor& input) const {
  Tensor x = input;
  for (const AnyModule& m : modules_) x = m.forward_tensor(x);
  return x;
}

void AnyModule::throw_wrong_arity(const Module& module, size_t required, size_t arity, size_t received) {
  if (required == arity) {
    throw Error(fmt::format("{}'s forward() method expects {} argument(s), but received {}.", module.name(), arity,
                            received));
  }
  throw Error(fmt::format("{}'s forward() method expects at least {} argument(s) and at most {} argument(s), but "
                          "received {}.",
                          module.name(), required, arity, received));
}


size_t SequentialImpl::checked_index(int64_t index) const { return wrap_index(index, modules_.size(), "Sequential"); }

const std::shared_ptr<Module>& SequentialImpl::operator[](int64_t index) const {
  return modules_[checked_index(index)].ptr();
}

// ---- ModuleList ----

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  register_module_impl(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::insert(int64_t index, std::shared_ptr<Module> module) {
  GD_CHECK(module != nullptr, "ModuleList: cannot insert an empty module");
  int64_t n = static_cast<int64_t>(modules_.size());
  // As Python's list.insert: out-of-range indices clamp to the ends.
  if (index < 0) index = std::max<int64_t>(0, index + n);
  index = std::min(index, n);
  modules_.insert(modules_.begin() + index, std::move(module));
  renumber();
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  for (const auto& m : other.modules_) push_back(m);
}

void ModuleListImpl::renumber() {
  children_.clear();
  for (size_t i = 0; i < modules_.size(); ++i) children_.insert(std::to_string(i), modules_[i]);
}

const std::shared_ptr<Module>& ModuleListImpl::operator[](int64_t index) const {
  return modules_[wrap_index(index, modules_.size(), "ModuleList")];
}

// ---- ModuleDict ----

ModuleDictImpl::ModuleDictImpl(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> entries)
    : Cloneable("ModuleDict") {
  for (const auto& [key, module] : entries) update(key, module);
}

ModuleDictImpl::ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& entries)
    : Cloneable("ModuleDict") {
  update(entries);
}

ModuleDictImpl::ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& entries)
    : Cloneable("ModuleDict") {
  update(entries);
}

void ModuleDictImpl::update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& entries) {
  for (const auto& [key, module] : entries) update(key, module);
}

void ModuleDictImpl::update(const OrderedDict<std::string, std::shared_ptr<Module>>& entries) {
  for (const auto& item : entries) update(item.key(), item.value());
}

void ModuleDictImpl::update(const ModuleDictImpl& other) { update(other.children_); }

void ModuleDictImpl::update(const std::string& key, std::shared_ptr<Module> module) {
  GD_CHECK(module != nullptr, fmt::format("ModuleDict: the module for key '{}' is empty", key));
  if (children_.contains(key)) replace_module_impl(key, std::move(module));
  else register_module_impl(key, std::move(module));
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> module = (*this)[key];
  OrderedDict<std::string, std::shared_ptr<Module>> rest{"Submodule"};
  for (const auto& item : children_)
    if (item.key() != key) rest.insert(item.key(), item.value());
  children_ = std::move(rest);
  return module;
}

void ModuleDictImpl::clear() { children_.clear(); }

const std::shared_ptr<Module>& ModuleDictImpl::operator[](const std::string& key) const { return children_[key]; }

}  // namespace gradiens::nn

namespace gradiens::nn {

std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  const std::vector<std::string> names = children_.keys();
  for (size_t i = 0; i < modules_.size(); ++i) copy->push_back(names[i], modules_[i].clone(device));
  copy->train(is_training());
  return copy;
}

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& module : modules_) copy->push_back(module->clone(device));
  copy->train(is_training());
  return copy;
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& item : children_) copy->update(item.key(), item.value()->clone(device));
  copy->train(is_training());
  return copy;
}

}  // namespace gradiens::nn
