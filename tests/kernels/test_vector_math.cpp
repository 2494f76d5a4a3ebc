// Tests for kernels/cpu/vector_math: every UnaryMath op and the fused backward
// kernels, float and double, on every compiled SIMD target, against libm closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "hwy/targets.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/error.h"
#include "tests/kernels/simd_targets.h"

namespace {

using gradiens::kernels::cpu::sigmoid_backward;
using gradiens::kernels::cpu::simd_target_name;
using gradiens::kernels::cpu::tanh_backward;
using gradiens::kernels::cpu::unary_math;
using gradiens::kernels::cpu::UnaryMath;

// ---- SIMD targets ------------------------------------------------------------

using gradiens::testing::for_each_simd_target;  // tests/kernels/simd_targets.h

// ---- comparing floats --------------------------------------------------------

// Maps a float onto an integer line where adjacent floats are adjacent
// integers (+0 and -0 both at 0), so a difference counts ULPs.
template <class T>
int64_t ordered_bits(T x) {
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  Bits bits;
  std::memcpy(&bits, &x, sizeof(T));
  const int64_t magnitude = bits & std::numeric_limits<Bits>::max();
  return bits < 0 ? -magnitude : magnitude;
}

template <class T>
uint64_t ulp_distance(T a, T b) {
  const int64_t ia = ordered_bits(a), ib = ordered_bits(b);
  return ia > ib ? static_cast<uint64_t>(ia) - static_cast<uint64_t>(ib)
                 : static_cast<uint64_t>(ib) - static_cast<uint64_t>(ia);
}

// NaN matches NaN, a zero must have the reference's sign, anything else must
// be within max_ulps, or within absolute_slack (for results computed from a
// subnormal intermediate, whose relative precision is gone).
template <class T>
bool matches(T got, T want, uint64_t max_ulps, T absolute_slack = 0) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (want == 0 && got == 0) return std::signbit(want) == std::signbit(got);
  if (ulp_distance(got, want) <= max_ulps) return true;
  return std::isfinite(want) && std::fabs(got - want) <= absolute_slack;
}

template <class T>
std::string dtype_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

template <class T>
std::string show(T x) {
  std::ostringstream out;
  out.precision(std::numeric_limits<T>::max_digits10);
  out << x;
  return out.str();
}

// ---- references --------------------------------------------------------------

// The reference is evaluated one precision up (double for float, long double
// for double) and rounded once, so it is the correctly rounded answer up to
// that precision's own sub-ULP error.
template <class T>
using Wider = std::conditional_t<sizeof(T) == 4, double, long double>;

