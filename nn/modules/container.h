// Containers: AnyModule (a type-erased Tensor -> Tensor module), Sequential,
// ModuleList and ModuleDict, as in libtorch.
#pragma once

#include <any>
#include <functional>
#include <initializer_list>
#include <tuple>
#include <typeinfo>
#include <variant>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/type_name.h"
#include "nn/cloneable.h"
#include "nn/module.h"
#include "nn/modules/any_value.h"

namespace gradiens::nn {

namespace detail {
// The return and argument types of a module's forward.
template <class F>
struct ForwardSignature;
template <class R, class C, class... A>
struct ForwardSignature<R (C::*)(A...)> {
  using Return = R;
  using Arguments = std::tuple<std::decay_t<A>...>;
};
template <class R, class C, class... A>
struct ForwardSignature<R (C::*)(A...) const> : ForwardSignature<R (C::*)(A...)> {};

// The forward AnyModule calls: the only one, or, for a module with overloads
// (RNN's forward of a Tensor or a PackedSequence), the one of type
// M::AnyModuleForward.
template <class M>
concept HasAnyModuleForwardType = requires {
  typename M::AnyModuleForward;
  static_cast<typename M::AnyModuleForward M::*>(&M::forward);
};
template <class M>
concept HasAnyForward = HasAnyModuleForwardType<M> || requires { &M::forward; };
template <class M>
constexpr auto any_forward_pointer() {
  if constexpr (HasAnyModuleForwardType<M>) {
    return static_cast<typename M::AnyModuleForward M::*>(&M::forward);
  } else {
    return &M::forward;
  }
}
}  // namespace detail

// Any module, type-erased, as libtorch's AnyModule: forward takes and returns
// whatever the module's forward does (any_forward, with values in AnyValue).
// A module whose forward maps one Tensor to one Tensor is called directly,
// through its hooks, with no AnyValue in between (what Sequential of layers does).
class AnyModule {
 public:
  AnyModule() = default;
  template <class M>
    requires std::is_base_of_v<Module, M>
  AnyModule(std::shared_ptr<M> module) : module_(module) {
    GD_CHECK(module_ != nullptr, "AnyModule: cannot hold an empty module");
    M* m = module.get();  // owned by module_, which lives as long as the callables
    constexpr bool tensor_to_tensor = requires(M& mm, const Tensor& x) {
      { mm.forward(x) } -> std::convertible_to<Tensor>;
    };
    if constexpr (tensor_to_tensor) {
      forward_ = [m](const Tensor& x) -> Tensor {
        if (!m->has_forward_hooks()) return m->forward(x);
        return m->call_with_hooks({x}, [m](const std::vector<Tensor>& xs) -> Tensor { return m->forward(xs[0]); });
      };
    }
    if constexpr (detail::HasAnyForward<M>) {
      using Signature = detail::ForwardSignature<decltype(detail::any_forward_pointer<M>())>;
      invoke_ = [m](std::vector<AnyValue>&& arguments) -> AnyValue {
        constexpr size_t arity = std::tuple_size_v<typename Signature::Arguments>;
        if constexpr (requires { M::_forward_default_arguments(); }) {
          auto defaults = M::_forward_default_arguments();
          size_t required = defaults.front().first;
          if (arguments.size() < required || arguments.size() > arity) {
            throw_wrong_arity(*m, required, arity, arguments.size());
          }
          for (auto& [index, value] : defaults) {
            if (index >= arguments.size()) arguments.push_back(std::move(value));
          }
        } else if (arguments.size() != arity) {
          throw_wrong_arity(*m, arity, arity, arguments.size());
        }
        return call<Signature>(*m, arguments, std::make_index_sequence<arity>{});
      };
    } else if constexpr (tensor_to_tensor) {
      invoke_ = [f = forward_, m](std::vector<AnyValue>&& arguments) -> AnyValue {
        if (arguments.size() != 1) throw_wrong_arity(*m, 1, 1, arguments.size());
        return AnyValue(f(arguments[0].get<Tensor>()));
      };
    } else {
      static_assert(tensor_to_tensor, "a module in Sequential or AnyModule needs a single forward() method "
                                      "(or an AnyModuleForward type naming one of its overloads)");
    }
    clone_ = [](const Module& original, const std::optional<Device>& device) {
      return AnyModule(std::dynamic_pointer_cast<M>(original.clone(device)));
    };
  }
  template <class M>
  AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}
  // A module passed by value, Sequential(MyModuleImpl(...)), moves into a shared_ptr.
  template <class M>
    requires(std::is_base_of_v<Module, M> && !std::is_lvalue_reference_v<M>)
  AnyModule(M&& module) : AnyModule(std::make_shared<M>(std::move(module))) {}

