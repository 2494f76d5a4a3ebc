// Comparisons and logical ops (bool results, no gradient), where, clamp,
// isnan/isinf/isfinite, equal and allclose.
#include <fmt/format.h>

#include "engine/autograd/function.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "engine/type_name.h"
#include "kernels/elementwise.h"

namespace gradiens {

namespace {


// out (bool) = a op b over broadcast a and b, compared in their result type.
Tensor compare(const Tensor& a, const Tensor& b, std::string_view op, kernels::Compare kind) {
  ScalarType dt = result_type(a, b, op);
  BinaryOperands ops = prepare_binary(a, b, dt, kBool, op);
  cuda_seam::compare_op(kind, ops.out, ops.a, ops.b, op);
  return ops.out;
}

Tensor compare(const Tensor& a, const Scalar& s, std::string_view op, kernels::Compare kind) {
  return compare(a, scalar_to_tensor(s, result_type(a, s, op)), op, kind);
}

using kernels::Compare;

Tensor predicate(const Tensor& x, std::string_view op, kernels::Predicate pred) {
  Tensor out = empty(x.sizes(),
                     TensorOptions().dtype(kBool).device(x.device()).memory_format(elementwise_format(x.sizes(), {&x})));
  kernels::predicate(pred, x.dtype(), cuda_seam::buffer_of(out), cuda_seam::buffer_of(x), out.sizes(),
                     cuda_seam::device_of(out), op);
  return out;
}

struct Where {
  static constexpr std::string_view name = "WhereBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& condition, const Tensor& a, const Tensor& b) {
    GD_CHECK(condition.dtype() == kBool,
             fmt::format("where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                         dtype_name(condition.dtype())));
    ctx.extra = {condition};
    ScalarType dt = result_type(a, b, "where");
    DimVector shape = broadcast_shapes(condition.sizes(), broadcast_shapes(a.sizes(), b.sizes()));
    const Tensor* on_device = &a;  // the operand whose device the result takes
    for (const Tensor* t : {&condition, &a, &b})
      if (t->device().is_cuda() && !on_device->device().is_cuda()) on_device = t;
    for (const Tensor* t : {&condition, &a, &b}) common_device(*on_device, *t, "where");
    const Device device = on_device->device();
    Tensor out = empty(shape, TensorOptions().dtype(dt).device(device).memory_format(
                                  elementwise_format(shape, {&condition, &a, &b})));
    Tensor ac = a.to(dt), bc = b.to(dt);
    cuda_seam::where_op(out, condition, ac, bc);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    const Tensor& c = ctx.extra[0];
    return {Tensor(), ctx.needs_input_grad(1) ? where(c, g, 0.0) : Tensor(),
            ctx.needs_input_grad(2) ? where(c, 0.0, g) : Tensor()};
  }
};

struct Clamp {
  static constexpr std::string_view name = "ClampBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
    GD_CHECK(lo || hi, "clamp: At least one of 'min' or 'max' must not be None");
    ctx.save_for_backward(x);
    ctx.scalar = lo.value_or(Scalar(0));
    ctx.real = hi ? hi->to_double() : 0;
    ctx.ints = {lo ? 1 : 0, hi ? 1 : 0};
    Tensor out = empty(x.sizes(), x.options());
    const kernels::Number low = cuda_seam::number_of(lo.value_or(Scalar(0)));
    const kernels::Number high = cuda_seam::number_of(hi.value_or(Scalar(0)));
    kernels::clamp(x.dtype(), cuda_seam::buffer_of(out), cuda_seam::buffer_of(x), out.sizes(), lo ? &low : nullptr,
                   hi ? &high : nullptr, cuda_seam::device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [x] = ctx.saved<1>();
    Tensor keep = ones_like(x, TensorOptions().dtype(kBool));
    if (ctx.ints[0]) keep = keep & (x >= ctx.scalar);
    if (ctx.ints[1]) keep = keep & (x <= Scalar(ctx.real));
    return {where(keep, g, 0.0)};
  }
};

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) { return compare(a, b, "eq", Compare::Eq); }
Tensor eq(const Tensor& a, Scalar b) { return compare(a, b, "eq", Compare::Eq); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(a, b, "ne", Compare::Ne); }
Tensor ne(const Tensor& a, Scalar b) { return compare(a, b, "ne", Compare::Ne); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(a, b, "lt", Compare::Lt); }
Tensor lt(const Tensor& a, Scalar b) { return compare(a, b, "lt", Compare::Lt); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(a, b, "le", Compare::Le); }
Tensor le(const Tensor& a, Scalar b) { return compare(a, b, "le", Compare::Le); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(a, b, "gt", Compare::Gt); }
Tensor gt(const Tensor& a, Scalar b) { return compare(a, b, "gt", Compare::Gt); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(a, b, "ge", Compare::Ge); }
Tensor ge(const Tensor& a, Scalar b) { return compare(a, b, "ge", Compare::Ge); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return compare(a, b, "logical_and", Compare::And); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return compare(a, b, "logical_or", Compare::Or); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return compare(a, b, "logical_xor", Compare::Xor); }
Tensor logical_not(const Tensor& x) { return predicate(x, "logical_not", kernels::Predicate::LogicalNot); }
Tensor isnan(const Tensor& x) { return predicate(x, "isnan", kernels::Predicate::IsNan); }
Tensor isinf(const Tensor& x) { return predicate(x, "isinf", kernels::Predicate::IsInf); }
Tensor isfinite(const Tensor& x) { return predicate(x, "isfinite", kernels::Predicate::IsFinite); }

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) { return apply<Where>(condition, a, b); }
Tensor where(const Tensor& condition, Scalar a, const Tensor& b) {
  return where(condition, scalar_to_tensor(a, result_type(b, a, "where")), b);
}
Tensor where(const Tensor& condition, const Tensor& a, Scalar b) {
  return where(condition, a, scalar_to_tensor(b, result_type(a, b, "where")));
}

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  return apply<Clamp>(x, min, max);
}
Tensor clamp_min(const Tensor& x, Scalar min) { return clamp(x, min, std::nullopt); }
Tensor clamp_max(const Tensor& x, Scalar max) { return clamp(x, std::nullopt, max); }

