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
#include "kernels/softmax.h"

namespace gradiens {

namespace {

template <bool Log>
Tensor softmax_kernel(const Tensor& x, int64_t d) {
  // Note [Reduced floats compute in float32]
  if (is_reduced_floating_point(x.dtype())) return softmax_kernel<Log>(x.to(kFloat32), d).to(x.dtype());
  Tensor out = empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  LineGeometry in = line_geometry(x), o = line_geometry(out);
  kernels::softmax(Log, x.dtype(), x.data_ptr(), in.strides, x.is_contiguous(), out.data_ptr(), o.strides, in.sizes, d,
                   cuda_seam::device_of(out));
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
  Tensor out = empty(y.sizes(), y.options());
  if (y.numel() == 0) return out;
  LineGeometry lg = line_geometry(g), ly = line_geometry(y), lo = line_geometry(out);
  kernels::softmax_backward(Log, y.dtype(), g.data_ptr(), lg.strides, y.data_ptr(), ly.strides, out.data_ptr(),
                            lo.strides, ly.sizes, d, cuda_seam::device_of(out));
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
