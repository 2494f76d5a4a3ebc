// Samplers: the order in which a DataLoader visits a map-style dataset, as
// torch.utils.data's samplers, plus LengthBucketSampler for packed sequences;
// and libtorch's samplers (namespace samplers): the same Sequential and Random
// samplers through libtorch's next()/reset() interface, StreamSampler and the
// Distributed{Random,Sequential}Samplers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/samplers/sampler.h"
#include "engine/generator.h"
#include "kernels/error.h"

namespace gradiens::data {

namespace detail {

// Note [Two sampler interfaces]
// A sampler of sample indices (Sampler<size_t>) serves both DataLoaders:
// torch.utils.data's asks it for a whole pass at once (indices()), libtorch's
// walks a pass batch by batch (samplers::Sampler<>: next(batch_size),
// reset(), save/load). IndexCursor gives every such sampler the second
// interface on top of the first: the pass next() walks is drawn by indices()
// on first use and again by each reset(); index() counts the indices handed
// out. save() writes the position, the pass and the sampler's state_dict(),
// so a loaded sampler continues the same pass and draws the same next ones.
class IndexCursor : public samplers::Sampler<std::vector<size_t>> {
 public:
  virtual std::vector<size_t> indices() = 0;
  virtual nlohmann::json state_dict() const { return nlohmann::json::object(); }
  virtual void load_state_dict(const nlohmann::json& /*state*/) {}

  // A new pass (over new_size samples when given, for samplers that can resize).
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  // Indices handed out by next() in the current pass.
  size_t index() const noexcept { return index_; }
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 protected:
  // Makes indices() cover new_size samples; samplers of fixed contents refuse.
  virtual void resize(size_t new_size);

 private:
  std::optional<std::vector<size_t>> pass_;
  size_t index_ = 0;
};

struct NoCursor {};

}  // namespace detail

// The indices of one pass over a dataset. Index is size_t for samplers of
// samples and std::vector<size_t> for batch samplers (PyTorch's Sampler[int]
// and Sampler[List[int]]). indices() is one pass (PyTorch's iter(sampler)): a
// random sampler draws a new order on each call, from its own Generator.
//
// state_dict() captures whatever the next indices() depends on (a generator's
// state, an epoch), so that a DataLoader saved mid-epoch can draw that epoch's
// order again on resume; stateless samplers return an empty object.
template <class Index = size_t>
class Sampler : public std::conditional_t<std::is_same_v<Index, size_t>, detail::IndexCursor, detail::NoCursor> {
 public:
  using IndexType = Index;
  virtual ~Sampler() = default;
  virtual std::vector<Index> indices() = 0;
  // len(sampler): how many indices one pass yields.
  virtual size_t size() const = 0;
  virtual nlohmann::json state_dict() const { return nlohmann::json::object(); }
  virtual void load_state_dict(const nlohmann::json& /*state*/) {}
};

using BatchSamplerBase = Sampler<std::vector<size_t>>;

// 0, 1, ..., size - 1.
class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  std::vector<size_t> indices() override;
  size_t size() const override { return size_; }

 protected:
  void resize(size_t new_size) override { size_ = new_size; }

 private:
  size_t size_;
};

// A random permutation of 0 .. size-1 (or, with replacement, num_samples
// uniform draws). Without a generator the sampler takes its own, seeded from
// one draw of the default generator when it is built: each pass still differs,
// and manual_seed makes a run reproducible.
class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(size_t size, bool replacement = false, std::optional<int64_t> num_samples = std::nullopt,
                         std::optional<Generator> generator = std::nullopt);
  std::vector<size_t> indices() override;
  size_t size() const override { return num_samples_; }
  bool replacement() const { return replacement_; }
  Generator& generator() { return generator_; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 protected:
  // A new dataset size; num_samples follows it unless it was given.
  void resize(size_t new_size) override;

 private:
  size_t data_size_;
  bool replacement_;
  bool explicit_num_samples_;
  size_t num_samples_;
  Generator generator_;
};

// The given indices in a random order (a new permutation each pass).
class SubsetRandomSampler : public Sampler<> {
 public:
  explicit SubsetRandomSampler(std::vector<size_t> indices, std::optional<Generator> generator = std::nullopt);
  std::vector<size_t> indices() override;
  size_t size() const override { return indices_.size(); }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 private:
  std::vector<size_t> indices_;
  Generator generator_;
};

// num_samples indices of 0 .. weights.size()-1 drawn with probability
// proportional to the weights (multinomial), with or without replacement.
class WeightedRandomSampler : public Sampler<> {
 public:
  WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement = true,
                        std::optional<Generator> generator = std::nullopt);
  std::vector<size_t> indices() override;
  size_t size() const override { return num_samples_; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 private:
  Tensor weights_;  // float64, 1-D
  size_t num_samples_;
  bool replacement_;
  Generator generator_;
};

