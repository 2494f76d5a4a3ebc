// apply<Op>: runs an op's forward and, when grad mode is on and an input
// requires grad, records a FunctionNode<Op> whose backward is Op::backward.
// An op is a struct with `name`, `forward(Ctx&, args...)` and
// `backward(Ctx&, grad)`, written side by side (STYLE.md habit 2).
#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/autograd/node.h"
#include "engine/autograd/saved_variable.h"
#include "engine/scalar.h"

namespace gradiens {

// What forward leaves for backward: saved tensors (version-checked), the
// integers/scalars the formula needs, and which inputs need a gradient.
class Ctx {
 public:
  // True while recording; when false, save_for_backward does nothing.
  bool is_recording() const { return recording_; }
  template <class... Ts>
  void save_for_backward(const Ts&... tensors) {
    if (!recording_) return;
    (saved_.emplace_back(tensors, false), ...);
  }
  template <size_t N>
  std::array<Tensor, N> saved() const {
    std::array<Tensor, N> out;
    for (size_t i = 0; i < N; ++i) out[i] = saved_[i].unpack(owner());
    return out;
  }
  Tensor saved(size_t i) const { return saved_[i].unpack(owner()); }
  // Whether the forward input at `index` (counting tensor arguments) gets a gradient.
  bool needs_input_grad(size_t index) const { return index < needs_grad_.size() && needs_grad_[index]; }

  // Free-form attributes for the backward formula.
  DimVector ints;
  DimVector shape;
  Scalar scalar;
  double real = 0;
  ScalarType dtype = kFloat32;
  std::vector<Tensor> extra;  // not version-checked (e.g. integer indices made by the op)

  // ---- used by apply<Op> and the node ----
  void set_recording(bool r) { recording_ = r; }
  void set_owner(Node* node) { owner_ = node; }
  void push_needs_grad(bool b) { needs_grad_.push_back(b); }
  void convert_saved_outputs(const Tensor& output) {
    for (auto& s : saved_)
      if (s.holds(output)) s.convert_to_output();
  }
  void release() {
    for (auto& s : saved_) s.reset();
    extra.clear();
  }

 private:
  std::shared_ptr<Node> owner() const;
  SmallVector<SavedVariable, 2> saved_;
  SmallVector<uint8_t, 4> needs_grad_;
  Node* owner_ = nullptr;
  bool recording_ = false;
};

template <class Op>
class FunctionNode final : public Node {
 public:
  std::string_view name() const override { return Op::name; }
  GradList apply(GradList&& grads) override { return Op::backward(ctx, grads[0]); }
  void release_variables() override { ctx.release(); }
  Ctx ctx;
};

namespace detail {

inline bool requires_grad_arg(const Tensor& t) { return t.defined() && t.requires_grad(); }
inline bool requires_grad_arg(const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (requires_grad_arg(t)) return true;
  return false;
}
template <class T>
bool requires_grad_arg(const T&) {
  return false;
}

inline void add_edge_arg(Node& node, Ctx& ctx, const Tensor& t) {
  Edge e = t.defined() && t.requires_grad() ? gradient_edge(t) : Edge();
  ctx.push_needs_grad(e.is_valid());
  node.add_next_edge(std::move(e));
}
inline void add_edge_arg(Node& node, Ctx& ctx, const std::vector<Tensor>& ts) {
  for (const auto& t : ts) add_edge_arg(node, ctx, t);
}
template <class T>
void add_edge_arg(Node&, Ctx&, const T&) {}

inline bool same_impl_arg(const Tensor& out, const Tensor& t) { return out.is_same(t); }
inline bool same_impl_arg(const Tensor& out, const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (out.is_same(t)) return true;
  return false;
}
template <class T>
bool same_impl_arg(const Tensor&, const T&) {
  return false;
}

// Gives the output a fresh TensorImpl (same storage and geometry) when forward
// returned one of its inputs unchanged, so recording history never touches the input.
Tensor fresh_alias(const Tensor& t);
// Makes `output` the result of `node`: requires_grad, grad_fn, output_nr 0.
void set_history(Tensor& output, const std::shared_ptr<Node>& node);
// Records where the node was created when anomaly mode is on.
void record_anomaly_context(Node& node);
bool anomaly_mode_enabled();

}  // namespace detail

// Runs Op::forward(ctx, args...), recording a node if any Tensor argument
// requires grad and grad mode is on. The gradient list Op::backward returns
// has one entry per Tensor argument (vector<Tensor> arguments count each element).
template <class Op, class... Args>
Tensor apply(const Args&... args) {
  if (!GradMode::is_enabled() || !(detail::requires_grad_arg(args) || ...)) {
    Ctx ctx;
    return Op::forward(ctx, args...);
  }
  auto node = std::make_shared<FunctionNode<Op>>();
  Ctx& ctx = node->ctx;
  ctx.set_recording(true);
  ctx.set_owner(node.get());
  (detail::add_edge_arg(*node, ctx, args), ...);
  Tensor out;
  {
    AutoGradMode no_grad(false);
    out = Op::forward(ctx, args...);
  }
  if ((detail::same_impl_arg(out, args) || ...)) out = detail::fresh_alias(out);
  else ctx.convert_saved_outputs(out);
  detail::set_history(out, node);
  if (detail::anomaly_mode_enabled()) detail::record_anomaly_context(*node);
  return out;
}

}  // namespace gradiens
