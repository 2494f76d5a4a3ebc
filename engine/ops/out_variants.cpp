// The out= forms of the arithmetic ops (add_out, sub_out, mul_out, div_out):
// the out-of-place op computed without history, then written into `out`.
#include <fmt/format.h>

#include <functional>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens {

namespace {

// libtorch's order: the autograd refusal first, then the write into `out`
// (resized to the result, as libtorch's out= kernels do), which follows the
// in-place rules (an inference tensor outside InferenceMode is refused).
Tensor& write_out(std::string_view op, Tensor& out, std::initializer_list<Tensor> inputs,
                  const std::function<Tensor()>& compute) {
  if (GradMode::is_enabled())
    for (const Tensor& t : inputs)
      GD_CHECK(!t.requires_grad(), fmt::format("{}(): functions with out=... arguments don't support automatic "
                                               "differentiation, but one of the arguments requires grad.",
                                               op));
  Tensor result;
  {
    NoGradGuard no_grad;
    result = compute();
  }
  if (!(out.sizes() == result.sizes())) out.resize_(result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return write_out("add", out, {a, b}, [&] { return add(a, b, alpha); });
}

Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return write_out("sub", out, {a, b}, [&] { return sub(a, b, alpha); });
}

Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return write_out("mul", out, {a, b}, [&] { return mul(a, b); });
}

Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return write_out("div", out, {a, b}, [&] { return div(a, b); });
}

}  // namespace gradiens