template <class T>
T reference(UnaryMath op, T x_narrow) {
  using R = Wider<T>;
  const R x = x_narrow, zero = 0, one = 1;
  const R minus_infinity = -std::numeric_limits<R>::infinity();
  switch (op) {
    case UnaryMath::Exp: return T(std::exp(x));
    case UnaryMath::Expm1: return T(std::expm1(x));
    case UnaryMath::Log: return T(std::log(x));
    case UnaryMath::Log1p: return T(std::log1p(x));
    case UnaryMath::Sqrt: return T(std::sqrt(x));
    case UnaryMath::Rsqrt: return T(one / std::sqrt(x));
    case UnaryMath::Tanh: return T(std::tanh(x));
    case UnaryMath::Sigmoid: return T(one / (one + std::exp(-x)));
    case UnaryMath::Sin: return T(std::sin(x));
    case UnaryMath::Cos: return T(std::cos(x));
    case UnaryMath::Tan: return T(std::tan(x));
    case UnaryMath::Erf: return T(std::erf(x));
    case UnaryMath::Abs: return T(std::fabs(x));
    case UnaryMath::Neg: return T(-x);
    case UnaryMath::Reciprocal: return T(one / x);
    case UnaryMath::Square: return T(x * x);
    case UnaryMath::Relu: return T(std::isnan(x) || x > 0 ? x : zero);
    case UnaryMath::Sign: return T(std::isnan(x) ? x : x > 0 ? one : x < 0 ? -one : zero);
    case UnaryMath::Gelu: {
      // x * 0.5 * (1 + erf(x / sqrt 2)) written with erfc (no cancellation for
      // x < 0), with the argument rounded to T as the kernel must: for x << 0
      // that rounding alone moves erfc by 2 z^2 ULPs, and is not the kernel's doing.
      if (x == minus_infinity) return T(-0.0);
      const R argument = T(x_narrow * T(-0.70710678118654752440L));
      return T(R(0.5) * x * std::erfc(argument));
    }
    case UnaryMath::Silu:
      if (x == minus_infinity) return T(-0.0);
      return T(x / (one + std::exp(-x)));
    case UnaryMath::Softplus:
      return T(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
    case UnaryMath::Floor: return T(std::floor(x));
    case UnaryMath::Ceil: return T(std::ceil(x));
    case UnaryMath::Round: return T(std::nearbyint(x));
    case UnaryMath::Trunc: return T(std::trunc(x));
  }
  return std::numeric_limits<T>::signaling_NaN();
}

// One line per op: the largest error allowed against the reference, in ULPs.
// Highway documents exp 1, expm1/log/log1p 4, tanh 4 (via expm1); SLEEF's
// u10/u15 functions are 1.0/1.5 ULP; sigmoid/silu/softplus/gelu stack a few
// roundings on top of those.
struct OpCase {
  UnaryMath op;
  const char* name;
  uint64_t max_ulps;
};
constexpr OpCase kOpCases[] = {
    {UnaryMath::Exp, "exp", 2},           {UnaryMath::Expm1, "expm1", 4},
    {UnaryMath::Log, "log", 4},           {UnaryMath::Log1p, "log1p", 4},
    {UnaryMath::Sqrt, "sqrt", 1},         {UnaryMath::Rsqrt, "rsqrt", 1},
    {UnaryMath::Tanh, "tanh", 4},         {UnaryMath::Sigmoid, "sigmoid", 4},
    {UnaryMath::Sin, "sin", 2},           {UnaryMath::Cos, "cos", 2},
    {UnaryMath::Tan, "tan", 2},           {UnaryMath::Erf, "erf", 2},
    {UnaryMath::Abs, "abs", 0},           {UnaryMath::Neg, "neg", 0},
    {UnaryMath::Reciprocal, "reciprocal", 1}, {UnaryMath::Square, "square", 1},
    {UnaryMath::Relu, "relu", 0},         {UnaryMath::Sign, "sign", 0},
    {UnaryMath::Gelu, "gelu", 4},         {UnaryMath::Silu, "silu", 4},
    {UnaryMath::Softplus, "softplus", 4},
    {UnaryMath::Floor, "floor", 0},       {UnaryMath::Ceil, "ceil", 0},
    {UnaryMath::Round, "round", 0},       {UnaryMath::Trunc, "trunc", 0},
};

std::string op_name(UnaryMath op) {
  for (const OpCase& op_case : kOpCases) {
    if (op_case.op == op) return op_case.name;
  }
  return "op #" + std::to_string(static_cast<int>(op));
}

// silu and gelu multiply x by a factor that is subnormal for x far below 0
// (sigmoid(x) for x < -708 in double, erfc(-x/sqrt 2) for x < -37), where that
// factor carries only an absolute precision of one subnormal step.
template <class T>
T absolute_slack(UnaryMath op, T x) {
  if (op != UnaryMath::Silu && op != UnaryMath::Gelu) return 0;
  return std::fabs(x) * std::numeric_limits<T>::denorm_min() * 2;
}

// Checks got[i] against the reference for in[i], naming the first few misses.
template <class T>
void check_against_reference(const OpCase& op_case, const std::vector<T>& in,
                             const std::vector<T>& got) {
  REQUIRE(got.size() == in.size());
  int misses = 0;
  std::string first_misses;
  for (size_t i = 0; i < in.size(); ++i) {
    const T want = reference(op_case.op, in[i]);
    if (matches(got[i], want, op_case.max_ulps, absolute_slack(op_case.op, in[i]))) continue;
    if (++misses <= 5) {
      first_misses += "\n  " + std::string(op_case.name) + "(" + show(in[i]) + ") = " +
                      show(got[i]) + ", want " + show(want) + " (" +
                      std::to_string(ulp_distance(got[i], want)) + " ULPs)";
    }
  }
  INFO(dtype_name<T>(), " ", std::string(op_case.name), ", ", misses, " of ", in.size(), " wrong:",
       first_misses);
  CHECK(misses == 0);
}

// ---- inputs ------------------------------------------------------------------

// A grid over [-20, 20], every binade from the smallest subnormal to the
// largest finite value in both signs, random points in [-30, 30], and the
// edges: zeros, infinities, NaN and the overflow/underflow thresholds of exp.
// The count (not a multiple of any vector width) leaves a tail.
template <class T>
std::vector<T> sweep_inputs() {
  using limits = std::numeric_limits<T>;
  std::vector<T> xs;
  for (int i = -400; i <= 400; ++i) xs.push_back(T(i) / T(20));
  for (T magnitude = limits::denorm_min(); magnitude < limits::max() / 3; magnitude *= T(2.9)) {
    xs.push_back(magnitude);
    xs.push_back(-magnitude);
  }
  std::mt19937_64 rng(20240611);
  std::uniform_real_distribution<T> uniform(T(-30), T(30));
  for (int i = 0; i < 500; ++i) xs.push_back(uniform(rng));
  for (T edge : {T(0), T(-0.0), limits::infinity(), -limits::infinity(), limits::quiet_NaN(),
                 limits::min(), limits::max(), T(1), T(0.5), T(1e-3), T(15), T(19), T(50),
                 T(87), T(88.7), T(89), T(104), T(200), T(700), T(709.5), T(710), T(720),
                 T(745), T(1000), T(1e30)}) {
    xs.push_back(edge);
    xs.push_back(-edge);
  }
  // The largest x whose exp is finite, and the next float up, where exp overflows.
  const T largest_finite_exp_argument =
      sizeof(T) == 4 ? T(0x1.62e42ep+6f) : T(0x1.62e42fefa39efp+9);
  xs.push_back(largest_finite_exp_argument);
  xs.push_back(std::nextafter(largest_finite_exp_argument, limits::infinity()));
  if (xs.size() % 2 == 0) xs.push_back(T(0.25));
  return xs;
}

template <class T>
std::vector<T> run_unary(UnaryMath op, const std::vector<T>& in) {
  std::vector<T> out(in.size(), T(-12345));
  unary_math(op, in.data(), out.data(), static_cast<int64_t>(in.size()));
  return out;
}

template <class T>
void check_every_op_on_sweep() {
  const std::vector<T> in = sweep_inputs<T>();
  for (const OpCase& op_case : kOpCases) {
    check_against_reference(op_case, in, run_unary(op_case.op, in));
  }
}

}  // namespace

