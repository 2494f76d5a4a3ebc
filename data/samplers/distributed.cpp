// DistributedSampler: one replica's evenly sized share of a dataset, with the
// padding, dropping and (seed + epoch) shuffling of PyTorch's.
#include <fmt/format.h>

#include "data/samplers.h"
#include "kernels/error.h"

namespace gradiens::data {

DistributedSampler::DistributedSampler(size_t size, int64_t num_replicas, int64_t rank, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : dataset_size_(size), num_replicas_(0), rank_(0), shuffle_(shuffle), seed_(seed), drop_last_(drop_last),
      num_samples_(0) {
  GD_CHECK(rank < num_replicas && rank >= 0,
           fmt::format("Invalid rank {}, rank should be in the interval [0, {}]", rank, num_replicas - 1));
  num_replicas_ = static_cast<size_t>(num_replicas);
  rank_ = static_cast<size_t>(rank);
  // PyTorch: ceil((n - r) / r) when dropping a ragged tail, which is floor(n / r).
  num_samples_ = drop_last_ && size % num_replicas_ != 0 ? size / num_replicas_
                                                         : (size + num_replicas_ - 1) / num_replicas_;
}

std::vector<size_t> DistributedSampler::indices() {
  std::vector<size_t> order(dataset_size_);
  if (shuffle_) {
    Generator generator(seed_ + epoch_);
    const Tensor perm = randperm(static_cast<int64_t>(dataset_size_), generator);
    const int64_t* p = perm.cpu_data_ptr<int64_t>();
    for (size_t i = 0; i < dataset_size_; ++i) order[i] = static_cast<size_t>(p[i]);
  } else {
    for (size_t i = 0; i < dataset_size_; ++i) order[i] = i;
  }
  const size_t total = total_size();
  // Padding repeats the order from its start, as many times as needed.
  for (size_t i = dataset_size_; i < total && dataset_size_ > 0; ++i) order.push_back(order[i % dataset_size_]);
  order.resize(std::min(order.size(), total));
  std::vector<size_t> mine;
  mine.reserve(num_samples_);
  for (size_t i = rank_; i < total; i += num_replicas_) mine.push_back(order[i]);
  return mine;
}

nlohmann::json DistributedSampler::state_dict() const { return {{"epoch", epoch_}}; }

void DistributedSampler::load_state_dict(const nlohmann::json& state) {
  auto it = state.is_object() ? state.find("epoch") : state.end();
  GD_CHECK(state.is_object() && it != state.end() &&
               (it->is_number_unsigned() || (it->is_number_integer() && it->get<int64_t>() >= 0)),
           "DistributedSampler.load_state_dict: 'epoch' is missing or not a non-negative integer");
  epoch_ = it->get<uint64_t>();
}

}  // namespace gradiens::data
