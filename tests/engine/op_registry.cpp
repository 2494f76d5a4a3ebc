// The differentiable-op table (one row per op: name, function, sample inputs
// kept inside the op's domain) and the helpers declared in op_registry.h.
#include "tests/engine/op_registry.h"

#include "engine/dims.h"
#include "engine/generator.h"
#include "tests/engine/op_rows/row_builders.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

namespace gradiens::testing {

// ---- helpers ----

Tensor tensor_of(const std::vector<double>& values, const std::vector<int64_t>& sizes, ScalarType dtype) {
  std::vector<int64_t> shape = sizes.empty() ? std::vector<int64_t>{static_cast<int64_t>(values.size())} : sizes;
  Tensor t = empty(shape, TensorOptions().dtype(dtype));
  GD_CHECK(t.numel() == static_cast<int64_t>(values.size()),
           fmt::format("tensor_of: {} values for {} elements", values.size(), t.numel()));
  dispatch_all(dtype, "tensor_of", [&]<class T>() {
    T* p = t.data_ptr<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
  });
  return t;
}

std::vector<double> values_of(const Tensor& t) {
  NoGradGuard no_grad;
  Tensor c = t.detach().to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

Tensor sample(IntArrayRef sizes, double lo, double hi, uint64_t seed, ScalarType dtype) {
  Tensor t = empty(sizes, TensorOptions().dtype(kFloat64));
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double u = static_cast<double>(splitmix64(seed * 1000003 + static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
    p[i] = lo + (hi - lo) * u;
  }
  return dtype == kFloat64 ? t : t.to(dtype);
}

std::string value_mismatch(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol) {
  if (got.size() != want.size()) return fmt::format("{} elements, expected {}", got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool ok = std::isnan(w) ? std::isnan(g)
              : std::isinf(w) ? g == w
                              : std::abs(g - w) <= atol + rtol * std::abs(w);
    if (!ok) return fmt::format("element {}: got {:.17g}, expected {:.17g}", i, g, w);
  }
  return "";
}

std::string value_mismatch(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (!(got.sizes() == want.sizes()))
    return fmt::format("shape [{}] but expected [{}]", fmt::join(got.sizes().vec(), ", "),
                       fmt::join(want.sizes().vec(), ", "));
  return value_mismatch(values_of(got), values_of(want), rtol, atol);
}

const char* variant_name(Variant v) {
  switch (v) {
    case kContiguous: return "contiguous";
    case kTransposed: return "transposed";
    case kBroadcast: return "broadcast";
    case kZeroDim: return "0-dim";
    default: return "?";
  }
}

// ---- the op table ----

namespace {

using V = std::vector<Tensor>;
using indexing::Ellipsis;
using indexing::None;
using indexing::Slice;

constexpr unsigned kWithDims = kAllVariants & ~kZeroDim;  // ops that need at least one dimension

InputSpec in(std::vector<int64_t> shape, double lo = -1.0, double hi = 1.0) { return {std::move(shape), lo, hi}; }

OpInfo unary(std::string name, std::function<Tensor(const Tensor&)> f, double lo = -1.0, double hi = 1.0,
             unsigned variants = kAllVariants) {
  return {std::move(name), [f](const V& x) { return V{f(x[0])}; }, {in({2, 3}, lo, hi)}, variants, {}};
}

// A unary op on an input of a given shape (views and reductions care about rank).
OpInfo shaped(std::string name, std::vector<int64_t> shape, std::function<Tensor(const Tensor&)> f,
              unsigned variants = kWithDims) {
  return {std::move(name), [f](const V& x) { return V{f(x[0])}; }, {in(std::move(shape))}, variants, {}};
}

// An op with several outputs (chunk, split, unbind).
OpInfo multi(std::string name, std::vector<int64_t> shape, std::function<V(const Tensor&)> f,
             unsigned variants = kWithDims) {
  return {std::move(name), [f](const V& x) { return f(x[0]); }, {in(std::move(shape))}, variants, {}};
}

OpInfo binary(std::string name, std::function<Tensor(const Tensor&, const Tensor&)> f, InputSpec a = in({2, 3}),
              InputSpec b = in({2, 3}), unsigned variants = kAllVariants) {
  return {std::move(name), [f](const V& x) { return V{f(x[0], x[1])}; }, {std::move(a), std::move(b)}, variants, {}};
}

std::vector<int64_t> with_leading(int64_t n, IntArrayRef sizes) {
  std::vector<int64_t> out{n};
  for (int64_t s : sizes) out.push_back(s);
  return out;
}

std::vector<OpInfo> build_table() {
  std::vector<OpInfo> ops = {
      // ---- unary math (engine/ops/unary.cpp) ----
      unary("neg", [](const Tensor& x) { return neg(x); }),
      unary("operator-", [](const Tensor& x) { return -x; }),
      unary("exp", [](const Tensor& x) { return exp(x); }),
      unary("log", [](const Tensor& x) { return log(x); }, 0.2, 2.0),
      unary("log1p", [](const Tensor& x) { return log1p(x); }, -0.5, 2.0),
      unary("expm1", [](const Tensor& x) { return expm1(x); }),
      unary("sqrt", [](const Tensor& x) { return sqrt(x); }, 0.2, 2.0),
      unary("rsqrt", [](const Tensor& x) { return rsqrt(x); }, 0.2, 2.0),
      unary("abs", [](const Tensor& x) { return abs(x); }),
      unary("sign", [](const Tensor& x) { return sign(x); }),
      unary("reciprocal", [](const Tensor& x) { return reciprocal(x); }, 0.3, 2.0),
      unary("reciprocal (negative)", [](const Tensor& x) { return reciprocal(x); }, -2.0, -0.3),
      unary("square", [](const Tensor& x) { return square(x); }),
      unary("sin", [](const Tensor& x) { return sin(x); }, -3.0, 3.0),
      unary("cos", [](const Tensor& x) { return cos(x); }, -3.0, 3.0),
      unary("tan", [](const Tensor& x) { return tan(x); }, -1.2, 1.2),
      unary("tanh", [](const Tensor& x) { return tanh(x); }, -2.0, 2.0),
      unary("sigmoid", [](const Tensor& x) { return sigmoid(x); }, -3.0, 3.0),
      unary("relu", [](const Tensor& x) { return relu(x); }),
      unary("erf", [](const Tensor& x) { return erf(x); }, -2.0, 2.0),
      unary("gelu", [](const Tensor& x) { return gelu(x); }, -3.0, 3.0),
      unary("gelu (tanh)", [](const Tensor& x) { return gelu(x, "tanh"); }, -3.0, 3.0),
      unary("silu", [](const Tensor& x) { return silu(x); }, -3.0, 3.0),
      unary("softplus", [](const Tensor& x) { return softplus(x); }, -3.0, 3.0),
      // beta 2, threshold 2: beta * x stays below the threshold, then above it (the linear branch).
      unary("softplus (beta 2)", [](const Tensor& x) { return softplus(x, 2, 2); }, -1.0, 0.8),
      unary("softplus (above threshold)", [](const Tensor& x) { return softplus(x, 2, 2); }, 1.2, 2.0),
      binary("tanh_backward", [](const Tensor& g, const Tensor& y) { return tanh_backward(g, y); }, in({2, 3}),
             in({2, 3}, -0.9, 0.9)),
      {"scaled_product", [](const V& x) { return V{scaled_product(x[0], x[1], x[2], -2.0)}; },
       {in({2, 3}), in({2, 3}), in({2, 3})}, kAllVariants, {}},
      // self away from the threshold: the step has no derivative there.
      binary("threshold_backward", [](const Tensor& g, const Tensor& y) { return threshold_backward(g, y, 0.1); },
             in({2, 3}), in({2, 3}, -0.9, 0.9)),
      binary("sigmoid_backward", [](const Tensor& g, const Tensor& y) { return sigmoid_backward(g, y); }, in({2, 3}),
             in({2, 3}, 0.1, 0.9)),

      // ---- binary arithmetic with a scalar (engine/ops/binary.cpp) ----
      unary("add scalar", [](const Tensor& x) { return x + 1.5; }),
      unary("add scalar alpha", [](const Tensor& x) { return add(x, 2, 0.5); }),
      unary("sub scalar", [](const Tensor& x) { return x - 2; }),
      unary("rsub scalar", [](const Tensor& x) { return 1.5 - x; }),
      unary("mul scalar", [](const Tensor& x) { return x * -2.5; }),
      unary("div scalar", [](const Tensor& x) { return x / 4; }),
      unary("rdiv scalar", [](const Tensor& x) { return 4.0 / x; }, 0.3, 2.0),
      unary("pow 0", [](const Tensor& x) { return pow(x, 0); }),
      unary("pow 1", [](const Tensor& x) { return pow(x, 1); }),
      unary("pow 2", [](const Tensor& x) { return pow(x, 2); }),
      unary("pow 3", [](const Tensor& x) { return pow(x, 3); }),
      unary("pow 0.5", [](const Tensor& x) { return pow(x, 0.5); }, 0.2, 2.0),
      unary("pow -1.5", [](const Tensor& x) { return pow(x, -1.5); }, 0.3, 2.0),
      unary("rpow 2", [](const Tensor& x) { return pow(2.0, x); }),
      unary("rpow 0.5", [](const Tensor& x) { return pow(0.5, x); }),
      unary("clamp", [](const Tensor& x) { return clamp(x, -0.5, 0.5); }),
      unary("clamp_min", [](const Tensor& x) { return clamp_min(x, 0.1); }),
      unary("clamp_max", [](const Tensor& x) { return clamp_max(x, 0.1); }),

      // ---- binary arithmetic between tensors ----
      binary("add", [](const Tensor& a, const Tensor& b) { return a + b; }),
      binary("add alpha", [](const Tensor& a, const Tensor& b) { return add(a, b, 2.5); }),
      binary("sub", [](const Tensor& a, const Tensor& b) { return a - b; }),
      binary("sub alpha", [](const Tensor& a, const Tensor& b) { return sub(a, b, -0.5); }),
      binary("mul", [](const Tensor& a, const Tensor& b) { return a * b; }),
      binary("div", [](const Tensor& a, const Tensor& b) { return a / b; }, in({2, 3}), in({2, 3}, 0.5, 2.0)),
      binary("div (negative divisor)", [](const Tensor& a, const Tensor& b) { return a / b; }, in({2, 3}),
             in({2, 3}, -2.0, -0.5)),
      binary("pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, in({2, 3}, 0.3, 2.0),
             in({2, 3}, -1.5, 1.5)),
      binary("maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }),
      binary("minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }),
      binary("where", [](const Tensor& a, const Tensor& b) { return where(a > 0, a, b); }),
      unary("where (scalar a)", [](const Tensor& b) { return where(b > 0, 1.5, b * 2); }),
      unary("where (scalar b)", [](const Tensor& a) { return where(a > 0, a * 2, -1.0); }),
      binary("add (broadcast shapes)", [](const Tensor& a, const Tensor& b) { return a + b; }, in({2, 3}), in({3})),
      binary("mul (broadcast shapes)", [](const Tensor& a, const Tensor& b) { return a * b; }, in({2, 1}), in({1, 3})),
      binary("mul (0-dim operand)", [](const Tensor& a, const Tensor& b) { return a * b; }, in({2, 3}), in({})),
      binary("div (0-dim divisor)", [](const Tensor& a, const Tensor& b) { return a / b; }, in({2, 3}),
             in({}, 0.5, 2.0)),

      // ---- in-place forms on a non-leaf (history rebase) ----
      inplace_row("add_", [](Tensor& y, const V& x) { y.add_(x[1]); }, {in({2, 3}), in({2, 3})}),
      inplace_row("add_ alpha", [](Tensor& y, const V& x) { y.add_(x[1], -1.5); }, {in({2, 3}), in({2, 3})}),
      inplace_row("sub_", [](Tensor& y, const V& x) { y.sub_(x[1]); }, {in({2, 3}), in({2, 3})}),
      inplace_row("mul_", [](Tensor& y, const V& x) { y.mul_(x[1]); }, {in({2, 3}), in({2, 3})}),
      inplace_row("div_", [](Tensor& y, const V& x) { y.div_(x[1]); }, {in({2, 3}), in({2, 3}, 0.5, 2.0)}),
      inplace_row("mul_ (broadcast operand)", [](Tensor& y, const V& x) { y.mul_(x[1]); }, {in({2, 3}), in({3})}),
      inplace_row("add_ scalar", [](Tensor& y, const V&) { y.add_(1.5); }, {in({2, 3})}),
      inplace_row("sub_ scalar", [](Tensor& y, const V&) { y.sub_(0.5, 2); }, {in({2, 3})}),
      inplace_row("mul_ scalar", [](Tensor& y, const V&) { y.mul_(-3.0); }, {in({2, 3})}),
      inplace_row("div_ scalar", [](Tensor& y, const V&) { y.div_(4.0); }, {in({2, 3})}),
      inplace_row("pow_", [](Tensor& y, const V&) { y.pow_(3); }, {in({2, 3})}),
      inplace_row("clamp_", [](Tensor& y, const V&) { y.clamp_(-0.5, 0.5); }, {in({2, 3})}),
      inplace_row("neg_", [](Tensor& y, const V&) { y.neg_(); }, {in({2, 3})}),
      inplace_row("exp_", [](Tensor& y, const V&) { y.exp_(); }, {in({2, 3})}),
      inplace_row("log_", [](Tensor& y, const V&) { y.log_(); }, {in({2, 3}, 0.2, 2.0)}),
      inplace_row("sqrt_", [](Tensor& y, const V&) { y.sqrt_(); }, {in({2, 3}, 0.2, 2.0)}),
      inplace_row("abs_", [](Tensor& y, const V&) { y.abs_(); }, {in({2, 3})}),
      inplace_row("tanh_", [](Tensor& y, const V&) { y.tanh_(); }, {in({2, 3})}),
      inplace_row("sigmoid_", [](Tensor& y, const V&) { y.sigmoid_(); }, {in({2, 3})}),
      inplace_row("relu_", [](Tensor& y, const V&) { y.relu_(); }, {in({2, 3})}),
      inplace_row("square_", [](Tensor& y, const V&) { y.square_(); }, {in({2, 3})}),
      inplace_row("chain mul_ exp_ add_", [](Tensor& y, const V& x) { y.mul_(x[1]).exp_().add_(x[1], 0.5); },
                  {in({2, 3}), in({2, 3})}),
      inplace_row("copy_", [](Tensor& y, const V& x) { y.copy_(x[1] * 2); }, {in({2, 3}), in({2, 3})}),
      inplace_row("copy_ (broadcast source)", [](Tensor& y, const V& x) { y.copy_(x[1]); }, {in({2, 3}), in({3})}),
      {"fill_",
       [](const V& x) {
         Tensor y = x[0] * 2;
         y.fill_(1.5);
         return V{y * x[0]};
       },
       {in({2, 3})}, kAllVariants, {}},
      {"zero_",
       [](const V& x) {
         Tensor y = x[0] * 2;
         y.zero_();
         return V{y + x[0]};
       },
       {in({2, 3})}, kAllVariants, {}},

      // ---- copies and conversions (engine/ops/copy.cpp) ----
      unary("clone", [](const Tensor& x) { return x.clone(); }),
      unary("contiguous", [](const Tensor& x) { return x.contiguous(); }),
      unary("to float64 copy", [](const Tensor& x) { return x.to(kFloat64, /*copy=*/true); }),
      // The float32 leg rounds to 24 bits: finite differences need a larger step.
      {"to float32 and back", [](const V& x) { return V{x[0].to(kFloat32).to(kFloat64)}; }, {in({2, 3})},
       kAllVariants, {1e-3, 1e-4, 1e-3, true}},

      // ---- views and shape (engine/ops/shape.cpp) ----
      shaped("view", {2, 3},
             [](const Tensor& x) {
               std::vector<int64_t> s = x.sizes().vec();
               s.push_back(1);
               return x.view(s);
             },
             kAllVariants),
      shaped("view (flat)", {2, 3}, [](const Tensor& x) { return x.view({-1}); }, kContiguous | kZeroDim),
      shaped("view_as", {2, 3}, [](const Tensor& x) { return x.view_as(gradiens::empty({3, 2})); }, kContiguous),
      shaped("reshape", {2, 3}, [](const Tensor& x) { return x.reshape({-1}); }, kAllVariants),
      shaped("reshape (split dim)", {2, 6}, [](const Tensor& x) { return x.reshape({2, 3, 2}); }),
      shaped("flatten", {2, 3, 2}, [](const Tensor& x) { return x.flatten(); }, kAllVariants),
      shaped("flatten (1, 2)", {2, 3, 2}, [](const Tensor& x) { return x.flatten(1); }),
      shaped("squeeze", {2, 1, 3}, [](const Tensor& x) { return x.squeeze(); }, kAllVariants),
      shaped("squeeze dim", {2, 1, 3}, [](const Tensor& x) { return x.squeeze(1); }),
      shaped("unsqueeze 0", {2, 3}, [](const Tensor& x) { return x.unsqueeze(0); }, kAllVariants),
      shaped("unsqueeze -1", {2, 3}, [](const Tensor& x) { return x.unsqueeze(-1); }, kAllVariants),
      shaped("transpose", {2, 3, 2}, [](const Tensor& x) { return x.transpose(0, 2); }),
      shaped("t", {2, 3}, [](const Tensor& x) { return x.t(); }, kAllVariants),
      shaped("mT", {2, 3, 2}, [](const Tensor& x) { return x.mT(); }),
      shaped("permute", {2, 3, 2}, [](const Tensor& x) { return x.permute({2, 0, 1}); }),
      shaped("expand", {2, 3}, [](const Tensor& x) { return x.expand(with_leading(2, x.sizes())); }, kAllVariants),
      shaped("expand (size-1 dim)", {2, 1}, [](const Tensor& x) { return x.expand({2, 3}); }),
      shaped("expand_as", {2, 3}, [](const Tensor& x) { return x.expand_as(gradiens::empty(with_leading(3, x.sizes()))); },
             kAllVariants),
      shaped("narrow", {2, 3}, [](const Tensor& x) { return x.narrow(1, 1, 2); }),
      shaped("select", {2, 3}, [](const Tensor& x) { return x.select(1, 2); }),
      shaped("select (negative)", {2, 3}, [](const Tensor& x) { return x.select(0, -1); }),
      shaped("operator[]", {2, 3}, [](const Tensor& x) { return x[1]; }),
      shaped("slice (step 2)", {2, 5}, [](const Tensor& x) { return x.slice(1, 0, 5, 2); }),
      shaped("slice (start)", {3, 2}, [](const Tensor& x) { return x.slice(0, 1); }),
      shaped("index", {2, 3, 2}, [](const Tensor& x) { return x.index({Slice(), 0, None, Ellipsis}); }),
      shaped("index (ellipsis first)", {2, 3, 2}, [](const Tensor& x) { return x.index({Ellipsis, Slice(1, None), None}); }),
      shaped("index (step)", {4, 3}, [](const Tensor& x) { return x.index({Slice(None, None, 2), -1}); }),
      shaped("diagonal", {3, 3}, [](const Tensor& x) { return x.diagonal(); }),
      shaped("diagonal (offset 1)", {2, 3}, [](const Tensor& x) { return x.diagonal(1); }),
      shaped("diagonal (offset -1)", {3, 2}, [](const Tensor& x) { return x.diagonal(-1); }),
      shaped("diagonal (dims 1, 2)", {2, 3, 2}, [](const Tensor& x) { return x.diagonal(0, 1, 2); }),
      shaped("unfold (overlapping)", {2, 5}, [](const Tensor& x) { return x.unfold(1, 3, 1); }),
      shaped("unfold (step 2)", {4, 3}, [](const Tensor& x) { return x.unfold(0, 2, 2); }),
      shaped("as_strided", {2, 3}, [](const Tensor& x) { return x.as_strided({2, 2}, {1, 2}, 1); }, kContiguous),
      shaped("as_strided (overlapping)", {2, 3}, [](const Tensor& x) { return x.as_strided({3, 3}, {1, 1}); },
             kContiguous),
      multi("chunk", {2, 5}, [](const Tensor& x) { return x.chunk(2, 1); }),
      multi("split", {2, 5}, [](const Tensor& x) { return x.split(2, 1); }),
      multi("split (sizes)", {2, 5}, [](const Tensor& x) { return x.split({1, 4}, 1); }),
      multi("unbind", {2, 3}, [](const Tensor& x) { return x.unbind(1); }),
      binary("cat", [](const Tensor& a, const Tensor& b) { return cat({a, b}, 1); }, in({2, 3}), in({2, 2}),
             kWithDims),
      binary("cat (dim 0, reused input)", [](const Tensor& a, const Tensor& b) { return cat({a, b * 2, a}, 0); },
             in({2, 3}), in({1, 3}), kWithDims),
      binary("stack", [](const Tensor& a, const Tensor& b) { return stack({a, b}, 0); }),
      binary("stack (last dim)", [](const Tensor& a, const Tensor& b) { return stack({a, b}, -1); }),

      // ---- reductions (engine/ops/reduce.cpp) ----
      shaped("sum", {2, 3}, [](const Tensor& x) { return x.sum(); }, kAllVariants),
      shaped("sum dim", {2, 3, 2}, [](const Tensor& x) { return x.sum({1}); }),
      shaped("sum dims keepdim", {2, 3, 2}, [](const Tensor& x) { return x.sum({-1, 0}, true); }),
      shaped("mean", {2, 3}, [](const Tensor& x) { return x.mean(); }, kAllVariants),
      shaped("mean dim keepdim", {2, 3}, [](const Tensor& x) { return x.mean({1}, true); }),
      shaped("sum_to", {2, 3}, [](const Tensor& x) { return sum_to(x, {1, 3}); }),
      shaped("sum_to (drop leading)", {2, 3, 2}, [](const Tensor& x) { return sum_to(x, {3, 1}); }),

      // ---- products (engine/ops/linalg.cpp) ----
      binary("mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, in({2, 3}), in({3, 4}), kWithDims),
      {"addmm (bias row, beta, alpha)", [](const V& x) { return V{addmm(x[0], x[1], x[2], 0.5, 2)}; },
       {in({4}), in({2, 3}), in({3, 4})}, kWithDims, {}},
      {"addmm (full self)", [](const V& x) { return V{addmm(x[0], x[1], x[2])}; }, {in({2, 4}), in({2, 3}), in({3, 4})},
       kWithDims, {}},
      binary("bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, in({2, 2, 3}), in({2, 3, 2}),
             kWithDims),
      binary("mv", [](const Tensor& a, const Tensor& v) { return mv(a, v); }, in({2, 3}), in({3}), kWithDims),
      binary("dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); }, in({3}), in({3}), kWithDims),
      binary("matmul (matrix, vector)", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, in({2, 3}),
             in({3}), kWithDims),
      binary("matmul (vector, matrix)", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, in({3}),
             in({3, 2}), kWithDims),
      binary("matmul (batched, broadcast)", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
             in({2, 2, 3}), in({3, 2}), kWithDims),
      binary("matmul (broadcast batch dims)", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
             in({2, 1, 2, 3}), in({3, 3, 2}), kWithDims),

      // ---- extrema and products over dims (engine/ops/reduce_extrema.cpp) ----
      shaped("prod", {2, 3}, [](const Tensor& x) { return x.prod(); }, kAllVariants),
      shaped("prod dim", {2, 3}, [](const Tensor& x) { return x.prod(1, true); }),
      // Reducing over a broadcast dim compares equal copies: a tie, where the
      // gradient is not smooth, so those rows skip the broadcast variant.
      shaped("max", {2, 3}, [](const Tensor& x) { return x.max(); }, kContiguous | kTransposed | kZeroDim),
      shaped("min", {2, 3}, [](const Tensor& x) { return x.min(); }, kContiguous | kTransposed | kZeroDim),
      multi("max dim", {2, 3},
            [](const Tensor& x) {
              auto [values, indices] = x.max(1);
              return V{values, indices};
            }),
      multi("min dim keepdim", {2, 3},
            [](const Tensor& x) {
              auto [values, indices] = x.min(0, true);
              return V{values, indices};
            },
            kContiguous | kTransposed),
      shaped("amax", {2, 3, 2}, [](const Tensor& x) { return x.amax({0, 2}); }, kContiguous | kTransposed),
      shaped("amin keepdim", {2, 3}, [](const Tensor& x) { return x.amin({1}, true); }),

      // ---- statistics (engine/ops/reduce_stats.cpp) ----
      shaped("var", {2, 3}, [](const Tensor& x) { return x.var(); }, kContiguous | kTransposed),
      shaped("var dim, correction 0", {2, 3}, [](const Tensor& x) { return x.var(std::vector<int64_t>{1}, 0, true); }),
      shaped("std", {2, 3}, [](const Tensor& x) { return x.std(); }, kContiguous | kTransposed),
      shaped("std dim", {2, 3}, [](const Tensor& x) { return x.std(std::vector<int64_t>{0}); }, kContiguous | kTransposed),
      shaped("norm", {2, 3}, [](const Tensor& x) { return x.norm(); }, kAllVariants),
      shaped("norm 1", {2, 3}, [](const Tensor& x) { return x.norm(1); }, kAllVariants),
      shaped("norm 3 dim", {2, 3}, [](const Tensor& x) { return x.norm(3, {1}, true); }),
      shaped("logsumexp", {2, 3}, [](const Tensor& x) { return x.logsumexp({1}); }),
      shaped("logsumexp all dims", {2, 3}, [](const Tensor& x) { return x.logsumexp({0, 1}, true); }),

      // ---- indexing along a dim (engine/ops/indexing.cpp); indices are fixed, on the input's device
      // (Note [Sweep indices on the input's device]) ----
      shaped("gather", {2, 3},
             [](const Tensor& x) { return x.gather(1, rows::indices_for(x, {0, 2, 2, 1, 0, 0}, {2, 3})); }),
      shaped("gather (smaller index)", {3, 3},
             [](const Tensor& x) { return gather(x, 0, rows::indices_for(x, {2, 0, 1, 1}, {2, 2})); }),
      binary("scatter_add",
             [](const Tensor& x, const Tensor& src) {
               return x.scatter_add(1, rows::indices_for(x, {0, 0, 2, 1, 1, 1}, {2, 3}), src);
             },
             in({2, 3}), in({2, 3}), kWithDims),
      shaped("masked_fill", {2, 3},
             [](const Tensor& x) { return x.masked_fill(rows::mask_for(x, {1, 0, 0, 1, 1, 0}, {2, 3}), 0.5); }),
  };
  return ops;
}

}  // namespace

std::string shape_value_mismatch(const Tensor& t, const std::vector<double>& values, const std::vector<int64_t>& shape,
                                 double rtol, double atol) {
  if (t.sizes().vec() != shape) return "shape " + shape_to_string(t.sizes()) + " != " + shape_to_string(shape);
  return value_mismatch(values_of(t), values, rtol, atol);
}

Tensor scalar_of(double value) { return tensor_of({value}, {1}).reshape({}); }

Tensor with_seed(uint64_t seed, const std::function<Tensor()>& f) {
  GeneratorState saved = default_generator().get_state();
  default_generator().manual_seed(seed);
  Tensor out = f();
  default_generator().set_state(saved);
  return out;
}

OpInfo inplace_row(std::string name, std::function<void(Tensor&, const std::vector<Tensor>&)> f,
                   std::vector<InputSpec> inputs, unsigned variants) {
  return {std::move(name),
          [f](const std::vector<Tensor>& x) {
            Tensor y = x[0].clone();
            f(y, x);
            return std::vector<Tensor>{y};
          },
          std::move(inputs), variants, {}};
}

namespace {
std::vector<OpInfo>& registered_rows() {
  static std::vector<OpInfo> rows;
  return rows;
}
}  // namespace

OpRegistrar::OpRegistrar(std::vector<OpInfo> rows) {
  for (auto& row : rows) registered_rows().push_back(std::move(row));
}

const std::vector<OpInfo>& differentiable_ops() {
  static const std::vector<OpInfo> table = [] {
    std::vector<OpInfo> all = build_table();
    for (const auto& row : registered_rows()) all.push_back(row);
    return all;
  }();
  return table;
}

std::optional<std::vector<Tensor>> emptied_inputs(const OpInfo& op) {
  if (op.inputs.empty() || op.inputs[0].shape.empty()) return std::nullopt;
  const int64_t leading = op.inputs[0].shape[0];
  std::vector<Tensor> inputs;
  for (const InputSpec& spec : op.inputs) {
    std::vector<int64_t> shape = spec.shape;
    if (!shape.empty() && shape[0] == leading) shape[0] = 0;
    inputs.push_back(sample(shape, spec.lo, spec.hi, 3).detach().requires_grad_());
  }
  return inputs;
}

Run run_with_gradients(const autograd::TensorFunction& fn, const std::vector<Tensor>& inputs) {
  Run r;
  r.outputs = fn(inputs);
  std::vector<Tensor> roots, seeds, wrt;
  for (const Tensor& out : r.outputs)
    if (out.defined() && out.requires_grad()) {
      roots.push_back(out);
      seeds.push_back(ones_like(out));
    }
  for (const Tensor& x : inputs)
    if (x.requires_grad()) wrt.push_back(x);
  if (!roots.empty() && !wrt.empty())
    r.grads = autograd::grad(roots, wrt, seeds, std::nullopt, false, /*allow_unused=*/true);
  return r;
}

std::optional<VariantCase> make_variant(const OpInfo& op, Variant variant) {
  // Fixed per op and input, so a failure reproduces.
  uint64_t seed = std::hash<std::string>{}(op.name) % 100000;
  VariantCase out;
  std::vector<std::vector<int64_t>> expand_to(op.inputs.size());
  bool changed = variant == kContiguous;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const InputSpec& spec = op.inputs[i];
    std::vector<int64_t> shape = spec.shape;
    uint64_t s = seed * 7 + i;
    Tensor leaf;
    if (variant == kTransposed && shape.size() >= 2) {
      std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      leaf = sample(shape, spec.lo, spec.hi, s).transpose(-1, -2);
      changed = true;
    } else if (variant == kBroadcast && !shape.empty() && shape[0] > 1) {
      expand_to[i] = shape;
      shape[0] = 1;
      leaf = sample(shape, spec.lo, spec.hi, s);
      changed = true;
    } else if (variant == kZeroDim) {
      leaf = sample({}, spec.lo, spec.hi, s);
      changed = true;
    } else {
      leaf = sample(shape, spec.lo, spec.hi, s);
    }
    out.inputs.push_back(leaf.detach().requires_grad_());
  }
  if (!changed) return std::nullopt;
  bool expands = false;
  for (const auto& e : expand_to) expands = expands || !e.empty();
  if (!expands) {
    out.fn = op.fn;
  } else {
    out.fn = [fn = op.fn, expand_to](const std::vector<Tensor>& xs) {
      std::vector<Tensor> adapted = xs;
      for (size_t i = 0; i < xs.size(); ++i)
        if (!expand_to[i].empty()) adapted[i] = xs[i].expand(expand_to[i]);
      return fn(adapted);
    };
  }
  return out;
}

}  // namespace gradiens::testing