TEST_CASE("vector_math: runtime dispatch picks AVX2 or better where the CPU has it") {
  // The library is built without -march, so only the runtime dispatch can get here.
  const std::string chosen = simd_target_name();
  MESSAGE("vector_math runs on SIMD target ", chosen);
  CHECK(chosen != "Unknown");
  if (hwy::SupportedTargets() & HWY_AVX3) CHECK(chosen == "AVX3");
  if (hwy::SupportedTargets() & HWY_AVX2) CHECK((chosen == "AVX3" || chosen == "AVX2"));
}

TEST_CASE("vector_math: every op matches libm over a sweep, float and double, every target") {
  const std::vector<std::string> targets = for_each_simd_target([] {
    check_every_op_on_sweep<float>();
    check_every_op_on_sweep<double>();
  });
  std::string names;
  for (const std::string& name : targets) names += name + " ";
  MESSAGE("vector_math checked on SIMD targets: ", names);
  CHECK(!targets.empty());
}

namespace {

// One line per edge case, with the exact PyTorch answer (closed forms aside).
struct EdgeCase {
  UnaryMath op;
  double x;
  double want;
};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr EdgeCase kEdgeCases[] = {
    {UnaryMath::Exp, kInf, kInf},           {UnaryMath::Exp, -kInf, 0.0},
    {UnaryMath::Exp, 1000.0, kInf},         {UnaryMath::Exp, -1000.0, 0.0},
    {UnaryMath::Exp, kNaN, kNaN},           {UnaryMath::Exp, -0.0, 1.0},
    {UnaryMath::Expm1, -0.0, -0.0},         {UnaryMath::Expm1, kInf, kInf},
    {UnaryMath::Expm1, -kInf, -1.0},        {UnaryMath::Expm1, kNaN, kNaN},
    {UnaryMath::Log, 0.0, -kInf},           {UnaryMath::Log, -0.0, -kInf},
    {UnaryMath::Log, -1.0, kNaN},           {UnaryMath::Log, -kInf, kNaN},
    {UnaryMath::Log, kInf, kInf},           {UnaryMath::Log, kNaN, kNaN},
    {UnaryMath::Log, 1.0, 0.0},             {UnaryMath::Log1p, -1.0, -kInf},
    {UnaryMath::Log1p, -2.0, kNaN},         {UnaryMath::Log1p, kInf, kInf},
    {UnaryMath::Log1p, -0.0, -0.0},         {UnaryMath::Log1p, kNaN, kNaN},
    {UnaryMath::Sqrt, -1.0, kNaN},          {UnaryMath::Sqrt, -0.0, -0.0},
    {UnaryMath::Sqrt, kInf, kInf},          {UnaryMath::Rsqrt, 0.0, kInf},
    {UnaryMath::Rsqrt, -0.0, -kInf},        {UnaryMath::Rsqrt, kInf, 0.0},
    {UnaryMath::Tanh, 1000.0, 1.0},         {UnaryMath::Tanh, -1000.0, -1.0},
    {UnaryMath::Tanh, kInf, 1.0},           {UnaryMath::Tanh, -kInf, -1.0},
    {UnaryMath::Tanh, -0.0, -0.0},          {UnaryMath::Tanh, kNaN, kNaN},
    {UnaryMath::Sigmoid, 1000.0, 1.0},      {UnaryMath::Sigmoid, -1000.0, 0.0},
    {UnaryMath::Sigmoid, kInf, 1.0},        {UnaryMath::Sigmoid, -kInf, 0.0},
    {UnaryMath::Sigmoid, 0.0, 0.5},         {UnaryMath::Sigmoid, kNaN, kNaN},
    {UnaryMath::Sin, kInf, kNaN},           {UnaryMath::Sin, -0.0, -0.0},
    {UnaryMath::Cos, -kInf, kNaN},          {UnaryMath::Cos, 0.0, 1.0},
    {UnaryMath::Tan, kNaN, kNaN},           {UnaryMath::Tan, -0.0, -0.0},
    {UnaryMath::Erf, kInf, 1.0},            {UnaryMath::Erf, -kInf, -1.0},
    {UnaryMath::Erf, -0.0, -0.0},           {UnaryMath::Erf, kNaN, kNaN},
    {UnaryMath::Abs, -0.0, 0.0},            {UnaryMath::Abs, -kInf, kInf},
    {UnaryMath::Abs, kNaN, kNaN},           {UnaryMath::Neg, 0.0, -0.0},
    {UnaryMath::Reciprocal, 0.0, kInf},     {UnaryMath::Reciprocal, -0.0, -kInf},
    {UnaryMath::Reciprocal, -kInf, -0.0},   {UnaryMath::Square, -kInf, kInf},
    {UnaryMath::Relu, kNaN, kNaN},          {UnaryMath::Relu, -0.0, 0.0},
    {UnaryMath::Relu, -kInf, 0.0},          {UnaryMath::Relu, kInf, kInf},
    {UnaryMath::Sign, 0.0, 0.0},            {UnaryMath::Sign, -0.0, 0.0},
    {UnaryMath::Sign, kNaN, kNaN},          {UnaryMath::Sign, -kInf, -1.0},
    {UnaryMath::Sign, 1e-30, 1.0},         {UnaryMath::Sign, -3.0, -1.0},
    {UnaryMath::Gelu, -kInf, -0.0},         {UnaryMath::Gelu, kInf, kInf},
    {UnaryMath::Gelu, 0.0, 0.0},            {UnaryMath::Gelu, kNaN, kNaN},
    {UnaryMath::Gelu, -1000.0, -0.0},       {UnaryMath::Silu, -kInf, -0.0},
    {UnaryMath::Silu, kInf, kInf},          {UnaryMath::Silu, kNaN, kNaN},
    {UnaryMath::Silu, -1e30, -0.0},         {UnaryMath::Softplus, -kInf, 0.0},
    {UnaryMath::Softplus, kInf, kInf},      {UnaryMath::Softplus, kNaN, kNaN},
    {UnaryMath::Softplus, 1e30, 1e30},      {UnaryMath::Softplus, -1000.0, 0.0},
};

template <class T>
void check_edge_cases() {
  // Each value sits in a vector of its own copies, so both the full-vector
  // loop and the tail see it.
  for (const EdgeCase& edge : kEdgeCases) {
    const std::vector<T> in(19, T(edge.x));
    const std::vector<T> got = run_unary(edge.op, in);
    int misses = 0;
    for (T value : got) misses += matches(value, T(edge.want), 0) ? 0 : 1;
    INFO(dtype_name<T>(), " ", op_name(edge.op), "(", show(T(edge.x)), ") = ", show(got[0]),
         " (first lane), want ", show(T(edge.want)));
    CHECK(misses == 0);
  }
}

}  // namespace

