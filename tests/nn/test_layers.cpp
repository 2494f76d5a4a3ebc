// The simpler layers against PyTorch 1.13: leaky_relu/elu (values, first and
// second derivatives at and around 0, gradcheck/gradgradcheck), LeakyReLU, ELU,
// Softmax, LogSoftmax, Dropout (statistics), Embedding (padding_idx, max_norm,
// from_pretrained), Flatten/Unflatten, LazyLinear, error texts and printing.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gradiens.h"
#include "nn/functional/activation.h"
#include "nn/modules/activation.h"
#include "nn/modules/dropout.h"
#include "nn/modules/embedding.h"
#include "nn/modules/flatten.h"
#include "nn/modules/linear.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace nn = gradiens::nn;
namespace F = gradiens::nn::functional;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::shape_value_mismatch;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;

namespace {

constexpr double INF = std::numeric_limits<double>::infinity();

Tensor T(const std::vector<double>& values, const std::vector<int64_t>& shape) { return tensor_of(values, shape); }
Tensor L(const std::vector<double>& values, const std::vector<int64_t>& shape) {
  return tensor_of(values, shape, gd::kInt64);
}
std::vector<int64_t> shape_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

// The reference script's tensors (torch.float64):
//   X = [[-2.0, -0.5, 0.0], [0.3, 1.7, -0.001]]   G = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
// y = f(X); gx = grad((f(X) * G).sum(), X); d2 = grad(grad(f(X).sum(), X, create_graph=True)[0].sum(), X).
Tensor X() { return T({-2.0, -0.5, 0.0, 0.3, 1.7, -0.001}, {2, 3}); }
Tensor G() { return T({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {2, 3}); }

struct ActivationCase {
  std::string name;
  std::function<Tensor(const Tensor&)> f;
  std::vector<double> y, gx, d2;
};

// Each row: F.leaky_relu(X, s) / F.elu(X, a) in PyTorch 1.13, values printed with repr.
const std::vector<ActivationCase>& activation_cases() {
  static const std::vector<ActivationCase> table = {
    {"leaky_relu 0.01", [](const Tensor& x) { return F::leaky_relu(x); }, {-0.02, -0.005, 0.0, 0.3, 1.7, -1e-05}, {0.005, -0.01, 0.02, 1.5, 0.25, -0.0075}, {0, 0, 0, 0, 0, 0}},
    {"leaky_relu 0.2", [](const Tensor& x) { return F::leaky_relu(x, 0.2); }, {-0.4, -0.1, 0.0, 0.3, 1.7, -0.0002}, {0.1, -0.2, 0.4, 1.5, 0.25, -0.15000000000000002}, {0, 0, 0, 0, 0, 0}},
    {"leaky_relu -0.5", [](const Tensor& x) { return F::leaky_relu(x, -0.5); }, {1.0, 0.25, -0.0, 0.3, 1.7, 0.0005}, {-0.25, 0.5, -1.0, 1.5, 0.25, 0.375}, {0, 0, 0, 0, 0, 0}},
    {"leaky_relu 1.5", [](const Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions(1.5)); }, {-3.0, -0.75, 0.0, 0.3, 1.7, -0.0015}, {0.75, -1.5, 3.0, 1.5, 0.25, -1.125}, {0, 0, 0, 0, 0, 0}},
    {"elu 1.0", [](const Tensor& x) { return F::elu(x); }, {-0.8646647167633873, -0.3934693402873666, 0.0, 0.3, 1.7, -0.000999500166624978}, {0.06766764161830635, -0.6065306597126334, 2.0, 1.5, 0.25, -0.7492503748750312}, {0.1353352832366127, 0.6065306597126334, 0.0, 0.0, 0.0, 0.999000499833375}},
    {"elu 0.5", [](const Tensor& x) { return F::elu(x, 0.5); }, {-0.43233235838169365, -0.1967346701436833, 0.0, 0.3, 1.7, -0.000499750083312489}, {0.033833820809153176, -0.3032653298563167, 1.0, 1.5, 0.25, -0.3746251874375156}, {0.06766764161830635, 0.3032653298563167, 0.0, 0.0, 0.0, 0.4995002499166875}},
    {"elu 2.0", [](const Tensor& x) { return F::elu(x, F::ELUFuncOptions().alpha(2.0)); }, {-1.7293294335267746, -0.7869386805747332, 0.0, 0.3, 1.7, -0.001999000333249956}, {0.1353352832366127, -1.2130613194252668, 4.0, 1.5, 0.25, -1.4985007497500624}, {0.2706705664732254, 1.2130613194252668, 0.0, 0.0, 0.0, 1.99800099966675}},
  };
  return table;
}

}  // namespace

