// libtorch's dataset interfaces (torch::data::datasets): BatchDataset (a batch
// per request), Dataset (one example per index, batched by default),
// StreamDataset (a batch of the next n examples), StatefulDataset (a source
// that runs dry and is reset each epoch), MapDataset (a dataset with a
// transform applied to its batches, made by .map()) and SharedBatchDataset (a
// dataset that the DataLoader's workers share instead of copying).
//
// These are CRTP classes: `struct Images : datasets::Dataset<Images> {...}`.
// They live beside gradiens' own data::Dataset<Example> (torch.utils.data's
// shape), which the other DataLoader takes.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "data/array_ref.h"
#include "data/dataset.h"
#include "data/serialize.h"

namespace gradiens::data::datasets {

template <class SourceDataset, class AppliedTransform>
class MapDataset;

namespace detail {
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// T, or std::optional<T> when `wrap`.
template <bool wrap, class T>
using optional_if_t = std::conditional_t<wrap, std::optional<T>, T>;
}  // namespace detail

// A dataset that answers batch requests: get_batch(request) -> Batch. A
// dataset whose Batch is a std::optional is stateful: it returns std::nullopt
// when it has no more data this epoch.
template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  static constexpr bool is_stateful = detail::is_optional<BatchType>::value;

  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  // The number of examples, when known.
  virtual std::optional<size_t> size() const = 0;

  // This dataset with `transform` applied to each batch it returns; an lvalue
  // is copied into the result, an rvalue moved.
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return MapDataset<Self, TransformType>(static_cast<Self&>(*this), std::move(transform));
  }
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return MapDataset<Self, TransformType>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset of single examples: get(index) -> SingleExample; a batch is the
// examples at the requested indices, in order.
template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  virtual ExampleType get(size_t index) = 0;

  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (const size_t index : indices) batch.push_back(get(index));
    return batch;
  }
};

// A stream: a request is a number of examples, get_batch(n) returns the next n.
template <class Self, class Batch = std::vector<Example<>>>
using StreamDataset = BatchDataset<Self, Batch, /*BatchRequest=*/size_t>;

// A dataset whose get_batch returns std::nullopt once it has run dry; reset()
// starts it again (the DataLoader calls it at each begin()), and save/load
// write and read its position.
template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = size_t>
class StatefulDataset : public BatchDataset<Self, std::optional<Batch>, BatchRequest> {
 public:
  virtual void reset() = 0;
  virtual void save(serialize::OutputArchive& archive) const = 0;
  virtual void load(serialize::InputArchive& archive) = 0;
};

template <class Self, class Batch, class BatchRequest>
serialize::OutputArchive& operator<<(serialize::OutputArchive& archive,
                                     const StatefulDataset<Self, Batch, BatchRequest>& dataset) {
  dataset.save(archive);
  return archive;
}
template <class Self, class Batch, class BatchRequest>
serialize::InputArchive& operator>>(serialize::InputArchive& archive,
                                    StatefulDataset<Self, Batch, BatchRequest>& dataset) {
  dataset.load(archive);
  return archive;
}

// `dataset` with `transform` (a transforms::BatchTransform) applied to every
// batch: get_batch(request) = transform.apply_batch(dataset.get_batch(request)).
// Over a stateful dataset the result is stateful too (std::nullopt passes
// through untransformed).
template <class SourceDataset, class AppliedTransform>
class MapDataset
    : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                          detail::optional_if_t<SourceDataset::is_stateful, typename AppliedTransform::OutputBatchType>,
                          typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType =
      detail::optional_if_t<SourceDataset::is_stateful, typename AppliedTransform::OutputBatchType>;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType request) override {
    if constexpr (SourceDataset::is_stateful) {
      if (auto batch = dataset_.get_batch(std::move(request))) return transform_.apply_batch(std::move(*batch));
      return std::nullopt;
    } else {
      return transform_.apply_batch(dataset_.get_batch(std::move(request)));
    }
  }

  std::optional<size_t> size() const override { return dataset_.size(); }

  // Resets the underlying stateful dataset.
  void reset() { dataset_.reset(); }

  const SourceDataset& dataset() const noexcept { return dataset_; }
  SourceDataset& dataset() noexcept { return dataset_; }
  const AppliedTransform& transform() const noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

// A free-function spelling of dataset.map(transform).
template <class D, class T>
MapDataset<D, T> map(D dataset, T transform) {
  return MapDataset<D, T>(std::move(dataset), std::move(transform));
}

// A dataset held through a shared_ptr: copies share it, so a DataLoader's
// workers all read the same one (a stateful dataset must be shared; an
// uncopyable one can be). operator-> and * reach the dataset itself.
template <class UnderlyingDataset>
class SharedBatchDataset
    : public BatchDataset<SharedBatchDataset<UnderlyingDataset>, typename UnderlyingDataset::BatchType,
                          typename UnderlyingDataset::BatchRequestType> {
 public:
  using BatchType = typename UnderlyingDataset::BatchType;
  using BatchRequestType = typename UnderlyingDataset::BatchRequestType;

  /* implicit */ SharedBatchDataset(std::shared_ptr<UnderlyingDataset> shared_dataset)
      : dataset_(std::move(shared_dataset)) {}

  BatchType get_batch(BatchRequestType request) override { return dataset_->get_batch(std::move(request)); }
  std::optional<size_t> size() const override { return dataset_->size(); }

  UnderlyingDataset& operator*() { return *dataset_; }
  const UnderlyingDataset& operator*() const { return *dataset_; }
  UnderlyingDataset* operator->() { return dataset_.get(); }
  const UnderlyingDataset* operator->() const { return dataset_.get(); }

  // Resets the underlying stateful dataset.
  void reset() { dataset_->reset(); }

 private:
  std::shared_ptr<UnderlyingDataset> dataset_;
};

// A SharedBatchDataset of a new UnderlyingDataset(args...).
template <class UnderlyingDataset, class... Args>
SharedBatchDataset<UnderlyingDataset> make_shared_dataset(Args&&... args) {
  return std::make_shared<UnderlyingDataset>(std::forward<Args>(args)...);
}

}  // namespace gradiens::data::datasets

namespace gradiens::data::detail {
// A dataset of libtorch's shape (the classes above, or any with their
// members): get_batch(request), size() as an optional, is_stateful.
template <class D>
concept LibtorchDataset = requires(D& d) {
  typename D::BatchType;
  typename D::BatchRequestType;
  { D::is_stateful } -> std::convertible_to<bool>;
  { d.size() } -> std::convertible_to<std::optional<size_t>>;
};
}  // namespace gradiens::data::detail
