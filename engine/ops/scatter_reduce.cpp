// scatter_reduce and scatter_reduce_ (reduce "sum", "prod", "mean", "amax",
// "amin", include_self): PyTorch's forward and its backward formulas
// (FunctionsManual's scatter_reduce_backward), written with differentiable
// ops. The forward is one reducing scatter of kernels/index_ops.h (the CPU
// loop is serial, so deterministic; on a cuda device "sum"/"mean" follow
// use_deterministic_algorithms as scatter_add does, the others use atomics).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "engine/autograd/function.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/dim_indexing.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/index_scatter.h"
#include "engine/ops/inplace.h"

namespace gradiens {

namespace {

enum ReduceKind : int64_t { kSum, kProd, kMean, kAmax, kAmin };

ReduceKind reduce_kind(std::string_view reduce) {
  if (reduce == "sum") return kSum;
  if (reduce == "prod") return kProd;
  if (reduce == "mean") return kMean;
  if (reduce == "amax") return kAmax;
  if (reduce == "amin") return kAmin;
  throw Error(fmt::format("reduce argument must be either sum, prod, mean, amax or amin, got {}", reduce));
}

std::string_view reduce_name(int64_t kind) {
  static constexpr std::string_view names[] = {"sum", "prod", "mean", "amax", "amin"};
  return names[kind];
}

// The value a scattered-to element starts from when self is left out.
Scalar identity_of(ReduceKind kind, ScalarType dtype) {
  const bool floating = is_floating_point(dtype);
  switch (kind) {
    case kProd: return Scalar(int64_t{1});
    case kAmax:
      if (floating) return Scalar(-std::numeric_limits<double>::infinity());
      if (dtype == kInt32) return Scalar(int64_t{std::numeric_limits<int32_t>::min()});
      if (dtype == kInt64) return Scalar(std::numeric_limits<int64_t>::min());
      return Scalar(int64_t{0});
    case kAmin:
      if (floating) return Scalar(std::numeric_limits<double>::infinity());
      if (dtype == kInt32) return Scalar(int64_t{std::numeric_limits<int32_t>::max()});
      if (dtype == kInt64) return Scalar(std::numeric_limits<int64_t>::max());
      if (dtype == kBool) return Scalar(int64_t{1});
      return Scalar(int64_t{255});
    default: return Scalar(int64_t{0});
  }
}

// out op= src along dim over index's shape (a 0-dim src is one value for all).
void reduce_into(kernels::ScatterReduce op, const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  DimGeometry o = nonempty_layout(out), i = nonempty_layout(index);
  DimVector out_strides = o.strides;
  out_strides[dim] = 0;
  DimVector src_strides = src.dim() == 0 ? DimVector(i.sizes.size(), 0) : nonempty_layout(src).strides;
  index_scatter::scatter_along_dim(op, out, i.sizes, out_strides, o.strides[dim], o.sizes[dim], dim, index, i.strides,
                                   src, src_strides);
}

kernels::ScatterReduce kernel_op(ReduceKind kind) {
  switch (kind) {
    case kProd: return kernels::ScatterReduce::Prod;
    case kAmax: return kernels::ScatterReduce::Max;
    case kAmin: return kernels::ScatterReduce::Min;
    default: return kernels::ScatterReduce::Sum;
  }
}

Tensor scatter_reduce_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ReduceKind kind,
                             bool include_self) {
  NoGradGuard no_grad;
  Tensor out = empty(self.sizes(), self.options());
  copy_data(out, self);
  if (index.numel() == 0) return out;
  if (!include_self)
    reduce_into(kernels::ScatterReduce::Set, out, dim, index,
                scalar_to_tensor(identity_of(kind, self.dtype()), self.dtype()));
  reduce_into(kernel_op(kind), out, dim, index, src);
  if (kind != kMean) return out;
  // The mean divides by how many values met at each element (self counting
  // as one when included); elements nobody scattered to keep their value.
  Tensor count = include_self ? ones(self.sizes(), self.options()) : zeros(self.sizes(), self.options());
  reduce_into(kernels::ScatterReduce::Sum, count, dim, index, scalar_to_tensor(1, self.dtype()));
  count = count.masked_fill(eq(count, 0), 1);
  if (is_floating_point(self.dtype())) return out / count;
  // Integers round toward minus infinity, as PyTorch's div(rounding_mode="floor").
  return floor(out.to(kFloat64) / count.to(kFloat64)).to(self.dtype());
}

struct ScatterReduceOp {
  static constexpr std::string_view name = "ScatterReduceBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, int64_t kind,
                        bool include_self) {
    GD_CHECK(index.dtype() == kInt64, "scatter_reduce(): Expected dtype int64 for index");
    GD_CHECK(self.dtype() == src.dtype(), "scatter_reduce(): Expected self.dtype to be equal to src.dtype");
    check_same_device(self, index, "scatter_reduce");
    check_same_device(self, src, "scatter_reduce");
    GD_CHECK(nonempty_layout(self).sizes.size() == nonempty_layout(index).sizes.size(),
             "Index tensor must have the same number of dimensions as self tensor");
    check_scatter_shapes(self, dim, index, &src);
    Tensor out = scatter_reduce_kernel(self, dim, index, src, static_cast<ReduceKind>(kind), include_self);
    ctx.ints = {dim, kind, include_self ? 1 : 0};
    ctx.shape = src.sizes().dims();
    // sum and mean need only the index; the others the values too.
    if (kind == kSum || kind == kMean)
      ctx.save_for_backward(index);
    else
      ctx.save_for_backward(index, self, src, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& grad);
};

// src cut to index's shape: the part of src the forward read.
Tensor used_part(const Tensor& src, const Tensor& index) {
  Tensor out = src;
  for (int64_t d = 0; d < src.dim(); ++d)
    if (out.size(d) != index.size(d)) out = out.narrow(d, 0, index.size(d));
  return out;
}

GradList ScatterReduceOp::backward(Ctx& ctx, const Tensor& grad) {
  const int64_t dim = ctx.ints[0];
  const auto kind = static_cast<ReduceKind>(ctx.ints[1]);
  const Tensor index = ctx.saved(0);
  const bool saved_values = kind != kSum && kind != kMean;
  const Tensor self = saved_values ? ctx.saved(1) : Tensor();
  const Tensor result = saved_values ? ctx.saved(3) : Tensor();
  const bool include_self = ctx.ints[2] != 0;
  const std::string_view reduce = reduce_name(kind);
  const Tensor src = saved_values ? used_part(ctx.saved(2), index) : Tensor();
  Tensor grad_self, grad_src;
  switch (kind) {
    case kSum:
      grad_self = grad;
      grad_src = grad.gather(dim, index);
      break;
    case kMean: {
      Tensor count = include_self ? ones_like(grad) : zeros_like(grad);
      count = count.scatter_add(dim, index, ones(index.sizes(), grad.options()));
      count = count.masked_fill(eq(count, 0), 1);
      grad_self = grad / count;
      grad_src = grad.gather(dim, index) / count.gather(dim, index);
      break;
    }
    case kProd: {
      // The exclusive product, computed apart where self or src holds a zero.
      Tensor masked_self = self.masked_fill(eq(self, 0), 1);
      Tensor masked_self_result = masked_self.scatter_reduce(dim, index, src, reduce, include_self);
      grad_self = grad * masked_self_result / masked_self;
      Tensor src_zero = eq(src, 0);
      Tensor src_num_zeros = zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype())).gather(dim, index);
      Tensor src_single_zero = logical_and(src_zero, eq(src_num_zeros, 1));
      // Where src holds the only zero of its target, grad * result / src would
      // be 0 / 0: the product of the others is computed instead.
      Tensor masked_src = src.masked_fill(src_single_zero, 1);
      Tensor masked_src_result = self.scatter_reduce(dim, index, masked_src, reduce, include_self);
      grad_src = where(src_single_zero, (grad * masked_src_result).gather(dim, index),
                       (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1));
      break;
    }
    case kAmax:
    case kAmin: {
      // Ties share the gradient evenly.
      Tensor value = result.gather(dim, index);
      Tensor self_is_result = eq(self, result);
      Tensor src_is_result = eq(src, value);
      Tensor ties = self_is_result.to(self.dtype()).scatter_add(dim, index, src_is_result.to(self.dtype()));
      Tensor grad_distributed = grad / ties;
      grad_self = self_is_result.to(grad.dtype()) * grad_distributed;
      grad_src = src_is_result.to(grad.dtype()) * grad_distributed.gather(dim, index);
      break;
    }
  }
  if (!include_self) grad_self = grad_self.scatter(dim, index, 0);
  if (grad_src.defined()) grad_src = pad_to(grad_src, ctx.shape);
  return {ctx.needs_input_grad(0) ? grad_self : Tensor(), Tensor(), ctx.needs_input_grad(2) ? grad_src : Tensor()};
}

}  // namespace

Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  const ReduceKind kind = reduce_kind(reduce);
  return apply<ScatterReduceOp>(x, wrap_dim(dim, x.dim(), "scatter_reduce"), index, src, static_cast<int64_t>(kind),
                                include_self);
}

Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                              bool include_self) const {
  return gradiens::scatter_reduce(*this, dim, index, src, reduce, include_self);
}

Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                bool include_self) {
  const bool record = check_inplace(*this, {src}, "scatter_reduce_");
  return commit_inplace(
      *this, gradiens::scatter_reduce(record ? clone() : *this, dim, index, src, reduce, include_self), record);
}

}  // namespace gradiens
