// SGD: options, state and PyTorch 1.13's _single_tensor_sgd as one
// multi-tensor pass per dtype over each group.
#include "optim/sgd.h"

#include "optim/detail/first_order.h"

namespace gradiens::optim {

using detail::python_float;

nlohmann::json SGDOptions::to_json() const {
  return {{"lr", lr_},
          {"momentum", momentum_},
          {"dampening", dampening_},
          {"weight_decay", weight_decay_},
          {"nesterov", nesterov_},
          {"maximize", maximize_}};
}

void SGDOptions::from_json(const nlohmann::json& j) {
  const std::string what = "SGD options";
  SGDOptions read(json_get<double>(j, "lr", what));
  read.momentum(json_get<double>(j, "momentum", what))
      .dampening(json_get<double>(j, "dampening", what))
      .weight_decay(json_get<double>(j, "weight_decay", what))
      .nesterov(j.contains("nesterov") ? json_get<bool>(j, "nesterov", what) : false)
      .maximize(j.contains("maximize") ? json_get<bool>(j, "maximize", what) : false);
  read.validate();
  *this = read;
}

void SGDOptions::validate() const {
  GD_CHECK(!(lr_ < 0.0), "Invalid learning rate: " + python_float(lr_));
  GD_CHECK(!(momentum_ < 0.0), "Invalid momentum value: " + python_float(momentum_));
  GD_CHECK(!(weight_decay_ < 0.0), "Invalid weight_decay value: " + python_float(weight_decay_));
  GD_CHECK(!(nesterov_ && (momentum_ <= 0 || dampening_ != 0)),
           "Nesterov momentum requires a momentum and zero dampening");
}

void SGDParamState::save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const {
  if (momentum_buffer_.defined())
    tensors["momentum_buffer"] = momentum_buffer_;
  else
    scalars["momentum_buffer"] = nullptr;
}

void SGDParamState::load(const nlohmann::json&, const std::map<std::string, Tensor>& tensors) {
  momentum_buffer_ = detail::optional_state_tensor(tensors, "momentum_buffer");
}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), detail::validated(defaults)) {
  detail::validate_groups<SGDOptions>(param_groups_, "SGD");
}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(detail::single_group(std::move(params), defaults), defaults) {}

Tensor SGD::step(LossClosure closure) {
  return detail::first_order_step<SGDOptions>(
      param_groups_, closure, "SGD", "SGD: sparse gradients are not supported",
      [this](const OptimizerParamGroup& group, const SGDOptions& o) {
        const bool momentum = o.momentum() != 0;
        detail::GroupBuffers buffers(
            group, [this](const Tensor& p) -> SGDParamState& { return param_state<SGDParamState>(p); },
            [&](const Tensor& param, SGDParamState& state) {
              if (!momentum) return detail::ParamBuffers{};
              // PyTorch's first momentum step copies the direction into a new buffer.
              const bool fresh = !state.momentum_buffer_.defined();
              detail::prepare_state(state.momentum_buffer_, param, "SGD", "momentum_buffer");
              return detail::ParamBuffers{{&state.momentum_buffer_}, 0, fresh};
            });
        const detail::SGDKernel::Scalars scalars{o.momentum(), 1 - o.dampening(), o.weight_decay(), -o.lr()};
        buffers.update(detail::SGDKernel{o.maximize(), o.weight_decay() != 0, momentum, o.nesterov(), &scalars});
      });
}

std::unique_ptr<OptimizerParamState> SGD::make_param_state() const { return std::make_unique<SGDParamState>(); }

}  // namespace gradiens::optim