TEST_CASE("nn layers: leaky_relu and elu match PyTorch, with its derivatives at 0") {
  for (const auto& c : activation_cases()) {
    CAPTURE(c.name);
    Tensor x = X().requires_grad_();
    Tensor y = c.f(x);
    // PyTorch's elu computes exp(x) - 1; expm1 differs in the last digits near 0.
    CHECK(shape_value_mismatch(y, c.y, {2, 3}, 1e-12) == "");
    CHECK(std::signbit(gd::testing::values_of(y)[2]) == std::signbit(c.y[2]));  // -0.0 for a negative slope
    Tensor gx = gd::autograd::grad({(y * G()).sum()}, {x})[0];
    CHECK(shape_value_mismatch(gx, c.gx, {2, 3}, 1e-13) == "");
    Tensor d1 = gd::autograd::grad({c.f(x).sum()}, {x}, {}, true, /*create_graph=*/true)[0];
    Tensor d2 = gd::autograd::grad({d1.sum()}, {x})[0];
    CHECK(shape_value_mismatch(d2, c.d2, {2, 3}, 1e-13) == "");
  }
}

TEST_CASE("nn layers: leaky_relu and elu pass gradcheck and gradgradcheck (reverse and forward mode)") {
  gd::autograd::GradcheckOptions with_forward_ad;
  with_forward_ad.check_forward_ad = true;
  // Random points stay away from the kink at 0, where finite differences straddle it.
  Tensor away = sample({3, 4}, -3, 3, 7).requires_grad_();
  CHECK(value_mismatch((away.abs() > 1e-3).all().to(gd::kFloat64), gd::testing::scalar_of(1)) == "");
  const std::vector<std::pair<std::string, gd::autograd::TensorFunction>> fns = {
    {"leaky_relu 0.01", [](const std::vector<Tensor>& in) { return std::vector<Tensor>{F::leaky_relu(in[0])}; }},
    {"leaky_relu -0.3", [](const std::vector<Tensor>& in) { return std::vector<Tensor>{F::leaky_relu(in[0], -0.3)}; }},
    {"elu 1.0", [](const std::vector<Tensor>& in) { return std::vector<Tensor>{F::elu(in[0])}; }},
    {"elu 0.7", [](const std::vector<Tensor>& in) { return std::vector<Tensor>{F::elu(in[0], 0.7)}; }},
  };
  for (const auto& [name, fn] : fns) {
    CAPTURE(name);
    CHECK(error_of([&] { gd::autograd::gradcheck(fn, {away}, with_forward_ad); }) == "");
    CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, {away}); }) == "");
  }
  // elu with alpha = 1 is continuously differentiable, so its first derivative
  // checks out at 0 itself; its large positive inputs must not make NaN
  // through the unselected exp branch.
  Tensor at_zero = T({0.0, -1e-3, 1e-3, 800.0, -800.0}, {5}).requires_grad_();
  CHECK(error_of([&] { gd::autograd::gradcheck(fns[2].second, {at_zero}, with_forward_ad); }) == "");
  Tensor d1 = gd::autograd::grad({F::elu(at_zero, 2.0).sum()}, {at_zero}, {}, true, true)[0];
  Tensor d2 = gd::autograd::grad({d1.sum()}, {at_zero})[0];
  CHECK(value_mismatch(d1, T({2.0, 2 * std::exp(-1e-3), 1.0, 1.0, 0.0}, {5}), 1e-15, 0) == "");
  CHECK(value_mismatch(d2, T({0.0, 2 * std::exp(-1e-3), 0.0, 0.0, 0.0}, {5}), 1e-15, 0) == "");
}

