// PHMLinear and nn::functional::phm_linear: both paths against W built from
// explicit kron and against PyTorch 1.13 literals (outputs and the gradients of
// x, A, S and bias), gradcheck/gradgradcheck, the path rule, parameters and
// names, initialization scale, printing and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gradiens.h"
#include "nn/modules/phm.h"
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

const F::PHMPath kBothPaths[] = {F::PHMPath::BuildWeight, F::PHMPath::Structured};

std::string path_name(F::PHMPath path) {
  return path == F::PHMPath::BuildWeight ? "build_weight" : path == F::PHMPath::Structured ? "structured" : "auto";
}

// The reference: W = sum_i kron(A[i], S[i]) with the engine's kron, then x W^T + b.
Tensor kron_weight(const Tensor& A, const Tensor& S) {
  Tensor W = gd::kron(A[0], S[0]);
  for (int64_t i = 1; i < A.size(0); ++i) W = W + gd::kron(A[i], S[i]);
  return W;
}
Tensor kron_linear(const Tensor& x, const Tensor& A, const Tensor& S, const Tensor& b) {
  Tensor y = x.matmul(kron_weight(A, S).t());
  return b.defined() ? y + b : y;
}

std::vector<Tensor> leaves(std::vector<Tensor> ts) {
  for (Tensor& t : ts)
    if (t.defined()) t = t.detach().requires_grad_();
  return ts;
}

// The gradients of sum(y * weights) for x, A, S and b (undefined b: none).
std::vector<Tensor> grads_of(const Tensor& y, const Tensor& weights, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> defined;
  for (const Tensor& t : inputs)
    if (t.defined()) defined.push_back(t);
  return gd::autograd::grad({(y * weights).sum()}, defined);
}

}  // namespace

TEST_CASE("phm_linear: both paths equal x W^T + b with W from explicit kron, values and gradients") {
  struct Case {
    int64_t n, in, out;
    std::vector<int64_t> x_shape;
    bool bias;
  };
  const Case cases[] = {
      {2, 4, 6, {3, 4}, true},       {3, 6, 9, {1, 6}, true},          {4, 8, 4, {5, 8}, false},
      {1, 3, 2, {2, 3}, true},       {2, 4, 2, {2, 3, 4}, true},       {2, 6, 4, {6}, true},
      {4, 16, 12, {2, 1, 3, 16}, true}, {3, 3, 3, {7, 3}, false},
  };
  for (const Case& c : cases) {
    for (F::PHMPath path : {F::PHMPath::BuildWeight, F::PHMPath::Structured, F::PHMPath::Auto}) {
      CAPTURE(c.n);
      CAPTURE(c.in);
      CAPTURE(c.out);
      CAPTURE(path_name(path));
      auto inputs = leaves({sample(c.x_shape, -1, 1, 1), sample({c.n, c.n, c.n}, -1, 1, 2),
                            sample({c.n, c.out / c.n, c.in / c.n}, -1, 1, 3),
                            c.bias ? sample({c.out}, -1, 1, 4) : Tensor()});
      Tensor y = F::phm_linear(inputs[0], inputs[1], inputs[2], inputs[3], path);
      Tensor want = kron_linear(inputs[0], inputs[1], inputs[2], inputs[3]);
      CHECK(y.sizes() == want.sizes());
      CHECK(value_mismatch(y, want, 1e-12, 1e-13) == "");
      Tensor weights = sample(want.sizes(), -2, 2, 5);
      auto got = grads_of(y, weights, inputs), expected = grads_of(want, weights, inputs);
      REQUIRE(got.size() == expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i].sizes() == expected[i].sizes());
        CHECK(value_mismatch(got[i], expected[i], 1e-12, 1e-13) == "");
      }
    }
  }
}

