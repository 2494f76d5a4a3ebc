// StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR, PolynomialLR,
// LambdaLR and MultiplicativeLR with PyTorch 1.13's recursive formulas, written
// in its order of operations so that the lrs match it bit for bit.
#include "optim/schedulers/decay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gradiens::optim {

using scheduler_detail::bisect_right;
using scheduler_detail::divide;
using scheduler_detail::floor_divide;

namespace {

std::vector<double> scaled(std::vector<double> lrs, double factor) {
  for (double& lr : lrs) lr *= factor;
  return lrs;
}

std::vector<LRLambda> one_lambda_per_group(std::vector<LRLambda> lr_lambdas, const Optimizer& optimizer,
                                           std::string_view scheduler) {
  GD_CHECK(lr_lambdas.size() == optimizer.param_groups().size(),
           fmt::format("Expected {} lr_lambdas, but got {}", optimizer.param_groups().size(), lr_lambdas.size()));
  for (const auto& fn : lr_lambdas) GD_CHECK(fn != nullptr, fmt::format("{}: an lr_lambda is empty", scheduler));
  return lr_lambdas;
}

// PyTorch saves a plain function as None: the functions stay with the scheduler.
nlohmann::json no_lambdas(size_t n) { return nlohmann::json(std::vector<std::nullptr_t>(n, nullptr)); }

}  // namespace

// ---- StepLR ----

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  // PyTorch fails on the first step instead (integer division or modulo by zero).
  GD_CHECK(step_size != 0, "StepLR: step_size must not be 0 (integer division or modulo by zero)");
  start(last_epoch);
}

std::vector<double> StepLR::get_lr() {
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return group_lrs();
  return scaled(group_lrs(), gamma_);
}

std::optional<std::vector<double>> StepLR::closed_form_lr() const {
  double decay = std::pow(gamma_, static_cast<double>(floor_divide(last_epoch_, step_size_)));
  return scaled(base_lrs_, decay);
}

nlohmann::json StepLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["step_size"] = step_size_;
  j["gamma"] = gamma_;
  return j;
}

void StepLR::load_state_dict(const nlohmann::json& state_dict) {
  auto step_size = json_get<int64_t>(state_dict, "step_size", load_what());
  auto gamma = json_get<double>(state_dict, "gamma", load_what());
  GD_CHECK(step_size != 0, "StepLR.load_state_dict: 'step_size' must not be 0");
  LRScheduler::load_state_dict(state_dict);
  step_size_ = step_size;
  gamma_ = gamma;
}

// ---- MultiStepLR ----

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  start(last_epoch);
}

std::vector<double> MultiStepLR::get_lr() {
  auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return group_lrs();
  return scaled(group_lrs(), std::pow(gamma_, static_cast<double>(count)));
}

std::optional<std::vector<double>> MultiStepLR::closed_form_lr() const {
  double decay = std::pow(gamma_, static_cast<double>(bisect_right(milestones_, last_epoch_)));
  return scaled(base_lrs_, decay);
}

nlohmann::json MultiStepLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["milestones"] = milestones_;
  j["gamma"] = gamma_;
  return j;
}

void MultiStepLR::load_state_dict(const nlohmann::json& state_dict) {
  auto milestones = json_get<std::vector<int64_t>>(state_dict, "milestones", load_what());
  auto gamma = json_get<double>(state_dict, "gamma", load_what());
  LRScheduler::load_state_dict(state_dict);
  std::sort(milestones.begin(), milestones.end());
  milestones_ = std::move(milestones);
  gamma_ = gamma;
}

// ---- ConstantLR ----

ConstantLR::ConstantLR(Optimizer& optimizer, double factor, int64_t total_iters, int64_t last_epoch)
    : LRScheduler(optimizer), factor_(factor), total_iters_(total_iters) {
  GD_CHECK(!(factor > 1.0 || factor < 0), "Constant multiplicative factor expected to be between 0 and 1.");
  start(last_epoch);
}

std::vector<double> ConstantLR::get_lr() {
  if (last_epoch_ == 0) return scaled(group_lrs(), factor_);
  if (last_epoch_ != total_iters_) return group_lrs();
  return scaled(group_lrs(), divide(1.0, factor_, name()));
}

std::optional<std::vector<double>> ConstantLR::closed_form_lr() const {
  double factor = factor_ + (last_epoch_ >= total_iters_ ? 1.0 - factor_ : 0.0);
  return scaled(base_lrs_, factor);
}

nlohmann::json ConstantLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["factor"] = factor_;
  j["total_iters"] = total_iters_;
  return j;
}

void ConstantLR::load_state_dict(const nlohmann::json& state_dict) {
  auto factor = json_get<double>(state_dict, "factor", load_what());
  auto total_iters = json_get<int64_t>(state_dict, "total_iters", load_what());
  LRScheduler::load_state_dict(state_dict);
  factor_ = factor;
  total_iters_ = total_iters;
}

// ---- LinearLR ----

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters,
                   int64_t last_epoch)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  GD_CHECK(!(start_factor > 1.0 || start_factor < 0), "Starting multiplicative factor expected to be between 0 and 1.");
  GD_CHECK(!(end_factor > 1.0 || end_factor < 0), "Ending multiplicative factor expected to be between 0 and 1.");
  start(last_epoch);
}

