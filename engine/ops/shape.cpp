// Views and shape ops: view/reshape/flatten/squeeze/unsqueeze, transpose and
// permute, expand, the strided views (narrow, select, slice, diagonal, unfold,
// as_strided) with one shared backward, index({...}) (its basic part; tensor
// indices go to advanced_indexing.cpp), chunk/split/unbind, cat
// and stack. A view shares its input's storage and version counter.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <ostream>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/memory_format.h"
#include "engine/ops/advanced_indexing.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "kernels/elementwise.h"

namespace gradiens {

namespace {

// Sizes, strides and storage offset of a view.
struct Geometry {
  DimVector sizes, strides;
  int64_t offset = 0;
};

Geometry geometry_of(const Tensor& t) {
  return {t.sizes().dims(), t.strides().dims(), t.storage_offset()};
}

// Same geometry on a contiguous tensor of `sizes`: where the view's elements
// sit relative to the start of its input, used by the backward scatter.
Geometry contiguous_geometry(IntArrayRef sizes) { return {sizes.dims(), contiguous_strides(sizes), 0}; }

Tensor make_view(const Tensor& base, Geometry g) {
  auto impl = std::make_shared<TensorImpl>(base.storage(), std::move(g.sizes), std::move(g.strides), g.offset,
                                           base.dtype());
  detail::mark_as_view(*impl, base);
  return Tensor(std::move(impl));
}

void encode_geometry(DimVector& out, const Geometry& g) {
  out.clear();
  out.push_back(static_cast<int64_t>(g.sizes.size()));
  for (int64_t s : g.sizes) out.push_back(s);
  for (int64_t s : g.strides) out.push_back(s);
  out.push_back(g.offset);
}
Geometry decode_geometry(const DimVector& in) {
  Geometry g;
  size_t n = static_cast<size_t>(in[0]);
  g.sizes.assign(in.begin() + 1, in.begin() + 1 + n);
  g.strides.assign(in.begin() + 1 + n, in.begin() + 1 + 2 * n);
  g.offset = in[1 + 2 * n];
  return g;
}

Tensor strided_view_of_contiguous(const Tensor& x, const Geometry& relative);

// Whether two indices of the geometry can address the same element (unfold
// with step < size, overlapping as_strided windows). Sufficient test: with the
// dims sorted by stride, each stride must exceed the span of the smaller ones.
bool may_overlap(const Geometry& g) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (size_t i = 0; i < g.sizes.size(); ++i)
    if (g.sizes[i] > 1) dims.emplace_back(g.strides[i], g.sizes[i]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;
  for (auto [stride, size] : dims) {
    if (stride <= span) return true;
    span += (size - 1) * stride;
  }
  return false;
}

// Backward of every strided view: a zero tensor of the input's shape with the
// gradient added through the view's geometry (adding, so overlapping views
// such as unfold with step < size accumulate correctly).
struct ViewScatter {
  static constexpr std::string_view name = "AsStridedScatterBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad, DimVector input_sizes, DimVector relative) {
    ctx.shape = input_sizes;
    ctx.ints = relative;
    Tensor out = zeros(input_sizes, grad.options());
    Geometry g = decode_geometry(relative);
    Tensor target = make_view(out, g);
    if (out.device().is_cuda()) {
      if (may_overlap(g)) {
        // Overlapping elements accumulate in a fixed order on the host (no
        // deterministic scatter-add on the device yet), then come back.
        return forward(ctx, grad.cpu(), std::move(input_sizes), std::move(relative)).to(grad.device());
      }
      // out is zeros, so adding the gradient through a view whose elements are
      // distinct is copying it there.
      copy_data(target, grad);
      return out;
    }
    // Overlapping elements are read-modify-written by several indices: one thread, or updates get lost.
    kernels::add_into(out.dtype(), cuda_seam::buffer_of(target), cuda_seam::buffer_of(grad), target.sizes(),
                      may_overlap(g), cuda_seam::device_of(out), "as_strided_backward");
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    return {strided_view_of_contiguous(gg, decode_geometry(ctx.ints))};
  }
};

// A view given by `relative`, a geometry relative to the start of a
// contiguous layout of x's shape; the backward is ViewScatter.
struct StridedView {
  static constexpr std::string_view name = "AsStridedBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, DimVector relative, DimVector absolute) {
    ctx.shape = x.sizes().dims();
    ctx.ints = relative;
    return make_view(x, decode_geometry(absolute));
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {apply<ViewScatter>(g, ctx.shape, ctx.ints)};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, DimVector relative, DimVector) {
    return strided_view_of_contiguous(t[0], decode_geometry(relative));
  }
};