TEST_CASE("phm_linear: values and gradients of y.square().mean() match PyTorch") {
  // PyTorch 1.13, float64:
  //   A = [[[0.5,-1.0],[0.25,2.0]],[[-0.75,0.1],[1.5,-0.3]]]
  //   S = [[[0.2,-0.4],[1.1,0.3],[-0.6,0.9]],[[0.7,0.05],[-1.2,0.8],[0.35,-0.15]]]
  //   b = [0.1,-0.2,0.3,0.0,0.5,-0.45]
  //   x = [[1.0,-0.5,0.25,2.0],[0.3,0.8,-1.2,0.6],[-0.9,0.4,1.5,-0.7]]
  //   W = sum(torch.kron(A[i], S[i]) for i in range(2)); y = F.linear(x, W, b)
  //   y.square().mean().backward()
  const Tensor A0 = tensor_of({0.5, -1.0, 0.25, 2.0, -0.75, 0.1, 1.5, -0.3}, {2, 2, 2});
  const Tensor S0 = tensor_of({0.2, -0.4, 1.1, 0.3, -0.6, 0.9, 0.7, 0.05, -1.2, 0.8, 0.35, -0.15}, {2, 3, 2});
  const Tensor b0 = tensor_of({0.1, -0.2, 0.3, 0.0, 0.5, -0.45}, {6});
  const Tensor x0 = tensor_of({1.0, -0.5, 0.25, 2.0, 0.3, 0.8, -1.2, 0.6, -0.9, 0.4, 1.5, -0.7}, {3, 4});
  const std::vector<double> W = {-0.42499999999999993, -0.23750000000000002, -0.13, 0.405, 1.45,
                                 -0.45000000000000007, -1.2200000000000002, -0.21999999999999997, -0.5625, 0.5625,
                                 0.635, -0.915, 1.0999999999999999, -0.024999999999999994, 0.19000000000000003,
                                 -0.8150000000000001, -1.525, 1.2750000000000001, 2.56, 0.36, 0.3749999999999999,
                                 2.7755575615628914e-17, -1.305, 1.845};
  const std::vector<double> y = {0.5712500000000001, 0.7300000000000002, -2.2150000000000003, -0.4700000000000002,
                                 -0.3025, 3.28875, 0.1815, 1.2070000000000003, -0.7297499999999999,
                                 -0.4070000000000001, -1.7934999999999994, 2.3354999999999997,
                                 -0.09100000000000008, -3.3610000000000007, 2.6242499999999995,
                                 -0.14449999999999985, 5.9705, -4.0365};
  const std::vector<double> gx = {0.3599166666666666, -0.2315607638888889, -0.8363229166666667,
                                  0.9377083333333333, 0.5829663194444442,  -0.36369756944444437,
                                  -1.0751159722222219, 0.49674791666666657, -1.8987295138888889,
                                  1.1806892361111112, 2.9225895833333335,  -0.7643131944444443};
  const std::vector<double> gA = {0.9790355555555557,  -1.637193888888889, -1.3735469444444444, 2.8207205555555555,
                                  -0.7737204166666667, 1.512472361111111,  1.2095598611111111,  -2.4784840972222217};
  const std::vector<double> gS = {0.08423055555555561, -0.40074583333333347, 3.208561111111111, -1.817059722222222,
                                  -2.3134402777777776, 3.1947312499999994,  -0.14346319444444453,
                                  0.04071597222222226, -1.816576388888889,  0.4918500000000001, 1.9851743055555555,
                                  -0.7975222222222221};
  const std::vector<double> gb = {0.07352777777777778,  -0.15822222222222226, -0.035611111111111204,
                                  -0.11350000000000002, 0.4305000000000001,   0.17641666666666656};
  CHECK(shape_value_mismatch(F::phm_weight(A0, S0), W, {6, 4}, 1e-14, 1e-15) == "");
  CHECK(shape_value_mismatch(kron_weight(A0, S0), W, {6, 4}, 1e-14, 1e-15) == "");
  for (F::PHMPath path : kBothPaths) {
    CAPTURE(path_name(path));
    auto in = leaves({x0, A0, S0, b0});
    Tensor out = F::phm_linear(in[0], in[1], in[2], in[3], path);
    CHECK(shape_value_mismatch(out, y, {3, 6}, 1e-14, 1e-15) == "");
    out.square().mean().backward();
    CHECK(shape_value_mismatch(in[0].grad(), gx, {3, 4}, 1e-14, 1e-15) == "");
    CHECK(shape_value_mismatch(in[1].grad(), gA, {2, 2, 2}, 1e-14, 1e-15) == "");
    CHECK(shape_value_mismatch(in[2].grad(), gS, {2, 3, 2}, 1e-14, 1e-15) == "");
    CHECK(shape_value_mismatch(in[3].grad(), gb, {6}, 1e-14, 1e-15) == "");
    // The same input as a transposed (non-contiguous) leaf.
    Tensor x_t = x0.t().contiguous().detach().requires_grad_();
    F::phm_linear(x_t.t(), A0, S0, b0, path).square().mean().backward();
    CHECK(shape_value_mismatch(x_t.grad().t(), gx, {3, 4}, 1e-14, 1e-15) == "");
  }
  // The module with these parameters loaded by their PyTorch names.
  nn::PHMLinear layer(4, 6, 2);
  layer->to(gd::kFloat64);
  layer->load_state_dict(std::map<std::string, Tensor>{{"A", A0}, {"S", S0}, {"bias", b0}});
  CHECK(shape_value_mismatch(layer(x0), y, {3, 6}, 1e-14, 1e-15) == "");
  CHECK(shape_value_mismatch(layer->weight(), W, {6, 4}, 1e-14, 1e-15) == "");
  layer(x0).square().mean().backward();
  CHECK(shape_value_mismatch(layer->A.grad(), gA, {2, 2, 2}, 1e-14, 1e-15) == "");
  CHECK(shape_value_mismatch(layer->S.grad(), gS, {2, 3, 2}, 1e-14, 1e-15) == "");
  CHECK(shape_value_mismatch(layer->bias.grad(), gb, {6}, 1e-14, 1e-15) == "");
}

