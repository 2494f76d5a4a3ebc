// SequentialLR and ChainedScheduler, as PyTorch 1.13's (construction, the
// milestone restart with step(0), and state_dicts holding the schedulers' own).
#include "optim/schedulers/composite.h"

#include <fmt/format.h>

namespace gradiens::optim {

using scheduler_detail::bisect_right;
using scheduler_detail::group_value;
using scheduler_detail::per_group_from_json;

namespace {

void check_not_null(const std::vector<std::shared_ptr<LRScheduler>>& schedulers, std::string_view who) {
  for (size_t i = 0; i < schedulers.size(); ++i)
    GD_CHECK(schedulers[i] != nullptr, fmt::format("{}: the scheduler at index {} is null", who, i));
}

Optimizer& first_optimizer(const std::vector<std::shared_ptr<LRScheduler>>& schedulers) {
  GD_CHECK(!schedulers.empty(), "ChainedScheduler expects at least one scheduler");
  check_not_null(schedulers, "ChainedScheduler");
  return schedulers[0]->optimizer();
}

std::vector<nlohmann::json> scheduler_states(const nlohmann::json& state_dict, const std::string& what,
                                             size_t expected) {
  auto states = json_get<std::vector<nlohmann::json>>(state_dict, "_schedulers", what);
  if (states.size() != expected)
    throw_json_error(what, "_schedulers",
                     fmt::format("holds {} scheduler states, but there are {} schedulers", states.size(), expected));
  return states;
}

}  // namespace

// ---- SequentialLR ----

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones, int64_t last_epoch)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  check_not_null(schedulers_, "SequentialLR");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    GD_CHECK(&schedulers_[i]->optimizer() == &optimizer,
             fmt::format("Sequential Schedulers expects all schedulers to belong to the same optimizer, but got "
                         "schedulers at index {} to be different than the optimizer passed in.",
                         i));
  }
  GD_CHECK(milestones_.size() + 1 == schedulers_.size(),
           fmt::format("Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                       "milestone points, but got number of schedulers {} and the number of milestones to be equal "
                       "to {}",
                       schedulers_.size(), milestones_.size()));
  last_epoch_ = last_epoch + 1;

  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(group_value(groups[i], "initial_lr", i));
  // Undo the initial step each scheduler took when it was built.
  for (auto& scheduler : schedulers_) scheduler->last_epoch_ -= 1;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step_impl(std::optional<int64_t> epoch) {
  GD_CHECK(!epoch, "SequentialLR.step() takes no epoch");
  ++last_epoch_;
  size_t index = bisect_right(milestones_, last_epoch_);
  LRScheduler& scheduler = *schedulers_[index];
  if (index > 0 && milestones_[index - 1] == last_epoch_)
    scheduler.step(0);
  else
    scheduler.step();
  last_lr_ = scheduler.get_last_lr();
}

nlohmann::json SequentialLR::state_dict() const {
  nlohmann::json states = nlohmann::json::array();
  for (const auto& scheduler : schedulers_) states.push_back(scheduler->state_dict());
  return {{"last_epoch", last_epoch_}, {"_milestones", milestones_}, {"_last_lr", last_lr_}, {"_schedulers", states}};
}

void SequentialLR::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = load_what();
  auto last_epoch = json_get<int64_t>(state_dict, "last_epoch", what);
  auto milestones = json_get<std::vector<int64_t>>(state_dict, "_milestones", what);
  auto last_lr = per_group_from_json(state_dict, "_last_lr", what, optimizer_->param_groups().size());
  auto states = scheduler_states(state_dict, what, schedulers_.size());
  GD_CHECK(milestones.size() + 1 == schedulers_.size(),
           fmt::format("{}: '_milestones' has {} milestones for {} schedulers", what, milestones.size(),
                       schedulers_.size()));
  // The schedulers load one after another; a bad state in one leaves those before it loaded.
  for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(states[i]);
  last_epoch_ = last_epoch;
  milestones_ = std::move(milestones);
  last_lr_ = std::move(last_lr);
}

// ---- ChainedScheduler ----

ChainedScheduler::ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers)
    : LRScheduler(first_optimizer(schedulers)), schedulers_(std::move(schedulers)) {
  for (size_t i = 1; i < schedulers_.size(); ++i) {
    GD_CHECK(&schedulers_[i]->optimizer() == &schedulers_[0]->optimizer(),
             fmt::format("ChainedScheduler expects all schedulers to belong to the same optimizer, but got schedulers "
                         "at index {} and {} to be different",
                         0, i));
  }
  last_lr_ = group_lrs();
}

void ChainedScheduler::step_impl(std::optional<int64_t> epoch) {
  GD_CHECK(!epoch, "ChainedScheduler.step() takes no epoch");
  for (auto& scheduler : schedulers_) scheduler->step();
  last_lr_ = group_lrs();
}

nlohmann::json ChainedScheduler::state_dict() const {
  nlohmann::json states = nlohmann::json::array();
  for (const auto& scheduler : schedulers_) states.push_back(scheduler->state_dict());
  return {{"_last_lr", last_lr_}, {"_schedulers", states}};
}

void ChainedScheduler::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = load_what();
  auto last_lr = per_group_from_json(state_dict, "_last_lr", what, optimizer_->param_groups().size());
  auto states = scheduler_states(state_dict, what, schedulers_.size());
  for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(states[i]);
  last_lr_ = std::move(last_lr);
}

}  // namespace gradiens::optim
