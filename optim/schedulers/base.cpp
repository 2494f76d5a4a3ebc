// optim::LRScheduler: initial_lr and base_lrs, the chainable and closed-form
// steps, the JSON state_dict, and the helpers the schedulers share.
#include "optim/schedulers/base.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace gradiens::optim {

using scheduler_detail::per_group_from_json;

std::vector<double> PerGroup::expand(size_t num_groups, const std::string& message) const {
  if (!is_list_) return std::vector<double>(num_groups, values_[0]);
  GD_CHECK(values_.size() == num_groups, message);
  return values_;
}

void LRScheduler::start(int64_t last_epoch) {
  auto& groups = optimizer_->param_groups();
  if (last_epoch == -1) {
    for (auto& group : groups) group.values().emplace("initial_lr", group.options().get_lr());
  } else {
    for (size_t i = 0; i < groups.size(); ++i)
      GD_CHECK(groups[i].values().count("initial_lr") != 0,
               fmt::format("param 'initial_lr' is not specified in param_groups[{}] when resuming an optimizer", i));
  }
  base_lrs_.clear();
  for (const auto& group : groups) base_lrs_.push_back(group.values().at("initial_lr"));
  last_epoch_ = last_epoch;
  initial_step();
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step_impl(std::optional<int64_t> epoch) {
  // Counted before get_lr(), which CosineAnnealingLR reads (its first step when resuming).
  ++step_count_;
  std::vector<double> lrs;
  if (!epoch) {
    ++last_epoch_;
    lrs = get_lr();
  } else {
    last_epoch_ = *epoch;
    auto closed_form = closed_form_lr();
    lrs = closed_form ? std::move(*closed_form) : get_lr();
  }
  apply_lrs(lrs);
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_->param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

void LRScheduler::apply_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_->param_groups();
  GD_INTERNAL_ASSERT(lrs.size() == groups.size(), "a scheduler computed one lr per group");
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = lrs;
}

std::string LRScheduler::load_what() const { return fmt::format("{}.load_state_dict", name()); }

nlohmann::json LRScheduler::state_dict() const {
  return {{"base_lrs", base_lrs_}, {"last_epoch", last_epoch_}, {"_step_count", step_count_}, {"_last_lr", last_lr_}};
}

void LRScheduler::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = load_what();
  size_t num_groups = optimizer_->param_groups().size();
  auto base_lrs = per_group_from_json(state_dict, "base_lrs", what, num_groups);
  auto last_epoch = json_get<int64_t>(state_dict, "last_epoch", what);
  auto step_count = json_get<int64_t>(state_dict, "_step_count", what);
  auto last_lr = per_group_from_json(state_dict, "_last_lr", what, num_groups);
  base_lrs_ = std::move(base_lrs);
  last_epoch_ = last_epoch;
  step_count_ = step_count;
  last_lr_ = std::move(last_lr);
}

namespace scheduler_detail {

std::string python_repr(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

double divide(double a, double b, std::string_view scheduler) {
  GD_CHECK(b != 0, fmt::format("{}: float division by zero", scheduler));
  return a / b;
}

size_t bisect_right(const std::vector<int64_t>& sorted, int64_t value) {
  size_t lo = 0, hi = sorted.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (value < sorted[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

int64_t floor_divide(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

double group_value(const OptimizerParamGroup& group, const std::string& key, size_t index) {
  auto it = group.values().find(key);
  GD_CHECK(it != group.values().end(),
           fmt::format("param '{}' is not specified in param_groups[{}] (the scheduler that sets it was not "
                       "constructed with last_epoch -1, and the optimizer's state_dict that holds it was not loaded)",
                       key, index));
  return it->second;
}

nlohmann::json double_to_json(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

double double_from_json(const nlohmann::json& j, const std::string& key, const std::string& what) {
  auto value = json_get<nlohmann::json>(j, key, what);
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw_json_error(what, key, "must be a number, \"inf\", \"-inf\" or \"nan\"");
}

std::vector<double> per_group_from_json(const nlohmann::json& j, const std::string& key, const std::string& what,
                                        size_t num_groups) {
  auto values = json_get<std::vector<double>>(j, key, what);
  if (values.size() != num_groups)
    throw_json_error(
        what, key, fmt::format("has {} values, but the optimizer has {} parameter groups", values.size(), num_groups));
  return values;
}

}  // namespace scheduler_detail

}  // namespace gradiens::optim
