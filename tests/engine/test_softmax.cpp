// softmax and log_softmax: values and gradients against PyTorch 1.13 literals,
// stability on huge logits, edge rows (NaN, inf), and derivatives up to third
// order through the fused backward ops (their rows in the op sweep are in
// op_rows/softmax.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/dims.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;

namespace {

constexpr double NAN_ = std::numeric_limits<double>::quiet_NaN();
constexpr double INF = std::numeric_limits<double>::infinity();

std::string mismatch(const Tensor& t, const std::vector<double>& values, const std::vector<int64_t>& shape,
                     double rtol = 1e-13) {
  return gd::testing::shape_value_mismatch(t, values, shape, rtol, 1e-15);
}

Tensor T(const std::vector<double>& values, const std::vector<int64_t>& shape, gd::ScalarType dtype = gd::kFloat64) {
  return tensor_of(values, shape, dtype);
}
Tensor scalar(double value) { return gd::testing::scalar_of(value); }

// torch.tensor([[1.5,-2.,3.],[.5,4.,-1.]], dtype=torch.float64), and as a transposed view.
Tensor A() { return T({1.5, -2, 3, 0.5, 4, -1}, {2, 3}); }
Tensor At() { return T({1.5, 0.5, -2, 4, 3, -1}, {3, 2}).t(); }

// Weights 1, 2, 3, ... shaped like t.
Tensor weights(const Tensor& t) {
  return gd::arange(1, t.numel() + 1, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape(t.sizes());
}

// grad of sum(w * f(x)); with `second`, the grad of sum(g * g) for that g instead.
Tensor grad_of(const std::function<Tensor(const Tensor&)>& f, const Tensor& x0, bool second) {
  Tensor x = x0.detach().requires_grad_();
  Tensor y = f(x);
  Tensor g = gd::autograd::grad({y}, {x}, {weights(y)}, std::nullopt, second)[0];
  if (!second) return g;
  return gd::autograd::grad({(g * g).sum()}, {x})[0];
}

}  // namespace

TEST_CASE("softmax and log_softmax match PyTorch along every dim") {
  // python3 -c "A = torch.tensor([[1.5,-2.,3.],[.5,4.,-1.]], dtype=torch.float64); print(A.softmax(1), A.softmax(0), A.log_softmax(-1), A.log_softmax(0))"
  std::vector<double> by_row = {0.18142608857948594, 0.005478593159646257, 0.8130953182608678,
                                0.0291217615374784,  0.9643802951468596,   0.00649794331566194};
  std::vector<double> by_column = {0.7310585786300049, 0.0024726231566347748, 0.9820137900379085,
                                   0.2689414213699951, 0.9975273768433653,    0.017986209962091555};
  std::vector<double> log_by_row = {-1.706906933673413,  -5.206906933673413,   -0.2069069336734131,
                                    -3.5362695651247793, -0.03626956512477912, -5.036269565124779};
  std::vector<double> log_by_column = {-0.31326168751822286, -6.00247568513773,     -0.01814992791780978,
                                       -1.3132616875182228,  -0.002475685137730357, -4.0181499279178094};
  CHECK(mismatch(A().softmax(1), by_row, {2, 3}) == "");
  CHECK(mismatch(gd::softmax(A(), -1), by_row, {2, 3}) == "");
  CHECK(mismatch(At().softmax(1), by_row, {2, 3}) == "");
  CHECK(mismatch(A().softmax(0), by_column, {2, 3}) == "");
  CHECK(mismatch(At().softmax(-2), by_column, {2, 3}) == "");
  CHECK(mismatch(A().log_softmax(-1), log_by_row, {2, 3}) == "");
  CHECK(mismatch(At().log_softmax(1), log_by_row, {2, 3}) == "");
  CHECK(mismatch(gd::log_softmax(A(), 0), log_by_column, {2, 3}) == "");
  // A broadcast input (stride 0 along the dim): every column holds equal values.
  CHECK(mismatch(T({1, 2, 3}, {3}).expand({2, 3}).softmax(0), {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, {2, 3}) == "");
  // 0-dim: softmax is 1 and log_softmax 0 (torch.tensor(2.).softmax(0) -> 1.)
  CHECK(mismatch(scalar(2).softmax(0), {1}, {}) == "");
  CHECK(mismatch(scalar(2).log_softmax(-1), {0}, {}) == "");
  CHECK(mismatch(gd::zeros({2, 0}, gd::kFloat64).softmax(1), {}, {2, 0}) == "");
}

TEST_CASE("softmax along a middle dim of a 3-D tensor matches PyTorch") {
  // python3 -c "x = torch.arange(12., dtype=torch.float64).reshape(2,3,2) / 3; print(x.softmax(1), x.log_softmax(1))"
  Tensor x = gd::arange(0, 12, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape({2, 3, 2}) / 3;
  std::vector<double> soft = {0.14833709805949272, 0.1483370980594927,  0.2889212154417395, 0.2889212154417395,
                              0.5627416864987679,  0.5627416864987679,  0.14833709805949272, 0.14833709805949274,
                              0.28892121544173943, 0.2889212154417395,  0.5627416864987679, 0.5627416864987678};
  std::vector<double> log_soft = {-1.9082679056297223, -1.9082679056297225, -1.2416012389630557, -1.2416012389630557,
                                  -0.574934572296389,  -0.574934572296389,  -1.9082679056297223, -1.9082679056297223,
                                  -1.2416012389630557, -1.2416012389630557, -0.5749345722963889, -0.5749345722963891};
  CHECK(mismatch(x.softmax(1), soft, {2, 3, 2}) == "");
  CHECK(mismatch(x.log_softmax(-2), log_soft, {2, 3, 2}) == "");
  // The same through the strided-line path (a non-contiguous input).
  Tensor xt = x.transpose(0, 2).contiguous().transpose(0, 2);
  CHECK(!xt.is_contiguous());
  CHECK(mismatch(xt.softmax(1), soft, {2, 3, 2}) == "");
  CHECK(mismatch(xt.log_softmax(1), log_soft, {2, 3, 2}) == "");
  // Size-1 trailing dims: torch.tensor([[[2.]],[[5.]]]).softmax(0) -> [0.0474, 0.9526]
  CHECK(mismatch(T({2, 5}, {2, 1, 1}).softmax(0), {0.04742587317756679, 0.9525741268224334}, {2, 1, 1}) == "");
}

TEST_CASE("float32 softmax matches PyTorch") {
  // torch.tensor([[1.,2.],[3.,4.],[5.,6.]]).softmax(0), .log_softmax(1)
  Tensor x = T({1, 2, 3, 4, 5, 6}, {3, 2}, gd::kFloat32);
  Tensor s = x.softmax(0);
  CHECK(s.dtype() == gd::kFloat32);
  CHECK(mismatch(s, {0.01587624102830887, 0.01587624102830887, 0.11731042712926865, 0.11731042712926865,
                     0.8668133616447449, 0.8668133616447449},
                 {3, 2}, 1e-6) == "");
  CHECK(mismatch(x.log_softmax(1), {-1.31326162815094, -0.31326165795326233, -1.31326162815094, -0.31326165795326233,
                                    -1.31326162815094, -0.31326165795326233},
                 {3, 2}, 1e-6) == "");
}

TEST_CASE("softmax of huge logits stays finite (the max is subtracted first)") {
  // torch.tensor([1e4, 1e4-1, -1e4]).softmax(0) -> [0.7310586, 0.2689414, 0.]; log_softmax -> [-0.3132617, -1.3132616, -20000.3125]
  Tensor f32 = T({1e4, 1e4 - 1, -1e4}, {3}, gd::kFloat32);
  CHECK(mismatch(f32.softmax(0), {0.7310585975646973, 0.2689414322376251, 0.0}, {3}, 1e-6) == "");
  CHECK(mismatch(f32.log_softmax(0), {-0.31326165795326233, -1.31326162815094, -20000.3125}, {3}, 1e-6) == "");
  // torch.tensor([1e300, -1e300, 1e300], dtype=torch.float64).softmax(0) -> [0.5, 0, 0.5]; log_softmax -> [-log 2, -2e300, -log 2]
  Tensor f64 = T({1e300, -1e300, 1e300}, {3});
  CHECK(mismatch(f64.softmax(0), {0.5, 0.0, 0.5}, {3}) == "");
  CHECK(mismatch(f64.log_softmax(0), {-0.6931471805599453, -2e300, -0.6931471805599453}, {3}) == "");
  // The gradient stays finite too.
  Tensor x = f64.detach().requires_grad_();
  Tensor g = gd::autograd::grad({(x.softmax(0) * weights(x)).sum()}, {x})[0];
  CHECK(mismatch(g, {-0.5, 0.0, 0.5}, {3}) == "");
}

TEST_CASE("softmax edge rows: NaN, +inf and all -inf give PyTorch's results") {
  // torch: softmax([nan, 1.]) -> [nan, nan]; softmax([inf, 1.]) -> [nan, nan];
  // softmax([-inf, -inf]) -> [nan, nan]; log_softmax([-inf, 1.]) -> [-inf, 0.]
  CHECK(mismatch(T({NAN_, 1}, {2}).softmax(0), {NAN_, NAN_}, {2}) == "");
  CHECK(mismatch(T({INF, 1}, {2}).softmax(0), {NAN_, NAN_}, {2}) == "");
  CHECK(mismatch(T({-INF, -INF}, {2}).softmax(0), {NAN_, NAN_}, {2}) == "");
  CHECK(mismatch(T({-INF, 1}, {2}).log_softmax(0), {-INF, 0}, {2}) == "");
  CHECK(mismatch(T({-INF, 1}, {2}).softmax(0), {0, 1}, {2}) == "");
  // Only the row holding the NaN is affected.
  CHECK(mismatch(T({NAN_, 1, 0, 0}, {2, 2}).softmax(1), {NAN_, NAN_, 0.5, 0.5}, {2, 2}) == "");
}

TEST_CASE("softmax errors") {
  CHECK(error_of([] { tensor_of({1, 2}, {2}, gd::kInt64).softmax(0); }) == "softmax: not implemented for dtype int64");
  CHECK(error_of([] { tensor_of({1, 2}, {2}, gd::kInt64).log_softmax(0); }) ==
        "log_softmax: not implemented for dtype int64");
  CHECK(error_of([] { A().softmax(2); }) ==
        "softmax: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST_CASE("softmax and log_softmax gradients match PyTorch to second order") {
  // python3 -c "x = A.clone().requires_grad_(); w = torch.arange(1.,7.).reshape(2,3); (x.softmax(1)*w).sum().backward(); ...
  //   g, = torch.autograd.grad((x.softmax(1)*w).sum(), x, create_graph=True); (g*g).sum().backward()"
  auto soft1 = [](const Tensor& x) { return x.softmax(1); };
  auto logsoft0 = [](const Tensor& x) { return x.log_softmax(0); };
  auto logsoft1 = [](const Tensor& x) { return x.log_softmax(1); };
  CHECK(mismatch(grad_of(soft1, A(), false),
                 {-0.2960273661965959, -0.003460658720891437, 0.2994880249174877, -0.02846291609815542,
                  0.021817964494103736, 0.0066449516040511395},
                 {2, 3}, 1e-12) == "");
  CHECK(mismatch(grad_of(logsoft0, A(), false),
                 {-2.6552928931500244, 1.9826916379035566, -5.838124110341176, 2.6552928931500244,
                  -1.9826916379035575, 5.838124110341176},
                 {2, 3}, 1e-12) == "");
  CHECK(mismatch(grad_of(soft1, At(), true),
                 {0.22328104997398845, -0.0006055940434017853, -0.22267545593058669, 0.002695831474669012,
                  -0.002497665232898384, -0.00019816624177062365},
                 {2, 3}, 1e-11) == "");
  CHECK(mismatch(grad_of(logsoft1, A(), true),
                 {-3.1441667908621955, -0.23009274967335125, 3.3742595405355478, -10.963986946819363,
                  13.866413438843304, -2.9024264920239573},
                 {2, 3}, 1e-12) == "");
}

TEST_CASE("softmax and log_softmax third derivatives (gradgradcheck of the gradient)") {
  // The gradient function goes through the fused backward op; gradgradcheck of
  // it checks the fused op's own backward and that op's backward again.
  for (bool log : {false, true}) {
    CAPTURE(log);
    Tensor x = At().detach().requires_grad_();
    Tensor w = weights(x);
    gd::autograd::TensorFunction gradient = [log, w](const std::vector<Tensor>& in) {
      Tensor y = log ? in[0].log_softmax(0) : in[0].softmax(0);
      return std::vector<Tensor>{gd::autograd::grad({(y * w * y).sum()}, {in[0]}, {}, std::nullopt, true)[0]};
    };
    CHECK(gd::autograd::gradcheck(gradient, {x}));
    CHECK(gd::autograd::gradgradcheck(gradient, {x}));
  }
}
