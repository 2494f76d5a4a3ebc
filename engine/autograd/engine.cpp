// The backward engine: dependency counting from the roots, a ready queue
// ordered by creation (newest first), gradient accumulation per node input,
// reduction of gradients to broadcast inputs' shapes, hooks and capture for
// autograd::grad. Also the Tensor methods that drive autograd.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <exception>
#include <queue>
#include <thread>

#include "engine/autograd/autograd.h"
#include "engine/autograd/function.h"
#include "engine/autograd/node.h"
#include "engine/autograd/thread_state.h"
#include "engine/autograd/custom_function.h"
#include "engine/functions.h"
#include "engine/warning.h"

namespace gradiens {

namespace {
std::atomic<uint64_t> next_graph_task_id{1};
bool anomaly_enabled = false;
bool anomaly_check_nan = true;
// The node whose backward runs now on this thread (the parent of nodes a
// create_graph backward records, in anomaly mode).
[[gnu::tls_model("initial-exec")]] thread_local Node* current_node = nullptr;
// Ids of the backward passes running on this thread, outermost first (a hook
// or a checkpointed backward can start a pass inside another).
thread_local std::vector<uint64_t> active_graph_tasks;

std::string shape_str(IntArrayRef sizes) {
  std::string s;
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return "[" + s + "]";
}

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[shape.size() - 1 - i], d = desired[desired.size() - 1 - i];
    if (s != d && s != 1) return false;
  }
  return true;
}
}  // namespace

namespace detail {
bool anomaly_mode_enabled() { return anomaly_enabled; }
void record_anomaly_context(Node& node) {
  // Besides the op, what it computed and from what: that tells one MulBackward0
  // from the hundred others of a network.
  auto describe = [](const InputMetadata& meta) {
    return fmt::format("{} {}", legacy_tensor_type_name(meta.dtype), shape_str(meta.sizes));
  };
  std::string computed;
  for (const InputMetadata& meta : node.input_metadata()) computed += (computed.empty() ? "" : ", ") + describe(meta);
  std::vector<std::string> sources;
  for (const Edge& edge : node.next_edges()) {
    if (!edge.is_valid()) sources.push_back("a tensor that does not require grad");
    else if (dynamic_cast<const AccumulateGrad*>(edge.function.get()) && !edge.function->input_metadata().empty())
      sources.push_back("a leaf " + describe(edge.function->input_metadata()[0]));
    else sources.push_back(fmt::format("{} (sequence number {})", edge.function->name(), edge.function->sequence_nr()));
  }
  std::string from;
  for (size_t i = 0; i < sources.size(); ++i)
    from += (i == 0 ? "" : i + 1 == sources.size() ? " and " : ", ") + sources[i];
  node.creation_trace = fmt::format("{} (sequence number {})", node.name(), node.sequence_nr());
  if (!computed.empty()) node.creation_trace += " computing " + computed;
  if (!from.empty()) node.creation_trace += " from " + from;
  if (current_node) node.anomaly_parent = current_node->weak_from_this();
}
}  // namespace detail

autograd::DetectAnomalyGuard::DetectAnomalyGuard(bool check_nan)
    : previous_(anomaly_enabled), previous_check_nan_(anomaly_check_nan) {
  anomaly_enabled = true;
  anomaly_check_nan = check_nan;
}
autograd::DetectAnomalyGuard::~DetectAnomalyGuard() {
  anomaly_enabled = previous_;
  anomaly_check_nan = previous_check_nan_;
}

namespace {
// Before a failed node's error goes on, in anomaly mode: where the node was
// created, then the chain of nodes whose backward created it (libtorch's print_stack).
void warn_anomaly_history(const Node& node) {
  warn(fmt::format("Error detected in {}. Traceback of forward call that caused the error:\n{}", node.name(),
                   node.creation_trace));
  for (std::shared_ptr<Node> parent = node.anomaly_parent.lock(); parent; parent = parent->anomaly_parent.lock())
    warn(fmt::format("\n\nPrevious calculation was induced by {}. Traceback of forward call that induced the "
                     "previous calculation:\n{}",
                     parent->name(), parent->creation_trace));
}

// libtorch runs every node reached; gradiens skips one whose incoming gradients
// are all undefined, except a custom function, whose backward may want zeros
// for them (AutogradContext::set_materialize_grads).
bool runs_without_gradients(const Node& node) {
  return dynamic_cast<const autograd::detail::CustomFunctionNodeBase*>(&node) != nullptr;
}
}  // namespace

