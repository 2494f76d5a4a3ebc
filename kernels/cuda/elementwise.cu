// The elementwise CUDA kernels of ops.h: fill, copy with dtype conversion,
// unary math, binary arithmetic, comparisons, where and the fused backward
// kernels. Each formula repeats its kernels::cpu twin op for op, so float64
// results agree with the CPU to the last ulp or few of CUDA's libm.
#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {
namespace {

void check_count(int64_t n, const char* op) {
  GD_CHECK(n >= 0, std::string(op) + ": element count must be non-negative, got " + std::to_string(n));
}

// Same-size unsigned type, for ops that only move bits (fill, same-dtype copy, where).
template <size_t kBytes>
using bits_type = std::conditional_t<
    kBytes == 1, uint8_t,
    std::conditional_t<kBytes == 2, uint16_t, std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;

template <class F>
decltype(auto) dispatch_by_element_size(ScalarType dtype, F&& f) {
  switch (element_size(dtype)) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    default: return f.template operator()<uint64_t>();
  }
}

// ---- fill -----------------------------------------------------------------------

template <class Bits>
struct FillElement {
  Bits* out;
  Bits value;
  __device__ void operator()(int64_t i) const { out[i] = value; }
};

// ---- copy -----------------------------------------------------------------------

template <class To, class From>
struct ConvertElement {
  To* dst;
  const From* src;
  __device__ void operator()(const int64_t (&offsets)[2]) const {
    dst[offsets[0]] = convert_value<To>(src[offsets[1]]);
  }
};

template <class Bits>
struct MoveElement {
  Bits* dst;
  const Bits* src;
  __device__ void operator()(const int64_t (&offsets)[2]) const { dst[offsets[0]] = src[offsets[1]]; }
};

// ---- unary math -----------------------------------------------------------------
// Edge values as kernels/math_ops.h lists them, each matching the fix-ups of
// kernels/cpu/vector_math.cpp.

// Note [Stable sigmoid] (kernels/cpu/vector_math.cpp): with e = exp(-|x|) in
// [0, 1], sigmoid(|x|) = 1 / (1 + e) and sigmoid(-|x|) = e / (1 + e).
template <class T>
__device__ T sigmoid_value(T x) {
  const T exp_minus_abs = math_exp(-math_abs(x));
  const T sigmoid_of_abs = T(1) / (T(1) + exp_minus_abs);
  return x < T(0) ? exp_minus_abs * sigmoid_of_abs : sigmoid_of_abs;
}

template <UnaryMath kOp, class T>
__device__ T unary_value(T x) {
  constexpr T kInfinity = std::numeric_limits<T>::infinity();
  if constexpr (kOp == UnaryMath::Exp) return math_exp(x);
  if constexpr (kOp == UnaryMath::Expm1) return x == T(0) ? x : math_expm1(x);  // expm1(-0) = -0
  if constexpr (kOp == UnaryMath::Log) return math_log(x);
  if constexpr (kOp == UnaryMath::Log1p) return math_log1p(x);
  if constexpr (kOp == UnaryMath::Sqrt) return math_sqrt(x);
  if constexpr (kOp == UnaryMath::Rsqrt) return T(1) / math_sqrt(x);  // a true divide, not rsqrt's estimate
  if constexpr (kOp == UnaryMath::Tanh) return math_tanh(x);
  if constexpr (kOp == UnaryMath::Sigmoid) return sigmoid_value(x);
  if constexpr (kOp == UnaryMath::Sin) return math_sin(x);
  if constexpr (kOp == UnaryMath::Cos) return math_cos(x);
  if constexpr (kOp == UnaryMath::Tan) return math_tan(x);
  if constexpr (kOp == UnaryMath::Erf) return math_erf(x);
  if constexpr (kOp == UnaryMath::Abs) return math_abs(x);
  if constexpr (kOp == UnaryMath::Neg) return -x;
  if constexpr (kOp == UnaryMath::Reciprocal) return T(1) / x;
  if constexpr (kOp == UnaryMath::Square) return x * x;
  // Not fmax(x, 0), which drops NaN; relu(-0) = +0 like PyTorch.
  if constexpr (kOp == UnaryMath::Relu) return x <= T(0) ? T(0) : x;
  if constexpr (kOp == UnaryMath::Sign) {
    if (x != x) return x;
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));  // sign(+-0) = +0
  }
  // 0.5 * x * erfc(-x / sqrt 2), which does not cancel for x < 0 as 1 + erf
  // does; at -inf the product is -inf * 0, so the limit -0 is returned.
  if constexpr (kOp == UnaryMath::Gelu) {
    if (x == -kInfinity) return T(-0.0);
    return (x * T(0.5)) * math_erfc(x * T(-0.70710678118654752440));
  }
  if constexpr (kOp == UnaryMath::Silu) {
    if (x == -kInfinity) return T(-0.0);
    return x * sigmoid_value(x);
  }
  // max(x, 0) + log1p(exp(-|x|)): nothing overflows, and for x << 0 log1p
  // keeps the full precision of exp(x).
  if constexpr (kOp == UnaryMath::Softplus) {
    const T positive_part = x <= T(0) ? T(0) : x;
    return positive_part + math_log1p(math_exp(-math_abs(x)));
  }
  if constexpr (kOp == UnaryMath::Floor) return floor(x);
  if constexpr (kOp == UnaryMath::Ceil) return ceil(x);
  if constexpr (kOp == UnaryMath::Round) return rint(x);  // the default rounding mode: halves to even
  if constexpr (kOp == UnaryMath::Trunc) return trunc(x);
}

