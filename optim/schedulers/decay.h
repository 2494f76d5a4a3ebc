// The multiplicative schedulers, as PyTorch 1.13's: StepLR, MultiStepLR,
// ConstantLR, LinearLR, ExponentialLR, PolynomialLR, LambdaLR, MultiplicativeLR.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "optim/schedulers/base.h"

namespace gradiens::optim {

// lr * gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);
  std::string_view name() const override { return "StepLR"; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr * gamma at each milestone (gamma^k at one listed k times).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1, int64_t last_epoch = -1);
  std::string_view name() const override { return "MultiStepLR"; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  std::vector<int64_t> milestones_;  // sorted, with repeats (PyTorch's Counter)
  double gamma_;
};

// lr * factor until epoch total_iters, then lr.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& optimizer, double factor = 1.0 / 3, int64_t total_iters = 5, int64_t last_epoch = -1);
  std::string_view name() const override { return "ConstantLR"; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  double factor_;
  int64_t total_iters_;
};

// lr * a factor going linearly from start_factor to end_factor over total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5,
           int64_t last_epoch = -1);
  std::string_view name() const override { return "LinearLR"; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

// lr * gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch = -1);
  std::string_view name() const override { return "ExponentialLR"; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  double gamma_;
};

// base_lr * (1 - epoch / total_iters)^power, then constant.
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(Optimizer& optimizer, int64_t total_iters = 5, double power = 1.0, int64_t last_epoch = -1);
  std::string_view name() const override { return "PolynomialLR"; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  int64_t total_iters_;
  double power_;
};

// A function of the epoch: a factor (LambdaLR) or a multiplier (MultiplicativeLR).
using LRLambda = std::function<double(int64_t epoch)>;

// base_lr * lr_lambda(epoch), one function for all groups or one per group.
// state_dict holds no functions (PyTorch saves None for plain functions).
class LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, LRLambda lr_lambda, int64_t last_epoch = -1);
  LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas, int64_t last_epoch = -1);
  std::string_view name() const override { return "LambdaLR"; }
  nlohmann::json state_dict() const override;

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<LRLambda> lr_lambdas_;
};

// lr * lr_lambda(epoch) every epoch after the first.
class MultiplicativeLR : public LRScheduler {
 public:
  MultiplicativeLR(Optimizer& optimizer, LRLambda lr_lambda, int64_t last_epoch = -1);
  MultiplicativeLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas, int64_t last_epoch = -1);
  std::string_view name() const override { return "MultiplicativeLR"; }
  nlohmann::json state_dict() const override;

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<LRLambda> lr_lambdas_;
};

}  // namespace gradiens::optim