// One backward pass. The per-node state lives in the nodes themselves
// (tagged with this task's id), which keeps a 10k-node pass allocation-free
// apart from the ready queue.
class GraphTask {
 public:
  struct Capture {
    Node* node;
    uint32_t input_nr;
    size_t result_index;
  };

  GraphTask(bool keep_graph, bool create_graph) : id_(next_graph_task_id++), keep_graph_(keep_graph),
                                                  create_graph_(create_graph) {}

  // Runs backward from `roots` seeded with `root_grads`. With captures (grad()
  // or backward(inputs=...)) only the nodes leading to them run, and with
  // `accumulate` false AccumulateGrad nodes are never executed.
  void run(const std::vector<Edge>& roots, std::vector<Tensor> root_grads, const std::vector<Capture>& captures,
           bool accumulate, std::vector<Tensor>* captured) {
    AutoGradMode grad_mode(create_graph_);
    ActiveScope active(*this);
    discover(roots);
    bool prune = !captures.empty();
    if (prune) mark_needed(captures);

    auto later_first = [](Node* a, Node* b) { return a->sequence_nr_ < b->sequence_nr_; };
    std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
    for (size_t i = 0; i < roots.size(); ++i) {
      Node* n = roots[i].function.get();
      accumulate_input(*n, roots[i].input_nr, std::move(root_grads[i]));
    }
    std::vector<Node*> queued_roots;  // several roots may share a node
    for (const Edge& r : roots) {
      Node* n = r.function.get();
      if (n->pending_dependencies_ != 0) continue;
      if (std::find(queued_roots.begin(), queued_roots.end(), n) != queued_roots.end()) continue;
      queued_roots.push_back(n);
      ready.push(n);
    }

    while (!ready.empty()) {
      Node* node = ready.top();
      ready.pop();
      GradList inputs = std::move(node->input_buffer_);
      node->input_buffer_ = GradList();
      run_pre_hooks(*node, inputs);
      for (const Capture& c : captures)
        if (c.node == node && c.input_nr < inputs.size()) (*captured)[c.result_index] = inputs[c.input_nr];

      bool is_accumulator = dynamic_cast<AccumulateGrad*>(node) != nullptr;
      bool execute = prune ? any_child_needed(*node) || (is_accumulator && accumulate && node->needed_) : true;
      if (is_accumulator && !accumulate) execute = false;
      bool any_defined = std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined(); });
      GradList outputs;
      uint64_t added_in_place = 0;  // bit i: output i came back as the sum offered for it, added into already
      if (execute && (any_defined || runs_without_gradients(*node))) {
        // Note [Unneeded outputs]: the formula skips gradients nobody asked for.
        const uint64_t outer_unneeded = node->unneeded_outputs_;
        node->unneeded_outputs_ = prune ? unneeded_outputs(*node) : 0;
        Node* const outer_node = current_node;
        current_node = node;
        GradList outer_targets = std::move(node->accumulation_targets_);
        GradList offered = create_graph_ || anomaly_enabled ? GradList() : accumulation_targets(*node, prune);
        node->accumulation_targets_ = offered;
        try {
          outputs = node->apply(std::move(inputs));
          if (anomaly_enabled && anomaly_check_nan) check_anomaly(*node, outputs);
        } catch (...) {
          node->unneeded_outputs_ = outer_unneeded;
          node->accumulation_targets_ = std::move(outer_targets);
          current_node = outer_node;
          if (anomaly_enabled) warn_anomaly_history(*node);
          throw;
        }
        current_node = outer_node;
        node->unneeded_outputs_ = outer_unneeded;
        node->accumulation_targets_ = std::move(outer_targets);
        for (size_t i = 0; i < offered.size() && i < outputs.size() && i < 64; ++i)
          if (offered[i].defined() && outputs[i].impl() == offered[i].impl()) added_in_place |= uint64_t{1} << i;
        offered.clear();  // the sums not taken are again their buffers' alone, to be added to in place
        if (!keep_graph_) node->release_variables();
      }
      for (size_t i = 0; i < node->next_edges_.size(); ++i) {
        const Edge& edge = node->next_edges_[i];
        if (!edge.is_valid()) continue;
        Node* child = edge.function.get();
        if (execute && i < outputs.size() && outputs[i].defined() && (!prune || child->needed_) &&
            !((added_in_place >> i) & 1))
          accumulate_input(*child, edge.input_nr, validate(*node, i, *child, edge.input_nr, std::move(outputs[i])));
        if (--child->pending_dependencies_ == 0) ready.push(child);
      }
    }
  }

 private:
  // Note [Reentrant backward]
  // The per-node scratch state belongs to one pass at a time. A pass started
  // inside another (from a hook, or a checkpoint's backward) may reach nodes
  // the outer pass has not finished with; it saves their outer state when it
  // first visits them and puts it back when it ends, however it ends.
  struct OuterState {
    Node* node;
    uint64_t graph_task_id;
    int32_t pending_dependencies;
    bool needed;
    GradList input_buffer;
  };
  class ActiveScope {
   public:
    explicit ActiveScope(GraphTask& task) : task_(task) { active_graph_tasks.push_back(task.id_); }
    ~ActiveScope() {
      task_.finish();
      active_graph_tasks.pop_back();
    }
    ActiveScope(const ActiveScope&) = delete;
    ActiveScope& operator=(const ActiveScope&) = delete;

   private:
    GraphTask& task_;
  };

  // Drops this pass's buffers and gives the outer passes their state back.
  void finish() {
    for (Node* n : discovered_) n->input_buffer_ = GradList();
    for (auto it = outer_states_.rbegin(); it != outer_states_.rend(); ++it) {
      it->node->graph_task_id_ = it->graph_task_id;
      it->node->pending_dependencies_ = it->pending_dependencies;
      it->node->needed_ = it->needed;
      it->node->input_buffer_ = std::move(it->input_buffer);
    }
  }

  // Counts, for every node reachable from the roots, how many edges enter it.
  void discover(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    auto visit = [&](Node* n) {
      if (n->graph_task_id_ == id_) return false;
      if (n->graph_task_id_ != 0 && std::find(active_graph_tasks.begin(), active_graph_tasks.end(),
                                              n->graph_task_id_) != active_graph_tasks.end())
        outer_states_.push_back({n, n->graph_task_id_, n->pending_dependencies_, n->needed_,
                                 std::move(n->input_buffer_)});
      n->graph_task_id_ = id_;
      n->pending_dependencies_ = 0;
      n->needed_ = false;
      n->input_buffer_ = GradList();
      discovered_.push_back(n);
      return true;
    };
    for (const Edge& r : roots)
      if (visit(r.function.get())) stack.push_back(r.function.get());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges_) {
        if (!e.is_valid()) continue;
        Node* child = e.function.get();
        if (visit(child)) stack.push_back(child);
        ++child->pending_dependencies_;
      }
    }
  }

  // A node is needed when it is a capture target or leads to one. Children are
  // created before their parents, so ascending sequence order visits children
  // first (AccumulateGrad nodes are sinks, so their order does not matter).
  void mark_needed(const std::vector<Capture>& captures) {
    for (const Capture& c : captures) c.node->needed_ = true;
    std::vector<Node*> order = discovered_;
    std::sort(order.begin(), order.end(), [](Node* a, Node* b) { return a->sequence_nr_ < b->sequence_nr_; });
    for (Node* n : order)
      if (any_child_needed(*n)) n->needed_ = true;
  }

  // Note [Unneeded outputs]
  // ~~~~~~~~~~~~~~~~~~~~~~~
  // autograd::grad(outputs, inputs) (and backward(inputs=...)) runs only the
  // nodes that lead to `inputs`, but a node that runs would still compute the
  // gradient of every forward input that required grad: through a PINN's
  // nested grads, the weight and bias gradients of every Linear, which nobody
  // reads, and which under create_graph are recorded too. As PyTorch's
  // task_should_compute_output, the engine tells the node, while its formula
  // runs, which next edges lead to a needed node; Ctx::needs_input_grad is
  // false for the others, and the engine drops anything still sent to them.
  // A node not needed never runs, so its pre-hooks see no gradient.
  static uint64_t unneeded_outputs(const Node& n) {
    uint64_t mask = 0;
    const size_t count = std::min<size_t>(n.next_edges_.size(), 64);
    for (size_t i = 0; i < count; ++i) {
      const Edge& e = n.next_edges_[i];
      if (!e.is_valid() || !e.function->needed_) mask |= uint64_t{1} << i;
    }
    return mask;
  }

  bool any_child_needed(const Node& n) const {
    for (const Edge& e : n.next_edges_)
      if (e.is_valid() && e.function->needed_) return true;
    return false;
  }

  // Note [Accumulating in place]
  // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  // A tensor used several times forward gets several gradients backward, which
  // the engine sums into its consumer's input buffer, in place once the sum is
  // a buffer of its own (can_accumulate_in_place). Through a PINN's nested
  // grads that is most tensors, and each add is a pass over memory as long as
  // the kernel that made the gradient. So before a node runs without
  // create_graph (and outside anomaly mode, which checks each gradient), the
  // engine offers it, per next edge, the sum so far when that sum could be
  // added to in place, is large enough for a pass to matter, and no other
  // edge of the node leads to it. A formula may add its result
  // into the offered buffer inside its own kernel (a GEMM with beta = 1, a
  // fused elementwise kernel with an accumulating output) and return that
  // buffer; the engine, seeing the buffer it offered come back for that edge,
  // adds nothing. A fused kernel's sum is the separate add's bit for bit
  // (Note [Accumulating outputs round twice] in kernels/cpu/vector_math.cpp);
  // a GEMM's is C + AB as its kernel forms it.
  // (A formula returning one tensor for two edges into the same buffer, as
  // a + a's, is never offered that buffer and still gets it added twice.)
  static constexpr int64_t kAccumulateInPlaceMinNumel = 4096;

  GradList accumulation_targets(const Node& node, bool prune) const {
    GradList targets;
    const size_t count = node.next_edges_.size();
    for (size_t i = 0; i < std::min<size_t>(count, 64); ++i) {  // run() marks the taken ones in 64 bits
      const Edge& e = node.next_edges_[i];
      if (!e.is_valid() || (prune && !e.function->needed_)) continue;
      const GradList& buffer = e.function->input_buffer_;
      if (e.input_nr >= buffer.size()) continue;
      const Tensor& slot = buffer[e.input_nr];
      if (!slot.defined() || slot.numel() < kAccumulateInPlaceMinNumel || !can_accumulate_in_place(slot, slot))
        continue;
      bool shared = false;
      for (size_t j = 0; j < count && !shared; ++j)
        shared = j != i && node.next_edges_[j].function == e.function && node.next_edges_[j].input_nr == e.input_nr;
      if (shared) continue;
      if (targets.size() < count) targets.resize(count);
      targets[i] = slot;
    }
    return targets;
  }

  void accumulate_input(Node& node, uint32_t input_nr, Tensor grad) {
    if (node.input_buffer_.size() <= input_nr) node.input_buffer_.resize(input_nr + 1);
    Tensor& slot = node.input_buffer_[input_nr];
    if (!slot.defined()) {
      slot = std::move(grad);
    } else if (can_accumulate_in_place(slot, grad)) {
      slot.add_(grad);
    } else {
      slot = add(slot, grad);
    }
  }

  // As PyTorch's InputBuffer: without create_graph, a summed gradient that nothing
  // else references (no other handle, no view of its storage) is added to in
  // place instead of allocating a new buffer for every further contribution.
  static bool can_accumulate_in_place(const Tensor& slot, const Tensor& grad) {
    const TensorImpl& s = *slot.impl();
    return !GradMode::is_enabled() && slot.impl_ptr().use_count() == 1 && s.storage.use_count() == 1 &&
           !s.sparse && !grad.impl()->sparse && s.is_contiguous && !s.requires_grad &&
           slot.sizes() == grad.sizes() && slot.dtype() == grad.dtype() && slot.device() == grad.device();
  }

  void run_pre_hooks(Node& node, GradList& inputs) {
    std::vector<std::tuple<unsigned, uint32_t, TensorHook>> hooks = node.pre_hooks_;
    for (auto& [handle, output_nr, hook] : hooks) {
      if (output_nr >= inputs.size() || !inputs[output_nr].defined()) continue;
      Tensor replaced = hook(inputs[output_nr]);
      if (replaced.defined()) inputs[output_nr] = replaced;
    }
  }

  // The engine, not each op, sums a gradient back to a broadcast input's shape
  // and casts it to the input's dtype.
  Tensor validate(const Node& producer, size_t index, const Node& consumer, uint32_t input_nr, Tensor grad) {
    if (input_nr >= consumer.input_metadata_.size()) return grad;
    const InputMetadata& meta = consumer.input_metadata_[input_nr];
    if (!(grad.sizes() == IntArrayRef(meta.sizes))) {
      if (!is_expandable_to(meta.sizes, grad.sizes()))
        throw Error(fmt::format("Function {} returned an invalid gradient at index {} - got {} but expected shape "
                                "compatible with {}",
                                producer.name(), index, shape_str(grad.sizes()), shape_str(meta.sizes)));
      grad = sum_to(grad, meta.sizes);
    }
    if (grad.dtype() != meta.dtype) grad = grad.to(meta.dtype);
    return grad;
  }

  void check_anomaly(const Node& node, const GradList& outputs) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].defined() || !outputs[i].is_floating_point()) continue;
      if (isnan(outputs[i]).any().item<bool>())
        throw Error(fmt::format("Function '{}' returned nan values in its {}th output.{}", node.name(), i,
                                node.creation_trace.empty() ? "" : " The node was created by: " + node.creation_trace));
    }
  }

  uint64_t id_;
  bool keep_graph_;
  bool create_graph_;
  std::vector<Node*> discovered_;
  std::vector<OuterState> outer_states_;  // see Note [Reentrant backward]
};