Tensor strided_view_of_contiguous(const Tensor& x, const Geometry& relative) {
  Tensor xc = x.contiguous();
  Geometry absolute = relative;
  absolute.offset += xc.storage_offset();
  DimVector rel, abs;
  encode_geometry(rel, relative);
  encode_geometry(abs, absolute);
  return apply<StridedView>(xc, rel, abs);
}

// Applies a geometry transform to x's real layout (forward) and to the
// contiguous layout of its shape (backward): every strided view goes through here.
template <class Transform>
Tensor strided_view(const Tensor& x, Transform transform) {
  Geometry absolute = transform(geometry_of(x));
  Geometry relative = transform(contiguous_geometry(x.sizes()));
  DimVector rel, abs;
  encode_geometry(rel, relative);
  encode_geometry(abs, absolute);
  return apply<StridedView>(x, rel, abs);
}

// view/reshape-like: same elements, new shape; the gradient is reshaped back.
struct View {
  static constexpr std::string_view name = "ViewBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, DimVector sizes, DimVector strides) {
    ctx.shape = x.sizes().dims();
    return make_view(x, {sizes, strides, x.storage_offset()});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g.reshape(ctx.shape)}; }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor&, DimVector, DimVector) {
    return t[0].reshape(out.sizes());
  }
};

struct Permute {
  static constexpr std::string_view name = "PermuteBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, DimVector dims) {
    ctx.ints = dims;
    Geometry g;
    for (int64_t d : dims) {
      g.sizes.push_back(x.sizes()[d]);
      g.strides.push_back(x.strides()[d]);
    }
    g.offset = x.storage_offset();
    return make_view(x, g);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    DimVector inverse(ctx.ints.size(), 0);
    for (size_t i = 0; i < ctx.ints.size(); ++i) inverse[ctx.ints[i]] = static_cast<int64_t>(i);
    return {g.permute(inverse)};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, DimVector dims) { return t[0].permute(dims); }
};

// expand: stride 0 on new/expanded dims; the engine sums the gradient back.
struct Expand {
  static constexpr std::string_view name = "ExpandBackward0";
  static Tensor forward(Ctx&, const Tensor& x, DimVector sizes) {
    GD_CHECK(sizes.size() >= static_cast<size_t>(x.dim()),
             fmt::format("expand: the number of sizes provided ({}) must be greater or equal to the number of "
                         "dimensions in the tensor ({})",
                         sizes.size(), x.dim()));
    Geometry g{sizes, DimVector(sizes.size(), 0), x.storage_offset()};
    size_t lead = sizes.size() - static_cast<size_t>(x.dim());
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (i < lead) {
        GD_CHECK(sizes[i] >= 0, fmt::format("expand: the expanded size of the tensor ({}) isn't allowed in a leading, "
                                            "non-existing dimension {}",
                                            sizes[i], i));
        continue;
      }
      int64_t have = x.sizes()[i - lead];
      if (sizes[i] == -1) g.sizes[i] = sizes[i] = have;
      if (have == sizes[i]) g.strides[i] = x.strides()[i - lead];
      else
        GD_CHECK(have == 1, fmt::format("The expanded size of the tensor ({}) must match the existing size ({}) at "
                                        "non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}",
                                        sizes[i], have, i, shape_to_string(sizes), shape_to_string(x.sizes())));
    }
    return make_view(x, g);
  }
  static GradList backward(Ctx&, const Tensor& g) { return {g}; }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor&, DimVector) { return t[0].expand(out.sizes()); }
};