// float16 and bfloat16 compute in float32 and round once, as on the CPU.
template <UnaryMath kOp, class T>
struct UnaryMathElement {
  const T* in;
  T* out;
  __device__ void operator()(int64_t i) const { out[i] = convert_value<T>(unary_value<kOp>(load_as_opmath(in[i]))); }
};

template <UnaryMath kOp, class T>
void launch_unary_math(const void* in, void* out, int64_t n, StreamHandle stream) {
  launch_contiguous_elementwise(n, UnaryMathElement<kOp, T>{static_cast<const T*>(in), static_cast<T*>(out)},
                                stream);
}

template <class T>
void unary_math_typed(UnaryMath op, const void* in, void* out, int64_t n, StreamHandle stream) {
  switch (op) {
    case UnaryMath::Exp: return launch_unary_math<UnaryMath::Exp, T>(in, out, n, stream);
    case UnaryMath::Expm1: return launch_unary_math<UnaryMath::Expm1, T>(in, out, n, stream);
    case UnaryMath::Log: return launch_unary_math<UnaryMath::Log, T>(in, out, n, stream);
    case UnaryMath::Log1p: return launch_unary_math<UnaryMath::Log1p, T>(in, out, n, stream);
    case UnaryMath::Sqrt: return launch_unary_math<UnaryMath::Sqrt, T>(in, out, n, stream);
    case UnaryMath::Rsqrt: return launch_unary_math<UnaryMath::Rsqrt, T>(in, out, n, stream);
    case UnaryMath::Tanh: return launch_unary_math<UnaryMath::Tanh, T>(in, out, n, stream);
    case UnaryMath::Sigmoid: return launch_unary_math<UnaryMath::Sigmoid, T>(in, out, n, stream);
    case UnaryMath::Sin: return launch_unary_math<UnaryMath::Sin, T>(in, out, n, stream);
    case UnaryMath::Cos: return launch_unary_math<UnaryMath::Cos, T>(in, out, n, stream);
    case UnaryMath::Tan: return launch_unary_math<UnaryMath::Tan, T>(in, out, n, stream);
    case UnaryMath::Erf: return launch_unary_math<UnaryMath::Erf, T>(in, out, n, stream);
    case UnaryMath::Abs: return launch_unary_math<UnaryMath::Abs, T>(in, out, n, stream);
    case UnaryMath::Neg: return launch_unary_math<UnaryMath::Neg, T>(in, out, n, stream);
    case UnaryMath::Reciprocal: return launch_unary_math<UnaryMath::Reciprocal, T>(in, out, n, stream);
    case UnaryMath::Square: return launch_unary_math<UnaryMath::Square, T>(in, out, n, stream);
    case UnaryMath::Relu: return launch_unary_math<UnaryMath::Relu, T>(in, out, n, stream);
    case UnaryMath::Sign: return launch_unary_math<UnaryMath::Sign, T>(in, out, n, stream);
    case UnaryMath::Gelu: return launch_unary_math<UnaryMath::Gelu, T>(in, out, n, stream);
    case UnaryMath::Silu: return launch_unary_math<UnaryMath::Silu, T>(in, out, n, stream);
    case UnaryMath::Softplus: return launch_unary_math<UnaryMath::Softplus, T>(in, out, n, stream);
    case UnaryMath::Floor: return launch_unary_math<UnaryMath::Floor, T>(in, out, n, stream);
    case UnaryMath::Ceil: return launch_unary_math<UnaryMath::Ceil, T>(in, out, n, stream);
    case UnaryMath::Round: return launch_unary_math<UnaryMath::Round, T>(in, out, n, stream);
    case UnaryMath::Trunc: return launch_unary_math<UnaryMath::Trunc, T>(in, out, n, stream);
  }
  // No default above, so -Wswitch flags a new UnaryMath left out of this table.
  GD_INTERNAL_ASSERT(false, "cuda::unary_math: UnaryMath value " + std::to_string(static_cast<int>(op)) +
                                " has no kernel");
}

