// SGD: options, state and PyTorch 1.13's _single_tensor_sgd as one fused pass
// per parameter.
#include "optim/sgd.h"

#include "optim/detail/fused_update.h"

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

namespace {

// The update's scalars, each rounded to T first as PyTorch's kernels round a Python number.
template <class T>
struct SGDScalars {
  T momentum, one_minus_dampening, weight_decay, neg_lr;
};

// _single_tensor_sgd on n elements. First: the momentum buffer is new and
// takes the gradient, as PyTorch's clone on the first step.
template <class T, bool Maximize, bool L2, bool Momentum, bool First, bool Nesterov>
void sgd_kernel(const SGDScalars<T>& s, T* __restrict p, const T* __restrict g, T* __restrict buf, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T d = Maximize ? -g[i] : g[i];
    if constexpr (L2) d = d + s.weight_decay * p[i];
    if constexpr (Momentum) {
      buf[i] = First ? d : buf[i] * s.momentum + s.one_minus_dampening * d;
      d = Nesterov ? d + s.momentum * buf[i] : buf[i];
    }
    p[i] = p[i] + s.neg_lr * d;
  }
}

std::unique_ptr<OptimizerOptions> validated(const SGDOptions& options) {
  options.validate();
  return std::make_unique<SGDOptions>(options);
}
}  // namespace

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), validated(defaults)) {
  for (const auto& group : param_groups_) detail::group_options<SGDOptions>(group, "SGD").validate();
}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(detail::single_group(std::move(params), defaults), defaults) {}

Tensor SGD::step(LossClosure closure) {
  Tensor loss;
  if (closure) {
    AutoGradMode enable_grad(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  // Every check runs before the first update, so an error leaves all parameters as they were.
  for (const auto& group : param_groups_) {
    detail::group_options<SGDOptions>(group, "SGD");
    for (const Tensor& p : group.params())
      if (p.grad().defined())
        detail::check_grad(p, p.grad(), "SGD", "SGD: sparse gradients are not supported");
  }
  for (auto& group : param_groups_) {
    const auto& o = detail::group_options<SGDOptions>(group, "SGD");
    const double lr = o.lr(), momentum = o.momentum(), dampening = o.dampening(), weight_decay = o.weight_decay();
    const bool nesterov = o.nesterov(), maximize = o.maximize();
    for (const Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      auto& state = param_state<SGDParamState>(param);
      // PyTorch's first momentum step copies the gradient into a new buffer.
      const bool first = momentum != 0 && !state.momentum_buffer_.defined();
      if (momentum != 0) detail::prepare_state(state.momentum_buffer_, param, "SGD", "momentum_buffer");
      detail::fused_update(param, grad, "SGD", [&]<class T>(T* p, const T* g, int64_t begin, int64_t end) {
        const SGDScalars<T> s{static_cast<T>(momentum), static_cast<T>(1 - dampening), static_cast<T>(weight_decay),
                              static_cast<T>(-lr)};
        T* buf = momentum != 0 ? detail::state_data<T>(state.momentum_buffer_) + begin : nullptr;
        detail::with_constants(
            [&](auto maximize_c, auto l2_c, auto momentum_c, auto first_c, auto nesterov_c) {
              sgd_kernel<T, maximize_c(), l2_c(), momentum_c(), first_c(), nesterov_c()>(s, p + begin, g + begin, buf,
                                                                                        end - begin);
            },
            maximize, weight_decay != 0, momentum != 0, first, nesterov);
      });
    }
  }
  return loss;
}

std::unique_ptr<OptimizerParamState> SGD::make_param_state() const { return std::make_unique<SGDParamState>(); }

}  // namespace gradiens::optim