// PyTorch's computeStride: strides viewing x as `sizes` without a copy, if any.
std::optional<DimVector> view_strides(const Tensor& x, IntArrayRef sizes) {
  IntArrayRef old_sizes = x.sizes(), old_strides = x.strides();
  DimVector new_strides(sizes.size(), 1);
  if (x.numel() == 0 || old_sizes.empty()) return contiguous_strides(sizes);
  int64_t view_d = static_cast<int64_t>(sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

// Resolves one -1 in `sizes` and checks the element count.
DimVector infer_size(IntArrayRef sizes, int64_t numel, std::string_view op) {
  DimVector out = sizes.dims();
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      GD_CHECK(!infer, fmt::format("{}: only one dimension can be inferred", op));
      infer = i;
    } else {
      GD_CHECK(out[i] >= 0, fmt::format("{}: invalid shape dimension {}", op, out[i]));
      known *= out[i];
    }
  }
  if (infer) {
    GD_CHECK(known != 0 && numel % known == 0,
             fmt::format("shape '{}' is invalid for input of size {}", shape_to_string(sizes), numel));
    out[*infer] = numel / known;
  } else {
    GD_CHECK(known == numel, fmt::format("shape '{}' is invalid for input of size {}", shape_to_string(sizes), numel));
  }
  return out;
}

struct Cat {
  static constexpr std::string_view name = "CatBackward0";
  static Tensor forward(Ctx& ctx, const std::vector<Tensor>& tensors, int64_t dim) {
    GD_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
    const Tensor& first = tensors[0];
    GD_CHECK(first.dim() > 0, "zero-dimensional tensor (at position 0) cannot be concatenated");
    int64_t d = wrap_dim(dim, first.dim(), "cat");
    ScalarType dt = first.dtype();
    DimVector sizes = first.sizes().dims();
    sizes[d] = 0;
    ctx.ints.clear();
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      GD_CHECK(t.dim() > 0, fmt::format("zero-dimensional tensor (at position {}) cannot be concatenated", i));
      GD_CHECK(t.dim() == first.dim(), fmt::format("Tensors must have same number of dimensions: got {} and {}",
                                                   first.dim(), t.dim()));
      for (int64_t k = 0; k < t.dim(); ++k)
        GD_CHECK(k == d || t.sizes()[k] == first.sizes()[k],
                 fmt::format("Sizes of tensors must match except in dimension {}. Expected size {} but got size {} "
                             "for tensor number {} in the list.",
                             d, first.sizes()[k], t.sizes()[k], i));
      check_same_device(first, t, "cat");
      dt = promote_types(dt, t.dtype());
      sizes[d] += t.sizes()[d];
      ctx.ints.push_back(t.sizes()[d]);
    }
    ctx.real = static_cast<double>(d);
    Tensor out = empty(sizes, TensorOptions().dtype(dt).device(first.device()));
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      NoGradGuard no_grad;
      Geometry g = geometry_of(out);
      g.offset += offset * g.strides[d];
      g.sizes[d] = t.sizes()[d];
      cuda_seam::copy_op(make_view(out, g), t);  // converting to the result dtype
      offset += t.sizes()[d];
    }
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    GradList grads;
    int64_t d = static_cast<int64_t>(ctx.real), offset = 0;
    for (size_t i = 0; i < ctx.ints.size(); ++i) {
      grads.push_back(ctx.needs_input_grad(i) ? g.narrow(d, offset, ctx.ints[i]) : Tensor());
      offset += ctx.ints[i];
    }
    return grads;
  }
  static Tensor jvp(const Tensor&, const GradList& t, const std::vector<Tensor>& tensors, int64_t dim) {
    std::vector<Tensor> tangents;
    for (size_t i = 0; i < tensors.size(); ++i) tangents.push_back(tangent_or_zeros(t[i], tensors[i]));
    return apply<Cat>(tangents, dim);
  }
};

}  // namespace

// ---- shape functions ----

Tensor Tensor::view(IntArrayRef sizes) const {
  DimVector shape = infer_size(sizes, numel(), "view");
  auto strides = view_strides(*this, shape);
  GD_CHECK(strides.has_value(),
           "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
           "contiguous subspaces). Use .reshape(...) instead.");
  return apply<View>(*this, shape, *strides);
}

Tensor Tensor::reshape(IntArrayRef sizes) const {
  DimVector shape = infer_size(sizes, numel(), "reshape");
  if (auto strides = view_strides(*this, shape)) return apply<View>(*this, shape, *strides);
  return clone(MemoryFormat::Contiguous).view(shape);
}

