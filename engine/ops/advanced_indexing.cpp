// Advanced indexing: index({...}) with integer tensors and boolean masks,
// index_put_, masked_select/masked_fill_, scatter, index_select/index_add, and
// nonzero/where(condition). Semantics and messages follow PyTorch (NumPy's rules).
//
// Note [Advanced indexing layout]
// After the basic part of an index list is applied as views (apply_basic_indexing
// in shape.cpp), each indexed dim of the view has an int64 index tensor (a mask
// becomes its nonzero() columns), all broadcast to one shape B. The result has
// the view's other dims plus B: in place of the indexed dims when those are
// adjacent, else first (x[i, :, j] puts B in front). Every index op here walks
// the result shape with three operands: the view's data with stride 0 on B's
// dims, the element offsets sum_k index_k * stride_k (stride 0 off B's dims), and
// the output or values. Backward formulas are index ops themselves, so every
// derivative order stays differentiable:
//   index      <- index_put_(accumulate) into zeros      index_select <-> index_add
//   scatter    <- scatter(0) for self, gather for src   masked_select = index with a mask
// The loops are kernels/indexing.h's. On a cuda device the offsets are
// computed with device ops and the indices are range-checked before the launch
// (check_index_range), giving the CPU's messages.
#include <fmt/format.h>

#include <limits>
#include <optional>
#include <string>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "engine/ops/advanced_indexing.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/dim_indexing.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "engine/warning.h"
#include "kernels/indexing.h"

