// UndefinedGrad and its backward.
#include "engine/autograd/basic_ops.h"

#include "engine/autograd/grad_mode.h"

namespace gradiens::autograd {

GradList UndefinedGradBackward::apply(GradList&&) {
  GradList out;
  out.resize(num_outputs());
  return out;
}

std::vector<Tensor> UndefinedGrad::apply(std::vector<Tensor>&& inputs) const {
  std::vector<Tensor> outputs;
  bool record = false;
  {
    NoGradGuard no_grad;
    for (const Tensor& t : inputs) {
      outputs.push_back(t.defined() ? t.clone() : Tensor());
      record = record || (t.defined() && t.requires_grad());
    }
  }
  if (!record || !GradMode::is_enabled()) return outputs;
  auto node = std::make_shared<UndefinedGradBackward>();
  for (const Tensor& t : inputs) node->add_next_edge(t.defined() && t.requires_grad() ? gradient_edge(t) : Edge());
  for (Tensor& out : outputs) {
    if (!out.defined()) continue;
    TensorImpl& impl = *out.impl();
    impl.output_nr = node->add_input_metadata(out);
    impl.requires_grad = true;
    impl.grad_fn = node;
  }
  return outputs;
}

}  // namespace gradiens::autograd
