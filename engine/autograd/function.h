// apply<Op>: runs an op's forward and, when grad mode is on and an input
// requires grad, records a FunctionNode<Op> whose backward is Op::backward.
// An op is a struct with `name`, `forward(Ctx&, args...)` and
// `backward(Ctx&, grad)`, written side by side (STYLE.md habit 2), and
// optionally `jvp(out, tangents, args...)`, its forward-mode formula.
#pragma once

#include <array>
#include <atomic>
#include <concepts>
#include <functional>
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
  // Whether the forward input at `index` (counting tensor arguments) gets a
  // gradient: it required grad in forward and, in backward, the pass running
  // wants it (Note [Unneeded outputs]).
  bool needs_input_grad(size_t index) const {
    return index < needs_grad_.size() && needs_grad_[index] && (!owner_ || owner_->should_compute_output(index));
  }

  // The buffer summing the gradient of forward input `index` so far, which the
  // formula may add its result into and return (then the engine adds nothing),
  // when it is a CPU tensor laid out exactly as `like`, the formula's result
  // would be; else an undefined tensor (Note [Accumulating in place] in
  // engine/autograd/engine.cpp). Offered only while the backward runs without
  // create_graph, and at most once per input.
  Tensor accumulation_target(size_t index, const Tensor& like) const {
    Tensor target = owner_ && like.is_cpu() ? owner_->take_accumulation_target(index) : Tensor();
    if (!target.defined() || target.device() != like.device() || target.dtype() != like.dtype() ||
        !(target.sizes() == like.sizes()) || !(target.strides() == like.strides()))
      return Tensor();
    return target;
  }
  // The same for a result that would be a new contiguous CPU tensor of `sizes` and `dtype`.
  Tensor accumulation_target(size_t index, IntArrayRef sizes, ScalarType dtype) const {
    Tensor target = owner_ ? owner_->take_accumulation_target(index) : Tensor();
    if (!target.defined() || !target.is_cpu() || target.dtype() != dtype || !(target.sizes() == sizes) ||
        !target.is_contiguous())
      return Tensor();
    return target;
  }

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

// Note [Inference tensors in normal mode]
// An op whose tensor inputs are all inference tensors is not recorded, even in
// normal mode with one that requires grad (as libtorch, where such tensors skip
// the autograd kernels); with a normal tensor among them it is recorded, and
// saving an inference tensor for backward is then an error.
inline bool inference_arg(const Tensor& t) { return !t.defined() || t.is_inference(); }
inline bool inference_arg(const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (!inference_arg(t)) return false;
  return true;
}
template <class T>
bool inference_arg(const T&) {
  return true;
}

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

// ---- forward-mode AD (engine/autograd/forward_ad.cpp) ----
extern std::atomic<uint64_t> current_dual_level;  // 0 while no DualLevel is open
// Set while an op computes its forward or its tangent: the ops it calls
// internally are implementation details whose tangents nobody reads.
extern thread_local bool forward_ad_paused;
inline bool forward_ad_enabled() {
  return current_dual_level.load(std::memory_order_relaxed) != 0 && !forward_ad_paused;
}
class PauseForwardAD {
 public:
  PauseForwardAD() : previous_(forward_ad_paused) { forward_ad_paused = true; }
  ~PauseForwardAD() { forward_ad_paused = previous_; }
  PauseForwardAD(const PauseForwardAD&) = delete;
  PauseForwardAD& operator=(const PauseForwardAD&) = delete;

 private:
  bool previous_;
};
bool has_tangent(const Tensor& t);
// The tangent of `t` at the open level, or an undefined tensor.
Tensor tangent_of(const Tensor& t);
// Attaches `tangent` (broadcast to out's shape, cast to its dtype) to `out` at
// the open level; an undefined tangent or an integer `out` gets none.
void set_tangent(const Tensor& out, Tensor tangent);
// J t from a backward formula by the double-backward trick (Note [Dual levels]).
Tensor tangent_by_double_backward(const std::function<GradList(const Tensor&)>& backward, const Tensor& out,
                                  const GradList& tangents);

inline bool has_tangent_arg(const Tensor& t) { return has_tangent(t); }
inline bool has_tangent_arg(const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (has_tangent(t)) return true;
  return false;
}
template <class T>
bool has_tangent_arg(const T&) {
  return false;
}

inline void collect_tangent_arg(GradList& tangents, const Tensor& t) { tangents.push_back(tangent_of(t)); }
inline void collect_tangent_arg(GradList& tangents, const std::vector<Tensor>& ts) {
  for (const auto& t : ts) tangents.push_back(tangent_of(t));
}
template <class T>
void collect_tangent_arg(GradList&, const T&) {}

template <class Op, class... Args>
concept HasJvp = requires(const Tensor& out, const GradList& tangents, const Args&... args) {
  { Op::jvp(out, tangents, args...) } -> std::convertible_to<Tensor>;
};

// An input gets a gradient from backward when it has an edge or (under forward
// AD) a tangent the double-backward trick needs.
inline void add_edge_arg(Node& node, Ctx& ctx, bool dual, const Tensor& t) {
  Edge e = t.defined() && t.requires_grad() ? gradient_edge(t) : Edge();
  ctx.push_needs_grad(e.is_valid() || (dual && has_tangent(t)));
  node.add_next_edge(std::move(e));
}
inline void add_edge_arg(Node& node, Ctx& ctx, bool dual, const std::vector<Tensor>& ts) {
  for (const auto& t : ts) add_edge_arg(node, ctx, dual, t);
}
template <class T>
void add_edge_arg(Node&, Ctx&, bool, const T&) {}

