// TensorDataset, Subset, ConcatDataset and random_split: sample access, sizes,
// PyTorch's rounding of fractions and its error messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "data/tensor_dataset.h"
#include "engine/functions.h"
#include "tests/engine/op_registry.h"

using namespace gradiens;
using namespace gradiens::data;
using gradiens::testing::error_of;
using gradiens::testing::values_of;

namespace {

// Sample i of this dataset is {i, 10 i}, so an example names its own index.
std::shared_ptr<TensorDataset> numbered(int64_t n) {
  const Tensor x = arange(n, kFloat64);
  return std::make_shared<TensorDataset>(x, x * 10.0);
}

double index_of(const Example<>& e) { return e.data.item<double>(); }

}  // namespace

TEST_CASE("TensorDataset indexes both tensors along the first dimension") {
  const Tensor x = arange(12, kFloat64).reshape({4, 3});
  const Tensor y = arange(4, kInt64);
  TensorDataset ds(x, y);
  CHECK(ds.size() == 4);
  const Example<> e = ds.get(2);
  CHECK(values_of(e.data) == std::vector<double>{6, 7, 8});
  CHECK(e.target.item<int64_t>() == 2);
  CHECK(e.target.dim() == 0);

  CHECK(error_of([&] { ds.get(4); }) == "index 4 is out of bounds for dimension 0 with size 4");
  CHECK(error_of([&] { TensorDataset(x, arange(3, kInt64)); }) == "Size mismatch between tensors");
  CHECK(error_of([&] { TensorDataset(scalar_tensor(1.0), scalar_tensor(2.0)); }) ==
        "TensorDataset: a 0-dim tensor has no samples to index");
}

TEST_CASE("Subset and ConcatDataset map indices") {
  auto base = numbered(6);
  Subset<Example<>> subset(base, {4, 0, 4});
  CHECK(subset.size() == 3);
  CHECK(index_of(subset.get(0)) == 4);
  CHECK(index_of(subset.get(1)) == 0);
  CHECK(index_of(subset.get(2)) == 4);
  CHECK(error_of([&] { subset.get(3); }) == "Subset: index 3 is out of range for a subset of size 3");

  // Sizes 6, 0, 2: index 6 is the first sample of the third dataset (the empty one is skipped).
  ConcatDataset<Example<>> concat({base, numbered(0), numbered(2)});
  CHECK(concat.size() == 8);
  CHECK(concat.cumulative_sizes() == std::vector<size_t>{6, 6, 8});
  const std::vector<double> want{0, 1, 2, 3, 4, 5, 0, 1};
  for (size_t i = 0; i < want.size(); ++i) CHECK(index_of(concat.get(i)) == want[i]);
  CHECK(error_of([&] { concat.get(8); }) == "ConcatDataset: index 8 is out of range for a dataset of size 8");
  CHECK(error_of([&] { ConcatDataset<Example<>>({}); }) == "datasets should not be an empty iterable");
}

TEST_CASE("random_split sizes follow PyTorch's rounding of fractions") {
  // Lengths from PyTorch 1.13:
  //   [len(s) for s in random_split(range(n), fractions, generator=torch.Generator().manual_seed(0))]
  struct Row {
    int64_t n;
    std::vector<double> lengths;
    std::vector<size_t> want;
  };
  const std::vector<Row> rows{
      {10, {0.3, 0.3, 0.4}, {3, 3, 4}},
      {11, {0.3, 0.3, 0.4}, {4, 3, 4}},
      {7, {0.5, 0.5}, {4, 3}},
      {5, {0.1, 0.1, 0.8}, {1, 0, 4}},
      {3, {0.25, 0.25, 0.25, 0.25}, {1, 1, 1, 0}},
      {100, {0.8, 0.1, 0.1}, {80, 10, 10}},
      {10, {1.0}, {10}},
      {10, {0, 1}, {0, 10}},  // integers summing to 1 are fractions too
      {10, {3, 7}, {3, 7}},
      {10, {0, 10, 0}, {0, 10, 0}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.n);
    auto parts = random_split(numbered(row.n), row.lengths, Generator(0));
    std::vector<size_t> sizes;
    for (const auto& p : parts) sizes.push_back(p.size());
    CHECK(sizes == row.want);
  }
}

TEST_CASE("random_split draws one randperm and partitions the dataset") {
  const std::vector<int64_t> lengths{3, 5, 2};
  auto parts = random_split(numbered(10), lengths, Generator(7));
  Generator g(7);
  const std::vector<double> perm = values_of(randperm(10, g));
  std::vector<double> joined;
  for (auto& part : parts)
    for (size_t i = 0; i < part.size(); ++i) joined.push_back(index_of(part.get(i)));
  CHECK(joined == perm);
  std::sort(joined.begin(), joined.end());
  std::vector<double> all(10);
  std::iota(all.begin(), all.end(), 0.0);
  CHECK(joined == all);

  // The same generator seed gives the same split; another seed another one.
  auto again = random_split(numbered(10), lengths, Generator(7));
  auto other = random_split(numbered(10), lengths, Generator(8));
  CHECK(again[0].indices() == parts[0].indices());
  CHECK(other[0].indices() != parts[0].indices());
}

TEST_CASE("random_split errors carry PyTorch's messages") {
  struct Row {
    std::vector<double> lengths;
    std::string message;
  };
  const std::vector<Row> rows{
      {{3, 6}, "Sum of input lengths does not equal the length of the input dataset!"},
      {{0.5, 0.6}, "Sum of input lengths does not equal the length of the input dataset!"},
      {{-0.1, 1.1}, "Fraction at index 0 is not between 0 and 1"},
      {{1.2, -0.2}, "Fraction at index 0 is not between 0 and 1"},
      {{2.5, 7.5}, "random_split: length at index 0 is 2.5; lengths must be non-negative integers, or fractions that "
                   "sum to 1"},
      {{-2, 12}, "random_split: length at index 0 is -2; lengths must be non-negative integers, or fractions that sum "
                 "to 1"},
  };
  for (const Row& row : rows) CHECK(error_of([&] { random_split(numbered(10), row.lengths, Generator(0)); }) == row.message);
}
