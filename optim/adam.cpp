// Adam: its state and step, PyTorch 1.13's Adam update through the Adam-family
// multi-tensor pass (detail/adam_family.h).
#include "optim/adam.h"

#include "optim/detail/first_order.h"

namespace gradiens::optim {

void AdamParamState::save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const {
  scalars["step"] = step_;
  if (exp_avg_.defined()) tensors["exp_avg"] = exp_avg_;
  if (exp_avg_sq_.defined()) tensors["exp_avg_sq"] = exp_avg_sq_;
  if (max_exp_avg_sq_.defined()) tensors["max_exp_avg_sq"] = max_exp_avg_sq_;
}

void AdamParamState::load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) {
  const std::string what = "Adam state";
  step_ = detail::load_step(scalars, what);
  exp_avg_ = detail::required_state_tensor(tensors, "exp_avg", what);
  exp_avg_sq_ = detail::required_state_tensor(tensors, "exp_avg_sq", what);
  max_exp_avg_sq_ = detail::optional_state_tensor(tensors, "max_exp_avg_sq");
}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), detail::validated(defaults)) {
  detail::validate_groups<AdamOptions>(param_groups_, "Adam");
}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(detail::single_group(std::move(params), defaults), defaults) {}

Tensor Adam::step(LossClosure closure) {
  return detail::first_order_step<AdamOptions>(
      param_groups_, closure, "Adam", "Adam does not support sparse gradients, please consider SparseAdam instead",
      [this](const OptimizerParamGroup& group, const AdamOptions& options) {
        detail::AdamFamilyStep::of(options, /*decoupled_weight_decay=*/false, "Adam")
            .update(group, [this](const Tensor& p) -> AdamParamState& { return param_state<AdamParamState>(p); });
      });
}

std::unique_ptr<OptimizerParamState> Adam::make_param_state() const { return std::make_unique<AdamParamState>(); }

}  // namespace gradiens::optim
