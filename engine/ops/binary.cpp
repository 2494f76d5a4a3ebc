// Binary arithmetic (add, sub, mul, div, pow, maximum, minimum) with tensor
// and scalar operands, their in-place forms, and their backward formulas.
// Gradients are returned at the broadcast shape; the engine sums them back.
#include <cmath>
#include <optional>
#include <type_traits>

#include "engine/autograd/function.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "kernels/elementwise.h"

namespace gradiens {

namespace {

// The op each functor names for the kernels, with its alpha (Add, Sub), whether
// the scalar is the first operand (rsub, rdiv, rpow), and x ^ 2 as one multiply.
struct AddFn { Scalar alpha; static constexpr auto kind = kernels::Binary::Add; };
struct SubFn { Scalar alpha; static constexpr auto kind = kernels::Binary::Sub; };
struct MulFn { static constexpr auto kind = kernels::Binary::Mul; };
struct DivFn { static constexpr auto kind = kernels::Binary::Div; };
struct PowFn { static constexpr auto kind = kernels::Binary::Pow; };
struct MaxFn { static constexpr auto kind = kernels::Binary::Maximum; };
struct MinFn { static constexpr auto kind = kernels::Binary::Minimum; };
struct RSubFn { static constexpr auto kind = kernels::Binary::Sub; static constexpr bool reversed = true; };
struct RDivFn { static constexpr auto kind = kernels::Binary::Div; static constexpr bool reversed = true; };
// x ^ 2 as one multiply, which vectorizes (std::pow per element costs ~80x more).
struct SquareFn { static constexpr auto kind = kernels::Binary::Mul; static constexpr bool squares = true; };
struct RPowFn { static constexpr auto kind = kernels::Binary::Pow; static constexpr bool reversed = true; };

template <class F>
Scalar alpha_of(const F& f) {
  if constexpr (requires { f.alpha; }) return f.alpha;
  return Scalar(1);
}

// out = f(a, b) over broadcast a and b in their result type (or into `inplace_out`).
// Bool arithmetic is logical, as in PyTorch: add and maximum are `or`, mul and minimum `and`.
template <class F>
Tensor binary_arith(const Tensor& a, const Tensor& b, std::string_view op, F f, const Tensor& inplace_out = {}) {
  ScalarType dt = result_type(a, b, op);
  BinaryOperands ops = prepare_binary(a, b, dt, dt, op, inplace_out);
  cuda_seam::binary_op(F::kind, ops.out, ops.a, ops.b, alpha_of(f), op);
  return ops.out;
}

// out = f(a, s) for a scalar s, in the result type of (a, s).
template <class F>
Tensor scalar_arith(const Tensor& a, const Scalar& s, std::string_view op, F f, const Tensor& inplace_out = {}) {
  ScalarType dt = inplace_out.defined() ? inplace_out.dtype() : result_type(a, s, op);
  Tensor ac = a.dtype() == dt ? a : a.to(dt);
  Tensor out = inplace_out.defined() ? inplace_out
                                     : empty(a.sizes(), TensorOptions().dtype(dt).device(a.device()).memory_format(
                                                            elementwise_format(a.sizes(), {&a})));
  if constexpr (requires { F::squares; }) {
    kernels::square(dt, cuda_seam::buffer_of(out), cuda_seam::buffer_of(ac), out.sizes(), cuda_seam::device_of(out), op);
  } else {
    constexpr bool scalar_first = requires { F::reversed; };
    if (out.numel() == 1) {  // the per-op overhead path
      kernels::binary_scalar_one<F::kind>(dt, out.data_ptr(), ac.data_ptr(), out.dim(), cuda_seam::number_of(s),
                                          scalar_first, cuda_seam::number_of(alpha_of(f)), cuda_seam::device_of(out),
                                          op);
      return out;
    }
    kernels::binary_scalar(F::kind, dt, cuda_seam::buffer_of(out), cuda_seam::buffer_of(ac), out.sizes(),
                           cuda_seam::number_of(s), scalar_first, cuda_seam::number_of(alpha_of(f)),
                           cuda_seam::device_of(out), op);
  }
  return out;
}

// Integer division follows PyTorch's true division: both operands become floats.
Tensor true_divide_operand(const Tensor& t) { return is_floating_point(t.dtype()) ? t : t.to(get_default_dtype()); }

struct Add {
  static constexpr std::string_view name = "AddBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b, Scalar alpha) {
    ctx.scalar = alpha;
    return binary_arith(a, b, "add", AddFn{alpha});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {g, ctx.needs_input_grad(1) ? (ctx.scalar.to_double() == 1 ? g : g * ctx.scalar) : Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, const Tensor&, Scalar alpha) {
    return add_tangents(t[0], t[1].defined() && alpha.to_double() != 1 ? t[1] * alpha : t[1]);
  }
};

struct Sub {
  static constexpr std::string_view name = "SubBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b, Scalar alpha) {
    ctx.scalar = alpha;
    GD_CHECK(!(a.dtype() == kBool && b.dtype() == kBool),
             "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
             "operator instead.");
    return binary_arith(a, b, "sub", SubFn{alpha});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {g, ctx.needs_input_grad(1) ? (ctx.scalar.to_double() == 1 ? -g : g * (-ctx.scalar.to_double())) : Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, const Tensor&, Scalar alpha) {
    return add_tangents(t[0], t[1].defined() ? t[1] * (-alpha.to_double()) : Tensor());
  }
};

struct Mul {
  static constexpr std::string_view name = "MulBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward(a, b);
    return binary_arith(a, b, "mul", MulFn{});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [a, b] = ctx.saved<2>();
    return {ctx.needs_input_grad(0) ? g * b : Tensor(), ctx.needs_input_grad(1) ? g * a : Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& b) {
    return add_tangents(t[0].defined() ? t[0] * b : Tensor(), t[1].defined() ? t[1] * a : Tensor());
  }
};

struct Div {
  static constexpr std::string_view name = "DivBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward(a, b);
    // True division: integer operands compute in the default float dtype, but a
    // floating operand (e.g. int64 / float64) decides the type as in any promotion.
    ScalarType dt = result_type(a, b, "div");
    if (!is_floating_point(dt)) dt = get_default_dtype();
    return binary_arith(a.to(dt), b.to(dt), "div", DivFn{});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [a, b] = ctx.saved<2>();
    return {ctx.needs_input_grad(0) ? g / b : Tensor(), ctx.needs_input_grad(1) ? -g * a / (b * b) : Tensor()};
  }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor&, const Tensor& b) {
    return add_tangents(t[0], t[1].defined() ? -t[1] * out : Tensor()) / b;
  }
};