namespace {

// Note [Deep reentrant backward]
// A backward started inside a node's backward (a custom function calling
// backward, a checkpoint) runs on the same thread, below the frames of the
// passes around it; thousands of nested passes would overflow the stack. As
// libtorch, past a depth the pass moves to a new thread (so a fresh stack),
// which takes this thread's autograd state and the list of passes around it,
// and this thread waits for it. The new thread's sequence counter comes back,
// so nodes it created still count as older than those created afterwards.
// (The current CUDA stream is not carried: such a pass runs on the default stream.)
constexpr size_t kReentrantPassesPerThread = 50;

void run_task(GraphTask& task, const std::vector<Edge>& roots, std::vector<Tensor> seeds,
              const std::vector<GraphTask::Capture>& captures, bool accumulate, std::vector<Tensor>* captured) {
  const size_t depth = active_graph_tasks.size();
  if (depth == 0 || depth % kReentrantPassesPerThread != 0) {
    task.run(roots, std::move(seeds), captures, accumulate, captured);
    return;
  }
  detail::AutogradThreadState state = detail::AutogradThreadState::capture();
  const std::vector<uint64_t> outer_tasks = active_graph_tasks;
  Node* const outer_node = current_node;
  std::exception_ptr error;
  std::thread worker([&] {
    state.install();
    active_graph_tasks = outer_tasks;
    current_node = outer_node;
    try {
      task.run(roots, std::move(seeds), captures, accumulate, captured);
    } catch (...) {
      error = std::current_exception();
    }
    state.next_sequence_nr = detail::AutogradThreadState::capture().next_sequence_nr;
  });
  worker.join();
  detail::AutogradThreadState here = detail::AutogradThreadState::capture();
  here.next_sequence_nr = std::max(here.next_sequence_nr, state.next_sequence_nr);
  here.install();
  if (error) std::rethrow_exception(error);
}

// Root edge and seed gradient for each output, with PyTorch's errors.
void prepare_roots(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                   std::vector<Edge>& roots, std::vector<Tensor>& seeds) {
  GD_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(),
           fmt::format("grad requires one grad_output per output: got {} outputs and {} grad_outputs",
                       outputs.size(), grad_outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    GD_CHECK(out.defined(), fmt::format("element {} of tensors is undefined", i));
    GD_CHECK(out.requires_grad(),
             fmt::format("element {} of tensors does not require grad and does not have a grad_fn", i));
    Tensor seed = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!seed.defined()) {
      GD_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      seed = ones_like(out);
    } else {
      GD_CHECK(seed.sizes() == out.sizes(),
               fmt::format("Mismatch in shape: grad_output[{}] has a shape of {} and output[{}] has a shape of {}.",
                           i, shape_str(seed.sizes()), i, shape_str(out.sizes())));
    }
    roots.push_back(gradient_edge(out));
    seeds.push_back(seed);
  }
}

}  // namespace

