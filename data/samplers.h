// Samplers: the order in which a DataLoader visits a map-style dataset, as
// torch.utils.data's samplers, plus LengthBucketSampler for packed sequences.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/generator.h"

namespace gradiens::data {

// The indices of one pass over a dataset. Index is size_t for samplers of
// samples and std::vector<size_t> for batch samplers (PyTorch's Sampler[int]
// and Sampler[List[int]]). indices() is one pass (PyTorch's iter(sampler)): a
// random sampler draws a new order on each call, from its own Generator.
//
// state_dict() captures whatever the next indices() depends on (a generator's
// state, an epoch), so that a DataLoader saved mid-epoch can draw that epoch's
// order again on resume; stateless samplers return an empty object.
template <class Index = size_t>
class Sampler {
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

 private:
  size_t data_size_;
  bool replacement_;
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

namespace detail {
// The generator a sampler uses when given none: seeded from one draw of the
// default generator.
Generator seeded_from_default();
nlohmann::json generator_to_json(const Generator& generator);
void generator_from_json(Generator& generator, const nlohmann::json& state, const char* owner);
}  // namespace detail

}  // namespace gradiens::data
