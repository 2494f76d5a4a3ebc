// libtorch's datasets::TensorDataset: the rows of one tensor (its first
// dimension) as TensorExamples. (data::TensorDataset is torch.utils.data's,
// with a data and a target tensor.)
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "data/datasets/base.h"
#include "engine/functions.h"

namespace gradiens::data::datasets {

struct TensorDataset : Dataset<TensorDataset, TensorExample> {
  // The tensors stacked into one, each a row.
  explicit TensorDataset(const std::vector<Tensor>& tensors) : TensorDataset(stack(tensors)) {}
  explicit TensorDataset(Tensor tensor) : tensor(std::move(tensor)) {}

  TensorExample get(size_t index) override { return tensor[static_cast<int64_t>(index)]; }
  std::optional<size_t> size() const override { return static_cast<size_t>(tensor.size(0)); }

  Tensor tensor;
};

}  // namespace gradiens::data::datasets
