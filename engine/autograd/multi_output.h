// apply_multi<Op>: apply<Op> (function.h) for an op whose forward returns
// several tensors, recorded as one node whose backward gets every output's gradient.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/autograd/function.h"
#include "kernels/error.h"

namespace gradiens {

// Note [Multi-output ops]
// ~~~~~~~~~~~~~~~~~~~~~~~
// apply<Op> records ops with one output. An LSTM step has two (h', c'),
// split_rows one per piece, tanh's second derivative two (Note [Tanh's second
// derivative as one node] in engine/ops/unary.cpp); recording each output as its
// own op would make every backward rebuild the whole input, or pass over it once
// per output. MultiOutputNode is apply<Op>'s node for an Op whose forward returns
// several tensors (a std::vector or std::array): output k gets output_nr k, and
// Op::backward(Ctx&, const GradList& grads) receives one gradient per output
// (undefined where none arrived). These ops have no forward-mode formula: a dual
// input is an error rather than a result silently without tangent.
template <class Op>
class MultiOutputNode final : public Node {
 public:
  std::string_view name() const override { return Op::name; }
  GradList apply(GradList&& grads) override {
    grads.resize(num_forward_outputs);
    return Op::backward(ctx, grads);
  }
  void release_variables() override { ctx.release(); }
  Ctx ctx;
  size_t num_forward_outputs = 0;
};

template <class Op, class... Args>
auto apply_multi(const Args&... args) {
  GD_CHECK(!detail::forward_ad_enabled() || !(detail::has_tangent_arg(args) || ...),
           "Trying to use forward AD with " + std::string(Op::name) + " that does not support it");
  if (!GradMode::is_enabled() || !(detail::requires_grad_arg(args) || ...)) {
    Ctx ctx;
    return Op::forward(ctx, args...);
  }
  auto node = std::make_shared<MultiOutputNode<Op>>();
  Ctx& ctx = node->ctx;
  ctx.set_recording(true);
  ctx.set_owner(node.get());
  (detail::add_edge_arg(*node, ctx, /*dual=*/false, args), ...);
  auto outputs = [&] {
    AutoGradMode no_grad(false);
    return Op::forward(ctx, args...);
  }();
  for (Tensor& out : outputs) {
    const uint32_t output_nr = node->add_input_metadata(out);
    TensorImpl* impl = out.impl();
    impl->requires_grad = true;
    impl->grad_fn = node;
    impl->output_nr = output_nr;
  }
  node->num_forward_outputs = outputs.size();
  if (detail::anomaly_mode_enabled()) detail::record_anomaly_context(*node);
  return outputs;
}

}  // namespace gradiens