// ---- binary -----------------------------------------------------------------------

template <class T>
constexpr bool is_integral_binary_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Integer +, - and * wrap around as two's complement, as the CPU's narrowing of
// the promoted result does. They compute in an unsigned type at least 32 bits
// wide (a uint16 product promoted to int could overflow), so overflow is defined.
template <class T>
using WrappingType = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
template <class T>
__device__ T wrapping_add(T a, T b) {
  using W = WrappingType<T>;
  return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
}
template <class T>
__device__ T wrapping_subtract(T a, T b) {
  using W = WrappingType<T>;
  return static_cast<T>(static_cast<W>(a) - static_cast<W>(b));
}
template <class T>
__device__ T wrapping_multiply(T a, T b) {
  using W = WrappingType<T>;
  return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
}

// The engine's MaxFn / MinFn (engine/ops/binary.cpp): NaN in either operand
// gives NaN; between equal values (+0 and -0) the first operand wins.
template <class T>
__device__ T maximum_value(T x, T y) {
  return (x != x || x > y) ? x : (y != y ? y : (x < y ? y : x));
}
template <class T>
__device__ T minimum_value(T x, T y) {
  return (x != x || x < y) ? x : (y != y ? y : (x > y ? y : x));
}

template <class T>
__device__ T binary_value(Binary op, T x, T y, T alpha) {
  if constexpr (std::is_same_v<T, bool>) {
    // Bool arithmetic is logical, as on the CPU (kernels/cpu/binary_function.h).
    const bool is_or = op == Binary::Add || op == Binary::Maximum;
    return is_or ? (x || y) : (x && y);
  } else if constexpr (is_integral_binary_v<T>) {
    switch (op) {
      case Binary::Add: return wrapping_add(x, wrapping_multiply(alpha, y));
      case Binary::Sub: return wrapping_subtract(x, wrapping_multiply(alpha, y));
      case Binary::Mul: return wrapping_multiply(x, y);
      case Binary::Maximum: return maximum_value(x, y);
      case Binary::Minimum: return minimum_value(x, y);
      default: return T(0);  // refused on the host before the launch
    }
  } else {
    switch (op) {
      // x + alpha * y rounded twice, as the CPU's x + al * y (no fma).
      case Binary::Add: return add_rounded(x, multiply_rounded(alpha, y));
      case Binary::Sub: return add_rounded(x, -multiply_rounded(alpha, y));
      case Binary::Mul: return x * y;
      case Binary::Div: return x / y;
      case Binary::Maximum: return maximum_value(x, y);
      case Binary::Minimum: return minimum_value(x, y);
      case Binary::Pow: return math_pow(x, y);
      case Binary::Atan2: return math_atan2(x, y);
    }
    return T(0);
  }
}

