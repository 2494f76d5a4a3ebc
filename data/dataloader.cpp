// The DataLoader's type-independent parts: PyTorch's option checks, the worker
// thread pool, epoch bookkeeping for state_dict, and its error messages.
#include "data/dataloader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
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

// ---- WorkerPool ----

struct WorkerPool::State {
  Task task;
  size_t num_tasks = 0;
  size_t max_ahead = 0;
  std::mutex mutex;
  std::condition_variable work_ready;  // a task may be dispatched, or stop
  std::condition_variable task_done;
  size_t next_task = 0;  // the next task to dispatch
  size_t consumed = 0;   // tasks before this one have been taken by the consumer
  // Tasks that have run and are not consumed yet, with their exception if any
  // (a map: a stream's task count is not known in advance).
  std::unordered_map<size_t, std::exception_ptr> finished;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;

  void work(size_t worker) {
    for (;;) {
      size_t t = 0;
      {
        std::unique_lock lock(mutex);
        work_ready.wait(lock, [&] { return stop || next_task >= num_tasks || next_task < consumed + max_ahead; });
        if (stop || next_task >= num_tasks) return;
        t = next_task++;
      }
      std::exception_ptr error;
      try {
        task(t, worker, stop);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        finished.emplace(t, error);
      }
      task_done.notify_all();
    }
  }

  void shut_down() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    work_ready.notify_all();
    for (std::thread& thread : threads)
      if (thread.joinable()) thread.join();
  }
};

WorkerPool::WorkerPool(size_t num_workers, size_t num_tasks, size_t max_ahead, Task task)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.task = std::move(task);
  s.num_tasks = num_tasks;
  s.max_ahead = std::max<size_t>(max_ahead, 1);
  try {
    for (size_t w = 0; w < num_workers; ++w) s.threads.emplace_back([&s, w] { s.work(w); });
  } catch (...) {
    s.shut_down();
    throw;
  }
}

WorkerPool::~WorkerPool() { state_->shut_down(); }

void WorkerPool::wait(size_t task, double timeout_seconds) {
  State& s = *state_;
  std::exception_ptr error;
  {
    std::unique_lock lock(s.mutex);
    s.consumed = task;
    s.work_ready.notify_all();
    const auto ready = [&] { return s.finished.contains(task); };
    if (timeout_seconds > 0) {
      if (!s.task_done.wait_for(lock, std::chrono::duration<double>(timeout_seconds), ready))
        throw Error(fmt::format("DataLoader timed out after {} seconds", timeout_seconds));
    } else {
      s.task_done.wait(lock, ready);
    }
    auto it = s.finished.find(task);
    error = it->second;
    s.finished.erase(it);
  }
  if (error) std::rethrow_exception(error);
}

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