TEST_CASE("nn layers: activation modules, in-place forms and dtype errors") {
  Tensor x = X();
  CHECK(value_mismatch(nn::LeakyReLU()(x), F::leaky_relu(x), 0, 0) == "");
  CHECK(value_mismatch(nn::LeakyReLU(0.2)(x), F::leaky_relu(x, 0.2), 0, 0) == "");
  CHECK(value_mismatch(nn::ELU()(x), F::elu(x), 0, 0) == "");
  CHECK(value_mismatch(nn::ELU(nn::ELUOptions().alpha(0.5))(x), F::elu(x, 0.5), 0, 0) == "");
  CHECK(value_mismatch(nn::Softmax(1)(x), gd::softmax(x, 1), 0, 0) == "");
  CHECK(value_mismatch(nn::LogSoftmax(0)(x), gd::log_softmax(x, 0), 0, 0) == "");
  // float32 stays float32.
  CHECK(nn::ELU()(x.to(gd::kFloat32)).dtype() == gd::kFloat32);
  CHECK(F::leaky_relu(x.to(gd::kFloat32)).dtype() == gd::kFloat32);

  // In place: the result is written into the (non-leaf) input, and gradients
  // flow back through it as out of place.
  for (const auto& c : {activation_cases()[1], activation_cases()[5]}) {
    CAPTURE(c.name);
    Tensor leaf = X().requires_grad_();
    Tensor y = leaf * 1.0;
    Tensor out = c.name.starts_with("elu") ? nn::ELU(nn::ELUOptions(0.5).inplace(true))(y)
                                           : nn::LeakyReLU(nn::LeakyReLUOptions(0.2).inplace(true))(y);
    CHECK(out.is_same(y));
    CHECK(shape_value_mismatch(y, c.y, {2, 3}, 1e-12) == "");
    (y * G()).sum().backward();
    CHECK(shape_value_mismatch(leaf.grad(), c.gx, {2, 3}, 1e-13) == "");
  }
  Tensor leaf = X().requires_grad_();
  CHECK(error_of([&] { F::elu(leaf, F::ELUFuncOptions().inplace(true)); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");

  // PyTorch's dispatch errors.
  CHECK(error_of([] { F::leaky_relu(gd::arange(3)); }) == "\"leaky_relu_cpu\" not implemented for 'Long'");
  CHECK(error_of([] { F::elu(gd::arange(3)); }) == "\"elu_cpu\" not implemented for 'Long'");
  CHECK(error_of([] { F::elu(gd::ones({1}, gd::kBool)); }) == "\"elu_cpu\" not implemented for 'Bool'");
}

TEST_CASE("nn layers: Dropout keeps 1 - p of the elements, scaled by 1 / (1 - p); identity in eval") {
  gd::manual_seed(3);
  const int64_t n = 100000;
  for (double p : {0.2, 0.5, 0.9}) {
    CAPTURE(p);
    nn::Dropout drop(p);
    Tensor x = gd::ones({n}, gd::kFloat64).requires_grad_();
    Tensor y = drop(x);
    Tensor kept = (y != 0).to(gd::kFloat64);
    // The kept fraction is Binomial(n, 1 - p) / n: its std is at most 0.0016 here.
    CHECK(std::abs(kept.mean().item<double>() - (1 - p)) < 0.01);
    // Every kept element is exactly 1 / (1 - p) (in the input's dtype).
    CHECK(value_mismatch(y, kept / (1 - p), 0, 0) == "");
    // The gradient is the same scaled mask.
    y.sum().backward();
    CHECK(value_mismatch(x.grad(), y.detach(), 0, 0) == "");
    CHECK(drop->is_training());
    drop->eval();
    CHECK(drop(x).is_same(x));
  }
  // float32: the kept value is 1.0f / float(1 - p), as PyTorch's mask.
  Tensor y32 = nn::Dropout(0.45)(gd::ones({1000}));
  CHECK(y32.dtype() == gd::kFloat32);
  CHECK(value_mismatch(y32.max(), gd::full({}, 1.0f / static_cast<float>(1 - 0.45)), 0, 0) == "");

  Tensor x = sample({4, 5}, -1, 1, 5);
  CHECK(nn::Dropout(0.0)(x).is_same(x));
  CHECK(value_mismatch(nn::Dropout(1.0)(x), gd::zeros({4, 5}, gd::kFloat64), 0, 0) == "");

  // In place: the input itself holds the result, and the gradient is the mask.
  gd::manual_seed(4);
  Tensor leaf = gd::ones({1000}, gd::kFloat64).requires_grad_();
  Tensor h = leaf * 1.0;
  Tensor out = nn::Dropout(nn::DropoutOptions(0.3).inplace(true))(h);
  CHECK(out.is_same(h));
  Tensor kept = (h != 0).to(gd::kFloat64);
  CHECK(value_mismatch(h, kept / 0.7, 0, 0) == "");
  h.sum().backward();
  CHECK(value_mismatch(leaf.grad(), kept / 0.7, 0, 0) == "");

  CHECK(error_of([] { nn::Dropout(1.5); }) == "dropout probability has to be between 0 and 1, but got 1.5");
  CHECK(error_of([] { nn::Dropout(-0.1); }) == "dropout probability has to be between 0 and 1, but got -0.1");
}

namespace {

// The reference script's embedding weight (torch.float64), its indices and output gradient:
//   W = [[0.5,-1.2,0.3],[1.5,2.0,-0.7],[-0.4,0.1,0.9],[2.5,-0.3,1.1],[0.0,0.6,-1.8]]
//   I = [[1,3,0],[3,4,1]]   GO = torch.arange(18.).reshape(2,3,3) / 4 - 2
Tensor EW() { return T({0.5, -1.2, 0.3, 1.5, 2.0, -0.7, -0.4, 0.1, 0.9, 2.5, -0.3, 1.1, 0.0, 0.6, -1.8}, {5, 3}); }
Tensor EI() { return L({1, 3, 0, 3, 4, 1}, {2, 3}); }
Tensor GO() { return gd::arange(18, gd::kFloat64).reshape({2, 3, 3}) / 4.0 - 2.0; }

// An Embedding(5, 3) (with `options`) in float64 holding EW().
nn::Embedding embedding_with_ew(nn::EmbeddingOptions options) {
  nn::Embedding e(options);
  e->to(gd::kFloat64);
  gd::NoGradGuard no_grad;
  e->weight.copy_(EW());
  return e;
}

}  // namespace

TEST_CASE("nn layers: Embedding looks rows up; the padding row gets no gradient (PyTorch values)") {
  const std::vector<double> y = {1.5, 2.0, -0.7, 2.5, -0.3, 1.1, 0.5, -1.2, 0.3, 2.5, -0.3, 1.1, 0.0, 0.6, -1.8, 1.5, 2.0, -0.7};
  struct Case {
    std::optional<int64_t> padding_idx;
    std::string repr;
    std::vector<double> grad;
  };
  // nn.Embedding(5, 3, padding_idx=...): (e(I) * GO).sum().backward(); e.weight.grad.
  const std::vector<Case> cases = {
    {std::nullopt, "Embedding(5, 3)", {-0.5, -0.25, 0.0, -0.25, 0.25, 0.75, 0.0, 0.0, 0.0, -1.0, -0.5, 0.0, 1.0, 1.25, 1.5}},
    {3, "Embedding(5, 3, padding_idx=3)", {-0.5, -0.25, 0.0, -0.25, 0.25, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.25, 1.5}},
    {-2, "Embedding(5, 3, padding_idx=3)", {-0.5, -0.25, 0.0, -0.25, 0.25, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.25, 1.5}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.repr);
    nn::Embedding e = embedding_with_ew(nn::EmbeddingOptions(5, 3).padding_idx(c.padding_idx));
    CHECK(e->repr() == c.repr);
    Tensor out = e(EI());
    CHECK(shape_value_mismatch(out, y, {2, 3, 3}) == "");
    (out * GO()).sum().backward();
    CHECK(shape_value_mismatch(e->weight.grad(), c.grad, {5, 3}) == "");
  }
  // int32 indices and a 0-dim index work as in PyTorch.
  nn::Embedding e = embedding_with_ew(nn::EmbeddingOptions(5, 3));
  CHECK(shape_value_mismatch(e(EI().to(gd::kInt32)), y, {2, 3, 3}) == "");
  CHECK(shape_value_mismatch(e(L({4}, {1}).reshape({})), {0.0, 0.6, -1.8}, {3}) == "");
  // The padding row's gradient stays zero under create_graph too.
  nn::Embedding padded = embedding_with_ew(nn::EmbeddingOptions(5, 3).padding_idx(0));
  Tensor g = gd::autograd::grad({padded(L({0, 0, 2}, {3})).square().sum()}, {padded->weight}, {}, true, true)[0];
  CHECK(value_mismatch(g[0], gd::zeros({3}, gd::kFloat64), 0, 0) == "");
  CHECK(value_mismatch(g[2], 2.0 * EW()[2], 0, 0) == "");
}

TEST_CASE("nn layers: Embedding initialization and from_pretrained") {
  gd::manual_seed(11);
  nn::Embedding e(nn::EmbeddingOptions(2000, 20).padding_idx(-1));
  CHECK(e->options.padding_idx_ == 1999);
  CHECK(e->weight.requires_grad());
  CHECK(value_mismatch(e->weight[1999], gd::zeros({20}), 0, 0) == "");
  // N(0, 1) over 39980 draws: mean within 5 sigma of 0, std within 2%.
  Tensor rest = e->weight.detach().narrow(0, 0, 1999);
  CHECK(std::abs(rest.mean().item<double>()) < 5 / std::sqrt(39980.0));
  CHECK(std::abs(rest.std().item<double>() - 1) < 0.02);

  Tensor pretrained = gd::ones({3, 2}, gd::kFloat64);
  nn::Embedding frozen = nn::Embedding::from_pretrained(pretrained, /*freeze=*/true, /*padding_idx=*/1);
  CHECK_FALSE(frozen->weight.requires_grad());
  CHECK(frozen->repr() == "Embedding(3, 2, padding_idx=1)");
  // The rows are used as given (the padding row is not zeroed), sharing storage as PyTorch's Parameter does.
  CHECK(value_mismatch(frozen(L({1, 2}, {2})), gd::ones({2, 2}, gd::kFloat64), 0, 0) == "");
  CHECK(frozen->weight.data_ptr() == pretrained.data_ptr());
  CHECK_FALSE(pretrained.requires_grad());
  nn::Embedding trainable = nn::Embedding::from_pretrained(
      EW(), nn::EmbeddingFromPretrainedOptions().freeze(false).max_norm(1.0));
  CHECK(trainable->weight.requires_grad());
  CHECK(trainable->repr() == "Embedding(5, 3, max_norm=1.0)");
  CHECK(error_of([] { nn::Embedding::from_pretrained(gd::zeros({3})); }) ==
        "Embeddings parameter is expected to be 2-dimensional");
}

TEST_CASE("nn layers: Embedding max_norm renormalizes the looked-up rows as PyTorch") {
  struct Case {
    double max_norm, norm_type;
    std::string repr;
    std::vector<double> weight;
  };
  // nn.Embedding(5, 3, max_norm=.., norm_type=..) holding W, called on I2 = [[0,1],[1,3]]:
  // the weight after the call. The output is its rows 0, 1, 1, 3; the weight's
  // gradient of (e(I2) * GO[0,:2]).sum() is the same for every row of the table.
  const std::vector<Case> cases = {
    {1.0, 2.0, "Embedding(5, 3, max_norm=1.0)", {0.3747658164080452, -0.8994379593793084, 0.2248594898448271, 0.5777783895733171, 0.7703711860977561, -0.26962991513421464, -0.4, 0.1, 0.9, 0.9098431234459672, -0.10918117481351607, 0.4003309743162256, 0.0, 0.6, -1.8}},
    {1.5, 1.0, "Embedding(5, 3, max_norm=1.5, norm_type=1.0)", {0.37499998125000095, -0.8999999550000023, 0.22499998875000057, 0.535714272959184, 0.7142856972789119, -0.24999999404761913, -0.4, 0.1, 0.9, 0.9615384368836299, -0.1153846124260356, 0.42307691222879723, 0.0, 0.6, -1.8}},
    {2.0, INF, "Embedding(5, 3, max_norm=2.0, norm_type=inf)", {0.5, -1.2, 0.3, 1.5, 2.0, -0.7, -0.4, 0.1, 0.9, 1.9999999200000032, -0.23999999040000036, 0.8799999648000015, 0.0, 0.6, -1.8}},
    {0.9, 3.0, "Embedding(5, 3, max_norm=0.9, norm_type=3.0)", {0.3646082815753515, -0.8750598757808437, 0.2187649689452109, 0.5943595585750314, 0.7924794114333753, -0.2773677940016813, -0.4, 0.1, 0.9, 0.8753418610404506, -0.10504102332485407, 0.3851504188577983, 0.0, 0.6, -1.8}},
  };
  const std::vector<double> grad = {-2.0, -1.75, -1.5, -3.25, -2.75, -2.25, 0.0, 0.0, 0.0, -1.25, -1.0, -0.75, 0.0, 0.0, 0.0};
  for (const auto& c : cases) {
    CAPTURE(c.repr);
    nn::Embedding e = embedding_with_ew(nn::EmbeddingOptions(5, 3).max_norm(c.max_norm).norm_type(c.norm_type));
    CHECK(e->repr() == c.repr);
    const uint32_t version = e->weight._version();
    Tensor out = e(L({0, 1, 1, 3}, {2, 2}));
    CHECK(e->weight._version() > version);
    CHECK(shape_value_mismatch(e->weight, c.weight, {5, 3}, 1e-14) == "");
    Tensor rows = e->weight.detach().index_select(0, L({0, 1, 1, 3}, {4})).reshape({2, 2, 3});
    CHECK(value_mismatch(out, rows, 0, 0) == "");
    (out * GO()[0].narrow(0, 0, 2).unsqueeze(0)).sum().backward();
    CHECK(shape_value_mismatch(e->weight.grad(), grad, {5, 3}) == "");
  }
}

TEST_CASE("nn layers: Embedding errors (PyTorch's text)") {
  CHECK(error_of([] { nn::Embedding(nn::EmbeddingOptions(3, 2).padding_idx(3)); }) ==
        "Padding_idx must be within num_embeddings");
  CHECK(error_of([] { nn::Embedding(nn::EmbeddingOptions(3, 2).padding_idx(-4)); }) ==
        "Padding_idx must be within num_embeddings");
  nn::Embedding e(3, 2);
  CHECK(error_of([&] { e(L({3}, {1})); }) == "index out of range in self");
  CHECK(error_of([&] { e(T({1.0}, {1})); }) ==
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
        "torch.DoubleTensor instead (while checking arguments for embedding)");
  nn::Embedding renormed(nn::EmbeddingOptions(3, 2).max_norm(1.0));
  Tensor before = renormed->weight.detach().clone();
  CHECK(error_of([&] { renormed(L({0, 5}, {2})); }) ==
        "select(): index 5 out of range for tensor of size [3, 2] at dimension 0");
  CHECK(value_mismatch(renormed->weight, before, 0, 0) == "");  // a bad index changes no row
  CHECK(error_of([&] { renormed(T({1.0}, {1})); }) ==
        "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got "
        "torch.DoubleTensor instead (while checking arguments for embedding_renorm_)");
  CHECK(error_of([] { nn::Embedding(nn::EmbeddingOptions(3, 2)._weight(gd::zeros({2, 2}))); }) ==
        "Shape of _weight does not match num_embeddings and embedding_dim");
}

TEST_CASE("nn layers: Flatten and Unflatten shapes, gradients and errors") {
  struct Case {
    std::string name;
    std::function<Tensor(const Tensor&)> f;
    std::vector<int64_t> in, out;
  };
  // Output shapes as PyTorch's nn.Flatten / nn.Unflatten give them.
  const std::vector<Case> cases = {
    {"Flatten()", [](const Tensor& x) { return nn::Flatten()(x); }, {2, 3, 4}, {2, 12}},
    {"Flatten(0)", [](const Tensor& x) { return nn::Flatten(0)(x); }, {2, 3, 4}, {24}},
    {"Flatten(0, -1) 0-dim", [](const Tensor& x) { return nn::Flatten(0)(x); }, {}, {1}},
    {"Flatten(1, 2)", [](const Tensor& x) { return nn::Flatten(1, 2)(x); }, {2, 3, 4, 5}, {2, 12, 5}},
    {"Flatten(-3, -2)", [](const Tensor& x) { return nn::Flatten(nn::FlattenOptions().start_dim(-3).end_dim(-2))(x); }, {2, 3, 4, 5}, {2, 12, 5}},
    {"Unflatten(1, {2, 3})", [](const Tensor& x) { return nn::Unflatten(1, std::vector<int64_t>{2, 3})(x); }, {2, 6, 5}, {2, 2, 3, 5}},
    {"Unflatten(-1, {-1, 2})", [](const Tensor& x) { return nn::Unflatten(-1, std::vector<int64_t>{-1, 2})(x); }, {2, 6}, {2, 3, 2}},
    {"Unflatten(0, {1, 2, 1})", [](const Tensor& x) { return nn::Unflatten(0, std::vector<int64_t>{1, 2, 1})(x); }, {2}, {1, 2, 1}},
    {"Unflatten(1, {0, -1}) empty", [](const Tensor& x) { return nn::Unflatten(1, std::vector<int64_t>{2, 0})(x); }, {3, 0}, {3, 2, 0}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Tensor x = sample(c.in, -1, 1, 3).requires_grad_();
    Tensor y = c.f(x);
    CHECK(shape_of(y) == c.out);
    // Only the shape changes: same elements in the same order, gradient reshaped back.
    CHECK(value_mismatch(y.reshape({-1}), x.reshape({-1}), 0, 0) == "");
    Tensor w = sample(c.out, -1, 1, 4);
    (y * w).sum().backward();
    CHECK(value_mismatch(x.grad(), w.reshape(c.in), 0, 0) == "");
  }
  // Splitting a dim is a view even of a transposed input.
  Tensor t = sample({6, 2}, -1, 1, 5).t();
  Tensor u = nn::Unflatten(1, std::vector<int64_t>{2, 3})(t);
  CHECK(shape_of(u) == std::vector<int64_t>{2, 2, 3});
  CHECK(u.data_ptr() == t.data_ptr());

  Tensor x = gd::zeros({2, 6});
  auto unflatten = [&](int64_t dim, std::vector<int64_t> sizes) {
    return error_of([&] { nn::Unflatten(dim, sizes)(x); });
  };
  CHECK(unflatten(1, {4, 2}) == "unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 1 (6) in the input tensor");
  CHECK(unflatten(-1, {4, 2}) == "unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 1 (6) in the input tensor");
  CHECK(unflatten(1, {-1, 4}) == "unflatten: Provided sizes [-1, 4] don't multiply up to the size of dim 1 (6) in the input tensor");
  CHECK(unflatten(1, {-1, 0}) == "unflatten: Provided sizes [-1, 0] don't multiply up to the size of dim 1 (6) in the input tensor");
  CHECK(unflatten(1, {-1, -1}) == "unflatten got an unexpected error:\nonly one dimension can be inferred");
  CHECK(unflatten(1, {-2, 3}) == "invalid shape dimension -2");
  CHECK(unflatten(1, {}) == "unflatten: sizes must be non-empty");
  CHECK(unflatten(2, {2, 3}) == "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK(error_of([] { nn::Unflatten(1, std::vector<int64_t>{-1, 0})(gd::zeros({2, 0})); }) ==
        "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be "
        "any value and is ambiguous");
  CHECK(error_of([] { nn::Unflatten(0, std::vector<int64_t>{1})(gd::zeros({})); }) ==
        "Dimension specified as 0 but tensor has no dimensions");
  CHECK(error_of([] { nn::Flatten(2, 1)(gd::zeros({2, 3, 4})); }) ==
        "flatten() has invalid args: start_dim cannot come after end_dim");
}

TEST_CASE("nn layers: LazyLinear infers in_features on the first forward and then is a Linear") {
  gd::manual_seed(5);
  nn::LazyLinear lazy(4);
  CHECK(lazy->has_uninitialized_params());
  CHECK(lazy->parameters().empty());
  CHECK(lazy->state_dict().is_empty());
  CHECK(lazy->repr() == "LazyLinear(in_features=0, out_features=4, bias=True)");
  lazy->reset_parameters();  // nothing to reset yet
  // to() before the first forward decides the dtype the parameters are created in.
  nn::Sequential net(lazy, nn::Tanh());
  net->to(gd::kFloat64);

  Tensor x = sample({2, 5, 3}, -1, 1, 6);
  Tensor y = net(x);
  CHECK(shape_of(y) == std::vector<int64_t>{2, 5, 4});
  CHECK_FALSE(lazy->has_uninitialized_params());
  CHECK(lazy->options.in_features_ == 3);
  CHECK(lazy->weight.dtype() == gd::kFloat64);
  CHECK(lazy->weight.requires_grad());
  CHECK(shape_of(lazy->weight) == std::vector<int64_t>{4, 3});
  CHECK(shape_of(lazy->bias) == std::vector<int64_t>{4});
  // Linear's initialization: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias.
  CHECK(lazy->weight.abs().max().item<double>() <= 1 / std::sqrt(3.0));
  CHECK(lazy->bias.abs().max().item<double>() <= 1 / std::sqrt(3.0));
  CHECK(lazy->extra_repr() == "in_features=3, out_features=4, bias=True");
  CHECK(lazy->buffers().empty());
  CHECK(net->named_parameters().keys() == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK(net->state_dict().keys() == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK(value_mismatch(y, gd::tanh(x.matmul(lazy->weight.detach().t()) + lazy->bias.detach()), 0, 0) == "");

  // It loads a Linear's state_dict and computes as that Linear, gradients included.
  nn::Linear lin(3, 4);
  lin->to(gd::kFloat64);
  lazy->load_state_dict(lin->state_dict());
  Tensor xl = x.detach().requires_grad_();
  Tensor xr = x.detach().requires_grad_();
  CHECK(value_mismatch(lazy(xl), lin(xr), 0, 0) == "");
  lazy(xl).square().sum().backward();
  lin(xr).square().sum().backward();
  CHECK(value_mismatch(xl.grad(), xr.grad(), 0, 0) == "");
  CHECK(value_mismatch(lazy->weight.grad(), lin->weight.grad(), 0, 0) == "");
  CHECK(value_mismatch(lazy->bias.grad(), lin->bias.grad(), 0, 0) == "");

  // Later inputs must match the inferred size.
  CHECK(error_of([&] { lazy(gd::zeros({2, 5}, gd::kFloat64)); }) ==
        "mat1 and mat2 shapes cannot be multiplied (2x5 and 3x4)");
  nn::LazyLinear no_bias(2, /*bias=*/false);
  CHECK(no_bias->repr() == "LazyLinear(in_features=0, out_features=2, bias=False)");
  no_bias(gd::zeros({7}));
  CHECK(no_bias->named_parameters().keys() == std::vector<std::string>{"weight"});
  CHECK(no_bias->weight.dtype() == gd::kFloat32);
  CHECK(error_of([] { nn::LazyLinear(2)(gd::zeros({})); }) ==
        "LazyLinear: the input must have at least one dimension to infer in_features from");
}

TEST_CASE("nn layers: printed as PyTorch prints them") {
  // print(module) in PyTorch 1.13 for the same arguments.
  const std::vector<std::pair<std::string, std::string>> cases = {
    {nn::LeakyReLU()->repr(), "LeakyReLU(negative_slope=0.01)"},
    {nn::LeakyReLU(nn::LeakyReLUOptions(0.2).inplace(true))->repr(), "LeakyReLU(negative_slope=0.2, inplace=True)"},
    {nn::LeakyReLU(INF)->repr(), "LeakyReLU(negative_slope=inf)"},
    {nn::ELU()->repr(), "ELU(alpha=1.0)"},
    {nn::ELU(2.0)->repr(), "ELU(alpha=2.0)"},
    {nn::ELU(1e16)->repr(), "ELU(alpha=1e+16)"},
    {nn::ELU(1e15)->repr(), "ELU(alpha=1000000000000000.0)"},
    {nn::Softmax(1)->repr(), "Softmax(dim=1)"},
    {nn::LogSoftmax(-1)->repr(), "LogSoftmax(dim=-1)"},
    {nn::Dropout()->repr(), "Dropout(p=0.5, inplace=False)"},
    {nn::Dropout(0.0)->repr(), "Dropout(p=0.0, inplace=False)"},
    {nn::Dropout(1e-5)->repr(), "Dropout(p=1e-05, inplace=False)"},
    {nn::Embedding(10, 3)->repr(), "Embedding(10, 3)"},
    {nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(-1).max_norm(1.0).norm_type(1.0))->repr(),
     "Embedding(10, 3, padding_idx=9, max_norm=1.0, norm_type=1.0)"},
    {nn::Flatten()->repr(), "Flatten(start_dim=1, end_dim=-1)"},
    {nn::Unflatten(1, std::vector<int64_t>{2, 3})->repr(), "Unflatten(dim=1, unflattened_size=(2, 3))"},
    {nn::Unflatten(nn::UnflattenOptions(1, {6}))->repr(), "Unflatten(dim=1, unflattened_size=(6,))"},
    {nn::LazyLinear(4)->repr(), "LazyLinear(in_features=0, out_features=4, bias=True)"},
  };
  for (const auto& [got, want] : cases) CHECK(got == want);
}