// float16 and bfloat16 compute in float32 and round once, as on the CPU.
template <class T>
struct BinaryElement {
  Binary op;
  T* out;
  const T* a;
  const T* b;
  opmath_type<T> alpha;
  __device__ void operator()(const int64_t (&offsets)[3]) const {
    out[offsets[0]] =
        convert_value<T>(binary_value(op, load_as_opmath(a[offsets[1]]), load_as_opmath(b[offsets[2]]), alpha));
  }
};

// One operand is a host scalar passed by value: no device buffer, no extra launch.
template <class T>
struct BinaryScalarElement {
  Binary op;
  T* out;
  const T* a;
  opmath_type<T> scalar;
  bool scalar_first;
  opmath_type<T> alpha;
  __device__ void operator()(const int64_t (&offsets)[2]) const {
    const opmath_type<T> x = load_as_opmath(a[offsets[1]]);
    out[offsets[0]] =
        convert_value<T>(scalar_first ? binary_value(op, scalar, x, alpha) : binary_value(op, x, scalar, alpha));
  }
};

// A host scalar as the kernel's compute type; an integer dtype takes it through
// int64, so -1 becomes 255 for uint8 as on the CPU (double -> uint8 of a
// negative value is undefined).
template <class T>
opmath_type<T> host_scalar_as(double value) {
  if constexpr (is_integral_binary_v<T>) return static_cast<T>(static_cast<int64_t>(value));
  else return static_cast<opmath_type<T>>(value);
}

const char* binary_name(Binary op) {
  switch (op) {
    case Binary::Add: return "add";
    case Binary::Sub: return "sub";
    case Binary::Mul: return "mul";
    case Binary::Div: return "div";
    case Binary::Maximum: return "maximum";
    case Binary::Minimum: return "minimum";
    case Binary::Pow: return "pow";
    case Binary::Atan2: return "atan2";
  }
  return "binary";
}

// Calls launch.template operator()<T>() for the binary ops' dtypes: every op on
// float32/float64/float16/bfloat16; +, -, *, maximum and minimum on the integer
// dtypes; on bool the logical forms (add and maximum `or`, mul and minimum `and`).
template <class Launch>
void dispatch_binary_dtype(Binary op, ScalarType dtype, const Launch& launch) {
  switch (dtype) {
    case ScalarType::Float32: return launch.template operator()<float>();
    case ScalarType::Float64: return launch.template operator()<double>();
    case ScalarType::Float16: return launch.template operator()<__half>();
    case ScalarType::BFloat16: return launch.template operator()<__nv_bfloat16>();
    case ScalarType::Bool: {
      const bool logical_op =
          op == Binary::Add || op == Binary::Mul || op == Binary::Maximum || op == Binary::Minimum;
      if (!logical_op) throw_unsupported_cuda_dtype(binary_name(op), dtype);
      return launch.template operator()<bool>();
    }
    case ScalarType::UInt8:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64: {
      const bool integer_op = op == Binary::Add || op == Binary::Sub || op == Binary::Mul ||
                              op == Binary::Maximum || op == Binary::Minimum;
      GD_CHECK(integer_op, std::string(binary_name(op)) + ": not implemented for dtype " +
                               std::string(dtype_name(dtype)) + " on CUDA");
      return dispatch_cuda_all(dtype, binary_name(op), [&]<class T>() { launch.template operator()<T>(); });
    }
  }
  throw_unsupported_cuda_dtype(binary_name(op), dtype);
}

// ---- compare and where ------------------------------------------------------------

template <class T>
struct CompareElement {
  Compare op;
  bool* out;
  const T* a;
  const T* b;
  __device__ void operator()(const int64_t (&offsets)[3]) const {
    const auto x = load_as_opmath(a[offsets[1]]);
    const auto y = load_as_opmath(b[offsets[2]]);
    bool result = false;
    switch (op) {
      case Compare::Eq: result = x == y; break;
      case Compare::Ne: result = x != y; break;
      case Compare::Lt: result = x < y; break;
      case Compare::Le: result = x <= y; break;
      case Compare::Gt: result = x > y; break;
      case Compare::Ge: result = x >= y; break;
      case Compare::And: result = (x != 0) && (y != 0); break;
      case Compare::Or: result = (x != 0) || (y != 0); break;
      case Compare::Xor: result = (x != 0) != (y != 0); break;
    }
    out[offsets[0]] = result;
  }
};

