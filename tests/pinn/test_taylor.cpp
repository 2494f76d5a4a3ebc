// The Taylor-mode engine against the nested one: values, gradients, plain and
// weighted Laplacians and pure derivatives up to order 4 to 1e-12 in float64
// for every activation (and Fourier features first), the same parameter
// gradients of a loss built on them, gradcheck/gradgradcheck of the engine and
// of its fused jet-activation op, and its errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/conv.h"
#include "nn/modules/linear.h"
#include "pinn/fourier.h"
#include "pinn/operators.h"
#include "pinn/taylor.h"
#include "kernels/jet.h"
#include "pinn/taylor/jet_activation.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;
namespace nn = gradiens::nn;

namespace {

const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);

void add_activation(nn::Sequential& net, const std::string& activation) {
  if (activation == "tanh") net->push_back(nn::Tanh());
  if (activation == "sigmoid") net->push_back(nn::Sigmoid());
  if (activation == "silu") net->push_back(nn::SiLU());
  if (activation == "relu") net->push_back(nn::ReLU());
}

// d -> [FourierFeatures(3 frequencies)] -> 8 -> 6 -> Identity -> (5) -> m, the
// activation after each hidden Linear, the last two layers in a nested Sequential.
nn::Sequential make_net(const std::string& activation, bool fourier, int64_t d, int64_t m, uint64_t seed) {
  gd::manual_seed(seed);
  nn::Sequential net;
  int64_t width = d;
  if (fourier) {
    net->push_back(gp::FourierFeatures(d, 3, 0.4));
    width = 6;
  }
  net->push_back(nn::Linear(width, 8));
  add_activation(net, activation);
  net->push_back(nn::Linear(8, 6));
  add_activation(net, activation);
  net->push_back(nn::Identity());
  nn::Sequential tail(nn::Linear(6, 5));
  add_activation(tail, activation);
  tail->push_back(nn::Linear(5, m));
  net->push_back(tail);
  net->to(gd::kFloat64);
  return net;
}

// max |a - b| over max(1, max |b|): absolute for O(1) values, relative for the
// larger high-order derivatives.
double scaled_error(const gd::Tensor& a, const gd::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1.0, b.abs().max().item<double>());
}

gd::Tensor points(int64_t n, int64_t d, uint64_t seed) {
  gd::Generator generator(seed);
  return (gd::randn({n, d}, generator, f64) * 0.8).requires_grad_();
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const gd::Error& e) {
    return e.what();
  }
  return "no error";
}

const char* const kActivations[] = {"tanh", "sigmoid", "silu", "relu"};

}  // namespace

TEST_CASE("taylor: every carried derivative equals the nested engine's to 1e-12") {
  const std::vector<double> weights{0.5, -2.0, 3.0};
  for (const char* activation : kActivations) {
    for (bool fourier : {false, true}) {
      CAPTURE(activation);
      CAPTURE(fourier);
      nn::Sequential net = make_net(activation, fourier, 3, 2, 11);
      CHECK(gp::taylor_supported(*net));
      gd::Tensor x = points(10, 3, 3);
      const gp::TaylorOutputs taylor = gp::taylor_forward(*net, x, {.pure_dims = {2, 0}, .pure_order = 4});
      const gp::TaylorOutputs weighted = gp::taylor_forward(*net, x, {.laplacian_weights = weights});
      gd::Tensor u = net->forward(x);
      CHECK(scaled_error(taylor.value, u) < 1e-12);
      CHECK(scaled_error(taylor.pure(1, 0), u) < 1e-12);
      for (int64_t c = 0; c < 2; ++c) {
        CAPTURE(c);
        CHECK(scaled_error(taylor.gradient.select(1, c), gp::grad(u, x, c)) < 1e-12);
        CHECK(scaled_error(taylor.laplacian.narrow(1, c, 1), gp::laplacian(u, x, c)) < 1e-12);
        gd::Tensor nested_weighted = gd::zeros({10, 1}, f64);
        for (int64_t i = 0; i < 3; ++i) nested_weighted = nested_weighted + weights[i] * gp::partial(u, x, {i, i}, c);
        CHECK(scaled_error(weighted.laplacian.narrow(1, c, 1), nested_weighted) < 1e-12);
        for (int64_t dim : {0, 2}) {
          CHECK(scaled_error(taylor.pure(dim, 1).narrow(1, c, 1), gp::partial(u, x, {dim}, c)) < 1e-12);
          for (int order = 2; order <= 4; ++order) {
            CAPTURE(dim);
            CAPTURE(order);
            const std::vector<int64_t> dims(static_cast<size_t>(order), dim);
            CHECK(scaled_error(taylor.pure(dim, order).narrow(1, c, 1), gp::partial(u, x, dims, c)) < 1e-12);
          }
        }
      }
    }
  }
}