Tensor Tensor::view_as(const Tensor& other) const { return view(other.sizes()); }
Tensor Tensor::reshape_as(const Tensor& other) const { return reshape(other.sizes()); }

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  // A 0-dim tensor counts as 1-D for the dims (PyTorch's range message), then becomes [1].
  int64_t s = wrap_dim(start_dim, dim()), e = wrap_dim(end_dim, dim());
  if (dim() == 0) return reshape({1});
  GD_CHECK(s <= e, "flatten() has invalid args: start_dim cannot come after end_dim");
  DimVector shape;
  for (int64_t i = 0; i < s; ++i) shape.push_back(sizes()[i]);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= sizes()[i];
  shape.push_back(n);
  for (int64_t i = e + 1; i < dim(); ++i) shape.push_back(sizes()[i]);
  return reshape(shape);
}

Tensor Tensor::squeeze() const {
  DimVector shape, strides;
  for (int64_t i = 0; i < dim(); ++i)
    if (sizes()[i] != 1) {
      shape.push_back(sizes()[i]);
      strides.push_back(this->strides()[i]);
    }
  return apply<View>(*this, shape, strides);
}

Tensor Tensor::squeeze(int64_t d) const {
  int64_t w = wrap_dim(d, dim(), "squeeze");
  if (dim() == 0 || sizes()[w] != 1) return apply<View>(*this, sizes().dims(), strides().dims());
  DimVector shape = sizes().dims(), st = strides().dims();
  shape.erase(shape.begin() + w);
  st.erase(st.begin() + w);
  return apply<View>(*this, shape, st);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  int64_t w = wrap_dim(d, dim() + 1, "unsqueeze");
  DimVector shape = sizes().dims(), st = strides().dims();
  int64_t stride = w < dim() ? strides()[w] * sizes()[w] : 1;
  shape.insert(shape.begin() + w, 1);
  st.insert(st.begin() + w, stride);
  return apply<View>(*this, shape, st);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  GD_CHECK(static_cast<int64_t>(dims.size()) == dim(),
           fmt::format("permute(): number of dimensions in the tensor input does not match the length of the desired "
                       "ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
                       dim(), dims.size()));
  DimVector wrapped;
  std::vector<bool> seen(static_cast<size_t>(dim()), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, dim(), "permute");
    GD_CHECK(!seen[w], "permute(): duplicate dims are not allowed.");
    seen[w] = true;
    wrapped.push_back(w);
  }
  return apply<Permute>(*this, wrapped);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  if (dim() == 0) return apply<View>(*this, DimVector(), DimVector());
  int64_t a = wrap_dim(dim0, dim(), "transpose"), b = wrap_dim(dim1, dim(), "transpose");
  DimVector order(static_cast<size_t>(dim()), 0);
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[a], order[b]);
  return apply<Permute>(*this, order);
}

Tensor& Tensor::transpose_(int64_t dim0, int64_t dim1) {
  TensorImpl& impl = checked();
  if (dim() == 0) return *this;
  const int64_t a = wrap_dim(dim0, dim(), "transpose_"), b = wrap_dim(dim1, dim(), "transpose_");
  const bool record = GradMode::is_enabled() && requires_grad();
  const bool dual = detail::forward_ad_enabled() && detail::has_tangent(*this);
  Tensor moved;
  if (record || dual) {
    GD_CHECK(!(record && is_leaf()), "a leaf Variable that requires grad is being used in an in-place operation.");
    GD_CHECK(!impl.view.is_view,
             "transpose_: in-place transpose of a view in the autograd graph is not supported by gradiens; use "
             "transpose() instead");
    moved = transpose(a, b);  // its history (and tangent) are those of the transposed value
  }
  std::swap(impl.sizes[static_cast<size_t>(a)], impl.sizes[static_cast<size_t>(b)]);
  std::swap(impl.strides[static_cast<size_t>(a)], impl.strides[static_cast<size_t>(b)]);
  impl.refresh_geometry();
  if (record) {
    impl.grad_fn = moved.grad_fn();
    impl.output_nr = moved.output_nr();
  }
  if (dual) detail::set_tangent(*this, detail::tangent_of(moved));
  return *this;
}

Tensor Tensor::t() const {
  GD_CHECK(dim() <= 2, fmt::format("t() expects a tensor with <= 2 dimensions, but self is {}D", dim()));
  return dim() < 2 ? transpose(0, 0) : transpose(0, 1);
}

