// LengthBucketSampler: batches of samples of similar length, drawn bucket by
// bucket so that batches stay random while padding stays small.
#include <fmt/format.h>

#include <algorithm>

#include "data/samplers.h"
#include "kernels/error.h"

namespace gradiens::data {

LengthBucketSampler::LengthBucketSampler(std::vector<size_t> lengths, int64_t batch_size,
                                         std::optional<int64_t> bucket_size, bool shuffle, bool drop_last,
                                         std::optional<Generator> generator)
    : lengths_(std::move(lengths)), batch_size_(0), bucket_size_(0), shuffle_(shuffle), drop_last_(drop_last),
      generator_(generator ? *generator : detail::seeded_from_default()) {
  GD_CHECK(batch_size > 0,
           fmt::format("batch_size should be a positive integer value, but got batch_size={}", batch_size));
  batch_size_ = static_cast<size_t>(batch_size);
  const int64_t bucket = bucket_size.value_or(100 * batch_size);
  GD_CHECK(bucket > 0 && bucket % batch_size == 0,
           fmt::format("LengthBucketSampler: bucket_size should be a positive multiple of batch_size ({}), but got "
                       "bucket_size={}",
                       batch_size, bucket));
  bucket_size_ = static_cast<size_t>(bucket);
}

std::vector<std::vector<size_t>> LengthBucketSampler::indices() {
  const size_t n = lengths_.size();
  std::vector<size_t> order(n);
  if (shuffle_) {
    const Tensor perm = randperm(static_cast<int64_t>(n), generator_);
    const int64_t* p = perm.cpu_data_ptr<int64_t>();
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<size_t>(p[i]);
  } else {
    for (size_t i = 0; i < n; ++i) order[i] = i;
  }
  const auto longer_first = [&](size_t a, size_t b) { return lengths_[a] > lengths_[b]; };
  // Without shuffle the whole dataset is one bucket.
  const size_t bucket = shuffle_ ? bucket_size_ : std::max<size_t>(n, 1);
  std::vector<std::vector<size_t>> batches;
  for (size_t start = 0; start < n; start += bucket) {
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(start);
    const auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(n, start + bucket));
    std::stable_sort(first, last, longer_first);
    for (auto b = first; b < last;) {
      const auto e = b + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(batch_size_), last - b);
      if (drop_last_ && static_cast<size_t>(e - b) < batch_size_) break;
      batches.emplace_back(b, e);
      b = e;
    }
  }
  if (shuffle_ && batches.size() > 1) {
    const Tensor perm = randperm(static_cast<int64_t>(batches.size()), generator_);
    const int64_t* p = perm.cpu_data_ptr<int64_t>();
    std::vector<std::vector<size_t>> shuffled(batches.size());
    for (size_t i = 0; i < batches.size(); ++i) shuffled[i] = std::move(batches[static_cast<size_t>(p[i])]);
    batches = std::move(shuffled);
  }
  return batches;
}

size_t LengthBucketSampler::size() const {
  const size_t n = lengths_.size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

nlohmann::json LengthBucketSampler::state_dict() const {
  return {{"generator", detail::generator_to_json(generator_)}};
}
void LengthBucketSampler::load_state_dict(const nlohmann::json& state) {
  detail::generator_from_json(generator_, state, "LengthBucketSampler");
}

}  // namespace gradiens::data