TEST_CASE("taylor: only what is requested is carried; the default request is the plain Laplacian") {
  nn::Sequential net = make_net("tanh", false, 2, 1, 5);
  gd::Tensor x = points(6, 2, 5);
  const gp::TaylorOutputs plain = gp::taylor_forward(*net, x);
  CHECK(plain.laplacian.defined());
  CHECK(scaled_error(plain.laplacian, gp::laplacian(net->forward(x), x)) < 1e-12);
  const gp::TaylorOutputs burgers = gp::taylor_forward(*net, x, {.laplacian = false, .pure_dims = {0}});
  CHECK(!burgers.laplacian.defined());
  CHECK((burgers.gradient.size(0) == 6 && burgers.gradient.size(1) == 1 && burgers.gradient.size(2) == 2));
  CHECK(scaled_error(burgers.pure(0, 2), gp::partial(net->forward(x), x, {0, 0})) < 1e-12);
}

TEST_CASE("taylor: training through it gives the nested engine's parameter gradients") {
  const std::vector<double> weights{1.0, 0.25, 2.0};
  for (const char* activation : {"tanh", "sigmoid", "silu"}) {
    for (bool fourier : {false, true}) {
      CAPTURE(activation);
      CAPTURE(fourier);
      nn::Sequential net = make_net(activation, fourier, 3, 1, 21);
      gd::Tensor x0 = points(12, 3, 4).detach();
      // mean((weighted lap u + u u_x0 + u_x1x1x1 / 10 + sin x0)^2)
      auto parameter_grads = [&](bool taylor) {
        net->zero_grad();
        gd::Tensor x = x0.clone().requires_grad_();
        gd::Tensor lap, u, u_x0, u_111;
        if (taylor) {
          const gp::TaylorOutputs t =
              gp::taylor_forward(*net, x, {.laplacian_weights = weights, .pure_dims = {1}, .pure_order = 3});
          lap = t.laplacian, u = t.value, u_x0 = t.pure(0, 1), u_111 = t.pure(1, 3);
        } else {
          u = net->forward(x);
          lap = gd::zeros({12, 1}, f64);
          for (int64_t i = 0; i < 3; ++i) lap = lap + weights[i] * gp::partial(u, x, {i, i});
          u_x0 = gp::partial(u, x, {0});
          u_111 = gp::partial(u, x, {1, 1, 1});
        }
        (lap + u * u_x0 + 0.1 * u_111 + gd::sin(x.narrow(1, 0, 1))).square().mean().backward();
        std::vector<gd::Tensor> grads;
        for (const gd::Tensor& p : net->parameters()) {
          REQUIRE(p.grad().defined());
          grads.push_back(p.grad().clone());
        }
        return grads;
      };
      const auto nested = parameter_grads(false), taylor = parameter_grads(true);
      REQUIRE(nested.size() == taylor.size());
      for (size_t i = 0; i < nested.size(); ++i) CHECK(scaled_error(taylor[i], nested[i]) < 1e-12);
    }
  }
}

TEST_CASE("taylor: gradcheck in x and in the parameters, gradgradcheck in x") {
  nn::Sequential net = make_net("tanh", true, 2, 1, 9);
  gd::Tensor x = points(3, 2, 6);
  auto outputs = [&](const std::vector<gd::Tensor>& inputs) {
    const gp::TaylorOutputs t = gp::taylor_forward(*net, inputs[0], {.pure_dims = {0}, .pure_order = 4});
    return std::vector<gd::Tensor>{t.laplacian, t.pure(0, 4), t.gradient};
  };
  std::vector<gd::Tensor> inputs{x};
  for (const gd::Tensor& p : net->parameters()) inputs.push_back(p);
  CHECK(gd::autograd::gradcheck(outputs, inputs));
  CHECK(gd::autograd::gradgradcheck(outputs, {x}));
}

