// Shape-repeating and cumulative ops: repeat, tile, repeat_interleave, flip,
// roll, cumsum, cumprod, tril/triu. Most are composites of views, cat, gather
// and where, so their gradients come from those ops; flip, cumsum and cumprod
// are primitives whose backward formulas are differentiable again: flip is a
// strided copy (kernels/elementwise.h) and cumsum/cumprod kernels/ordering.h.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/lines.h"
#include "kernels/elementwise.h"
#include "kernels/ordering.h"

namespace gradiens {

namespace {

// The ops below always return a new tensor, as PyTorch's do; a composite that
// ended up as a view of its input (repeating once) is copied.
Tensor unaliased(const Tensor& out, const Tensor& x) { return out.storage() == x.storage() ? out.clone() : out; }

// PyTorch's message for a dim given to an op on a 0-dim tensor that needs one.
void check_has_dims(const Tensor& x, int64_t dim) {
  GD_CHECK(x.dim() > 0, fmt::format("Dimension specified as {} but tensor has no dimensions", dim));
}

// ---- flip ----

// Copies x with the order of `dims` reversed: the source is read through
// negated strides starting from the last element of each flipped dim.
Tensor flip_kernel(const Tensor& x, const DimVector& dims) {
  Tensor out = empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  const int64_t esize = static_cast<int64_t>(x.element_size());
  DimVector in_strides = x.strides().dims();
  char* in = static_cast<char*>(x.data_ptr());
  for (int64_t d : dims) {
    in += (x.sizes()[d] - 1) * in_strides[d] * esize;
    in_strides[d] = -in_strides[d];
  }
  kernels::copy(x.dtype(), cuda_seam::buffer_of(out), x.dtype(), {in, x.sizes(), in_strides}, x.sizes(),
                cuda_seam::device_of(out));
  return out;
}

struct Flip {
  static constexpr std::string_view name = "FlipBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, DimVector dims) {
    ctx.ints = dims;
    return flip_kernel(x, dims);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {apply<Flip>(g, ctx.ints)}; }
};

// Wrapped dims without repeats; a 0-dim tensor has nothing to flip.
DimVector flip_dims(const Tensor& x, IntArrayRef dims) {
  DimVector out;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, x.dim(), "flip");
    GD_CHECK(std::find(out.begin(), out.end(), w) == out.end(),
             fmt::format("dim {} appears multiple times in the list of dims", w));
    out.push_back(w);
  }
  if (x.dim() == 0) out.clear();
  return out;
}

// The reverse cumulative sum along d (the backward of cumsum).
Tensor reverse_cumsum(const Tensor& x, int64_t d) {
  DimVector dims;
  if (x.dim() > 0) dims.push_back(d);
  return apply<Flip>(cumsum(apply<Flip>(x, dims), d), dims);
}

// ---- cumsum / cumprod ----

template <bool IsProd>
Tensor cumulative_kernel(const Tensor& x, int64_t d) {
  Tensor out = empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  LineGeometry in = line_geometry(x), o = line_geometry(out);
  kernels::cumulative(IsProd, x.dtype(), in.sizes, d, {out.data_ptr(), o.sizes, o.strides},
                      {x.data_ptr(), in.sizes, in.strides}, cuda_seam::device_of(out));
  return out;
}

// Integer and bool inputs accumulate into int64, as in PyTorch.
Tensor cumulative_input(const Tensor& x) { return is_integral(x.dtype(), true) ? x.to(kInt64) : x; }

struct Cumsum {
  static constexpr std::string_view name = "CumsumBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, int64_t d) {
    ctx.ints = {d};
    return cumulative_kernel<false>(x, d);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {reverse_cumsum(g, ctx.ints[0])}; }
};