TEST_CASE("phm_linear: the two paths agree in float32 on the benchmark's block structure") {
  // n = 4 with odd block sizes (p = 9, q = 5) and a row count on each side of the rule.
  for (int64_t rows : {1, 3, 40}) {
    CAPTURE(rows);
    auto in = leaves({sample({rows, 36}, -1, 1, 11, gd::kFloat32), sample({4, 4, 4}, -1, 1, 12, gd::kFloat32),
                      sample({4, 5, 9}, -1, 1, 13, gd::kFloat32), sample({20}, -1, 1, 14, gd::kFloat32)});
    Tensor weights = sample({rows, 20}, -1, 1, 15, gd::kFloat32);
    Tensor y1 = F::phm_linear(in[0], in[1], in[2], in[3], F::PHMPath::BuildWeight);
    Tensor y2 = F::phm_linear(in[0], in[1], in[2], in[3], F::PHMPath::Structured);
    CHECK(y1.dtype() == gd::kFloat32);
    CHECK(y2.dtype() == gd::kFloat32);
    CHECK(value_mismatch(y1, y2, 1e-5, 1e-5) == "");
    auto g1 = grads_of(y1, weights, in), g2 = grads_of(y2, weights, in);
    for (size_t i = 0; i < g1.size(); ++i) {
      CAPTURE(i);
      CHECK(value_mismatch(g1[i], g2[i], 1e-5, 1e-5) == "");
    }
  }
}

