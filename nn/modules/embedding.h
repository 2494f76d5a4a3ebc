// Embedding: a lookup table of num_embeddings rows of embedding_dim values,
// with PyTorch's padding_idx and max_norm, from_pretrained, and the functional
// form; EmbeddingBag beside it (its functional form is nn/functional/embedding_bag.h).
#pragma once

#include <optional>
#include <string>

#include "nn/cloneable.h"
#include "nn/functional/embedding_bag.h"
#include "nn/module.h"
#include "nn/modules/any_value.h"

namespace gradiens::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  // A row whose lookups get no gradient, initialized to zeros; negative counts from the end.
  EmbeddingOptions& padding_idx(std::optional<int64_t> v) {
    padding_idx_ = v;
    return *this;
  }
  // Looked-up rows whose norm_type-norm exceeds max_norm are scaled down to it,
  // in the weight itself, before each lookup.
  EmbeddingOptions& max_norm(std::optional<double> v) {
    max_norm_ = v;
    return *this;
  }
  EmbeddingOptions& norm_type(double v) {
    norm_type_ = v;
    return *this;
  }
  // Each weight row's gradient divided by how often its index occurs in the input.
  EmbeddingOptions& scale_grad_by_freq(bool v) {
    scale_grad_by_freq_ = v;
    return *this;
  }
  // Sparse gradients are not supported: true is an error at forward.
  EmbeddingOptions& sparse(bool v) {
    sparse_ = v;
    return *this;
  }
  // A weight to use as is (not re-initialized), as libtorch's _weight.
  EmbeddingOptions& _weight(const Tensor& v) {
    weight_ = v;
    return *this;
  }
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
  std::optional<double> max_norm_;
  double norm_type_ = 2.0;
  bool scale_grad_by_freq_ = false;
  bool sparse_ = false;
  Tensor weight_;
};

struct EmbeddingFromPretrainedOptions {
  EmbeddingFromPretrainedOptions& freeze(bool v) {
    freeze_ = v;
    return *this;
  }
  EmbeddingFromPretrainedOptions& padding_idx(std::optional<int64_t> v) {
    padding_idx_ = v;
    return *this;
  }
  EmbeddingFromPretrainedOptions& max_norm(std::optional<double> v) {
    max_norm_ = v;
    return *this;
  }
  EmbeddingFromPretrainedOptions& norm_type(double v) {
    norm_type_ = v;
    return *this;
  }
  // Each weight row's gradient divided by how often its index occurs in the input.
  EmbeddingFromPretrainedOptions& scale_grad_by_freq(bool v) {
    scale_grad_by_freq_ = v;
    return *this;
  }
  // Sparse gradients are not supported: true is an error at forward.
  EmbeddingFromPretrainedOptions& sparse(bool v) {
    sparse_ = v;
    return *this;
  }
  bool freeze_ = true;
  std::optional<int64_t> padding_idx_;
  std::optional<double> max_norm_;
  double norm_type_ = 2.0;
  bool scale_grad_by_freq_ = false;
  bool sparse_ = false;
};

namespace functional {

struct EmbeddingFuncOptions {
  EmbeddingFuncOptions& padding_idx(std::optional<int64_t> v) {
    padding_idx_ = v;
    return *this;
  }
  EmbeddingFuncOptions& max_norm(std::optional<double> v) {
    max_norm_ = v;
    return *this;
  }
  EmbeddingFuncOptions& norm_type(double v) {
    norm_type_ = v;
    return *this;
  }
  // Each weight row's gradient divided by how often its index occurs in the input.
  EmbeddingFuncOptions& scale_grad_by_freq(bool v) {
    scale_grad_by_freq_ = v;
    return *this;
  }
  // Sparse gradients are not supported: true is an error at forward.
  EmbeddingFuncOptions& sparse(bool v) {
    sparse_ = v;
    return *this;
  }
  std::optional<int64_t> padding_idx_;
  std::optional<double> max_norm_;
  double norm_type_ = 2.0;
  bool scale_grad_by_freq_ = false;
  bool sparse_ = false;
};

// The rows of `weight` picked by the integer `input`: input.sizes() + [embedding_dim].
// With max_norm, the picked rows are first renormalized in place (no autograd),
// as PyTorch's F.embedding does.
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options = {});

// Scales each distinct row of `weight` named in `indices` whose norm_type-norm
// exceeds max_norm by max_norm / (norm + 1e-7), in place and unrecorded
// (PyTorch's embedding_renorm_). Returns weight. A cuda weight stays on its
// device (one read of a flag on the host for the range check).
Tensor embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type);

}  // namespace functional

class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);

  // Draws weight from N(0, 1) and zeroes the padding row, as PyTorch.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;

  EmbeddingOptions options;  // padding_idx_ holds the non-negative row once constructed
  Tensor weight;             // [num_embeddings, embedding_dim]
};

class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;

  // An Embedding whose weight shares storage with the 2-D `embeddings`, which
  // are used as they are (the padding row is not zeroed). With freeze the
  // weight does not require grad.
  static Embedding from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options);
  static Embedding from_pretrained(const Tensor& embeddings, bool freeze = true,
                                   std::optional<int64_t> padding_idx = std::nullopt);
};

// ---- EmbeddingBag ----

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  GRADIENS_ARG(int64_t, num_embeddings);
  GRADIENS_ARG(int64_t, embedding_dim);
  GRADIENS_ARG(std::optional<double>, max_norm) = std::nullopt;
  GRADIENS_ARG(double, norm_type) = 2.0;
  GRADIENS_ARG(bool, scale_grad_by_freq) = false;
  GRADIENS_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  GRADIENS_ARG(bool, sparse) = false;
  // A weight to use as is (not re-initialized), as libtorch's _weight.
  GRADIENS_ARG(Tensor, _weight);
  GRADIENS_ARG(bool, include_last_offset) = false;
  GRADIENS_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

struct EmbeddingBagFromPretrainedOptions {
  GRADIENS_ARG(bool, freeze) = true;
  GRADIENS_ARG(std::optional<double>, max_norm) = std::nullopt;
  GRADIENS_ARG(double, norm_type) = 2.0;
  GRADIENS_ARG(bool, scale_grad_by_freq) = false;
  GRADIENS_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  GRADIENS_ARG(bool, sparse) = false;
  GRADIENS_ARG(bool, include_last_offset) = false;
  GRADIENS_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

class EmbeddingBagImpl : public Cloneable<EmbeddingBagImpl> {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& options);

  // Draws weight from N(0, 1) and zeroes the padding row, as PyTorch.
  void reset_parameters();
  // functional::embedding_bag with this module's options.
  Tensor forward(const Tensor& input, const Tensor& offsets = {}, const Tensor& per_sample_weights = {});
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;

  EmbeddingBagOptions options;  // padding_idx_ holds the non-negative row once constructed
  Tensor weight;                // [num_embeddings, embedding_dim]
};

class EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;

  // An EmbeddingBag whose weight shares storage with the 2-D `embeddings`;
  // with freeze the weight does not require grad.
  static EmbeddingBag from_pretrained(const Tensor& embeddings,
                                      const EmbeddingBagFromPretrainedOptions& options = {});
};

}  // namespace gradiens::nn
