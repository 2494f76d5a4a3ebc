// optim::AdamW (Adam with decoupled weight decay, Loshchilov and Hutter), as
// libtorch's torch::optim::AdamW with PyTorch 1.13's update and messages.
#pragma once

#include <memory>
#include <vector>

#include "optim/adam.h"

namespace gradiens::optim {

// AdamOptions' fields, but weight_decay (default 1e-2) shrinks the parameter
// instead of adding to the gradient.
class AdamWOptions : public detail::AdamFamilyOptions<AdamWOptions> {
 public:
  AdamWOptions(double lr = 1e-3) : AdamFamilyOptions(lr, /*weight_decay=*/1e-2) {}
  // API.md's AdamW(params, AdamOptions(lr)...): every field as given, weight_decay
  // included (AdamOptions' default is 0; write AdamWOptions for AdamW's 1e-2).
  AdamWOptions(const AdamOptions& o) : AdamFamilyOptions(o.lr(), o.weight_decay()) {
    betas(o.betas()).eps(o.eps()).amsgrad(o.amsgrad()).maximize(o.maximize());
  }
};

// The same entries as Adam's: "step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq".
using AdamWParamState = AdamParamState;

class AdamW : public Optimizer {
 public:
  explicit AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  explicit AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace gradiens::optim

namespace gradiens::optim::detail {
extern template class AdamFamilyOptions<AdamWOptions>;
}
