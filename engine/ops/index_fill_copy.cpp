// index_fill and index_copy (and their in-place forms): whole slices along a
// dim set to a value or copied from a source, through the reducing scatter of
// kernels/index_ops.h (engine/ops/index_scatter.h). Checks and messages follow
// PyTorch; the gradients are index ops themselves:
//   index_fill:  self <- grad.index_fill(dim, index, 0), value <- grad at the distinct indices, summed
//   index_copy:  self <- grad.index_fill(dim, index, 0), source <- grad.index_select(dim, index)
#include <fmt/format.h>

#include "engine/autograd/function.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/dim_indexing.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/index_scatter.h"
#include "engine/ops/inplace.h"

namespace gradiens {

namespace index_scatter {

void scatter_along_dim(kernels::ScatterReduce op, const Tensor& out, IntArrayRef shape, IntArrayRef out_strides,
                       int64_t dim_stride, int64_t dim_size, int64_t dim, const Tensor& index,
                       IntArrayRef index_strides, const Tensor& src_in, IntArrayRef src_strides,
                       std::string_view prefix) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  if (numel == 0) return;
  Tensor src = src_in;
  if (out.device().is_cuda()) {
    check_index_range(index, 0, dim_size, dim, prefix);
    // A 0-dim CPU value (a fill) becomes a one-element buffer on the device.
    if (src.device().is_cpu()) src = cuda_seam::scalar_on(out.device(), src.item(), out.dtype());
  }
  auto bad = kernels::index_scatter_reduce(op, out.dtype(), shape, {out.data_ptr(), shape, out_strides},
                                           {src.data_ptr(), shape, src_strides},
                                           {index.data_ptr(), shape, index_strides}, dim_stride, dim_size,
                                           are_deterministic_algorithms_enabled(), cuda_seam::device_of(out));
  if (bad)
    throw Error(fmt::format("{}index {} is out of bounds for dimension {} with size {}", prefix, *bad, dim, dim_size));
}

}  // namespace index_scatter

namespace {

// The iteration of a whole-slice scatter along `dim`: self's sizes with
// index.numel() slices along dim; self walked with stride 0 along dim and the
// 1-D index along dim only.
struct SliceScatter {
  DimVector shape, self_strides, index_strides;
  int64_t dim_stride = 0, dim_size = 0;
};
SliceScatter slice_scatter(const Tensor& self, int64_t dim, const Tensor& index) {
  DimGeometry s = nonempty_layout(self);
  SliceScatter plan;
  plan.shape = s.sizes;
  plan.shape[dim] = index.numel();
  plan.self_strides = s.strides;
  plan.self_strides[dim] = 0;
  plan.index_strides = DimVector(s.sizes.size(), 0);
  plan.index_strides[dim] = index.dim() == 0 ? 0 : index.strides()[0];
  plan.dim_stride = s.strides[dim];
  plan.dim_size = s.sizes[dim];
  return plan;
}

Tensor copy_of(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.options());
  copy_data(out, t);
  return out;
}

// A copy of self with the slices at `index` along dim set to value (a 0-dim
// tensor of self's dtype, on the CPU or self's device); negative indices count
// from the end.
Tensor fill_slices(const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& value) {
  Tensor out = copy_of(self);
  if (index_in.numel() == 0) return out;
  SliceScatter plan = slice_scatter(out, dim, index_in);
  check_index_range(index_in, -plan.dim_size, plan.dim_size, dim);
  Tensor index = where(lt(index_in, 0), index_in + plan.dim_size, index_in);
  plan.index_strides[dim] = index.dim() == 0 ? 0 : index.strides()[0];
  index_scatter::scatter_along_dim(kernels::ScatterReduce::Set, out, plan.shape, plan.self_strides, plan.dim_stride,
                                   plan.dim_size, dim, index, plan.index_strides, value,
                                   DimVector(plan.shape.size(), 0));
  return out;
}

void check_fill_index(const Tensor& self, const Tensor& index) {
  GD_CHECK(index.dtype() == kInt64, "index_fill_(): Expected dtype int64 for index.");
  GD_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  check_same_device(self, index, "index_fill_");
}

struct IndexFill {
  static constexpr std::string_view name = "IndexFillBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
    check_fill_index(self, index);
    ctx.save_for_backward(index);
    ctx.ints = {dim};
    return fill_slices(self, dim, index, scalar_to_tensor(value, self.dtype()));
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    return {g.index_fill(ctx.ints[0], index, 0), Tensor()};
  }
};

