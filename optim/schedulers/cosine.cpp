// CosineAnnealingLR and CosineAnnealingWarmRestarts with PyTorch 1.13's
// formulas, in its order of operations (the lrs match it bit for bit).
#include "optim/schedulers/cosine.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

namespace gradiens::optim {

using std::numbers::pi;

// ---- CosineAnnealingLR ----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min, int64_t last_epoch)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  // PyTorch fails on the first step instead (integer division or modulo by zero).
  GD_CHECK(T_max != 0, "CosineAnnealingLR: T_max must not be 0 (integer division or modulo by zero)");
  start(last_epoch);
}

std::vector<double> CosineAnnealingLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  double epoch = static_cast<double>(last_epoch_), T_max = static_cast<double>(T_max_);
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0) {
    // The first step of a resumed schedule: the closed form.
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(epoch * pi / T_max)) / 2;
  } else if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0) {
    // Past a minimum, where the ratio below would divide by 1 + cos(pi) = 0.
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T_max)) / 2;
  } else {
    double ratio = (1 + std::cos(pi * epoch / T_max)) / (1 + std::cos(pi * (epoch - 1) / T_max));
    for (double& lr : lrs) lr = ratio * (lr - eta_min_) + eta_min_;
  }
  return lrs;
}

std::optional<std::vector<double>> CosineAnnealingLR::closed_form_lr() const {
  std::vector<double> lrs;
  double epoch = static_cast<double>(last_epoch_), T_max = static_cast<double>(T_max_);
  for (double base_lr : base_lrs_)
    lrs.push_back(eta_min_ + (base_lr - eta_min_) * (1 + std::cos(pi * epoch / T_max)) / 2);
  return lrs;
}

nlohmann::json CosineAnnealingLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["T_max"] = T_max_;
  j["eta_min"] = eta_min_;
  return j;
}

void CosineAnnealingLR::load_state_dict(const nlohmann::json& state_dict) {
  auto T_max = json_get<int64_t>(state_dict, "T_max", load_what());
  auto eta_min = json_get<double>(state_dict, "eta_min", load_what());
  GD_CHECK(T_max != 0, "CosineAnnealingLR.load_state_dict: 'T_max' must not be 0");
  LRScheduler::load_state_dict(state_dict);
  T_max_ = T_max;
  eta_min_ = eta_min;
}

// ---- CosineAnnealingWarmRestarts ----

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult,
                                                         double eta_min, int64_t last_epoch)
    : LRScheduler(optimizer), T_0_(T_0), T_i_(T_0), T_mult_(T_mult), eta_min_(eta_min),
      T_cur_(static_cast<double>(last_epoch)) {
  GD_CHECK(T_0 > 0, fmt::format("Expected positive integer T_0, but got {}", T_0));
  GD_CHECK(T_mult >= 1, fmt::format("Expected integer T_mult >= 1, but got {}", T_mult));
  start(last_epoch);
}

void CosineAnnealingWarmRestarts::step_impl(std::optional<int64_t> epoch) {
  if (!epoch && last_epoch_ < 0) epoch = 0;
  if (!epoch) {
    epoch = last_epoch_ + 1;
    T_cur_ = T_cur_ + 1;
    if (T_cur_ >= static_cast<double>(T_i_)) {
      T_cur_ = T_cur_ - static_cast<double>(T_i_);
      T_i_ = T_i_ * T_mult_;
    }
  } else {
    int64_t e = *epoch;
    GD_CHECK(e >= 0, fmt::format("Expected non-negative epoch, but got {}", e));
    if (e >= T_0_) {
      if (T_mult_ == 1) {
        T_cur_ = static_cast<double>(e % T_0_);
      } else {
        double cycles = static_cast<double>(e) / static_cast<double>(T_0_) * static_cast<double>(T_mult_ - 1) + 1;
        auto n = static_cast<int64_t>(std::log(cycles) / std::log(static_cast<double>(T_mult_)));
        int64_t T_mult_n = 1;
        for (int64_t k = 0; k < n; ++k) T_mult_n *= T_mult_;
        T_cur_ = static_cast<double>(e) - static_cast<double>(T_0_ * (T_mult_n - 1)) / static_cast<double>(T_mult_ - 1);
        T_i_ = T_0_ * T_mult_n;
      }
    } else {
      T_i_ = T_0_;
      T_cur_ = static_cast<double>(e);
    }
  }
  last_epoch_ = *epoch;
  apply_lrs(get_lr());
}

std::vector<double> CosineAnnealingWarmRestarts::get_lr() {
  std::vector<double> lrs;
  for (double base_lr : base_lrs_)
    lrs.push_back(eta_min_ + (base_lr - eta_min_) * (1 + std::cos(pi * T_cur_ / static_cast<double>(T_i_))) / 2);
  return lrs;
}

nlohmann::json CosineAnnealingWarmRestarts::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["T_0"] = T_0_;
  j["T_i"] = T_i_;
  j["T_mult"] = T_mult_;
  j["eta_min"] = eta_min_;
  j["T_cur"] = T_cur_;
  return j;
}

void CosineAnnealingWarmRestarts::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = load_what();
  auto T_0 = json_get<int64_t>(state_dict, "T_0", what);
  auto T_i = json_get<int64_t>(state_dict, "T_i", what);
  auto T_mult = json_get<int64_t>(state_dict, "T_mult", what);
  auto eta_min = json_get<double>(state_dict, "eta_min", what);
  auto T_cur = json_get<double>(state_dict, "T_cur", what);
  GD_CHECK(T_0 > 0 && T_i > 0 && T_mult >= 1,
           fmt::format("{}: 'T_0' and 'T_i' must be positive and 'T_mult' at least 1 (got {}, {}, {})", what, T_0,
                       T_i, T_mult));
  LRScheduler::load_state_dict(state_dict);
  T_0_ = T_0;
  T_i_ = T_i;
  T_mult_ = T_mult;
  eta_min_ = eta_min;
  T_cur_ = T_cur;
}

}  // namespace gradiens::optim
