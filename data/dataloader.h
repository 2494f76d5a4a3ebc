// DataLoader: batches of a dataset in a sampler's order, fetched by worker
// threads and delivered in order, with a seeded, resumable shuffle.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/collate.h"
#include "data/datasets/base.h"
#include "data/detail/worker_pool.h"
#include "data/samplers.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::data {

// A map-style dataset: get(index) and size(). The DataLoader calls get() from
// its worker threads at the same time.
template <class D>
concept MapStyleDataset = requires(D& d, size_t i) {
  d.get(i);
  { d.size() } -> std::convertible_to<size_t>;
};

// A stream: next() gives std::optional samples until std::nullopt; reset()
// starts it again.
template <class D>
concept StreamDataset = !MapStyleDataset<D> && requires(D& d) {
  d.next().has_value();
  typename std::decay_t<decltype(d.next())>::value_type;
  d.reset();
};

namespace detail {

// Copies the tensors of a batch into page-locked memory (DataLoaderOptions::pin_memory).
template <class Batch>
void pin_batch(Batch& batch) {
  if constexpr (std::is_same_v<Batch, Tensor>) {
    if (batch.defined() && batch.is_cpu()) batch = batch.pin_memory();
  } else if constexpr (requires { batch.data; batch.target; }) {
    pin_batch(batch.data);
    pin_batch(batch.target);
  } else if constexpr (requires { batch.begin(); batch.end(); }) {
    for (auto& item : batch) pin_batch(item);
  }
}

// The options that do not depend on the collate's type.
struct LoaderSettings {
  std::optional<int64_t> batch_size = 1;
  bool shuffle = false;
  bool drop_last = false;
  int64_t num_workers = 0;
  int64_t prefetch_factor = 2;
  double timeout = 0;
  bool pin_memory = false;
  std::optional<uint64_t> seed;
  std::shared_ptr<Sampler<>> sampler;
  std::shared_ptr<BatchSamplerBase> batch_sampler;
  // libtorch's options (its StatelessDataLoader / StatefulDataLoader):
  std::optional<std::chrono::milliseconds> timeout_ms;  // the timeout as libtorch gave it
  std::optional<size_t> max_jobs;                       // default 2 * workers
  bool enforce_ordering = true;
};

}  // namespace detail

