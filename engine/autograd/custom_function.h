// Custom autograd functions written as in libtorch: a struct deriving from
// autograd::Function<Self> with static forward(AutogradContext*, args...) and
// backward(AutogradContext*, variable_list), called through Self::apply(args...).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "data/array_ref.h"
#include "engine/autograd/grad_mode.h"
#include "engine/autograd/node.h"
#include "engine/autograd/saved_variable.h"
#include "engine/ivalue.h"

namespace gradiens {
// A borrowed list of tensors (libtorch's at::TensorList); as an argument of a
// custom function's apply, each tensor in it is an input of its own.
using TensorList = ArrayRef<Tensor>;
}  // namespace gradiens

namespace gradiens::autograd {

using Variable = Tensor;
using variable_list = std::vector<Tensor>;
// The inputs [first, second) of a node, for needs_input_grad({...}) (libtorch's IndexRange).
using IndexRange = std::pair<size_t, size_t>;

// What a custom function's forward leaves for its backward, as libtorch's
// AutogradContext.
class AutogradContext {
 public:
  // Any values backward needs besides tensors (not version-checked).
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors backward reads through get_saved_variables(): inputs or outputs,
  // checked against in-place changes made after forward.
  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  // Inputs forward modified in place: they become outputs of this function.
  void mark_dirty(const variable_list& inputs);
  // Outputs that get no gradient (indices, masks): they do not require grad.
  void mark_non_differentiable(const variable_list& outputs);
  // Whether backward receives zeros (true, the default) or undefined tensors for
  // outputs that got no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  variable_list get_saved_variables() const;
  // Whether the tensor input at `index` (counting tensor arguments only) needs a gradient.
  bool needs_input_grad(size_t index) const;
  // Whether any tensor input in the ranges needs one.
  bool needs_input_grad(std::initializer_list<IndexRange> ranges) const;

  // ---- used by Function::apply and its node ----
  bool is_dirty(const Tensor& t) const { return dirty_.contains(t.impl()); }
  bool is_non_differentiable(const Tensor& t) const { return non_differentiable_.contains(t.impl()); }
  bool materialize_grads() const { return materialize_grads_; }
  void set_node(const std::shared_ptr<Node>& node) { node_ = node; }
  // Turns to_save_ into snapshots once the outputs exist (saved outputs do not hold their node).
  void save_variables(const variable_list& outputs);
  void release_variables();

 private:
  variable_list to_save_;
  std::vector<SavedVariable> saved_;
  std::unordered_set<const TensorImpl*> dirty_, non_differentiable_;
  std::weak_ptr<Node> node_;
  bool materialize_grads_ = true;
  bool released_ = false;
};

namespace detail {

// The node a custom function records: backward calls Fn::backward.
class CustomFunctionNodeBase : public Node {
 public:
  explicit CustomFunctionNodeBase(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  void release_variables() override { ctx.release_variables(); }
  GradList apply(GradList&& grads) override;

  AutogradContext ctx;
  std::vector<bool> is_tensor_argument;  // per argument of apply
  std::vector<std::optional<InputMetadata>> output_info;  // per output of forward; empty: undefined

 protected:
  virtual variable_list call_backward(variable_list grads) = 0;

 private:
  std::string name_;
};

template <class Fn>
class CustomFunctionNode final : public CustomFunctionNodeBase {
 public:
  using CustomFunctionNodeBase::CustomFunctionNodeBase;

 private:
  variable_list call_backward(variable_list grads) override { return Fn::backward(&ctx, std::move(grads)); }
};

// "CppNode<MyFunction>", as libtorch names a custom function's node.
std::string node_name(const std::type_info& function);

// The tensor arguments of apply and, per argument, whether it is one.
inline void collect_argument(std::vector<Tensor>& tensors, std::vector<bool>& is_tensor, const Tensor& t) {
  tensors.push_back(t);
  is_tensor.push_back(true);
}
inline void collect_argument(std::vector<Tensor>& tensors, std::vector<bool>& is_tensor, TensorList list) {
  for (const Tensor& t : list) collect_argument(tensors, is_tensor, t);
}
template <class T>
void collect_argument(std::vector<Tensor>&, std::vector<bool>& is_tensor, const T&) {
  is_tensor.push_back(false);
}

// Connects the outputs to the node: history, dirty inputs, non-differentiable
// outputs, inputs returned unchanged (Note [Custom function outputs]).
void wrap_outputs(CustomFunctionNodeBase& node, const std::shared_ptr<Node>& shared, const variable_list& inputs,
                  variable_list& outputs, bool recording);

inline variable_list as_list(const Tensor& t) { return {t}; }
inline variable_list as_list(const variable_list& ts) { return ts; }

}  // namespace detail

template <class Fn>
struct Function {
  // Runs Fn::forward under no-grad and records its backward when grad mode is
  // on and a tensor argument requires grad. Returns what forward returns (a
  // Tensor or a variable_list).
  template <class X = Fn, class... Args>
  static auto apply(Args&&... args) {
    using Output = decltype(X::forward(nullptr, std::forward<Args>(args)...));
    static_assert(std::is_same_v<Output, Tensor> || std::is_same_v<Output, variable_list>,
                  "a custom function's forward returns a Tensor or a variable_list");
    auto node = std::make_shared<detail::CustomFunctionNode<X>>(detail::node_name(typeid(X)));
    variable_list inputs;
    (detail::collect_argument(inputs, node->is_tensor_argument, args), ...);
    bool recording = false;
    if (GradMode::is_enabled())
      for (const Tensor& t : inputs) recording = recording || (t.defined() && t.requires_grad());
    node->ctx.set_node(node);
    if (recording)
      for (const Tensor& t : inputs)
        node->add_next_edge(t.defined() && t.requires_grad() ? gradient_edge(t) : Edge());
    Output result;
    {
      AutoGradMode no_grad(false);
      result = X::forward(&node->ctx, std::forward<Args>(args)...);
    }
    variable_list outputs = detail::as_list(result);
    detail::wrap_outputs(*node, node, inputs, outputs, recording);
    if constexpr (std::is_same_v<Output, Tensor>) return outputs[0];
    else return outputs;
  }
};

}  // namespace gradiens::autograd