Tensor Tensor::T() const {
  DimVector reversed;
  for (int64_t d = dim(); d-- > 0;) reversed.push_back(d);
  return permute(reversed);
}

Tensor Tensor::trace() const { return gradiens::trace(*this); }

Tensor trace(const Tensor& x) {
  GD_CHECK(x.dim() == 2, fmt::format("trace: expected a matrix, but got tensor with dim {}", x.dim()));
  return x.diagonal().sum();
}

Tensor Tensor::mT() const {
  GD_CHECK(dim() >= 2, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.");
  return transpose(-2, -1);
}

Tensor Tensor::expand(IntArrayRef sizes) const { return apply<Expand>(*this, sizes.dims()); }
Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.sizes()); }

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  GD_CHECK(dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  int64_t w = wrap_dim(d, dim(), "narrow");
  int64_t size = sizes()[w];
  if (start < 0) start += size;
  GD_CHECK(start >= 0 && start <= size,
           fmt::format("start out of range (expected to be in range of [{}, {}], but got {})", -size, size, start));
  GD_CHECK(length >= 0 && start + length <= size,
           fmt::format("start ({}) + length ({}) exceeds dimension size ({}).", start, length, size));
  return strided_view(*this, [=](Geometry g) {
    g.offset += start * g.strides[w];
    g.sizes[w] = length;
    return g;
  });
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  GD_CHECK(dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  GD_CHECK(step > 0, "slice step must be positive");
  int64_t w = wrap_dim(d, dim(), "slice");
  int64_t size = sizes()[w];
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  int64_t len = (e - s + step - 1) / step;
  return strided_view(*this, [=](Geometry g) {
    g.offset += s * g.strides[w];
    g.sizes[w] = len;
    g.strides[w] *= step;
    return g;
  });
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  GD_CHECK(dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t w = wrap_dim(d, dim(), "select");
  int64_t size = sizes()[w];
  GD_CHECK(index >= -size && index < size,
           fmt::format("select(): index {} out of range for tensor of size {} at dimension {}", index,
                       shape_to_string(sizes()), w));
  if (index < 0) index += size;
  return strided_view(*this, [=](Geometry g) {
    g.offset += index * g.strides[w];
    g.sizes.erase(g.sizes.begin() + w);
    g.strides.erase(g.strides.begin() + w);
    return g;
  });
}

Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  int64_t a = wrap_dim(dim1, dim(), "diagonal"), b = wrap_dim(dim2, dim(), "diagonal");
  GD_CHECK(a != b, fmt::format("diagonal dimensions cannot be identical {}, {}", dim1, dim2));
  int64_t len = offset >= 0 ? std::max<int64_t>(std::min(sizes()[a], sizes()[b] - offset), 0)
                            : std::max<int64_t>(std::min(sizes()[a] + offset, sizes()[b]), 0);
  return strided_view(*this, [=](Geometry g) {
    if (len > 0) g.offset += offset >= 0 ? offset * g.strides[b] : -offset * g.strides[a];
    int64_t diag_stride = g.strides[a] + g.strides[b];
    DimVector sizes, strides;
    for (size_t i = 0; i < g.sizes.size(); ++i)
      if (static_cast<int64_t>(i) != a && static_cast<int64_t>(i) != b) {
        sizes.push_back(g.sizes[i]);
        strides.push_back(g.strides[i]);
      }
    sizes.push_back(len);
    strides.push_back(diag_stride);
    g.sizes = sizes;
    g.strides = strides;
    return g;
  });
}

Tensor Tensor::unfold(int64_t dimension, int64_t size, int64_t step) const {
  int64_t w = wrap_dim(dimension, dim(), "unfold");
  int64_t have = dim() == 0 ? 1 : sizes()[w];
  GD_CHECK(size <= have, fmt::format("maximum size for tensor at dimension {} is {} but size is {}", w, have, size));
  GD_CHECK(step > 0, fmt::format("step is {} but must be > 0", step));
  return strided_view(*this, [=](Geometry g) {
    if (g.sizes.empty()) {
      g.sizes.push_back(size);
      g.strides.push_back(1);
      return g;
    }
    int64_t stride = g.strides[w];
    g.sizes[w] = (g.sizes[w] - size) / step + 1;
    g.strides[w] = stride * step;
    g.sizes.push_back(size);
    g.strides.push_back(stride);
    return g;
  });
}

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset) const {
  GD_CHECK(sizes.size() == strides.size(), fmt::format("mismatch in length of strides and shape"));
  int64_t offset = storage_offset.value_or(this->storage_offset());
  int64_t extent = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    GD_CHECK(sizes[i] >= 0 && strides[i] >= 0, "as_strided: negative sizes or strides are not supported");
    if (sizes[i] == 0) extent = -1;
    if (extent >= 0) extent += (sizes[i] - 1) * strides[i];
  }
  GD_CHECK(extent < 0 || (extent + 1) * static_cast<int64_t>(element_size()) <= static_cast<int64_t>(storage()->nbytes()),
           fmt::format("setStorage: sizes {}, strides {}, storage offset {} require more storage than the tensor has",
                       shape_to_string(sizes), shape_to_string(strides), offset));
  // The relative geometry for the backward assumes a contiguous input starting at its own offset.
  GD_CHECK(is_contiguous(), "as_strided: gradiens supports as_strided on contiguous tensors only");
  Geometry relative{sizes.dims(), strides.dims(), offset - this->storage_offset()};
  Geometry absolute{sizes.dims(), strides.dims(), offset};
  DimVector rel, abs;
  encode_geometry(rel, relative);
  encode_geometry(abs, absolute);
  return apply<StridedView>(*this, rel, abs);
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t d) const {
  GD_CHECK(dim() > 0, "split expects at least a 1-dimensional tensor");
  GD_CHECK(split_size >= 0, fmt::format("split expects split_size be non-negative, but got split_size={}", split_size));
  int64_t w = wrap_dim(d, dim(), "split");
  int64_t size = sizes()[w];
  GD_CHECK(split_size > 0 || size == 0, "split_size can only be 0 if dimension size is 0");
  std::vector<Tensor> out;
  int64_t chunks = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  for (int64_t i = 0; i < chunks; ++i) {
    int64_t start = i * split_size;
    out.push_back(narrow(w, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, int64_t d) const {
  GD_CHECK(dim() > 0, "split expects at least a 1-dimensional tensor");
  int64_t w = wrap_dim(d, dim(), "split");
  int64_t total = 0;
  for (int64_t s : split_sizes) total += s;
  GD_CHECK(total == sizes()[w], fmt::format("split_with_sizes expects split_sizes to sum exactly to {} (input tensor's "
                                            "size at dimension {}), but got split_sizes={}",
                                            sizes()[w], w, shape_to_string(split_sizes)));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(w, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const {
  GD_CHECK(dim() > 0, "chunk expects at least a 1-dimensional tensor");
  GD_CHECK(chunks > 0, fmt::format("chunk expects `chunks` to be greater than 0, got: {}", chunks));
  int64_t size = sizes()[wrap_dim(d, dim(), "chunk")];
  return split((size + chunks - 1) / chunks, d);
}

std::vector<Tensor> Tensor::unbind(int64_t d) const {
  GD_CHECK(dim() > 0, fmt::format("Dimension specified as {} but tensor has no dimensions", d));
  int64_t w = wrap_dim(d, dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sizes()[w]; ++i) out.push_back(select(w, i));
  return out;
}

indexing::TensorIndex::TensorIndex(const char* str) : value_(Ellipsis) {
  GD_CHECK(std::string_view(str) == "...",
           fmt::format("Expected \"...\" to represent an ellipsis index, but got \"{}\"", str));
}

indexing::Slice::Slice(SliceBound start, SliceBound stop, SliceBound step) {
  step_ = step.value.value_or(1);
  GD_CHECK(step_ != 0, "slice step cannot be zero");
  start_ = start.value.value_or(step_ < 0 ? INDEX_MAX : 0);
  stop_ = stop.value.value_or(step_ < 0 ? INDEX_MIN : INDEX_MAX);
}

std::ostream& indexing::operator<<(std::ostream& out, const Slice& slice) {
  return out << slice.start() << ':' << slice.stop() << ':' << slice.step();
}

std::ostream& indexing::operator<<(std::ostream& out, const TensorIndex& index) {
  if (index.is_none()) return out << "None";
  if (index.is_ellipsis()) return out << "...";
  if (index.is_integer()) return out << index.integer();
  if (index.is_boolean()) return out << (index.boolean() ? "true" : "false");
  if (index.is_slice()) return out << index.slice();
  return out << index.tensor();
}

std::ostream& indexing::operator<<(std::ostream& out, const std::vector<TensorIndex>& indices) {
  out << '(';
  for (size_t i = 0; i < indices.size(); ++i) out << (i ? ", " : "") << indices[i];
  return out << ')';
}

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return index(std::vector<indexing::TensorIndex>(indices));
}

BasicIndexing apply_basic_indexing(const Tensor& self, const std::vector<indexing::TensorIndex>& indices) {
  using namespace indexing;
  auto as_tensor = [](const TensorIndex& idx) -> Tensor {
    auto* impl = std::get_if<std::shared_ptr<TensorImpl>>(&idx.value());
    return impl ? Tensor(*impl) : Tensor();
  };
  auto is_mask = [](const Tensor& t) { return t.dtype() == kBool || t.dtype() == kUInt8; };
  int64_t consumed = 0;  // dims of self the indices address
  bool has_ellipsis = false;
  for (const auto& idx : indices) {
    const auto& v = idx.value();
    if (std::holds_alternative<EllipsisType>(v)) {
      GD_CHECK(!has_ellipsis, "an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
    } else if (std::holds_alternative<int64_t>(v) || std::holds_alternative<Slice>(v)) {
      ++consumed;
    } else if (Tensor t = as_tensor(idx); t.defined()) {
      // A 0-dim integer tensor of any integer dtype acts as an integer (below).
      const ScalarType it = t.dtype();
      GD_CHECK(it == kInt64 || it == kInt32 || it == kUInt8 || it == kBool || (t.dim() == 0 && is_integral(it, false)),
               "tensors used as indices must be long, int, byte or bool tensors");
      consumed += is_mask(t) ? t.dim() : 1;
    }
  }
  // libtorch selects a lone integer index before counting dims, with its own message.
  if (self.dim() == 0 && indices.size() == 1 && indices[0].is_integer())
    GD_CHECK(indices[0].integer() != 0, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                        "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  GD_CHECK(consumed <= self.dim(), fmt::format("too many indices for tensor of dimension {}", self.dim()));
  BasicIndexing out{self, {}};
  Tensor& view = out.view;
  int64_t d = 0;         // current dim of `view`
  int64_t self_dim = 0;  // the dim of `self` it came from, which libtorch's messages name
  // An integer index, checked with libtorch's message.
  auto select = [&](int64_t i) {
    const int64_t size = view.size(d);
    GD_CHECK(i >= -size && i < size,
             fmt::format("index {} is out of bounds for dimension {} with size {}", i, self_dim, size));
    view = view.select(d, i);
    ++self_dim;
  };
  for (const auto& idx : indices) {
    const auto& v = idx.value();
    if (auto* i = std::get_if<int64_t>(&v)) {
      select(*i);
    } else if (auto* s = std::get_if<Slice>(&v)) {
      view = view.slice(d, s->start(), s->stop(), s->step());
      ++d;
      ++self_dim;
    } else if (std::holds_alternative<NoneType>(v)) {
      view = view.unsqueeze(d);
      ++d;
    } else if (std::holds_alternative<EllipsisType>(v)) {
      d += self.dim() - consumed;
      self_dim += self.dim() - consumed;
    } else if (auto* b = std::get_if<bool>(&v)) {
      // x[True] adds a dim indexed by [0], x[False] one indexed by [] (an advanced index).
      view = view.unsqueeze(d);
      out.tensors.push_back({d, full({1}, *b, TensorOptions().dtype(kBool).device(self.device()))});
      ++d;
    } else {
      // A 0-dim integer tensor acts as an integer, a 0-dim mask as a bool (libtorch's rules).
      Tensor t = as_tensor(idx);
      if (t.dim() == 0 && is_mask(t)) {
        view = view.unsqueeze(d);
        out.tensors.push_back({d, t.reshape({1})});
        ++d;
      } else if (t.dim() == 0) {
        select(t.item<int64_t>());
      } else {
        out.tensors.push_back({d, t});
        d += is_mask(t) ? t.dim() : 1;
        self_dim += is_mask(t) ? t.dim() : 1;
      }
    }
  }
  // An index is always a new tensor, a view of all of self for x.index({"..."}), as libtorch's.
  if (view.is_same(self)) view = self.view(self.sizes());
  return out;
}

// A view unless the list holds an advanced index: a bool, or a tensor other than a 0-dim integer one.
Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
  GD_CHECK(!indices.empty(), "Passing an empty index list to Tensor::index() is not valid syntax");
  for (const auto& idx : indices) {
    const auto& v = idx.value();
    if (std::holds_alternative<bool>(v)) return index_with_tensors(*this, indices);
    if (auto* impl = std::get_if<std::shared_ptr<TensorImpl>>(&v)) {
      Tensor t(*impl);
      if (!t.defined() || t.dim() != 0 || t.dtype() == kBool || t.dtype() == kUInt8)
        return index_with_tensors(*this, indices);
    }
  }
  return apply_basic_indexing(*this, indices).view;
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) { return apply<Cat>(tensors, dim); }

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  GD_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    GD_CHECK(tensors[i].sizes() == tensors[0].sizes(),
             fmt::format("stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
                         shape_to_string(tensors[0].sizes()), shape_to_string(tensors[i].sizes()), i));
    expanded.push_back(tensors[i].unsqueeze(d));
  }
  return cat(expanded, d);
}

Tensor reshape(const Tensor& x, IntArrayRef sizes) { return x.reshape(sizes); }
Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) { return x.flatten(start_dim, end_dim); }
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) { return x.transpose(dim0, dim1); }
Tensor permute(const Tensor& x, IntArrayRef dims) { return x.permute(dims); }
Tensor squeeze(const Tensor& x) { return x.squeeze(); }
Tensor squeeze(const Tensor& x, int64_t dim) { return x.squeeze(dim); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return x.unsqueeze(dim); }
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) { return x.narrow(dim, start, length); }
Tensor select(const Tensor& x, int64_t dim, int64_t index) { return x.select(dim, index); }
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  return x.diagonal(offset, dim1, dim2);
}
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) { return x.chunk(chunks, dim); }
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) { return x.split(split_size, dim); }
std::vector<Tensor> split(const Tensor& x, IntArrayRef split_sizes, int64_t dim) { return x.split(split_sizes, dim); }
std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim) {
  return x.split(split_sizes, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef split_sizes, int64_t dim) const {
  return split(split_sizes, dim);
}
std::vector<Tensor> unbind(const Tensor& x, int64_t dim) { return x.unbind(dim); }
Tensor as_strided(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset) {
  return x.as_strided(sizes, strides, storage_offset);
}
Tensor _reshape_alias(const Tensor& x, IntArrayRef sizes, IntArrayRef strides) {
  return x.as_strided(sizes, strides, x.storage_offset());
}

}  // namespace gradiens