struct IndexFillTensor {
  static constexpr std::string_view name = "IndexFillBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
    check_fill_index(self, index);
    GD_CHECK(value.dim() == 0, fmt::format("index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                                           "with {} dimension(s).",
                                           value.dim()));
    // A 0-dim CPU value may fill a cuda tensor, as in PyTorch.
    if (!(value.device().is_cpu() && self.device().is_cuda())) check_same_device(self, value, "index_fill_");
    ctx.save_for_backward(index);
    ctx.ints = {dim};
    NoGradGuard no_grad;
    Tensor v = value.dtype() == self.dtype() ? value : value.to(self.dtype());
    return fill_slices(self, dim, index, v);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    const int64_t dim = ctx.ints[0];
    Tensor g_self, g_value;
    if (ctx.needs_input_grad(0)) g_self = g.index_fill(dim, index, 0);
    if (ctx.needs_input_grad(2)) {
      // Each filled slice once, however often the index names it.
      Tensor flat = index.reshape({-1}).detach();
      Tensor wrapped = where(lt(flat, 0), flat + (g.dim() == 0 ? 1 : g.size(dim)), flat);
      Tensor distinct = std::get<0>(_unique(wrapped, true, false));
      g_value = (g.dim() == 0 ? g.reshape({1}) : g).index_select(g.dim() == 0 ? 0 : dim, distinct).sum();
    }
    return {g_self, Tensor(), g_value};
  }
};

struct IndexCopy {
  static constexpr std::string_view name = "IndexCopyBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
    GD_CHECK(index.dim() < 2, fmt::format("index_copy_(): Index should have dimension 1 or 0 (got {})", index.dim()));
    const int64_t count = index.numel();
    if (source.dim() == 0) {
      GD_CHECK(count == 1,
               fmt::format("index_copy_(): When source is scalar, index should have one element (got {})", count));
    } else {
      GD_CHECK(source.dim() == self.dim() || self.dim() == 0,
               fmt::format("index_copy_(): When source and destination are not scalars, their dimensionality must "
                           "match. Source dimensionality ({}), destination dimensionality ({})",
                           source.dim(), self.dim()));
    }
    GD_CHECK(index.dtype() == kInt64,
             "index_copy_(): Expected a long tensor for index, but got " + c10_type_name(index.dtype()));
    GD_CHECK(self.dtype() == source.dtype(),
             fmt::format("index_copy_(): self and source expected to have the same dtype, but got (self) {} and "
                         "(source) {}",
                         c10_type_name(self.dtype()), c10_type_name(source.dtype())));
    check_same_device(self, index, "index_copy_");
    check_same_device(self, source, "index_copy_");
    DimVector self_slice = self.sizes().dims(), source_slice = source.sizes().dims();
    if (!self_slice.empty()) self_slice.erase(self_slice.begin() + dim);
    if (!source_slice.empty()) source_slice.erase(source_slice.begin() + dim);
    GD_CHECK(self_slice == source_slice,
             fmt::format("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                         "shape: {} at dimension {} and source slice shape: {} at dimension 0.",
                         fmt::join(self_slice, " "), dim, fmt::join(source_slice, " ")));
    GD_CHECK(source.dim() == 0 || count == source.size(dim),
             fmt::format("index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})", count,
                         source.size(dim)));
    ctx.save_for_backward(index);
    ctx.ints = {dim};
    ctx.shape = source.sizes().dims();

    Tensor out = copy_of(self);
    if (count == 0) return out;
    SliceScatter plan = slice_scatter(out, dim, index);
    DimVector source_strides = nonempty_layout(source).strides;
    index_scatter::scatter_along_dim(kernels::ScatterReduce::Set, out, plan.shape, plan.self_strides, plan.dim_stride,
                                     plan.dim_size, dim, index, plan.index_strides, source, source_strides,
                                     "index_copy_(): ");
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    const int64_t dim = ctx.ints[0];
    Tensor g_self, g_source;
    if (ctx.needs_input_grad(0)) g_self = g.index_fill(dim, index, 0);
    if (ctx.needs_input_grad(2)) g_source = g.index_select(dim, index).reshape(ctx.shape);
    return {g_self, Tensor(), g_source};
  }
};

}  // namespace

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, Scalar value) {
  return apply<IndexFill>(x, wrap_dim(dim, x.dim(), "index_fill"), index, value);
}
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value) {
  return apply<IndexFillTensor>(x, wrap_dim(dim, x.dim(), "index_fill"), index, value);
}
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  return apply<IndexCopy>(x, wrap_dim(dim, x.dim(), "index_copy"), index, source);
}

Tensor Tensor::index_fill(int64_t dim, const Tensor& index, Scalar value) const {
  return gradiens::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Tensor& value) const {
  return gradiens::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return gradiens::index_copy(*this, dim, index, source);
}

// ---- in place (Note [In-place ops and autograd]) ----

Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, Scalar value) {
  const bool record = check_inplace(*this, {}, "index_fill_");
  return commit_inplace(*this, gradiens::index_fill(record ? clone() : *this, dim, index, value), record);
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Tensor& value) {
  const bool record = check_inplace(*this, {value}, "index_fill_");
  return commit_inplace(*this, gradiens::index_fill(record ? clone() : *this, dim, index, value), record);
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
  const bool record = check_inplace(*this, {source}, "index_copy_");
  return commit_inplace(*this, gradiens::index_copy(record ? clone() : *this, dim, index, source), record);
}

}  // namespace gradiens