// Groups another sampler's indices into batches of batch_size; the last one is
// smaller unless drop_last drops it.
class BatchSampler : public BatchSamplerBase {
 public:
  BatchSampler(std::shared_ptr<Sampler<>> sampler, int64_t batch_size, bool drop_last);
  std::vector<std::vector<size_t>> indices() override;
  size_t size() const override;
  size_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }
  const std::shared_ptr<Sampler<>>& sampler() const { return sampler_; }
  nlohmann::json state_dict() const override { return sampler_->state_dict(); }
  void load_state_dict(const nlohmann::json& state) override { sampler_->load_state_dict(state); }

 private:
  std::shared_ptr<Sampler<>> sampler_;
  size_t batch_size_;
  bool drop_last_;
};

// This replica's share of a dataset of `size` samples, as PyTorch's
// DistributedSampler: the (shuffled, when shuffle) order is padded by repeating
// its head until it divides evenly among num_replicas, or with drop_last cut
// to the largest multiple; replica `rank` takes positions rank, rank +
// num_replicas, ... The order of epoch e is randperm(size) from a Generator
// seeded with seed + e, so every replica agrees on it; call set_epoch before
// each epoch for a new order (otherwise every epoch repeats).
class DistributedSampler : public Sampler<> {
 public:
  DistributedSampler(size_t size, int64_t num_replicas, int64_t rank, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false);
  std::vector<size_t> indices() override;
  size_t size() const override { return num_samples_; }
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }
  uint64_t epoch() const { return epoch_; }
  // Samples over all replicas after padding or dropping.
  size_t total_size() const { return num_samples_ * num_replicas_; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 private:
  size_t dataset_size_;
  size_t num_replicas_;
  size_t rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  size_t num_samples_;
  uint64_t epoch_ = 0;
};

// A batch sampler that puts samples of similar length together, so that a
// padded or packed batch wastes little. Without shuffle: the indices sorted by
// length, longest first (ties by index), cut into batches. With shuffle: a
// random permutation cut into buckets of bucket_size samples; each bucket
// sorted by length, longest first, and cut into batches; then the batches in
// a random order. Within a batch lengths never increase, as
// pack_padded_sequence(enforce_sorted=true) wants. bucket_size is a multiple
// of batch_size (default 100 batches), so only the final bucket can leave a
// short batch, which drop_last drops.
class LengthBucketSampler : public BatchSamplerBase {
 public:
  LengthBucketSampler(std::vector<size_t> lengths, int64_t batch_size, std::optional<int64_t> bucket_size = std::nullopt,
                      bool shuffle = true, bool drop_last = false, std::optional<Generator> generator = std::nullopt);
  std::vector<std::vector<size_t>> indices() override;
  size_t size() const override;
  size_t bucket_size() const { return bucket_size_; }
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 private:
  std::vector<size_t> lengths_;
  size_t batch_size_;
  size_t bucket_size_;
  bool shuffle_;
  bool drop_last_;
  Generator generator_;
};

namespace samplers {

// torch::data::samplers' names for the samplers above (Note [Two sampler interfaces]).
using data::RandomSampler;
using data::SequentialSampler;

// Requests for batch_size samples of a stream at a time until epoch_size have
// been asked for (the last request is the remainder).
class StreamSampler : public Sampler<BatchSize> {
 public:
  explicit StreamSampler(size_t epoch_size) : epoch_size_(epoch_size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<BatchSize> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  size_t examples_retrieved_so_far_ = 0;
  size_t epoch_size_;
};

// libtorch's distributed samplers: replica `rank` of num_replicas takes its
// own contiguous share of local_sample_count() indices. With
// allow_duplicates, that count is ceil(size / num_replicas) and the shares
// wrap around to the dataset's start (some samples appear twice); without,
// it is floor(size / num_replicas) and the last size % num_replicas indices
// are left out. (torch.utils.data's interleaved DistributedSampler is the
// class data::DistributedSampler.)
template <class BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true)
      : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
    GD_CHECK(num_replicas > 0, "DistributedSampler: num_replicas must be positive");
    GD_CHECK(rank < num_replicas, "DistributedSampler: rank " + std::to_string(rank) +
                                      " is out of range for " + std::to_string(num_replicas) + " replicas");
  }
  // The epoch seeds the shuffle of DistributedRandomSampler; every replica must set the same one.
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }

 protected:
  size_t local_sample_count() const {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }

  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_ = 0;
  bool allow_duplicates_;
};

// This replica's share of a permutation of the (padded or cut) indices; the
// permutation depends on the epoch only, so all replicas agree on it.
class DistributedRandomSampler : public DistributedSampler<> {
 public:
  explicit DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                                    bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  // The position in the (shuffled) index list: libtorch's index().
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();

  size_t begin_index_ = 0;
  size_t end_index_ = 0;
  size_t sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

// This replica's share in order: indices rank * n, ..., (rank + 1) * n - 1
// (modulo the dataset size) for n = local_sample_count().
class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  explicit DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                                        bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();

  size_t begin_index_ = 0;
  size_t end_index_ = 0;
  size_t sample_index_ = 0;
};

}  // namespace samplers

namespace detail {
// The generator a sampler uses when given none: seeded from one draw of the
// default generator.
Generator seeded_from_default();
nlohmann::json generator_to_json(const Generator& generator);
void generator_from_json(Generator& generator, const nlohmann::json& state, const char* owner);
}  // namespace detail

}  // namespace gradiens::data