namespace gradiens {

// resize_ changes the geometry of the tensor itself, not of a new view: every
// handle to this tensor sees the new sizes; other views of the storage keep
// theirs (and see the grown buffer).
Tensor& Tensor::resize_(IntArrayRef new_sizes, std::optional<MemoryFormat> memory_format) {
  TensorImpl& impl = checked();
  GD_CHECK(!requires_grad(), "cannot resize variables that require grad");
  GD_CHECK(impl.sparse == nullptr, "resize_: not supported for sparse tensors");
  for (int64_t s : new_sizes)
    GD_CHECK(s >= 0, fmt::format("Trying to create tensor with negative dimension {}: [{}]", s, fmt::join(new_sizes, ", ")));
  const MemoryFormat format = memory_format.value_or(MemoryFormat::Contiguous);
  GD_CHECK(format != MemoryFormat::Preserve, "Unsupported memory format Preserve");
  DimVector strides = contiguous_strides(new_sizes, format);
  int64_t numel = 1;
  for (int64_t s : new_sizes) numel *= s;
  const size_t needed = static_cast<size_t>(impl.storage_offset + numel) * gradiens::element_size(impl.dtype);
  if (numel > 0 && needed > impl.storage->nbytes()) impl.storage->grow(needed);
  impl.sizes = DimVector(new_sizes.begin(), new_sizes.end());
  impl.strides = std::move(strides);
  impl.refresh_geometry();
  return *this;
}

Layout Tensor::layout() const { return checked().sparse != nullptr ? Layout::Sparse : Layout::Strided; }

}  // namespace gradiens
