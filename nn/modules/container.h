// Containers: AnyModule (a type-erased Tensor -> Tensor module), Sequential,
// ModuleList and ModuleDict, as in libtorch.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace gradiens::nn {

// Any module whose forward maps one Tensor to one Tensor, called through its
// hooks. What Sequential holds.
class AnyModule {
 public:
  template <class M>
    requires std::is_base_of_v<Module, M>
  AnyModule(std::shared_ptr<M> module) : module_(module) {
    static_assert(requires(M& m, const Tensor& x) {
      { m.forward(x) } -> std::convertible_to<Tensor>;
    }, "a module in Sequential needs a forward(const Tensor&) returning a Tensor");
    GD_CHECK(module_ != nullptr, "AnyModule: cannot hold an empty module");
    M* m = module.get();  // owned by module_, which lives as long as forward_
    forward_ = [m](const Tensor& x) -> Tensor {
      if (!m->has_forward_hooks()) return m->forward(x);
      return m->call_with_hooks({x}, [m](const std::vector<Tensor>& xs) -> Tensor { return m->forward(xs[0]); });
    };
  }
  template <class M>
  AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}
  // A module passed by value, Sequential(MyModuleImpl(...)), moves into a shared_ptr.
  template <class M>
    requires(std::is_base_of_v<Module, M> && !std::is_lvalue_reference_v<M>)
  AnyModule(M&& module) : AnyModule(std::make_shared<M>(std::move(module))) {}

  Tensor forward(const Tensor& x) const { return forward_(x); }
  const std::shared_ptr<Module>& ptr() const { return module_; }
  template <class M>
  std::shared_ptr<M> ptr() const {
    auto p = std::dynamic_pointer_cast<M>(module_);
    GD_CHECK(p != nullptr, "AnyModule: the module is a " + module_->name() + ", not the requested type");
    return p;
  }

 private:
  std::shared_ptr<Module> module_;
  std::function<Tensor(const Tensor&)> forward_;
};

class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && (std::is_constructible_v<AnyModule, Modules> && ...))
  explicit SequentialImpl(Modules&&... modules) : Module("Sequential") {
    (push_back(AnyModule(std::forward<Modules>(modules))), ...);
  }
  // Named entries: Sequential({{"fc1", Linear(3, 4)}, {"act", Tanh()}}).
  SequentialImpl(std::initializer_list<std::pair<std::string, AnyModule>> named);

  // Appends under the next index ("0", "1", ...) or a given name.
  void push_back(AnyModule module);
  void push_back(std::string name, AnyModule module);
  void extend(const SequentialImpl& other);

  Tensor forward(const Tensor& input);

  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  // The module at `index` (negative counts from the end).
  const std::shared_ptr<Module>& operator[](int64_t index) const;
  const std::shared_ptr<Module>& ptr(int64_t index) const { return (*this)[index]; }
  template <class M>
  std::shared_ptr<M> ptr(int64_t index) const {
    return modules_[checked_index(index)].template ptr<M>();
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  size_t checked_index(int64_t index) const;
  std::vector<AnyModule> modules_;
};
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential(std::initializer_list<std::pair<std::string, AnyModule>> named)
      : ModuleHolder(std::make_shared<SequentialImpl>(named)) {}
};

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <class... Modules>
    requires(sizeof...(Modules) > 0)
  explicit ModuleListImpl(Modules&&... modules) : Module("ModuleList") {
    (push_back(to_ptr(std::forward<Modules>(modules))), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  template <class M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  void insert(int64_t index, std::shared_ptr<Module> module);
  void extend(const ModuleListImpl& other);

  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  const std::shared_ptr<Module>& operator[](int64_t index) const;
  const std::shared_ptr<Module>& ptr(int64_t index) const { return (*this)[index]; }
  template <class M>
  std::shared_ptr<M> ptr(int64_t index) const {
    auto p = std::dynamic_pointer_cast<M>((*this)[index]);
    GD_CHECK(p != nullptr, "ModuleList: the module at this index is a " + (*this)[index]->name() +
                               ", not the requested type");
    return p;
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  template <class M>
  static std::shared_ptr<Module> to_ptr(const ModuleHolder<M>& holder) {
    return holder.ptr();
  }
  template <class M>
  static std::shared_ptr<Module> to_ptr(std::shared_ptr<M> module) {
    return module;
  }
  void renumber();
  std::vector<std::shared_ptr<Module>> modules_;
};
GRADIENS_MODULE(ModuleList);

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("ModuleDict") {}
  ModuleDictImpl(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> entries);

  // Adds or replaces the module under `key` (a replaced key keeps its position).
  void update(const std::string& key, std::shared_ptr<Module> module);
  template <class M>
  void update(const std::string& key, const ModuleHolder<M>& holder) {
    update(key, std::static_pointer_cast<Module>(holder.ptr()));
  }
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();

  bool contains(const std::string& key) const { return children_.contains(key); }
  const std::shared_ptr<Module>& operator[](const std::string& key) const;
  template <class M>
  std::shared_ptr<M> ptr(const std::string& key) const {
    auto p = std::dynamic_pointer_cast<M>((*this)[key]);
    GD_CHECK(p != nullptr, "ModuleDict: the module under '" + key + "' is not of the requested type");
    return p;
  }
  std::vector<std::string> keys() const { return children_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return children_.values(); }
  size_t size() const { return children_.size(); }
  bool is_empty() const { return children_.is_empty(); }
};
class ModuleDict : public ModuleHolder<ModuleDictImpl> {
 public:
  using ModuleHolder<ModuleDictImpl>::ModuleHolder;
  ModuleDict(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> entries)
      : ModuleHolder(std::make_shared<ModuleDictImpl>(entries)) {}
};

}  // namespace gradiens::nn
