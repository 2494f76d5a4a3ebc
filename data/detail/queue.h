// Queue<T>: the thread-safe FIFO between a DataLoader's consumer and its worker
// threads (libtorch's torch::data::detail::Queue), with an optional timeout on pop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <utility>

#include "kernels/error.h"

namespace gradiens::data::detail {

// What Queue::pop throws when its timeout passes.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

template <class T>
class Queue {
 public:
  void push(T value) {
    {
      std::lock_guard lock(mutex_);
      queue_.push(std::move(value));
    }
    ready_.notify_one();
  }

  // The oldest value; blocks until there is one, or throws TimeoutError
  // ("Timeout in DataLoader queue ...") once `timeout` has passed.
  T pop(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    std::unique_lock lock(mutex_);
    const auto non_empty = [this] { return !queue_.empty(); };
    if (timeout) {
      if (!ready_.wait_for(lock, *timeout, non_empty))
        throw TimeoutError("Timeout in DataLoader queue while waiting for next batch (timeout was " +
                    std::to_string(timeout->count()) + " ms)");
    } else {
      ready_.wait(lock, non_empty);
    }
    T value = std::move(queue_.front());
    queue_.pop();
    return value;
  }

  // Empties the queue; returns how many values it held.
  size_t clear() {
    std::lock_guard lock(mutex_);
    const size_t count = queue_.size();
    queue_ = std::queue<T>();
    return count;
  }

 private:
  std::queue<T> queue_;
  std::mutex mutex_;
  std::condition_variable ready_;
};

}  // namespace gradiens::data::detail
