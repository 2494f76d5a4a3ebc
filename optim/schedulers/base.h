// optim::LRScheduler, the base of the learning-rate schedulers, as PyTorch
// 1.13's _LRScheduler: "initial_lr" kept with each group, base_lrs, last_epoch,
// the chainable step(), get_last_lr() and a JSON state_dict.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "optim/optimizer.h"

namespace gradiens::optim {

// PyTorch's "float or list" arguments (max_lr, base_momentum, min_lr, ...): one
// value for every parameter group, or a list with one value per group.
class PerGroup {
 public:
  PerGroup(double value) : values_{value}, is_list_(false) {}
  PerGroup(std::vector<double> values) : values_(std::move(values)), is_list_(true) {}
  PerGroup(std::initializer_list<double> values) : values_(values), is_list_(true) {}

  bool is_list() const { return is_list_; }
  const std::vector<double>& values() const { return values_; }
  // One value per group: the value repeated, or the list when it has `num_groups` values.
  // A list of another length is an error with `message`.
  std::vector<double> expand(size_t num_groups, const std::string& message) const;

 private:
  std::vector<double> values_;
  bool is_list_;
};

class SequentialLR;

// Every scheduler is stepped after the optimizer (PyTorch >= 1.1):
//   opt.step(); sched.step();
// Most schedules are recursive (chainable), as PyTorch's: each step derives the
// new lr from the group's current lr, so changes made to it from outside carry
// forward. LambdaLR, CosineAnnealingWarmRestarts and the cyclic schedulers set it
// from base values alone.
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Moves to the next epoch (or batch, for the cyclic schedulers) and sets each group's lr.
  void step() { step_impl(std::nullopt); }
  // PyTorch's deprecated step(epoch): jumps to `epoch`, through the closed form
  // where the scheduler has one and the chainable form otherwise. SequentialLR
  // uses it to restart a scheduler at its milestone.
  void step(int64_t epoch) { step_impl(epoch); }

  // The lrs the last step set, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  Optimizer& optimizer() const { return *optimizer_; }
  int64_t last_epoch() const { return last_epoch_; }
  // Each group's "initial_lr" when the scheduler started.
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  // "StepLR", "OneCycleLR", ...: the class, as error messages name it.
  virtual std::string_view name() const = 0;

  // Everything but the optimizer, under PyTorch's names: {"base_lrs": [...],
  // "last_epoch": 37, "_step_count": 38, "_last_lr": [...], "step_size": 10, ...}.
  // The group lrs and the keys schedulers keep with the groups ("initial_lr",
  // "max_lr", ...) belong to the optimizer's state_dict: save both, as in PyTorch.
  virtual nlohmann::json state_dict() const;
  // Restores what state_dict wrote, hyperparameters included (PyTorch's
  // __dict__.update). A missing key, a wrong type or a list of the wrong length
  // is an error naming it, and leaves the scheduler as it was.
  virtual void load_state_dict(const nlohmann::json& state_dict);

 protected:
  explicit LRScheduler(Optimizer& optimizer) : optimizer_(&optimizer) {}

  // PyTorch's _LRScheduler.__init__, which each scheduler's constructor ends
  // with (a base constructor could not call the derived class's get_lr()): with
  // last_epoch -1, sets each group's "initial_lr" to its lr unless it is already
  // there; otherwise requires it (resuming). Then base_lrs and the initial step.
  void start(int64_t last_epoch);
  // PyTorch's _initial_step: resets the step count and steps once.
  void initial_step();

  // The step: the base advances last_epoch and applies get_lr() (or, given an
  // epoch, the closed form); CosineAnnealingWarmRestarts and the composite
  // schedulers replace it, as they do in PyTorch.
  virtual void step_impl(std::optional<int64_t> epoch);
  // The lrs at last_epoch_ from the groups' current lrs (the chainable form).
  virtual std::vector<double> get_lr() = 0;
  // The lrs at last_epoch_ from base_lrs_ alone, for the schedulers PyTorch gives one.
  virtual std::optional<std::vector<double>> closed_form_lr() const { return std::nullopt; }

  // Each group's current lr.
  std::vector<double> group_lrs() const;
  // Sets each group's lr and records them as the last lrs.
  void apply_lrs(const std::vector<double>& lrs);
  // The what of json_get's messages: "StepLR.load_state_dict".
  std::string load_what() const;

  Optimizer* optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
  std::vector<double> last_lr_;

 private:
  // SequentialLR rewinds and restarts the schedulers it holds.
  friend class SequentialLR;
};

namespace scheduler_detail {

// A double as Python's repr prints it ("1.0", "-0.1", "1e-05"), for PyTorch's messages.
std::string python_repr(double value);
// a / b, or PyTorch's ZeroDivisionError as an Error naming the scheduler.
double divide(double a, double b, std::string_view scheduler);
// Python's bisect.bisect_right, which also defines the result for an unsorted list.
size_t bisect_right(const std::vector<int64_t>& sorted, int64_t value);
// Python's floor division.
int64_t floor_divide(int64_t a, int64_t b);
// A value the scheduler keeps with group `index` ("initial_lr", "max_lr", ...);
// its absence is an error (PyTorch's KeyError) naming the key and the group.
double group_value(const OptimizerParamGroup& group, const std::string& key, size_t index);
// Doubles that may be infinite or NaN (ReduceLROnPlateau's best), which JSON
// numbers cannot hold: written as "inf", "-inf" and "nan".
nlohmann::json double_to_json(double value);
double double_from_json(const nlohmann::json& j, const std::string& key, const std::string& what);
// A list of numbers with one per group (base_lrs, _last_lr, min_lrs, ...).
std::vector<double> per_group_from_json(const nlohmann::json& j, const std::string& key, const std::string& what,
                                        size_t num_groups);

}  // namespace scheduler_detail

}  // namespace gradiens::optim
