// optim::LevenbergMarquardt (optim/levenberg_marquardt.h): the damped
// Gauss-Newton step, its damping rule and its state.
#include "optim/levenberg_marquardt.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/linalg.h"
#include "kernels/error.h"

namespace gradiens::optim {

// ---- options and state ----

nlohmann::json LevenbergMarquardtOptions::to_json() const {
  return {{"lr", lr_}, {"damping", damping_}, {"max_attempts", max_attempts_}};
}

void LevenbergMarquardtOptions::from_json(const nlohmann::json& j) {
  const std::string what = "LevenbergMarquardt options";
  LevenbergMarquardtOptions read;
  read.lr_ = json_get<double>(j, "lr", what);
  read.damping_ = json_get<double>(j, "damping", what);
  read.max_attempts_ = json_get<int64_t>(j, "max_attempts", what);
  *this = read;
}

void LevenbergMarquardtParamState::save(nlohmann::json& scalars, std::map<std::string, Tensor>& /*tensors*/) const {
  scalars["step"] = step_;
  scalars["mu"] = mu_;
  scalars["nu"] = nu_;
  scalars["rejected"] = rejected_;
}

void LevenbergMarquardtParamState::load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& /*tensors*/) {
  const std::string what = "LevenbergMarquardt state";
  LevenbergMarquardtParamState read;
  read.step_ = json_get<int64_t>(scalars, "step", what);
  read.mu_ = json_get<double>(scalars, "mu", what);
  read.nu_ = json_get<double>(scalars, "nu", what);
  read.rejected_ = json_get<int64_t>(scalars, "rejected", what);
  *this = read;
}

// ---- the optimizer ----

LevenbergMarquardt::LevenbergMarquardt(std::vector<Tensor> params, LevenbergMarquardtOptions defaults)
    : Optimizer({OptimizerParamGroup(std::move(params))}, std::make_unique<LevenbergMarquardtOptions>(defaults)) {
  GD_CHECK(!param_groups_[0].params().empty(), "optimizer got an empty parameter list");
  GD_CHECK(defaults.damping() > 0, fmt::format("LevenbergMarquardt: damping must be positive, got {}", defaults.damping()));
  GD_CHECK(defaults.max_attempts() >= 1,
           fmt::format("LevenbergMarquardt: max_attempts must be at least 1, got {}", defaults.max_attempts()));
}

std::unique_ptr<OptimizerParamState> LevenbergMarquardt::make_param_state() const {
  return std::make_unique<LevenbergMarquardtParamState>();
}

Tensor LevenbergMarquardt::step(LossClosure /*closure*/) {
  throw Error("LevenbergMarquardt minimizes a sum of squares: call step() with a ResidualClosure that returns the "
              "residuals and their Jacobian, not with a loss closure");
}

void LevenbergMarquardt::add_flat(const Tensor& flat, double scale) {
  NoGradGuard no_grad;
  int64_t offset = 0;
  for (Tensor& p : param_groups_[0].params()) {
    const int64_t n = p.numel();
    p.add_(flat.narrow(0, offset, n).reshape(p.sizes()).to(p.scalar_type()), scale);
    offset += n;
  }
}

Tensor LevenbergMarquardt::step(const ResidualClosure& closure) {
  GD_CHECK(static_cast<bool>(closure), "LevenbergMarquardt::step needs a residual closure");
  const auto& options = static_cast<const LevenbergMarquardtOptions&>(param_groups_[0].options());
  auto& state = param_state<LevenbergMarquardtParamState>(param_groups_[0].params().front());
  int64_t numel = 0;
  for (const Tensor& p : param_groups_[0].params()) numel += p.numel();

  LeastSquares now;
  {
    AutoGradMode grad_mode(true);
    now = closure(true);
  }
  GD_CHECK(now.residuals.defined() && now.residuals.dim() == 1,
           "LevenbergMarquardt: the closure must return the residuals as a vector [R]");
  const int64_t rows = now.residuals.size(0);
  GD_CHECK(now.jacobian.defined() && now.jacobian.dim() == 2 && now.jacobian.size(0) == rows &&
               now.jacobian.size(1) == numel,
           fmt::format("LevenbergMarquardt: the Jacobian must be [{}, {}] (residuals by parameters)", rows, numel));
  NoGradGuard no_grad;
  Tensor r = now.residuals.detach().to(kFloat64);
  Tensor J = now.jacobian.detach().to(kFloat64);
  const double loss = r.dot(r).item<double>();
  // Rows whose Jacobian is zero (residuals no parameter moves, such as
  // conditions a hard constraint meets) change neither J^T J nor J^T r: drop them.
  const Tensor moving = (J.abs().amax({1}) > 0).nonzero().reshape({-1});
  if (moving.size(0) < rows) {
    J = J.index_select(0, moving);
    r = r.index_select(0, moving);
  }
  const Tensor g = matmul(J.t(), r);  // J^T r: half the loss's gradient
  // The normal equations in the smaller of the two spaces.
  const bool parameter_space = numel <= J.size(0);
  const Tensor gram = parameter_space ? matmul(J.t(), J) : matmul(J, J.t());
  if (state.mu_ == 0) {
    const double largest = parameter_space ? gram.diagonal().max().item<double>()
                                           : J.square().sum({0}).max().item<double>();  // diag of J^T J
    state.mu_ = options.damping() * std::max(largest, 1e-300);
  }
  const Tensor identity = eye(gram.size(0), gram.options());
  std::vector<Tensor> saved;  // restored exactly when a step is rejected
  for (const Tensor& p : param_groups_[0].params()) saved.push_back(p.detach().clone());
  for (int64_t attempt = 0; attempt < options.max_attempts(); ++attempt) {
    Tensor s;
    try {
      const Tensor damped = gram + identity * state.mu_;
      s = parameter_space ? linalg::solve(damped, g) : matmul(J.t(), linalg::solve(damped, r));
    } catch (const Error&) {  // singular to working precision: damp harder
      s = Tensor();
    }
    double predicted = s.defined() ? s.dot(g + s * state.mu_).item<double>() : 0;
    double gain = -1;
    if (s.defined() && std::isfinite(predicted) && predicted > 0) {
      add_flat(s, -options.lr());
      LeastSquares trial;
      {
        AutoGradMode grad_mode(true);
        trial = closure(false);
      }
      const Tensor r_new = trial.residuals.detach().to(kFloat64);
      const double loss_new = r_new.dot(r_new).item<double>();
      gain = std::isfinite(loss_new) ? (loss - loss_new) / predicted : -1;
      if (gain > 0) {
        state.mu_ *= std::max(1.0 / 3.0, 1 - std::pow(2 * gain - 1, 3));
        state.nu_ = 2;
        ++state.step_;
        return full({}, loss, TensorOptions().dtype(now.residuals.scalar_type()));
      }
      for (size_t i = 0; i < saved.size(); ++i) param_groups_[0].params()[i].copy_(saved[i]);
    }
    ++state.rejected_;
    state.mu_ *= state.nu_;
    state.nu_ *= 2;
  }
  ++state.step_;
  return full({}, loss, TensorOptions().dtype(now.residuals.scalar_type()));
}

}  // namespace gradiens::optim