namespace gradiens {

namespace {

using indexing::TensorIndex;

// The error for the first out-of-range index a CPU kernel met, if any.
void throw_if_bad_index(std::optional<int64_t> bad, int64_t dim, int64_t size) {
  if (bad) throw Error(fmt::format("index {} is out of bounds for dimension {} with size {}", *bad, dim, size));
}

Tensor copy_of(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.options());
  copy_data(out, t);
  return out;
}


// ---- index lists kept for backward ----

// A node's Ctx has no slot for an index list, so it is flattened into ctx.ints
// (a tag, then its numbers) and the saved tensors (version-checked, as PyTorch
// checks its saved indices).
enum IndexTag : int64_t { kTagInt, kTagBool, kTagSlice, kTagNone, kTagEllipsis, kTagTensor };

void save_indices(Ctx& ctx, const std::vector<TensorIndex>& indices) {
  ctx.ints.clear();
  for (const auto& idx : indices) {
    const auto& v = idx.value();
    if (auto* i = std::get_if<int64_t>(&v)) {
      ctx.ints.push_back(kTagInt);
      ctx.ints.push_back(*i);
    } else if (auto* b = std::get_if<bool>(&v)) {
      ctx.ints.push_back(kTagBool);
      ctx.ints.push_back(*b);
    } else if (auto* s = std::get_if<indexing::Slice>(&v)) {
      ctx.ints.push_back(kTagSlice);
      ctx.ints.push_back(s->start());
      ctx.ints.push_back(s->stop());
      ctx.ints.push_back(s->step());
    } else if (std::holds_alternative<indexing::NoneType>(v)) {
      ctx.ints.push_back(kTagNone);
    } else if (std::holds_alternative<indexing::EllipsisType>(v)) {
      ctx.ints.push_back(kTagEllipsis);
    } else {
      ctx.ints.push_back(kTagTensor);
      ctx.save_for_backward(Tensor(std::get<std::shared_ptr<TensorImpl>>(v)));
    }
  }
}

std::vector<TensorIndex> saved_indices(const Ctx& ctx) {
  std::vector<TensorIndex> out;
  size_t tensor = 0;
  for (size_t i = 0; i < ctx.ints.size();) {
    switch (ctx.ints[i++]) {
      case kTagInt: out.emplace_back(ctx.ints[i++]); break;
      case kTagBool: out.emplace_back(ctx.ints[i++] != 0); break;
      case kTagSlice:
        out.emplace_back(indexing::Slice(ctx.ints[i], ctx.ints[i + 1], ctx.ints[i + 2]));
        i += 3;
        break;
      case kTagNone: out.emplace_back(indexing::None); break;
      case kTagEllipsis: out.emplace_back(indexing::Ellipsis); break;
      default: out.emplace_back(ctx.saved(tensor++)); break;
    }
  }
  return out;
}

// ---- the plan of Note [Advanced indexing layout] ----

struct IndexPlan {
  Tensor view;              // self with the basic indices applied
  DimVector result_shape;
  DimVector view_strides;   // the view's strides over result_shape, 0 on B's dims
  Tensor offsets;           // int64 of shape B: element offsets into the view
  DimVector offset_strides; // over result_shape, 0 off B's dims
};

// Broadcast shape of the index tensors, or PyTorch's error listing them all.
DimVector broadcast_indices(const std::vector<Tensor>& per_dim) {
  DimVector shape;
  bool ok = true;
  for (const Tensor& t : per_dim) {
    if (!t.defined()) continue;
    IntArrayRef s = t.sizes();
    DimVector merged(std::max(shape.size(), s.size()), 1);
    for (size_t i = 0; i < merged.size(); ++i) {
      int64_t a = i < merged.size() - shape.size() ? 1 : shape[i - (merged.size() - shape.size())];
      int64_t b = i < merged.size() - s.size() ? 1 : s[i - (merged.size() - s.size())];
      if (a != b && a != 1 && b != 1) ok = false;
      merged[i] = a == 1 ? b : a;
    }
    shape = merged;
  }
  if (!ok) {
    std::string shapes;
    for (const Tensor& t : per_dim)
      if (t.defined()) shapes += (shapes.empty() ? "" : ", ") + shape_to_string(t.sizes());
    throw Error("shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
  }
  return shape;
}

IndexPlan plan_index(const Tensor& self, const std::vector<TensorIndex>& indices) {
  NoGradGuard no_grad;
  BasicIndexing basic = apply_basic_indexing(self, indices);
  IndexPlan plan;
  plan.view = basic.view;
  const Tensor& view = plan.view;
  const int64_t ndim = view.dim();
  std::vector<Tensor> per_dim(static_cast<size_t>(ndim));
  for (auto& [d, t] : basic.tensors) {
    // As PyTorch does, CPU index tensors may index a cuda tensor: they are moved there.
    if (view.device().is_cuda() && t.device().is_cpu()) t = t.to(view.device());
    check_same_device(view, t, "index");
    if (t.dtype() == kBool || t.dtype() == kUInt8) {
      // A mask is its nonzero() positions, one index tensor per dim it covers.
      Tensor mask = t.dtype() == kBool ? t : t.ne(0);
      for (int64_t j = 0; j < mask.dim(); ++j)
        GD_CHECK(mask.sizes()[j] == view.sizes()[d + j],
                 fmt::format("The shape of the mask {} at index {} does not match the shape of the indexed tensor {} "
                             "at index {}",
                             shape_to_string(mask.sizes()), j, shape_to_string(view.sizes()), d + j));
      Tensor nz = nonzero(mask);
      for (int64_t j = 0; j < mask.dim(); ++j) per_dim[d + j] = nz.select(1, j);
    } else {
      per_dim[d] = t.dtype() == kInt64 ? t : t.to(kInt64);
    }
  }
  DimVector b = broadcast_indices(per_dim);
  DimVector b_strides = contiguous_strides(b);

  int64_t first = -1, last = -1, count = 0;
  for (int64_t d = 0; d < ndim; ++d)
    if (per_dim[d].defined()) {
      if (first < 0) first = d;
      last = d;
      ++count;
    }
  const bool adjacent = count > 0 && last - first + 1 == count;
  auto push_b = [&] {
    for (size_t i = 0; i < b.size(); ++i) {
      plan.result_shape.push_back(b[i]);
      plan.view_strides.push_back(0);
      plan.offset_strides.push_back(b_strides[i]);
    }
  };
  auto push_view_dim = [&](int64_t d) {
    plan.result_shape.push_back(view.sizes()[d]);
    plan.view_strides.push_back(view.strides()[d]);
    plan.offset_strides.push_back(0);
  };
  if (!adjacent) push_b();
  for (int64_t d = 0; d < ndim; ++d) {
    if (!per_dim[d].defined()) push_view_dim(d);
    else if (adjacent && d == first) push_b();
  }

  plan.offsets = zeros(b, TensorOptions().dtype(kInt64).device(view.device()));
  int64_t indexer = 0;
  if (view.device().is_cuda()) {
    // offsets = sum over the indexed dims of (k < 0 ? k + size : k) * stride, in device ops.
    for (int64_t d = 0; d < ndim; ++d) {
      const Tensor& idx = per_dim[d];
      if (!idx.defined()) continue;
      const int64_t size = view.sizes()[d], stride = view.strides()[d];
      check_index_range(idx, -size, size, indexer++);
      plan.offsets = plan.offsets + where(lt(idx, 0), idx + size, idx) * stride;
    }
    plan.offsets = plan.offsets.contiguous();
    return plan;
  }
  for (int64_t d = 0; d < ndim; ++d) {
    const Tensor& idx = per_dim[d];
    if (!idx.defined()) continue;
    const int64_t size = view.sizes()[d], stride = view.strides()[d];
    DimVector idx_strides = broadcast_strides(idx, b);
    std::optional<int64_t> bad = kernels::add_index_offsets(b, {plan.offsets.data_ptr(), b, b_strides},
                                                            {idx.data_ptr(), b, idx_strides}, size, stride,
                                                            cuda_seam::device_of(view));
    // PyTorch numbers the dimension by the index tensor's position among the
    // index tensors (x[:, i] with i out of range names "dimension 0"), and
    // names neither index nor dimension for a dimension of size 0.
    if (bad && size == 0) throw Error("index is out of bounds for dimension with size 0");
    throw_if_bad_index(bad, indexer++, size);
  }
  return plan;
}

// out = view[indices], laid out contiguously over the plan's result shape.
Tensor index_kernel(const IndexPlan& plan) {
  Tensor out = empty(plan.result_shape, plan.view.options());
  if (out.numel() == 0) return out;
  DimVector out_strides = contiguous_strides(plan.result_shape);
  kernels::gather_at_offsets(out.dtype(), plan.result_shape, {out.data_ptr(), plan.result_shape, out_strides},
                             {plan.view.data_ptr(), plan.result_shape, plan.view_strides},
                             {plan.offsets.data_ptr(), plan.result_shape, plan.offset_strides},
                             cuda_seam::device_of(out));
  return out;
}

void check_put_values(const Tensor& target, const Tensor& values) {
  GD_CHECK(values.dtype() == target.dtype(),
           fmt::format("Index put requires the source and destination dtypes match, got {} for the destination and {} "
                       "for the source.",
                       c10_type_name(target.dtype()), c10_type_name(values.dtype())));
  // A 0-dim CPU value (a scalar) may be put into a cuda tensor.
  if (target.device().is_cuda() && values.device().is_cpu() && values.dim() == 0) return;
  check_same_device(target, values, "index_put_");
}

// target[indices] = values (or += with accumulate), written into target's storage.
// Serial: duplicate indices name the same element (the last write wins, or they sum).
void index_put_kernel(const Tensor& target, const std::vector<TensorIndex>& indices, const Tensor& values_in,
                      bool accumulate) {
  IndexPlan plan = plan_index(target, indices);
  IntArrayRef r = plan.result_shape;
  bool fits = values_in.dim() <= static_cast<int64_t>(r.size());
  for (int64_t i = 1; fits && i <= values_in.dim(); ++i) {
    int64_t v = values_in.sizes()[values_in.dim() - i];
    fits = v == 1 || v == r[r.size() - i];
  }
  GD_CHECK(fits, fmt::format("shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
                             shape_to_string(values_in.sizes()), shape_to_string(r)));
  // Values read from the memory being written would see earlier writes.
  Tensor values = values_in.storage() == target.storage() ? copy_of(values_in) : values_in;
  if (target.device().is_cuda() && values.device().is_cpu())
    values = values.to(target.device());  // a 0-dim scalar (check_put_values)
  DimVector value_strides = broadcast_strides(values, r);
  kernels::put_at_offsets(target.dtype(), r, {plan.view.data_ptr(), r, plan.view_strides},
                          {values.data_ptr(), r, value_strides}, {plan.offsets.data_ptr(), r, plan.offset_strides},
                          accumulate, are_deterministic_algorithms_enabled(), cuda_seam::device_of(target));
}

// ---- the ops ----

// self.index(indices) with tensor indices: gather through the plan.
struct Index {
  static constexpr std::string_view name = "IndexBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, const std::vector<TensorIndex>& indices) {
    Tensor out = index_kernel(plan_index(self, indices));
    ctx.shape = self.sizes().dims();
    save_indices(ctx, indices);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g);
};

// A copy of self with self[indices] = values (or += values with accumulate).
struct IndexPut {
  static constexpr std::string_view name = "IndexPutBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& values,
                        bool accumulate) {
    check_put_values(self, values);
    Tensor out = copy_of(self);
    index_put_kernel(out, indices, values, accumulate);
    ctx.scalar = Scalar(accumulate);
    save_indices(ctx, indices);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    std::vector<TensorIndex> indices = saved_indices(ctx);
    Tensor g_self, g_values;
    if (ctx.needs_input_grad(0))
      g_self = ctx.scalar.to<bool>() ? g : apply<IndexPut>(g, indices, scalar_to_tensor(0, g.dtype()), false);
    // At the indexing result's shape; the engine sums it back to a broadcast values' shape.
    if (ctx.needs_input_grad(1)) g_values = apply<Index>(g, indices);
    return {g_self, g_values};
  }
};

