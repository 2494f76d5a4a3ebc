// optim::LevenbergMarquardt: damped Gauss-Newton for losses that are sums of
// squares, L(theta) = ||r(theta)||^2 (a PINN's weighted mean squared
// residuals, a curve fit). Each step solves
//   (J^T J + mu I) s = J^T r,   theta <- theta - lr s,
// with J = dr/dtheta, in parameter space (P x P) or, when there are fewer
// residuals R than parameters, in residual space through
// s = J^T (J J^T + mu I)^{-1} r. The damping mu follows Nielsen's rule: with
// the gain ratio rho = (L(theta) - L(theta - s)) / (s^T (J^T r + mu s)),
// a step with rho > 0 is taken and mu *= max(1/3, 1 - (2 rho - 1)^3);
// otherwise it is undone, mu *= nu and nu *= 2 (nu back to 2 after a taken
// step). mu starts at damping * max diag(J^T J).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "optim/optimizer.h"

namespace gradiens::optim {

class LevenbergMarquardtOptions : public OptimizerCloneableOptions<LevenbergMarquardtOptions> {
 public:
  LevenbergMarquardtOptions(double lr = 1) : lr_(lr) {}

  LevenbergMarquardtOptions& lr(double value) {
    lr_ = value;
    return *this;
  }
  // The initial damping relative to the largest diagonal entry of J^T J.
  LevenbergMarquardtOptions& damping(double value) {
    damping_ = value;
    return *this;
  }
  // Rejected steps tried (each with a larger damping) before step() gives up
  // for this call and leaves the parameters where they were.
  LevenbergMarquardtOptions& max_attempts(int64_t value) {
    max_attempts_ = value;
    return *this;
  }

  double lr() const { return lr_; }
  double damping() const { return damping_; }
  int64_t max_attempts() const { return max_attempts_; }

  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // {"lr", "damping", "max_attempts"}
  nlohmann::json to_json() const override;
  void from_json(const nlohmann::json& j) override;

 private:
  double lr_ = 1;
  double damping_ = 1e-3;
  int64_t max_attempts_ = 10;
};

// The damping state, kept with the first parameter: {"step", "mu", "nu",
// "rejected"} (mu = 0 before the first step).
class LevenbergMarquardtParamState : public OptimizerCloneableParamState<LevenbergMarquardtParamState> {
 public:
  int64_t step() const { return step_; }
  double mu() const { return mu_; }
  double nu() const { return nu_; }
  int64_t rejected() const { return rejected_; }  // rejected attempts, over all steps
  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override;
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override;

 private:
  friend class LevenbergMarquardt;
  int64_t step_ = 0;
  double mu_ = 0;
  double nu_ = 2;
  int64_t rejected_ = 0;
};

// Residuals r [R] and, when asked, their Jacobian [R, P] with respect to the
// optimizer's parameters flattened in order (one parameter group).
struct LeastSquares {
  Tensor residuals;
  Tensor jacobian;
};

class LevenbergMarquardt : public Optimizer {
 public:
  // Evaluates the residuals at the current parameters; with `jacobian`, their
  // Jacobian too.
  using ResidualClosure = std::function<LeastSquares(bool jacobian)>;

  explicit LevenbergMarquardt(std::vector<Tensor> params, LevenbergMarquardtOptions defaults = {});

  // A loss closure cannot drive it: an Error saying to pass residuals.
  Tensor step(LossClosure closure = nullptr) override;
  // One step; returns ||r||^2 before it (as LBFGS returns the loss of its first
  // closure call). The closure runs with grad mode on; updates never record.
  Tensor step(const ResidualClosure& closure);

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;

 private:
  // theta += scale * flat, the flat vector split over the parameters.
  void add_flat(const Tensor& flat, double scale);
};

}  // namespace gradiens::optim
