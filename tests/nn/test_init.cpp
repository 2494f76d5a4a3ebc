// Tests of nn::init: gains and fans against PyTorch 1.13, the statistics of the
// random initializers against their closed forms, orthogonality, determinism
// and error texts.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "engine/functions.h"
#include "engine/generator.h"
#include "nn/init.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace init = gradiens::nn::init;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

const gd::TensorOptions kF64 = gd::TensorOptions().dtype(gd::kFloat64);
const gd::TensorOptions kF32 = gd::TensorOptions().dtype(gd::kFloat32);

double item(const Tensor& t) { return t.item<double>(); }

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Checks the sample mean and standard deviation of t against the
// distribution's, with tolerances of 6 standard errors for n = t.numel()
// draws: sigma / sqrt(n) for the mean and, for the std, the delta-method
// sigma * sqrt((kurtosis - 1) / (4 n)), with the sample's own kurtosis.
void check_moments(const Tensor& t, double mean, double std) {
  const Tensor x = t.to(gd::kFloat64);
  const double n = static_cast<double>(x.numel());
  const double sample_mean = item(x.mean());
  const double sample_std = item(x.std());
  const double kurtosis = item((x - sample_mean).pow(4).mean()) / std::pow(sample_std, 4);
  CAPTURE(n);
  CAPTURE(kurtosis);
  CHECK(std::abs(sample_mean - mean) <= 6 * std / std::sqrt(n));
  CHECK(std::abs(sample_std - std) <= 6 * std * std::sqrt((kurtosis - 1) / (4 * n)));
}

// All of t in [lo, hi], with the extremes within `slack` of the bounds (n
// uniform draws leave a gap of about (hi - lo) / n at each end).
void check_bounds(const Tensor& t, double lo, double hi, double slack) {
  const double min = item(t.min()), max = item(t.max());
  CHECK(min >= lo);
  CHECK(max <= hi);
  CHECK(min <= lo + slack);
  CHECK(max >= hi - slack);
}

double normal_pdf(double x) { return std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi); }
double normal_cdf(double x) { return (1 + std::erf(x / std::numbers::sqrt2)) / 2; }

struct TruncatedMoments {
  double mean, std;
};
// The closed-form mean and std of N(mean, std^2) restricted to [a, b].
TruncatedMoments truncated_normal_moments(double mean, double std, double a, double b) {
  const double alpha = (a - mean) / std, beta = (b - mean) / std;
  const double z = normal_cdf(beta) - normal_cdf(alpha);
  const double shift = (normal_pdf(alpha) - normal_pdf(beta)) / z;
  const double var = 1 + (alpha * normal_pdf(alpha) - beta * normal_pdf(beta)) / z - shift * shift;
  return {mean + std * shift, std * std::sqrt(var)};
}

}  // namespace

TEST_CASE("calculate_gain matches PyTorch") {
  struct Case {
    init::NonlinearityType nonlinearity;
    double gain;
  };
  // PyTorch: torch.nn.init.calculate_gain(name) for each name.
  const std::vector<Case> cases = {
      {"linear", 1.0},
      {"conv1d", 1.0},
      {"conv2d", 1.0},
      {"conv3d", 1.0},
      {"conv_transpose1d", 1.0},
      {"conv_transpose2d", 1.0},
      {"conv_transpose3d", 1.0},
      {"sigmoid", 1.0},
      {"tanh", 1.6666666666666667},
      {"relu", 1.4142135623730951},
      {"leaky_relu", 1.4141428569978354},
      {"selu", 0.75},
      {init::kLinear, 1.0},
      {init::kConv2D, 1.0},
      {init::kConvTranspose3D, 1.0},
      {init::kSigmoid, 1.0},
      {init::kTanh, 1.6666666666666667},
      {init::kReLU, 1.4142135623730951},
      {init::kLeakyReLU, 1.4141428569978354},
      {init::kSELU, 0.75},
  };
  for (const Case& c : cases) {
    CAPTURE(c.nonlinearity.name());
    CHECK(init::calculate_gain(c.nonlinearity) == doctest::Approx(c.gain).epsilon(1e-15));
  }
  // PyTorch: calculate_gain('leaky_relu', 0.2), calculate_gain('leaky_relu', math.sqrt(5)).
  CHECK(init::calculate_gain("leaky_relu", 0.2) == doctest::Approx(1.3867504905630728).epsilon(1e-15));
  CHECK(init::calculate_gain(init::kLeakyReLU, std::sqrt(5.0)) == doctest::Approx(0.5773502691896257).epsilon(1e-15));
  CHECK(init::calculate_gain("relu", 0.2) == doctest::Approx(1.4142135623730951).epsilon(1e-15));
  CHECK(error_of([] { init::calculate_gain("softmax"); }) == "Unsupported nonlinearity softmax");
  CHECK(error_of([] { init::calculate_gain("ReLU"); }) == "Unsupported nonlinearity ReLU");
}

