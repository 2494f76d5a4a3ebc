// libtorch's DataLoaders over libtorch-style datasets (datasets::BatchDataset
// and its kin): make_data_loader(dataset[, sampler], options or batch_size)
// returns a std::unique_ptr to a StatelessDataLoader (a sampler's requests,
// one dataset copy per worker) or a StatefulDataLoader (the dataset's own
// state decides the end; workers share it). Both run on detail::WorkerPool,
// the worker threads of the torch.utils.data-shaped DataLoader.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "data/dataloader.h"
#include "data/datasets/base.h"
#include "data/detail/worker_pool.h"
#include "data/samplers.h"
#include "data/worker_exception.h"
#include "kernels/error.h"

namespace gradiens::data {

// The options a libtorch loader runs with, every value settled
// (libtorch's FullDataLoaderOptions): max_jobs defaults to 2 * workers.
struct FullDataLoaderOptions {
  template <class Collate>
  explicit FullDataLoaderOptions(const DataLoaderOptions<Collate>& options)
      : batch_size(static_cast<size_t>(options.batch_size().value_or(1))),
        workers(options.workers()),
        max_jobs(options.max_jobs().value_or(2 * workers)),
        timeout(options.settings().timeout_ms ? options.settings().timeout_ms
                                              : detail::timeout_of(options.settings().timeout)),
        enforce_ordering(options.enforce_ordering()),
        drop_last(options.drop_last()) {
    detail::check_libtorch_loader_options(options.settings());
  }

  size_t batch_size;
  size_t workers;
  size_t max_jobs;
  std::optional<std::chrono::milliseconds> timeout;
  bool enforce_ordering;
  bool drop_last;
};

// An input iterator over a libtorch loader's batches. Copies share one
// position; a batch is fetched when first looked at. The past-the-end
// iterator (end()) is a sentinel that a valid iterator equals once exhausted.
template <class Batch>
class Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  // The sentinel.
  Iterator() = default;
  explicit Iterator(std::function<std::optional<Batch>()> next_batch)
      : state_(std::make_shared<State>(std::move(next_batch))) {}

  Iterator& operator++() {
    GD_CHECK(state_ != nullptr, "Incrementing the DataLoader's past-the-end iterator is not allowed");
    state_->fetch_first();
    GD_CHECK(state_->batch.has_value(), "Attempted to increment iterator past the end");
    state_->batch = state_->next_batch();
    return *this;
  }
  reference operator*() const {
    GD_CHECK(state_ != nullptr, "Dereferencing the DataLoader's past-the-end iterator is not allowed");
    state_->fetch_first();
    GD_CHECK(state_->batch.has_value(), "Attempted to dereference iterator that was past the end");
    return *state_->batch;
  }
  pointer operator->() const { return &**this; }

  // Two valid iterators are equal when they are copies of each other; a valid
  // one equals the sentinel once its batches are exhausted.
  friend bool operator==(const Iterator& a, const Iterator& b) {
    if (a.state_ && b.state_) return a.state_ == b.state_;
    if (!a.state_ && !b.state_) return true;
    const State& valid = a.state_ ? *a.state_ : *b.state_;
    valid.fetch_first();
    return !valid.batch.has_value();
  }

 private:
  struct State {
    explicit State(std::function<std::optional<Batch>()> next) : next_batch(std::move(next)) {}
    void fetch_first() const {
      if (!fetched) {
        batch = next_batch();
        fetched = true;
      }
    }
    std::function<std::optional<Batch>()> next_batch;
    mutable std::optional<Batch> batch;
    mutable bool fetched = false;
  };
  std::shared_ptr<State> state_;
};

namespace detail {

// A sampler of libtorch's shape (samplers::Sampler<Request> or alike).
template <class S>
concept LibtorchSampler = requires(S& s, size_t n) {
  typename S::BatchRequestType;
  s.next(n);
  s.reset();
};

// The batch a loader yields: the dataset's, unwrapped from std::optional when stateful.
template <class Dataset>
using LoaderBatch = std::conditional_t<Dataset::is_stateful, typename Dataset::BatchType::value_type,
                                       typename Dataset::BatchType>;

}  // namespace detail