// Note [Cumprod backward with zeros]: dL/dx_k = sum_{j>=k} g_j prod_{i<=j, i!=k} x_i.
// Where x_k != 0 that is revcumsum(g * y)_k / x_k, an identity near x, so it
// also has the right derivatives. At the first zero z1 it is revcumsum(g * Y1)
// with Y1 the cumprod of x with x_z1 set to 1; at the second zero z2 it is
// x_z1 * revcumsum(g * Y12) (both zeros set to 1), which is 0 but keeps its
// derivative with respect to x_z1; at later zeros it is 0 to second order.
// The result is exact to second order, so gradgradcheck holds at zeros (as in
// Note [Prod backward with zeros]).
struct Cumprod {
  static constexpr std::string_view name = "CumprodBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, int64_t d) {
    Tensor y = cumulative_kernel<true>(x, d);
    if (ctx.is_recording()) {
      ctx.save_for_backward(x, y);
      ctx.ints = {d};
      ctx.scalar = Scalar(any(eq(x, 0)).item<bool>());
    }
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [x, y] = ctx.saved<2>();
    const int64_t d = ctx.ints[0];
    if (!ctx.scalar.to<bool>()) return {reverse_cumsum(g * y, d) / x};
    DimVector dims;
    if (x.dim() > 0) dims.push_back(d);
    Tensor zero = eq(x, 0);
    Tensor zeros_so_far = cumsum(zero, d);
    Tensor first = zero & eq(zeros_so_far, 1);
    Tensor second = zero & eq(zeros_so_far, 2);
    Tensor away = reverse_cumsum(g * y, d) / where(zero, 1.0, x);
    Tensor at_first = reverse_cumsum(g * cumprod(where(first, 1.0, x), d), d);
    Tensor x_first = sum(where(first, x, 0.0), dims, true);
    Tensor at_second = reverse_cumsum(g * cumprod(where(first | second, 1.0, x), d), d) * x_first;
    return {where(first, at_first, where(second, at_second, where(zero, 0.0, away)))};
  }
};

// ---- tril / triu ----

Tensor triangle(const Tensor& x, int64_t diagonal, bool lower, std::string_view op) {
  GD_CHECK(x.dim() >= 2, fmt::format("{}: input tensor must have at least 2 dimensions", op));
  TensorOptions index_options = TensorOptions().dtype(kInt64).device(x.device());
  Tensor row = arange(x.size(-2), index_options).unsqueeze(1);
  Tensor column = arange(x.size(-1), index_options);
  Tensor offset = column - row;
  Tensor drop = lower ? gt(offset, diagonal) : lt(offset, diagonal);
  return masked_fill(x, drop, 0);
}

// ---- roll ----

// Rolls one dim by cat of its two pieces; nullopt when the shift is a whole turn.
std::optional<Tensor> roll_dim(const Tensor& x, int64_t shift, int64_t d) {
  int64_t n = x.size(d);
  if (n == 0) return std::nullopt;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return std::nullopt;
  return cat({x.narrow(d, n - s, s), x.narrow(d, 0, n - s)}, d);
}

}  // namespace

// ---- repeat, tile, repeat_interleave ----

// x viewed with a size-1 dim before each of its dims, expanded to the repeat
// counts, then merged: the reshape copies, and the gradient sums over repeats
// through expand's backward.
Tensor Tensor::repeat(IntArrayRef repeats) const {
  GD_CHECK(static_cast<int64_t>(repeats.size()) >= dim(),
           "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const size_t lead = repeats.size() - static_cast<size_t>(dim());
  DimVector padded(lead, 1), split, expanded, result;
  for (int64_t s : sizes()) padded.push_back(s);
  for (size_t i = 0; i < repeats.size(); ++i) result.push_back(repeats[i] * padded[i]);
  for (size_t i = 0; i < repeats.size(); ++i)
    GD_CHECK(repeats[i] >= 0, fmt::format("Trying to create tensor with negative dimension {}: {}", result[i],
                                          shape_to_string(result)));
  for (size_t i = 0; i < repeats.size(); ++i) {
    split.push_back(1);
    split.push_back(padded[i]);
    expanded.push_back(repeats[i]);
    expanded.push_back(padded[i]);
  }
  return unaliased(reshape(split).expand(expanded).reshape(result), *this);
}

// tile pads the repeat list with leading 1s where repeat needs the tensor's rank.
Tensor tile(const Tensor& x, IntArrayRef dims) {
  DimVector repeats;
  for (int64_t i = static_cast<int64_t>(dims.size()); i < x.dim(); ++i) repeats.push_back(1);
  for (int64_t r : dims) repeats.push_back(r);
  return x.repeat(repeats);
}
Tensor Tensor::tile(IntArrayRef dims) const { return gradiens::tile(*this, dims); }

// Each element repeated in place: a size-`repeats` dim after `dim`, expanded and merged.
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  GD_CHECK(repeats >= 0, "repeats can not be negative");
  if (dim) check_has_dims(x, *dim);
  Tensor input = dim ? x : x.flatten();
  int64_t d = dim ? wrap_dim(*dim, input.dim(), "repeat_interleave") : 0;
  DimVector expanded = input.sizes().dims();
  expanded.insert(expanded.begin() + d + 1, repeats);
  return unaliased(input.unsqueeze(d + 1).expand(expanded).flatten(d, d + 1), x);
}
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  return x.repeat_interleave(repeats, dim);
}