TEST_CASE("_calculate_fan_in_and_fan_out matches PyTorch") {
  struct Case {
    std::vector<int64_t> shape;
    int64_t fan_in, fan_out;
  };
  // PyTorch: init._calculate_fan_in_and_fan_out(torch.empty(shape)).
  const std::vector<Case> cases = {
      {{7, 5}, 5, 7},                  // Linear(5, 7).weight
      {{16, 3, 5, 5}, 75, 400},        // Conv2d(3, 16, 5).weight
      {{3, 16, 2, 5}, 160, 30},        // ConvTranspose2d(3, 16, (2, 5)).weight
      {{8, 4, 3}, 12, 24},             // Conv1d
      {{2, 3, 4, 5, 6}, 360, 240},     // Conv3d
      {{6, 1, 3, 3}, 9, 54},           // depthwise Conv2d
      {{3, 0}, 0, 3},
  };
  for (const Case& c : cases) {
    CAPTURE(shape_string(c.shape));
    auto [fan_in, fan_out] = init::_calculate_fan_in_and_fan_out(gd::empty(c.shape));
    CHECK(fan_in == c.fan_in);
    CHECK(fan_out == c.fan_out);
  }
  const std::string message = "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions";
  CHECK(error_of([] { init::_calculate_fan_in_and_fan_out(gd::empty({5})); }) == message);
  CHECK(error_of([] { init::xavier_uniform_(gd::empty({5})); }) == message);
  CHECK(error_of([] { init::kaiming_normal_(gd::empty({5})); }) == message);
}

TEST_CASE("uniform_ and normal_ statistics") {
  gd::Generator gen(1);
  Tensor u = init::uniform_(gd::empty({1000, 1000}, kF64), -2, 3, gen);
  check_bounds(u, -2, 3, 1e-4);
  check_moments(u, 0.5, 5 / std::sqrt(12.0));
  Tensor n = init::normal_(gd::empty({1000, 1000}, kF32), 1.5, 0.5, gen);
  CHECK(n.dtype() == gd::kFloat32);
  check_moments(n, 1.5, 0.5);
  Tensor d = init::uniform_(gd::empty({1000, 1000}, kF32), 0, 1, gen);
  check_bounds(d, 0, 1, 1e-4);
  check_moments(d, 0.5, 1 / std::sqrt(12.0));
}

TEST_CASE("xavier statistics") {
  gd::Generator gen(2);
  // U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)); std a / sqrt(3).
  Tensor w = init::xavier_uniform_(gd::empty({1000, 1000}, kF64), 2.0, gen);
  const double a = 2.0 * std::sqrt(6.0 / 2000);
  check_bounds(w, -a, a, 1e-4 * a);
  check_moments(w, 0, a / std::sqrt(3.0));
  Tensor c = init::xavier_uniform_(gd::empty({64, 32, 5, 5}, kF32), 1.0, gen);  // fans 800, 1600
  check_bounds(c, -std::sqrt(6.0 / 2400), std::sqrt(6.0 / 2400), 1e-2);
  check_moments(c, 0, std::sqrt(2.0 / 2400));
  Tensor n = init::xavier_normal_(gd::empty({1000, 500}, kF64), init::calculate_gain("tanh"), gen);
  check_moments(n, 0, 5.0 / 3 * std::sqrt(2.0 / 1500));
}