GradList Index::backward(Ctx& ctx, const Tensor& g) {
  return {apply<IndexPut>(zeros(ctx.shape, g.options()), saved_indices(ctx), g, true)};
}

// ---- scatter ----

void check_scatter_index(const Tensor& self, const Tensor& index) {
  GD_CHECK(index.dtype() == kInt64, "scatter(): Expected dtype int64 for index");
  check_same_device(self, index, "scatter");
  GD_CHECK(nonempty_layout(self).sizes.size() == nonempty_layout(index).sizes.size(),
           "Index tensor must have the same number of dimensions as self tensor");
}


// out = self; out[...][index[...][i][...]][...] = src[...][i][...] along dim, over
// index's shape (src a 0-dim tensor for the value form). Serial: with repeated
// indices the last write wins, deterministically.
Tensor scatter_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = copy_of(self);
  if (index.numel() == 0) return out;
  DimGeometry o = nonempty_layout(out), i = nonempty_layout(index);
  DimVector out_strides = o.strides;
  out_strides[dim] = 0;
  DimVector src_strides = src.dim() == 0 ? DimVector(i.sizes.size(), 0) : nonempty_layout(src).strides;
  const int64_t dim_size = o.sizes[dim], dim_stride = o.strides[dim];
  if (out.device().is_cuda()) check_index_range(index, 0, dim_size, dim);
  // The value form's src is a 0-dim CPU tensor.
  Tensor source = out.device().is_cuda() && !src.device().is_cuda() ? src.to(out.device()) : src;
  throw_if_bad_index(kernels::index_scatter(out.dtype(), i.sizes, {out.data_ptr(), i.sizes, out_strides},
                                            {source.data_ptr(), i.sizes, src_strides},
                                            {index.data_ptr(), i.sizes, i.strides}, dim_stride, dim_size,
                                            are_deterministic_algorithms_enabled(), cuda_seam::device_of(out)),
                     dim, dim_size);
  return out;
}