TEST_CASE("vector_math: edge values follow PyTorch") {
  for_each_simd_target([] {
    check_edge_cases<float>();
    check_edge_cases<double>();
  });
}

namespace {

// For each length, a window of the sweep goes through every op into a buffer
// with guard cells after it: results must match, guards must be untouched.
template <class T>
void check_lengths_and_guards() {
  const std::vector<T> sweep = sweep_inputs<T>();
  constexpr int64_t kGuardCells = 32;
  const T guard = T(-777.25);
  for (int64_t length : {0, 1, 3, 7, 17, 1000}) {
    for (const OpCase& op_case : kOpCases) {
      const size_t start = static_cast<size_t>(length) * 3 % (sweep.size() - 1000);
      const std::vector<T> in(sweep.begin() + start, sweep.begin() + start + length);
      std::vector<T> out(static_cast<size_t>(length + kGuardCells), guard);
      unary_math(op_case.op, in.data(), out.data(), length);
      INFO("length ", length);
      check_against_reference(op_case, in, std::vector<T>(out.begin(), out.begin() + length));
      for (int64_t i = length; i < length + kGuardCells; ++i) CHECK(out[size_t(i)] == guard);
    }
  }
}

template <class T>
void check_in_place() {
  for (const OpCase& op_case : kOpCases) {
    const std::vector<T> in = sweep_inputs<T>();
    std::vector<T> buffer = in;
    unary_math(op_case.op, buffer.data(), buffer.data(), static_cast<int64_t>(buffer.size()));
    check_against_reference(op_case, in, buffer);
  }
}

}  // namespace

