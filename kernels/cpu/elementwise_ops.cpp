// The CPU's named elementwise kernels (kernels/cpu/elementwise_ops.h): each op
// a typed scalar function run by elementwise_kernel.
#include "kernels/cpu/elementwise_ops.h"

#include "kernels/cpu/binary_function.h"

#include <cmath>
#include <type_traits>

namespace gradiens::kernels::cpu {

void binary(Binary op, ScalarType dtype, const ElementwiseIterator& iter, const Number& alpha, std::string_view name) {
  bool is_or = false;
  if (dtype == kBool && logical_kind(op, is_or)) {
    if (is_or) elementwise_kernel<bool, bool, bool>(iter, [](bool x, bool y) { return x || y; });
    else elementwise_kernel<bool, bool, bool>(iter, [](bool x, bool y) { return x && y; });
    return;
  }
  dispatch_numeric_and_reduced(dtype, name, [&]<class T>() {
    using A = opmath_t<T>;  // float16/bfloat16 compute in float32 and round once
    with_binary_function<A>(op, alpha, [&](auto kernel) {
      if constexpr (std::is_same_v<A, T>) elementwise_kernel<T, T, T>(iter, kernel);
      else elementwise_kernel<T, T, T>(iter, [kernel](T x, T y) -> T { return kernel(A(x), A(y)); });
    });
  });
}

void binary_scalar(Binary op, ScalarType dtype, const ElementwiseIterator& iter, const Number& scalar,
                   bool scalar_first, const Number& alpha, std::string_view name) {
  bool is_or = false;
  if (dtype == kBool && logical_kind(op, is_or)) {
    const bool v = scalar.to<bool>();
    if (is_or) elementwise_kernel<bool, bool>(iter, [v](bool x) { return x || v; });
    else elementwise_kernel<bool, bool>(iter, [v](bool x) { return x && v; });
    return;
  }
  // float16/bfloat16 compute in float32 with the scalar as a float32 (PyTorch 2's
  // opmath scalar; 1.13 rounded the scalar to the tensor's dtype first).
  dispatch_numeric_and_reduced(dtype, name, [&]<class T>() {
    using A = opmath_t<T>;
    const A v = scalar.to<A>();
    with_binary_function<A>(op, alpha, [&](auto kernel) {
      if (scalar_first) elementwise_kernel<T, T>(iter, [&](T x) -> T { return kernel(v, A(x)); });
      else elementwise_kernel<T, T>(iter, [&](T x) -> T { return kernel(A(x), v); });
    });
  });
}

void square(ScalarType dtype, const ElementwiseIterator& iter, std::string_view name) {
  // x ^ 2 as one multiply, which vectorizes (std::pow per element costs ~80x more).
  dispatch_numeric_and_reduced(dtype, name, [&]<class T>() {
    using A = opmath_t<T>;
    elementwise_kernel<T, T>(iter, [](T x) -> T { return A(x) * A(x); });
  });
}

void square_one(ScalarType dtype, void* out, const void* a, std::string_view name) {
  dispatch_numeric_and_reduced(dtype, name, [&]<class T>() {
    using A = opmath_t<T>;
    const A x = A(*static_cast<const T*>(a));
    *static_cast<T*>(out) = x * x;
  });
}

void integer_math(UnaryMath op, ScalarType dtype, const ElementwiseIterator& iter, std::string_view name) {
  dispatch_numeric(dtype, name, [&]<class T>() {
    auto run = [&](auto f) { elementwise_kernel<T, T>(iter, [&](T v) { return static_cast<T>(f(v)); }); };
    switch (op) {
      case UnaryMath::Neg: return run([](auto v) { return -v; });
      case UnaryMath::Abs: return run([](auto v) { return v < 0 ? -v : v; });
      case UnaryMath::Sign: return run([](auto v) { return (v > 0) - (v < 0); });
      case UnaryMath::Relu: return run([](auto v) { return v > 0 ? v : decltype(v)(0); });
      default: GD_INTERNAL_ASSERT(false, "integer_math: not an integer op");
    }
  });
}

namespace {
template <class Run>
void with_compare_function(Compare op, Run&& run) {
  switch (op) {
    case Compare::Eq: return run([](auto x, auto y) -> bool { return x == y; });
    case Compare::Ne: return run([](auto x, auto y) -> bool { return x != y; });
    case Compare::Lt: return run([](auto x, auto y) -> bool { return x < y; });
    case Compare::Le: return run([](auto x, auto y) -> bool { return x <= y; });
    case Compare::Gt: return run([](auto x, auto y) -> bool { return x > y; });
    case Compare::Ge: return run([](auto x, auto y) -> bool { return x >= y; });
    case Compare::And: return run([](auto x, auto y) -> bool { return x && y; });
    case Compare::Or: return run([](auto x, auto y) -> bool { return x || y; });
    case Compare::Xor: return run([](auto x, auto y) -> bool { return bool(x) != bool(y); });
  }
}
}  // namespace

void compare(Compare op, ScalarType dtype, const ElementwiseIterator& iter, std::string_view name) {
  dispatch_all(dtype, name, [&]<class T>() {
    with_compare_function(op, [&](auto cmp) { elementwise_kernel<bool, T, T>(iter, [&](T x, T y) { return cmp(x, y); }); });
  });
}

void where(ScalarType dtype, const ElementwiseIterator& iter) {
  dispatch_all(dtype, "where", [&]<class T>() {
    elementwise_kernel<T, bool, T, T>(iter, [](bool c, T x, T y) { return c ? x : y; });
  });
}

void cast(ScalarType dst_dtype, ScalarType src_dtype, const ElementwiseIterator& iter) {
  dispatch_all(dst_dtype, "copy_", [&]<class D>() {
    dispatch_all(src_dtype, "copy_", [&]<class S>() {
      elementwise_kernel<D, S>(iter, [](S v) { return static_cast<D>(v); });
    });
  });
}

void fill(ScalarType dtype, const ElementwiseIterator& iter, const Number& value) {
  dispatch_all(dtype, "fill_", [&]<class T>() {
    T v = value.to<T>();
    elementwise_kernel<T>(iter, [v]() { return v; });
  });
}

}  // namespace gradiens::kernels::cpu
