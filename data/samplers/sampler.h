// libtorch's sampler interface (torch::data::samplers): a sampler hands out
// batch requests one at a time with next(batch_size) until std::nullopt,
// starts over with reset(new_size), and saves its position into an archive.
// The libtorch-style DataLoaders draw their batches through it.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "data/serialize.h"

namespace gradiens::data::samplers {

template <class BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  // Starts a new pass, over `new_size` samples when given.
  virtual void reset(std::optional<size_t> new_size) = 0;
  // The next request of (at most) batch_size samples; std::nullopt once the pass is over.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
  virtual void save(serialize::OutputArchive& archive) const = 0;
  virtual void load(serialize::InputArchive& archive) = 0;
};

template <class BatchRequest>
serialize::OutputArchive& operator<<(serialize::OutputArchive& archive, const Sampler<BatchRequest>& sampler) {
  sampler.save(archive);
  return archive;
}
template <class BatchRequest>
serialize::InputArchive& operator>>(serialize::InputArchive& archive, Sampler<BatchRequest>& sampler) {
  sampler.load(archive);
  return archive;
}

// The base of batch request types other than a list of indices: what a
// loader needs of one is how many samples it asks for.
struct CustomBatchRequest {
  CustomBatchRequest() = default;
  CustomBatchRequest(const CustomBatchRequest&) = default;
  CustomBatchRequest(CustomBatchRequest&&) noexcept = default;
  CustomBatchRequest& operator=(const CustomBatchRequest&) = default;
  CustomBatchRequest& operator=(CustomBatchRequest&&) noexcept = default;
  virtual ~CustomBatchRequest() = default;
  virtual size_t size() const = 0;
};

// A request for the next `size` samples of a stream.
struct BatchSize : CustomBatchRequest {
  BatchSize(size_t size) : size_(size) {}
  size_t size() const noexcept override { return size_; }
  operator size_t() const noexcept { return size_; }
  size_t size_;
};

}  // namespace gradiens::data::samplers