struct Pow {
  static constexpr std::string_view name = "PowBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b) {
    Tensor out = binary_arith(a, b, "pow", PowFn{});
    ctx.save_for_backward(a, b, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [a, b, out] = ctx.saved<3>();
    Tensor ga, gb;
    if (ctx.needs_input_grad(0)) ga = where(b == 0, 0.0, g * b * pow(a, b - 1));
    // d/db a^b = a^b log a, taken as 0 where a == 0 and b >= 0 (PyTorch's convention).
    if (ctx.needs_input_grad(1)) gb = where((a == 0) & (b >= 0), 0.0, g * out * log(a));
    return {ga, gb};
  }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor& a, const Tensor& b) {
    return add_tangents(t[0].defined() ? where(b == 0, 0.0, t[0] * b * pow(a, b - 1)) : Tensor(),
                        t[1].defined() ? where((a == 0) & (b >= 0), 0.0, t[1] * out * log(a)) : Tensor());
  }
};

// maximum/minimum: the gradient goes to the larger (smaller) input, split in
// half on ties, as in PyTorch.
template <bool IsMax>
struct Extremum {
  static constexpr std::string_view name = IsMax ? "MaximumBackward0" : "MinimumBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward(a, b);
    return IsMax ? binary_arith(a, b, "maximum", MaxFn{}) : binary_arith(a, b, "minimum", MinFn{});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [a, b] = ctx.saved<2>();
    Tensor a_wins = IsMax ? a > b : a < b;
    Tensor tie = a == b;
    Tensor half = g * 0.5;
    Tensor ga = ctx.needs_input_grad(0) ? where(tie, half, where(a_wins, g, 0.0)) : Tensor();
    Tensor gb = ctx.needs_input_grad(1) ? where(tie, half, where(a_wins, 0.0, g)) : Tensor();
    return {ga, gb};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& b) {
    Tensor ta = tangent_or_zeros(t[0], a), tb = tangent_or_zeros(t[1], b);
    return where(a == b, (ta + tb) * 0.5, where(IsMax ? a > b : a < b, ta, tb));
  }
};

struct AddScalar {
  static constexpr std::string_view name = "AddBackward1";
  static Tensor forward(Ctx&, const Tensor& a, Scalar s) { return scalar_arith(a, s, "add", AddFn{1}); }
  static GradList backward(Ctx&, const Tensor& g) { return {g}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, Scalar) { return t[0]; }
};

struct MulScalar {
  static constexpr std::string_view name = "MulBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& a, Scalar s) {
    ctx.scalar = s;
    return scalar_arith(a, s, "mul", MulFn{});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g * ctx.scalar}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, Scalar s) { return t[0] * s; }
};

struct RSubScalar {  // s - a
  static constexpr std::string_view name = "RsubBackward1";
  static Tensor forward(Ctx&, const Tensor& a, Scalar s) { return scalar_arith(a, s, "rsub", RSubFn{}); }
  static GradList backward(Ctx&, const Tensor& g) { return {-g}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, Scalar) { return -t[0]; }
};

