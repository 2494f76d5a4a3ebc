// libtorch's ChunkDataset: a stateful dataset over data stored in chunks (files,
// shards) that a ChunkDataReader reads whole. Preloader threads read the
// chunks a chunk sampler picks (cross_chunk_shuffle_count at a time, joined),
// shuffle their examples with an example sampler and cut them into batches in
// a bounded cache, from which get_batch takes them; an epoch ends when every
// chunk has been read and the cache is empty.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "data/datasets/base.h"
#include "data/samplers.h"
#include "data/worker_exception.h"
#include "kernels/error.h"

namespace gradiens::data::datasets {

// Reads one chunk at a time: read_chunk(i) returns all examples of chunk i.
template <class ExampleType_, class ChunkType_ = std::vector<ExampleType_>>
class ChunkDataReader {
 public:
  using ChunkType = ChunkType_;
  using ExampleType = ExampleType_;
  // libtorch's older name for a chunk's type.
  using BatchType = ChunkType_;

  virtual ~ChunkDataReader() = default;
  virtual ChunkType read_chunk(size_t chunk_index) = 0;
  virtual size_t chunk_count() = 0;
  // Called when the ChunkDataset starts an epoch.
  virtual void reset() = 0;
};

// preloader_count   threads reading chunks
// batch_size        examples per batch (the DataLoader must ask for this many)
// cache_size        examples the cache holds before the preloaders wait
// cross_chunk_shuffle_count  chunks read and shuffled together
struct ChunkDatasetOptions {
  ChunkDatasetOptions() = delete;
  ChunkDatasetOptions(size_t preloader_count, size_t batch_size, size_t cache_size = 2048,
                      size_t cross_chunk_shuffle_count = 1)
      : preloader_count_(preloader_count),
        batch_size_(batch_size),
        cache_size_(cache_size),
        cross_chunk_shuffle_count_(cross_chunk_shuffle_count) {
    GD_CHECK(preloader_count_ > 0, "Preloader count is 0. At least one preloader needs to be specified.");
    GD_CHECK(batch_size_ > 0, "Batch size is 0. A positive batch size needs to be specified.");
    GD_CHECK(cache_size_ > 0, "Cache size is 0. A positive cache size needs to be specified.");
    GD_CHECK(cache_size_ >= batch_size_,
             "Cache size is less than batch size. Cache needs to be large enough to hold at least one batch.");
    GD_CHECK(cross_chunk_shuffle_count_ > 0, "cross_chunk_shuffle_count needs to be greater than 0.");
  }

  ChunkDatasetOptions& preloader_count(size_t value) { return set(preloader_count_, value); }
  ChunkDatasetOptions& batch_size(size_t value) { return set(batch_size_, value); }
  ChunkDatasetOptions& cache_size(size_t value) { return set(cache_size_, value); }
  ChunkDatasetOptions& cross_chunk_shuffle_count(size_t value) { return set(cross_chunk_shuffle_count_, value); }
  size_t preloader_count() const noexcept { return preloader_count_; }
  size_t batch_size() const noexcept { return batch_size_; }
  size_t cache_size() const noexcept { return cache_size_; }
  size_t cross_chunk_shuffle_count() const noexcept { return cross_chunk_shuffle_count_; }

 private:
  ChunkDatasetOptions& set(size_t& field, size_t value) {
    field = value;
    return *this;
  }
  size_t preloader_count_;
  size_t batch_size_;
  size_t cache_size_;
  size_t cross_chunk_shuffle_count_;
};

namespace detail {

// The cache between the preloaders (add_chunk_data) and get_batch: a queue of
// batches holding at most `capacity` examples while the preloaders wait. A
// chunk's examples go in the order of the example sampler (reset to the
// chunk's size), first topping up the last, short batch.
template <class Batch, class ExampleSampler>
class ChunkBatchBuffer {
 public:
  ChunkBatchBuffer(size_t batch_size, ExampleSampler& example_sampler, size_t capacity)
      : batch_size_(batch_size), example_sampler_(example_sampler), capacity_(capacity) {}

