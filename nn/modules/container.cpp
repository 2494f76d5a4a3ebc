// Sequential, ModuleList and ModuleDict.
#include "nn/modules/container.h"

#include <fmt/format.h>

namespace gradiens::nn {

namespace {

size_t wrap_index(int64_t index, size_t size, const char* container) {
  int64_t n = static_cast<int64_t>(size);
  GD_CHECK(index >= -n && index < n, fmt::format("index {} is out of range for a {} of size {}", index, container, n));
  return static_cast<size_t>(index < 0 ? index + n : index);
}

}  // namespace

// ---- Sequential ----

SequentialImpl::SequentialImpl(std::initializer_list<std::pair<std::string, AnyModule>> named)
    : Module("Sequential") {
  for (const auto& [name, module] : named) push_back(name, module);
}

void SequentialImpl::push_back(AnyModule module) { push_back(std::to_string(modules_.size()), std::move(module)); }

void SequentialImpl::push_back(std::string name, AnyModule module) {
  register_module_impl(std::move(name), module.ptr());
  modules_.push_back(std::move(module));
}

void SequentialImpl::extend(const SequentialImpl& other) {
  for (const AnyModule& m : other.modules_) push_back(m);
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const AnyModule& m : modules_) x = m.forward(x);
  return x;
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
    : Module("ModuleDict") {
  for (const auto& [key, module] : entries) update(key, module);
}

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

const std::shared_ptr<Module>& ModuleDictImpl::operator[](const std::string& key) const {
  const std::shared_ptr<Module>* m = children_.find(key);
  GD_CHECK(m != nullptr, fmt::format("ModuleDict has no module named '{}'", key));
  return *m;
}

}  // namespace gradiens::nn
