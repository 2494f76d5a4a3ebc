// WorkerPool: the worker threads behind both DataLoaders (the torch.utils.data
// shaped DataLoader and libtorch's StatelessDataLoader / StatefulDataLoader).
// The consumer pushes requests; each worker thread takes the next one, runs
// the work on it and sends the output (or the exception it threw) back
// through a DataShuttle; a sequencer hands results out in push order, or as
// they finish when ordering is not enforced.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "data/detail/data_shuttle.h"
#include "data/detail/sequencers.h"

namespace gradiens::data::detail {

// One job's outcome: its output, or the exception the work threw.
template <class Output>
struct WorkerResult {
  size_t sequence_number = 0;
  std::optional<Output> output;
  std::exception_ptr exception;
};

template <class Request, class Output>
class WorkerPool {
 public:
  // work(request, worker, stop) runs on worker thread `worker` (0 .. workers-1);
  // `stop` turns true when the pool discards its jobs, so long work may end early.
  using Work = std::function<Output(Request&& request, size_t worker, const std::atomic<bool>& stop)>;

  WorkerPool(size_t num_workers, size_t max_jobs, bool ordered, Work work)
      : max_jobs_(max_jobs), ordered_(ordered), work_(std::move(work)) {
    GD_CHECK(num_workers > 0, "WorkerPool: at least one worker is needed");
    GD_CHECK(max_jobs > 0, "WorkerPool: max_jobs must be positive");
    sequencer_ = make_sequencer();
    try {
      for (size_t w = 0; w < num_workers; ++w) threads_.emplace_back([this, w] { run(w); });
    } catch (...) {
      shut_down();
      throw;
    }
  }
  ~WorkerPool() { shut_down(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Sends a request to the workers; it gets the next sequence number.
  void push(Request request) { shuttle_.push_job(Job{std::move(request), pushed_++}); }

  // The next result (in push order when ordered); std::nullopt when no job is
  // in flight. Throws TimeoutError when none arrives within `timeout`.
  std::optional<WorkerResult<Output>> pop(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    std::optional<WorkerResult<Output>> result =
        sequencer_->next([this, timeout] { return shuttle_.pop_result(timeout); });
    if (result) ++popped_;
    return result;
  }

  // Jobs pushed whose results have not been popped.
  size_t in_flight() const { return pushed_ - popped_; }
  size_t max_jobs() const { return max_jobs_; }
  // Pushing another job keeps in_flight() within max_jobs.
  bool has_room() const { return in_flight() < max_jobs_; }

  // Discards the jobs in flight (waiting for those being worked on) and numbers
  // jobs from 0 again: the pool is ready for a new epoch.
  void restart() {
    stop_ = true;
    shuttle_.drain();
    stop_ = false;
    pushed_ = popped_ = 0;
    sequencer_ = make_sequencer();
  }

 private:
  struct Job {
    std::optional<Request> request;  // empty: the worker quits
    size_t sequence_number = 0;
  };

  std::unique_ptr<sequencers::Sequencer<WorkerResult<Output>>> make_sequencer() const {
    if (ordered_) return std::make_unique<sequencers::OrderedSequencer<WorkerResult<Output>>>(max_jobs_);
    return std::make_unique<sequencers::NoSequencer<WorkerResult<Output>>>();
  }

  void run(size_t worker) {
    for (;;) {
      Job job = shuttle_.pop_job();
      if (!job.request) return;
      WorkerResult<Output> result;
      result.sequence_number = job.sequence_number;
      try {
        result.output.emplace(work_(std::move(*job.request), worker, stop_));
      } catch (...) {
        result.exception = std::current_exception();
      }
      shuttle_.push_result(std::move(result));
    }
  }

  void shut_down() {
    stop_ = true;
    shuttle_.drain();
    for (size_t w = 0; w < threads_.size(); ++w) shuttle_.push_job(Job{});
    for (std::thread& thread : threads_)
      if (thread.joinable()) thread.join();
  }

  size_t max_jobs_;
  bool ordered_;
  Work work_;
  std::atomic<bool> stop_{false};
  DataShuttle<Job, WorkerResult<Output>> shuttle_;
  std::unique_ptr<sequencers::Sequencer<WorkerResult<Output>>> sequencer_;
  size_t pushed_ = 0;
  size_t popped_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace gradiens::data::detail