TEST_CASE("taylor: gradgradcheck in the parameters of a small net") {
  gd::manual_seed(2);
  nn::Sequential net(nn::Linear(2, 4), nn::SiLU(), nn::Linear(4, 3), nn::Tanh(), nn::Linear(3, 1));
  net->to(gd::kFloat64);
  gd::Tensor x = points(3, 2, 8);
  auto outputs = [&](const std::vector<gd::Tensor>& inputs) {
    const gp::TaylorOutputs t = gp::taylor_forward(*net, inputs[0], {.pure_dims = {1}, .pure_order = 3});
    return std::vector<gd::Tensor>{t.laplacian, t.pure(1, 3)};
  };
  std::vector<gd::Tensor> inputs{x};
  for (const gd::Tensor& p : net->parameters()) inputs.push_back(p);
  CHECK(gd::autograd::gradgradcheck(outputs, inputs));
}

TEST_CASE("jet_mlp: the fused, blocked pass equals the layered one over several sample blocks") {
  // 700 samples of this net make three blocks, the last one partial. The
  // backward of tanh and the sigmoid takes their derivatives from the values
  // of the recomputed forward pass, silu's from z.
  for (const char* activation : {"tanh", "sigmoid", "silu"})
    for (bool fourier : {false, true}) {
      CAPTURE(activation);
      CAPTURE(fourier);
      nn::Sequential net = make_net(activation, fourier, 3, 2, 13);
      gd::Tensor x = points(700, 3, 12);
      const gp::TaylorRequest request{.laplacian_weights = {1.0, 2.0, 0.5}, .pure_dims = {0, 2}, .pure_order = 4};
      const gp::TaylorOutputs fused = gp::taylor_forward(*net, x, request);
      std::vector<gd::Tensor> inputs{x};
      for (const gd::Tensor& p : net->parameters()) inputs.push_back(p);
      // The layered pass is what the fused op's backward runs under create_graph.
      auto loss = [&](const gp::TaylorOutputs& t) {
        return (t.laplacian.square() + t.pure(2, 4) * t.value + t.gradient.sum({2}).sin()).sum();
      };
      const gd::Tensor total = loss(fused);
      auto fused_grads = gd::autograd::grad({total}, inputs, {}, /*retain_graph=*/true);
      auto layered_grads = gd::autograd::grad({total}, inputs, {}, true, /*create_graph=*/true);
      for (size_t i = 0; i < inputs.size(); ++i) CHECK(scaled_error(fused_grads[i], layered_grads[i]) < 1e-12);
      gd::Tensor u = net->forward(x);
      CHECK(scaled_error(fused.value, u) < 1e-12);
      CHECK(scaled_error(fused.gradient.select(1, 1), gp::grad(u, x, 1)) < 1e-12);
      CHECK(scaled_error(fused.pure(0, 3).narrow(1, 0, 1), gp::partial(u, x, {0, 0, 0})) < 1e-12);
    }
}

namespace {

// A network given to the jet_mlp kernels directly: tanh, sin and the sigmoid,
// two activations in a row (no Linear between them), an activation last, and
// 700 samples in several sample blocks whose element counts are not a
// multiple of the vector width.
struct KernelNet {
  static constexpr int64_t d = 3, n = 700;
  const std::vector<std::pair<int64_t, int64_t>> shapes{{13, 3}, {13, 13}, {9, 13}, {2, 9}};
  const gp::JetBlocks blocks{.coordinates = d, .laplacian = true, .pure_dims = {1}, .pure_order = 3};
  const gd::kernels::JetLayout layout = blocks.layout(n, 1);
  const gd::kernels::DeviceRef cpu;
  std::vector<gd::Tensor> weights, biases;
  std::vector<gd::kernels::JetMlpLayer<double>> layers;
  gd::Tensor x, grad_out;

