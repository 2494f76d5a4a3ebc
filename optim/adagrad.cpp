// Adagrad: options, state and PyTorch 1.13's _single_tensor_adagrad (dense
// gradients) as one fused pass per parameter.
#include "optim/adagrad.h"

#include <algorithm>
#include <cmath>

#include "optim/detail/fused_update.h"

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

namespace {

// The update's scalars, each rounded to T first as PyTorch's kernels round a Python number.
template <class T>
struct AdagradScalars {
  T weight_decay, eps, neg_clr;
};

// _single_tensor_adagrad (dense) on n elements: the sums in a first pass, the
// square roots of a block at once, the parameter in a second.
template <class T, bool Maximize, bool L2>
void adagrad_kernel(const AdagradScalars<T>& s, T* __restrict param, const T* __restrict grad, T* __restrict state_sum,
                    int64_t n) {
  T root[detail::kBlock];
  for (int64_t start = 0; start < n; start += detail::kBlock) {
    const int64_t len = std::min(detail::kBlock, n - start);
    T* p = param + start;
    const T* g = grad + start;
    T* sum = state_sum + start;
    auto direction = [&](int64_t k) {
      T d = Maximize ? -g[k] : g[k];
      if constexpr (L2) d = d + s.weight_decay * p[k];
      return d;
    };
    for (int64_t k = 0; k < len; ++k) {
      const T d = direction(k);
      sum[k] = sum[k] + d * d;
      root[k] = sum[k];
    }
    detail::sqrt_in_place(root, len);
    for (int64_t k = 0; k < len; ++k) p[k] = p[k] + s.neg_clr * direction(k) / (root[k] + s.eps);
  }
}

std::unique_ptr<OptimizerOptions> validated(const AdagradOptions& options) {
  options.validate();
  return std::make_unique<AdagradOptions>(options);
}
}  // namespace

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), validated(defaults)) {
  NoGradGuard no_grad;
  for (const auto& group : param_groups_) {
    const auto& o = detail::group_options<AdagradOptions>(group, "Adagrad");
    o.validate();
    for (const Tensor& param : group.params())
      detail::prepare_state(param_state<AdagradParamState>(param).sum_, param, "Adagrad", "sum",
                            o.initial_accumulator_value());
  }
}

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad(detail::single_group(std::move(params), defaults), defaults) {}

Tensor Adagrad::step(LossClosure closure) {
  Tensor loss;
  if (closure) {
    AutoGradMode enable_grad(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  // Every check runs before the first update, so an error leaves all parameters as they were.
  for (const auto& group : param_groups_) {
    detail::group_options<AdagradOptions>(group, "Adagrad");
    for (const Tensor& p : group.params())
      if (p.grad().defined())
        detail::check_grad(p, p.grad(), "Adagrad", "Adagrad: sparse gradients are not supported");
  }
  for (auto& group : param_groups_) {
    const auto& o = detail::group_options<AdagradOptions>(group, "Adagrad");
    const double lr = o.lr(), lr_decay = o.lr_decay(), eps = o.eps(), weight_decay = o.weight_decay();
    const bool maximize = o.maximize();
    for (const Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      auto& state = param_state<AdagradParamState>(param);
      // A group added after construction gets its state here.
      detail::prepare_state(state.sum_, param, "Adagrad", "sum", o.initial_accumulator_value());
      state.step_ += 1;
      const double clr = lr / (1 + (static_cast<double>(state.step_) - 1) * lr_decay);
      detail::fused_update(param, grad, "Adagrad", [&]<class T>(T* p, const T* g, int64_t begin, int64_t end) {
        const AdagradScalars<T> s{static_cast<T>(weight_decay), static_cast<T>(eps), static_cast<T>(-clr)};
        T* sum = detail::state_data<T>(state.sum_) + begin;
        detail::with_constants(
            [&](auto maximize_c, auto l2_c) {
              adagrad_kernel<T, maximize_c(), l2_c()>(s, p + begin, g + begin, sum, end - begin);
            },
            maximize, weight_decay != 0);
      });
    }
  }
  return loss;
}

std::unique_ptr<OptimizerParamState> Adagrad::make_param_state() const {
  return std::make_unique<AdagradParamState>();
}

}  // namespace gradiens::optim
