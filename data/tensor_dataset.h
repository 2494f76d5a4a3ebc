// In-memory and composed map-style datasets: TensorDataset, Subset,
// ConcatDataset, and random_split (torch.utils.data.dataset).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "engine/generator.h"
#include "kernels/error.h"

namespace gradiens::data {

// Sample i is {data[i], target[i]} (views along the first dimension); both
// tensors must have the same first size.
class TensorDataset : public Dataset<Example<>> {
 public:
  TensorDataset(Tensor data, Tensor target);
  Example<> get(size_t index) override;
  size_t size() const override { return size_; }
  const Tensor& data() const { return data_; }
  const Tensor& target() const { return target_; }

 private:
  Tensor data_, target_;
  size_t size_;
};

// The samples of `dataset` at `indices`, in that order.
template <class ExampleT>
class Subset : public Dataset<ExampleT> {
 public:
  Subset(std::shared_ptr<Dataset<ExampleT>> dataset, std::vector<size_t> indices)
      : dataset_(std::move(dataset)), indices_(std::move(indices)) {
    GD_CHECK(dataset_ != nullptr, "Subset: the dataset is null");
  }
  ExampleT get(size_t index) override {
    GD_CHECK(index < indices_.size(), "Subset: index " + std::to_string(index) +
                                          " is out of range for a subset of size " + std::to_string(indices_.size()));
    return dataset_->get(indices_[index]);
  }
  size_t size() const override { return indices_.size(); }
  const std::shared_ptr<Dataset<ExampleT>>& dataset() const { return dataset_; }
  const std::vector<size_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<Dataset<ExampleT>> dataset_;
  std::vector<size_t> indices_;
};

// The datasets one after another: index i falls in the first dataset whose
// cumulative size exceeds i.
template <class ExampleT>
class ConcatDataset : public Dataset<ExampleT> {
 public:
  explicit ConcatDataset(std::vector<std::shared_ptr<Dataset<ExampleT>>> datasets) : datasets_(std::move(datasets)) {
    GD_CHECK(!datasets_.empty(), "datasets should not be an empty iterable");
    size_t total = 0;
    for (const auto& d : datasets_) {
      GD_CHECK(d != nullptr, "ConcatDataset: a dataset is null");
      total += d->size();
      cumulative_sizes_.push_back(total);
    }
  }
  ExampleT get(size_t index) override {
    GD_CHECK(index < size(), "ConcatDataset: index " + std::to_string(index) +
                                 " is out of range for a dataset of size " + std::to_string(size()));
    const auto which = static_cast<size_t>(
        std::upper_bound(cumulative_sizes_.begin(), cumulative_sizes_.end(), index) - cumulative_sizes_.begin());
    return datasets_[which]->get(which == 0 ? index : index - cumulative_sizes_[which - 1]);
  }
  size_t size() const override { return cumulative_sizes_.back(); }
  const std::vector<size_t>& cumulative_sizes() const { return cumulative_sizes_; }

 private:
  std::vector<std::shared_ptr<Dataset<ExampleT>>> datasets_;
  std::vector<size_t> cumulative_sizes_;
};

namespace detail {
// PyTorch's random_split lengths: when they sum to 1 (math.isclose) and not
// above, fractions: floor(frac * n) each, then the remainder handed out one by
// one round-robin from the first split; otherwise integer lengths summing to n.
std::vector<size_t> split_lengths(size_t dataset_size, const std::vector<double>& lengths);
// The subsets' index lists: consecutive runs of randperm(n, generator).
std::vector<std::vector<size_t>> split_indices(const std::vector<size_t>& lengths, Generator& generator);
}  // namespace detail

// Splits `dataset` into non-overlapping Subsets of the given lengths (or
// fractions of its size), drawing one randperm of its size from `generator`:
//   auto parts = random_split(dataset, {0.8, 0.2}, Generator(42));
template <class D>
  requires std::derived_from<D, Dataset<typename D::ExampleType>>
std::vector<Subset<typename D::ExampleType>> random_split(std::shared_ptr<D> dataset,
                                                          const std::vector<double>& lengths,
                                                          Generator generator = default_generator()) {
  using ExampleT = typename D::ExampleType;
  GD_CHECK(dataset != nullptr, "random_split: the dataset is null");
  const std::vector<size_t> sizes = detail::split_lengths(dataset->size(), lengths);
  std::vector<Subset<ExampleT>> out;
  for (auto& indices : detail::split_indices(sizes, generator)) out.emplace_back(dataset, std::move(indices));
  return out;
}

// Integer lengths held in a vector of any integer type.
template <class D, std::integral I>
  requires std::derived_from<D, Dataset<typename D::ExampleType>>
std::vector<Subset<typename D::ExampleType>> random_split(std::shared_ptr<D> dataset, const std::vector<I>& lengths,
                                                          Generator generator = default_generator()) {
  return random_split(std::move(dataset), std::vector<double>(lengths.begin(), lengths.end()), generator);
}

}  // namespace gradiens::data
