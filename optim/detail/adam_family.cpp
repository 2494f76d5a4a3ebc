// Adam's and AdamW's shared options and their update: PyTorch 1.13's
// _single_tensor_adam / _single_tensor_adamw as one multi-tensor pass per dtype.
#include "optim/detail/adam_family.h"

#include <cmath>
#include <string>
#include <vector>

#include "optim/adam.h"
#include "optim/adamw.h"
#include "optim/detail/first_order.h"

namespace gradiens::optim::detail {

namespace {
template <class Self>
std::string options_name();
template <>
std::string options_name<AdamOptions>() {
  return "Adam options";
}
template <>
std::string options_name<AdamWOptions>() {
  return "AdamW options";
}
}  // namespace

template <class Self>
nlohmann::json AdamFamilyOptions<Self>::to_json() const {
  return {{"lr", lr_},
          {"betas", {std::get<0>(betas_), std::get<1>(betas_)}},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"amsgrad", amsgrad_},
          {"maximize", maximize_}};
}

template <class Self>
void AdamFamilyOptions<Self>::from_json(const nlohmann::json& j) {
  const std::string what = options_name<Self>();
  Self read(json_get<double>(j, "lr", what));
  auto betas = json_get<std::vector<double>>(j, "betas", what);
  if (betas.size() != 2) throw_json_error(what, "betas", "must hold two numbers");
  read.betas({betas[0], betas[1]})
      .eps(json_get<double>(j, "eps", what))
      .weight_decay(json_get<double>(j, "weight_decay", what))
      .amsgrad(j.contains("amsgrad") ? json_get<bool>(j, "amsgrad", what) : false)
      .maximize(j.contains("maximize") ? json_get<bool>(j, "maximize", what) : false);
  read.validate();
  self() = read;
}

template <class Self>
void AdamFamilyOptions<Self>::validate() const {
  GD_CHECK(0.0 <= lr_, "Invalid learning rate: " + python_float(lr_));
  GD_CHECK(0.0 <= eps_, "Invalid epsilon value: " + python_float(eps_));
  auto [beta1, beta2] = betas_;
  GD_CHECK(0.0 <= beta1 && beta1 < 1.0, "Invalid beta parameter at index 0: " + python_float(beta1));
  GD_CHECK(0.0 <= beta2 && beta2 < 1.0, "Invalid beta parameter at index 1: " + python_float(beta2));
  GD_CHECK(0.0 <= weight_decay_, "Invalid weight_decay value: " + python_float(weight_decay_));
}

template class AdamFamilyOptions<AdamOptions>;
template class AdamFamilyOptions<AdamWOptions>;

void AdamFamilyStep::update(const OptimizerParamGroup& group,
                            const std::function<AdamParamState&(const Tensor&)>& state_of) const {
  GroupBuffers buffers(group, state_of, [&](const Tensor& param, AdamParamState& state) {
    prepare_state(state.exp_avg_, param, optimizer, "exp_avg");
    prepare_state(state.exp_avg_sq_, param, optimizer, "exp_avg_sq");
    // PyTorch creates max_exp_avg_sq only with amsgrad on; turned on later, it starts at zero here.
    if (amsgrad) prepare_state(state.max_exp_avg_sq_, param, optimizer, "max_exp_avg_sq");
    state.step_ += 1;
    return ParamBuffers{{&state.exp_avg_, &state.exp_avg_sq_, amsgrad ? &state.max_exp_avg_sq_ : nullptr},
                        state.step_};
  });
  // The bias corrections of each step count in the group, computed once.
  std::vector<AdamKernel::Scalars> scalars;
  for (int64_t count : buffers.steps()) {
    const double step = static_cast<double>(count);
    const double step_size = lr / (1 - std::pow(beta1, step));
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, step));
    scalars.push_back({beta1, 1 - beta1, beta2, 1 - beta2, weight_decay, 1 - lr * weight_decay,
                       bias_correction2_sqrt, eps, -step_size});
  }
  const auto decay = decoupled_weight_decay ? AdamKernel::WeightDecay::Decoupled
                     : weight_decay != 0    ? AdamKernel::WeightDecay::L2
                                            : AdamKernel::WeightDecay::None;
  buffers.update(AdamKernel{maximize, amsgrad, decay, scalars.data()});
}

}  // namespace gradiens::optim::detail
