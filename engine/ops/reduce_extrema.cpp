// Product and extremum reductions: prod, amax/amin (and max()/min() over
// everything), max(dim)/min(dim) returning (values, indices), argmax/argmin.
// NaN is the largest and the smallest value, as in PyTorch.
#include <fmt/format.h>

#include <type_traits>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/reduce_util.h"
#include "kernels/reduce.h"

namespace gradiens {

namespace {

// prod over dims. Note [Prod backward with zeros]: with no zero in a slice the
// gradient is g * prod / x. With zeros, the gradient at a zero is the product of
// the others: p_safe (the product with zeros replaced by 1) when it is the only
// zero, p_safe * (the other zero) when there are two, 0 with more. Elsewhere it
// stays g * prod / x, which is 0 but keeps its derivative through prod. Written
// this way the formula is exact to second order, so gradgradcheck holds at zeros.
struct Prod {
  static constexpr std::string_view name = "ProdBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& x, DimVector dims, bool keepdim) {
    Tensor out = empty(reduced_shape(x.sizes(), dims, keepdim), x.options());
    auto layout = reduction_layout(x, dims);
    kernels::reduce(kernels::Reduce::Prod, x.dtype(), x.data_ptr(), layout, out.dtype(), out.data_ptr(),
                    cuda_seam::device_of(out), "prod");
    if (ctx.is_recording()) {
      ctx.save_for_backward(x, out);
      ctx.shape = x.sizes().dims();
      ctx.ints = dims;
      ctx.real = keepdim ? 1 : 0;
      ctx.scalar = Scalar(any(eq(x, 0)).item<bool>());
    }
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [x, out] = ctx.saved<2>();
    const DimVector& dims = ctx.ints;
    bool keepdim = ctx.real != 0;
    Tensor gk = unsqueeze_reduced(g, ctx.shape, dims, keepdim);
    Tensor pk = unsqueeze_reduced(out, ctx.shape, dims, keepdim);
    if (!ctx.scalar.to<bool>()) return {gk * pk / x};
    Tensor zero = eq(x, 0);
    Tensor zero_count = sum(zero, dims, true);
    Tensor x_safe = where(zero, 1.0, x);
    Tensor p_safe = apply<Prod>(x_safe, dims, true);
    Tensor zeros_sum = sum(where(zero, x, 0.0), dims, true);  // the other zero, when there are two
    Tensor at_zero = where(eq(zero_count, 1), gk * p_safe, where(eq(zero_count, 2), gk * p_safe * (zeros_sum - x), 0.0));
    return {where(zero, at_zero, gk * pk / x_safe)};
  }
};

// amax/amin over dims; Full marks max()/min() over everything (PyTorch's names).
// The gradient is split evenly among the elements equal to the result (NaNs
// count as equal to a NaN result; PyTorch 1.13's amax gives NaN everywhere
// there, its max() splits as here).
template <bool IsMax, bool Full>
struct Extremum {
  static constexpr std::string_view name =
      Full ? (IsMax ? "MaxBackward1" : "MinBackward1") : (IsMax ? "AmaxBackward0" : "AminBackward0");
  static Tensor forward(Ctx& ctx, const Tensor& x, DimVector dims, bool keepdim) {
    Tensor out = empty(reduced_shape(x.sizes(), dims, keepdim), x.options());
    auto layout = reduction_layout(x, dims);
    kernels::reduce(IsMax ? kernels::Reduce::Max : kernels::Reduce::Min, x.dtype(), x.data_ptr(), layout, out.dtype(),
                    out.data_ptr(), cuda_seam::device_of(out), IsMax ? "amax" : "amin");
    if (ctx.is_recording()) {
      ctx.save_for_backward(x, out);
      ctx.shape = x.sizes().dims();
      ctx.ints = dims;
      ctx.real = keepdim ? 1 : 0;
    }
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [x, out] = ctx.saved<2>();
    bool keepdim = ctx.real != 0;
    Tensor gk = unsqueeze_reduced(g, ctx.shape, ctx.ints, keepdim);
    Tensor ok = unsqueeze_reduced(out, ctx.shape, ctx.ints, keepdim);
    Tensor hit = eq(x, ok) | (isnan(x) & isnan(ok));
    Tensor count = sum(hit, ctx.ints, true).to(g.dtype());
    return {where(hit, gk / count, 0.0)};
  }
};

// PyTorch's errors for reducing nothing: over everything of an empty tensor, or
// over a dim of size 0.
void check_nonempty_reduction(const Tensor& x, const DimVector& dims, bool all_dims, std::string_view op) {
  if (all_dims) {
    GD_CHECK(x.numel() != 0, fmt::format("{}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                                         "the reduction dim with the 'dim' argument.",
                                         op));
  }
  for (int64_t d : dims)
    GD_CHECK(x.sizes()[d] != 0, fmt::format("{}(): Expected reduction dim {} to have non-zero size.", op, d));
}

template <bool IsMax, bool Full>
Tensor extremum(const Tensor& x, IntArrayRef dims, bool keepdim, std::string_view op) {
  DimVector d = reduction_dims(x, dims, op);
  check_nonempty_reduction(x, d, dims.empty(), op);
  return apply<Extremum<IsMax, Full>>(x, d, keepdim);
}

// Index of the first extremum along `dim` (int64); a 0-dim x gives 0. With
// `values`, the same kernel also writes the extremum there.
template <bool IsMax>
Tensor arg_extremum(const Tensor& x, int64_t dim, bool keepdim, bool allow_bool, std::string_view op,
                    Tensor* values = nullptr) {
  DimVector dims;
  if (x.dim() > 0) dims.push_back(dim);
  check_nonempty_reduction(x, dims, false, op);
  const DimVector shape = reduced_shape(x.sizes(), dims, keepdim);
  Tensor out = empty(shape, TensorOptions().dtype(kInt64).device(x.device()));
  if (values) *values = empty(shape, x.options());
  auto layout = reduction_layout(x, dims);
  kernels::arg_extremum(IsMax, x.dtype(), x.data_ptr(), layout, static_cast<int64_t*>(out.data_ptr()),
                        values ? values->data_ptr() : nullptr, allow_bool, cuda_seam::device_of(out), op);
  return out;
}

// max(dim)/min(dim): the values and (into *indices) their positions from one
// kernel. The gradient reaches the element at the index only, as gather's
// does (the same scatter_add, so every order is differentiable).
template <bool IsMax>
struct ExtremumAlongDim {
  static constexpr std::string_view name = IsMax ? "MaxBackward0" : "MinBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, int64_t d, bool keepdim, Tensor* indices) {
    Tensor values;
    *indices = arg_extremum<IsMax>(x, d, keepdim, true, IsMax ? "max" : "min", &values);
    if (ctx.is_recording()) {
      ctx.save_for_backward(*indices);
      ctx.shape = x.sizes().dims();
      ctx.ints = {d, keepdim || x.dim() == 0 ? 1 : 0};
    }
    return values;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    const int64_t d = ctx.ints[0];
    const bool kept = ctx.ints[1] != 0;
    return {scatter_add(zeros(ctx.shape, g.options()), d, kept ? index : index.unsqueeze(d),
                        kept ? g : g.unsqueeze(d))};
  }
};