Tensor repeat_interleave(const Tensor& repeats) {
  GD_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  return arange(repeats.numel(), TensorOptions().dtype(kInt64).device(repeats.device())).repeat_interleave(repeats, 0);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  return gradiens::repeat_interleave(*this, repeats, dim);
}

// Per-element counts: the source index of every output position along `dim`,
// gathered (so the gradient is gather's scatter_add).
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim) const {
  if (dim) check_has_dims(*this, *dim);
  Tensor input = dim ? *this : flatten();
  int64_t d = dim ? wrap_dim(*dim, input.dim(), "repeat_interleave") : 0;
  const int64_t n = input.size(d);
  GD_CHECK(repeats.dim() <= 1, "repeats must be 0-dim or 1-dim tensor");
  bool broadcast = repeats.numel() == 1;
  GD_CHECK(broadcast || repeats.numel() == n, "repeats must have the same size as input along dim");
  GD_CHECK(repeats.dtype() == kInt64 || repeats.dtype() == kInt32,
           fmt::format("\"repeat_interleave_cpu\" not implemented for '{}'", c10_type_name(repeats.dtype())));
  // The counts are read on the host (a cuda tensor of repeats is copied there).
  Tensor counts = repeats.device().is_cuda() ? repeats.to(kInt64).cpu() : repeats.to(kInt64).contiguous();
  const int64_t* c = counts.cpu_data_ptr<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < counts.numel(); ++i) GD_CHECK(c[i] >= 0, "repeats can not be negative");
  for (int64_t i = 0; i < n; ++i) total += c[broadcast ? 0 : i];
  const bool on_device = device().is_cuda();
  Tensor index = empty({total}, TensorOptions().dtype(kInt64).device(on_device ? Device(kCPU) : device()));
  int64_t* p = index.cpu_data_ptr<int64_t>();
  for (int64_t i = 0, k = 0; i < n; ++i)
    for (int64_t r = 0; r < c[broadcast ? 0 : i]; ++r) p[k++] = i;
  if (on_device) index = index.to(device());  // made on the host, then copied
  DimVector index_shape(static_cast<size_t>(input.dim()), 1), out_shape = input.sizes().dims();
  index_shape[d] = total;
  out_shape[d] = total;
  return gradiens::gather(input, d, index.reshape(index_shape).expand(out_shape));
}

// ---- flip, roll ----

Tensor flip(const Tensor& x, IntArrayRef dims) { return apply<Flip>(x, flip_dims(x, dims)); }
Tensor Tensor::flip(IntArrayRef dims) const { return gradiens::flip(*this, dims); }

// Without dims the tensor is rolled as if flattened.
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  GD_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) return roll(x.flatten(), shifts, {0}).reshape(x.sizes());
  GD_CHECK(shifts.size() == dims.size(),
           fmt::format("shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(), dims.size()));
  check_has_dims(x, dims[0]);
  Tensor out = x;
  bool copied = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (auto rolled = roll_dim(out, shifts[i], wrap_dim(dims[i], x.dim(), "roll"))) {
      out = *rolled;
      copied = true;
    }
  }
  return copied ? out : x.clone();
}
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return gradiens::roll(*this, shifts, dims); }

// ---- cumsum, cumprod ----

Tensor cumsum(const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim(), "cumsum");
  return apply<Cumsum>(cumulative_input(x), d);
}
Tensor cumprod(const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim(), "cumprod");
  return apply<Cumprod>(cumulative_input(x), d);
}
Tensor Tensor::cumsum(int64_t dim) const { return gradiens::cumsum(*this, dim); }
Tensor Tensor::cumprod(int64_t dim) const { return gradiens::cumprod(*this, dim); }

// ---- tril, triu ----

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, true, "tril"); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, false, "triu"); }
Tensor Tensor::tril(int64_t diagonal) const { return gradiens::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return gradiens::triu(*this, diagonal); }

}  // namespace gradiens
