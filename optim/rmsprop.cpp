// RMSprop: options, state and PyTorch 1.13's _single_tensor_rmsprop as one
// fused pass per parameter.
#include "optim/rmsprop.h"

#include <algorithm>
#include <cmath>

#include "optim/detail/fused_update.h"

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

namespace {

// The update's scalars, each rounded to T first as PyTorch's kernels round a Python number.
template <class T>
struct RMSpropScalars {
  T alpha, one_minus_alpha, weight_decay, eps, momentum, neg_lr;
};

// _single_tensor_rmsprop on n elements: the averages in a first pass, the
// square roots of a block at once, the parameter (and momentum) in a second.
template <class T, bool Maximize, bool L2, bool Centered, bool Momentum>
void rmsprop_kernel(const RMSpropScalars<T>& s, T* __restrict param, const T* __restrict grad,
                    T* __restrict square_avg_all, T* __restrict grad_avg_all, T* __restrict buf_all, int64_t n) {
  T root[detail::kBlock];
  for (int64_t start = 0; start < n; start += detail::kBlock) {
    const int64_t len = std::min(detail::kBlock, n - start);
    T* p = param + start;
    const T* g = grad + start;
    T* square_avg = square_avg_all + start;
    auto direction = [&](int64_t k) {
      T d = Maximize ? -g[k] : g[k];
      if constexpr (L2) d = d + s.weight_decay * p[k];
      return d;
    };
    for (int64_t k = 0; k < len; ++k) {
      const T d = direction(k);
      square_avg[k] = square_avg[k] * s.alpha + s.one_minus_alpha * d * d;
      if constexpr (Centered) {
        T* grad_avg = grad_avg_all + start;
        grad_avg[k] = grad_avg[k] * s.alpha + s.one_minus_alpha * d;
        // PyTorch's square_avg.addcmul(grad_avg, grad_avg, value=-1).
        root[k] = square_avg[k] + T(-1) * grad_avg[k] * grad_avg[k];
      } else {
        root[k] = square_avg[k];
      }
    }
    detail::sqrt_in_place(root, len);
    for (int64_t k = 0; k < len; ++k) {
      const T avg = root[k] + s.eps;
      if constexpr (Momentum) {
        T* buf = buf_all + start;
        buf[k] = buf[k] * s.momentum + direction(k) / avg;
        p[k] = p[k] + s.neg_lr * buf[k];
      } else {
        p[k] = p[k] + s.neg_lr * direction(k) / avg;
      }
    }
  }
}

std::unique_ptr<OptimizerOptions> validated(const RMSpropOptions& options) {
  options.validate();
  return std::make_unique<RMSpropOptions>(options);
}
}  // namespace

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), validated(defaults)) {
  for (const auto& group : param_groups_) detail::group_options<RMSpropOptions>(group, "RMSprop").validate();
}

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : RMSprop(detail::single_group(std::move(params), defaults), defaults) {}

Tensor RMSprop::step(LossClosure closure) {
  Tensor loss;
  if (closure) {
    AutoGradMode enable_grad(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  // Every check runs before the first update, so an error leaves all parameters as they were.
  for (const auto& group : param_groups_) {
    detail::group_options<RMSpropOptions>(group, "RMSprop");
    for (const Tensor& p : group.params())
      if (p.grad().defined()) detail::check_grad(p, p.grad(), "RMSprop", "RMSprop does not support sparse gradients");
  }
  for (auto& group : param_groups_) {
    const auto& o = detail::group_options<RMSpropOptions>(group, "RMSprop");
    const double lr = o.lr(), alpha = o.alpha(), eps = o.eps(), weight_decay = o.weight_decay();
    const double momentum = o.momentum();
    const bool centered = o.centered(), maximize = o.maximize();
    for (const Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      auto& state = param_state<RMSpropParamState>(param);
      detail::prepare_state(state.square_avg_, param, "RMSprop", "square_avg");
      if (momentum > 0) detail::prepare_state(state.momentum_buffer_, param, "RMSprop", "momentum_buffer");
      if (centered) detail::prepare_state(state.grad_avg_, param, "RMSprop", "grad_avg");
      state.step_ += 1;
      detail::fused_update(param, grad, "RMSprop", [&]<class T>(T* p, const T* g, int64_t begin, int64_t end) {
        const RMSpropScalars<T> s{static_cast<T>(alpha),        static_cast<T>(1 - alpha), static_cast<T>(weight_decay),
                                  static_cast<T>(eps),          static_cast<T>(momentum),  static_cast<T>(-lr)};
        T* square_avg = detail::state_data<T>(state.square_avg_) + begin;
        T* buf = momentum > 0 ? detail::state_data<T>(state.momentum_buffer_) + begin : nullptr;
        T* grad_avg = centered ? detail::state_data<T>(state.grad_avg_) + begin : nullptr;
        detail::with_constants(
            [&](auto maximize_c, auto l2_c, auto centered_c, auto momentum_c) {
              rmsprop_kernel<T, maximize_c(), l2_c(), centered_c(), momentum_c()>(s, p + begin, g + begin, square_avg,
                                                                                  grad_avg, buf, end - begin);
            },
            maximize, weight_decay != 0, centered, momentum > 0);
      });
    }
  }
  return loss;
}

std::unique_ptr<OptimizerParamState> RMSprop::make_param_state() const {
  return std::make_unique<RMSpropParamState>();
}

}  // namespace gradiens::optim