struct Scatter {
  static constexpr std::string_view name = "ScatterBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    check_scatter_index(self, index);
    GD_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
    check_same_device(self, src, "scatter");
    check_scatter_shapes(self, dim, index, &src);
    ctx.save_for_backward(index);
    ctx.shape = src.sizes().dims();
    ctx.ints = {dim};
    return scatter_kernel(self, dim, index, src);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    const int64_t dim = ctx.ints[0];
    Tensor g_self, g_src;
    if (ctx.needs_input_grad(0)) g_self = g.scatter(dim, index, 0);
    // src may be larger than index; the elements index does not reach get zero.
    if (ctx.needs_input_grad(2)) g_src = pad_to(g.gather(dim, index), ctx.shape);
    return {g_self, Tensor(), g_src};
  }
};

struct ScatterValue {
  static constexpr std::string_view name = "ScatterBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
    check_scatter_index(self, index);
    check_scatter_shapes(self, dim, index, nullptr);
    ctx.save_for_backward(index);
    ctx.ints = {dim};
    return scatter_kernel(self, dim, index, scalar_to_tensor(value, self.dtype()));
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    return {g.scatter(ctx.ints[0], index, 0), Tensor()};
  }
};

// ---- index_select and index_add: each the other's backward ----

// The index as int64 and its strides over `rank` dims: its own along `dim`, 0 elsewhere.
struct DimIndex {
  Tensor index;
  DimVector strides;
};
DimIndex dim_index(const Tensor& index, int64_t dim, size_t rank) {
  DimIndex out{index.dtype() == kInt64 ? index : index.to(kInt64), DimVector(rank, 0)};
  out.strides[dim] = out.index.dim() == 0 ? 0 : out.index.strides()[0];
  return out;
}