  // The output of the module's forward for these arguments, of any type.
  template <class... Args>
  AnyValue any_forward(Args&&... args) const {
    std::vector<AnyValue> values;
    values.reserve(sizeof...(Args));
    (values.push_back(to_any(std::forward<Args>(args))), ...);
    return any_forward(std::move(values));
  }
  AnyValue any_forward(std::vector<AnyValue>&& arguments) const {
    GD_CHECK(invoke_ != nullptr, "Cannot call forward() on an empty AnyModule");
    return invoke_(std::move(arguments));
  }
  // forward<Return>(args...): the output, which must be a Return.
  template <class Return = Tensor, class... Args>
  Return forward(Args&&... args) const {
    if constexpr (std::is_same_v<Return, Tensor> && sizeof...(Args) == 1 &&
                  (std::is_convertible_v<Args, const Tensor&> && ...)) {
      if (forward_) return forward_(args...);
    }
    return result_as<Return>(any_forward(std::forward<Args>(args)...));
  }
  // The same for a value already in an AnyValue's type: "The type of the return
  // value is int, but you asked for type float" when it is not a Return.
  template <class Return>
  static Return result_as(const AnyValue& value) {
    GD_CHECK(value.type_info() == typeid(Return),
             "The type of the return value is " + demangled_type_name(value.type_info()) +
                 ", but you asked for type " + demangled_type_name(typeid(Return)));
    return value.get<Return>();
  }
  // Whether forward maps one Tensor to one Tensor (called without AnyValue).
  bool is_tensor_module() const { return static_cast<bool>(forward_); }
  Tensor forward_tensor(const Tensor& x) const { return forward_(x); }

  // An AnyModule holding a deep copy of the module (Module::clone).
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const { return clone_(*module_, device); }
  bool is_empty() const { return module_ == nullptr; }
  const std::shared_ptr<Module>& ptr() const { return module_; }
  template <class M>
  std::shared_ptr<M> ptr() const {
    auto p = std::dynamic_pointer_cast<M>(module_);
    GD_CHECK(p != nullptr, "AnyModule: the module is a " + module_->name() + ", not the requested type");
    return p;
  }
  // The module as an M& (M the module class), or its holder (M a holder).
  template <class M>
  M get() const
    requires requires { typename M::ContainedType; }
  {
    return M(ptr<typename M::ContainedType>());
  }
  template <class M>
  M& get() const
    requires(!requires { typename M::ContainedType; })
  {
    return *ptr<M>();
  }
  const std::type_info& type_info() const { return typeid(*module_); }

 private:
  // "M's forward() method expects N argument(s), but received K." (at least
  // `required` and at most `arity` when forward has default arguments).
  [[noreturn]] static void throw_wrong_arity(const Module& module, size_t required, size_t arity, size_t received);
  template <class T>
  static AnyValue to_any(T&& value) {
    if constexpr (std::is_same_v<std::decay_t<T>, AnyValue>) return std::forward<T>(value);
    else return AnyValue(std::decay_t<T>(std::forward<T>(value)));
  }
  template <class Signature, class M, size_t... I>
  static AnyValue call(M& m, std::vector<AnyValue>& arguments, std::index_sequence<I...>) {
    using Arguments = typename Signature::Arguments;
    if constexpr (std::is_void_v<typename Signature::Return>) {
      m.forward(arguments[I].template get<std::tuple_element_t<I, Arguments>>()...);
      return AnyValue(std::monostate{});
    } else {
      return AnyValue(m.forward(arguments[I].template get<std::tuple_element_t<I, Arguments>>()...));
    }
  }

