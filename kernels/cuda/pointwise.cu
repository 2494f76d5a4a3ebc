// The CUDA kernels of ops.h for the one-pass elementwise ops that need more
// than a binary op (predicates, clamp, softplus) and the factories that fill a
// tensor from its index (eye, linspace, a floating arange), each with the
// formula of its kernels::cpu or engine twin so the values agree bit for bit
// where the CPU's are exact (factories, predicates, clamp).
#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {
namespace {

template <class T>
constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

template <class T>
struct PredicateElement {
  Predicate pred;
  bool* out;
  const T* in;
  __device__ void operator()(const int64_t (&offsets)[2]) const {
    const auto v = load_as_opmath(in[offsets[1]]);
    bool result = false;
    switch (pred) {
      case Predicate::LogicalNot: result = !(v != decltype(v)(0)); break;  // NaN is nonzero, so true
      case Predicate::IsNan: result = v != v; break;
      case Predicate::IsInf:
        if constexpr (is_floating_v<T>) result = isinf(v);
        break;
      case Predicate::IsFinite:
        if constexpr (is_floating_v<T>) result = isfinite(v);
        else result = true;
        break;
    }
    out[offsets[0]] = result;
  }
};

// PyTorch's clamp: NaN stays NaN, a NaN bound gives NaN, then the lower
// bound, then the upper one (so lo > hi gives hi).
template <class T>
struct ClampElement {
  T* out;
  const T* in;
  opmath_type<T> lo, hi;
  bool has_lo, has_hi;
  __device__ void operator()(const int64_t (&offsets)[2]) const {
    const T stored = in[offsets[1]];
    opmath_type<T> v = load_as_opmath(stored);
    if (v != v) {
      out[offsets[0]] = stored;
      return;
    }
    if (has_lo && (v < lo || lo != lo)) v = lo;
    if (has_hi && (v > hi || hi != hi)) v = hi;
    out[offsets[0]] = convert_value<T>(v);
  }
};

// softplus(x) = (max(z, 0) + log1p(exp(-|z|))) / beta with z = beta x, and x
// itself where z > threshold; in float for the 16-bit floats, as on the CPU.
template <class T>
struct SoftplusElement {
  T* out;
  const T* in;
  opmath_type<T> beta, threshold;
  __device__ void operator()(const int64_t (&offsets)[2]) const {
    using A = opmath_type<T>;
    const T stored = in[offsets[1]];
    const A v = load_as_opmath(stored);
    const A z = multiply_rounded(v, beta);
    if (z > threshold) {
      out[offsets[0]] = stored;
      return;
    }
    const A positive_part = z < A(0) ? A(0) : z;
    out[offsets[0]] = convert_value<T>(add_rounded(positive_part, math_log1p(math_exp(-math_abs(z)))) / beta);
  }
};

template <class T>
struct EyeElement {
  T* out;
  int64_t columns;
  __device__ void operator()(int64_t i) const {
    const int64_t row = i / columns;
    out[i] = convert_value<T>(i - row * columns == row ? 1 : 0);
  }
};

// The engine's linspace (engine/ops/factories.cpp): the first half counts up
// from start, the second down from end, in double, rounded once into T.
template <class T>
struct LinspaceElement {
  T* out;
  double start, end, step;
  int64_t steps;
  __device__ void operator()(int64_t i) const {
    const double value = i < steps / 2 ? add_rounded(start, multiply_rounded(step, static_cast<double>(i)))
                                       : add_rounded(end, -multiply_rounded(step, static_cast<double>(steps - 1 - i)));
    out[i] = convert_value<T>(value);
  }
};

// arange's values (engine/ops/factories.cpp): start + i * step in int64
// (wrapping) when start, end and step are all integers, in double otherwise,
// rounded once into T.
template <class T>
struct RangeElement {
  T* out;
  double start, step;
  int64_t integer_start, integer_step;
  bool integral;
  __device__ void operator()(int64_t i) const {
    if (integral) {
      const uint64_t value = static_cast<uint64_t>(integer_start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(integer_step);
      out[i] = convert_value<T>(static_cast<int64_t>(value));
    } else {
      out[i] = convert_value<T>(add_rounded(start, multiply_rounded(static_cast<double>(i), step)));
    }
  }
};

// Calls f.template operator()<T>() for every dtype but bool (the CPU's
// dispatch_numeric_and_reduced).
template <class F>
decltype(auto) dispatch_cuda_numeric(ScalarType dtype, std::string_view op, F&& f) {
  if (dtype == ScalarType::Bool) throw_unsupported_cuda_dtype(op, dtype);
  return dispatch_cuda_all(dtype, op, std::forward<F>(f));
}

// A bound as the kernel's compute type: an integer one keeps every bit of an int64.
template <class T>
opmath_type<T> bound_of(const Number& number) {
  using A = opmath_type<T>;
  if constexpr (is_reduced_float_v<T>) {
    // Through T, as the CPU's lo->to<T>(): the bound rounded to the stored type.
    return load_as_opmath(number.floating ? convert_value<T>(number.real) : convert_value<T>(number.integer));
  } else {
    return number.floating ? convert_value<A>(number.real) : static_cast<A>(number.integer);
  }
}

}  // namespace

// ---- host entry points ------------------------------------------------------------

void predicate(Predicate pred, ScalarType dtype, const Strided& out, const Strided& in, const Shape& shape,
               StreamHandle stream) {
  check_shape(shape, "predicate");
  const int64_t* const strides[2] = {out.strides, in.strides};
  dispatch_cuda_all(dtype, "predicate", [&]<class T>() {
    launch_strided_elementwise<2>(
        shape, strides, PredicateElement<T>{pred, static_cast<bool*>(out.data), static_cast<const T*>(in.data)},
        stream);
  });
}

void clamp(ScalarType dtype, const Strided& out, const Strided& in, const Shape& shape, const Number* lo,
           const Number* hi, StreamHandle stream) {
  check_shape(shape, "clamp");
  const int64_t* const strides[2] = {out.strides, in.strides};
  dispatch_cuda_numeric(dtype, "clamp", [&]<class T>() {
    using A = opmath_type<T>;
    launch_strided_elementwise<2>(
        shape, strides,
        ClampElement<T>{static_cast<T*>(out.data), static_cast<const T*>(in.data), lo ? bound_of<T>(*lo) : A(0),
                        hi ? bound_of<T>(*hi) : A(0), lo != nullptr, hi != nullptr},
        stream);
  });
}

void softplus(ScalarType dtype, const Strided& out, const Strided& in, const Shape& shape, const Number& beta,
              const Number& threshold, StreamHandle stream) {
  check_shape(shape, "softplus");
  const int64_t* const strides[2] = {out.strides, in.strides};
  dispatch_cuda_floating_and_reduced(dtype, "softplus", [&]<class T>() {
    using A = opmath_type<T>;
    launch_strided_elementwise<2>(shape, strides,
                                  SoftplusElement<T>{static_cast<T*>(out.data), static_cast<const T*>(in.data),
                                                     beta.to<A>(), threshold.to<A>()},
                                  stream);
  });
}

void eye(ScalarType dtype, void* out, int64_t rows, int64_t columns, StreamHandle stream) {
  GD_CHECK(rows >= 0 && columns >= 0, "eye: negative size");
  if (rows == 0 || columns == 0) return;
  dispatch_cuda_all(dtype, "eye", [&]<class T>() {
    launch_contiguous_elementwise(rows * columns, EyeElement<T>{static_cast<T*>(out), columns}, stream);
  });
}

void linspace(ScalarType dtype, void* out, double start, double end, int64_t steps, StreamHandle stream) {
  GD_CHECK(steps >= 0, "linspace: number of steps must be non-negative");
  if (steps == 0) return;
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  dispatch_cuda_numeric(dtype, "linspace", [&]<class T>() {
    launch_contiguous_elementwise(steps, LinspaceElement<T>{static_cast<T*>(out), start, end, step, steps}, stream);
  });
}

void range(ScalarType dtype, void* out, int64_t n, const Number& start, const Number& step, bool integral,
           StreamHandle stream) {
  GD_CHECK(n >= 0, "arange: element count must be non-negative, got " + std::to_string(n));
  if (n == 0) return;
  dispatch_cuda_numeric(dtype, "arange", [&]<class T>() {
    launch_contiguous_elementwise(n,
                                  RangeElement<T>{static_cast<T*>(out), start.to_double(), step.to_double(),
                                                  start.to<int64_t>(), step.to<int64_t>(), integral},
                                  stream);
  });
}

}  // namespace gradiens::kernels::cuda
