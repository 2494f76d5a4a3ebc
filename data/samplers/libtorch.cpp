// libtorch's StreamSampler and distributed samplers (torch::data::samplers).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "data/samplers.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"

namespace gradiens::data::samplers {

namespace {

Tensor position_tensor(size_t value) { return scalar_tensor(static_cast<int64_t>(value), kInt64); }

size_t read_position(serialize::InputArchive& archive, const std::string& key, const char* owner) {
  Tensor value;
  archive.read(key, value, /*is_buffer=*/true);
  const auto position = value.item<int64_t>();
  GD_CHECK(position >= 0, fmt::format("{}.load: '{}' is negative ({})", owner, key, position));
  return static_cast<size_t>(position);
}

}  // namespace

// ---- StreamSampler ----

void StreamSampler::reset(std::optional<size_t> new_size) {
  if (new_size) epoch_size_ = *new_size;
  examples_retrieved_so_far_ = 0;
}

std::optional<BatchSize> StreamSampler::next(size_t batch_size) {
  GD_INTERNAL_ASSERT(examples_retrieved_so_far_ <= epoch_size_, "StreamSampler: past the epoch");
  if (examples_retrieved_so_far_ == epoch_size_) return std::nullopt;
  batch_size = std::min(batch_size, epoch_size_ - examples_retrieved_so_far_);
  examples_retrieved_so_far_ += batch_size;
  return BatchSize(batch_size);
}

void StreamSampler::save(serialize::OutputArchive& archive) const {
  archive.write("examples_retrieved_so_far", position_tensor(examples_retrieved_so_far_), /*is_buffer=*/true);
}

void StreamSampler::load(serialize::InputArchive& archive) {
  examples_retrieved_so_far_ = read_position(archive, "examples_retrieved_so_far", "StreamSampler");
}

// ---- DistributedRandomSampler ----

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  reset(size_);
}

void DistributedRandomSampler::populate_indices() {
  const size_t local = local_sample_count();
  const size_t total = num_replicas_ == 1 ? size_ : local * num_replicas_;
  // 0 .. size-1, padded by wrapping around (allow_duplicates) or cut to total.
  all_indices_.resize(total);
  for (size_t i = 0; i < total; ++i) all_indices_[i] = size_ == 0 ? 0 : i % size_;
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
  // The same permutation on every replica: seeded by the epoch alone.
  Generator generator(static_cast<uint64_t>(epoch_));
  const Tensor perm = randperm(static_cast<int64_t>(all_indices_.size()), generator).contiguous();
  const int64_t* order = perm.cpu_data_ptr<int64_t>();
  std::vector<size_t> shuffled(all_indices_.size());
  for (size_t i = 0; i < shuffled.size(); ++i) shuffled[i] = all_indices_[static_cast<size_t>(order[i])];
  all_indices_ = std::move(shuffled);
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  if (sample_index_ >= end_index_) return std::nullopt;
  const size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<size_t> out(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_),
                          all_indices_.begin() + static_cast<std::ptrdiff_t>(end));
  sample_index_ = end;
  return out;
}

void DistributedRandomSampler::save(serialize::OutputArchive& archive) const {
  archive.write("sample_index_", position_tensor(sample_index_), /*is_buffer=*/true);
  archive.write("epoch_", position_tensor(epoch_), /*is_buffer=*/true);
}

void DistributedRandomSampler::load(serialize::InputArchive& archive) {
  const size_t sample_index = read_position(archive, "sample_index_", "DistributedRandomSampler");
  epoch_ = read_position(archive, "epoch_", "DistributedRandomSampler");
  reset(size_);  // the permutation of the loaded epoch
  GD_CHECK(sample_index >= begin_index_ && sample_index <= end_index_,
           fmt::format("DistributedRandomSampler.load: index {} is outside this replica's share [{}, {}]",
                       sample_index, begin_index_, end_index_));
  sample_index_ = sample_index;
}

// ---- DistributedSequentialSampler ----

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  populate_indices();
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  if (sample_index_ >= end_index_) return std::nullopt;
  const size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<size_t> out(end - sample_index_);
  // Past the dataset's end the share wraps around to its start.
  for (size_t i = 0; i < out.size(); ++i) out[i] = size_ == 0 ? 0 : (sample_index_ + i) % size_;
  sample_index_ = end;
  return out;
}

void DistributedSequentialSampler::save(serialize::OutputArchive& archive) const {
  archive.write("sample_index_", position_tensor(sample_index_), /*is_buffer=*/true);
}

void DistributedSequentialSampler::load(serialize::InputArchive& archive) {
  const size_t sample_index = read_position(archive, "sample_index_", "DistributedSequentialSampler");
  GD_CHECK(sample_index >= begin_index_ && sample_index <= end_index_,
           fmt::format("DistributedSequentialSampler.load: index {} is outside this replica's share [{}, {}]",
                       sample_index, begin_index_, end_index_));
  sample_index_ = sample_index;
}

}  // namespace gradiens::data::samplers