  // The next batch; std::nullopt once stopped with nothing left. Rethrows a
  // preloader's exception as a WorkerException.
  std::optional<Batch> get_batch() {
    std::unique_lock lock(mutex_);
    readable_.wait(lock, [this] { return examples_ >= batch_size_ || stopped_; });
    if (queue_.empty()) return std::nullopt;
    Entry entry = std::move(queue_.front());
    queue_.pop();
    examples_ -= entry.exception ? batch_size_ : entry.batch.size();
    lock.unlock();
    writable_.notify_all();
    if (entry.exception) throw WorkerException(entry.exception);
    return std::move(entry.batch);
  }

  void add_chunk_data(Batch data) {
    std::unique_lock lock(mutex_);
    writable_.wait(lock, [this] { return examples_ < capacity_ || stopped_; });
    if (stopped_) return;
    const size_t count = data.size();
    size_t taken = 0;
    example_sampler_.reset(count);
    auto fill = [&](size_t n, Batch& batch) {
      std::optional<std::vector<size_t>> order = example_sampler_.next(n);
      GD_CHECK(order && order->size() == n, "ChunkDataset: the example sampler returned " +
                                                std::to_string(order ? order->size() : 0) + " indices for " +
                                                std::to_string(n) + " examples");
      for (const size_t i : *order) {
        GD_CHECK(i < count, "ChunkDataset: the example sampler's index " + std::to_string(i) +
                                " is out of range for a chunk of " + std::to_string(count) + " examples");
        batch.push_back(std::move(data[i]));
      }
      taken += n;
    };
    if (!queue_.empty() && !queue_.back().exception && queue_.back().batch.size() < batch_size_)
      fill(std::min(count, batch_size_ - queue_.back().batch.size()), queue_.back().batch);
    while (taken < count) {
      Entry entry;
      entry.batch.reserve(batch_size_);
      fill(std::min(count - taken, batch_size_), entry.batch);
      queue_.push(std::move(entry));
    }
    examples_ += count;
    lock.unlock();
    readable_.notify_all();
  }

  void add_exception(std::exception_ptr exception) {
    std::unique_lock lock(mutex_);
    writable_.wait(lock, [this] { return examples_ < capacity_ || stopped_; });
    if (stopped_) return;
    Entry entry;
    entry.exception = std::move(exception);
    queue_.push(std::move(entry));
    // Counted as a full batch, so that get_batch wakes up for it.
    examples_ += batch_size_;
    lock.unlock();
    readable_.notify_all();
  }

  // No more data: get_batch drains what is left, the preloaders stop waiting.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    writable_.notify_all();
    readable_.notify_all();
  }

 private:
  struct Entry {
    Batch batch;
    std::exception_ptr exception;
  };

  size_t batch_size_;
  ExampleSampler& example_sampler_;
  size_t capacity_;
  size_t examples_ = 0;  // examples in the queue
  bool stopped_ = false;
  std::queue<Entry> queue_;
  std::mutex mutex_;
  std::condition_variable readable_, writable_;
};

}  // namespace detail

// See the top of the file. The chunk sampler (reset to chunk_count() each
// epoch) orders the chunks, the example sampler the examples of what a
// preloader read; preprocessing_policy, when given, runs on each read
// (before the shuffle). save/load write and read the chunk sampler, so that a
// loaded dataset's next epoch continues where the saved one was (a loaded
// position is used by one reset(), later epochs start afresh).
template <class ChunkReader, class ChunkSampler = samplers::RandomSampler,
          class ExampleSampler = samplers::RandomSampler>
