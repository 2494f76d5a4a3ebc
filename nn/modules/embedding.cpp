// Embedding and functional::embedding over the engine's embedding op, with
// PyTorch's padding_idx rules and max_norm renormalization; EmbeddingBag over
// functional::embedding_bag.
#include "nn/modules/embedding.h"

#include "nn/functional/aten.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "kernels/scalar_type.h"
#include "nn/modules/activation.h"

namespace gradiens::nn {

namespace {

// PyTorch's padding_idx rule: negative counts from the end; none is -1 for the engine.
int64_t wrap_padding_idx(std::optional<int64_t> padding_idx, int64_t num_embeddings) {
  if (!padding_idx) return -1;
  int64_t idx = *padding_idx;
  GD_CHECK(idx < num_embeddings && idx >= -num_embeddings, "Padding_idx must be within num_embeddings");
  return idx < 0 ? idx + num_embeddings : idx;
}

// embedding_renorm_ on a cuda weight with device ops: the distinct rows, their
// norms, and the rows over max_norm scaled and copied back with index_copy_.
Tensor renorm_on_device(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  Tensor ids = indices.reshape({-1}).to(kInt64);
  if (ids.device() != weight.device()) ids = ids.to(weight.device());
  const int64_t num_rows = weight.size(0);
  Tensor rows = std::get<0>(_unique(ids, true, false));
  if (rows.numel() == 0) return weight;
  if (any(logical_or(lt(rows, -num_rows), ge(rows, num_rows))).item<bool>()) {
    // The message of the CPU path: the first bad row in sorted order.
    Tensor host = rows.cpu();
    for (int64_t i = 0; i < host.numel(); ++i) {
      const int64_t row = host.cpu_data_ptr<int64_t>()[i];
      GD_CHECK(row >= -num_rows && row < num_rows,
               fmt::format("select(): index {} out of range for tensor of size {} at dimension 0", row,
                           shape_to_string(weight.sizes())));
    }
  }
  rows = std::get<0>(_unique(where(lt(rows, 0), rows + num_rows, rows), true, false));
  Tensor picked = weight.index_select(0, rows);
  Tensor norms = picked.norm(norm_type, {1}, true);
  Tensor scale = where(gt(norms, max_norm), max_norm / (norms + 1e-7), ones_like(norms));
  Tensor target = weight;  // a handle: the write lands in weight
  target.index_copy_(0, rows, picked * scale);
  return weight;
}

}  // namespace

namespace functional {

Tensor embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  GD_CHECK(weight.dim() == 2, fmt::format("Expected 2-dimensional tensor, but got {}-dimensional tensor for argument "
                                          "#1 'self' (while checking arguments for embedding_renorm_)",
                                          weight.dim()));
  GD_CHECK(indices.dtype() == kInt64 || indices.dtype() == kInt32,
           fmt::format("Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, "
                       "Int; but got torch.{} instead (while checking arguments for embedding_renorm_)",
                       legacy_tensor_type_name(indices.dtype())));
  NoGradGuard no_grad;
  if (weight.device().is_cuda()) return renorm_on_device(weight, indices, max_norm, norm_type);
  Tensor ids = indices.reshape({-1}).to(kInt64).contiguous();
  const int64_t* p = ids.cpu_data_ptr<int64_t>();
  std::vector<int64_t> rows(p, p + ids.numel());
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  const int64_t num_rows = weight.size(0);
  // Every index is checked before any row is touched, so a bad one changes nothing.
  for (int64_t row : rows)
    GD_CHECK(row >= -num_rows && row < num_rows,
             fmt::format("select(): index {} out of range for tensor of size {} at dimension 0", row,
                         shape_to_string(weight.sizes())));
  for (int64_t row : rows) {
    Tensor r = weight.select(0, row);
    double norm = r.norm(norm_type).item<double>();
    if (norm > max_norm) r.mul_(max_norm / (norm + 1e-7));
  }
  return weight;
}

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options) {
  GD_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  const int64_t padding_idx = wrap_padding_idx(options.padding_idx_, weight.size(0));
  if (options.max_norm_) embedding_renorm_(weight, input, *options.max_norm_, options.norm_type_);
  return gradiens::embedding(weight, input, padding_idx, options.scale_grad_by_freq_, options.sparse_);
}

}  // namespace functional

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options_) : Cloneable("Embedding"), options(options_) {
  GD_CHECK(options.num_embeddings_ >= 0 && options.embedding_dim_ >= 0,
           fmt::format("Embedding: num_embeddings and embedding_dim must be non-negative, got {} and {}",
                       options.num_embeddings_, options.embedding_dim_));
  if (options.padding_idx_) options.padding_idx_ = wrap_padding_idx(options.padding_idx_, options.num_embeddings_);
  if (options.weight_.defined()) {
    GD_CHECK(options.weight_.dim() == 2 && options.weight_.size(0) == options.num_embeddings_ &&
                 options.weight_.size(1) == options.embedding_dim_,
             "Shape of _weight does not match num_embeddings and embedding_dim");
    weight = register_parameter("weight", options.weight_);
  } else {
    weight = register_parameter("weight", empty({options.num_embeddings_, options.embedding_dim_}));
    reset_parameters();
  }
}

void EmbeddingImpl::reset_parameters() {
  NoGradGuard no_grad;
  weight.normal_(0, 1);
  if (options.padding_idx_) weight.select(0, *options.padding_idx_).fill_(0);
}

Tensor EmbeddingImpl::forward(const Tensor& input) {
  return functional::embedding(
      input, weight,
      functional::EmbeddingFuncOptions()
          .padding_idx(options.padding_idx_)
          .max_norm(options.max_norm_)
          .norm_type(options.norm_type_)
          .scale_grad_by_freq(options.scale_grad_by_freq_)
          .sparse(options.sparse_));
}

