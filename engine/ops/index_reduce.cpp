// index_reduce and index_reduce_ (reduce "prod", "mean", "amax" or "amin",
// include_self): source's slices along dim reduced into self's slices at
// `index`. It is the scatter_reduce whose index is `index` broadcast over the
// other dims, so its kernels, device support and gradients are scatter_reduce's
// (engine/ops/scatter_reduce.cpp); here are index_reduce's own checks, with
// PyTorch's messages.
#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/inplace.h"

namespace gradiens {

namespace {

// The int64 index of scatter_reduce: `index` along dim, repeated over source's other dims.
Tensor scatter_index(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                     std::string_view reduce) {
  GD_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
           fmt::format("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {}.", reduce));
  GD_CHECK(index.dim() <= 1, fmt::format("index_reduce_(): Index is supposed to be a vector, but got dim: {} with "
                                         "type: {} and size: {}",
                                         index.dim(), c10_type_name(index.dtype()), shape_to_string(index.sizes())));
  GD_CHECK(
      index.dtype() == kInt64 || index.dtype() == kInt32,
      fmt::format("index_reduce_(): Expected dtype int32/int64 for index but got: {}", c10_type_name(index.dtype())));
  GD_CHECK(self.dtype() == source.dtype(),
           fmt::format("index_reduce_(): self ({}) and source ({}) must have the same scalar type",
                       c10_type_name(self.dtype()), c10_type_name(source.dtype())));
  const int64_t self_dims = std::max<int64_t>(self.dim(), 1), source_dims = std::max<int64_t>(source.dim(), 1);
  GD_CHECK(self_dims == source_dims,
           fmt::format("index_reduce_(): self ({}-D) and source ({}-D) must have the same number of dimensions",
                       self.dim(), source.dim()));
  const DimVector self_sizes = self.dim() == 0 ? DimVector{1} : self.sizes().dims();
  const DimVector source_sizes = source.dim() == 0 ? DimVector{1} : source.sizes().dims();
  GD_CHECK(index.numel() == source_sizes[dim],
           fmt::format("index_reduce_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {}",
                       index.numel(), source_sizes[dim], dim));
  for (int64_t d = 0; d < self_dims; ++d)
    GD_CHECK(d == dim || self_sizes[d] == source_sizes[d],
             fmt::format("index_reduce_(): source's size {} at dimension {} does not match self's size {}",
                         source_sizes[d], d, self_sizes[d]));
  Tensor wide = index.to(kInt64).reshape({-1});
  if (wide.numel() > 0) {
    NoGradGuard no_grad;
    GD_CHECK(!any(logical_or(lt(wide, 0), ge(wide, self_sizes[dim]))).item<bool>(), "index out of range in self");
  }
  DimVector along(static_cast<size_t>(self_dims), 1);
  along[static_cast<size_t>(dim)] = wide.numel();
  return wide.reshape(along).expand(source_sizes);
}

}  // namespace

Tensor index_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_reduce");
  Tensor expanded = scatter_index(x, d, index, source, reduce);
  if (x.dim() > 0) return scatter_reduce(x, d, expanded, source.reshape(expanded.sizes()), reduce, include_self);
  // A 0-dim self is one element along dim 0, as in PyTorch.
  return scatter_reduce(x.reshape({1}), 0, expanded, source.reshape({-1}), reduce, include_self).reshape({});
}

Tensor Tensor::index_reduce(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                            bool include_self) const {
  return gradiens::index_reduce(*this, dim, index, source, reduce, include_self);
}

Tensor& Tensor::index_reduce_(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                              bool include_self) {
  const bool record = check_inplace(*this, {source}, "index_reduce_");
  return commit_inplace(
      *this, gradiens::index_reduce(record ? clone() : *this, dim, index, source, reduce, include_self), record);
}

}  // namespace gradiens
