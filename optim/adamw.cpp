// AdamW: its step, PyTorch 1.13's AdamW update through the Adam-family
// multi-tensor pass with decoupled weight decay (detail/adam_family.h).
#include "optim/adamw.h"

#include "optim/detail/first_order.h"

namespace gradiens::optim {

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), detail::validated(defaults)) {
  detail::validate_groups<AdamWOptions>(param_groups_, "AdamW");
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(detail::single_group(std::move(params), defaults), defaults) {}

Tensor AdamW::step(LossClosure closure) {
  return detail::first_order_step<AdamWOptions>(
      param_groups_, closure, "AdamW", "AdamW does not support sparse gradients",
      [this](const OptimizerParamGroup& group, const AdamWOptions& options) {
        detail::AdamFamilyStep::of(options, /*decoupled_weight_decay=*/true, "AdamW")
            .update(group, [this](const Tensor& p) -> AdamWParamState& { return param_state<AdamWParamState>(p); });
      });
}

std::unique_ptr<OptimizerParamState> AdamW::make_param_state() const {
  return std::make_unique<AdamWParamState>();
}

}  // namespace gradiens::optim