// index_select along dim 0 of a contiguous tensor: whole rows, one memcpy
// each (a batch gathered from a data set). False, having copied nothing, when
// an index is out of range (every index is, in a tensor of no rows): the
// general path then reports it.
bool copy_rows(const Tensor& self, const Tensor& index, Tensor& out) {
  const int64_t rows = self.size(0);
  if (rows == 0) return false;
  const Tensor indices = index.to(kInt64).contiguous();
  const int64_t row_bytes = self.numel() / rows * static_cast<int64_t>(self.element_size());
  return kernels::gather_rows(self.data_ptr(), rows, row_bytes, static_cast<const int64_t*>(indices.data_ptr()),
                              indices.numel(), out.data_ptr(), cuda_seam::device_of(self));
}

struct IndexSelect {
  static constexpr std::string_view name = "IndexSelectBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index) {
    GD_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
    GD_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32,
             "index_select(): Expected dtype int32 or int64 for index");
    check_same_device(self, index, "index_select");
    GD_CHECK(self.dim() > 0 || index.numel() == 1,
             fmt::format("index_select(): Index to scalar can have only 1 value, got {} value(s)", index.numel()));
    GD_CHECK(self.dim() == 0 || self.size(dim) > 0 || index.numel() == 0,
             "index_select(): self indexing axis dim should be positive");
    ctx.save_for_backward(index);
    ctx.shape = self.sizes().dims();
    ctx.ints = {dim};

    DimGeometry s = nonempty_layout(self);
    DimVector shape = s.sizes;
    shape[dim] = index.numel();
    Tensor out = empty(self.dim() == 0 ? IntArrayRef() : IntArrayRef(shape), self.options());
    if (out.numel() == 0) return out;
    if (!self.device().is_cuda() && dim == 0 && self.dim() > 0 && self.is_contiguous() && copy_rows(self, index, out))
      return out;
    DimVector self_strides = s.strides;
    self_strides[dim] = 0;
    DimIndex idx = dim_index(index, dim, shape.size());
    const int64_t dim_size = s.sizes[dim], dim_stride = s.strides[dim];
    if (self.device().is_cuda()) check_index_range(idx.index, 0, dim_size, dim);
    const DimVector out_strides = contiguous_strides(shape);
    throw_if_bad_index(kernels::index_gather(self.dtype(), shape, {out.data_ptr(), shape, out_strides},
                                             {self.data_ptr(), shape, self_strides},
                                             {idx.index.data_ptr(), shape, idx.strides}, dim_stride, dim_size,
                                             cuda_seam::device_of(out)),
                       dim, dim_size);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    return {index_add(zeros(ctx.shape, g.options()), ctx.ints[0], index, g), Tensor()};
  }
};

struct IndexAdd {
  static constexpr std::string_view name = "IndexAddBackward0";
  // index_add along dim 0 of row-major tensors: each index adds a whole contiguous
  // row, which vectorizes, instead of going element by element. Rows are added in
  // index order, as the general loop does, so repeated indices give the same bits.
  static void add_rows(Tensor& out, const Tensor& index, const Tensor& source, Scalar alpha, int64_t rows) {
    const Tensor index64 = index.to(kInt64).contiguous();
    const int64_t count = index64.numel(), width = source.numel() / count;
    throw_if_bad_index(kernels::add_rows(out.dtype(), out.data_ptr(), rows, source.data_ptr(), width,
                                         static_cast<const int64_t*>(index64.data_ptr()), count,
                                         cuda_seam::number_of(alpha), cuda_seam::device_of(out)),
                       0, rows);
  }