// DataLoaderOptions().batch_size(64).shuffle(true).num_workers(2).seed(0)
//
// batch_size     samples per batch (default 1); std::nullopt turns automatic
//                batching off: one sample at a time, converted by the collate
//                without a new dimension (DefaultCollate::convert).
// shuffle        a new random order each epoch (see Note [DataLoader epoch order]).
// drop_last      drop the last batch when it is short.
// sampler        the order of the samples (excludes shuffle).
// batch_sampler  the batches themselves (excludes batch_size, shuffle, sampler, drop_last).
// collate(f)     f(std::vector<Example>) -> Batch; the batch type is f's result
//                type. f runs on worker threads, possibly at the same time.
// num_workers    threads fetching and collating batches (0: the calling thread).
//                Over a stream the threads share it (Note [DataLoader stream workers]).
// prefetch_factor batches each worker may hold ready ahead of the consumer (default 2).
// timeout        seconds to wait for a batch from the workers before an error
//                (0: forever); like PyTorch, it does not apply with num_workers 0.
// seed           the shuffle seed; unset, one is drawn from the default generator.
//
// libtorch's spellings, for its loaders (make_data_loader over a libtorch-style
// dataset, data/libtorch_loader.h): DataLoaderOptions(batch_size),
// workers(n) (= num_workers), timeout(std::chrono::milliseconds),
// max_jobs(k) (batches in flight; default 2 * workers) and
// enforce_ordering(b) (deliver in request order; default true).
// pin_memory     the batch's tensors (a Tensor, an Example's data and target, or
//                a container of them) are copied into page-locked memory by the
//                worker, so that to(kCUDA, non_blocking = true) does not make the
//                training loop wait. Without a CUDA device it does nothing (as
//                PyTorch, which warns).
template <class Collate = DefaultCollate>
class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  explicit DataLoaderOptions(size_t batch_size) { settings_.batch_size = static_cast<int64_t>(batch_size); }
  DataLoaderOptions(detail::LoaderSettings settings, Collate collate)
      : settings_(std::move(settings)), collate_(std::move(collate)) {}

  DataLoaderOptions& batch_size(std::optional<int64_t> value) { return set(&detail::LoaderSettings::batch_size, value); }
  DataLoaderOptions& shuffle(bool value) { return set(&detail::LoaderSettings::shuffle, value); }
  DataLoaderOptions& drop_last(bool value) { return set(&detail::LoaderSettings::drop_last, value); }
  DataLoaderOptions& num_workers(int64_t value) { return set(&detail::LoaderSettings::num_workers, value); }
  DataLoaderOptions& prefetch_factor(int64_t value) { return set(&detail::LoaderSettings::prefetch_factor, value); }
  DataLoaderOptions& timeout(double seconds) {
    settings_.timeout_ms.reset();
    return set(&detail::LoaderSettings::timeout, seconds);
  }
  DataLoaderOptions& timeout(std::chrono::milliseconds value) {
    settings_.timeout = std::chrono::duration<double>(value).count();
    return set(&detail::LoaderSettings::timeout_ms, std::optional<std::chrono::milliseconds>(value));
  }
  DataLoaderOptions& workers(size_t value) { return num_workers(static_cast<int64_t>(value)); }
  DataLoaderOptions& max_jobs(size_t value) { return set(&detail::LoaderSettings::max_jobs, std::optional<size_t>(value)); }
  DataLoaderOptions& enforce_ordering(bool value) { return set(&detail::LoaderSettings::enforce_ordering, value); }
  DataLoaderOptions& pin_memory(bool value) { return set(&detail::LoaderSettings::pin_memory, value); }
  DataLoaderOptions& seed(uint64_t value) { return set(&detail::LoaderSettings::seed, std::optional<uint64_t>(value)); }
  DataLoaderOptions& sampler(std::shared_ptr<Sampler<>> value) {
    return set(&detail::LoaderSettings::sampler, std::move(value));
  }
  DataLoaderOptions& batch_sampler(std::shared_ptr<BatchSamplerBase> value) {
    return set(&detail::LoaderSettings::batch_sampler, std::move(value));
  }
  // The same options with another collate (and so another batch type).
  template <class F>
  DataLoaderOptions<std::decay_t<F>> collate(F&& f) const {
    return DataLoaderOptions<std::decay_t<F>>(settings_, std::forward<F>(f));
  }

  std::optional<int64_t> batch_size() const { return settings_.batch_size; }
  bool shuffle() const { return settings_.shuffle; }
  bool drop_last() const { return settings_.drop_last; }
  int64_t num_workers() const { return settings_.num_workers; }
  int64_t prefetch_factor() const { return settings_.prefetch_factor; }
  double timeout() const { return settings_.timeout; }
  bool pin_memory() const { return settings_.pin_memory; }
  std::optional<uint64_t> seed() const { return settings_.seed; }
  size_t workers() const { return static_cast<size_t>(settings_.num_workers); }
  std::optional<size_t> max_jobs() const { return settings_.max_jobs; }
  bool enforce_ordering() const { return settings_.enforce_ordering; }
  const std::shared_ptr<Sampler<>>& sampler() const { return settings_.sampler; }
  const std::shared_ptr<BatchSamplerBase>& batch_sampler() const { return settings_.batch_sampler; }
  const Collate& collate() const { return collate_; }
  const detail::LoaderSettings& settings() const { return settings_; }

 private:
  template <class T, class V>
  DataLoaderOptions& set(T detail::LoaderSettings::*field, V&& value) {
    settings_.*field = std::forward<V>(value);
    return *this;
  }
  detail::LoaderSettings settings_;
  Collate collate_{};
};

