// autograd::checkpoint and its backward node, CheckpointFunctionBackward
// (see Note [Checkpoint] in checkpoint.h).
#include "engine/autograd/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "engine/autograd/function.h"
#include "engine/autograd/grad_mode.h"
#include "engine/autograd/node.h"
#include "engine/autograd/saved_variable.h"
#include "engine/generator.h"

namespace gradiens::autograd {

namespace {

// Leaves standing in for the inputs that require grad, so that gradients are
// captured right at them and the recomputed graph never reaches the inputs' history.
std::vector<Tensor> make_stand_ins(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (const Tensor& t : inputs) out.push_back(t.defined() && t.requires_grad() ? t.detach().requires_grad_(true) : t);
  return out;
}

// Puts the default generator at `state` for a scope and back where it was after.
class RngReplay {
 public:
  RngReplay(bool active, const GeneratorState& state) : active_(active) {
    if (!active_) return;
    saved_ = default_generator().get_state();
    default_generator().set_state(state);
  }
  ~RngReplay() {
    if (active_) default_generator().set_state(saved_);
  }
  RngReplay(const RngReplay&) = delete;
  RngReplay& operator=(const RngReplay&) = delete;

 private:
  bool active_;
  GeneratorState saved_;
};

// Note [Private accumulators for captured leaves]
// The recomputation must reach a captured parameter, and autograd::grad then
// captures its gradient at the parameter's AccumulateGrad, after running that
// node's tensor hooks; the outer pass would run them a second time when the
// gradient arrives there through the checkpoint's edge. So for the length of
// the replay each captured leaf gets a fresh, hook-free AccumulateGrad (never
// executed: grad() only captures), and its own is put back afterwards.
class PrivateAccumulators {
 public:
  explicit PrivateAccumulators(std::vector<std::shared_ptr<TensorImpl>> leaves) : leaves_(std::move(leaves)) {
    for (const auto& leaf : leaves_) {
      saved_.push_back(leaf->grad_accumulator);
      leaf->grad_accumulator = std::make_shared<AccumulateGrad>(leaf);
    }
  }
  ~PrivateAccumulators() {
    for (size_t i = 0; i < leaves_.size(); ++i) leaves_[i]->grad_accumulator = std::move(saved_[i]);
  }
  PrivateAccumulators(const PrivateAccumulators&) = delete;
  PrivateAccumulators& operator=(const PrivateAccumulators&) = delete;

 private:
  std::vector<std::shared_ptr<TensorImpl>> leaves_;
  std::vector<std::shared_ptr<Node>> saved_;
};

class CheckpointNode final : public Node {
 public:
  std::string_view name() const override { return "CheckpointFunctionBackward"; }
  GradList apply(GradList&& grads) override;
  void release_variables() override {
    for (SavedVariable& s : saved_inputs) s.reset();
  }