  static Tensor forward(Ctx& ctx, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                        Scalar alpha) {
    GD_CHECK(index.dim() <= 1, fmt::format("index_add_(): Index is supposed to be a vector, but got dim: {} with type: "
                                           "{} and size: {}",
                                           index.dim(), c10_type_name(index.dtype()), shape_to_string(index.sizes())));
    GD_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32,
             "index_add_(): Expected dtype int32/int64 for index but got: " + c10_type_name(index.dtype()));
    GD_CHECK(self.dtype() == source.dtype(),
             fmt::format("index_add_(): self ({}) and source ({}) must have the same scalar type",
                         c10_type_name(self.dtype()), c10_type_name(source.dtype())));
    check_same_device(self, index, "index_add_");
    check_same_device(self, source, "index_add_");
    DimGeometry s = nonempty_layout(self), r = nonempty_layout(source);
    const int64_t source_dim_size = static_cast<size_t>(dim) < r.sizes.size() ? r.sizes[dim] : 1;
    GD_CHECK(index.numel() == source_dim_size,
             fmt::format("index_add_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {}",
                         index.numel(), source_dim_size, dim));
    bool same = s.sizes.size() == r.sizes.size();
    for (size_t d = 0; same && d < s.sizes.size(); ++d) same = static_cast<int64_t>(d) == dim || s.sizes[d] == r.sizes[d];
    GD_CHECK(same, fmt::format("index_add_(): self {} and source {} must have the same size in every dimension except "
                               "dimension {}",
                               shape_to_string(self.sizes()), shape_to_string(source.sizes()), dim));
    ctx.save_for_backward(index);
    ctx.ints = {dim};
    ctx.scalar = alpha;

    Tensor out = copy_of(self);
    if (source.numel() == 0) return out;
    DimGeometry o = nonempty_layout(out);
    if (!out.device().is_cuda() && dim == 0 && self.dim() >= 1 && out.is_contiguous() && source.is_contiguous()) {
      add_rows(out, index, source, alpha, o.sizes[0]);
      return out;
    }
    DimVector out_strides = o.strides;
    out_strides[dim] = 0;
    DimIndex idx = dim_index(index, dim, r.sizes.size());
    const int64_t dim_size = o.sizes[dim], dim_stride = o.strides[dim];
    if (out.device().is_cuda()) check_index_range(idx.index, 0, dim_size, dim);
    // Serial on the CPU: repeated indices add into the same row.
    throw_if_bad_index(kernels::index_add(out.dtype(), r.sizes, {out.data_ptr(), r.sizes, out_strides},
                                          {source.data_ptr(), r.sizes, r.strides},
                                          {idx.index.data_ptr(), r.sizes, idx.strides}, dim_stride, dim_size,
                                          cuda_seam::number_of(alpha), are_deterministic_algorithms_enabled(),
                                          cuda_seam::device_of(out)),
                       dim, dim_size);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    Tensor g_source;
    if (ctx.needs_input_grad(2)) {
      g_source = g.index_select(ctx.ints[0], index);
      bool unit = ctx.scalar.is_floating_point() ? ctx.scalar.to_double() == 1.0 : ctx.scalar.to_long() == 1;
      if (!unit) g_source = g_source * ctx.scalar;
    }
    return {g, Tensor(), g_source};
  }
};

}  // namespace

// ---- public functions ----

namespace {
// ATen's optional index tensors as an index list: an empty (or undefined) one is a whole-dim Slice().
std::vector<TensorIndex> as_tensor_indices(const std::vector<std::optional<Tensor>>& indices) {
  std::vector<TensorIndex> out;
  for (const std::optional<Tensor>& t : indices) {
    if (t && t->defined()) out.emplace_back(*t);
    else out.emplace_back(indexing::Slice());
  }
  return out;
}

// libtorch's deprecation warning, once per uint8 mask of an index or index_put_ call.
void warn_uint8_masks(const std::vector<TensorIndex>& indices) {
  for (const TensorIndex& index : indices)
    if (index.is_tensor() && index.tensor().defined() && index.tensor().dtype() == kUInt8)
      warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
}

// self[indices] = values (+= with accumulate) in place, as ATen's index_put_.
Tensor& index_put_values(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& values,
                         bool accumulate) {
  warn_uint8_masks(indices);
  if (check_inplace(self, {values}, "index_put_"))
    return commit_inplace(self, apply<IndexPut>(self, indices, values, accumulate), true);
  check_put_values(self, values);
  check_no_internal_overlap(self);
  index_put_kernel(self, indices, values, accumulate);
  self.bump_version();
  return self;
}
}  // namespace