std::vector<Tensor> autograd::grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                   const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                                   bool create_graph, bool allow_unused) {
  GD_CHECK(!inputs.empty(), "grad requires non-empty inputs.");
  std::vector<Edge> roots;
  std::vector<Tensor> seeds;
  prepare_roots(outputs, grad_outputs, roots, seeds);
  std::vector<GraphTask::Capture> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GD_CHECK(inputs[i].defined() && inputs[i].requires_grad(),
             "One of the differentiated Tensors does not require grad");
    Edge e = gradient_edge(inputs[i]);
    captures.push_back({e.function.get(), e.input_nr, i});
  }
  std::vector<Tensor> result(inputs.size());
  GraphTask task(retain_graph.value_or(create_graph), create_graph);
  run_task(task, roots, std::move(seeds), captures, /*accumulate=*/false, &result);
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].defined()) {
      GD_CHECK(allow_unused,
               "One of the differentiated Tensors appears to not have been used in the graph. Set "
               "allow_unused=True if this is the desired behavior.");
      continue;
    }
    // Captured gradients are not reduced by the engine's consumer check; match the input.
    if (!(result[i].sizes() == inputs[i].sizes())) result[i] = sum_to(result[i], inputs[i].sizes());
    if (!create_graph) result[i] = result[i].detach();
  }
  return result;
}