// cond is read as bytes: any nonzero byte counts as true.
template <class Bits>
struct WhereElement {
  Bits* out;
  const uint8_t* cond;
  const Bits* a;
  const Bits* b;
  __device__ void operator()(const int64_t (&offsets)[4]) const {
    out[offsets[0]] = cond[offsets[1]] != 0 ? a[offsets[2]] : b[offsets[3]];
  }
};

// ---- fused backward kernels -------------------------------------------------------
// The formulas and their order are those of kernels/cpu/vector_math.cpp: only
// products and differences, no a * b + c that nvcc could contract.

// grad * (1 - y*y), computed as grad * ((1 - y) * (1 + y)) like the CPU.
template <class T>
__device__ T tanh_backward_value(T grad, T y) {
  return grad * ((T(1) - y) * (T(1) + y));
}

// float16 and bfloat16 compute in float32 and round once, as the CPU's
// binary_through_float (kernels/cpu/vector_math.cpp).
template <class T>
struct TanhBackwardElement {
  const T* grad;
  const T* y;
  T* out;
  __device__ void operator()(int64_t i) const {
    out[i] = convert_value<T>(tanh_backward_value(load_as_opmath(grad[i]), load_as_opmath(y[i])));
  }
};

// grad * (y * (1 - y)).
template <class T>
struct SigmoidBackwardElement {
  const T* grad;
  const T* y;
  T* out;
  __device__ void operator()(int64_t i) const {
    using A = opmath_type<T>;
    const A v = load_as_opmath(y[i]);
    out[i] = convert_value<T>(load_as_opmath(grad[i]) * (v * (A(1) - v)));
  }
};

// self <= threshold ? 0 : grad; a NaN self passes grad, as on the CPU.
template <class T>
struct ThresholdBackwardElement {
  const T* grad;
  const T* self;
  T threshold;
  T* out;
  __device__ void operator()(int64_t i) const { out[i] = self[i] <= threshold ? T(0) : grad[i]; }
};

// Every input is read before either output is written, so outputs may alias inputs.
template <class T>
struct TanhBackwardBackwardElement {
  const T* gg;
  const T* grad;
  const T* y;
  T* d_grad;
  T* d_y;
  __device__ void operator()(int64_t i) const {
    const T g2 = gg[i], g = grad[i], v = y[i];
    d_grad[i] = tanh_backward_value(g2, v);
    d_y[i] = T(-2) * ((g2 * g) * v);
  }
};

template <class T>
struct ScaledProductElement {
  const T* a;
  const T* b;
  const T* c;
  T scale;
  T* out;
  __device__ void operator()(int64_t i) const { out[i] = scale * ((a[i] * b[i]) * c[i]); }
};

template <class T>
struct ScaledProductBackwardElement {
  const T* g;
  const T* a;
  const T* b;
  const T* c;
  T scale;
  T* grad_a;
  T* grad_b;
  T* grad_c;
  __device__ void operator()(int64_t i) const {
    const T vg = g[i], va = a[i], vb = b[i], vc = c[i];
    grad_a[i] = scale * ((vg * vb) * vc);
    grad_b[i] = scale * ((va * vg) * vc);
    grad_c[i] = scale * ((va * vb) * vg);
  }
};

}  // namespace

// ---- host entry points ------------------------------------------------------------

void fill(ScalarType dtype, void* out, int64_t n, const Number& value, StreamHandle stream) {
  check_count(n, "fill");
  if (n == 0) return;
  dispatch_cuda_all(dtype, "fill", [&]<class T>() {
    // Converted once on the host (an integer value from its int64, so every
    // bit of a large one survives), then stored as raw bits.
    const T typed_value = value.floating ? convert_value<T>(value.real) : convert_value<T>(value.integer);
    using Bits = bits_type<sizeof(T)>;
    Bits bits;
    memcpy(&bits, &typed_value, sizeof bits);
    if (sizeof(T) == 1 || bits == 0) {  // a byte pattern: memset does it
      GD_CUDA_CHECK(cudaMemsetAsync(out, static_cast<int>(bits & 0xFFu), static_cast<size_t>(n) * sizeof(T),
                                    as_cuda_stream(stream)));
      return;
    }
    launch_contiguous_elementwise(n, FillElement<Bits>{static_cast<Bits*>(out), bits}, stream);
  });
}