TEST_CASE("kaiming statistics") {
  gd::Generator gen(3);
  // Defaults: a = 0, fan_in, leaky_relu: bound sqrt(2) * sqrt(3 / fan_in).
  Tensor w = init::kaiming_uniform_(gd::empty({1000, 1000}, kF64), 0, init::kFanIn, init::kLeakyReLU, gen);
  const double bound = std::sqrt(6.0 / 1000);
  check_bounds(w, -bound, bound, 1e-4 * bound);
  check_moments(w, 0, bound / std::sqrt(3.0));
  // nn.Linear's reset: a = sqrt(5) gives bound 1 / sqrt(fan_in).
  Tensor linear = init::kaiming_uniform_(gd::empty({500, 2000}, kF32), std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  check_bounds(linear, -1 / std::sqrt(2000.0), 1 / std::sqrt(2000.0), 1e-4);
  check_moments(linear, 0, 1 / std::sqrt(3 * 2000.0));
  // fan_out of a conv weight [256, 64, 3, 3] is 256 * 9.
  Tensor conv = init::kaiming_normal_(gd::empty({256, 64, 3, 3}, kF64), 0, init::kFanOut, init::kReLU, gen);
  check_moments(conv, 0, std::sqrt(2.0 / 2304));
  // Mode names are case-insensitive, as PyTorch lowercases them.
  Tensor upper = init::kaiming_normal_(gd::empty({1000, 100}, kF64), 0, "FAN_OUT", "relu", gen);
  check_moments(upper, 0, std::sqrt(2.0 / 1000));
  CHECK(error_of([] { init::kaiming_uniform_(gd::empty({3, 4}), 0, "fan_avg"); }) ==
        "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']");
  CHECK(error_of([] { init::kaiming_uniform_(gd::empty({3, 4}), 0, init::kFanIn, "softmax"); }) ==
        "Unsupported nonlinearity softmax");
  // A zero-sized tensor is left alone before any check, as in PyTorch.
  CHECK(init::kaiming_uniform_(gd::empty({0}), 0, "fan_avg").numel() == 0);
  CHECK(init::kaiming_normal_(gd::empty({3, 0})).numel() == 0);
}

TEST_CASE("trunc_normal_ bounds and statistics") {
  gd::Generator gen(4);
  struct Case {
    double mean, std, a, b;
    gd::ScalarType dtype;
    std::vector<int64_t> shape;
  };
  const std::vector<Case> cases = {
      {0, 1, -2, 2, gd::kFloat64, {1000, 1000}},
      {0, 1, -2, 2, gd::kFloat32, {300, 300}},
      {1, 2, 0, 3, gd::kFloat64, {300, 300}},
      {0, 0.02, -0.04, 0.04, gd::kFloat32, {300, 300}},
      {-1, 1, -3, 5, gd::kFloat64, {300, 300}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mean);
    CAPTURE(c.std);
    Tensor t = init::trunc_normal_(gd::empty(c.shape, gd::TensorOptions().dtype(c.dtype)), c.mean, c.std, c.a, c.b,
                                   gen);
    CHECK(t.dtype() == c.dtype);
    CHECK(item(t.min()) >= c.a);
    CHECK(item(t.max()) <= c.b);
    const TruncatedMoments m = truncated_normal_moments(c.mean, c.std, c.a, c.b);
    check_moments(t, m.mean, m.std);
  }
  // The defaults are N(0, 1) on [-2, 2].
  Tensor d = init::trunc_normal_(gd::empty({300, 300}, kF64));
  CHECK(item(d.abs().max()) <= 2);
  check_moments(d, 0, truncated_normal_moments(0, 1, -2, 2).std);
}

TEST_CASE("trunc_normal_ is the inverse normal CDF of a uniform draw between the bounds' CDFs") {
  // PyTorch's recipe: u ~ U(2 cdf(alpha) - 1, 2 cdf(beta) - 1), x = mean + std sqrt(2) erfinv(u).
  // Re-drawing u from a clone of the generator, erf((x - mean) / (std sqrt(2))) must give u back.
  const double mean = 0.5, std = 2, a = -1, b = 3;
  gd::Generator gen(12);
  gd::Generator replay = gen.clone();
  Tensor x = init::trunc_normal_(gd::empty({2000}, kF64), mean, std, a, b, gen);
  Tensor u = gd::empty({2000}, kF64);
  gd::uniform_(u, 2 * normal_cdf((a - mean) / std) - 1, 2 * normal_cdf((b - mean) / std) - 1, replay);
  const std::vector<double> xs = values_of(x), us = values_of(u);
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i)
    worst = std::max(worst, std::abs(std::erf((xs[i] - mean) / (std * std::numbers::sqrt2)) - us[i]));
  CHECK(worst <= 4e-16);
}

