// softmax and log_softmax along a dim, stable (the line's max is subtracted
// before exp, so 1e4 in float32 or 1e300 in float64 stays finite), with fused
// backward ops that have backward formulas of their own.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/lines.h"
#include "engine/ops/reduce_util.h"
#include "kernels/reduce.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vector_math.h"

namespace gradiens {

namespace {

// float32 sums accumulate in double: a long line then loses no mass to rounding.
template <class T>
using SoftmaxAcc = std::conditional_t<std::is_same_v<T, float>, double, T>;

// Contiguous x with d not the last dim, viewed as [outer, n, inner]: each
// n x inner block is done with loops running along the contiguous inner dim
// and one vectorized exp over the block, instead of n-strided lines.
template <bool Log, class T>
void softmax_blocks(const T* src, T* dst, int64_t outer, int64_t n, int64_t inner) {
  int64_t grain = std::max<int64_t>(1, kernels::cpu::kElementwiseGrainSize / (4 * n * inner));
  kernels::cpu::parallel_for(0, outer, grain, [&](int64_t begin, int64_t end) {
    std::vector<T> max(static_cast<size_t>(inner));
    std::vector<SoftmaxAcc<T>> total(static_cast<size_t>(inner));
    for (int64_t block = begin; block < end; ++block) {
      const T* x = src + block * n * inner;
      T* y = dst + block * n * inner;
      std::fill(max.begin(), max.end(), -std::numeric_limits<T>::infinity());
      std::fill(total.begin(), total.end(), 0);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) max[i] = x[j * inner + i] > max[i] ? x[j * inner + i] : max[i];
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) y[j * inner + i] = x[j * inner + i] - max[i];
      kernels::cpu::unary_math(kernels::cpu::UnaryMath::Exp, y, y, n * inner);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) total[i] += y[j * inner + i];
      if constexpr (Log) {
        for (int64_t i = 0; i < inner; ++i) total[i] = std::log(total[i]);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i)
            y[j * inner + i] = (x[j * inner + i] - max[i]) - static_cast<T>(total[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) total[i] = 1 / total[i];
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i) y[j * inner + i] *= static_cast<T>(total[i]);
      }
    }
  });
}

// y = exp(x - max) / sum, or for Log: y = (x - max) - log(sum). A NaN anywhere
// in a line makes the whole line NaN, as do +inf and an all -inf line (PyTorch's
// results). The output line holds exp(x - max) until the sum is known; along a
// contiguous line the exp is the vectorized one.
// softmax on a cuda device from device ops: the line's max (a deterministic
// reduction), exp of the shifted line, and its sum.
template <bool Log>
Tensor cuda_softmax(const Tensor& x, int64_t d) {
  NoGradGuard no_grad;
  if (x.numel() == 0) return empty(x.sizes(), x.options());
  const DimVector dims{d};
  Tensor max = empty(reduced_shape(x.sizes(), dims, true), x.options());
  kernels::reduce(kernels::Reduce::Max, x.dtype(), x.data_ptr(), reduction_layout(x, dims), max.dtype(), max.data_ptr(),
                  cuda_seam::device_of(max), "softmax");
  Tensor shifted = x - max;
  if constexpr (Log) return shifted - log(exp(shifted).sum({d}, true));
  Tensor e = exp(shifted);
  return e / e.sum({d}, true);
}

template <bool Log>
Tensor softmax_kernel(const Tensor& x, int64_t d) {
  // Note [Reduced floats compute in float32]
  if (is_reduced_floating_point(x.dtype())) return softmax_kernel<Log>(x.to(kFloat32), d).to(x.dtype());
  if (x.device().is_cuda()) return cuda_softmax<Log>(x, d);
  Tensor out = empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  LineGeometry in = line_geometry(x), o = line_geometry(out);
  const int64_t n = in.sizes[d], in_stride = in.strides[d], out_stride = o.strides[d];
  dispatch_floating(x.dtype(), Log ? "log_softmax" : "softmax", [&]<class T>() {
    const T* src = x.cpu_data_ptr<T>();
    T* dst = out.cpu_data_ptr<T>();
    int64_t inner = 1;
    for (size_t i = static_cast<size_t>(d) + 1; i < in.sizes.size(); ++i) inner *= in.sizes[i];
    if (x.is_contiguous() && inner > 1) {
      softmax_blocks<Log>(src, dst, x.numel() / (n * inner), n, inner);
      return;
    }
    for_each_line<2>(in.sizes, d, {in.strides, o.strides}, 4 * n, [&](const std::array<int64_t, 2>& offsets) {
      const T* xl = src + offsets[0];
      T* yl = dst + offsets[1];
      T max = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < n; ++j) max = xl[j * in_stride] > max ? xl[j * in_stride] : max;
      for (int64_t j = 0; j < n; ++j) yl[j * out_stride] = xl[j * in_stride] - max;
      if (out_stride == 1) kernels::cpu::unary_math(kernels::cpu::UnaryMath::Exp, yl, yl, n);
      else
        for (int64_t j = 0; j < n; ++j) yl[j * out_stride] = std::exp(yl[j * out_stride]);
      SoftmaxAcc<T> total = 0;
      for (int64_t j = 0; j < n; ++j) total += yl[j * out_stride];
      if constexpr (Log) {
        T log_total = static_cast<T>(std::log(total));
        for (int64_t j = 0; j < n; ++j) yl[j * out_stride] = (xl[j * in_stride] - max) - log_total;
      } else {
        T inverse = static_cast<T>(1 / total);
        for (int64_t j = 0; j < n; ++j) yl[j * out_stride] *= inverse;
      }
    });
  });
  return out;
}

