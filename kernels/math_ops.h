// The elementwise operations every backend implements, named once: the CPU's
// kernels and the CUDA kernels take the same enums.
#pragma once

#include <limits>

namespace gradiens::kernels {

// Edge values follow PyTorch: exp(+big) = inf, log(0) = -inf, log(x < 0) = NaN,
// relu(NaN) = NaN, sign(+-0) = +0, sign(NaN) = NaN, and NaN in gives NaN out
// everywhere else. Where PyTorch's formula gives NaN for an infinite input but
// the function has a limit, the limit is returned: gelu(-inf) = silu(-inf) = -0.
enum class UnaryMath {
  Exp,
  Expm1,
  Log,
  Log1p,
  Sqrt,
  Rsqrt,       // 1 / sqrt(x), correctly rounded sqrt then divide (not the rsqrt estimate)
  Tanh,
  Sigmoid,     // 1 / (1 + exp(-x)), evaluated so that no intermediate overflows
  Sin,
  Cos,
  Tan,
  Erf,
  Abs,
  Neg,
  Reciprocal,
  Square,
  Relu,
  Sign,        // -1, 0 or +1
  Gelu,        // exact: x * 0.5 * (1 + erf(x / sqrt(2)))
  Silu,        // x * sigmoid(x)
  Softplus,    // log1p(exp(x)), evaluated as max(x, 0) + log1p(exp(-|x|))
  Floor,
  Ceil,
  Round,       // to the nearest integer, halves to even (nearbyint)
  Trunc,       // toward zero
};

// The kind of vector norm each p names (the CPU and CUDA kernels and the
// engine's backward each branch on it).
enum class NormKind { Zero, One, Two, Inf, NegInf, General };
inline NormKind norm_kind(double p) {
  if (p == 0) return NormKind::Zero;
  if (p == 1) return NormKind::One;
  if (p == 2) return NormKind::Two;
  if (p == std::numeric_limits<double>::infinity()) return NormKind::Inf;
  if (p == -std::numeric_limits<double>::infinity()) return NormKind::NegInf;
  return NormKind::General;
}

// out = a + b, a - b or a * b.
enum class Arith { Add, Sub, Mul };

enum class Binary {
  Add,       // a + alpha * b
  Sub,       // a - alpha * b
  Mul,       // a * b
  Div,       // a / b (true division)
  Maximum,   // NaN-propagating
  Minimum,   // NaN-propagating
  Pow,       // pow(a, b)
  Atan2,     // atan2(a, b)
};

// Comparisons (a bool result); And, Or and Xor are logical: an operand counts
// as true when it is nonzero.
enum class Compare { Eq, Ne, Lt, Le, Gt, Ge, And, Or, Xor };

// Elementwise tests with a bool result.
enum class Predicate { LogicalNot, IsNan, IsInf, IsFinite };

// Reductions over some dims of a tensor.
enum class Reduce {
  Sum,
  Prod,
  Max,   // NaN-propagating
  Min,   // NaN-propagating
  SumOfSquares,
};

}  // namespace gradiens::kernels