bool equal(const Tensor& a, const Tensor& b) {
  if (!(a.sizes() == b.sizes())) return false;
  return eq(a, b).all().item<bool>();
}

bool Tensor::equal(const Tensor& other) const { return gradiens::equal(*this, other); }

bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return gradiens::allclose(*this, other, rtol, atol, equal_nan);
}

Tensor where(const Tensor& condition, Scalar a, Scalar b) {
  const ScalarType dtype = a.is_floating_point() || b.is_floating_point() ? get_default_dtype()
                           : a.is_boolean() && b.is_boolean()                ? kBool
                                                                              : kInt64;
  return where(condition, scalar_to_tensor(a, dtype), scalar_to_tensor(b, dtype));
}

// PyTorch's isclose: equal elements (infinities included), NaNs when equal_nan,
// and finite |a - b| <= atol + |rtol * b| computed in the tensors' own dtype
// (float32 tensors compare in float32; integer and bool ones in the default dtype).
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  GD_CHECK(a.dtype() == b.dtype(),
           fmt::format("{} did not match {}", c10_type_name(a.dtype()), c10_type_name(b.dtype())));
  GD_CHECK(rtol >= 0, fmt::format("rtol must be greater than or equal to zero, but got {}", rtol));
  GD_CHECK(atol >= 0, fmt::format("atol must be greater than or equal to zero, but got {}", atol));
  NoGradGuard no_grad;
  Tensor close = a == b;
  if (equal_nan && a.is_floating_point()) close = close | (isnan(a) & isnan(b));
  if (rtol != 0 || atol != 0) {
    const bool integral = !a.is_floating_point();  // bool too: compared in the default dtype, without wrapping
    const Tensor x = integral ? a.to(get_default_dtype()) : a;
    const Tensor y = integral ? b.to(get_default_dtype()) : b;
    const Tensor allowed = abs(y * rtol) + atol;
    const Tensor actual = abs(x - y);
    close = close | (isfinite(actual) & (actual <= allowed));
  }
  return close.all().item<bool>();
}

// ---- methods ----
Tensor Tensor::eq(const Tensor& o) const { return gradiens::eq(*this, o); }
Tensor Tensor::eq(Scalar o) const { return gradiens::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return gradiens::ne(*this, o); }
Tensor Tensor::ne(Scalar o) const { return gradiens::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return gradiens::lt(*this, o); }
Tensor Tensor::lt(Scalar o) const { return gradiens::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return gradiens::le(*this, o); }
Tensor Tensor::le(Scalar o) const { return gradiens::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return gradiens::gt(*this, o); }
Tensor Tensor::gt(Scalar o) const { return gradiens::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return gradiens::ge(*this, o); }
Tensor Tensor::ge(Scalar o) const { return gradiens::ge(*this, o); }
Tensor Tensor::logical_not() const { return gradiens::logical_not(*this); }
Tensor Tensor::logical_and(const Tensor& o) const { return gradiens::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return gradiens::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return gradiens::logical_xor(*this, o); }
Tensor Tensor::isnan() const { return gradiens::isnan(*this); }
Tensor Tensor::isinf() const { return gradiens::isinf(*this); }
Tensor Tensor::isfinite() const { return gradiens::isfinite(*this); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return gradiens::where(condition, *this, other);
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return gradiens::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(Scalar min) const { return gradiens::clamp_min(*this, min); }
Tensor Tensor::clamp_max(Scalar max) const { return gradiens::clamp_max(*this, max); }
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  bool record = check_inplace(*this, {}, "clamp_");
  return commit_inplace(*this, gradiens::clamp(record ? clone() : *this, min, max), record);
}

}  // namespace gradiens