TEST_CASE("constant_, zeros_, ones_, eye_ and dirac_") {
  CHECK(values_of(init::constant_(gd::empty({2, 2}, kF64), 0.25)) == std::vector<double>{0.25, 0.25, 0.25, 0.25});
  CHECK(values_of(init::zeros_(gd::ones({3}, kF64))) == std::vector<double>{0, 0, 0});
  CHECK(values_of(init::ones_(gd::zeros({3}, kF32))) == std::vector<double>{1, 1, 1});
  CHECK(values_of(init::constant_(gd::empty({2}, gd::TensorOptions().dtype(gd::kInt64)), 7)) ==
        std::vector<double>{7, 7});

  // PyTorch: init.eye_(torch.empty(3, 5)), init.eye_(torch.empty(4, 2)).
  CHECK(values_of(init::eye_(gd::full({3, 5}, 9.0, kF64))) ==
        std::vector<double>{1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0});
  CHECK(values_of(init::eye_(gd::empty({4, 2}, kF32))) == std::vector<double>{1, 0, 0, 1, 0, 0, 0, 0});
  CHECK(error_of([] { init::eye_(gd::empty({2, 2, 2})); }) == "Only tensors with 2 dimensions are supported");
  CHECK(error_of([] { init::eye_(gd::empty({2})); }) == "Only tensors with 2 dimensions are supported");

  struct DiracCase {
    std::vector<int64_t> shape;
    int64_t groups;
    std::vector<std::vector<int64_t>> ones;  // PyTorch: init.dirac_(w, groups).nonzero().tolist()
  };
  const std::vector<DiracCase> cases = {
      {{4, 2, 3}, 2, {{0, 0, 1}, {1, 1, 1}, {2, 0, 1}, {3, 1, 1}}},
      {{2, 3, 3, 3}, 1, {{0, 0, 1, 1}, {1, 1, 1, 1}}},
      {{3, 2, 2, 4, 5}, 1, {{0, 0, 1, 2, 2}, {1, 1, 1, 2, 2}}},
  };
  for (const DiracCase& c : cases) {
    CAPTURE(shape_string(c.shape));
    Tensor w = init::dirac_(gd::full(c.shape, 5.0, kF64), c.groups);
    Tensor nz = w.nonzero();
    std::vector<double> want;
    for (const auto& row : c.ones)
      for (int64_t i : row) want.push_back(static_cast<double>(i));
    CHECK(values_of(nz) == want);
    CHECK(item(w.sum()) == static_cast<double>(c.ones.size()));
  }
  CHECK(error_of([] { init::dirac_(gd::empty({2, 3, 4}), 3); }) == "dim 0 must be divisible by groups");
  CHECK(error_of([] { init::dirac_(gd::empty({2, 3})); }) == "Only tensors with 3, 4, or 5 dimensions are supported");
}

