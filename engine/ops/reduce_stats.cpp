// Statistical reductions: var and std (with Bessel's `correction`), the vector
// norm for any p, and a stable logsumexp. var and logsumexp are composite;
// norm and the square root inside std are primitives whose backward is masked
// where the result is 0, as in PyTorch.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/reduce_util.h"
#include "kernels/math_ops.h"
#include "kernels/reduce.h"

namespace gradiens {

namespace {

using kernels::NormKind;
using kernels::norm_kind;

IntArrayRef optional_dims(const std::optional<std::vector<int64_t>>& dims) {
  return dims ? IntArrayRef(*dims) : IntArrayRef();
}

// std = sqrt(var) with PyTorch's gradient at zero variance: 0, not 0 * inf = NaN.
struct StdFromVar {
  static constexpr std::string_view name = "StdBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& variance) {
    Tensor y = sqrt(variance);
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [y] = ctx.saved<1>();
    Tensor at_zero = eq(y, 0);
    return {where(at_zero, 0.0, g / (where(at_zero, 1.0, y) * 2))};
  }
};

// ||x||_p over dims, accumulated in double. p = 0 counts the nonzero elements;
// +-inf take the largest/smallest |x| (a NaN wins); an empty slice gives 0.
struct Norm {
  static constexpr std::string_view name = "NormBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& x, double p, DimVector dims, bool keepdim) {
    Tensor out = empty(reduced_shape(x.sizes(), dims, keepdim), x.options());
    auto layout = reduction_layout(x, dims);
    kernels::vector_norm(p, x.dtype(), x.data_ptr(), layout, out.data_ptr(), cuda_seam::device_of(out), "norm");
    if (ctx.is_recording()) {
      ctx.save_for_backward(x, out);
      ctx.real = p;
      ctx.shape = x.sizes().dims();
      ctx.ints = dims;
      ctx.scalar = Scalar(keepdim);
    }
    return out;
  }
  // PyTorch's norm_backward, with every division guarded so that the masked
  // branch never computes 0/0 (which would turn into NaN one derivative later).
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [x, out] = ctx.saved<2>();
    const double p = ctx.real;
    const DimVector& dims = ctx.ints;
    bool keepdim = ctx.scalar.to<bool>();
    Tensor gk = unsqueeze_reduced(g, ctx.shape, dims, keepdim);
    Tensor nk = unsqueeze_reduced(out, ctx.shape, dims, keepdim);
    Tensor norm_zero = eq(nk, 0);
    Tensor n_safe = where(norm_zero, 1.0, nk);
    switch (norm_kind(p)) {
      case NormKind::Zero: return {zeros_like(x)};
      case NormKind::One: return {sign(x) * gk};
      case NormKind::Two: return {where(norm_zero, 0.0, gk * x / n_safe)};
      case NormKind::Inf:
      case NormKind::NegInf: {
        Tensor ax = abs(x);
        Tensor hit = eq(ax, nk) | isnan(ax);
        Tensor count = sum(hit, dims, true).to(g.dtype());
        return {sign(x) * where(hit, gk / count, 0.0)};
      }
      case NormKind::General: break;
    }
    if (p < 1) {
      // |x|^(p-1) is infinite at 0: those elements get 0.
      Tensor x_zero = eq(x, 0);
      Tensor scaled = where(x_zero, 0.0, sign(x) * pow(where(x_zero, 1.0, abs(x)), p - 1));
      return {scaled * gk * pow(nk, 1 - p)};
    }
    Tensor scaled = p < 2 ? sign(x) * pow(abs(x), p - 1) : x * pow(abs(x), p - 2);
    return {scaled * where(norm_zero, 0.0, gk / pow(n_safe, p - 1))};
  }
};

}  // namespace

