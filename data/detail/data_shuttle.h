// DataShuttle<Job, Result>: jobs out to the worker threads and results back,
// counting the jobs in flight (libtorch's torch::data::detail::DataShuttle).
// push_job, pop_result and drain belong to the consumer thread; pop_job and
// push_result to the workers.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>

#include "data/detail/queue.h"

namespace gradiens::data::detail {

template <class Job, class Result>
class DataShuttle {
 public:
  void push_job(Job job) {
    jobs_.push(std::move(job));
    ++in_flight_jobs_;
  }
  void push_result(Result result) { results_.push(std::move(result)); }
  Job pop_job() { return jobs_.pop(); }

  // The next result, or std::nullopt without waiting when no job is in flight.
  std::optional<Result> pop_result(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    if (in_flight_jobs_ == 0) return std::nullopt;
    Result result = results_.pop(timeout);
    --in_flight_jobs_;
    return result;
  }

  // Withdraws the jobs no worker took yet and waits out (discarding) the
  // results of those being worked on, so that nothing is in flight after.
  void drain() {
    in_flight_jobs_ -= jobs_.clear();
    while (in_flight_jobs_ > 0) pop_result();
  }

  size_t in_flight_jobs() const noexcept { return in_flight_jobs_; }

 private:
  size_t in_flight_jobs_ = 0;
  Queue<Job> jobs_;
  Queue<Result> results_;
};

}  // namespace gradiens::data::detail