  KernelNet() {
    using gd::kernels::JetActivation;
    gd::Generator generator(5);
    for (const auto& [out, in] : shapes) {
      weights.push_back(gd::randn({out, in}, generator, f64) * 0.5);
      biases.push_back(gd::randn({out}, generator, f64) * 0.2);
    }
    auto linear = [&](size_t i) {
      layers.push_back({.linear = true, .in_features = shapes[i].second, .out_features = shapes[i].first,
                        .weight = weights[i].data_ptr<double>(), .bias = biases[i].data_ptr<double>()});
    };
    auto activation = [&](JetActivation a) { layers.push_back({.activation = a}); };
    linear(0), activation(JetActivation::Tanh), linear(1), activation(JetActivation::Sin), linear(2),
        activation(JetActivation::Sigmoid), activation(JetActivation::Tanh), linear(3),
        activation(JetActivation::Tanh);
    x = gd::randn({n, d}, generator, f64);
    grad_out = gd::randn({blocks.count(), n, 2}, generator, f64);
  }
  int64_t count() const { return static_cast<int64_t>(layers.size()); }

  // The output jet; `kept` (or undefined) receives the kept values.
  gd::Tensor forward(const gd::Tensor& kept = {}) const {
    gd::Tensor out = gd::empty({blocks.count(), n, 2}, f64);
    gd::kernels::jet_mlp_forward(layout, layers.data(), count(), x.data_ptr<double>(), out.data_ptr<double>(), cpu,
                                 kept.defined() ? kept.data_ptr<double>() : nullptr);
    return out;
  }

