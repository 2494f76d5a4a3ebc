// The DataLoader's type-independent parts: PyTorch's option checks, worker
// timeouts, epoch bookkeeping for state_dict, and its error messages.
#include "data/dataloader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "kernels/error.h"

namespace gradiens::data::detail {

void check_loader_options(const LoaderSettings& s, bool iterable_dataset) {
  GD_CHECK(s.num_workers >= 0,
           "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  GD_CHECK(s.timeout >= 0, "timeout option should be non-negative");
  // PyTorch's text, missing space included.
  GD_CHECK(s.num_workers > 0 || s.prefetch_factor == 2,
           "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
           "multiprocessing.");
  GD_CHECK(s.prefetch_factor > 0, fmt::format("prefetch_factor option should be positive, but got prefetch_factor={}",
                                              s.prefetch_factor));
  if (iterable_dataset) {
    GD_CHECK(!s.shuffle, "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=True");
    GD_CHECK(s.sampler == nullptr, "DataLoader with IterableDataset: expected unspecified sampler option");
    GD_CHECK(s.batch_sampler == nullptr, "DataLoader with IterableDataset: expected unspecified batch_sampler option");
  }
  GD_CHECK(s.sampler == nullptr || !s.shuffle, "sampler option is mutually exclusive with shuffle");
  if (s.batch_sampler != nullptr) {
    GD_CHECK(s.batch_size == std::optional<int64_t>(1) && !s.shuffle && s.sampler == nullptr && !s.drop_last,
             "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last");
  } else if (!s.batch_size.has_value()) {
    GD_CHECK(!s.drop_last, "batch_size=None option disables auto-batching and is mutually exclusive with drop_last");
  } else {
    GD_CHECK(*s.batch_size > 0,
             fmt::format("batch_size should be a positive integer value, but got batch_size={}", *s.batch_size));
  }
}

void check_libtorch_loader_options(const LoaderSettings& s) {
  constexpr const char* where = "DataLoader over a libtorch-style dataset";
  GD_CHECK(s.num_workers >= 0, fmt::format("{}: workers should be non-negative, but got {}", where, s.num_workers));
  GD_CHECK(s.timeout >= 0, fmt::format("{}: timeout should be non-negative", where));
  GD_CHECK(!s.batch_size.has_value() || *s.batch_size > 0,
           fmt::format("{}: batch_size should be a positive integer value, but got batch_size={}", where,
                       s.batch_size.value_or(0)));
  GD_CHECK(!s.shuffle, fmt::format("{}: shuffle is not one of its options; pass a samplers::RandomSampler", where));
  GD_CHECK(s.sampler == nullptr && s.batch_sampler == nullptr,
           fmt::format("{}: pass the sampler as make_data_loader(dataset, sampler, options)", where));
  GD_CHECK(!s.seed.has_value(), fmt::format("{}: seed is not one of its options; seed the sampler", where));
  GD_CHECK(!s.pin_memory && s.prefetch_factor == 2,
           fmt::format("{}: pin_memory and prefetch_factor are not among its options (max_jobs sets how many "
                       "batches are in flight)",
                       where));
  GD_CHECK(!s.max_jobs.has_value() || *s.max_jobs > 0 || s.num_workers == 0,
           fmt::format("{}: max_jobs should be positive with workers", where));
}

GeneratorState shuffle_state(uint64_t seed, uint64_t epoch) { return {seed, epoch << 40}; }

uint64_t draw_seed() { return seeded_from_default().current_seed(); }

void throw_sample_error(std::optional<size_t> worker, size_t index, const char* what) {
  if (worker)
    throw Error(fmt::format("Caught an exception in DataLoader worker {} while loading sample {}: {}", *worker, index,
                            what));
  throw Error(fmt::format("Caught an exception in DataLoader while loading sample {}: {}", index, what));
}

void throw_batch_error(std::optional<size_t> worker, size_t batch, const std::vector<size_t>& indices,
                       const char* what) {
  std::string where = worker ? fmt::format("DataLoader worker {}", *worker) : std::string("DataLoader");
  if (indices.empty()) throw Error(fmt::format("Caught an exception in {} while collating batch {}: {}", where, batch, what));
  throw Error(fmt::format("Caught an exception in {} while collating batch {} (samples {}): {}", where, batch,
                          fmt::join(indices, ", "), what));
}

void throw_stream_error(size_t sample, const char* what) {
  throw Error(fmt::format("Caught an exception in DataLoader while reading sample {} of the stream: {}", sample, what));
}

void throw_loader_error(const std::string& message) { throw Error(message); }

// ---- worker timeouts ----

std::optional<std::chrono::milliseconds> timeout_of(double seconds) {
  if (seconds <= 0) return std::nullopt;
  // Whole milliseconds (the queue's unit), rounded up so that a timeout never shortens to none.
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000.0)));
}