  TensorFunction fn;
  bool preserve_rng_state = true;
  GeneratorState rng_state;
  std::vector<SavedVariable> saved_inputs;
  // next_edges_ holds, in order, one edge per input that requires grad (input
  // index in input_of_edge) and then one per captured leaf (its AccumulateGrad).
  std::vector<size_t> input_of_edge;
};

GradList CheckpointNode::apply(GradList&& grads) {
  GD_CHECK(!GradMode::is_enabled(),
           "checkpoint does not support create_graph=true: the gradient of a checkpointed segment is computed by a "
           "separate backward pass over its recomputation, which records no graph. Run the segment without "
           "checkpoint to differentiate its gradient.");
  const std::shared_ptr<Node> self = shared_from_this();
  std::vector<Tensor> inputs;
  inputs.reserve(saved_inputs.size());
  for (const SavedVariable& s : saved_inputs) inputs.push_back(s.unpack(self));
  const std::vector<Tensor> stand_ins = make_stand_ins(inputs);

  std::vector<std::shared_ptr<TensorImpl>> leaves;
  for (size_t e = input_of_edge.size(); e < next_edges_.size(); ++e)
    leaves.push_back(static_cast<AccumulateGrad*>(next_edges_[e].function.get())->variable());
  std::erase(leaves, nullptr);
  PrivateAccumulators private_accumulators(leaves);

  std::vector<Tensor> outputs;
  {
    RngReplay replay(preserve_rng_state, rng_state);
    AutoGradMode enable(true);
    outputs = fn(stand_ins);
  }
  GD_CHECK(outputs.size() == input_metadata_.size(),
           fmt::format("checkpoint: the recomputed function returned {} tensors, but the forward returned {}",
                       outputs.size(), input_metadata_.size()));

  std::vector<Tensor> roots, root_grads;
  for (size_t i = 0; i < outputs.size() && i < grads.size(); ++i) {
    if (!grads[i].defined() || !outputs[i].defined() || !outputs[i].requires_grad()) continue;
    GD_CHECK(outputs[i].sizes() == IntArrayRef(input_metadata_[i].sizes),
             fmt::format("checkpoint: output {} of the recomputed function has a different shape than in the forward",
                         i));
    roots.push_back(outputs[i]);
    root_grads.push_back(grads[i]);
  }
  std::vector<Tensor> targets;
  std::vector<size_t> edge_of_target;
  for (size_t e = 0; e < next_edges_.size(); ++e) {
    Tensor target;
    if (e < input_of_edge.size()) {
      target = stand_ins[input_of_edge[e]];
    } else if (auto leaf = static_cast<AccumulateGrad*>(next_edges_[e].function.get())->variable()) {
      target = Tensor(leaf);
    }
    if (!target.defined() || !target.requires_grad()) continue;
    targets.push_back(target);
    edge_of_target.push_back(e);
  }
  GradList result(next_edges_.size());
  if (roots.empty() || targets.empty()) return result;
  std::vector<Tensor> found = grad(roots, targets, root_grads, /*retain_graph=*/false, /*create_graph=*/false,
                                   /*allow_unused=*/true);
  for (size_t k = 0; k < found.size(); ++k) result[edge_of_target[k]] = found[k];
  return result;
}

// Note [Finding captured leaves]
// Every node fn's ops created is newer than the checkpoint node (made just
// before fn runs; sequence numbers only grow on a thread). Walking fn's graph
// from its outputs through those nodes, each edge that leaves it points at a
// stand-in's AccumulateGrad, at a captured leaf's AccumulateGrad (the
// parameters that need an edge of their own), or at the history of a captured
// non-leaf, which cannot be replayed without its graph and is refused.
std::vector<std::shared_ptr<Node>> captured_leaves(const std::vector<Tensor>& recorded,
                                                    const std::vector<Tensor>& stand_ins, uint64_t first_sequence_nr) {
  std::vector<std::shared_ptr<Node>> leaves;
  std::unordered_set<const Node*> visited;
  std::vector<const Node*> stack;
  auto is_stand_in = [&](const std::shared_ptr<TensorImpl>& impl) {
    return std::any_of(stand_ins.begin(), stand_ins.end(), [&](const Tensor& s) { return s.impl_ptr() == impl; });
  };
  auto follow = [&](const Edge& edge) {
    if (!edge.is_valid()) return;
    const std::shared_ptr<Node>& function = edge.function;
    if (auto* accumulate = dynamic_cast<AccumulateGrad*>(function.get())) {
      if (is_stand_in(accumulate->variable())) return;
      if (std::find(leaves.begin(), leaves.end(), function) == leaves.end()) leaves.push_back(function);
      return;
    }
    GD_CHECK(function->sequence_nr() > first_sequence_nr,
             fmt::format("checkpoint: the function uses a tensor that requires grad and was computed outside it "
                         "(its grad_fn is {}) without receiving it in `inputs`; pass that tensor in `inputs`",
                         function->name()));
    if (visited.insert(function.get()).second) stack.push_back(function.get());
  };
  for (const Tensor& out : recorded)
    if (out.defined() && out.requires_grad()) follow(gradient_edge(out));
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const Edge& edge : node->next_edges()) follow(edge);
  }
  return leaves;
}

}  // namespace

std::vector<Tensor> checkpoint(const TensorFunction& fn, const std::vector<Tensor>& inputs, bool preserve_rng_state) {
  if (!GradMode::is_enabled()) return fn(inputs);

  auto node = std::make_shared<CheckpointNode>();
  node->fn = fn;
  node->preserve_rng_state = preserve_rng_state;
  if (preserve_rng_state) node->rng_state = default_generator().get_state();
  for (const Tensor& t : inputs) node->saved_inputs.emplace_back(t, /*is_output=*/false);

  const std::vector<Tensor> stand_ins = make_stand_ins(inputs);
  std::vector<Tensor> recorded = fn(stand_ins);
  std::vector<std::shared_ptr<Node>> leaves = captured_leaves(recorded, stand_ins, node->sequence_nr());

  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!stand_ins[i].defined() || !stand_ins[i].requires_grad()) continue;
    node->add_next_edge(gradient_edge(inputs[i]));
    node->input_of_edge.push_back(i);
  }
  for (auto& leaf : leaves) node->add_next_edge(Edge(std::move(leaf), 0));
  if (node->num_outputs() == 0) return recorded;  // nothing to differentiate: a plain call

  // The outputs keep their values and lose fn's graph, which dies with `recorded`.
  std::vector<Tensor> outputs;
  outputs.reserve(recorded.size());
  for (size_t i = 0; i < recorded.size(); ++i) {
    GD_CHECK(recorded[i].defined(), fmt::format("checkpoint: the function returned an undefined tensor at index {}", i));
    Tensor out = recorded[i].detach();
    const uint32_t output_nr = node->add_input_metadata(out);
    if (out.is_floating_point()) {
      out.impl()->requires_grad = true;
      out.impl()->grad_fn = node;
      out.impl()->output_nr = output_nr;
    }
    outputs.push_back(std::move(out));
  }
  if (gradiens::detail::anomaly_mode_enabled()) gradiens::detail::record_anomaly_context(*node);
  return outputs;
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input, bool preserve_rng_state) {
  auto wrapped = [fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; };
  return checkpoint(TensorFunction(wrapped), std::vector<Tensor>{input}, preserve_rng_state)[0];
}

}  // namespace gradiens::autograd