namespace detail {

// PyTorch's option checks and messages (DataLoader.__init__).
void check_loader_options(const LoaderSettings& settings, bool iterable_dataset);
// The options libtorch's loaders take (libtorch_loader.h): torch.utils.data's
// own (shuffle, sampler, ...) are refused there, each with the libtorch way.
void check_libtorch_loader_options(const LoaderSettings& settings);
// The generator state epoch `epoch` shuffles with (Note [DataLoader epoch order]).
GeneratorState shuffle_state(uint64_t seed, uint64_t epoch);
uint64_t draw_seed();
[[noreturn]] void throw_sample_error(std::optional<size_t> worker, size_t index, const char* what);
[[noreturn]] void throw_batch_error(std::optional<size_t> worker, size_t batch, const std::vector<size_t>& indices,
                                    const char* what);
[[noreturn]] void throw_stream_error(size_t sample, const char* what);
[[noreturn]] void throw_loader_error(const std::string& message);

// The options' timeout in seconds (0: none) as the worker pool's.
std::optional<std::chrono::milliseconds> timeout_of(double seconds);
// PyTorch's error when no batch arrived within the timeout.
[[noreturn]] void throw_timeout(double seconds);

// Epochs and the position inside the current one, for state_dict and resume.
class EpochTracker {
 public:
  struct Start {
    uint64_t epoch;
    size_t skip;             // batches already delivered before a save
    nlohmann::json sampler;  // the sampler state to restore first; null when fresh
  };
  // The epoch the next iteration plays: a pending resume point, else the next one.
  Start next_start();
  void begun(uint64_t run, uint64_t epoch, size_t position, std::optional<size_t> total, nlohmann::json sampler);
  void delivered(uint64_t run, size_t position);
  void exhausted(uint64_t run);
  nlohmann::json state_dict(uint64_t seed, const nlohmann::json& next_sampler_state) const;
  // Returns the saved seed; `total_batches` bounds the position when known.
  uint64_t load_state_dict(const nlohmann::json& state, std::optional<size_t> total_batches);

 private:
  uint64_t next_epoch_ = 0;
  std::optional<Start> resume_;
  uint64_t run_ = 0;  // the iteration whose progress counts
  bool active_ = false;
  uint64_t epoch_ = 0;
  size_t position_ = 0;
  std::optional<size_t> total_;
  bool exhausted_ = false;
  nlohmann::json sampler_;
};

template <class D>
struct ExampleOf;
template <MapStyleDataset D>
struct ExampleOf<D> {
  using type = std::decay_t<decltype(std::declval<D&>().get(size_t{}))>;
};
template <StreamDataset D>
struct ExampleOf<D> {
  using type = typename std::decay_t<decltype(std::declval<D&>().next())>::value_type;
};

}  // namespace detail

// Note [DataLoader epoch order]
// Every begin() starts a new epoch (0, 1, 2, ...). With shuffle, epoch e's
// order is randperm(n, g) for a Generator g with state {seed, offset e * 2^40}:
// each epoch reads its own stretch of the seed's Philox stream (a permutation
// of n uses about n/2 blocks, far fewer than 2^40), so the order depends on
// (seed, e) only: not on num_workers, nor on what ran before. A user's sampler
// draws from its own generator as it would in PyTorch; the loader records the
// sampler's state_dict() when an epoch starts, so resuming can draw the same
// order again. Batches are then cut from that order, fetched by the workers
// and delivered in it.
//
// state_dict() = {"seed", "epoch", "position", "sampler"}: the epoch in
// progress and the batches of it already delivered (inside the loop body of
// the k-th batch, position is k), or the next epoch with position 0 when the
// current one is complete. load_state_dict() makes the next begin() resume
// that epoch with the remaining batches, exactly those an uninterrupted run
// would have yielded; a stream dataset is reset() and read past the delivered
// samples.
//
// Note [DataLoader stream workers]
// With num_workers > 0 over a stream, the worker threads share the one stream:
// each takes a turn reading it (under a mutex, turns in task order), takes the
// next batch_size samples (one without automatic batching) as batch k, then
// collates outside the lock; batches are delivered in order through the same
// bounded prefetch window as map-style ones. So the batches are exactly those
// of num_workers 0, in the same order, for any worker count. PyTorch instead
// copies the dataset into each worker process, which yields every sample once
// per worker unless the dataset shards itself (get_worker_info); threads need
// no sharding. Only collating runs in parallel: the reads are serial.
template <class DatasetT, class Collate = DefaultCollate>
  requires MapStyleDataset<DatasetT> || StreamDataset<DatasetT>