TEST_CASE("phm_linear: gradcheck and gradgradcheck of both paths") {
  gd::autograd::GradcheckOptions with_forward_ad;
  with_forward_ad.check_forward_ad = true;
  struct Case {
    int64_t n, in, out;
    std::vector<int64_t> x_shape;
  };
  const Case cases[] = {{2, 4, 6, {3, 4}}, {3, 3, 6, {2, 1, 3}}, {1, 2, 3, {2}}};
  for (const Case& c : cases) {
    for (F::PHMPath path : kBothPaths) {
      CAPTURE(c.n);
      CAPTURE(path_name(path));
      auto inputs = leaves({sample(c.x_shape, -1, 1, 21), sample({c.n, c.n, c.n}, -1, 1, 22),
                            sample({c.n, c.out / c.n, c.in / c.n}, -1, 1, 23), sample({c.out}, -1, 1, 24)});
      auto fn = [path](const std::vector<Tensor>& t) {
        return std::vector<Tensor>{F::phm_linear(t[0], t[1], t[2], t[3], path)};
      };
      CHECK(error_of([&] { gd::autograd::gradcheck(fn, inputs, with_forward_ad); }) == "");
      CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, inputs); }) == "");
    }
  }
}

TEST_CASE("phm_linear: second derivatives through create_graph match the explicit kron's") {
  // d/dx of sum(dL/dx * v) with L = y.square().sum(): a Hessian-vector product in x.
  for (F::PHMPath path : kBothPaths) {
    CAPTURE(path_name(path));
    auto in = leaves({sample({3, 4}, -1, 1, 31), sample({2, 2, 2}, -1, 1, 32), sample({2, 3, 2}, -1, 1, 33),
                      sample({6}, -1, 1, 34)});
    Tensor v = sample({3, 4}, -1, 1, 35);
    auto hvp = [&](const Tensor& y) {
      Tensor gx = gd::autograd::grad({y.square().sum()}, {in[0]}, {}, true, true)[0];
      return gd::autograd::grad({(gx * v).sum()}, {in[0], in[1], in[2]});
    };
    auto got = hvp(F::phm_linear(in[0], in[1], in[2], in[3], path));
    auto want = hvp(kron_linear(in[0], in[1], in[2], in[3]));
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(value_mismatch(got[i], want[i], 1e-12, 1e-13) == "");
    }
  }
}

TEST_CASE("phm_choose_path: the structured product for small batches of large layers") {
  struct Case {
    int64_t rows, n, in, out;
    bool needs_grad;
    F::PHMPath want;
  };
  // The rule of Note [PHM path choice]: structured when in * out >= 16384 and
  // rows * (n^2 out + 1100) <= 4/3 n in out (8/3 without gradients); for n = 4,
  // 512 -> 512 that is rows <= 150.46 (300.93).
  const Case cases[] = {
      {256, 4, 512, 512, true, F::PHMPath::BuildWeight}, {256, 4, 512, 512, false, F::PHMPath::Structured},
      {150, 4, 512, 512, true, F::PHMPath::Structured},  {151, 4, 512, 512, true, F::PHMPath::BuildWeight},
      {300, 4, 512, 512, false, F::PHMPath::Structured}, {301, 4, 512, 512, false, F::PHMPath::BuildWeight},
      {1, 4, 512, 512, true, F::PHMPath::Structured},    {1, 4, 64, 64, false, F::PHMPath::BuildWeight},
      {1, 4, 128, 128, true, F::PHMPath::Structured},    {1, 2, 4, 2, false, F::PHMPath::BuildWeight},
      {0, 4, 512, 512, true, F::PHMPath::Structured},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rows);
    CAPTURE(c.in);
    CAPTURE(c.needs_grad);
    CHECK(F::phm_choose_path(c.rows, c.n, c.in, c.out, c.needs_grad) == c.want);
  }
}