TEST_CASE("vector_math: lengths 0, 1, 3, 7, 17, 1000 write exactly n results") {
  for_each_simd_target([] {
    check_lengths_and_guards<float>();
    check_lengths_and_guards<double>();
  });
}

TEST_CASE("vector_math: in place (out == in)") {
  for_each_simd_target([] {
    check_in_place<float>();
    check_in_place<double>();
  });
}

TEST_CASE("vector_math: a null buffer is fine for n = 0, a negative n is a user error") {
  unary_math(UnaryMath::Exp, static_cast<const float*>(nullptr), nullptr, 0);
  tanh_backward(static_cast<const double*>(nullptr), nullptr, nullptr, 0);
  float x = 1;
  CHECK_THROWS_AS(unary_math(UnaryMath::Exp, &x, &x, -1), gradiens::Error);
  CHECK_THROWS_AS(sigmoid_backward(&x, &x, &x, -1), gradiens::Error);
}

namespace {

enum class Backward { Tanh, Sigmoid };

template <class T>
T backward_reference(Backward kind, T grad, T y) {
  using R = Wider<T>;
  const R g = grad, s = y;
  return kind == Backward::Tanh ? T(g * (1 - s * s)) : T(g * s * (1 - s));
}

// grad and y over their ranges (y in [-1, 1] for tanh, [0, 1] for sigmoid, with
// values next to the ends where 1 - y*y and 1 - y cancel), in three layouts:
// separate out, out == grad, out == y.
template <class T>
void check_backward(Backward kind) {
  using limits = std::numeric_limits<T>;
  std::vector<T> grad, y;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<T> uniform_grad(T(-3), T(3));
  std::uniform_real_distribution<T> uniform_y(kind == Backward::Tanh ? T(-1) : T(0), T(1));
  for (int i = 0; i < 1003; ++i) {
    grad.push_back(uniform_grad(rng));
    y.push_back(uniform_y(rng));
  }
  for (T end : {T(1), T(-1), T(0), T(0.5), std::nextafter(T(1), T(0)),
                std::nextafter(T(-1), T(0)), limits::epsilon()}) {
    if (kind == Backward::Sigmoid && end < 0) continue;
    grad.push_back(T(1.5));
    y.push_back(end);
  }
  grad.push_back(limits::quiet_NaN());
  y.push_back(T(0.25));
  grad.push_back(T(2));
  y.push_back(limits::quiet_NaN());

  auto run = [&](const T* g, const T* s, T* out) {
    const int64_t n = static_cast<int64_t>(grad.size());
    kind == Backward::Tanh ? tanh_backward(g, s, out, n) : sigmoid_backward(g, s, out, n);
  };
  auto check = [&](const std::vector<T>& got, const char* layout) {
    int misses = 0;
    std::string first_misses;
    for (size_t i = 0; i < grad.size(); ++i) {
      const T want = backward_reference(kind, grad[i], y[i]);
      if (matches(got[i], want, 3)) continue;
      if (++misses <= 5) {
        first_misses += "\n  grad " + show(grad[i]) + ", y " + show(y[i]) + ": got " +
                        show(got[i]) + ", want " + show(want);
      }
    }
    const std::string kernel = kind == Backward::Tanh ? "tanh_backward" : "sigmoid_backward";
    INFO(dtype_name<T>(), " ", kernel, " ", std::string(layout), ", ", misses, " wrong:",
         first_misses);
    CHECK(misses == 0);
  };

  std::vector<T> out(grad.size(), T(-1));
  run(grad.data(), y.data(), out.data());
  check(out, "out separate");
  std::vector<T> grad_then_out = grad;
  run(grad_then_out.data(), y.data(), grad_then_out.data());
  check(grad_then_out, "out == grad");
  std::vector<T> y_then_out = y;
  run(grad.data(), y_then_out.data(), y_then_out.data());
  check(y_then_out, "out == y");
}

}  // namespace

