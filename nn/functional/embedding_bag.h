// embedding_bag: the rows of a weight picked by bags of indices, reduced per bag
// by sum, mean or max, with PyTorch's offsets, per_sample_weights,
// include_last_offset, padding_idx and max_norm (libtorch's F::embedding_bag).
#pragma once

#include <cstdint>
#include <optional>

#include "engine/tensor.h"
#include "nn/functional/loss.h"
#include "nn/functional/options.h"

namespace gradiens::nn {

// How a bag is reduced: libtorch's torch::kSum, torch::kMean or torch::kMax
// (kSum and kMean are the loss reductions' constants, which convert).
class EmbeddingBagMode {
 public:
  enum Kind : int8_t { Sum, Mean, Max };
  constexpr EmbeddingBagMode(Kind kind) : kind_(kind) {}  // NOLINT: implicit, as libtorch's variant
  EmbeddingBagMode(Reduction reduction);                  // NOLINT: kSum or kMean
  Kind kind() const { return kind_; }
  // PyTorch's name ("sum") and libtorch's ("kSum").
  const char* name() const;
  const char* enum_name() const;
  bool operator==(const EmbeddingBagMode& other) const { return kind_ == other.kind_; }

 private:
  Kind kind_;
};

namespace functional {

struct EmbeddingBagFuncOptions {
  // 1-D input: where each bag starts (int64 or int32); 2-D input: none (each row is a bag).
  GRADIENS_ARG(Tensor, offsets);
  // Picked rows whose norm_type-norm exceeds max_norm are scaled down to it in the weight first.
  GRADIENS_ARG(std::optional<double>, max_norm) = std::nullopt;
  GRADIENS_ARG(double, norm_type) = 2.0;
  // Each weight row's gradient divided by how often its index occurs in input.
  GRADIENS_ARG(bool, scale_grad_by_freq) = false;
  GRADIENS_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  // Sparse gradients are not supported: true is an error.
  GRADIENS_ARG(bool, sparse) = false;
  // One weight per input index (mode kSum only), multiplying its row.
  GRADIENS_ARG(Tensor, per_sample_weights);
  // offsets has one more entry, the end of the last bag.
  GRADIENS_ARG(bool, include_last_offset) = false;
  // Entries equal to this row take no part (nor count for the mean); negative counts from the end.
  GRADIENS_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

namespace detail {
// rows [n, dim], the weight rows picked by the n `indices`: the same values, with each row's gradient divided by
// the number of times its index occurs in `indices` (scale_grad_by_freq).
Tensor scale_grad_by_freq(const Tensor& rows, const Tensor& indices);
}  // namespace detail

// [bags, embedding_dim]: each bag's rows of the 2-D weight, reduced. An empty
// bag gives zeros. Differentiable in weight (a dense gradient) and in
// per_sample_weights.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options = {});

}  // namespace functional
}  // namespace gradiens::nn

namespace gradiens {
// libtorch's torch::kMax for EmbeddingBag's mode.
inline constexpr nn::EmbeddingBagMode kMax{nn::EmbeddingBagMode::Max};
}  // namespace gradiens