TEST_CASE("nn::PHMLinear: parameters, names, state_dict and printing") {
  struct Case {
    int64_t in, out, n;
    bool bias;
    std::string repr;
  };
  const Case cases[] = {
      {8, 4, 2, true, "PHMLinear(in_features=8, out_features=4, n=2, bias=True)"},
      {12, 6, 3, false, "PHMLinear(in_features=12, out_features=6, n=3, bias=False)"},
      {512, 512, 4, true, "PHMLinear(in_features=512, out_features=512, n=4, bias=True)"},
      {5, 7, 1, true, "PHMLinear(in_features=5, out_features=7, n=1, bias=True)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.repr);
    nn::PHMLinear layer(nn::PHMLinearOptions(c.in, c.out, c.n).bias(c.bias));
    int64_t count = 0;
    for (const Tensor& p : layer->parameters()) count += p.numel();
    CHECK(count == c.n * c.n * c.n + c.in * c.out / c.n + (c.bias ? c.out : 0));
    std::vector<std::string> names = {"A", "S"};
    if (c.bias) names.push_back("bias");
    CHECK(layer->named_parameters().keys() == names);
    CHECK(layer->state_dict().keys() == names);
    CHECK(layer->A.sizes() == gd::IntArrayRef({c.n, c.n, c.n}));
    CHECK(layer->S.sizes() == gd::IntArrayRef({c.n, c.out / c.n, c.in / c.n}));
    if (c.bias) CHECK(layer->bias.sizes() == gd::IntArrayRef({c.out}));
    CHECK(layer->bias.defined() == c.bias);
    CHECK(layer->weight().sizes() == gd::IntArrayRef({c.out, c.in}));
    CHECK(layer->repr() == c.repr);
  }
  // The holder's call goes through forward (and its hooks), on a 3-D input.
  nn::PHMLinear layer(8, 4, 2);
  layer->to(gd::kFloat64);
  Tensor x = sample({2, 3, 8}, -1, 1, 41);
  Tensor y = layer(x);
  CHECK(y.sizes() == gd::IntArrayRef({2, 3, 4}));
  CHECK(value_mismatch(y, kron_linear(x, layer->A.detach(), layer->S.detach(), layer->bias.detach()), 1e-12, 1e-13) ==
        "");
  nn::Sequential net(nn::PHMLinear(4, 4, 2), nn::Tanh());
  CHECK(net->named_parameters().keys() == std::vector<std::string>{"0.A", "0.S", "0.bias"});
  CHECK(net->repr() ==
        "Sequential(\n  (0): PHMLinear(in_features=4, out_features=4, n=2, bias=True)\n  (1): Tanh()\n)");
}

TEST_CASE("nn::PHMLinear: initialization gives W and the outputs Linear's scale") {
  // Note [PHM initialization]: A_i ~ xavier_uniform_ (bound sqrt(3/n)), S and bias
  // ~ U(-1/sqrt(in), 1/sqrt(in)), so Var(W) = 1/(3 in) as for Linear's weight.
  gd::manual_seed(0);
  const int64_t in = 256, out = 512, n = 4;
  nn::PHMLinear layer(in, out, n);
  CHECK(layer->A.abs().max().item<double>() <= std::sqrt(3.0 / n));
  CHECK(layer->S.abs().max().item<double>() <= 1 / std::sqrt(double(in)));
  CHECK(layer->bias.abs().max().item<double>() <= 1 / std::sqrt(double(in)));
  CHECK(layer->A.abs().max().item<double>() > 0.9 * std::sqrt(3.0 / n));  // the bound is used, not a smaller one
  double var_w = layer->weight().detach().var().item<double>();
  CHECK(var_w == doctest::Approx(1.0 / (3 * in)).epsilon(0.1));
  // Output scale on unit-variance inputs against Linear's (same closed form, 1/3).
  gd::Tensor x = gd::randn({512, in});
  nn::Linear linear(in, out);
  double var_phm = (layer(x) - layer->bias.detach()).detach().var().item<double>();
  double var_linear = (linear(x) - linear->bias.detach()).detach().var().item<double>();
  CHECK(var_phm == doctest::Approx(1.0 / 3).epsilon(0.15));
  CHECK(var_linear == doctest::Approx(1.0 / 3).epsilon(0.15));
  // reset_parameters re-draws.
  Tensor before = layer->S.detach().clone();
  layer->reset_parameters();
  CHECK(!gd::equal(before, layer->S.detach()));
  CHECK(layer->S.requires_grad());
  CHECK(layer->S.is_leaf());
}

TEST_CASE("PHMLinear and phm_linear reject bad sizes with clear messages") {
  struct Case {
    std::string what;
    std::function<void()> run;
    std::string message;
  };
  const Tensor A = sample({2, 2, 2}, -1, 1, 51), S = sample({2, 3, 2}, -1, 1, 52);
  const Case cases[] = {
      {"n does not divide in", [] { nn::PHMLinear(6, 4, 4); },
       "PHMLinear: n (4) must divide in_features (6) and out_features (4)"},
      {"n does not divide out", [] { nn::PHMLinear(8, 6, 4); },
       "PHMLinear: n (4) must divide in_features (8) and out_features (6)"},
      {"n = 0", [] { nn::PHMLinear(4, 4, 0); }, "PHMLinear: n must be positive, got 0"},
      {"negative size", [] { nn::PHMLinear(-4, 4, 2); },
       "PHMLinear: in_features and out_features must be non-negative, got -4 and 4"},
      {"wrong in_features", [&] { F::phm_linear(sample({5, 6}, -1, 1, 53), A, S); },
       "mat1 and mat2 shapes cannot be multiplied (5x6 and 4x6)"},
      {"wrong in_features, 3-D", [&] { F::phm_linear(sample({2, 5, 3}, -1, 1, 53), A, S); },
       "mat1 and mat2 shapes cannot be multiplied (10x3 and 4x6)"},
      {"0-dim input", [&] { F::phm_linear(gd::testing::scalar_of(1.0), A, S); },
       "phm_linear: input must have at least one dimension ([..., in_features])"},
      {"A not cubic", [&] { F::phm_linear(sample({5, 4}, -1, 1, 53), sample({2, 2, 3}, -1, 1, 54), S); },
       "phm_linear: A must have shape [n, n, n], got [2, 2, 3]"},
      {"S with another n", [&] { F::phm_linear(sample({5, 4}, -1, 1, 53), A, sample({3, 3, 2}, -1, 1, 54)); },
       "phm_linear: S must have shape [n, out_features / n, in_features / n] with n = 2 (from A), got [3, 3, 2]"},
      {"float32 A with float64 input",
       [&] { F::phm_linear(sample({5, 4}, -1, 1, 53), A.to(gd::kFloat32), S.to(gd::kFloat32)); },
       "phm_linear: input, A, S and bias must have the same dtype, got float64, float32, float32"},
      {"float32 bias", [&] { F::phm_linear(sample({5, 4}, -1, 1, 53), A, S, gd::zeros({6})); },
       "phm_linear: input, A, S and bias must have the same dtype, got float64, float64, float64 and float32"},
      {"bias of the wrong size", [&] { F::phm_linear(sample({5, 4}, -1, 1, 53), A, S, sample({4}, -1, 1, 54)); },
       "phm_linear: bias must have shape [6], got [4]"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(error_of(c.run) == c.message);
  }
  nn::PHMLinear layer(4, 6, 2);
  CHECK(error_of([&] { layer(gd::randn({3, 5})); }) == "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x6)");
}

TEST_CASE("phm_linear: empty batches and a zero-width layer") {
  for (F::PHMPath path : kBothPaths) {
    CAPTURE(path_name(path));
    auto in = leaves({sample({0, 4}, -1, 1, 61), sample({2, 2, 2}, -1, 1, 62), sample({2, 3, 2}, -1, 1, 63),
                      sample({6}, -1, 1, 64)});
    Tensor y = F::phm_linear(in[0], in[1], in[2], in[3], path);
    CHECK(y.sizes() == gd::IntArrayRef({0, 6}));
    y.sum().backward();
    CHECK(value_mismatch(in[1].grad(), gd::zeros({2, 2, 2}, gd::kFloat64)) == "");
    CHECK(value_mismatch(in[3].grad(), gd::zeros({6}, gd::kFloat64)) == "");
  }
  nn::PHMLinear zero_out(4, 0, 2);
  CHECK(zero_out(gd::randn({3, 4})).sizes() == gd::IntArrayRef({3, 0}));
}