// What the two libtorch loaders share: the iteration, the workers and the
// options. Each begin() starts an epoch (reset() then max_jobs requests sent
// ahead); with workers, requests run on the worker threads and their batches
// come back in request order (enforce_ordering) or as they finish; without,
// the calling thread fetches each batch when the iterator moves.
template <class Dataset, class Batch, class BatchRequest>
class DataLoaderBase {
 public:
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;

  DataLoaderBase(const DataLoaderBase&) = delete;
  DataLoaderBase& operator=(const DataLoaderBase&) = delete;
  virtual ~DataLoaderBase() { join(); }

  // Starts an epoch. Only one iteration may be in flight at a time.
  Iterator<Batch> begin() {
    GD_CHECK(pool_ == nullptr || pool_->in_flight() == 0,
             "Attempted to get a new DataLoader iterator while another iterator is not yet exhausted");
    reset();
    return Iterator<Batch>([this] { return next(); });
  }
  Iterator<Batch> end() { return Iterator<Batch>(); }

  // Stops and joins the workers; the loader cannot be iterated after.
  void join() {
    pool_.reset();
    joined_ = true;
  }

  const FullDataLoaderOptions& options() const noexcept { return options_; }

 protected:
  // dataset_per_worker: each worker gets its own copy of the dataset (made
  // here, once); otherwise they all use `dataset`.
  DataLoaderBase(FullDataLoaderOptions options, std::unique_ptr<Dataset> dataset, bool dataset_per_worker)
      : options_(std::move(options)), main_thread_dataset_(std::move(dataset)) {
    if (options_.workers == 0) return;
    if (dataset_per_worker) {
      if constexpr (std::is_copy_constructible_v<Dataset>) {
        worker_datasets_.reserve(options_.workers);
        for (size_t w = 0; w < options_.workers; ++w)
          worker_datasets_.push_back(std::make_unique<Dataset>(*main_thread_dataset_));
      } else {
        throw Error(
            "DataLoader: with workers, each worker gets a copy of the dataset, and this dataset cannot be copied; "
            "share it with datasets::make_shared_dataset, or use no workers");
      }
    }
    pool_ = std::make_unique<Pool>(options_.workers, std::max<size_t>(options_.max_jobs, 1), options_.enforce_ordering,
                                   [this](BatchRequest&& request, size_t worker, const std::atomic<bool>&) {
                                     Dataset& dataset =
                                         worker_datasets_.empty() ? *main_thread_dataset_ : *worker_datasets_[worker];
                                     return dataset.get_batch(std::move(request));
                                   });
  }

  // The next request of this epoch; std::nullopt when it has no more.
  virtual std::optional<BatchRequest> get_batch_request() = 0;

  // Starts an epoch: the derived loader resets its sampler or dataset first.
  virtual void reset() {
    GD_CHECK(!joined_, "DataLoader: the loader was joined and cannot start another epoch");
    if (pool_) {
      pool_->restart();
      prefetch(options_.max_jobs);
    }
  }

  FullDataLoaderOptions options_;
  std::unique_ptr<Dataset> main_thread_dataset_;

 private:
  using Output = typename Dataset::BatchType;
  using Pool = detail::WorkerPool<BatchRequest, Output>;

  void prefetch(size_t requests) {
    for (size_t r = 0; r < requests && pool_->has_room(); ++r) {
      std::optional<BatchRequest> request = get_batch_request();
      if (!request) break;
      pool_->push(std::move(*request));
    }
  }

  std::optional<Batch> next() {
    if (pool_) {
      while (auto result = pool_->pop(options_.timeout)) {
        if (result->exception) throw WorkerException(result->exception);
        if constexpr (Dataset::is_stateful) {
          if (!result->output->has_value()) continue;  // this worker found the dataset dry
          prefetch(1);
          return std::move(**result->output);
        } else {
          prefetch(1);
          return std::move(*result->output);
        }
      }
      return std::nullopt;
    }
    // A stateful dataset's std::optional batch is the result as it is.
    if (std::optional<BatchRequest> request = get_batch_request())
      return main_thread_dataset_->get_batch(std::move(*request));
    return std::nullopt;
  }

  std::vector<std::unique_ptr<Dataset>> worker_datasets_;
  std::unique_ptr<Pool> pool_;  // after the datasets: goes first
  bool joined_ = false;
};

