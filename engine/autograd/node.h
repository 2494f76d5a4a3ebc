// Node (a Function of the tape), Edge and the per-output metadata the engine
// uses to sum a gradient back to a broadcast input's shape.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/tensor.h"

namespace gradiens {

class Node;

// Where a gradient flows: input `input_nr` of `function` (which is the
// gradient of that function's forward output number `input_nr`).
struct Edge {
  Edge() = default;
  Edge(std::shared_ptr<Node> function, uint32_t input_nr) : function(std::move(function)), input_nr(input_nr) {}
  bool is_valid() const { return function != nullptr; }
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
};

// What a forward output looked like, so the gradient arriving for it can be
// checked and reduced to its shape and dtype.
struct InputMetadata {
  DimVector sizes;
  ScalarType dtype = kFloat32;
  Device device;
};

using GradList = SmallVector<Tensor, 2>;

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // PyTorch's name, e.g. "TanhBackward0".
  virtual std::string_view name() const = 0;
  // grads[i] is the gradient of forward output i; returns one gradient per next
  // edge (undefined where there is none).
  virtual GradList apply(GradList&& grads) = 0;
  // Frees saved tensors once a backward without retain_graph has used them.
  virtual void release_variables() {}

  uint64_t sequence_nr() const { return sequence_nr_; }
  const SmallVector<Edge, 2>& next_edges() const { return next_edges_; }
  size_t num_outputs() const { return next_edges_.size(); }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  const SmallVector<InputMetadata, 1>& input_metadata() const { return input_metadata_; }

  void add_next_edge(Edge edge) { next_edges_.push_back(std::move(edge)); }
  uint32_t add_input_metadata(const Tensor& forward_output);

  // Hooks on the gradient arriving for forward output `output_nr` (tensor hooks).
  unsigned add_pre_hook(uint32_t output_nr, TensorHook hook);
  // False when `handle` was never added here (removing one twice is fine, as in libtorch).
  bool remove_pre_hook(unsigned handle);
  const std::vector<std::tuple<unsigned, uint32_t, TensorHook>>& pre_hooks() const { return pre_hooks_; }

  // Whether the backward pass now running wants the gradient for next edge
  // `i`: false for an edge that leads to no input of autograd::grad (or of
  // backward(inputs=...)), so the formula can skip it (Note [Unneeded outputs]).
  bool should_compute_output(size_t i) const { return i >= 64 || !((unneeded_outputs_ >> i) & 1); }

  // While apply runs: the buffer that already sums the gradients arriving
  // through next edge `i`, if the engine offers it to be added into, else an
  // undefined tensor; taking it withdraws the offer (Note [Accumulating in
  // place] in engine/autograd/engine.cpp).
  Tensor take_accumulation_target(size_t i);

  // Where the node was created, filled in anomaly mode, and the node whose
  // backward (under create_graph) created it.
  std::string creation_trace;
  std::weak_ptr<Node> anomaly_parent;

 protected:
  SmallVector<Edge, 2> next_edges_;
  SmallVector<InputMetadata, 1> input_metadata_;

 private:
  friend class GraphTask;
  uint64_t sequence_nr_;
  std::vector<std::tuple<unsigned, uint32_t, TensorHook>> pre_hooks_;
  std::vector<unsigned> removed_pre_hooks_;
  // Scratch space of the engine for the backward pass currently running.
  uint64_t graph_task_id_ = 0;
  int32_t pending_dependencies_ = 0;
  bool needed_ = false;
  uint64_t unneeded_outputs_ = 0;  // bit i: next edge i leads nowhere needed (only while apply runs)
  GradList accumulation_targets_;  // per next edge (only while apply runs)
  GradList input_buffer_;
};

// The leaf's end of the graph: adds the arriving gradient into `.grad`.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const std::shared_ptr<TensorImpl>& variable);
  std::string_view name() const override { return "AccumulateGrad"; }
  GradList apply(GradList&& grads) override;
  std::shared_ptr<TensorImpl> variable() const { return variable_.lock(); }

 private:
  std::weak_ptr<TensorImpl> variable_;  // weak: the leaf owns this node, not the reverse
};

// The edge a gradient for `t` must be sent to: its grad_fn, or its leaf's
// AccumulateGrad (created on first use), or an invalid edge.
Edge gradient_edge(const Tensor& t);

}  // namespace gradiens
