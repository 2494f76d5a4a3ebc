// AdamW: options and PyTorch 1.13's _single_tensor_adamw, through Adam's
// fused update with decoupled weight decay.
#include "optim/adamw.h"

#include "optim/detail/fused_update.h"

namespace gradiens::optim {

using detail::python_float;

nlohmann::json AdamWOptions::to_json() const {
  return {{"lr", lr_},
          {"betas", {std::get<0>(betas_), std::get<1>(betas_)}},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"amsgrad", amsgrad_},
          {"maximize", maximize_}};
}

void AdamWOptions::from_json(const nlohmann::json& j) {
  const std::string what = "AdamW options";
  AdamWOptions read(json_get<double>(j, "lr", what));
  auto betas = json_get<std::vector<double>>(j, "betas", what);
  if (betas.size() != 2) throw_json_error(what, "betas", "must hold two numbers");
  read.betas({betas[0], betas[1]})
      .eps(json_get<double>(j, "eps", what))
      .weight_decay(json_get<double>(j, "weight_decay", what))
      .amsgrad(j.contains("amsgrad") ? json_get<bool>(j, "amsgrad", what) : false)
      .maximize(j.contains("maximize") ? json_get<bool>(j, "maximize", what) : false);
  read.validate();
  *this = read;
}

void AdamWOptions::validate() const {
  GD_CHECK(0.0 <= lr_, "Invalid learning rate: " + python_float(lr_));
  GD_CHECK(0.0 <= eps_, "Invalid epsilon value: " + python_float(eps_));
  auto [beta1, beta2] = betas_;
  GD_CHECK(0.0 <= beta1 && beta1 < 1.0, "Invalid beta parameter at index 0: " + python_float(beta1));
  GD_CHECK(0.0 <= beta2 && beta2 < 1.0, "Invalid beta parameter at index 1: " + python_float(beta2));
  GD_CHECK(0.0 <= weight_decay_, "Invalid weight_decay value: " + python_float(weight_decay_));
}

namespace {
std::unique_ptr<OptimizerOptions> validated(const AdamWOptions& options) {
  options.validate();
  return std::make_unique<AdamWOptions>(options);
}
}  // namespace

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), validated(defaults)) {
  for (const auto& group : param_groups_) detail::group_options<AdamWOptions>(group, "AdamW").validate();
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(detail::single_group(std::move(params), defaults), defaults) {}

Tensor AdamW::step(LossClosure closure) {
  Tensor loss;
  if (closure) {
    AutoGradMode enable_grad(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  // Every check runs before the first update, so an error leaves all parameters as they were.
  for (const auto& group : param_groups_) {
    detail::group_options<AdamWOptions>(group, "AdamW");
    for (const Tensor& p : group.params())
      if (p.grad().defined()) detail::check_grad(p, p.grad(), "AdamW", "AdamW does not support sparse gradients");
  }
  for (auto& group : param_groups_) {
    const auto& o = detail::group_options<AdamWOptions>(group, "AdamW");
    const AdamUpdate update{o.lr(),           std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(),
                            o.weight_decay(), o.amsgrad(),            o.maximize(),           true,
                            "AdamW"};
    for (const Tensor& p : group.params()) {
      Tensor grad = p.grad();
      if (grad.defined()) update.apply(p, grad, param_state<AdamWParamState>(p));
    }
  }
  return loss;
}

std::unique_ptr<OptimizerParamState> AdamW::make_param_state() const {
  return std::make_unique<AdamWParamState>();
}

}  // namespace gradiens::optim
