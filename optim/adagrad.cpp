// Adagrad: options, state and PyTorch 1.13's _single_tensor_adagrad (dense
// gradients) as one multi-tensor pass per dtype over each group.
#include "optim/adagrad.h"

#include <vector>

#include "optim/detail/first_order.h"

namespace gradiens::optim {

using detail::python_float;

nlohmann::json AdagradOptions::to_json() const {
  return {{"lr", lr_},
          {"lr_decay", lr_decay_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"initial_accumulator_value", initial_accumulator_value_},
          {"maximize", maximize_}};
}

void AdagradOptions::from_json(const nlohmann::json& j) {
  const std::string what = "Adagrad options";
  AdagradOptions read(json_get<double>(j, "lr", what));
  read.lr_decay(json_get<double>(j, "lr_decay", what))
      .eps(json_get<double>(j, "eps", what))
      .weight_decay(json_get<double>(j, "weight_decay", what))
      .initial_accumulator_value(json_get<double>(j, "initial_accumulator_value", what))
      .maximize(j.contains("maximize") ? json_get<bool>(j, "maximize", what) : false);
  read.validate();
  *this = read;
}

void AdagradOptions::validate() const {
  GD_CHECK(0.0 <= lr_, "Invalid learning rate: " + python_float(lr_));
  GD_CHECK(0.0 <= lr_decay_, "Invalid lr_decay value: " + python_float(lr_decay_));
  GD_CHECK(0.0 <= weight_decay_, "Invalid weight_decay value: " + python_float(weight_decay_));
  GD_CHECK(0.0 <= initial_accumulator_value_,
           "Invalid initial_accumulator_value value: " + python_float(initial_accumulator_value_));
  GD_CHECK(0.0 <= eps_, "Invalid epsilon value: " + python_float(eps_));
}

void AdagradParamState::save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const {
  scalars["step"] = step_;
  if (sum_.defined()) tensors["sum"] = sum_;
}

void AdagradParamState::load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) {
  const std::string what = "Adagrad state";
  step_ = detail::load_step(scalars, what);
  sum_ = detail::required_state_tensor(tensors, "sum", what);
}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), detail::validated(defaults)) {
  detail::validate_groups<AdagradOptions>(param_groups_, "Adagrad");
  NoGradGuard no_grad;
  for (const auto& group : param_groups_) {
    const double initial_value = detail::group_options<AdagradOptions>(group, "Adagrad").initial_accumulator_value();
    for (const Tensor& param : group.params())
      detail::prepare_state(param_state<AdagradParamState>(param).sum_, param, "Adagrad", "sum", initial_value);
  }
}

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad(detail::single_group(std::move(params), defaults), defaults) {}

Tensor Adagrad::step(LossClosure closure) {
  return detail::first_order_step<AdagradOptions>(
      param_groups_, closure, "Adagrad", "Adagrad: sparse gradients are not supported",
      [this](const OptimizerParamGroup& group, const AdagradOptions& o) {
        detail::GroupBuffers buffers(
            group, [this](const Tensor& p) -> AdagradParamState& { return param_state<AdagradParamState>(p); },
            [&](const Tensor& param, AdagradParamState& state) {
              // A group added after construction gets its state here.
              detail::prepare_state(state.sum_, param, "Adagrad", "sum", o.initial_accumulator_value());
              state.step_ += 1;
              return detail::ParamBuffers{{&state.sum_}, state.step_};
            });
        // The decayed learning rate of each step count in the group, computed once.
        std::vector<detail::AdagradKernel::Scalars> scalars;
        for (int64_t step : buffers.steps()) {
          const double clr = o.lr() / (1 + (static_cast<double>(step) - 1) * o.lr_decay());
          scalars.push_back({o.weight_decay(), o.eps(), -clr});
        }
        buffers.update(detail::AdagradKernel{o.maximize(), o.weight_decay() != 0, scalars.data()});
      });
}

std::unique_ptr<OptimizerParamState> Adagrad::make_param_state() const {
  return std::make_unique<AdagradParamState>();
}

}  // namespace gradiens::optim