std::string EmbeddingImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}", options.num_embeddings_, options.embedding_dim_);
  if (options.padding_idx_) s += fmt::format(", padding_idx={}", *options.padding_idx_);
  if (options.max_norm_) s += ", max_norm=" + detail::python_float(*options.max_norm_);
  if (options.norm_type_ != 2) s += ", norm_type=" + detail::python_float(options.norm_type_);
  if (options.scale_grad_by_freq_) s += ", scale_grad_by_freq=True";
  if (options.sparse_) s += ", sparse=True";
  return s;
}

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << fmt::format("torch::nn::Embedding(num_embeddings={}, embedding_dim={}", options.num_embeddings_,
                        options.embedding_dim_);
  if (options.padding_idx_) stream << ", padding_idx=" << *options.padding_idx_;
  if (options.max_norm_) stream << ", max_norm=" << *options.max_norm_;
  if (options.norm_type_ != 2) stream << ", norm_type=" << options.norm_type_;
  if (options.scale_grad_by_freq_) stream << ", scale_grad_by_freq=true";
  if (options.sparse_) stream << ", sparse=true";
  stream << ")";
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options) {
  GD_CHECK(embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional");
  Embedding embedding(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                          ._weight(embeddings)
                          .padding_idx(options.padding_idx_)
                          .max_norm(options.max_norm_)
                          .norm_type(options.norm_type_)
                          .scale_grad_by_freq(options.scale_grad_by_freq_)
                          .sparse(options.sparse_));
  embedding->weight.requires_grad_(!options.freeze_);
  return embedding;
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, bool freeze, std::optional<int64_t> padding_idx) {
  return from_pretrained(embeddings, EmbeddingFromPretrainedOptions().freeze(freeze).padding_idx(padding_idx));
}

// ---- EmbeddingBag ----

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& options_) : Cloneable("EmbeddingBag"), options(options_) {
  GD_CHECK(options.num_embeddings_ >= 0 && options.embedding_dim_ >= 0,
           fmt::format("EmbeddingBag: num_embeddings and embedding_dim must be non-negative, got {} and {}",
                       options.num_embeddings_, options.embedding_dim_));
  if (options.padding_idx_) options.padding_idx_ = wrap_padding_idx(options.padding_idx_, options.num_embeddings_);
  if (options._weight_.defined()) {
    GD_CHECK(options._weight_.dim() == 2 && options._weight_.size(0) == options.num_embeddings_ &&
                 options._weight_.size(1) == options.embedding_dim_,
             "Shape of weight does not match num_embeddings and embedding_dim");
    weight = register_parameter("weight", options._weight_);
  } else {
    weight = register_parameter("weight", empty({options.num_embeddings_, options.embedding_dim_}));
    reset_parameters();
  }
}

void EmbeddingBagImpl::reset_parameters() {
  NoGradGuard no_grad;
  weight.normal_(0, 1);
  if (options.padding_idx_) weight.select(0, *options.padding_idx_).fill_(0);
}

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight,
                                   functional::EmbeddingBagFuncOptions()
                                       .offsets(offsets)
                                       .max_norm(options.max_norm_)
                                       .norm_type(options.norm_type_)
                                       .scale_grad_by_freq(options.scale_grad_by_freq_)
                                       .mode(options.mode_)
                                       .sparse(options.sparse_)
                                       .per_sample_weights(per_sample_weights)
                                       .include_last_offset(options.include_last_offset_)
                                       .padding_idx(options.padding_idx_));
}

std::string EmbeddingBagImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}", options.num_embeddings_, options.embedding_dim_);
  if (options.max_norm_) s += ", max_norm=" + detail::python_float(*options.max_norm_);
  if (options.norm_type_ != 2) s += ", norm_type=" + detail::python_float(options.norm_type_);
  if (options.scale_grad_by_freq_) s += ", scale_grad_by_freq=True";
  s += fmt::format(", mode='{}'", options.mode_.name());
  if (options.padding_idx_) s += fmt::format(", padding_idx={}", *options.padding_idx_);
  return s;
}

void EmbeddingBagImpl::pretty_print(std::ostream& stream) const {
  stream << fmt::format("torch::nn::EmbeddingBag(num_embeddings={}, embedding_dim={}", options.num_embeddings_,
                        options.embedding_dim_);
  if (options.max_norm_) stream << ", max_norm=" << *options.max_norm_;
  if (options.norm_type_ != 2) stream << ", norm_type=" << options.norm_type_;
  if (options.scale_grad_by_freq_) stream << ", scale_grad_by_freq=true";
  if (options.sparse_) stream << ", sparse=true";
  if (options.mode_.kind() != EmbeddingBagMode::Mean) stream << ", mode=" << options.mode_.enum_name();
  if (options.include_last_offset_) stream << ", include_last_offset=true";
  if (options.padding_idx_) stream << ", padding_idx=" << *options.padding_idx_;
  stream << ")";
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& options) {
  GD_CHECK(embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional");
  EmbeddingBag bag(EmbeddingBagOptions(embeddings.size(0), embeddings.size(1))
                       ._weight(embeddings)
                       .max_norm(options.max_norm_)
                       .norm_type(options.norm_type_)
                       .scale_grad_by_freq(options.scale_grad_by_freq_)
                       .mode(options.mode_)
                       .sparse(options.sparse_)
                       .include_last_offset(options.include_last_offset_)
                       .padding_idx(options.padding_idx_));
  bag->weight.requires_grad_(!options.freeze_);
  return bag;
}

}  // namespace gradiens::nn
