// Order statistics: sort, argsort, topk, kthvalue, median and quantile. A
// kernel finds the indices; the values are gathered at them, so every gradient
// is gather's (a differentiable scatter_add). NaN orders above every number, as
// in PyTorch, and equal values keep their original order: where PyTorch leaves
// the index of a tie unspecified (topk, kthvalue) we return the stable one.
// The selections are kernels/sorting.h's; on a cuda device every selection is
// a full stable sort of the lines, which orders exactly as the CPU's comparators.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "engine/autograd/function.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/lines.h"
#include "kernels/sorting.h"

namespace gradiens {

namespace {

using kernels::Selection;

// On a cuda device: the positions of every line of x along d (a 0-dim x counts
// as [1]) in the order of a stable sort, as an int64 tensor of x's sizes.
// float16/bfloat16 sort as float32 and bool as uint8, which order the same.
Tensor sorted_positions_on_device(const Tensor& x, int64_t d, bool descending) {
  NoGradGuard no_grad;
  Tensor lines = x.detach();
  if (lines.dim() == 0) lines = lines.reshape({1});
  if (is_reduced_floating_point(lines.dtype())) lines = lines.to(kFloat32);
  if (lines.dtype() == kBool) lines = lines.to(kUInt8);
  const int64_t last = lines.dim() - 1;
  lines = lines.transpose(d, last).contiguous();  // each line contiguous, along the last dim
  Tensor positions = empty(lines.sizes(), TensorOptions().dtype(kInt64).device(x.device()));
  const int64_t length = lines.size(last);
  if (positions.numel() == 0) return positions.transpose(d, last);
  kernels::sort_lines(lines.dtype(), lines.data_ptr(), lines.numel() / length, length, descending,
                      static_cast<int64_t*>(positions.data_ptr()), cuda_seam::device_of(positions));
  return positions.transpose(d, last);
}

// The int64 indices of the selected elements of every line of x along d, in a
// contiguous tensor of x's sizes (a 0-dim x counts as [1]) with d resized to `count`.
// Only sort accepts bool tensors, as in PyTorch.
Tensor select_indices(const Tensor& x, int64_t d, int64_t count, bool descending, Selection how,
                      std::string_view op) {
  LineGeometry in = line_geometry(x);
  DimVector out_sizes = in.sizes;
  out_sizes[d] = how == Selection::Nth ? 1 : count;
  Tensor out = empty(out_sizes, TensorOptions().dtype(kInt64).device(x.device()));
  const int64_t n = in.sizes[d];
  if (out.numel() == 0 || n == 0) return out;
  DimVector out_strides = contiguous_strides(out_sizes);
  if (x.dtype() == kBool && how != Selection::Sort) throw_unsupported_dtype(op, x.dtype());
  if (x.device().is_cuda()) {
    Tensor sorted = sorted_positions_on_device(x, d, descending);
    Tensor picked = how == Selection::Nth ? sorted.narrow(d, count - 1, 1) : sorted.narrow(d, 0, count);
    return picked.contiguous();
  }
  kernels::select_positions(how, x.dtype(), in.sizes, d, count, descending, {out.data_ptr(), out_sizes, out_strides},
                            {x.data_ptr(), in.sizes, in.strides}, cuda_seam::device_of(x), op);
  return out;
}

// The size of the dim a line op works along (1 for a 0-dim tensor).
int64_t line_size(const Tensor& x, int64_t d) { return x.dim() == 0 ? 1 : x.size(d); }

// PyTorch's error for a reduction over a dim of size 0.
void check_nonempty_dim(const Tensor& x, int64_t d, std::string_view op) {
  GD_CHECK(line_size(x, d) != 0, fmt::format("{}(): Expected reduction dim {} to have non-zero size.", op, d));
}

// Gathers the values at `index` (shaped like x with d of size 1) and drops d
// unless keepdim: the (values, indices) pair of kthvalue and median(dim).
std::tuple<Tensor, Tensor> values_at(const Tensor& x, int64_t d, Tensor index, bool keepdim) {
  if (x.dim() == 0) index = index.reshape({});
  Tensor values = gather(x, d, index);
  if (!keepdim && x.dim() > 0) return {values.squeeze(d), index.squeeze(d)};
  return {values, index};
}

// Lower median of each line; a line holding NaN has NaN as its median, at its first NaN.
Tensor median_indices(const Tensor& x, int64_t d) {
  LineGeometry in = line_geometry(x);
  DimVector out_sizes = in.sizes;
  out_sizes[d] = 1;
  Tensor out = empty(out_sizes, TensorOptions().dtype(kInt64).device(x.device()));
  const int64_t n = in.sizes[d];
  if (out.numel() == 0) return out;
  DimVector out_strides = contiguous_strides(out_sizes);
  if (x.device().is_cuda()) {
    // The lower median in sorted order, or the first NaN (NaNs sort last, in
    // their original order) when the line holds any.
    if (x.dtype() == kBool) throw_unsupported_dtype("median", x.dtype());
    NoGradGuard no_grad;
    Tensor lines = x.dim() == 0 ? x.detach().reshape({1}) : x.detach();
    Tensor sorted = sorted_positions_on_device(lines, d, false);
    Tensor nan_count = isnan(lines).sum({d}, true);
    Tensor place = where(gt(nan_count, 0), nan_count * -1 + n, Scalar((n - 1) / 2));
    return gather(sorted, d, place).contiguous();
  }
  kernels::median_positions(x.dtype(), in.sizes, d, {out.data_ptr(), out_sizes, out_strides},
                            {x.data_ptr(), in.sizes, in.strides}, cuda_seam::device_of(x));
  return out;
}

// median() over all elements. Its gradient is split evenly among the elements
// equal to the median (NaNs when it is NaN), as PyTorch's is: no one index is
// the median among ties.
struct MedianAll {
  static constexpr std::string_view name = "MedianBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor out = empty({}, x.options());
    if (x.numel() == 0) {
      GD_CHECK(x.is_floating_point(), "median(): input tensor must be non-empty");
      out.fill_(std::numeric_limits<double>::quiet_NaN());
    } else {
      Tensor flat = x.reshape({-1});
      out.copy_(flat.gather(0, median_indices(flat, 0)).reshape({}));
    }
    ctx.save_for_backward(x, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [x, out] = ctx.saved<2>();
    Tensor hit = eq(x, out) | (isnan(x) & isnan(out));
    Tensor count = sum(hit).to(g.dtype());
    return {where(hit, g / count, 0.0)};
  }
};

// ---- quantile ----

enum class Interpolation { Linear, Lower, Higher, Midpoint, Nearest };

Interpolation parse_interpolation(std::string_view name) {
  if (name == "linear") return Interpolation::Linear;
  if (name == "lower") return Interpolation::Lower;
  if (name == "higher") return Interpolation::Higher;
  if (name == "midpoint") return Interpolation::Midpoint;
  if (name == "nearest") return Interpolation::Nearest;
  throw Error(fmt::format(
      "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {}", name));
}

// Where each q falls in a sorted line of n: the indices below and above and the
// weight of the one above. Computed in x's dtype as PyTorch does (rank = q * (n - 1),
// nearest rounds half to even), so the selected elements match it.
struct QuantileRanks {
  Tensor below, above, weight;
};
QuantileRanks quantile_ranks(const Tensor& q, int64_t n, Interpolation mode) {
  if (q.device().is_cuda()) {  // a few numbers: computed on the host, then copied
    QuantileRanks r = quantile_ranks(q.detach().cpu(), n, mode);
    return {r.below.to(q.device()), r.above.to(q.device()), r.weight.to(q.device())};
  }
  Tensor qc = q.detach().reshape({-1}).contiguous();
  const int64_t count = qc.numel();
  TensorOptions index_options = TensorOptions().dtype(kInt64).device(q.device());
  QuantileRanks r{empty({count}, index_options), empty({count}, index_options), empty({count}, qc.options())};
  int64_t* below = r.below.cpu_data_ptr<int64_t>();
  int64_t* above = r.above.cpu_data_ptr<int64_t>();
  dispatch_floating(qc.dtype(), "quantile", [&]<class T>() {
    const T* qs = qc.cpu_data_ptr<T>();
    T* weight = r.weight.cpu_data_ptr<T>();
    for (int64_t i = 0; i < count; ++i) {
      T rank = qs[i] * static_cast<T>(n - 1);
      if (mode == Interpolation::Lower) rank = std::floor(rank);
      else if (mode == Interpolation::Higher) rank = std::ceil(rank);
      else if (mode == Interpolation::Nearest) rank = std::nearbyint(rank);
      below[i] = static_cast<int64_t>(rank);
      above[i] = static_cast<int64_t>(std::ceil(rank));
      weight[i] = mode == Interpolation::Midpoint ? T(0.5) : rank - static_cast<T>(below[i]);
    }
  });
  return r;
}

// q is 1-D (scalar_q: it was a number or a 0-dim tensor, and the q dim is dropped).
Tensor quantile_impl(const Tensor& x, const Tensor& q, std::optional<int64_t> dim, bool keepdim, Interpolation mode,
                     bool scalar_q) {
  GD_CHECK(x.numel() > 0, "quantile() input tensor must be non-empty");
  GD_CHECK(q.dim() <= 1, "quantile() q must be a scalar or 1D tensor");
  GD_CHECK(x.dtype() == kFloat32 || x.dtype() == kFloat64,
           "quantile() input tensor must be either float or double dtype");
  GD_CHECK(x.dtype() == q.dtype(), "quantile() q tensor must be same dtype as the input tensor");
  GD_CHECK(x.device() == q.device(), "quantile() q tensor must be on the same device as the input tensor");
  GD_CHECK(logical_and(ge(q, 0), le(q, 1)).all().item<bool>(), "quantile() q values must be in the range [0, 1]");

  // Lines to take quantiles of, along the last dim; out_shape as PyTorch builds it.
  DimVector out_shape;
  Tensor lines;
  if (dim) {
    int64_t d = wrap_dim(*dim, x.dim(), "quantile");
    if (x.dim() == 0) {
      lines = x.reshape({1});
    } else {
      DimVector order;
      for (int64_t i = 0; i < x.dim(); ++i) {
        if (i != d) order.push_back(i);
        if (i != d || keepdim) out_shape.push_back(i == d ? 1 : x.size(i));
      }
      order.push_back(d);
      lines = x.permute(order);
    }
  } else {
    lines = x.reshape({-1});
    if (keepdim) out_shape = DimVector(static_cast<size_t>(x.dim()), 1);
  }
  const int64_t nq = q.numel();
  if (!scalar_q) out_shape.insert(out_shape.begin(), nq);

  Tensor sorted = std::get<0>(sort(lines, -1));
  const int64_t n = sorted.size(-1);
  QuantileRanks ranks = quantile_ranks(q, n, mode);
  // A line holding NaN takes its last element (a NaN): its quantiles are NaN.
  Tensor nan_line = isnan(sorted).any(-1, true);
  DimVector index_shape = sorted.sizes().dims();
  index_shape.back() = nq;
  Tensor result = gather(sorted, -1, where(nan_line, n - 1, ranks.below).expand(index_shape));
  if (mode == Interpolation::Linear || mode == Interpolation::Midpoint) {
    Tensor upper = gather(sorted, -1, where(nan_line, n - 1, ranks.above).expand(index_shape));
    // PyTorch's lerp: from the nearer end, so a weight of 0 or 1 gives that end exactly.
    const Tensor& w = ranks.weight;
    Tensor diff = upper - result;
    result = where(lt(w, 0.5), result + w * diff, upper - diff * (1.0 - w));
  }
  // (lines..., nq) -> (nq, lines...) -> the output shape.
  DimVector to_front{result.dim() - 1};
  for (int64_t i = 0; i + 1 < result.dim(); ++i) to_front.push_back(i);
  return result.permute(to_front).reshape(out_shape);
}

}  // namespace

// ---- sort, argsort, topk ----

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  int64_t d = wrap_dim(dim, x.dim(), "sort");
  Tensor index = select_indices(x, d, line_size(x, d), descending, Selection::Sort, "sort").reshape(x.sizes());
  return {gather(x, d, index), index};
}
Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  int64_t d = wrap_dim(dim, x.dim(), "argsort");
  return select_indices(x, d, line_size(x, d), descending, Selection::Sort, "argsort").reshape(x.sizes());
}