// Two-pass: the mean first, then the squared deviations; a divisor of
// max(0, N - correction) that is 0 gives inf (or NaN for 0/0), as in PyTorch.
Tensor var(const Tensor& x, std::optional<std::vector<int64_t>> dims, double correction, bool keepdim) {
  GD_CHECK(x.is_floating_point(), "std and var only support floating point and complex dtypes");
  // float16/bfloat16 compute in float32 and round once (Note [Reduced floats compute in float32]).
  if (is_reduced_floating_point(x.dtype()))
    return var(x.to(kFloat32), std::move(dims), correction, keepdim).to(x.dtype());
  DimVector d = reduction_dims(x, optional_dims(dims), "var");
  double n = static_cast<double>(reduced_count(x, d));
  Tensor diff = x - mean(x, d, true);
  return sum(diff * diff, d, keepdim) / std::max(0.0, n - correction);
}

Tensor std(const Tensor& x, std::optional<std::vector<int64_t>> dims, double correction, bool keepdim) {
  if (is_reduced_floating_point(x.dtype()))
    return std(x.to(kFloat32), std::move(dims), correction, keepdim).to(x.dtype());
  return apply<StdFromVar>(var(x, std::move(dims), correction, keepdim));
}

Tensor var(const Tensor& x, bool unbiased) { return var(x, std::nullopt, unbiased ? 1.0 : 0.0); }
Tensor std(const Tensor& x, bool unbiased) { return std(x, std::nullopt, unbiased ? 1.0 : 0.0); }

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, std::optional<std::vector<int64_t>> dims, double correction,
                                    bool keepdim) {
  const DimVector d = reduction_dims(x, optional_dims(dims), "var_mean");
  return {var(x, dims, correction, keepdim), mean(x, d, keepdim)};
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, std::optional<std::vector<int64_t>> dims, double correction,
                                    bool keepdim) {
  const DimVector d = reduction_dims(x, optional_dims(dims), "std_mean");
  return {std(x, dims, correction, keepdim), mean(x, d, keepdim)};
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, bool unbiased) {
  return var_mean(x, std::nullopt, unbiased ? 1.0 : 0.0);
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, bool unbiased) {
  return std_mean(x, std::nullopt, unbiased ? 1.0 : 0.0);
}
Tensor norm(const Tensor& x, Scalar p, IntArrayRef dims, bool keepdim) {
  GD_CHECK(x.is_floating_point(), fmt::format("norm(): input dtype should be either floating point or complex. Got {} "
                                              "instead.",
                                              c10_type_name(x.dtype())));
  return apply<Norm>(x, p.to_double(), reduction_dims(x, dims, "norm"), keepdim);
}
Tensor norm(const Tensor& x, Scalar p) { return norm(x, p, {}, false); }

// log(sum(exp(x - m))) + m with m the detached max (0 where it is infinite, so
// all -inf gives -inf and +inf gives +inf instead of NaN). Integer inputs are
// computed in float32, as in PyTorch.
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  if (is_reduced_floating_point(x.dtype())) return logsumexp(x.to(kFloat32), dims, keepdim).to(x.dtype());
  Tensor xf = x.is_floating_point() ? x : x.to(get_default_dtype());
  DimVector d = reduction_dims(xf, dims, "logsumexp");
  if (reduced_count(xf, d) == 0) return log(sum(exp(xf), d, keepdim));
  Tensor m = amax(xf.detach(), d, true);
  m = where(isinf(m), 0.0, m);
  Tensor r = log(sum(exp(xf - m), d, keepdim));
  return r + (keepdim ? m : m.reshape(r.sizes()));
}

Tensor Tensor::var(bool unbiased) const { return gradiens::var(*this, unbiased); }
Tensor Tensor::std(bool unbiased) const { return gradiens::std(*this, unbiased); }
Tensor Tensor::var(std::optional<std::vector<int64_t>> dims, double correction, bool keepdim) const {
  return gradiens::var(*this, std::move(dims), correction, keepdim);
}
Tensor Tensor::std(std::optional<std::vector<int64_t>> dims, double correction, bool keepdim) const {
  return gradiens::std(*this, std::move(dims), correction, keepdim);
}
Tensor Tensor::norm(Scalar p) const { return gradiens::norm(*this, p); }
Tensor Tensor::norm(Scalar p, IntArrayRef dims, bool keepdim) const { return gradiens::norm(*this, p, dims, keepdim); }
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const { return gradiens::logsumexp(*this, dims, keepdim); }

}  // namespace gradiens