void autograd::backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
                        std::optional<bool> retain_graph, bool create_graph, const std::vector<Tensor>& inputs) {
  std::vector<Edge> roots;
  std::vector<Tensor> seeds;
  prepare_roots(tensors, grad_tensors, roots, seeds);
  std::vector<GraphTask::Capture> captures;
  std::vector<Tensor> unused(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    GD_CHECK(inputs[i].defined() && inputs[i].requires_grad(),
             "One of the differentiated Tensors does not require grad");
    // A non-leaf input gets its .grad as libtorch gives it: it retains its grad from now on.
    if (!inputs[i].is_leaf()) Tensor(inputs[i]).retain_grad();
    Edge e = gradient_edge(inputs[i]);
    captures.push_back({e.function.get(), e.input_nr, i});
  }
  if (create_graph) {
    static std::atomic<bool> warned{false};
    warn_once(warned,
              "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
              "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
              "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
              "to None after use to break the cycle and avoid the leak.");
  }
  GraphTask task(retain_graph.value_or(create_graph), create_graph);
  run_task(task, roots, std::move(seeds), captures, /*accumulate=*/true, &unused);
}

// ---- Tensor methods that drive autograd ----

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<std::vector<Tensor>> inputs) const {
  if (inputs) GD_CHECK(!inputs->empty(), "'inputs' argument to backward() cannot be empty.");
  autograd::backward({*this}, {gradient}, retain_graph, create_graph, inputs.value_or(std::vector<Tensor>{}));
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  TensorImpl& impl = checked();
  if (!requires_grad && impl.grad_fn)
    throw Error(
        "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
        "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  GD_CHECK(!requires_grad || !impl.is_inference || InferenceMode::is_enabled(),
           "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  GD_CHECK(!requires_grad || gradiens::is_floating_point(impl.dtype),
           fmt::format("Only Tensors of floating point and complex dtype can require gradients (got {})", dtype_name(impl.dtype)));
  impl.requires_grad = requires_grad;
  return *this;
}

