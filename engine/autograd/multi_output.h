// apply_outputs<Op>: apply<Op> (function.h) for an op whose forward returns
// several tensors, recorded as one node whose backward gets every output's gradient.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/autograd/function.h"
#include "kernels/error.h"

namespace gradiens {

// The node of an op with several outputs: Op::backward(Ctx&, const GradList&)
// gets the gradient of each output, undefined where none arrived.
template <class Op>
class MultiOutputNode final : public Node {
 public:
  std::string_view name() const override { return Op::name; }
  GradList apply(GradList&& grads) override { return Op::backward(ctx, grads); }
  void release_variables() override { ctx.release(); }
  Ctx ctx;
};

// Runs Op::forward(ctx, args...), which returns a std::array of new tensors, and
// records one MultiOutputNode for them when an argument requires grad and grad
// mode is on; output k gets output_nr k. The op has no forward-mode formula:
// callers use it only where no argument carries a tangent.
template <class Op, class... Args>
auto apply_outputs(const Args&... args) {
  GD_INTERNAL_ASSERT(!detail::forward_ad_enabled() || !(detail::has_tangent_arg(args) || ...),
                     std::string(Op::name) + ": no forward-mode formula");
  const bool record = GradMode::is_enabled() && (detail::requires_grad_arg(args) || ...) &&
                      !(detail::inference_arg(args) && ...);
  if (!record) {
    Ctx ctx;
    return Op::forward(ctx, args...);
  }
  auto node = std::make_shared<MultiOutputNode<Op>>();
  Ctx& ctx = node->ctx;
  ctx.set_recording(true);
  ctx.set_owner(node.get());
  (detail::add_edge_arg(*node, ctx, false, args), ...);
  auto outputs = [&] {
    AutoGradMode no_grad(false);
    detail::PauseForwardAD pause;
    detail::RecordedForwardScope recorded(true);
    return Op::forward(ctx, args...);
  }();
  for (Tensor& out : outputs) {
    TensorImpl& impl = *out.impl();
    impl.output_nr = node->add_input_metadata(out);
    impl.requires_grad = true;
    impl.grad_fn = node;
  }
  if (detail::anomaly_mode_enabled()) detail::record_anomaly_context(*node);
  return outputs;
}

}  // namespace gradiens