  // grad_x, then each Linear's weight and bias gradients.
  std::vector<gd::Tensor> gradients(const double* kept_values) const {
    std::vector<gd::Tensor> grads{gd::empty({n, d}, f64)};
    std::vector<double*> grad_weight, grad_bias;
    size_t next = 0;
    for (const auto& layer : layers) {
      if (!layer.linear) {
        grad_weight.push_back(nullptr), grad_bias.push_back(nullptr);
        continue;
      }
      grads.push_back(gd::full({shapes[next].first, shapes[next].second}, std::nan(""), f64));
      grads.push_back(gd::full({shapes[next].first}, std::nan(""), f64));
      grad_weight.push_back(grads[grads.size() - 2].data_ptr<double>());
      grad_bias.push_back(grads.back().data_ptr<double>());
      ++next;
    }
    gd::kernels::jet_mlp_backward(layout, layers.data(), count(), x.data_ptr<double>(), grad_out.data_ptr<double>(),
                                  grads[0].data_ptr<double>(), grad_weight.data(), grad_bias.data(), cpu, kept_values);
    return grads;
  }
};

// Restores the library's thread count when it goes out of scope.
struct ThreadCount {
  explicit ThreadCount(int threads) : saved(gd::get_num_threads()) { gd::set_num_threads(threads); }
  ~ThreadCount() { gd::set_num_threads(saved); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;
  int saved;
};

}  // namespace

TEST_CASE("jet_mlp: a backward reading the kept activation values gives the recomputing one's gradients, bit for bit") {
  // Note [Kept activation values]: tanh and the sigmoid keep their values, sin
  // does not; the Linear before each keeping layer skips its value block when
  // they are read.
  const KernelNet net;
  const int64_t n = KernelNet::n;
  const int64_t kept_count = gd::kernels::jet_mlp_kept_values(net.layout, net.layers.data(), net.count(), net.cpu);
  CHECK(kept_count == n * (13 + 9 + 9 + 2));
  gd::Tensor kept = gd::full({kept_count}, std::nan(""), f64);
  const gd::Tensor out_kept = net.forward(kept), out_plain = net.forward();
  CHECK(gd::equal(out_kept, out_plain));
  CHECK(!gd::isnan(kept).any().item<bool>());
  // The first kept layer's values are tanh(x W0^T + b0).
  CHECK(scaled_error(kept.narrow(0, 0, n * 13).view({n, 13}),
                     gd::tanh(gd::addmm(net.biases[0], net.x, net.weights[0].t()))) < 1e-14);

  const std::vector<gd::Tensor> from_kept = net.gradients(kept.data_ptr<double>()), recomputed = net.gradients(nullptr);
  REQUIRE(from_kept.size() == recomputed.size());
  for (size_t i = 0; i < from_kept.size(); ++i) {
    CAPTURE(i);
    CHECK(gd::equal(from_kept[i], recomputed[i]));
  }
}

TEST_CASE("jet_mlp: threads share the samples; per-sample results keep their bits, parameter gradients their sums") {
  // Note [Sample blocks on threads]: 700 samples make four sample blocks here;
  // three threads take a third of the samples each. Outputs, kept values and grad_x are per
  // sample, so they are the one-thread bits; the weight and bias gradients are
  // three partial sums added, equal to the one-thread sums to rounding and the
  // same bits on every three-thread run.
  const KernelNet net;
  const int64_t kept_count = gd::kernels::jet_mlp_kept_values(net.layout, net.layers.data(), net.count(), net.cpu);
  gd::Tensor kept_serial = gd::full({kept_count}, std::nan(""), f64), kept_shared = kept_serial.clone();
  gd::Tensor out_serial, out_shared;
  std::vector<gd::Tensor> serial, shared, shared_again;
  {
    const ThreadCount one(1);
    out_serial = net.forward(kept_serial);
    serial = net.gradients(kept_serial.data_ptr<double>());
  }
  {
    const ThreadCount three(3);
    out_shared = net.forward(kept_shared);
    shared = net.gradients(kept_shared.data_ptr<double>());
    shared_again = net.gradients(nullptr);
  }
  CHECK(gd::equal(out_shared, out_serial));
  CHECK(gd::equal(kept_shared, kept_serial));
  REQUIRE(shared.size() == serial.size());
  CHECK(gd::equal(shared[0], serial[0]));
  for (size_t i = 1; i < serial.size(); ++i) {
    CAPTURE(i);
    CHECK(scaled_error(shared[i], serial[i]) < 1e-13);
    CHECK(gd::equal(shared_again[i], shared[i]));
  }
}

// ---- the fused jet-activation op -----------------------------------------------

namespace {

const gp::JetActivation kJetActivations[] = {gp::JetActivation::Tanh, gp::JetActivation::Sigmoid,
                                             gp::JetActivation::Silu, gp::JetActivation::Relu,
                                             gp::JetActivation::Sin};

// Jets of d = 2 coordinates: first derivatives only, a weighted Laplacian,
// pure derivatives of order 3 without a Laplacian, and everything at order 4.
std::vector<gp::JetBlocks> jet_layouts() {
  return {{.coordinates = 2},
          {.coordinates = 2, .laplacian = true, .laplacian_weights = {0.5, 3.0}},
          {.coordinates = 2, .pure_dims = {0}, .pure_order = 3},
          {.coordinates = 2, .laplacian = true, .pure_dims = {1, 0}, .pure_order = 4}};
}

gd::Tensor random_jet(const gp::JetBlocks& blocks, int64_t n, int64_t w, uint64_t seed) {
  gd::Generator generator(seed);
  return gd::randn({blocks.count(), n, w}, generator, f64).requires_grad_();
}

}  // namespace

TEST_CASE("jet_activation: the fused kernel equals the differentiable formulas, forward and backward") {
  // 3 x 5 and 3 x 3 leave a partial last vector; 700 x 20 spans several
  // parallel chunks.
  for (const auto& [n, w] : {std::pair<int64_t, int64_t>{3, 5}, {3, 3}, {700, 20}}) {
    for (gp::JetActivation activation : kJetActivations) {
      for (const gp::JetBlocks& blocks : jet_layouts()) {
        CAPTURE(n);
        CAPTURE(w);
        CAPTURE(static_cast<int>(activation));
        CAPTURE(blocks.count());
        gd::Tensor jet = random_jet(blocks, n, w, 1), bias = gd::randn({w}, f64).requires_grad_();
        gd::Tensor fused = gp::jet_activation(activation, blocks, jet, bias);
        gd::Tensor composite = gp::jet_activation_composite(activation, blocks, jet, bias);
        CHECK(scaled_error(fused, composite) < 1e-13);
        CHECK(scaled_error(gp::jet_activation(activation, blocks, jet, gd::Tensor()),
                           gp::jet_activation_composite(activation, blocks, jet, gd::Tensor())) < 1e-13);
        gd::Tensor grad_out = gd::randn(fused.sizes(), f64);
        // Without create_graph the fused backward runs; with it, the differentiable one.
        auto fused_grads = gd::autograd::grad({fused}, {jet, bias}, {grad_out}, true, false);
        auto composite_grads = gd::autograd::grad({composite}, {jet, bias}, {grad_out}, true, false);
        auto differentiable_grads = gd::autograd::grad({fused}, {jet, bias}, {grad_out}, true, true);
        for (size_t i = 0; i < 2; ++i) {
          CHECK(scaled_error(fused_grads[i], composite_grads[i]) < 1e-13);
          CHECK(scaled_error(differentiable_grads[i], composite_grads[i]) < 1e-13);
        }
      }
    }
  }
}

TEST_CASE("jet_activation: gradcheck and gradgradcheck for every activation and layout") {
  for (gp::JetActivation activation : kJetActivations) {
    for (const gp::JetBlocks& blocks : jet_layouts()) {
      CAPTURE(static_cast<int>(activation));
      CAPTURE(blocks.count());
      gd::Tensor jet = random_jet(blocks, 2, 3, 2), bias = gd::randn({3}, f64).requires_grad_();
      auto op = [&](const std::vector<gd::Tensor>& in) {
        return std::vector<gd::Tensor>{gp::jet_activation(activation, blocks, in[0], in[1])};
      };
      CHECK(gd::autograd::gradcheck(op, {jet, bias}));
      CHECK(gd::autograd::gradgradcheck(op, {jet, bias}));
    }
  }
}

TEST_CASE("jet_activation: float32 through the fused kernel") {
  const gp::JetBlocks blocks = jet_layouts().back();
  for (gp::JetActivation activation : kJetActivations) {
    CAPTURE(static_cast<int>(activation));
    gd::Tensor jet = random_jet(blocks, 9, 7, 3).detach(), bias = gd::randn({7}, f64);
    gd::Tensor single = jet.to(gd::kFloat32).requires_grad_(), single_bias = bias.to(gd::kFloat32).requires_grad_();
    gd::Tensor out = gp::jet_activation(activation, blocks, single, single_bias);
    CHECK(out.scalar_type() == gd::kFloat32);
    CHECK(scaled_error(out.to(gd::kFloat64), gp::jet_activation_composite(activation, blocks, jet, bias)) < 1e-5);
    gd::Tensor grad_out = gd::randn(out.sizes(), f64);
    gd::Tensor reference_jet = jet.clone().requires_grad_();
    auto expected = gd::autograd::grad({gp::jet_activation_composite(activation, blocks, reference_jet, bias)},
                                       {reference_jet}, {grad_out})[0];
    auto got = gd::autograd::grad({out}, {single}, {grad_out.to(gd::kFloat32)})[0];
    CHECK(scaled_error(got.to(gd::kFloat64), expected) < 1e-5);
  }
}

// ---- errors -----------------------------------------------------------------------

TEST_CASE("taylor: networks it cannot carry") {
  nn::Sequential conv(nn::Conv2d(1, 2, 3), nn::Tanh());
  CHECK(!gp::taylor_supported(*conv));
  CHECK(error_of([&] { gp::taylor_forward(*conv, gd::zeros({2, 3}, f64)); }) ==
        "pinn::taylor_forward: a Conv2d layer is not Linear, FourierFeatures or an elementwise activation (the Taylor "
        "engine takes MLPs; use the nested operators of pinn/operators.h)");
  nn::Sequential net = make_net("tanh", false, 3, 1, 1);
  CHECK(error_of([&] { gp::taylor_forward(*net, gd::zeros({4, 2}, f64)); }) ==
        "pinn::taylor_forward: a Linear layer (in_features=3, out_features=8, bias=True) takes 3 input features, but "
        "its input has 2");
  nn::Sequential fourier(gp::FourierFeatures(2, 3, 1.0), nn::Linear(6, 1));
  fourier->to(gd::kFloat64);
  CHECK(gp::taylor_supported(*fourier));
  CHECK(error_of([&] { gp::taylor_forward(*fourier, gd::zeros({4, 3}, f64)); }) ==
        "pinn::taylor_forward: a FourierFeatures layer (in_features=2, features=3, sigma=1) takes 2 input features, "
        "but its input has 3");
}

TEST_CASE("taylor: requests and reads that do not fit are errors saying what to do") {
  nn::Sequential net = make_net("tanh", false, 3, 1, 1);
  const gd::Tensor x = gd::zeros({4, 3}, f64);
  auto forward = [&](const gp::TaylorRequest& request) { return [&net, &x, request] { gp::taylor_forward(*net, x, request); }; };
  const std::pair<std::function<void()>, std::string> cases[] = {
      {[&] { gp::taylor_forward(*net, gd::zeros({4}, f64)); }, "pinn::taylor_forward: x must be [N, d], got [4]"},
      {[&] { gp::taylor_forward(*net, gd::Tensor()); }, "pinn::taylor_forward: x must be [N, d], got an undefined tensor"},
      {forward({.pure_dims = {3}}), "pinn::taylor_forward: pure dim 3 is out of range for x with 3 coordinates"},
      {forward({.pure_dims = {-1}}), "pinn::taylor_forward: pure dim -1 is out of range for x with 3 coordinates"},
      {forward({.pure_dims = {1, 1}}), "pinn::taylor_forward: pure dim 1 is listed twice in pure_dims [1, 1]"},
      {forward({.pure_dims = {0}, .pure_order = 1}),
       "pinn::taylor_forward: pure_order must be 2, 3 or 4, got 1 (first derivatives are in gradient)"},
      {forward({.pure_order = 5}),
       "pinn::taylor_forward: pure_order must be 2, 3 or 4, got 5 (first derivatives are in gradient)"},
      {forward({.laplacian_weights = {1.0, 2.0}}),
       "pinn::taylor_forward: laplacian_weights has 2 values but x has 3 coordinates (give one per coordinate, or "
       "none for the plain Laplacian)"},
      {forward({.laplacian = false, .laplacian_weights = {1.0, 2.0, 3.0}}),
       "pinn::taylor_forward: laplacian_weights are given but laplacian is false (set laplacian = true to carry it)"},
  };
  for (const auto& [fn, message] : cases) CHECK(error_of(fn) == message);

  const gp::TaylorOutputs t = gp::taylor_forward(*net, x, {.pure_dims = {1}, .pure_order = 3});
  CHECK(error_of([&] { t.pure(1, 4); }) ==
        "pinn::TaylorOutputs::pure: d^4u/dx_1^4 was not carried; request it with TaylorRequest::pure_dims containing 1 "
        "and pure_order >= 4");
  CHECK(error_of([&] { t.pure(0, 2); }) ==
        "pinn::TaylorOutputs::pure: d^2u/dx_0^2 was not carried; request it with TaylorRequest::pure_dims containing 0 "
        "and pure_order >= 2");
  CHECK(error_of([&] { t.pure(3, 1); }) == "pinn::TaylorOutputs::pure: dim 3 is out of range for x with 3 coordinates");
  CHECK(error_of([&] { t.pure(0, 5); }) == "pinn::TaylorOutputs::pure: order must be 0..4, got 5");
  CHECK(error_of([] { gp::TaylorOutputs().pure(0, 0); }) ==
        "pinn::TaylorOutputs::pure: these outputs are empty (make them by taylor_forward)");
  CHECK_NOTHROW(t.pure(1, 3));

  const gp::JetBlocks blocks{.coordinates = 2, .laplacian = true};
  CHECK(error_of([&] { gp::jet_activation(gp::JetActivation::Tanh, blocks, gd::zeros({3, 2, 2}, f64), gd::Tensor()); }) ==
        "pinn::jet_activation: the jet must be [4, N, w] (its blocks), got [3, 2, 2]");
  CHECK(error_of([&] {
          gp::jet_activation(gp::JetActivation::Tanh, blocks, gd::zeros({4, 2, 2}, f64), gd::zeros({3}, f64));
        }) == "pinn::jet_activation: bias must be [2] of the jet's dtype");
}
