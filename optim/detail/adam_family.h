// What Adam and AdamW share: their options (AdamOptions and AdamWOptions differ
// only in the default weight_decay and their name) and their update, which
// differ only in how weight decay enters.
#pragma once

#include <functional>
#include <optional>
#include <tuple>

#include "optim/optimizer.h"

namespace gradiens::optim {
class AdamParamState;
}

namespace gradiens::optim::detail {

// lr, betas, eps, weight_decay, amsgrad and maximize, with libtorch's chained
// setters returning Self (AdamOptions or AdamWOptions).
template <class Self>
class AdamFamilyOptions : public OptimizerCloneableOptions<Self> {
 public:
  Self& lr(double lr) { lr_ = lr; return self(); }
  double lr() const { return lr_; }
  Self& betas(std::tuple<double, double> betas) { betas_ = betas; return self(); }
  const std::tuple<double, double>& betas() const { return betas_; }
  Self& eps(double eps) { eps_ = eps; return self(); }
  double eps() const { return eps_; }
  Self& weight_decay(double weight_decay) { weight_decay_ = weight_decay; return self(); }
  double weight_decay() const { return weight_decay_; }
  Self& amsgrad(bool amsgrad) { amsgrad_ = amsgrad; return self(); }
  bool amsgrad() const { return amsgrad_; }
  Self& maximize(bool maximize) { maximize_ = maximize; return self(); }
  bool maximize() const { return maximize_; }

  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // beta1, as PyTorch's cyclic schedulers vary it (use_beta1).
  std::optional<double> get_momentum() const override { return std::get<0>(betas_); }
  void set_momentum(double momentum) override { std::get<0>(betas_) = momentum; }
  // {"lr", "betas": [b1, b2], "eps", "weight_decay", "amsgrad", "maximize"}.
  nlohmann::json to_json() const override;
  // "amsgrad" and "maximize" may be missing (false), as PyTorch's __setstate__ allows.
  void from_json(const nlohmann::json& j) override;
  // Throws PyTorch's message for the first invalid value ("Invalid learning rate: -0.1").
  void validate() const;

 protected:
  AdamFamilyOptions(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}

 private:
  Self& self() { return static_cast<Self&>(*this); }

  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_;
  bool amsgrad_ = false;
  bool maximize_ = false;
};

// The update of one parameter group, shared by Adam and AdamW.
struct AdamFamilyStep {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize;
  bool decoupled_weight_decay;  // AdamW: param *= 1 - lr * weight_decay first
  const char* optimizer;        // "Adam" or "AdamW", for messages

  template <class Options>
  static AdamFamilyStep of(const Options& o, bool decoupled_weight_decay, const char* optimizer) {
    return {o.lr(),      std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(), o.weight_decay(), o.amsgrad(),
            o.maximize(), decoupled_weight_decay, optimizer};
  }

  // state_of(param) is the optimizer's state of the parameter (created empty on first use).
  void update(const OptimizerParamGroup& group, const std::function<AdamParamState&(const Tensor&)>& state_of) const;
};

}  // namespace gradiens::optim::detail