void Tensor::set_grad(const Tensor& grad) const {
  TensorImpl& impl = checked();
  if (grad.defined()) {
    GD_CHECK(grad.sizes() == sizes(), fmt::format("assigned grad has data of a different size: {} vs {}",
                                                  shape_str(grad.sizes()), shape_str(sizes())));
    GD_CHECK(grad.dtype() == dtype(), "assigned grad has data of a different type");
  }
  if (impl.grad || grad.defined()) mutable_grad() = grad;
}

Tensor Tensor::grad() const {
  const TensorImpl& impl = checked();
  if (impl.grad_fn && !impl.retains_grad) {
    warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
        "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
        "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
        "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations.");
  }
  return impl.grad ? *impl.grad : Tensor();
}

Tensor& Tensor::mutable_grad() const {
  TensorImpl& impl = checked();
  if (!impl.grad) impl.grad = std::make_shared<Tensor>();
  return *impl.grad;
}

void Tensor::retain_grad() {
  TensorImpl& impl = checked();
  GD_CHECK(impl.requires_grad, "can't retain_grad on Tensor that has requires_grad=False");
  if (!impl.grad_fn || impl.retains_grad) return;
  impl.retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_;
  const Node* registered_on = impl.grad_fn.get();
  impl.grad_fn->add_pre_hook(impl.output_nr, [weak, registered_on](const Tensor& g) {
    // After an in-place op the tensor's value comes from a newer node, which
    // has its own retain_grad hook (commit_inplace); this one is then stale.
    if (auto target = weak.lock(); target && target->grad_fn.get() == registered_on) {
      Tensor& grad = Tensor(target).mutable_grad();
      grad = grad.defined() ? gradiens::add(grad, g.detach()) : g.detach().clone();
    }
    return Tensor();
  });
}