class DataLoader {
 public:
  using DatasetType = DatasetT;
  using ExampleType = typename detail::ExampleOf<DatasetT>::type;
  using BatchType = std::decay_t<std::invoke_result_t<const Collate&, std::vector<ExampleType>>>;
  static constexpr bool kIterable = StreamDataset<DatasetT>;

 private:
  struct Core;
  class Run;

 public:
  DataLoader(std::shared_ptr<DatasetT> dataset, DataLoaderOptions<Collate> options = {})
      : core_(std::make_shared<Core>(std::move(dataset), std::move(options))) {}
  // A dataset held by value (moved into a shared_ptr the loader keeps).
  template <class V>
    requires std::same_as<std::decay_t<V>, DatasetT>
  explicit DataLoader(V&& dataset, DataLoaderOptions<Collate> options = {})
      : DataLoader(std::make_shared<DatasetT>(std::forward<V>(dataset)), std::move(options)) {}
  DataLoader(DataLoader&&) noexcept = default;
  DataLoader& operator=(DataLoader&&) noexcept = default;

  class Iterator;
  // Starts the next epoch (or resumes a loaded one) and fetches its first batch.
  Iterator begin() {
    auto run = std::make_shared<Run>(core_);
    run->advance();
    return Iterator(std::move(run));
  }
  Iterator end() const { return Iterator(); }

  // The number of batches an epoch yields (len(DataLoader)). A stream dataset
  // needs a size() of its own for this.
  size_t size() const { return core_->batches_per_epoch(); }

  nlohmann::json state_dict() const {
    return core_->tracker.state_dict(core_->seed, kIterable ? nlohmann::json::object() : core_->batch_sampler->state_dict());
  }
  void load_state_dict(const nlohmann::json& state) {
    std::optional<size_t> total;
    if constexpr (!kIterable) total = size();
    core_->seed = core_->tracker.load_state_dict(state, total);
  }

  const std::shared_ptr<DatasetT>& dataset() const { return core_->dataset; }
  const detail::LoaderSettings& options() const { return core_->settings; }
  uint64_t seed() const { return core_->seed; }
  // The batches of an epoch (map-style): the user's batch sampler, or a
  // BatchSampler over the sampler (batch size 1 without automatic batching).
  const std::shared_ptr<BatchSamplerBase>& batch_sampler() const { return core_->batch_sampler; }

  // An input iterator; copies share one iteration, which stops its workers
  // when the last copy goes (an abandoned loop joins them cleanly).
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    using pointer = BatchType*;
    using reference = BatchType&;