  std::shared_ptr<Module> module_;
  std::function<Tensor(const Tensor&)> forward_;  // set when forward maps Tensor to Tensor
  std::function<AnyValue(std::vector<AnyValue>&&)> invoke_;
  std::function<AnyModule(const Module&, const std::optional<Device>&)> clone_;
};

class SequentialImpl : public Cloneable<SequentialImpl> {
 public:
  SequentialImpl() : Cloneable("Sequential") {}
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && (std::is_constructible_v<AnyModule, Modules> && ...))
  explicit SequentialImpl(Modules&&... modules) : Cloneable("Sequential") {
    (push_back(AnyModule(std::forward<Modules>(modules))), ...);
  }
  // Named entries: Sequential({{"fc1", Linear(3, 4)}, {"act", Tanh()}}).
  SequentialImpl(std::initializer_list<std::pair<std::string, AnyModule>> named);

  // Appends under the next index ("0", "1", ...) or a given name.
  void push_back(AnyModule module);
  void push_back(std::string name, AnyModule module);
  void extend(const SequentialImpl& other);
  // Appends every module of a container of modules (shared_ptrs, holders or AnyModules).
  template <class Container>
    requires(!std::is_same_v<std::decay_t<Container>, SequentialImpl>)
  void extend(const Container& modules) {
    for (const auto& module : modules) push_back(AnyModule(module));
  }

  // Each module's output is the next one's input; the last one's output, which
  // must be a Return (libtorch's forward<Return>(inputs...)).
  template <class Return = Tensor, class... Inputs>
  Return forward(Inputs&&... inputs) {
    GD_CHECK(!modules_.empty(), "Cannot call forward() on an empty Sequential");
    if constexpr (std::is_same_v<Return, Tensor> && sizeof...(Inputs) == 1 &&
                  (std::is_convertible_v<Inputs, const Tensor&> && ...)) {
      if (all_tensor_modules_) return forward_tensors(inputs...);
    }
    AnyValue value = modules_.front().any_forward(std::forward<Inputs>(inputs)...);
    for (size_t i = 1; i < modules_.size(); ++i) value = modules_[i].any_forward(std::move(value));
    return AnyModule::result_as<Return>(value);
  }
  // A Sequential of clones of the modules, under the same names.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::Sequential"; }

  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  // The module at `index` (negative counts from the end).
  const std::shared_ptr<Module>& operator[](int64_t index) const;
  const std::shared_ptr<Module>& ptr(int64_t index) const { return (*this)[index]; }
  template <class M>
  std::shared_ptr<M> ptr(int64_t index) const {
    return modules_[checked_index(index)].template ptr<M>();
  }
  // The module at `index` as an M& ("Index out of range" past the end).
  template <class M>
  M& at(size_t index) const {
    GD_CHECK(index < modules_.size(), "Index out of range");
    return *modules_[index].template ptr<M>();
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  size_t checked_index(int64_t index) const;
  Tensor forward_tensors(const Tensor& input) const;
  std::vector<AnyModule> modules_;
  bool all_tensor_modules_ = true;  // every module maps a Tensor to a Tensor
};
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential(std::initializer_list<std::pair<std::string, AnyModule>> named)
      : ModuleHolder(std::make_shared<SequentialImpl>(named)) {}
};

