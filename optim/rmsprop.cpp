// RMSprop: options, state and PyTorch 1.13's _single_tensor_rmsprop as one
// multi-tensor pass per dtype over each group.
#include "optim/rmsprop.h"

#include "optim/detail/first_order.h"

namespace gradiens::optim {

using detail::python_float;

nlohmann::json RMSpropOptions::to_json() const {
  return {{"lr", lr_},
          {"alpha", alpha_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"momentum", momentum_},
          {"centered", centered_},
          {"maximize", maximize_}};
}

void RMSpropOptions::from_json(const nlohmann::json& j) {
  const std::string what = "RMSprop options";
  RMSpropOptions read(json_get<double>(j, "lr", what));
  read.alpha(json_get<double>(j, "alpha", what))
      .eps(json_get<double>(j, "eps", what))
      .weight_decay(json_get<double>(j, "weight_decay", what))
      .momentum(j.contains("momentum") ? json_get<double>(j, "momentum", what) : 0.0)
      .centered(j.contains("centered") ? json_get<bool>(j, "centered", what) : false)
      .maximize(j.contains("maximize") ? json_get<bool>(j, "maximize", what) : false);
  read.validate();
  *this = read;
}

void RMSpropOptions::validate() const {
  GD_CHECK(0.0 <= lr_, "Invalid learning rate: " + python_float(lr_));
  GD_CHECK(0.0 <= eps_, "Invalid epsilon value: " + python_float(eps_));
  GD_CHECK(0.0 <= momentum_, "Invalid momentum value: " + python_float(momentum_));
  GD_CHECK(0.0 <= weight_decay_, "Invalid weight_decay value: " + python_float(weight_decay_));
  GD_CHECK(0.0 <= alpha_, "Invalid alpha value: " + python_float(alpha_));
}

void RMSpropParamState::save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const {
  scalars["step"] = step_;
  if (square_avg_.defined()) tensors["square_avg"] = square_avg_;
  if (momentum_buffer_.defined()) tensors["momentum_buffer"] = momentum_buffer_;
  if (grad_avg_.defined()) tensors["grad_avg"] = grad_avg_;
}

void RMSpropParamState::load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) {
  const std::string what = "RMSprop state";
  step_ = detail::load_step(scalars, what);
  square_avg_ = detail::required_state_tensor(tensors, "square_avg", what);
  momentum_buffer_ = detail::optional_state_tensor(tensors, "momentum_buffer");
  grad_avg_ = detail::optional_state_tensor(tensors, "grad_avg");
}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), detail::validated(defaults)) {
  detail::validate_groups<RMSpropOptions>(param_groups_, "RMSprop");
}

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : RMSprop(detail::single_group(std::move(params), defaults), defaults) {}

Tensor RMSprop::step(LossClosure closure) {
  return detail::first_order_step<RMSpropOptions>(
      param_groups_, closure, "RMSprop", "RMSprop does not support sparse gradients",
      [this](const OptimizerParamGroup& group, const RMSpropOptions& o) {
        const bool momentum = o.momentum() > 0, centered = o.centered();
        detail::GroupBuffers buffers(
            group, [this](const Tensor& p) -> RMSpropParamState& { return param_state<RMSpropParamState>(p); },
            [&](const Tensor& param, RMSpropParamState& state) {
              detail::prepare_state(state.square_avg_, param, "RMSprop", "square_avg");
              if (momentum) detail::prepare_state(state.momentum_buffer_, param, "RMSprop", "momentum_buffer");
              if (centered) detail::prepare_state(state.grad_avg_, param, "RMSprop", "grad_avg");
              state.step_ += 1;
              // The update does not depend on the step count: one table entry serves all.
              return detail::ParamBuffers{{&state.square_avg_, centered ? &state.grad_avg_ : nullptr,
                                           momentum ? &state.momentum_buffer_ : nullptr}};
            });
        const detail::RMSpropKernel::Scalars scalars{o.alpha(), 1 - o.alpha(), o.weight_decay(),
                                                     o.eps(),   o.momentum(),  -o.lr()};
        buffers.update(detail::RMSpropKernel{o.maximize(), o.weight_decay() != 0, centered, momentum, &scalars});
      });
}

std::unique_ptr<OptimizerParamState> RMSprop::make_param_state() const {
  return std::make_unique<RMSpropParamState>();
}

}  // namespace gradiens::optim