    Iterator() = default;
    reference operator*() const {
      if (at_end()) detail::throw_loader_error("DataLoader: dereferencing an iterator at the end");
      return *run_->current;
    }
    pointer operator->() const { return &**this; }
    Iterator& operator++() {
      if (at_end()) detail::throw_loader_error("DataLoader: incrementing an iterator at the end");
      run_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& a, const Iterator& b) {
      if (a.at_end() || b.at_end()) return a.at_end() && b.at_end();
      return a.run_ == b.run_;
    }

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<Run> run) : run_(std::move(run)) {}
    bool at_end() const { return run_ == nullptr || !run_->current.has_value(); }
    std::shared_ptr<Run> run_;
  };

 private:
  static constexpr bool kHasConvert = requires(const Collate& c, ExampleType e) {
    { c.convert(std::move(e)) } -> std::convertible_to<BatchType>;
  };
  static constexpr bool kCanConvert = kHasConvert || std::is_invocable_r_v<BatchType, const Collate&, ExampleType>;

  struct Core {
    Core(std::shared_ptr<DatasetT> data, DataLoaderOptions<Collate> options)
        : dataset(std::move(data)), settings(options.settings()), collate(options.collate()) {
      if (dataset == nullptr) detail::throw_loader_error("DataLoader: the dataset is null");
      detail::check_loader_options(settings, kIterable);
      batching = settings.batch_size.has_value() || settings.batch_sampler != nullptr;
      if (!batching && !kCanConvert)
        detail::throw_loader_error(
            "DataLoader: batch_size=None turns automatic batching off, which needs a collate that takes one sample "
            "(a convert(sample) member or a call with one sample)");
      seed = settings.seed ? *settings.seed : detail::draw_seed();
      if constexpr (!kIterable) {
        std::shared_ptr<Sampler<>> sampler = settings.sampler;
        if (!sampler && settings.shuffle) {
          shuffle_generator = Generator(seed);
          sampler = std::make_shared<RandomSampler>(dataset->size(), false, std::nullopt, *shuffle_generator);
        } else if (!sampler) {
          sampler = std::make_shared<SequentialSampler>(dataset->size());
        }
        batch_sampler = settings.batch_sampler
                            ? settings.batch_sampler
                            : std::make_shared<BatchSampler>(sampler, settings.batch_size.value_or(1),
                                                             settings.batch_size ? settings.drop_last : false);
      }
    }

    size_t batches_per_epoch() const {
      if constexpr (!kIterable) {
        return batch_sampler->size();
      } else if constexpr (requires(const DatasetT& d) { { d.size() } -> std::convertible_to<size_t>; }) {
        const size_t n = dataset->size();
        if (!batching) return n;
        const auto b = static_cast<size_t>(*settings.batch_size);
        return settings.drop_last ? n / b : (n + b - 1) / b;
      } else {
        detail::throw_loader_error("DataLoader: size() needs a dataset with a size(), and this stream has none");
      }
    }

    std::shared_ptr<DatasetT> dataset;
    detail::LoaderSettings settings;
    Collate collate;
    bool batching = true;
    uint64_t seed = 0;
    std::optional<Generator> shuffle_generator;
    std::shared_ptr<BatchSamplerBase> batch_sampler;
    detail::EpochTracker tracker;
    uint64_t runs = 0;
  };

  // One pass over an epoch: its batch plan, the worker pool and the batch in hand.
  class Run {
   public:
    explicit Run(std::shared_ptr<Core> core) : core_(std::move(core)), id_(++core_->runs) {
      detail::EpochTracker::Start start = core_->tracker.next_start();
      epoch_ = start.epoch;
      if constexpr (kIterable) {
        core_->dataset->reset();
        const size_t per_batch = core_->batching ? static_cast<size_t>(*core_->settings.batch_size) : 1;
        for (size_t i = 0; i < start.skip * per_batch && !finished_; ++i) finished_ = !read_next().has_value();
        stream_end_ = finished_;
        position_ = start.skip;
        base_ = start.skip;
        core_->tracker.begun(id_, epoch_, position_, std::nullopt, nlohmann::json::object());
        const auto workers = static_cast<size_t>(core_->settings.num_workers);
        if (workers > 0 && !finished_) {
          pool_ = std::make_unique<Pool>(workers, workers * static_cast<size_t>(core_->settings.prefetch_factor),
                                         /*ordered=*/true,
                                         [this](size_t&& task, size_t worker, const std::atomic<bool>& stop) {
                                           return fetch_stream(task, worker, stop);
                                         });
          refill();
        }
      } else {
        if (!start.sampler.is_null()) core_->batch_sampler->load_state_dict(start.sampler);
        if (core_->shuffle_generator) core_->shuffle_generator->set_state(detail::shuffle_state(core_->seed, epoch_));
        nlohmann::json sampler_state = core_->batch_sampler->state_dict();
        plan_ = core_->batch_sampler->indices();
        if (start.skip > plan_.size())
          detail::throw_loader_error("DataLoader.load_state_dict: position " + std::to_string(start.skip) +
                                     " is past the end of epoch " + std::to_string(epoch_) + " (" +
                                     std::to_string(plan_.size()) + " batches)");
        position_ = start.skip;
        base_ = start.skip;
        core_->tracker.begun(id_, epoch_, position_, plan_.size(), std::move(sampler_state));
        const auto workers = static_cast<size_t>(core_->settings.num_workers);
        if (workers > 0 && position_ < plan_.size()) {
          pool_ = std::make_unique<Pool>(workers, workers * static_cast<size_t>(core_->settings.prefetch_factor),
                                         /*ordered=*/true,
                                         [this](size_t&& task, size_t worker, const std::atomic<bool>& stop) {
                                           return fetch(base_ + task, worker, &stop);
                                         });
          refill();
        }
      }
    }
    ~Run() { stop_workers(); }  // joins the workers before the state they read goes
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    // Moves to the next batch, or past the end.
    void advance() {
      current.reset();
      try {
        if constexpr (kIterable) {
          advance_stream();
        } else {
          if (position_ >= plan_.size()) {
            pool_.reset();
            return;
          }
          if (pool_) {
            current = take_from_pool();
          } else {
            current = std::move(*fetch(position_, std::nullopt, nullptr));
          }
          ++position_;
          core_->tracker.delivered(id_, position_);
        }
      } catch (...) {
        current.reset();
        stop_workers();
        plan_.clear();
        finished_ = true;
        throw;
      }
    }

    std::optional<BatchType> current;

   private:
    // Keeps the workers' queue full: the next tasks (batches base_ + task),
    // as many as the prefetch window allows.
    void refill() {
      while (pool_->has_room() && (kIterable ? !stream_end_seen_ : base_ + pushed_ < plan_.size()))
        pool_->push(pushed_++);
    }

    // The next batch from the workers, in order (std::nullopt: the stream ended
    // at that task); a worker's exception is rethrown as it is.
    std::optional<BatchType> take_from_pool() {
      std::optional<detail::WorkerResult<std::optional<BatchType>>> result;
      try {
        result = pool_->pop(detail::timeout_of(core_->settings.timeout));
      } catch (const detail::TimeoutError&) {
        detail::throw_timeout(core_->settings.timeout);
      }
      GD_INTERNAL_ASSERT(result.has_value(), "DataLoader: no batch in flight");
      if (result->exception) std::rethrow_exception(result->exception);
      std::optional<BatchType> batch = std::move(*result->output);
      if (!batch) stream_end_seen_ = true;
      refill();
      return batch;
    }

    std::optional<BatchType> fetch(size_t batch, std::optional<size_t> worker, const std::atomic<bool>* stop) {
      const std::vector<size_t>& indices = plan_[batch];
      std::vector<ExampleType> samples;
      samples.reserve(indices.size());
      for (size_t index : indices) {
        if (stop != nullptr && stop->load()) return std::nullopt;
        try {
          samples.push_back(core_->dataset->get(index));
        } catch (const std::exception& e) {
          detail::throw_sample_error(worker, index, e.what());
        } catch (...) {
          detail::throw_sample_error(worker, index, "an exception that is not a std::exception");
        }
      }
      return make_batch(std::move(samples), worker, batch, indices);
    }

    BatchType make_batch(std::vector<ExampleType>&& samples, std::optional<size_t> worker, size_t batch,
                         const std::vector<size_t>& indices) {
      try {
        BatchType out = core_->batching ? core_->collate(std::move(samples)) : convert(std::move(samples.front()));
        if (core_->settings.pin_memory && kernels::cuda::is_available()) detail::pin_batch(out);
        return out;
      } catch (const std::exception& e) {
        detail::throw_batch_error(worker, batch, indices, e.what());
      } catch (...) {
        detail::throw_batch_error(worker, batch, indices, "an exception that is not a std::exception");
      }
    }

    BatchType convert(ExampleType&& sample) {
      if constexpr (kHasConvert) return core_->collate.convert(std::move(sample));
      else if constexpr (kCanConvert) return core_->collate(std::move(sample));
      else detail::throw_loader_error("DataLoader: this collate cannot convert a single sample");
    }

    std::optional<ExampleType> read_next() {
      try {
        auto sample = core_->dataset->next();
        if (sample.has_value()) ++samples_read_;
        return sample;
      } catch (const std::exception& e) {
        detail::throw_stream_error(samples_read_, e.what());
      } catch (...) {
        detail::throw_stream_error(samples_read_, "an exception that is not a std::exception");
      }
    }

    // Stops and joins the workers, waking those waiting for their turn at the stream.
    void stop_workers() {
      if constexpr (kIterable) {
        if (pool_) {
          {
            std::lock_guard lock(stream_->mutex);
            stream_->stopping = true;
          }
          stream_->turn_taken.notify_all();
        }
      }
      pool_.reset();
    }

    // The samples of the next batch; empty once the stream has no batch left
    // (its end, or a short last batch under drop_last). Called by one thread at
    // a time; after an error, or the end, the stream is not read again.
    std::vector<ExampleType> take_samples(const std::atomic<bool>* stop) {
      if (stream_end_) return {};
      const size_t want = core_->batching ? static_cast<size_t>(*core_->settings.batch_size) : 1;
      std::vector<ExampleType> samples;
      samples.reserve(want);
      try {
        while (samples.size() < want) {
          if (stop != nullptr && stop->load()) return {};
          std::optional<ExampleType> sample = read_next();
          if (!sample) {
            stream_end_ = true;
            break;
          }
          samples.push_back(std::move(*sample));
        }
      } catch (...) {
        stream_end_ = true;
        throw;
      }
      if (core_->batching && core_->settings.drop_last && samples.size() < want) return {};
      return samples;
    }

    // Worker task `task` (batch base_ + task): waits for its turn at the
    // stream, reads its samples, passes the turn on, then collates.
    std::optional<BatchType> fetch_stream(size_t task, size_t worker, const std::atomic<bool>& stop) {
      std::vector<ExampleType> samples;
      {
        std::unique_lock lock(stream_->mutex);
        stream_->turn_taken.wait(lock, [&] { return stream_->turn == task || stream_->stopping; });
        if (stream_->stopping) return std::nullopt;
        struct PassTurn {
          StreamShare& share;
          ~PassTurn() {
            ++share.turn;
            share.turn_taken.notify_all();
          }
        } pass{*stream_};
        samples = take_samples(&stop);
      }
      if (samples.empty()) return std::nullopt;
      const std::vector<size_t> indices;
      return make_batch(std::move(samples), worker, base_ + task, indices);
    }

    void advance_stream() {
      if (finished_) return;
      std::optional<BatchType> batch;
      if (pool_) {
        batch = take_from_pool();
      } else {
        std::vector<ExampleType> samples = take_samples(nullptr);
        const std::vector<size_t> indices;
        if (!samples.empty()) batch = make_batch(std::move(samples), std::nullopt, position_, indices);
      }
      if (!batch) {
        finished_ = true;
        stop_workers();
        core_->tracker.exhausted(id_);
        return;
      }
      current = std::move(batch);
      ++position_;
      core_->tracker.delivered(id_, position_);
    }

    // What the workers share over a stream: the turn at reading it.
    struct StreamShare {
      std::mutex mutex;
      std::condition_variable turn_taken;
      size_t turn = 0;
      bool stopping = false;
    };
    using Pool = detail::WorkerPool<size_t, std::optional<BatchType>>;

    std::shared_ptr<Core> core_;
    uint64_t id_;
    uint64_t epoch_ = 0;
    std::vector<std::vector<size_t>> plan_;
    size_t position_ = 0;  // the next batch to deliver (batches delivered so far)
    size_t base_ = 0;      // the first batch of this run (after a resume's skip)
    size_t samples_read_ = 0;
    bool finished_ = false;
    bool stream_end_ = false;  // the stream gave std::nullopt or threw: not read again
    std::unique_ptr<StreamShare> stream_ = std::make_unique<StreamShare>();
    size_t pushed_ = 0;             // tasks sent to the workers
    bool stream_end_seen_ = false;  // a worker's task found the stream's end: send no more
    std::unique_ptr<Pool> pool_;
  };

  std::shared_ptr<Core> core_;
};

template <class D, class C>
DataLoader(std::shared_ptr<D>, DataLoaderOptions<C>) -> DataLoader<D, C>;
template <class D>
DataLoader(std::shared_ptr<D>) -> DataLoader<D>;
template <class D, class C>
DataLoader(D, DataLoaderOptions<C>) -> DataLoader<D, C>;
template <class D>
DataLoader(D) -> DataLoader<D>;

// libtorch's spelling: auto loader = make_data_loader(dataset, options).
template <class D, class C = DefaultCollate>
auto make_data_loader(std::shared_ptr<D> dataset, DataLoaderOptions<C> options = {}) {
  return DataLoader<D, C>(std::move(dataset), std::move(options));
}
// (A libtorch-style dataset goes to libtorch's make_data_loader, libtorch_loader.h.)
template <class D, class C = DefaultCollate>
  requires(MapStyleDataset<D> || StreamDataset<D>) && (!detail::LibtorchDataset<D>)
auto make_data_loader(D dataset, DataLoaderOptions<C> options = {}) {
  return DataLoader<D, C>(std::move(dataset), std::move(options));
}

}  // namespace gradiens::data