TEST_CASE("orthogonal_ gives orthonormal rows or columns") {
  gd::Generator gen(5);
  struct Case {
    std::vector<int64_t> shape;
    double gain;
  };
  const std::vector<Case> cases = {{{10, 6}, 1.0}, {{6, 10}, 1.0}, {{8, 8}, 2.0}, {{4, 2, 3, 3}, 1.0}, {{20, 3}, 0.5}};
  for (const Case& c : cases) {
    CAPTURE(shape_string(c.shape));
    Tensor w = init::orthogonal_(gd::empty(c.shape, kF64), c.gain, gen);
    CHECK(w.sizes() == gd::IntArrayRef(c.shape));
    const int64_t rows = c.shape[0], cols = w.numel() / rows;
    Tensor m = w.reshape({rows, cols});
    // Tall: Q^T Q = gain^2 I; wide: Q Q^T = gain^2 I.
    Tensor gram = rows >= cols ? m.t().matmul(m) : m.matmul(m.t());
    const int64_t k = std::min(rows, cols);
    CHECK(value_mismatch(gram, gd::eye(k, kF64) * (c.gain * c.gain), 0, 1e-12) == "");
  }
  CHECK(init::orthogonal_(gd::empty({3, 4}, kF32), 1.0, gen).dtype() == gd::kFloat32);
  CHECK(error_of([] { init::orthogonal_(gd::empty({5})); }) == "Only tensors with 2 or more dimensions are supported");
  CHECK(init::orthogonal_(gd::empty({0, 3})).numel() == 0);
}

TEST_CASE("orthogonal_ is Q of the QR of a normal draw, signed so R's diagonal is positive") {
  // With A the normal matrix orthogonal_ draws (re-drawn from a clone of the
  // generator), A = Q R with W = Q, so R = W^T A must be upper triangular with
  // a positive diagonal; for a wide W it factors A^T, so R = W A^T.
  for (std::vector<int64_t> shape : {std::vector<int64_t>{7, 4}, std::vector<int64_t>{4, 7}}) {
    CAPTURE(shape_string(shape));
    gd::Generator gen(6);
    gd::Generator replay = gen.clone();
    Tensor w = init::orthogonal_(gd::empty(shape, kF64), 1.0, gen);
    Tensor a = gd::empty(shape, kF64);
    gd::normal_(a, 0, 1, replay);
    Tensor r = shape[0] >= shape[1] ? w.t().matmul(a) : w.matmul(a.t());
    CHECK(value_mismatch(r.tril(-1), gd::zeros_like(r.tril(-1)), 0, 1e-12) == "");
    CHECK(item(r.diagonal().min()) > 0);
  }
}

TEST_CASE("sparse_ zeroes ceil(sparsity * rows) entries per column") {
  gd::Generator gen(8);
  Tensor w = init::sparse_(gd::empty({200, 300}, kF64), 0.3, 0.01, gen);
  Tensor zeros_per_column = (w == 0.0).sum({0});
  CHECK(item(zeros_per_column.min()) == 60);
  CHECK(item(zeros_per_column.max()) == 60);
  check_moments(w.masked_select(w != 0.0), 0, 0.01);
  CHECK(error_of([] { init::sparse_(gd::empty({2, 2, 2}), 0.5); }) == "Only tensors with 2 dimensions are supported");
}