// The fused backward: softmax:     out = y * (g - sum(g * y))
//                     log_softmax: out = g - exp(y) * sum(g)
template <bool Log>
Tensor softmax_backward_kernel(const Tensor& g, const Tensor& y, int64_t d) {
  GD_INTERNAL_ASSERT(g.dtype() == y.dtype() && g.sizes() == y.sizes(),
                     "softmax backward got a gradient that does not match the output");
  if (is_reduced_floating_point(y.dtype()))
    return softmax_backward_kernel<Log>(g.to(kFloat32), y.to(kFloat32), d).to(y.dtype());
  if (y.device().is_cuda()) {
    // The same formulas as the CPU loops below, from device ops.
    NoGradGuard no_grad;
    if constexpr (Log) return g - exp(y) * g.sum({d}, true);
    else return y * (g - (g * y).sum({d}, true));
  }
  Tensor out = empty(y.sizes(), y.options());
  if (y.numel() == 0) return out;
  LineGeometry lg = line_geometry(g), ly = line_geometry(y), lo = line_geometry(out);
  const int64_t n = ly.sizes[d], gs = lg.strides[d], ys = ly.strides[d], os = lo.strides[d];
  dispatch_floating(y.dtype(), Log ? "log_softmax_backward" : "softmax_backward", [&]<class T>() {
    const T* gp = g.cpu_data_ptr<T>();
    const T* yp = y.cpu_data_ptr<T>();
    T* op = out.cpu_data_ptr<T>();
    for_each_line<3>(ly.sizes, d, {lg.strides, ly.strides, lo.strides}, 3 * n,
                     [&](const std::array<int64_t, 3>& offsets) {
                       const T* gl = gp + offsets[0];
                       const T* yl = yp + offsets[1];
                       T* ol = op + offsets[2];
                       SoftmaxAcc<T> total = 0;
                       if constexpr (Log) {
                         for (int64_t j = 0; j < n; ++j) total += gl[j * gs];
                         for (int64_t j = 0; j < n; ++j)
                           ol[j * os] = gl[j * gs] - std::exp(yl[j * ys]) * static_cast<T>(total);
                       } else {
                         for (int64_t j = 0; j < n; ++j) total += static_cast<SoftmaxAcc<T>>(gl[j * gs]) * yl[j * ys];
                         for (int64_t j = 0; j < n; ++j)
                           ol[j * os] = yl[j * ys] * (gl[j * gs] - static_cast<T>(total));
                       }
                     });
  });
  return out;
}

// Sums over d keeping it (a 0-dim tensor sums over everything, i.e. itself).
Tensor sum_line(const Tensor& t, int64_t d) {
  DimVector dims;
  if (t.dim() > 0) dims.push_back(d);
  return sum(t, dims, true);
}

// The fused backward as an op (g, y) -> out, so create_graph reaches every order.
// softmax:     d out / d g = softmax_backward(gg, y) (the Jacobian is symmetric),
//              d out / d y = gg * (g - sum(g * y)) - g * sum(gg * y).
// log_softmax: d out / d g = gg - sum(gg * exp(y)),  d out / d y = -gg * exp(y) * sum(g).
template <bool Log>
struct SoftmaxBackwardData {
  static constexpr std::string_view name = Log ? "LogSoftmaxBackwardDataBackward0" : "SoftmaxBackwardDataBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& g, const Tensor& y, int64_t d) {
    ctx.save_for_backward(g, y);
    ctx.ints = {d};
    return softmax_backward_kernel<Log>(g, y, d);
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    auto [g, y] = ctx.saved<2>();
    const int64_t d = ctx.ints[0];
    Tensor grad_g, grad_y;
    if constexpr (Log) {
      Tensor p = exp(y);
      if (ctx.needs_input_grad(0)) grad_g = gg - sum_line(gg * p, d);
      if (ctx.needs_input_grad(1)) grad_y = -gg * p * sum_line(g, d);
    } else {
      if (ctx.needs_input_grad(0)) grad_g = apply<SoftmaxBackwardData<false>>(gg, y, d);
      if (ctx.needs_input_grad(1)) grad_y = gg * (g - sum_line(g * y, d)) - g * sum_line(gg * y, d);
    }
    return {grad_g, grad_y};
  }
};

template <bool Log>
struct Softmax {
  static constexpr std::string_view name = Log ? "LogSoftmaxBackward0" : "SoftmaxBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, int64_t d) {
    Tensor y = softmax_kernel<Log>(x, d);
    ctx.save_for_backward(y);
    ctx.ints = {d};
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {apply<SoftmaxBackwardData<Log>>(g, ctx.saved(0), ctx.ints[0])};
  }
};

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim(), "softmax");
  return apply<Softmax<false>>(x, d);
}
Tensor log_softmax(const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim(), "log_softmax");
  return apply<Softmax<true>>(x, d);
}
Tensor Tensor::softmax(int64_t dim) const { return gradiens::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return gradiens::log_softmax(*this, dim); }

}  // namespace gradiens