class ModuleListImpl : public Cloneable<ModuleListImpl> {
 public:
  ModuleListImpl() : Cloneable("ModuleList") {}
  template <class... Modules>
    requires(sizeof...(Modules) > 0)
  explicit ModuleListImpl(Modules&&... modules) : Cloneable("ModuleList") {
    (push_back(to_ptr(std::forward<Modules>(modules))), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  template <class M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <class M>
    requires std::is_base_of_v<Module, M>
  void push_back(std::shared_ptr<M> module) {
    push_back(std::static_pointer_cast<Module>(std::move(module)));
  }
  // A module passed by value moves into a shared_ptr.
  template <class M>
    requires(std::is_base_of_v<Module, M> && !std::is_lvalue_reference_v<M>)
  void push_back(M&& module) {
    push_back(std::static_pointer_cast<Module>(std::make_shared<M>(std::move(module))));
  }
  void insert(int64_t index, std::shared_ptr<Module> module);
  template <class M>
  void insert(int64_t index, const ModuleHolder<M>& holder) {
    insert(index, std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <class M>
    requires std::is_base_of_v<Module, M>
  void insert(int64_t index, std::shared_ptr<M> module) {
    insert(index, std::static_pointer_cast<Module>(std::move(module)));
  }
  template <class M>
    requires(std::is_base_of_v<Module, M> && !std::is_lvalue_reference_v<M>)
  void insert(int64_t index, M&& module) {
    insert(index, std::static_pointer_cast<Module>(std::make_shared<M>(std::move(module))));
  }
  void extend(const ModuleListImpl& other);
  // Appends every module of a container of modules (shared_ptrs or holders).
  template <class Container>
    requires(!std::is_same_v<std::decay_t<Container>, ModuleListImpl>)
  void extend(const Container& modules) {
    for (const auto& module : modules) push_back(module);
  }
  // The module at `index` as an M& ("Index out of range" past the end).
  template <class M>
  M& at(size_t index) const {
    GD_CHECK(index < modules_.size(), "Index out of range");
    auto p = std::dynamic_pointer_cast<M>(modules_[index]);
    GD_CHECK(p != nullptr, "Attempted to cast module at index " + std::to_string(index) + " to the requested type, "
                           "but the module is a " + modules_[index]->name());
    return *p;
  }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::ModuleList"; }

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
  template <class M>
    requires(std::is_base_of_v<Module, M> && !std::is_lvalue_reference_v<M>)
  static std::shared_ptr<Module> to_ptr(M&& module) {
    return std::make_shared<M>(std::move(module));
  }
  void renumber();
  std::vector<std::shared_ptr<Module>> modules_;
};
GRADIENS_MODULE(ModuleList);

class ModuleDictImpl : public Cloneable<ModuleDictImpl> {
 public:
  ModuleDictImpl() : Cloneable("ModuleDict") {}
  ModuleDictImpl(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> entries);
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& entries);
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& entries);

  // Adds or replaces the module under `key` (a replaced key keeps its position).
  void update(const std::string& key, std::shared_ptr<Module> module);
  template <class M>
  void update(const std::string& key, const ModuleHolder<M>& holder) {
    update(key, std::static_pointer_cast<Module>(holder.ptr()));
  }
  // Adds or replaces every entry, in order.
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& entries);
  void update(const OrderedDict<std::string, std::shared_ptr<Module>>& entries);
  void update(const ModuleDictImpl& other);
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::ModuleDict"; }

  bool contains(const std::string& key) const { return children_.contains(key); }
  const std::shared_ptr<Module>& operator[](const std::string& key) const;
  template <class M>
  std::shared_ptr<M> ptr(const std::string& key) const {
    auto p = std::dynamic_pointer_cast<M>((*this)[key]);
    GD_CHECK(p != nullptr, "ModuleDict: the module under '" + key + "' is not of the requested type");
    return p;
  }
  // The module under `key` as an M&, as libtorch's at<M>(key).
  template <class M>
  M& at(const std::string& key) const {
    return *ptr<M>(key);
  }
  const OrderedDict<std::string, std::shared_ptr<Module>>& items() const { return children_; }
  bool empty() const { return children_.is_empty(); }
  auto begin() const { return children_.begin(); }
  auto end() const { return children_.end(); }
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
  explicit ModuleDict(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& entries)
      : ModuleHolder(std::make_shared<ModuleDictImpl>(entries)) {}
  explicit ModuleDict(const OrderedDict<std::string, std::shared_ptr<Module>>& entries)
      : ModuleHolder(std::make_shared<ModuleDictImpl>(entries)) {}
};

}  // namespace gradiens::nn
