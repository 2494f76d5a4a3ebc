// AutogradContext, the custom function node's backward, and how a custom
// function's outputs join the graph.
#include "engine/autograd/custom_function.h"

#include <fmt/format.h>

#include "engine/autograd/function.h"
#include "engine/functions.h"
#include "engine/type_name.h"

namespace gradiens::autograd {

// libtorch bumps their version counter once forward has returned (wrap_outputs).
void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs)
    if (t.defined()) dirty_.insert(t.impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs)
    if (t.defined()) non_differentiable_.insert(t.impl());
}

void AutogradContext::save_variables(const variable_list& outputs) {
  saved_.clear();
  for (const Tensor& t : to_save_) {
    if (!t.defined()) {
      saved_.emplace_back();
      continue;
    }
    bool is_output = false;
    for (const Tensor& out : outputs) is_output = is_output || (out.defined() && out.is_same(t));
    saved_.emplace_back(t, is_output && t.grad_fn() != nullptr);
  }
  to_save_.clear();
}

variable_list AutogradContext::get_saved_variables() const {
  GD_CHECK(!released_,
           "Trying to backward through the graph a second time (or directly access saved tensors after they have "
           "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
           "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
           "you need to access saved tensors after calling backward.");
  const std::shared_ptr<Node> node = node_.lock();
  variable_list out;
  out.reserve(saved_.size());
  for (const SavedVariable& saved : saved_) out.push_back(saved.defined() ? saved.unpack(node) : Tensor());
  return out;
}

bool AutogradContext::needs_input_grad(size_t index) const {
  const std::shared_ptr<Node> node = node_.lock();
  return node && index < node->num_outputs() && node->next_edge(index).is_valid() &&
         node->should_compute_output(index);
}

bool AutogradContext::needs_input_grad(std::initializer_list<IndexRange> ranges) const {
  for (const IndexRange& range : ranges)
    for (size_t i = range.first; i < range.second; ++i)
      if (needs_input_grad(i)) return true;
  return false;
}

void AutogradContext::release_variables() {
  saved_.clear();
  released_ = true;
}

namespace detail {

std::string node_name(const std::type_info& function) { return "CppNode<" + demangled_type_name(function) + ">"; }

GradList CustomFunctionNodeBase::apply(GradList&& grads) {
  variable_list in(grads.begin(), grads.end());
  in.resize(output_info.size());
  if (ctx.materialize_grads())
    for (size_t i = 0; i < in.size(); ++i)
      if (!in[i].defined() && output_info[i])
        in[i] = zeros(output_info[i]->sizes, TensorOptions().dtype(output_info[i]->dtype).device(output_info[i]->device));
  variable_list out = call_backward(std::move(in));
  const size_t arguments = is_tensor_argument.size();
  if (out.size() > arguments) {
    // Trailing undefined gradients are allowed, as in libtorch.
    for (size_t i = arguments; i < out.size(); ++i)
      GD_CHECK(!out[i].defined(), fmt::format("function {} returned an incorrect number of gradients (expected {}, got {})",
                                              name(), arguments, out.size()));
    out.resize(arguments);
  }
  GD_CHECK(out.size() == arguments, fmt::format("function {} returned an incorrect number of gradients (expected {}, got {})",
                                                name(), arguments, out.size()));
  GradList result;
  for (size_t i = 0; i < arguments; ++i) {
    if (is_tensor_argument[i]) {
      result.push_back(out[i]);
      continue;
    }
    GD_CHECK(!out[i].defined(),
             fmt::format("function {} returned a gradient different than None at position {}, but the corresponding "
                         "forward input was not a Variable",
                         name(), i + 1));
  }
  return result;
}

// Note [Custom function outputs]
// With grad recording on, each output of forward becomes an output of the node:
// - an input forward modified in place (mark_dirty) keeps its identity and gets
//   the node as its grad_fn (a leaf that requires grad cannot be modified so);
// - an input returned unchanged becomes a new alias of it, so the input's own
//   history is untouched;
// - a non-differentiable output (mark_non_differentiable, or an integer one)
//   does not require grad;
// - any other output gets the node as its grad_fn.
// Saved tensors are snapshot afterwards, so a saved output is kept without a
// reference cycle (Note [Saved output cycle]).
void wrap_outputs(CustomFunctionNodeBase& node, const std::shared_ptr<Node>& shared, const variable_list& inputs,
                  variable_list& outputs, bool recording) {
  for (const Tensor& in : inputs)
    if (in.defined() && node.ctx.is_dirty(in)) in.impl()->bump_version();
  for (Tensor& out : outputs) {
    if (!out.defined()) {
      node.output_info.emplace_back();
      continue;
    }
    bool is_input = false;
    for (const Tensor& in : inputs) is_input = is_input || (in.defined() && in.is_same(out));
    const bool dirty = node.ctx.is_dirty(out);
    if (recording && dirty) {
      GD_CHECK(!(out.is_leaf() && out.requires_grad()),
               "a leaf Variable that requires grad is being used in an in-place operation.");
    } else if (recording && is_input) {
      out = gradiens::detail::fresh_alias(out);
    }
    node.output_info.push_back(InputMetadata{DimVector(out.sizes().begin(), out.sizes().end()), out.dtype(), out.device()});
    if (!recording) continue;
    const uint32_t output_nr = shared->add_input_metadata(out);
    TensorImpl& impl = *out.impl();
    if (node.ctx.is_non_differentiable(out) || !out.is_floating_point()) {
      if (!dirty) impl.requires_grad = false;
      continue;
    }
    impl.requires_grad = true;
    impl.grad_fn = shared;
    impl.output_nr = output_nr;
  }
  // Unrecorded (grad mode off, inference mode, nothing requires grad), the node
  // is dropped with what forward asked to save: nothing is snapshot, so
  // inference tensors may be "saved" as in libtorch.
  if (recording) node.ctx.save_variables(outputs);
  if (recording && gradiens::detail::anomaly_mode_enabled()) gradiens::detail::record_anomaly_context(node);
}

}  // namespace detail

}  // namespace gradiens::autograd