template <bool IsMax>
std::tuple<Tensor, Tensor> extremum_dim(const Tensor& x, int64_t dim, bool keepdim, std::string_view op) {
  Tensor indices;
  Tensor values = apply<ExtremumAlongDim<IsMax>>(x, wrap_dim(dim, x.dim(), op), keepdim, &indices);
  return {values, indices};
}

template <bool IsMax>
Tensor arg_extremum_api(const Tensor& x, std::optional<int64_t> dim, bool keepdim, std::string_view op) {
  if (dim) return arg_extremum<IsMax>(x, wrap_dim(*dim, x.dim(), op), keepdim, false, op);
  GD_CHECK(x.numel() != 0, fmt::format("{}(): Expected reduction dim to be specified for input.numel() == 0.", op));
  Tensor flat = arg_extremum<IsMax>(x.reshape({-1}), 0, false, false, op);
  if (!keepdim) return flat;
  return flat.reshape(DimVector(static_cast<size_t>(x.dim()), 1));
}

}  // namespace

// Integer and bool inputs multiply in int64, as in PyTorch; `dtype` casts first.
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype) {
  Tensor xc = dtype ? x.to(*dtype) : is_integral(x.dtype(), true) ? x.to(kInt64) : x;
  return apply<Prod>(xc, reduction_dims(xc, {}, "prod"), false);
}
Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  Tensor xc = dtype ? x.to(*dtype) : is_integral(x.dtype(), true) ? x.to(kInt64) : x;
  return apply<Prod>(xc, reduction_dims(xc, {dim}, "prod"), keepdim);
}

Tensor max(const Tensor& x) { return extremum<true, true>(x, {}, false, "max"); }
Tensor min(const Tensor& x) { return extremum<false, true>(x, {}, false, "min"); }
Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) { return extremum<true, false>(x, dims, keepdim, "amax"); }
Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) { return extremum<false, false>(x, dims, keepdim, "amin"); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum_dim<true>(x, dim, keepdim, "max");
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum_dim<false>(x, dim, keepdim, "min");
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum_api<true>(x, dim, keepdim, "argmax");
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum_api<false>(x, dim, keepdim, "argmin");
}

Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return gradiens::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return gradiens::prod(*this, dim, keepdim, dtype);
}
Tensor Tensor::max() const { return gradiens::max(*this); }
Tensor Tensor::min() const { return gradiens::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return gradiens::max(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return gradiens::min(*this, dim, keepdim); }
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return gradiens::amax(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return gradiens::amin(*this, dims, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return gradiens::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return gradiens::argmin(*this, dim, keepdim); }

}  // namespace gradiens