void throw_timeout(double seconds) { throw Error(fmt::format("DataLoader timed out after {} seconds", seconds)); }

// ---- EpochTracker ----

EpochTracker::Start EpochTracker::next_start() {
  if (resume_) {
    Start start = std::move(*resume_);
    resume_.reset();
    return start;
  }
  return {next_epoch_, 0, nlohmann::json()};
}

void EpochTracker::begun(uint64_t run, uint64_t epoch, size_t position, std::optional<size_t> total,
                         nlohmann::json sampler) {
  run_ = run;
  active_ = true;
  epoch_ = epoch;
  position_ = position;
  total_ = total;
  exhausted_ = false;
  sampler_ = std::move(sampler);
  next_epoch_ = epoch + 1;
}

void EpochTracker::delivered(uint64_t run, size_t position) {
  if (run == run_) position_ = position;
}

void EpochTracker::exhausted(uint64_t run) {
  if (run == run_) exhausted_ = true;
}

nlohmann::json EpochTracker::state_dict(uint64_t seed, const nlohmann::json& next_sampler_state) const {
  if (resume_)
    return {{"seed", seed}, {"epoch", resume_->epoch}, {"position", resume_->skip}, {"sampler", resume_->sampler}};
  const bool complete = exhausted_ || (total_ && position_ >= *total_);
  if (active_ && !complete)
    return {{"seed", seed}, {"epoch", epoch_}, {"position", position_}, {"sampler", sampler_}};
  return {{"seed", seed}, {"epoch", next_epoch_}, {"position", 0}, {"sampler", next_sampler_state}};
}

uint64_t EpochTracker::load_state_dict(const nlohmann::json& state, std::optional<size_t> total_batches) {
  auto field = [&](const char* key) -> uint64_t {
    GD_CHECK(state.is_object(), "DataLoader.load_state_dict: the state is not a JSON object");
    auto it = state.find(key);
    GD_CHECK(it != state.end(), fmt::format("DataLoader.load_state_dict: '{}' is missing", key));
    GD_CHECK(it->is_number_unsigned() || (it->is_number_integer() && it->get<int64_t>() >= 0),
             fmt::format("DataLoader.load_state_dict: '{}' should be a non-negative integer, but got {}", key,
                         it->dump()));
    return it->get<uint64_t>();
  };
  const uint64_t seed = field("seed");
  const uint64_t epoch = field("epoch");
  const uint64_t position = field("position");
  nlohmann::json sampler;
  if (auto it = state.find("sampler"); it != state.end()) {
    GD_CHECK(it->is_object(), "DataLoader.load_state_dict: 'sampler' should be a JSON object");
    sampler = *it;
  }
  GD_CHECK(!total_batches || position <= *total_batches,
           fmt::format("DataLoader.load_state_dict: position {} is past the end of an epoch of {} batches", position,
                       *total_batches));
  resume_ = Start{epoch, static_cast<size_t>(position), std::move(sampler)};
  return seed;
}

}  // namespace gradiens::data::detail