inline void add_tangent_need_arg(Ctx& ctx, const Tensor& t) { ctx.push_needs_grad(has_tangent(t)); }
inline void add_tangent_need_arg(Ctx& ctx, const std::vector<Tensor>& ts) {
  for (const auto& t : ts) ctx.push_needs_grad(has_tangent(t));
}
template <class T>
void add_tangent_need_arg(Ctx&, const T&) {}

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

// ---- views (engine/autograd/views.cpp, Note [View creation meta]) ----
// Set while apply<Op> runs a recorded forward (with grad mode off), so views
// made there are not taken for no-grad views.
extern thread_local bool in_recorded_forward;
class RecordedForwardScope {
 public:
  explicit RecordedForwardScope(bool recorded) : previous_(in_recorded_forward) { in_recorded_forward |= recorded; }
  ~RecordedForwardScope() { in_recorded_forward = previous_; }
  RecordedForwardScope(const RecordedForwardScope&) = delete;
  RecordedForwardScope& operator=(const RecordedForwardScope&) = delete;

 private:
  bool previous_;
};
// Makes `view` (a new impl sharing base's storage) a view of `base`: its root
// base, its creation meta, its inference flag.
void mark_as_view(TensorImpl& view, const Tensor& base);
// Before a recorded in-place write to `impl`: libtorch's errors for a view that
// may not be written so (a no-grad or inference-mode one, a view of a leaf).
void check_inplace_on_view(const TensorImpl& impl);
// libtorch's error for a no-grad or inference-mode view whose storage was
// written in place since it was taken, once its history is asked for.
void check_view_not_rebased(const TensorImpl& impl);
// Makes `output` the result of `node`: requires_grad, grad_fn, output_nr 0.
void set_history(Tensor& output, const std::shared_ptr<Node>& node);
// Records where the node was created when anomaly mode is on.
void record_anomaly_context(Node& node);
bool anomaly_mode_enabled();

// The output tangent of Op under forward AD: its jvp formula when it has one,
// else the double-backward trick on its backward formula (which needs `ctx`
// to have recorded its saved tensors).
template <class Op, class... Args>
Tensor forward_tangent(Ctx& ctx, const Tensor& out, const Args&... args) {
  GradList tangents;
  (collect_tangent_arg(tangents, args), ...);
  if constexpr (HasJvp<Op, Args...>) {
    return Op::jvp(out, tangents, args...);
  } else {
    return tangent_by_double_backward([&ctx](const Tensor& g) { return Op::backward(ctx, g); }, out, tangents);
  }
}

}  // namespace detail

// Whether anyone will differentiate a result computed from `t`: reverse mode
// (grad mode on and t requires grad) or forward mode (t is a dual tensor). Ops
// that skip derivative-only work (singular vectors, gathers) test this.
inline bool derivative_needed(const Tensor& t) {
  return (GradMode::is_enabled() && t.requires_grad()) || (detail::forward_ad_enabled() && detail::has_tangent(t));
}

// For jvp formulas, where an undefined tangent stands for zeros: the sum of
// two tangents (undefined when both are), and a tangent made concrete.
Tensor add_tangents(const Tensor& a, const Tensor& b);
Tensor tangent_or_zeros(const Tensor& tangent, const Tensor& like);

// Runs Op::forward(ctx, args...), recording a node if any Tensor argument
// requires grad and grad mode is on. The gradient list Op::backward returns
// has one entry per Tensor argument (vector<Tensor> arguments count each
// element). Under forward AD, an output of an op with a dual input gets a tangent.
template <class Op, class... Args>
Tensor apply(const Args&... args) {
  const bool record = GradMode::is_enabled() && (detail::requires_grad_arg(args) || ...) &&
                      !(detail::inference_arg(args) && ...);
  const bool dual = detail::forward_ad_enabled() && (detail::has_tangent_arg(args) || ...);
  if (!record && (!dual || detail::HasJvp<Op, Args...>)) {
    Ctx ctx;
    if (!dual) return Op::forward(ctx, args...);
    detail::PauseForwardAD pause;
    Tensor out = Op::forward(ctx, args...);
    if ((detail::same_impl_arg(out, args) || ...)) out = detail::fresh_alias(out);
    detail::set_tangent(out, detail::forward_tangent<Op>(ctx, out, args...));
    return out;
  }
  auto node = std::make_shared<FunctionNode<Op>>();
  Ctx& ctx = node->ctx;
  ctx.set_recording(true);
  ctx.set_owner(node.get());
  if (record) (detail::add_edge_arg(*node, ctx, dual, args), ...);
  else (detail::add_tangent_need_arg(ctx, args), ...);
  Tensor out;
  {
    AutoGradMode no_grad(false);
    detail::PauseForwardAD pause;
    detail::RecordedForwardScope recorded(record);
    out = Op::forward(ctx, args...);
  }
  const bool aliases_input = (detail::same_impl_arg(out, args) || ...);
  if (aliases_input) out = detail::fresh_alias(out);
  if (record) {
    if (!aliases_input) ctx.convert_saved_outputs(out);
    detail::set_history(out, node);
    if (detail::anomaly_mode_enabled()) detail::record_anomaly_context(*node);
  }
  if (dual) {
    detail::PauseForwardAD pause;
    detail::set_tangent(out, detail::forward_tangent<Op>(ctx, out, args...));
  }
  return out;
}

}  // namespace gradiens
