// The cosine schedulers of SGDR (Loshchilov and Hutter), as PyTorch 1.13's:
// CosineAnnealingLR and CosineAnnealingWarmRestarts.
#pragma once

#include <cstdint>

#include "optim/schedulers/base.h"

namespace gradiens::optim {

// eta_min + (base_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2, computed
// recursively from the current lr (and going back up after T_max, as PyTorch's).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0, int64_t last_epoch = -1);
  std::string_view name() const override { return "CosineAnnealingLR"; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// The cosine from base_lr to eta_min over T_i epochs, restarting at base_lr;
// T_i starts at T_0 and is multiplied by T_mult at each restart.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1, double eta_min = 0,
                              int64_t last_epoch = -1);
  std::string_view name() const override { return "CosineAnnealingWarmRestarts"; }
  // Epochs since the last restart, and the length of the current cycle.
  double T_cur() const { return T_cur_; }
  int64_t T_i() const { return T_i_; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  // PyTorch's own step: it moves T_cur and T_i (and, like PyTorch's, leaves _step_count alone).
  void step_impl(std::optional<int64_t> epoch) override;
  std::vector<double> get_lr() override;

 private:
  int64_t T_0_;
  int64_t T_i_;
  int64_t T_mult_;
  double eta_min_;
  // A double as in PyTorch, where step(epoch) with T_mult > 1 makes it a float.
  double T_cur_;
};

}  // namespace gradiens::optim
