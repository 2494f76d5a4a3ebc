// The typed scalar function of each kernels::Binary op on the CPU, and the
// one-element form of arithmetic with a scalar: inline, because a one-element
// op (a PINN's or an optimizer's scalar bookkeeping) costs little more than
// its dispatch.
#pragma once

#include <cmath>
#include <string_view>

#include "kernels/device_ref.h"
#include "kernels/math_ops.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cpu {

// Calls run(f) with f the typed scalar function (A, A) -> A of op; Add and Sub
// with alpha 1 compute x + y and x - y (x + 1 * y rounds the same).
template <class A, class Run>
void with_binary_function(Binary op, const Number& alpha, Run&& run) {
  switch (op) {
    case Binary::Add: {
      const A al = alpha.to<A>();
      if (al == A(1)) return run([](A x, A y) -> A { return x + y; });
      return run([al](A x, A y) -> A { return x + al * y; });
    }
    case Binary::Sub: {
      const A al = alpha.to<A>();
      if (al == A(1)) return run([](A x, A y) -> A { return x - y; });
      return run([al](A x, A y) -> A { return x - al * y; });
    }
    case Binary::Mul: return run([](A x, A y) -> A { return x * y; });
    case Binary::Div: return run([](A x, A y) -> A { return x / y; });
    case Binary::Pow: return run([](A x, A y) -> A { return static_cast<A>(std::pow(x, y)); });
    case Binary::Maximum:
      return run([](A x, A y) -> A { return (x != x || x > y) ? x : (y != y ? y : (x < y ? y : x)); });
    case Binary::Minimum:
      return run([](A x, A y) -> A { return (x != x || x < y) ? x : (y != y ? y : (x > y ? y : x)); });
    case Binary::Atan2: return run([](A x, A y) -> A { return static_cast<A>(std::atan2(x, y)); });
  }
}

// Bool arithmetic is logical, as in PyTorch: add and maximum are `or`, mul and
// minimum `and`. False for the ops that have no bool form.
constexpr bool logical_kind(Binary op, bool& is_or) {
  is_or = op == Binary::Add || op == Binary::Maximum;
  return is_or || op == Binary::Mul || op == Binary::Minimum;
}

// The typed scalar function of a compile-time op (as with_binary_function).
template <Binary Op, class A>
auto binary_function(const Number& alpha) {
  if constexpr (Op == Binary::Add || Op == Binary::Sub) {
    const A al = alpha.to<A>();
    if constexpr (Op == Binary::Add) return [al](A x, A y) -> A { return al == A(1) ? x + y : x + al * y; };
    else return [al](A x, A y) -> A { return al == A(1) ? x - y : x - al * y; };
  } else if constexpr (Op == Binary::Mul) {
    return [](A x, A y) -> A { return x * y; };
  } else if constexpr (Op == Binary::Div) {
    return [](A x, A y) -> A { return x / y; };
  } else if constexpr (Op == Binary::Pow) {
    return [](A x, A y) -> A { return static_cast<A>(std::pow(x, y)); };
  } else if constexpr (Op == Binary::Maximum) {
    return [](A x, A y) -> A { return (x != x || x > y) ? x : (y != y ? y : (x < y ? y : x)); };
  } else if constexpr (Op == Binary::Minimum) {
    return [](A x, A y) -> A { return (x != x || x < y) ? x : (y != y ? y : (x > y ? y : x)); };
  } else {
    return [](A x, A y) -> A { return static_cast<A>(std::atan2(x, y)); };
  }
}

// *out = Op(*a, scalar), or Op(scalar, *a) when scalar_first, in the compute
// type of dtype (float32 for float16/bfloat16); bool is logical. Always
// inlined: float64 and float32 go straight to their arithmetic.
template <Binary Op>
[[gnu::always_inline]] inline void binary_scalar_one(ScalarType dtype, void* out, const void* a, const Number& scalar,
                                                     bool scalar_first, const Number& alpha, std::string_view name) {
  auto compute = [&]<class T>() {
    using A = opmath_t<T>;
    const A v = scalar.to<A>();
    const A x = A(*static_cast<const T*>(a));
    auto kernel = binary_function<Op, A>(alpha);
    *static_cast<T*>(out) = scalar_first ? kernel(v, x) : kernel(x, v);
  };
  if (dtype == kFloat64) return compute.template operator()<double>();
  if (dtype == kFloat32) return compute.template operator()<float>();
  bool is_or = false;
  if (dtype == kBool && logical_kind(Op, is_or)) {
    const bool v = scalar.to<bool>(), x = *static_cast<const bool*>(a);
    *static_cast<bool*>(out) = is_or ? (x || v) : (x && v);
    return;
  }
  dispatch_numeric_and_reduced(dtype, name, compute);
}

// binary_scalar_one for an op known at run time.
inline void binary_scalar_one(Binary op, ScalarType dtype, void* out, const void* a, const Number& scalar,
                              bool scalar_first, const Number& alpha, std::string_view name) {
  switch (op) {
    case Binary::Add: return binary_scalar_one<Binary::Add>(dtype, out, a, scalar, scalar_first, alpha, name);
    case Binary::Sub: return binary_scalar_one<Binary::Sub>(dtype, out, a, scalar, scalar_first, alpha, name);
    case Binary::Mul: return binary_scalar_one<Binary::Mul>(dtype, out, a, scalar, scalar_first, alpha, name);
    case Binary::Div: return binary_scalar_one<Binary::Div>(dtype, out, a, scalar, scalar_first, alpha, name);
    case Binary::Maximum: return binary_scalar_one<Binary::Maximum>(dtype, out, a, scalar, scalar_first, alpha, name);
    case Binary::Minimum: return binary_scalar_one<Binary::Minimum>(dtype, out, a, scalar, scalar_first, alpha, name);
    case Binary::Pow: return binary_scalar_one<Binary::Pow>(dtype, out, a, scalar, scalar_first, alpha, name);
    case Binary::Atan2: return binary_scalar_one<Binary::Atan2>(dtype, out, a, scalar, scalar_first, alpha, name);
  }
}

}  // namespace gradiens::kernels::cpu