struct RDivScalar {  // s / a
  static constexpr std::string_view name = "DivBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, Scalar s) {
    Tensor out = scalar_arith(true_divide_operand(a), s, "div", RDivFn{});
    ctx.save_for_backward(a, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [a, out] = ctx.saved<2>();
    return {-g * out / a};
  }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor& a, Scalar) { return -t[0] * out / a; }
};

struct PowScalar {  // a ^ s
  static constexpr std::string_view name = "PowBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, Scalar s) {
    ctx.scalar = s;
    ctx.save_for_backward(a);
    if (is_floating_point(a.dtype()) && s.to_double() == 2.0) return scalar_arith(a, s, "pow", SquareFn{});
    return scalar_arith(a, s, "pow", PowFn{});
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [a] = ctx.saved<1>();
    double e = ctx.scalar.to_double();
    if (e == 0) return {zeros_like(a)};
    if (e == 1) return {g};
    if (e == 2) return {g * a * 2.0};
    return {g * e * pow(a, Scalar(e - 1))};
  }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor& a, Scalar s) {
    double e = s.to_double();
    if (e == 0) return zeros_like(out);
    if (e == 1) return t[0];
    if (e == 2) return t[0] * a * 2.0;
    return t[0] * e * pow(a, Scalar(e - 1));
  }
};

struct RPowScalar {  // s ^ a
  static constexpr std::string_view name = "PowBackward2";
  static Tensor forward(Ctx& ctx, const Tensor& a, Scalar s) {
    Tensor out = scalar_arith(a, s, "pow", RPowFn{});
    ctx.scalar = s;
    ctx.save_for_backward(out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [out] = ctx.saved<1>();
    double s = ctx.scalar.to_double();
    if (s == 0) return {where(out == 0, 0.0, g * out * std::log(s))};
    return {g * out * std::log(s)};
  }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor&, Scalar base) {
    double s = base.to_double();
    if (s == 0) return where(out == 0, 0.0, t[0] * out * std::log(s));
    return t[0] * out * std::log(s);
  }
};

}  // namespace

