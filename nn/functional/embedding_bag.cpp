// embedding_bag composed of device ops (so it runs and differentiates on any
// device): each index's bag from the offsets by a cumulative sum, the rows by
// index_select, and the bags reduced by index_add (sum, mean) or
// scatter_reduce "amax" (max). Checks and messages follow PyTorch.
#include "nn/functional/embedding_bag.h"

#include <fmt/format.h>

#include <limits>

#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "kernels/scalar_type.h"
#include "nn/modules/embedding.h"

namespace gradiens::nn {

EmbeddingBagMode::EmbeddingBagMode(Reduction reduction) {
  GD_CHECK(reduction == Reduction::Sum || reduction == Reduction::Mean,
           "EmbeddingBag: mode must be kSum, kMean or kMax");
  kind_ = reduction == Reduction::Sum ? Sum : Mean;
}

const char* EmbeddingBagMode::name() const {
  static constexpr const char* names[] = {"sum", "mean", "max"};
  return names[kind_];
}

const char* EmbeddingBagMode::enum_name() const {
  static constexpr const char* names[] = {"kSum", "kMean", "kMax"};
  return names[kind_];
}

namespace functional {

namespace {

void check_index_dtype(const Tensor& t, int64_t argument, const char* name) {
  GD_CHECK(t.dtype() == kInt64 || t.dtype() == kInt32,
           fmt::format("Expected tensor for argument #{} '{}' to have one of the following scalar types: Long, Int; "
                       "but got torch.{} instead (while checking arguments for embedding_bag)",
                       argument, name, legacy_tensor_type_name(t.dtype())));
}

}  // namespace

namespace detail {

Tensor scale_grad_by_freq(const Tensor& rows, const Tensor& indices) {
  // The forward value is left as it is: rows + (rows - rows.detach()) * (1 / freq - 1) adds an exact zero.
  auto [values, inverse, counts] = _unique2(indices, true, true, true);
  Tensor freq = counts.index_select(0, inverse).to(rows.dtype()).unsqueeze(1);
  return rows + (rows - rows.detach()) * (freq.reciprocal() - 1);
}

}  // namespace detail

Tensor embedding_bag(const Tensor& input_in, const Tensor& weight, const EmbeddingBagFuncOptions& options) {
  GD_CHECK(weight.dim() == 2,
           fmt::format("embedding_bag: weight has to be a 2D Tensor, but got Tensor of dimension {}", weight.dim()));
  Tensor input = input_in, offsets = options.offsets(), per_sample_weights = options.per_sample_weights();
  check_index_dtype(input, 2, "indices");
  const TensorOptions index_options = TensorOptions().dtype(kInt64).device(input.device());
  if (input.dim() == 2) {
    GD_CHECK(!offsets.defined(),
             "If input is 2D, then offsets has to be null, as input is treated is a mini-batch of fixed length "
             "sequences. However, found offsets of type Tensor");
    const int64_t bags = input.size(0), length = input.size(1);
    offsets = length == 0 ? zeros({bags}, index_options) : arange(0, input.numel(), length, index_options);
    input = input.reshape({-1});
    if (per_sample_weights.defined()) per_sample_weights = per_sample_weights.reshape({-1});
  } else if (input.dim() == 1) {
    GD_CHECK(offsets.defined(), "offsets has to be a 1D Tensor but got null");
    GD_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor");
  } else {
    throw Error(fmt::format("input has to be 1D or 2D Tensor, but got Tensor of dimension {}", input.dim()));
  }
  check_index_dtype(offsets, 3, "offsets");
  const int64_t num_rows = weight.size(0);
  int64_t padding_idx = -1;
  if (options.padding_idx()) {
    padding_idx = *options.padding_idx();
    GD_CHECK(padding_idx < num_rows && padding_idx >= -num_rows, "padding_idx must be within num_embeddings");
    if (padding_idx < 0) padding_idx += num_rows;
  }
  GD_CHECK(!options.sparse(), "embedding_bag: sparse gradients are not supported");
  const EmbeddingBagMode mode = options.mode();
  GD_CHECK(!per_sample_weights.defined() || mode.kind() == EmbeddingBagMode::Sum,
           fmt::format("embedding_bag: per_sample_weights was not null. per_sample_weights is only supported for "
                       "mode='kSum' (got mode='{}').Please open a feature request on the Pytorch GitHub.",
                       mode.enum_name()));
  if (per_sample_weights.defined()) {
    GD_CHECK(per_sample_weights.dtype() == weight.dtype(),
             fmt::format("embedding_bag: Expected per_sample_weights to have the same dtype as weight ({}), got {}",
                         c10_type_name(weight.dtype()), c10_type_name(per_sample_weights.dtype())));
    GD_CHECK(per_sample_weights.sizes() == input.sizes(),
             fmt::format("embedding_bag: If per_sample_weights ({}) is not null, then it must have the same shape as "
                         "the input ({})",
                         shape_to_string(per_sample_weights.sizes()), shape_to_string(input.sizes())));
  }
  if (options.max_norm()) embedding_renorm_(weight, input, *options.max_norm(), options.norm_type());

  Tensor indices = input.to(kInt64), starts = offsets.to(kInt64);
  const int64_t n = indices.numel();
  int64_t bags = starts.numel(), end = n;
  if (options.include_last_offset()) {
    GD_CHECK(bags >= 1, "include_last_offset: number of offset should be at least 1");
    --bags;
  }
  if (starts.numel() > 0) {
    // offsets[0] and offsets[-1], in one read.
    Tensor ends = cat({starts.narrow(0, 0, 1), starts.narrow(0, starts.numel() - 1, 1)}).cpu();
    const int64_t first = ends.cpu_data_ptr<int64_t>()[0], last = ends.cpu_data_ptr<int64_t>()[1];
    GD_CHECK(first == 0, fmt::format("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                                     "from position 0. However, got {}",
                                     first));
    GD_CHECK(
        last <= n,
        fmt::format("offsets[-1] can not be greater than input's length ({}), but got offsets[-1] of {}", n, last));
    if (options.include_last_offset()) end = last;
  }
  starts = starts.narrow(0, 0, bags);
  if (bags == 0) end = 0;  // no bag: no index takes part
  const int64_t dim = weight.size(1);
  // Empty bags stay zero; an empty input still gives a result in weight's graph.
  Tensor out = zeros({bags, dim}, weight.options());

  // The bag of each index: how many bags start at or before it, less one.
  Tensor bag_of =
      zeros({n + 1}, index_options).index_add(0, starts, ones({bags}, index_options)).narrow(0, 0, n).cumsum(0) - 1;
  // Entries past the last bag (include_last_offset) and padding entries take no part.
  Tensor keep;
  if (end < n) keep = lt(arange(n, index_options), end);
  if (padding_idx >= 0) keep = keep.defined() ? logical_and(keep, ne(indices, padding_idx)) : ne(indices, padding_idx);
  if (keep.defined()) {
    indices = indices.masked_select(keep);
    bag_of = bag_of.masked_select(keep);
    if (per_sample_weights.defined()) per_sample_weights = per_sample_weights.masked_select(keep);
  }
  Tensor rows = weight.index_select(0, indices);
  if (options.scale_grad_by_freq() && GradMode::is_enabled() && indices.numel() > 0)
    rows = detail::scale_grad_by_freq(rows, indices);
  switch (mode.kind()) {
    case EmbeddingBagMode::Sum:
      if (per_sample_weights.defined()) rows = rows * per_sample_weights.unsqueeze(1);
      return out.index_add(0, bag_of, rows);
    case EmbeddingBagMode::Mean: {
      Tensor count = zeros({bags}, weight.options()).index_add(0, bag_of, ones({bag_of.numel()}, weight.options()));
      return out.index_add(0, bag_of, rows) / count.clamp_min(1).unsqueeze(1);
    }
    case EmbeddingBagMode::Max: {
      // From -inf rather than zeros: scatter_reduce's backward shares a tie
      // with self, and a bag whose maximum is 0 must give its rows the whole
      // gradient, as PyTorch's does. Empty bags are then set to 0.
      Tensor lowest = full({bags, dim}, -std::numeric_limits<double>::infinity(), weight.options());
      Tensor maxima = lowest.scatter_reduce(0, bag_of.unsqueeze(1).expand({bag_of.numel(), dim}), rows, "amax", false);
      Tensor filled = zeros({bags}, index_options).index_add(0, bag_of, ones({bag_of.numel()}, index_options));
      return maxima.masked_fill(eq(filled, 0).unsqueeze(1), 0);
    }
  }
  return out;
}

}  // namespace functional
}  // namespace gradiens::nn
