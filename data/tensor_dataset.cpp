// TensorDataset and the length arithmetic of random_split.
#include "data/tensor_dataset.h"

#include <fmt/format.h>

#include <cmath>

namespace gradiens::data {

TensorDataset::TensorDataset(Tensor data, Tensor target) : data_(std::move(data)), target_(std::move(target)) {
  GD_CHECK(data_.defined() && target_.defined(), "TensorDataset: the data and target tensors must be defined");
  GD_CHECK(data_.dim() > 0 && target_.dim() > 0, "TensorDataset: a 0-dim tensor has no samples to index");
  GD_CHECK(data_.size(0) == target_.size(0), "Size mismatch between tensors");
  size_ = static_cast<size_t>(data_.size(0));
}

Example<> TensorDataset::get(size_t index) {
  GD_CHECK(index < size_, fmt::format("index {} is out of bounds for dimension 0 with size {}", index, size_));
  const auto i = static_cast<int64_t>(index);
  return {data_.select(0, i), target_.select(0, i)};
}

namespace detail {

std::vector<size_t> split_lengths(size_t dataset_size, const std::vector<double>& lengths) {
  double sum = 0;
  for (double l : lengths) sum += l;
  std::vector<size_t> sizes;
  // math.isclose(sum, 1) with its default rel_tol of 1e-9.
  if (std::abs(sum - 1.0) <= 1e-9 * std::max(std::abs(sum), 1.0) && sum <= 1.0) {
    for (size_t i = 0; i < lengths.size(); ++i) {
      GD_CHECK(lengths[i] >= 0 && lengths[i] <= 1, fmt::format("Fraction at index {} is not between 0 and 1", i));
      sizes.push_back(static_cast<size_t>(std::floor(static_cast<double>(dataset_size) * lengths[i])));
    }
    size_t assigned = 0;
    for (size_t s : sizes) assigned += s;
    for (size_t i = 0; assigned + i < dataset_size; ++i) sizes[i % sizes.size()] += 1;
    return sizes;
  }
  // Checked before the integer test, as PyTorch does (its message for [0.5, 0.6]).
  GD_CHECK(sum == static_cast<double>(dataset_size),
           "Sum of input lengths does not equal the length of the input dataset!");
  for (size_t i = 0; i < lengths.size(); ++i) {
    GD_CHECK(lengths[i] >= 0 && std::floor(lengths[i]) == lengths[i],
             fmt::format("random_split: length at index {} is {}; lengths must be non-negative integers, or "
                         "fractions that sum to 1",
                         i, lengths[i]));
    sizes.push_back(static_cast<size_t>(lengths[i]));
  }
  return sizes;
}

std::vector<std::vector<size_t>> split_indices(const std::vector<size_t>& lengths, Generator& generator) {
  size_t total = 0;
  for (size_t l : lengths) total += l;
  const Tensor perm = randperm(static_cast<int64_t>(total), generator);
  const int64_t* p = perm.cpu_data_ptr<int64_t>();
  std::vector<std::vector<size_t>> out;
  size_t offset = 0;
  for (size_t l : lengths) {
    out.emplace_back(p + offset, p + offset + l);
    offset += l;
  }
  return out;
}

}  // namespace detail

}  // namespace gradiens::data