// The result is always sorted; `sorted = false` only allows any order in PyTorch.
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  int64_t d = wrap_dim(dim, x.dim(), "topk");
  GD_CHECK(k >= 0 && k <= line_size(x, d), "selected index k out of range");
  Tensor index = select_indices(x, d, k, largest, Selection::Partial, "topk");
  if (x.dim() == 0 && k == 1) index = index.reshape({});
  return {gather(x, d, index), index};
}

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return gradiens::sort(*this, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const { return gradiens::argsort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return gradiens::topk(*this, k, dim, largest, sorted);
}

// ---- kthvalue, median ----

std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, x.dim(), "kthvalue");
  check_nonempty_dim(x, d, "kthvalue");
  GD_CHECK(k >= 1 && k <= line_size(x, d),
           fmt::format("kthvalue(): selected number k out of range for dimension {}", d));
  return values_at(x, d, select_indices(x, d, k, false, Selection::Nth, "kthvalue"), keepdim);
}

Tensor median(const Tensor& x) { return apply<MedianAll>(x); }
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, x.dim(), "median");
  check_nonempty_dim(x, d, "median");
  return values_at(x, d, median_indices(x, d), keepdim);
}

std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return gradiens::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::median() const { return gradiens::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const {
  return gradiens::median(*this, dim, keepdim);
}

// ---- quantile ----

Tensor quantile(const Tensor& x, double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) {
  GD_CHECK(q >= 0 && q <= 1, fmt::format("quantile() q must be in the range [0, 1] but got {}", q));
  Interpolation mode = parse_interpolation(interpolation);
  ScalarType q_dtype = x.is_floating_point() ? x.dtype() : kFloat64;
  return quantile_impl(x, full({1}, q, TensorOptions().dtype(q_dtype).device(x.device())), dim, keepdim, mode, true);
}
Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return gradiens::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor quantile(const Tensor& x, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return x.quantile(q, dim, keepdim, interpolation);
}

Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                        std::string_view interpolation) const {
  Interpolation mode = parse_interpolation(interpolation);
  return quantile_impl(*this, q.dim() == 0 ? q.reshape({1}) : q, dim, keepdim, mode, q.dim() == 0);
}

}  // namespace gradiens