Tensor index_with_tensors(const Tensor& self, const std::vector<TensorIndex>& indices) {
  warn_uint8_masks(indices);
  return apply<Index>(self, indices);
}

Tensor nonzero(const Tensor& x) {
  NoGradGuard no_grad;
  Tensor c = x.contiguous();
  Tensor out;
  kernels::nonzero_indices(
      c.dtype(), c.data_ptr(), c.sizes(),
      [&](int64_t count) {
        out = empty({count, c.dim()}, TensorOptions().dtype(kInt64).device(c.device()));
        return static_cast<int64_t*>(out.data_ptr());
      },
      cuda_seam::device_of(c));
  return out;
}

std::vector<Tensor> where(const Tensor& condition) {
  // A 0-dim condition counts as one element, as in torch.where.
  return nonzero(condition.dim() == 0 ? condition.reshape({1}) : condition).unbind(1);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return apply<Scatter>(x, wrap_dim(dim, x.dim(), "scatter"), index, src);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, Scalar value) {
  return apply<ScatterValue>(x, wrap_dim(dim, x.dim(), "scatter"), index, value);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return apply<IndexSelect>(x, wrap_dim(dim, x.dim(), "index_select"), index);
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  return apply<IndexAdd>(x, wrap_dim(dim, x.dim(), "index_add"), index, source, alpha);
}

// x and mask broadcast together, indexed by the mask: the backward puts the
// gradient back at the mask's positions of a zero tensor.
Tensor masked_select(const Tensor& x, const Tensor& mask) {
  GD_CHECK(mask.dtype() == kBool, "masked_select: expected BoolTensor for mask");
  DimVector shape = broadcast_shapes(x.sizes(), mask.sizes());
  Tensor xb = x.sizes() == IntArrayRef(shape) ? x : x.expand(shape);
  Tensor mb = mask.sizes() == IntArrayRef(shape) ? mask : mask.expand(shape);
  return index_with_tensors(xb, {TensorIndex(mb)});
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return gradiens::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, Scalar value) const {
  return gradiens::scatter(*this, dim, index, value);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return gradiens::index_select(*this, dim, index); }
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) const {
  return gradiens::index_add(*this, dim, index, source, alpha);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return gradiens::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return gradiens::nonzero(*this); }

// ---- in place (Note [In-place ops and autograd]) ----

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate) {
  GD_CHECK(!indices.empty(), "Passing an empty index list to Tensor::index_put_() is not valid syntax");
  // libtorch's x.index_put_({...}, v) drops v's leading size-1 dims first, as
  // NumPy's x[...] = v (ATen's index_put_ op, gradiens::index_put_, does not).
  Tensor sliced = values;
  while (sliced.dim() > 0 && sliced.size(0) == 1) sliced = sliced.select(0, 0);
  return index_put_values(*this, indices, sliced, accumulate);
}

Tensor index(const Tensor& x, const std::vector<std::optional<Tensor>>& indices) {
  return x.index(as_tensor_indices(indices));
}

Tensor& index_put_(Tensor& x, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate) {
  return index_put_values(x, as_tensor_indices(indices), values, accumulate);
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, Scalar value) {
  return index_put_(indices, scalar_to_tensor(value, dtype()), false);
}

Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) {
  bool record = check_inplace(*this, {}, "masked_fill_");
  Tensor result = gradiens::masked_fill(record ? clone() : *this, mask, value);
  check_inplace_output(*this, result.sizes(), result.dtype(), "masked_fill_");
  return commit_inplace(*this, result, record);
}

}  // namespace gradiens