// ---- free functions ----
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) { return apply<Add>(a, b, alpha); }
Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  // A floating alpha makes the product floating even for an integral b (add(x, 2, 0.5) adds 1).
  if (b.is_floating_point() || alpha.is_floating_point())
    return apply<AddScalar>(a, Scalar(b.to_double() * alpha.to_double()));
  return apply<AddScalar>(a, b.is_boolean() ? b : Scalar(b.to_long() * alpha.to_long()));
}
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) { return apply<Sub>(a, b, alpha); }
Tensor sub(const Tensor& a, Scalar b, Scalar alpha) {
  if (b.is_floating_point() || alpha.is_floating_point()) return add(a, Scalar(-b.to_double() * alpha.to_double()));
  return add(a, Scalar(-b.to_long() * alpha.to_long()));
}
Tensor operator-(Scalar a, const Tensor& b) { return apply<RSubScalar>(b, a); }
Tensor mul(const Tensor& a, const Tensor& b) { return apply<Mul>(a, b); }
Tensor mul(const Tensor& a, Scalar b) { return apply<MulScalar>(a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return apply<Div>(a, b); }
Tensor div(const Tensor& a, Scalar b) {
  Tensor x = true_divide_operand(a);
  return apply<MulScalar>(x, Scalar(1.0 / b.to_double()));
}
Tensor operator/(Scalar a, const Tensor& b) { return apply<RDivScalar>(b, a); }
Tensor pow(const Tensor& base, const Tensor& exponent) { return apply<Pow>(base, exponent); }
Tensor pow(const Tensor& base, Scalar exponent) { return apply<PowScalar>(base, exponent); }
Tensor pow(Scalar base, const Tensor& exponent) { return apply<RPowScalar>(exponent, base); }
Tensor maximum(const Tensor& a, const Tensor& b) { return apply<Extremum<true>>(a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return apply<Extremum<false>>(a, b); }
Tensor max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor min(const Tensor& a, const Tensor& b) { return minimum(a, b); }

// ---- methods ----
Tensor Tensor::add(const Tensor& other, Scalar alpha) const { return gradiens::add(*this, other, alpha); }
Tensor Tensor::add(Scalar other, Scalar alpha) const { return gradiens::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, Scalar alpha) const { return gradiens::sub(*this, other, alpha); }
Tensor Tensor::sub(Scalar other, Scalar alpha) const { return gradiens::sub(*this, other, alpha); }
Tensor Tensor::mul(const Tensor& other) const { return gradiens::mul(*this, other); }
Tensor Tensor::mul(Scalar other) const { return gradiens::mul(*this, other); }
Tensor multiply(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor multiply(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor Tensor::multiply(const Tensor& other) const { return gradiens::mul(*this, other); }
Tensor Tensor::multiply(Scalar other) const { return gradiens::mul(*this, other); }
Tensor Tensor::div(const Tensor& other) const { return gradiens::div(*this, other); }
Tensor Tensor::div(Scalar other) const { return gradiens::div(*this, other); }
Tensor Tensor::pow(const Tensor& exponent) const { return gradiens::pow(*this, exponent); }
Tensor Tensor::pow(Scalar exponent) const { return gradiens::pow(*this, exponent); }
Tensor Tensor::maximum(const Tensor& other) const { return gradiens::maximum(*this, other); }
Tensor Tensor::minimum(const Tensor& other) const { return gradiens::minimum(*this, other); }

// ---- in-place forms: a plain kernel into self, or a recorded rebase ----
namespace {
template <class OutOfPlace, class Kernel>
Tensor& binary_inplace(Tensor& self, const Tensor& other, std::string_view op, OutOfPlace out_of_place, Kernel kernel) {
  if (check_inplace(self, {other}, op)) return commit_inplace(self, out_of_place(self.clone(), other), true);
  if (is_reduced_floating_point(self.dtype()) && result_type(self, other, op) != self.dtype()) {
    // A wider operand (float16 += float32): computed in its dtype and rounded
    // once into self, as PyTorch, rather than rounding the operand to self's first.
    Tensor result = out_of_place(self, other);
    check_inplace_output(self, result.sizes(), result.dtype(), op);
    return commit_inplace(self, result, false);
  }
  binary_arith(self, other, op, kernel, self);
  self.bump_version();
  return self;
}
template <class OutOfPlace, class Kernel>
Tensor& scalar_inplace(Tensor& self, Scalar s, std::string_view op, OutOfPlace out_of_place, Kernel kernel) {
  if (check_inplace(self, {}, op)) return commit_inplace(self, out_of_place(self.clone(), s), true);
  check_inplace_output(self, self.sizes(), result_type(self, s, op), op);
  check_no_internal_overlap(self);
  scalar_arith(self, s, op, kernel, self);
  self.bump_version();
  return self;
}
}  // namespace

Tensor& Tensor::add_(const Tensor& other, Scalar alpha) {
  return binary_inplace(*this, other, "add_", [&](const Tensor& a, const Tensor& b) { return gradiens::add(a, b, alpha); },
                        AddFn{alpha});
}
Tensor& Tensor::add_(Scalar other, Scalar alpha) {
  Scalar s = other.is_floating_point() || alpha.is_floating_point() ? Scalar(other.to_double() * alpha.to_double())
                                                                    : Scalar(other.to_long() * alpha.to_long());
  return scalar_inplace(*this, s, "add_", [](const Tensor& a, Scalar v) { return gradiens::add(a, v); }, AddFn{1});
}
Tensor& Tensor::sub_(const Tensor& other, Scalar alpha) {
  return binary_inplace(*this, other, "sub_", [&](const Tensor& a, const Tensor& b) { return gradiens::sub(a, b, alpha); },
                        SubFn{alpha});
}
Tensor& Tensor::sub_(Scalar other, Scalar alpha) {
  Scalar s = other.is_floating_point() || alpha.is_floating_point() ? Scalar(-other.to_double() * alpha.to_double())
                                                                    : Scalar(-other.to_long() * alpha.to_long());
  return scalar_inplace(*this, s, "sub_", [](const Tensor& a, Scalar v) { return gradiens::add(a, v); }, AddFn{1});
}
Tensor& Tensor::mul_(const Tensor& other) {
  return binary_inplace(*this, other, "mul_", [](const Tensor& a, const Tensor& b) { return gradiens::mul(a, b); }, MulFn{});
}
Tensor& Tensor::mul_(Scalar other) {
  return scalar_inplace(*this, other, "mul_", [](const Tensor& a, Scalar v) { return gradiens::mul(a, v); }, MulFn{});
}
Tensor& Tensor::div_(const Tensor& other) {
  check_inplace_output(*this, sizes(), kFloat32, "div_");  // true division: an integer self cannot hold it
  return binary_inplace(*this, other, "div_", [](const Tensor& a, const Tensor& b) { return gradiens::div(a, b); }, DivFn{});
}
Tensor& Tensor::div_(Scalar other) {
  check_inplace_output(*this, sizes(), kFloat32, "div_");  // true division: an integer self cannot hold it
  return mul_(Scalar(1.0 / other.to_double()));
}
Tensor& Tensor::pow_(Scalar exponent) {
  return scalar_inplace(*this, exponent, "pow_", [](const Tensor& a, Scalar v) { return gradiens::pow(a, v); }, PowFn{});
}

}  // namespace gradiens