void copy(ScalarType dst_dtype, const Strided& dst, ScalarType src_dtype, const Strided& src, const Shape& shape,
          StreamHandle stream) {
  check_shape(shape, "copy");
  const int64_t numel = shape.numel();
  if (numel == 0) return;
  const int64_t* const strides[2] = {dst.strides, src.strides};
  if (dst_dtype == src_dtype) {
    const StridedIndexer<2> indexer = make_indexer<2>(shape, 0, shape.ndim, strides);
    const bool both_contiguous =
        indexer.ndim == 1 && (numel == 1 || (indexer.strides[0][0] == 1 && indexer.strides[1][0] == 1));
    if (both_contiguous) {
      GD_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, static_cast<size_t>(numel) * element_size(dst_dtype),
                                    cudaMemcpyDeviceToDevice, as_cuda_stream(stream)));
      return;
    }
    dispatch_by_element_size(dst_dtype, [&]<class Bits>() {
      launch_strided_elementwise<2>(
          shape, strides, MoveElement<Bits>{static_cast<Bits*>(dst.data), static_cast<const Bits*>(src.data)},
          stream);
    });
    return;
  }
  dispatch_cuda_all(dst_dtype, "copy", [&]<class To>() {
    dispatch_cuda_all(src_dtype, "copy", [&]<class From>() {
      if constexpr (!std::is_same_v<To, From>) {  // equal dtypes took the bit copy above
        launch_strided_elementwise<2>(
            shape, strides, ConvertElement<To, From>{static_cast<To*>(dst.data), static_cast<const From*>(src.data)},
            stream);
      }
    });
  });
}

void unary_math(UnaryMath op, ScalarType dtype, const void* in, void* out, int64_t n, StreamHandle stream) {
  check_count(n, "unary_math");
  switch (dtype) {
    case ScalarType::Float16: return unary_math_typed<__half>(op, in, out, n, stream);
    case ScalarType::BFloat16: return unary_math_typed<__nv_bfloat16>(op, in, out, n, stream);
    default:
      dispatch_cuda_floating(dtype, "unary_math", [&]<class T>() { unary_math_typed<T>(op, in, out, n, stream); });
  }
}

void binary(Binary op, ScalarType dtype, const Strided& out, const Strided& a, const Strided& b, const Shape& shape,
            double alpha, StreamHandle stream) {
  check_shape(shape, binary_name(op));
  const int64_t* const strides[3] = {out.strides, a.strides, b.strides};
  dispatch_binary_dtype(op, dtype, [&]<class T>() {
    launch_strided_elementwise<3>(shape, strides,
                                  BinaryElement<T>{op, static_cast<T*>(out.data), static_cast<const T*>(a.data),
                                                   static_cast<const T*>(b.data), host_scalar_as<T>(alpha)},
                                  stream);
  });
}

void binary_scalar(Binary op, ScalarType dtype, const Strided& out, const Strided& a, const Shape& shape, double scalar,
                   bool scalar_first, double alpha, StreamHandle stream) {
  check_shape(shape, binary_name(op));
  const int64_t* const strides[2] = {out.strides, a.strides};
  dispatch_binary_dtype(op, dtype, [&]<class T>() {
    launch_strided_elementwise<2>(
        shape, strides,
        BinaryScalarElement<T>{op, static_cast<T*>(out.data), static_cast<const T*>(a.data),
                               host_scalar_as<T>(scalar), scalar_first, host_scalar_as<T>(alpha)},
        stream);
  });
}

void compare(Compare op, ScalarType dtype, const Strided& out, const Strided& a, const Strided& b, const Shape& shape,
             StreamHandle stream) {
  check_shape(shape, "compare");
  const int64_t* const strides[3] = {out.strides, a.strides, b.strides};
  dispatch_cuda_all(dtype, "compare", [&]<class T>() {
    launch_strided_elementwise<3>(
        shape, strides,
        CompareElement<T>{op, static_cast<bool*>(out.data), static_cast<const T*>(a.data),
                          static_cast<const T*>(b.data)},
        stream);
  });
}

