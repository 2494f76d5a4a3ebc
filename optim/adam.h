// optim::Adam (Kingma and Ba, with AMSGrad and maximize), as libtorch's
// torch::optim::Adam with PyTorch 1.13's update, defaults and messages.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "optim/detail/adam_family.h"
#include "optim/optimizer.h"

namespace gradiens::optim {

// lr (default 1e-3), betas (0.9, 0.999), eps (1e-8), weight_decay (0, added to
// the gradient), amsgrad, maximize; the setters chain as libtorch's.
class AdamOptions : public detail::AdamFamilyOptions<AdamOptions> {
 public:
  AdamOptions(double lr = 1e-3) : AdamFamilyOptions(lr, /*weight_decay=*/0) {}
};

// "step", "exp_avg", "exp_avg_sq" and, with amsgrad, "max_exp_avg_sq".
class AdamParamState : public OptimizerCloneableParamState<AdamParamState> {
 public:
  int64_t step() const { return step_; }
  AdamParamState& step(int64_t step) { step_ = step; return *this; }
  const Tensor& exp_avg() const { return exp_avg_; }
  AdamParamState& exp_avg(const Tensor& t) { exp_avg_ = t; return *this; }
  const Tensor& exp_avg_sq() const { return exp_avg_sq_; }
  AdamParamState& exp_avg_sq(const Tensor& t) { exp_avg_sq_ = t; return *this; }
  // Undefined unless amsgrad was on.
  const Tensor& max_exp_avg_sq() const { return max_exp_avg_sq_; }
  AdamParamState& max_exp_avg_sq(const Tensor& t) { max_exp_avg_sq_ = t; return *this; }

  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override;
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override;

 private:
  friend struct detail::AdamFamilyStep;
  int64_t step_ = 0;
  Tensor exp_avg_, exp_avg_sq_, max_exp_avg_sq_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  explicit Adam(std::vector<Tensor> params, AdamOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace gradiens::optim

namespace gradiens::optim::detail {
extern template class AdamFamilyOptions<AdamOptions>;
}