class ChunkDataset final : public StatefulDataset<ChunkDataset<ChunkReader, ChunkSampler, ExampleSampler>,
                                                  typename ChunkReader::ChunkType, size_t> {
 public:
  using BatchType = std::optional<typename ChunkReader::ChunkType>;
  using UnwrappedBatchType = typename ChunkReader::ChunkType;
  using BatchRequestType = size_t;
  using ChunkSamplerType = ChunkSampler;
  using ExampleSamplerType = ExampleSampler;

  ChunkDataset(ChunkReader chunk_reader, ChunkSampler chunk_sampler, ExampleSampler example_sampler,
               ChunkDatasetOptions options,
               std::function<void(UnwrappedBatchType&)> preprocessing_policy = std::function<void(UnwrappedBatchType&)>())
      : chunk_reader_(std::move(chunk_reader)),
        chunk_sampler_(std::move(chunk_sampler)),
        example_sampler_(std::move(example_sampler)),
        options_(std::move(options)),
        preprocessing_policy_(std::move(preprocessing_policy)) {}

  ~ChunkDataset() override { stop_preloaders(); }
  ChunkDataset(const ChunkDataset&) = delete;
  ChunkDataset& operator=(const ChunkDataset&) = delete;

  // The next batch from the cache; batch_size must be the options' batch size.
  BatchType get_batch(size_t batch_size) override {
    GD_CHECK(buffer_ != nullptr, "Dataset needs to call reset() before calling get_batch().");
    GD_CHECK(batch_size == options_.batch_size(),
             "The requested batch size does not match with the initialized batch size.\n The requested batch size "
             "is " + std::to_string(batch_size) + ", while the dataset is created with batch size equal to " +
                 std::to_string(options_.batch_size()));
    return buffer_->get_batch();
  }
  BatchType get_batch() { return get_batch(options_.batch_size()); }

  // Stops the previous epoch's preloaders and starts this epoch's.
  void reset() override {
    stop_preloaders();
    if (load_checkpoint_) {
      load_checkpoint_ = false;  // the loaded chunk position starts this epoch
    } else {
      chunk_reader_.reset();
      chunk_sampler_.reset(chunk_reader_.chunk_count());
    }
    buffer_ = std::make_unique<detail::ChunkBatchBuffer<UnwrappedBatchType, ExampleSampler>>(
        options_.batch_size(), example_sampler_, options_.cache_size());
    quit_ = false;
    running_preloaders_ = options_.preloader_count();
    for (size_t i = 0; i < options_.preloader_count(); ++i) preloaders_.emplace_back([this] { preload(); });
  }

  // Unknown: a chunk's size is known only once it is read.
  std::optional<size_t> size() const override { return std::nullopt; }

  ChunkSamplerType& chunk_sampler() { return chunk_sampler_; }
  const ChunkDatasetOptions& options() const { return options_; }

  void save(serialize::OutputArchive& archive) const override {
    std::lock_guard lock(chunk_mutex_);
    chunk_sampler_.save(archive);
  }
  void load(serialize::InputArchive& archive) override {
    std::lock_guard lock(chunk_mutex_);
    chunk_sampler_.load(archive);
    load_checkpoint_ = true;
  }

 private:
  void preload() {
    while (!quit_) {
      try {
        std::vector<size_t> chunks;
        {
          std::lock_guard lock(chunk_mutex_);
          std::optional<std::vector<size_t>> next = chunk_sampler_.next(options_.cross_chunk_shuffle_count());
          if (!next || next->empty()) break;
          chunks = std::move(*next);
        }
        UnwrappedBatchType data = chunk_reader_.read_chunk(chunks[0]);
        for (size_t i = 1; i < chunks.size(); ++i) {
          UnwrappedBatchType more = chunk_reader_.read_chunk(chunks[i]);
          std::move(more.begin(), more.end(), std::back_inserter(data));
        }
        if (preprocessing_policy_) preprocessing_policy_(data);
        if (!data.empty()) buffer_->add_chunk_data(std::move(data));
      } catch (...) {
        buffer_->add_exception(std::current_exception());
      }
    }
    // The last preloader to finish tells get_batch that no more data comes.
    if (--running_preloaders_ == 0) buffer_->stop();
  }

  void stop_preloaders() {
    quit_ = true;
    if (buffer_) buffer_->stop();
    for (std::thread& thread : preloaders_)
      if (thread.joinable()) thread.join();
    preloaders_.clear();
  }

  ChunkReader chunk_reader_;
  ChunkSampler chunk_sampler_;
  ExampleSampler example_sampler_;
  ChunkDatasetOptions options_;
  std::function<void(UnwrappedBatchType&)> preprocessing_policy_;
  std::unique_ptr<detail::ChunkBatchBuffer<UnwrappedBatchType, ExampleSampler>> buffer_;
  std::vector<std::thread> preloaders_;
  std::atomic<bool> quit_{false};
  std::atomic<size_t> running_preloaders_{0};
  mutable std::mutex chunk_mutex_;  // guards the chunk sampler
  bool load_checkpoint_ = false;
};

}  // namespace gradiens::data::datasets
