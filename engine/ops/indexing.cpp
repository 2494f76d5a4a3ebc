// Indexing along a dim: gather and scatter_add (each the other's backward, so
// every derivative order stays differentiable) and masked_fill (a where).
// Shape rules and messages follow PyTorch's scatter/gather checks. Both run
// through kernels/indexing.h, on a cuda device after a range check.
#include <fmt/format.h>

#include <atomic>
#include <limits>
#include <optional>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/dim_indexing.h"
#include "engine/ops/elementwise.h"
#include "kernels/indexing.h"

namespace gradiens {

namespace {


void check_index_dtype(const Tensor& index, std::string_view op) {
  GD_CHECK(index.dtype() == kInt64, fmt::format("{}(): Expected dtype int64 for index", op));
}

// gather: index may be larger than self only along `dim`.
void check_gather_shapes(const Tensor& self, int64_t dim, const Tensor& index) {
  DimGeometry s = nonempty_layout(self), i = nonempty_layout(index);
  GD_CHECK(s.sizes.size() == i.sizes.size(), "Index tensor must have the same number of dimensions as input tensor");
  for (size_t d = 0; d < s.sizes.size(); ++d)
    GD_CHECK(static_cast<int64_t>(d) == dim || i.sizes[d] <= s.sizes[d],
             fmt::format("Size does not match at dimension {} expected index {} to be smaller than self {} apart from "
                         "dimension {}",
                         d, shape_to_string(index.sizes()), shape_to_string(self.sizes()), dim));
}

// scatter_add: index no larger than self (apart from `dim`) nor than src.
void check_scatter_add_shapes(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  GD_CHECK(nonempty_layout(self).sizes.size() == nonempty_layout(index).sizes.size(),
           "Index tensor must have the same number of dimensions as self tensor");
  check_scatter_shapes(self, dim, index, &src);
}


// The error for the first out-of-range index a CPU kernel met, if any.
void throw_if_bad_index(std::optional<int64_t> bad, int64_t dim, int64_t size) {
  if (bad) throw Error(fmt::format("index {} is out of bounds for dimension {} with size {}", *bad, dim, size));
}

// out[...][i][...] = self[...][index[...][i][...]][...] along dim, over index's shape.
Tensor gather_kernel(const Tensor& self, int64_t dim, const Tensor& index) {
  Tensor out = empty(index.sizes(), self.options());
  if (index.numel() == 0) return out;
  DimGeometry s = nonempty_layout(self), i = nonempty_layout(index);
  DimVector out_strides = contiguous_strides(i.sizes);
  // self walked over index's shape with dim pinned at 0; the index picks the offset.
  DimVector self_strides = s.strides;
  self_strides[dim] = 0;
  const int64_t dim_size = s.sizes[dim], dim_stride = s.strides[dim];
  if (self.device().is_cuda()) check_index_range(index, 0, dim_size, dim);
  throw_if_bad_index(kernels::index_gather(self.dtype(), i.sizes, {out.data_ptr(), i.sizes, out_strides},
                                           {self.data_ptr(), i.sizes, self_strides},
                                           {index.data_ptr(), i.sizes, i.strides}, dim_stride, dim_size,
                                           cuda_seam::device_of(out)),
                     dim, dim_size);
  return out;
}

// out = self; out[...][index[...][i][...]][...] += src[...][i][...] along dim.
Tensor scatter_add_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = empty(self.sizes(), self.options());
  out.copy_(self);
  if (index.numel() == 0) return out;
  DimGeometry o = nonempty_layout(out), i = nonempty_layout(index), r = nonempty_layout(src);
  DimVector out_strides = o.strides;
  out_strides[dim] = 0;
  const int64_t dim_size = o.sizes[dim], dim_stride = o.strides[dim];
  if (out.device().is_cuda()) check_index_range(index, 0, dim_size, dim);
  throw_if_bad_index(kernels::index_scatter_add(out.dtype(), i.sizes, {out.data_ptr(), i.sizes, out_strides},
                                                {src.data_ptr(), i.sizes, r.strides},
                                                {index.data_ptr(), i.sizes, i.strides}, dim_stride, dim_size,
                                                are_deterministic_algorithms_enabled(), cuda_seam::device_of(out)),
                     dim, dim_size);
  return out;
}


struct Gather {
  static constexpr std::string_view name = "GatherBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index) {
    check_index_dtype(index, "gather");
    check_same_device(self, index, "gather");
    if (index.numel() != 0) check_gather_shapes(self, dim, index);
    ctx.save_for_backward(index);
    ctx.shape = self.sizes().dims();
    ctx.ints = {dim};
    return gather_kernel(self, dim, index);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    return {scatter_add(zeros(ctx.shape, g.options()), ctx.ints[0], index, g), Tensor()};
  }
};

struct ScatterAdd {
  static constexpr std::string_view name = "ScatterAddBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    check_index_dtype(index, "scatter");
    GD_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
    check_same_device(self, index, "scatter_add");
    check_same_device(self, src, "scatter_add");
    if (index.numel() != 0) check_scatter_add_shapes(self, dim, index, src);
    ctx.save_for_backward(index);
    ctx.shape = src.sizes().dims();
    ctx.ints = {dim};
    return scatter_add_kernel(self, dim, index, src);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    Tensor g_src;
    // src may be larger than index; the elements index does not reach get no gradient
    // (PyTorch 1.13 raises a shape error here instead).
    if (ctx.needs_input_grad(2)) g_src = pad_to(gather(g, ctx.ints[0], index), ctx.shape);
    return {g, Tensor(), g_src};
  }
};

}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return apply<Gather>(x, wrap_dim(dim, x.dim(), "gather"), index);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return apply<ScatterAdd>(x, wrap_dim(dim, x.dim(), "scatter_add"), index, src);
}

// A where with the value in x's dtype, so the result keeps x's dtype (an
// integer tensor filled with 2.5 holds 2) and broadcasts with the mask.
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  GD_CHECK(mask.dtype() == kBool, "masked_fill_ only supports boolean masks, but got mask with dtype " +
                                      c10_type_name(mask.dtype()));
  return where(mask, scalar_to_tensor(value, x.dtype()), x);
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return gradiens::gather(*this, dim, index); }
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return gradiens::scatter_add(*this, dim, index, src);
}
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const { return gradiens::masked_fill(*this, mask, value); }

}  // namespace gradiens