unsigned Tensor::register_hook(TensorHook hook) const {
  GD_CHECK(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  Edge e = gradient_edge(*this);
  return e.function->add_pre_hook(e.input_nr, std::move(hook));
}

void Tensor::remove_hook(unsigned handle) const {
  GD_CHECK(requires_grad() && gradient_edge(*this).function->remove_pre_hook(handle),
           fmt::format("Invalid index, no hook at position {}", handle));
}

Tensor Tensor::detach() const {
  const TensorImpl& src = checked();
  auto impl = std::make_shared<TensorImpl>(src.storage, src.sizes, src.strides, src.storage_offset, src.dtype);
  impl->is_inference = src.is_inference;
  return Tensor(std::move(impl));
}

namespace {
// Points `impl` at src's data: storage, geometry and dtype.
void take_data(TensorImpl& impl, const TensorImpl& src) {
  impl.storage = src.storage;
  impl.sizes = src.sizes;
  impl.strides = src.strides;
  impl.storage_offset = src.storage_offset;
  impl.dtype = src.dtype;
  impl.refresh_geometry();
}
}  // namespace

void Tensor::set_data(const Tensor& new_data) const {
  TensorImpl& impl = checked();
  const TensorImpl& src = *new_data.impl();
  GD_CHECK(!(impl.requires_grad && !gradiens::is_floating_point(src.dtype)),
           fmt::format("set_data: a tensor that requires grad cannot take {} data", dtype_name(src.dtype)));
  // A gradient, or a gradient accumulator (which records the leaf's dtype and
  // shape), of the old dtype or shape no longer matches the new data.
  if (impl.dtype != src.dtype || impl.sizes != src.sizes) {
    impl.grad.reset();
    impl.grad_accumulator.reset();
  }
  take_data(impl, src);
}

void autograd::rebind(const Tensor& target, const Tensor& value) {
  GD_CHECK(target.defined() && value.defined(), "rebind: both tensors must be defined");
  if (target.is_same(value)) return;
  // A leaf that requires grad would need target to share its accumulator;
  // bind an alias instead, whose grad_fn leads back to the leaf.
  Tensor bound = value.is_leaf() && value.requires_grad() ? value.view(value.sizes()) : value;
  TensorImpl& impl = *target.impl();
  const TensorImpl& src = *bound.impl();
  take_data(impl, src);
  impl.requires_grad = src.requires_grad;
  impl.retains_grad = false;
  impl.grad_fn = src.grad_fn;
  impl.output_nr = src.output_nr;
  impl.grad.reset();
  impl.grad_accumulator.reset();
  impl.view = src.view;
  impl.fw_grad = src.fw_grad;
  impl.fw_level = src.fw_level;
  impl.sparse = src.sparse;
  impl.rebound = true;
}

void autograd::zero_grad(const std::vector<Tensor>& tensors, bool set_to_none) {
  for (const Tensor& t : tensors) {
    Tensor g = t.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      t.set_grad(Tensor());
    } else {
      NoGradGuard no_grad;
      // As torch.optim's zero_grad: a gradient that is a view (of a larger
      // buffer) cannot be detached in place, and one without history need not be.
      if (g.grad_fn()) g.detach_();
      else g.requires_grad_(false);
      g.zero_();
    }
  }
}

Tensor& Tensor::detach_() {
  TensorImpl& impl = checked();
  GD_CHECK(!impl.view.is_view,
           "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
           "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
           "detach_() cannot be called on these gradients. To fix this error, please refer to the "
           "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
  impl.grad_fn.reset();
  impl.output_nr = 0;
  impl.requires_grad = false;
  return *this;
}

}  // namespace gradiens