// A loader driven by a sampler: each request is sampler.next(batch_size)
// (a short last one dropped under drop_last); each worker reads its own copy
// of the dataset.
template <class Dataset, class Sampler>
class StatelessDataLoader
    : public DataLoaderBase<Dataset, typename Dataset::BatchType, typename Sampler::BatchRequestType> {
 public:
  using super = DataLoaderBase<Dataset, typename Dataset::BatchType, typename Sampler::BatchRequestType>;
  using typename super::BatchRequestType;

  template <class Collate>
  StatelessDataLoader(Dataset dataset, Sampler sampler, const DataLoaderOptions<Collate>& options)
      : StatelessDataLoader(std::move(dataset), std::move(sampler), FullDataLoaderOptions(options)) {}
  StatelessDataLoader(Dataset dataset, Sampler sampler, FullDataLoaderOptions options)
      : super(std::move(options), std::make_unique<Dataset>(std::move(dataset)), /*dataset_per_worker=*/true),
        sampler_(std::move(sampler)) {}

  Sampler& sampler() noexcept { return sampler_; }

 private:
  void reset() override {
    sampler_.reset();
    super::reset();
  }

  std::optional<BatchRequestType> get_batch_request() override {
    std::optional<BatchRequestType> request = sampler_.next(this->options_.batch_size);
    if (!request || (request->size() < this->options_.batch_size && this->options_.drop_last)) return std::nullopt;
    GD_CHECK(request->size() > 0, "DataLoader: the sampler returned an empty batch request");
    return request;
  }

  Sampler sampler_;
};

// A loader over a stateful dataset: every request is batch_size, the epoch
// ends when the dataset returns std::nullopt; reset() resets the dataset. The
// workers share the one dataset, which must therefore be thread-safe.
template <class Dataset>
class StatefulDataLoader
    : public DataLoaderBase<Dataset, typename Dataset::BatchType::value_type, typename Dataset::BatchRequestType> {
 public:
  using super =
      DataLoaderBase<Dataset, typename Dataset::BatchType::value_type, typename Dataset::BatchRequestType>;
  using typename super::BatchRequestType;

  template <class Collate>
  StatefulDataLoader(Dataset dataset, const DataLoaderOptions<Collate>& options)
      : StatefulDataLoader(std::move(dataset), FullDataLoaderOptions(options)) {}
  StatefulDataLoader(Dataset dataset, FullDataLoaderOptions options)
      : super(std::move(options), std::make_unique<Dataset>(std::move(dataset)), /*dataset_per_worker=*/false) {}

 private:
  void reset() override {
    this->main_thread_dataset_->reset();
    super::reset();
  }
  std::optional<BatchRequestType> get_batch_request() override { return this->options_.batch_size; }
};

// ---- make_data_loader for libtorch-style datasets ----

// A stateless dataset with an explicit sampler.
template <detail::LibtorchDataset Dataset, detail::LibtorchSampler Sampler, class Collate = DefaultCollate>
  requires(!Dataset::is_stateful)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions<Collate> options = {}) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler), options);
}
template <detail::LibtorchDataset Dataset, detail::LibtorchSampler Sampler>
  requires(!Dataset::is_stateful)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        size_t batch_size) {
  return make_data_loader(std::move(dataset), std::move(sampler), DataLoaderOptions<>(batch_size));
}

// A stateless dataset with a Sampler(dataset size) (RandomSampler unless named).
template <class Sampler = samplers::RandomSampler, detail::LibtorchDataset Dataset, class Collate = DefaultCollate>
  requires(!Dataset::is_stateful && std::is_constructible_v<Sampler, size_t>)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions<Collate> options = {}) {
  const std::optional<size_t> size = dataset.size();
  GD_CHECK(size.has_value(), "Expected the dataset to be sized in order to construct the Sampler");
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}
template <class Sampler = samplers::RandomSampler, detail::LibtorchDataset Dataset>
  requires(!Dataset::is_stateful && std::is_constructible_v<Sampler, size_t>)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, size_t batch_size) {
  return make_data_loader<Sampler>(std::move(dataset), DataLoaderOptions<>(batch_size));
}

// A stateful dataset.
template <detail::LibtorchDataset Dataset, class Collate = DefaultCollate>
  requires(Dataset::is_stateful)
std::unique_ptr<StatefulDataLoader<Dataset>> make_data_loader(Dataset dataset, DataLoaderOptions<Collate> options = {}) {
  return std::make_unique<StatefulDataLoader<Dataset>>(std::move(dataset), options);
}

}  // namespace gradiens::data