TEST_CASE("vector_math: tanh_backward and sigmoid_backward, aliased or not") {
  for_each_simd_target([] {
    for (Backward kind : {Backward::Tanh, Backward::Sigmoid}) {
      check_backward<float>(kind);
      check_backward<double>(kind);
    }
  });
}

// ---- the fused arithmetic of PINN backward passes ------------------------------

namespace {

// Identical bits, NaN matching NaN.
template <class T>
bool same_value(T got, T want) {
  return (std::isnan(got) && std::isnan(want)) || std::memcmp(&got, &want, sizeof(T)) == 0;
}

// The arithmetic, the second-order tanh kernel and the scaled products against
// their scalar formulas, bit for bit (they only multiply, add and subtract in
// the formulas' order), at lengths around every vector width, with outputs
// that overwrite and outputs that accumulate.
template <class T>
void check_fused_arithmetic() {
  using gradiens::kernels::cpu::Arith;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<T> uniform(T(-3), T(3));
  for (int64_t n : {0, 1, 3, 7, 8, 9, 17, 1003}) {
    std::vector<T> a(n), b(n), c(n), g(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = uniform(rng), b[i] = uniform(rng), c[i] = uniform(rng), g[i] = uniform(rng);
      y[i] = uniform(rng) / T(3);
    }
    if (n > 2) {
      a[1] = std::numeric_limits<T>::quiet_NaN();
      y[2] = T(1);
    }
    INFO(dtype_name<T>(), " n = ", n);
    auto all_same = [&](const std::vector<T>& got, auto want) {
      bool same = true;
      for (int64_t i = 0; i < n; ++i) same = same && same_value(got[i], want(i));
      return same;
    };
    std::vector<T> out(n), out2(n), out3(n);
    gradiens::kernels::cpu::arith(Arith::Add, a.data(), b.data(), out.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return a[i] + b[i]; }));
    gradiens::kernels::cpu::arith(Arith::Sub, a.data(), b.data(), out.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return a[i] - b[i]; }));
    out = a;  // in place: out == a
    gradiens::kernels::cpu::arith(Arith::Mul, out.data(), b.data(), out.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return a[i] * b[i]; }));

    gradiens::kernels::cpu::tanh_backward_backward(g.data(), b.data(), y.data(), out.data(), out2.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return g[i] * ((T(1) - y[i]) * (T(1) + y[i])); }));
    CHECK(all_same(out2, [&](int64_t i) { return T(-2) * (g[i] * b[i] * y[i]); }));

    const T s = T(-0.75);
    gradiens::kernels::cpu::scaled_product(a.data(), b.data(), c.data(), s, out.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return s * (a[i] * b[i] * c[i]); }));
    gradiens::kernels::cpu::scaled_product_backward(g.data(), a.data(), b.data(), c.data(), s, out.data(),
                                                    out2.data(), out3.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return s * (g[i] * b[i] * c[i]); }));
    CHECK(all_same(out2, [&](int64_t i) { return s * (a[i] * g[i] * c[i]); }));
    CHECK(all_same(out3, [&](int64_t i) { return s * (a[i] * b[i] * g[i]); }));

    // The gradients of tanh_backward_backward's pair of outputs, for the incoming g
    // and c, with gg = a and grad = b: each term rounded alone, then the two added.
    auto kept = [](T x) {  // a product the compiler may not fuse with the add after it
      volatile T held = x;
      return static_cast<T>(held);
    };
    auto pair_gg = [&](int64_t i) {
      return kept(g[i] * ((T(1) - y[i]) * (T(1) + y[i]))) + kept(T(-2) * (c[i] * b[i] * y[i]));
    };
    auto pair_grad = [&](int64_t i) { return T(-2) * (a[i] * c[i] * y[i]); };
    auto pair_y = [&](int64_t i) { return kept(T(-2) * (g[i] * a[i] * y[i])) + kept(T(-2) * (a[i] * b[i] * c[i])); };
    gradiens::kernels::cpu::tanh_backward_backward_backward(g.data(), c.data(), a.data(), b.data(), y.data(),
                                                            out.data(), out2.data(), out3.data(), n);
    CHECK(all_same(out, pair_gg));
    CHECK(all_same(out2, pair_grad));
    CHECK(all_same(out3, pair_y));

    // Outputs that accumulate (bit k of the mask) add their result to what they
    // hold, as a separate add of the result would; the others overwrite.
    for (uint32_t mask : {1u, 2u, 5u, 6u}) {
      INFO("accumulate mask ", mask);
      const std::vector<T> before = c, before2 = a, before3 = g;
      auto added = [&](uint32_t bit, const std::vector<T>& held, auto result) {
        return [&, bit, result](int64_t i) { return (mask & bit) ? held[i] + result(i) : result(i); };
      };
      out = before, out2 = before2, out3 = before3;
      if (mask < 4) {
        gradiens::kernels::cpu::tanh_backward_backward(g.data(), b.data(), y.data(), out.data(), out2.data(), n, mask);
        CHECK(all_same(out, added(1, before, [&](int64_t i) { return g[i] * ((T(1) - y[i]) * (T(1) + y[i])); })));
        CHECK(all_same(out2, added(2, before2, [&](int64_t i) { return T(-2) * (g[i] * b[i] * y[i]); })));
      }
      out = before, out2 = before2, out3 = before3;
      gradiens::kernels::cpu::scaled_product_backward(g.data(), a.data(), b.data(), c.data(), s, out.data(),
                                                      out2.data(), out3.data(), n, mask);
      CHECK(all_same(out, added(1, before, [&](int64_t i) { return s * (g[i] * b[i] * c[i]); })));
      CHECK(all_same(out2, added(2, before2, [&](int64_t i) { return s * (a[i] * g[i] * c[i]); })));
      CHECK(all_same(out3, added(4, before3, [&](int64_t i) { return s * (a[i] * b[i] * g[i]); })));
      out = before, out2 = before2, out3 = before3;
      gradiens::kernels::cpu::tanh_backward_backward_backward(g.data(), c.data(), a.data(), b.data(), y.data(),
                                                              out.data(), out2.data(), out3.data(), n, mask);
      CHECK(all_same(out, added(1, before, pair_gg)));
      CHECK(all_same(out2, added(2, before2, pair_grad)));
      CHECK(all_same(out3, added(4, before3, pair_y)));
    }

    // ReLU's backward, a NaN self included (a[1]); ties at the threshold drop grad.
    if (n > 3) c[3] = T(0.5);
    gradiens::kernels::cpu::threshold_backward(g.data(), c.data(), T(0.5), out.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return c[i] <= T(0.5) ? T(0) : g[i]; }));
    out = g;  // in place: out == grad
    gradiens::kernels::cpu::threshold_backward(out.data(), a.data(), T(0), out.data(), n);
    CHECK(all_same(out, [&](int64_t i) { return a[i] <= T(0) ? T(0) : g[i]; }));
  }
}

}  // namespace