std::vector<double> LinearLR::get_lr() {
  if (last_epoch_ == 0) return scaled(group_lrs(), start_factor_);
  if (last_epoch_ > total_iters_) return group_lrs();
  double change = end_factor_ - start_factor_;
  double denominator =
      static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * change;
  return scaled(group_lrs(), 1. + divide(change, denominator, name()));
}

std::optional<std::vector<double>> LinearLR::closed_form_lr() const {
  double progress = (end_factor_ - start_factor_) * static_cast<double>(std::min(total_iters_, last_epoch_));
  return scaled(base_lrs_, start_factor_ + divide(progress, static_cast<double>(total_iters_), name()));
}

nlohmann::json LinearLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["start_factor"] = start_factor_;
  j["end_factor"] = end_factor_;
  j["total_iters"] = total_iters_;
  return j;
}

void LinearLR::load_state_dict(const nlohmann::json& state_dict) {
  auto start_factor = json_get<double>(state_dict, "start_factor", load_what());
  auto end_factor = json_get<double>(state_dict, "end_factor", load_what());
  auto total_iters = json_get<int64_t>(state_dict, "total_iters", load_what());
  LRScheduler::load_state_dict(state_dict);
  start_factor_ = start_factor;
  end_factor_ = end_factor;
  total_iters_ = total_iters;
}

// ---- ExponentialLR ----

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer), gamma_(gamma) {
  start(last_epoch);
}

std::vector<double> ExponentialLR::get_lr() {
  if (last_epoch_ == 0) return group_lrs();
  return scaled(group_lrs(), gamma_);
}

std::optional<std::vector<double>> ExponentialLR::closed_form_lr() const {
  return scaled(base_lrs_, std::pow(gamma_, static_cast<double>(last_epoch_)));
}

nlohmann::json ExponentialLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["gamma"] = gamma_;
  return j;
}

void ExponentialLR::load_state_dict(const nlohmann::json& state_dict) {
  auto gamma = json_get<double>(state_dict, "gamma", load_what());
  LRScheduler::load_state_dict(state_dict);
  gamma_ = gamma;
}

// ---- PolynomialLR ----

PolynomialLR::PolynomialLR(Optimizer& optimizer, int64_t total_iters, double power, int64_t last_epoch)
    : LRScheduler(optimizer), total_iters_(total_iters), power_(power) {
  start(last_epoch);
}

std::vector<double> PolynomialLR::get_lr() {
  if (last_epoch_ == 0 || last_epoch_ > total_iters_) return group_lrs();
  double total = static_cast<double>(total_iters_), epoch = static_cast<double>(last_epoch_);
  double ratio = (1.0 - epoch / total) / (1.0 - (epoch - 1) / total);
  return scaled(group_lrs(), std::pow(ratio, power_));
}

std::optional<std::vector<double>> PolynomialLR::closed_form_lr() const {
  double done = divide(static_cast<double>(std::min(total_iters_, last_epoch_)), static_cast<double>(total_iters_),
                       name());
  return scaled(base_lrs_, std::pow(1.0 - done, power_));
}

nlohmann::json PolynomialLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["total_iters"] = total_iters_;
  j["power"] = power_;
  return j;
}

void PolynomialLR::load_state_dict(const nlohmann::json& state_dict) {
  auto total_iters = json_get<int64_t>(state_dict, "total_iters", load_what());
  auto power = json_get<double>(state_dict, "power", load_what());
  LRScheduler::load_state_dict(state_dict);
  total_iters_ = total_iters;
  power_ = power;
}

// ---- LambdaLR ----

LambdaLR::LambdaLR(Optimizer& optimizer, LRLambda lr_lambda, int64_t last_epoch)
    : LambdaLR(optimizer, std::vector<LRLambda>(optimizer.param_groups().size(), lr_lambda), last_epoch) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas, int64_t last_epoch)
    : LRScheduler(optimizer), lr_lambdas_(one_lambda_per_group(std::move(lr_lambdas), optimizer, "LambdaLR")) {
  start(last_epoch);
}

std::vector<double> LambdaLR::get_lr() {
  std::vector<double> lrs;
  for (size_t i = 0; i < base_lrs_.size(); ++i) lrs.push_back(base_lrs_[i] * lr_lambdas_[i](last_epoch_));
  return lrs;
}

nlohmann::json LambdaLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["lr_lambdas"] = no_lambdas(lr_lambdas_.size());
  return j;
}

// ---- MultiplicativeLR ----

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, LRLambda lr_lambda, int64_t last_epoch)
    : MultiplicativeLR(optimizer, std::vector<LRLambda>(optimizer.param_groups().size(), lr_lambda), last_epoch) {}

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas, int64_t last_epoch)
    : LRScheduler(optimizer), lr_lambdas_(one_lambda_per_group(std::move(lr_lambdas), optimizer, "MultiplicativeLR")) {
  start(last_epoch);
}

std::vector<double> MultiplicativeLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ > 0)
    for (size_t i = 0; i < lrs.size(); ++i) lrs[i] *= lr_lambdas_[i](last_epoch_);
  return lrs;
}

nlohmann::json MultiplicativeLR::state_dict() const {
  auto j = LRScheduler::state_dict();
  j["lr_lambdas"] = no_lambdas(lr_lambdas_.size());
  return j;
}

}  // namespace gradiens::optim