TEST_CASE("initializers are deterministic for a seed and advance the generator") {
  auto draw = [](gd::Generator gen) {
    std::vector<Tensor> out;
    out.push_back(init::uniform_(gd::empty({5, 4}, kF64), -1, 1, gen));
    out.push_back(init::normal_(gd::empty({5, 4}, kF32), 0, 1, gen));
    out.push_back(init::xavier_uniform_(gd::empty({5, 4}, kF64), 1.0, gen));
    out.push_back(init::xavier_normal_(gd::empty({5, 4}, kF64), 1.0, gen));
    out.push_back(init::kaiming_uniform_(gd::empty({5, 4}, kF64), 0, init::kFanIn, init::kReLU, gen));
    out.push_back(init::kaiming_normal_(gd::empty({5, 4}, kF64), 0, init::kFanIn, init::kReLU, gen));
    out.push_back(init::trunc_normal_(gd::empty({5, 4}, kF64), 0, 1, -2, 2, gen));
    out.push_back(init::orthogonal_(gd::empty({5, 4}, kF64), 1.0, gen));
    out.push_back(init::sparse_(gd::empty({5, 4}, kF64), 0.5, 0.01, gen));
    return out;
  };
  const std::vector<Tensor> first = draw(gd::Generator(42)), second = draw(gd::Generator(42));
  const std::vector<Tensor> other = draw(gd::Generator(43));
  for (size_t i = 0; i < first.size(); ++i) {
    CAPTURE(i);
    CHECK(gd::equal(first[i], second[i]));
    CHECK(!gd::equal(first[i], other[i]));
  }
  // Consecutive draws from one generator differ (the one passed advances).
  gd::Generator gen(9);
  Tensor x = init::kaiming_uniform_(gd::empty({5, 4}, kF64), 0, init::kFanIn, init::kLeakyReLU, gen);
  Tensor y = init::kaiming_uniform_(gd::empty({5, 4}, kF64), 0, init::kFanIn, init::kLeakyReLU, gen);
  CHECK(!gd::equal(x, y));
  // Without a generator, the default one: manual_seed makes it repeat.
  gd::manual_seed(11);
  Tensor p = init::xavier_normal_(gd::empty({6, 3}, kF64));
  Tensor q = init::trunc_normal_(gd::empty({6, 3}, kF64));
  gd::manual_seed(11);
  CHECK(gd::equal(init::xavier_normal_(gd::empty({6, 3}, kF64)), p));
  CHECK(gd::equal(init::trunc_normal_(gd::empty({6, 3}, kF64)), q));
}

TEST_CASE("initializers fill a leaf that requires grad in place without recording") {
  gd::Generator gen(10);
  Tensor w = gd::zeros({4, 3}, kF64).requires_grad_();
  const auto initializers = std::vector<std::function<Tensor(Tensor)>>{
      [&](Tensor t) { return init::uniform_(t, -1, 1, gen); },
      [&](Tensor t) { return init::normal_(t, 0, 1, gen); },
      [&](Tensor t) { return init::trunc_normal_(t, 0, 1, -2, 2, gen); },
      [&](Tensor t) { return init::xavier_uniform_(t, 1.0, gen); },
      [&](Tensor t) { return init::kaiming_normal_(t, 0, init::kFanIn, init::kLeakyReLU, gen); },
      [&](Tensor t) { return init::orthogonal_(t, 1.0, gen); },
      [&](Tensor t) { return init::sparse_(t, 0.5, 0.01, gen); },
      [](Tensor t) { return init::constant_(t, 3); },
      [](Tensor t) { return init::zeros_(t); },
      [](Tensor t) { return init::ones_(t); },
      [](Tensor t) { return init::eye_(t); },
  };
  for (size_t i = 0; i < initializers.size(); ++i) {
    CAPTURE(i);
    const uint32_t version = w._version();
    Tensor out = initializers[i](w);
    CHECK(out.is_same(w));
    CHECK(w.requires_grad());
    CHECK(w.is_leaf());
    CHECK(w._version() > version);
  }
  Tensor conv = gd::zeros({2, 2, 3}, kF64).requires_grad_();
  CHECK(init::dirac_(conv).is_same(conv));
  CHECK(conv.is_leaf());
  // The leaf still trains: its values flow into a backward pass.
  (w * 2.0).sum().backward();
  CHECK(values_of(w.grad()) == std::vector<double>(12, 2.0));
}

TEST_CASE("init errors from the underlying fills") {
  // PyTorch: init.normal_(torch.empty(3), 0, -1); init.uniform_(torch.empty(3, dtype=torch.long)).
  CHECK(error_of([] { init::normal_(gd::empty({3}), 0, -1); }) == "normal expects std >= 0.0, but found std -1");
  CHECK(error_of([] { init::uniform_(gd::empty({3}, gd::TensorOptions().dtype(gd::kInt64))); }) ==
        "\"check_uniform_bounds\" not implemented for 'Long'");
  // PyTorch divides by std here (ZeroDivisionError); gradiens says so.
  CHECK(error_of([] { init::trunc_normal_(gd::empty({3}), 0, 0); }) ==
        "trunc_normal_ expects std > 0, but found std=0");
}