TEST_CASE("vector_math: arith, tanh_backward_backward(_backward), scaled products and threshold_backward as the "
          "scalar formulas") {
  for_each_simd_target([] {
    check_fused_arithmetic<float>();
    check_fused_arithmetic<double>();
  });
}

// The definition of a 2x2, stride-2 max pool window: the first maximum in
// row-major order, unless the window holds a NaN, where the last NaN wins.
template <class T>
void check_max_pool_2x2() {
  std::mt19937 rng(5);
  for (int64_t in_h : {2, 5})
    for (int64_t in_w : {2, 7, 26, 33, 70, 71}) {
      CAPTURE(in_h);
      CAPTURE(in_w);
      const int64_t planes = 3, out_h = in_h / 2, out_w = in_w / 2, outputs = planes * out_h * out_w;
      std::vector<T> input(static_cast<size_t>(planes * in_h * in_w));
      // Values from a small set make ties common; about one in twelve is NaN.
      for (T& v : input) v = rng() % 12 == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(rng() % 4);
      // One guard element past each output buffer must stay untouched.
      std::vector<T> output(static_cast<size_t>(outputs + 1), T(-7));
      std::vector<int64_t> indices(static_cast<size_t>(outputs + 1), -7);
      gradiens::kernels::cpu::max_pool_2x2_planes(input.data(), planes, in_h, in_w, out_h, out_w, output.data(),
                                                  indices.data());
      bool same = output.back() == T(-7) && indices.back() == -7;
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t i = 0; i < out_h; ++i)
          for (int64_t j = 0; j < out_w; ++j) {
            T best = 0;
            int64_t at = -1;
            for (int64_t k : {2 * i * in_w + 2 * j, 2 * i * in_w + 2 * j + 1, (2 * i + 1) * in_w + 2 * j,
                              (2 * i + 1) * in_w + 2 * j + 1}) {
              const T v = input[static_cast<size_t>(p * in_h * in_w + k)];
              if (at < 0 || std::isnan(v) || (!std::isnan(best) && v > best)) best = v, at = k;
            }
            const size_t o = static_cast<size_t>((p * out_h + i) * out_w + j);
            same = same && indices[o] == at && (std::isnan(best) ? std::isnan(output[o]) : output[o] == best);
          }
      CHECK(same);
    }
}

