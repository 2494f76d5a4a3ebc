// optim::LBFGS: limited-memory BFGS with an optional strong-Wolfe line search,
// PyTorch 1.13's torch.optim.LBFGS step for step, under libtorch's names.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace gradiens::optim {

// LBFGSOptions(1).max_iter(20).history_size(50).line_search_fn("strong_wolfe").
// max_eval left unset becomes max_iter * 5 / 4 when the optimizer is built.
class LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
 public:
  LBFGSOptions(double lr = 1) : lr_(lr) {}

  LBFGSOptions& lr(double value) {
    lr_ = value;
    return *this;
  }
  LBFGSOptions& max_iter(int64_t value) {
    max_iter_ = value;
    return *this;
  }
  LBFGSOptions& max_eval(std::optional<int64_t> value) {
    max_eval_ = value;
    return *this;
  }
  LBFGSOptions& tolerance_grad(double value) {
    tolerance_grad_ = value;
    return *this;
  }
  LBFGSOptions& tolerance_change(double value) {
    tolerance_change_ = value;
    return *this;
  }
  LBFGSOptions& history_size(int64_t value) {
    history_size_ = value;
    return *this;
  }
  // "strong_wolfe", or nullopt for fixed steps of length lr.
  LBFGSOptions& line_search_fn(std::optional<std::string> value) {
    line_search_fn_ = std::move(value);
    return *this;
  }

  double lr() const { return lr_; }
  int64_t max_iter() const { return max_iter_; }
  const std::optional<int64_t>& max_eval() const { return max_eval_; }
  double tolerance_grad() const { return tolerance_grad_; }
  double tolerance_change() const { return tolerance_change_; }
  int64_t history_size() const { return history_size_; }
  const std::optional<std::string>& line_search_fn() const { return line_search_fn_; }

  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // {"lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change",
  //  "history_size", "line_search_fn"}; an unset max_eval or line_search_fn is null.
  nlohmann::json to_json() const override;
  void from_json(const nlohmann::json& j) override;

 private:
  double lr_ = 1;
  int64_t max_iter_ = 20;
  std::optional<int64_t> max_eval_;
  double tolerance_grad_ = 1e-7;
  double tolerance_change_ = 1e-9;
  int64_t history_size_ = 100;
  std::optional<std::string> line_search_fn_;
};

// The optimizer's whole state, kept (as PyTorch does) with the first parameter.
// The flat vectors are 1-D, in the parameters' dtype, the parameters
// concatenated in order. Scalars that PyTorch holds as 0-d tensors (ro, al,
// H_diag, and t where it came from one) hold values of that dtype.
class LBFGSParamState : public OptimizerCloneableParamState<LBFGSParamState> {
 public:
  int64_t func_evals() const { return func_evals_; }  // closure calls, over all steps
  int64_t n_iter() const { return n_iter_; }          // iterations, over all steps
  const Tensor& d() const { return d_; }              // the last search direction
  double t() const { return t_; }                     // the last step length
  double H_diag() const { return H_diag_; }           // the initial inverse-Hessian scale
  const Tensor& prev_flat_grad() const { return prev_flat_grad_; }
  double prev_loss() const { return prev_loss_; }
  const std::deque<Tensor>& old_dirs() const { return old_dirs_; }  // y = g_{k+1} - g_k, oldest first
  const std::deque<Tensor>& old_stps() const { return old_stps_; }  // s = t d
  const std::deque<double>& ro() const { return ro_; }              // 1 / (y . s)
  // The two-loop recursion's coefficients, created on the second iteration
  // (history_size entries, nullopt where never written).
  const std::optional<std::vector<std::optional<double>>>& al() const { return al_; }

  // {"func_evals", "n_iter"} and, after an iteration, "d", "t", "H_diag",
  // "prev_flat_grad", "prev_loss", "old_dirs.0".., "old_stps.0".., "ro" (a
  // list), and "al" (a list, null for unwritten entries) once it exists.
  // Non-finite numbers are written as "nan", "inf", "-inf".
  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override;
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override;

 private:
  friend class LBFGS;
  int64_t func_evals_ = 0;
  int64_t n_iter_ = 0;
  Tensor d_;
  double t_ = 0;
  double H_diag_ = 1;
  Tensor prev_flat_grad_;
  double prev_loss_ = 0;
  std::deque<Tensor> old_dirs_;
  std::deque<Tensor> old_stps_;
  std::deque<double> ro_;
  std::optional<std::vector<std::optional<double>>> al_;
};

// L-BFGS over all parameters as one flat vector (one parameter group only;
// float32 or float64 CPU parameters of one dtype). step(closure) runs up to
// max_iter iterations and returns the loss of the closure's first call:
//   opt.step([&] { opt.zero_grad(); auto loss = f(x); loss.backward(); return loss; });
// The closure runs with grad mode on; the updates never record on the tape.
class LBFGS : public Optimizer {
 public:
  explicit LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults = {});
  explicit LBFGS(std::vector<Tensor> params, LBFGSOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;

 private:
  template <class T>
  Tensor step_impl(const LossClosure& closure, int64_t numel);
  template <class T>
  void gather_flat_grad(const Tensor& out) const;
  template <class T>
  void add_grad(double step_size, const Tensor& update) const;
  template <class T>
  void gather_params(const Tensor& out) const;
  template <class T>
  void set_params(const Tensor& flat) const;

  // A 1-D buffer of `numel` elements of `dtype` from the recycled ones, or a new one.
  Tensor take_buffer(int64_t numel, ScalarType dtype);
  // Where the parameters (and so the flat vectors) live.
  Device device() const { return param_groups_[0].params().front().device(); }
  // Keeps `buffer` for take_buffer when nothing else refers to it.
  void recycle(Tensor&& buffer);

  std::vector<Tensor> spare_buffers_;
};

}  // namespace gradiens::optim
