// Adam: options, state and PyTorch 1.13's _single_tensor_adam as one fused
// pass per parameter; AdamUpdate is shared with AdamW.
#include "optim/adam.h"

#include <algorithm>
#include <cmath>

#include "optim/detail/fused_update.h"

namespace gradiens::optim {

using detail::python_float;

nlohmann::json AdamOptions::to_json() const {
  return {{"lr", lr_},
          {"betas", {std::get<0>(betas_), std::get<1>(betas_)}},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"amsgrad", amsgrad_},
          {"maximize", maximize_}};
}

void AdamOptions::from_json(const nlohmann::json& j) {
  const std::string what = "Adam options";
  AdamOptions read(json_get<double>(j, "lr", what));
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

void AdamOptions::validate() const {
  GD_CHECK(0.0 <= lr_, "Invalid learning rate: " + python_float(lr_));
  GD_CHECK(0.0 <= eps_, "Invalid epsilon value: " + python_float(eps_));
  auto [beta1, beta2] = betas_;
  GD_CHECK(0.0 <= beta1 && beta1 < 1.0, "Invalid beta parameter at index 0: " + python_float(beta1));
  GD_CHECK(0.0 <= beta2 && beta2 < 1.0, "Invalid beta parameter at index 1: " + python_float(beta2));
  GD_CHECK(0.0 <= weight_decay_, "Invalid weight_decay value: " + python_float(weight_decay_));
}

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

namespace {

// The update's scalars, each rounded to T first as PyTorch's kernels round a Python number.
template <class T>
struct AdamScalars {
  T beta1, one_minus_beta1, beta2, one_minus_beta2, l2, decay, bias_correction2_sqrt, eps, neg_step_size;
};

// _single_tensor_adam / _single_tensor_adamw on n elements: the moments in a
// first pass, the square roots of a block at once, the parameter in a second.
template <class T, bool Maximize, bool L2, bool Decoupled, bool Amsgrad>
void adam_kernel(const AdamScalars<T>& s, T* __restrict param, const T* __restrict grad, T* __restrict exp_avg,
                 T* __restrict exp_avg_sq, T* __restrict max_exp_avg_sq, int64_t n) {
  T root[detail::kBlock];
  for (int64_t start = 0; start < n; start += detail::kBlock) {
    const int64_t len = std::min(detail::kBlock, n - start);
    T* p = param + start;
    const T* g = grad + start;
    T* m = exp_avg + start;
    T* v = exp_avg_sq + start;
    for (int64_t k = 0; k < len; ++k) {
      T d = Maximize ? -g[k] : g[k];
      if constexpr (L2) d = d + s.l2 * p[k];
      m[k] = m[k] * s.beta1 + s.one_minus_beta1 * d;
      v[k] = v[k] * s.beta2 + s.one_minus_beta2 * d * d;
      if constexpr (Amsgrad) {
        T* v_max = max_exp_avg_sq + start;
        v_max[k] = detail::maximum_nan(v_max[k], v[k]);
        root[k] = v_max[k];
      } else {
        root[k] = v[k];
      }
    }
    detail::sqrt_in_place(root, len);
    for (int64_t k = 0; k < len; ++k) {
      // AdamW decays the parameter before the step (which reads only m and v).
      const T q = Decoupled ? p[k] * s.decay : p[k];
      p[k] = q + s.neg_step_size * m[k] / (root[k] / s.bias_correction2_sqrt + s.eps);
    }
  }
}

}  // namespace

void AdamUpdate::apply(const Tensor& param, const Tensor& grad, AdamParamState& state) const {
  detail::prepare_state(state.exp_avg_, param, optimizer, "exp_avg");
  detail::prepare_state(state.exp_avg_sq_, param, optimizer, "exp_avg_sq");
  // PyTorch creates max_exp_avg_sq only with amsgrad on; turned on later, it starts at zero here.
  if (amsgrad) detail::prepare_state(state.max_exp_avg_sq_, param, optimizer, "max_exp_avg_sq");
  state.step_ += 1;
  const double step = static_cast<double>(state.step_);
  const double step_size = lr / (1 - std::pow(beta1, step));
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, step));
  const bool l2 = !decoupled_weight_decay && weight_decay != 0;
  detail::fused_update(param, grad, optimizer, [&]<class T>(T* p, const T* g, int64_t begin, int64_t end) {
    const AdamScalars<T> s{static_cast<T>(beta1),
                           static_cast<T>(1 - beta1),
                           static_cast<T>(beta2),
                           static_cast<T>(1 - beta2),
                           static_cast<T>(weight_decay),
                           static_cast<T>(1 - lr * weight_decay),
                           static_cast<T>(bias_correction2_sqrt),
                           static_cast<T>(eps),
                           static_cast<T>(-step_size)};
    T* exp_avg = detail::state_data<T>(state.exp_avg_) + begin;
    T* exp_avg_sq = detail::state_data<T>(state.exp_avg_sq_) + begin;
    T* max_exp_avg_sq = amsgrad ? detail::state_data<T>(state.max_exp_avg_sq_) + begin : nullptr;
    detail::with_constants(
        [&](auto maximize_c, auto l2_c, auto decoupled_c, auto amsgrad_c) {
          adam_kernel<T, maximize_c(), l2_c(), decoupled_c(), amsgrad_c()>(s, p + begin, g + begin, exp_avg, exp_avg_sq,
                                                                           max_exp_avg_sq, end - begin);
        },
        maximize, l2, decoupled_weight_decay, amsgrad);
  });
}

namespace {
std::unique_ptr<OptimizerOptions> validated(const AdamOptions& options) {
  options.validate();
  return std::make_unique<AdamOptions>(options);
}
}  // namespace

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), validated(defaults)) {
  for (const auto& group : param_groups_) detail::group_options<AdamOptions>(group, "Adam").validate();
}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(detail::single_group(std::move(params), defaults), defaults) {}

Tensor Adam::step(LossClosure closure) {
  Tensor loss;
  if (closure) {
    AutoGradMode enable_grad(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  // Every check runs before the first update, so an error leaves all parameters as they were.
  for (const auto& group : param_groups_) {
    detail::group_options<AdamOptions>(group, "Adam");
    for (const Tensor& p : group.params())
      if (p.grad().defined())
        detail::check_grad(p, p.grad(), "Adam",
                           "Adam does not support sparse gradients, please consider SparseAdam instead");
  }
  for (auto& group : param_groups_) {
    const auto& o = detail::group_options<AdamOptions>(group, "Adam");
    const AdamUpdate update{o.lr(),           std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(),
                            o.weight_decay(), o.amsgrad(),            o.maximize(),           false,
                            "Adam"};
    for (const Tensor& p : group.params()) {
      Tensor grad = p.grad();
      if (grad.defined()) update.apply(p, grad, param_state<AdamParamState>(p));
    }
  }
  return loss;
}

std::unique_ptr<OptimizerParamState> Adam::make_param_state() const { return std::make_unique<AdamParamState>(); }

}  // namespace gradiens::optim