void where(ScalarType dtype, const Strided& out, const Strided& cond, const Strided& a, const Strided& b,
           const Shape& shape, StreamHandle stream) {
  check_shape(shape, "where");
  const int64_t* const strides[4] = {out.strides, cond.strides, a.strides, b.strides};
  dispatch_by_element_size(dtype, [&]<class Bits>() {
    launch_strided_elementwise<4>(
        shape, strides,
        WhereElement<Bits>{static_cast<Bits*>(out.data), static_cast<const uint8_t*>(cond.data),
                           static_cast<const Bits*>(a.data), static_cast<const Bits*>(b.data)},
        stream);
  });
}

void tanh_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n, StreamHandle stream) {
  check_count(n, "tanh_backward");
  dispatch_cuda_floating_and_reduced(dtype, "tanh_backward", [&]<class T>() {
    launch_contiguous_elementwise(
        n, TanhBackwardElement<T>{static_cast<const T*>(grad), static_cast<const T*>(y), static_cast<T*>(out)},
        stream);
  });
}

void sigmoid_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n, StreamHandle stream) {
  check_count(n, "sigmoid_backward");
  dispatch_cuda_floating_and_reduced(dtype, "sigmoid_backward", [&]<class T>() {
    launch_contiguous_elementwise(
        n, SigmoidBackwardElement<T>{static_cast<const T*>(grad), static_cast<const T*>(y), static_cast<T*>(out)},
        stream);
  });
}

void threshold_backward(ScalarType dtype, const void* grad, const void* self, double threshold, void* out, int64_t n,
                        StreamHandle stream) {
  check_count(n, "threshold_backward");
  dispatch_cuda_floating(dtype, "threshold_backward", [&]<class T>() {
    launch_contiguous_elementwise(n,
                                  ThresholdBackwardElement<T>{static_cast<const T*>(grad), static_cast<const T*>(self),
                                                              static_cast<T>(threshold), static_cast<T*>(out)},
                                  stream);
  });
}

void tanh_backward_backward(ScalarType dtype, const void* gg, const void* grad, const void* y, void* d_grad,
                            void* d_y, int64_t n, StreamHandle stream) {
  check_count(n, "tanh_backward_backward");
  dispatch_cuda_floating(dtype, "tanh_backward_backward", [&]<class T>() {
    launch_contiguous_elementwise(
        n,
        TanhBackwardBackwardElement<T>{static_cast<const T*>(gg), static_cast<const T*>(grad),
                                       static_cast<const T*>(y), static_cast<T*>(d_grad), static_cast<T*>(d_y)},
        stream);
  });
}

void scaled_product(ScalarType dtype, const void* a, const void* b, const void* c, double s, void* out, int64_t n,
                    StreamHandle stream) {
  check_count(n, "scaled_product");
  dispatch_cuda_floating(dtype, "scaled_product", [&]<class T>() {
    launch_contiguous_elementwise(
        n,
        ScaledProductElement<T>{static_cast<const T*>(a), static_cast<const T*>(b), static_cast<const T*>(c),
                                static_cast<T>(s), static_cast<T*>(out)},
        stream);
  });
}

void scaled_product_backward(ScalarType dtype, const void* g, const void* a, const void* b, const void* c, double s,
                             void* grad_a, void* grad_b, void* grad_c, int64_t n, StreamHandle stream) {
  check_count(n, "scaled_product_backward");
  dispatch_cuda_floating(dtype, "scaled_product_backward", [&]<class T>() {
    launch_contiguous_elementwise(
        n,
        ScaledProductBackwardElement<T>{static_cast<const T*>(g), static_cast<const T*>(a), static_cast<const T*>(b),
                                        static_cast<const T*>(c), static_cast<T>(s), static_cast<T*>(grad_a),
                                        static_cast<T*>(grad_b), static_cast<T*>(grad_c)},
        stream);
  });
}

}  // namespace gradiens::kernels::cuda
