// Schedulers made of schedulers, as PyTorch 1.13's: SequentialLR (one after
// another, switching at milestones) and ChainedScheduler (all at every step).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "optim/schedulers/base.h"

namespace gradiens::optim {

// Runs schedulers[i] from milestones[i - 1] on, restarting it there with
// step(0). The schedulers must be built on `optimizer` first; as in PyTorch,
// SequentialLR then resets each group's lr to its "initial_lr", rewinds them
// all by one epoch and restarts the first.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones, int64_t last_epoch = -1);
  std::string_view name() const override { return "SequentialLR"; }
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }
  // {"last_epoch", "_milestones", "_last_lr", "_schedulers": [each scheduler's state_dict]}.
  // Loading is not atomic across schedulers: a bad state for one leaves those before it loaded.
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  // Only step() (PyTorch's SequentialLR.step takes no epoch).
  void step_impl(std::optional<int64_t> epoch) override;
  std::vector<double> get_lr() override { return group_lrs(); }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// Steps every scheduler, in order, at each step: their factors multiply (for
// the chainable ones).
class ChainedScheduler : public LRScheduler {
 public:
  explicit ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers);
  std::string_view name() const override { return "ChainedScheduler"; }
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }
  // {"_last_lr", "_schedulers": [each scheduler's state_dict]}.
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state_dict) override;

 protected:
  // Only step() (PyTorch's ChainedScheduler.step takes no epoch).
  void step_impl(std::optional<int64_t> epoch) override;
  std::vector<double> get_lr() override { return group_lrs(); }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
};

}  // namespace gradiens::optim