TEST_CASE("vector_math: max_pool_2x2_planes as the definition, ties and NaN, partial and whole vectors") {
  const std::vector<std::string> ran = for_each_simd_target([] {
    check_max_pool_2x2<float>();
    check_max_pool_2x2<double>();
  });
  CHECK(!ran.empty());
}

// The LSTM cell's backward against its formulas (vector_math.h), in double, for
// rows shorter and longer than a vector and with dh or dc absent.
template <class T>
void check_lstm_cell_backward() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(0.02, 0.98), any(-1.5, 1.5);
  for (int64_t hidden : {1, 7, 16, 37})
    for (int absent : {0, 1, 2}) {  // 0: both given, 1: no dh, 2: no dc
      CAPTURE(hidden);
      CAPTURE(absent);
      const int64_t batch = 3, H = hidden;
      std::vector<T> act(static_cast<size_t>(batch * 4 * H)), tanh_c(static_cast<size_t>(batch * H)),
          cprev(tanh_c.size()), dh(tanh_c.size()), dc(tanh_c.size());
      for (T& v : act) v = static_cast<T>(unit(rng));  // sigmoid and tanh outputs lie in (-1, 1)
      for (std::vector<T>* v : {&tanh_c, &cprev, &dh, &dc})
        for (T& x : *v) x = static_cast<T>(any(rng) / 1.6);
      std::vector<T> dgates(act.size()), dcprev(tanh_c.size());
      gradiens::kernels::cpu::lstm_cell_backward(act.data(), tanh_c.data(), cprev.data(),
                                                 absent == 1 ? nullptr : dh.data(), absent == 2 ? nullptr : dc.data(),
                                                 batch, H, dgates.data(), dcprev.data());
      bool close = true;
      const double tol = sizeof(T) == 4 ? 1e-6 : 1e-14;
      const auto near = [&](T got, double want) { close = close && std::abs(static_cast<double>(got) - want) <= tol; };
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < H; ++j) {
          const size_t k = static_cast<size_t>(b * H + j), r = static_cast<size_t>(b * 4 * H + j);
          const double i = act[r], f = act[r + H], g = act[r + 2 * H], o = act[r + 3 * H], t = tanh_c[k];
          const double dhv = absent == 1 ? 0.0 : dh[k], dcv = absent == 2 ? 0.0 : dc[k];
          const double dct = dcv + dhv * o * (1 - t * t);
          near(dgates[r], dct * g * i * (1 - i));
          near(dgates[r + H], dct * cprev[k] * f * (1 - f));
          near(dgates[r + 2 * H], dct * i * (1 - g * g));
          near(dgates[r + 3 * H], dhv * t * o * (1 - o));
          near(dcprev[k], dct * f);
        }
      CHECK(close);
    }
}

TEST_CASE("vector_math: lstm_cell_backward as its formulas, every target") {
  const std::vector<std::string> ran = for_each_simd_target([] {
    check_lstm_cell_backward<float>();
    check_lstm_cell_backward<double>();
  });
  CHECK(!ran.empty());
}
