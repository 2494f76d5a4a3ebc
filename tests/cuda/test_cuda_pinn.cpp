// The Taylor-mode engine and the fused recurrent cells on the GPU against the
// CPU: jet activations and whole-MLP jets (values, gradients, Laplacians,
// pure derivatives to order 4, parameter gradients) to 1e-12 in float64, the
// Taylor and nested engines agreeing on the device, a Poisson PINN trained the
// same on both, and LSTM/GRU/RNN layers padded and packed, forward and backward.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/cuda.h"
#include "gradiens.h"
#include "kernels/cuda/jet.h"
#include "nn/functional/rnn.h"
#include "nn/utils/rnn.h"
#include "pinn/taylor/jet_activation.h"
#include "pinn/taylor/jet_mlp.h"

namespace gd = gradiens;
namespace gp = gradiens::pinn;
namespace nn = gradiens::nn;
using gd::Tensor;

namespace {

const gd::Device kGpu("cuda:0");
const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);

// max |gpu - cpu| over max(1, max |cpu|): absolute for O(1) values, relative
// for the larger high-order derivatives (0 for empty tensors).
double scaled_error(const Tensor& cpu, const Tensor& gpu) {
  REQUIRE(cpu.sizes() == gpu.sizes());
  if (cpu.numel() == 0) return 0;
  const Tensor a = cpu.detach().to(gd::kFloat64), b = gpu.detach().cpu().to(gd::kFloat64);
  return (a - b).abs().max().item<double>() / std::max(1.0, a.abs().max().item<double>());
}

void check_close(const Tensor& cpu, const Tensor& gpu, double tolerance, const std::string& what) {
  INFO(what);
  REQUIRE(gpu.defined());
  CHECK(gpu.device().is_cuda());
  CHECK(gpu.scalar_type() == cpu.scalar_type());
  CHECK(scaled_error(cpu, gpu) <= tolerance);
}

const gp::JetActivation kJetActivations[] = {gp::JetActivation::Tanh, gp::JetActivation::Sigmoid,
                                             gp::JetActivation::Silu, gp::JetActivation::Relu,
                                             gp::JetActivation::Sin};

// d = 2: first derivatives only, a weighted Laplacian, pure derivatives of
// order 3 without a Laplacian, and everything at order 4.
std::vector<gp::JetBlocks> jet_layouts() {
  return {{.coordinates = 2},
          {.coordinates = 2, .laplacian = true, .laplacian_weights = {0.5, 3.0}},
          {.coordinates = 2, .pure_dims = {0}, .pure_order = 3},
          {.coordinates = 2, .laplacian = true, .pure_dims = {1, 0}, .pure_order = 4}};
}

void add_activation(nn::Sequential& net, const std::string& activation) {
  if (activation == "tanh") net->push_back(nn::Tanh());
  if (activation == "sigmoid") net->push_back(nn::Sigmoid());
  if (activation == "silu") net->push_back(nn::SiLU());
  if (activation == "relu") net->push_back(nn::ReLU());
}

// d -> [FourierFeatures] -> 16 -> 12 -> m, the activation after each hidden
// Linear, weights drawn after manual_seed(seed), float64, on `device`.
nn::Sequential make_net(const std::string& activation, bool fourier, int64_t d, int64_t m, uint64_t seed,
                        const gd::Device& device) {
  gd::manual_seed(seed);
  nn::Sequential net;
  int64_t width = d;
  if (fourier) {
    net->push_back(gp::FourierFeatures(d, 3, 0.4));
    width = 6;
  }
  net->push_back(nn::Linear(width, 16));
  add_activation(net, activation);
  net->push_back(nn::Linear(16, 12));
  add_activation(net, activation);
  net->push_back(nn::Linear(12, m));
  net->to(gd::kFloat64);
  net->to(device);
  return net;
}

Tensor points(int64_t n, int64_t d, uint64_t seed) {
  gd::Generator generator(seed);
  return gd::randn({n, d}, generator, f64) * 0.8;
}

const char* const kActivations[] = {"tanh", "sigmoid", "silu", "relu"};

}  // namespace

TEST_CASE("cuda: jet_activation on the GPU equals the CPU's fused kernel, forward and backward") {
  // (n, w): a small block, an empty one, and one spanning many thread blocks.
  for (const auto& [n, w] : {std::pair<int64_t, int64_t>{3, 5}, {0, 4}, {700, 20}}) {
    for (gp::JetActivation activation : kJetActivations) {
      for (const gp::JetBlocks& blocks : jet_layouts()) {
        for (gd::ScalarType dtype : {gd::kFloat64, gd::kFloat32}) {
          const double tolerance = dtype == gd::kFloat64 ? 1e-12 : 5e-5;
          CAPTURE(n);
          CAPTURE(w);
          CAPTURE(static_cast<int>(activation));
          CAPTURE(blocks.count());
          CAPTURE(dtype == gd::kFloat64);
          gd::Generator generator(1);
          // [K, w, n] transposed: a non-contiguous jet.
          const Tensor base = gd::randn({blocks.count(), w, n}, generator, f64).transpose(1, 2).to(dtype);
          const Tensor bias_base = gd::randn({w}, generator, f64).to(dtype);
          Tensor jet = base.detach().requires_grad_(), bias = bias_base.detach().requires_grad_();
          Tensor jet_gpu = base.to(kGpu).requires_grad_(), bias_gpu = bias_base.to(kGpu).requires_grad_();
          const Tensor out = gp::jet_activation(activation, blocks, jet, bias);
          const Tensor out_gpu = gp::jet_activation(activation, blocks, jet_gpu, bias_gpu);
          check_close(out, out_gpu, tolerance, "forward");
          check_close(gp::jet_activation(activation, blocks, jet, Tensor()),
                      gp::jet_activation(activation, blocks, jet_gpu, Tensor()), tolerance, "forward without bias");
          const Tensor grad_out = gd::randn(out.sizes(), generator, f64).to(dtype);
          // Without create_graph the fused backward runs; with it, the differentiable one.
          for (bool create_graph : {false, true}) {
            CAPTURE(create_graph);
            auto grads = gd::autograd::grad({out}, {jet, bias}, {grad_out}, true, create_graph);
            auto grads_gpu = gd::autograd::grad({out_gpu}, {jet_gpu, bias_gpu}, {grad_out.to(kGpu)}, true, create_graph);
            check_close(grads[0], grads_gpu[0], tolerance, "d/d jet");
            check_close(grads[1], grads_gpu[1], tolerance, "d/d bias");
          }
        }
      }
    }
  }
}

TEST_CASE("cuda: the fused MLP jet on the GPU equals the layered pass and the CPU's fused op") {
  // 4 -> 9 (tanh) -> 7 without bias (silu) -> 3 (sin) -> 2, on 300 samples.
  const gp::JetBlocks blocks{.coordinates = 4, .laplacian = true, .laplacian_weights = {1.0, 0.5, 2.0, 0.0},
                             .pure_dims = {3, 1}, .pure_order = 4};
  gd::Generator generator(60);
  const std::vector<Tensor> weights{gd::randn({9, 4}, generator, f64) * 0.5, gd::randn({9}, generator, f64),
                                    gd::randn({7, 9}, generator, f64) * 0.4, gd::randn({3, 7}, generator, f64) * 0.4,
                                    gd::randn({3}, generator, f64), gd::randn({2, 3}, generator, f64),
                                    gd::randn({2}, generator, f64)};
  const Tensor x_host = points(300, 4, 61);
  auto run = [&](const gd::Device& device, bool fused) {
    std::vector<Tensor> leaves;
    for (const Tensor& w : weights) leaves.push_back(w.to(device).requires_grad_());
    Tensor x = x_host.to(device).requires_grad_();
    const std::vector<gp::JetMlpStep> steps{{.linear = true, .weight = leaves[0], .bias = leaves[1]},
                                            {.activation = gp::JetActivation::Tanh},
                                            {.linear = true, .weight = leaves[2]},
                                            {.activation = gp::JetActivation::Silu},
                                            {.linear = true, .weight = leaves[3], .bias = leaves[4]},
                                            {.activation = gp::JetActivation::Sin},
                                            {.linear = true, .weight = leaves[5], .bias = leaves[6]}};
    CHECK(gp::jet_mlp_fused_applies(x, steps));
    const Tensor jet = fused ? gp::jet_mlp(x, steps, blocks) : gp::jet_mlp_layered(x, steps, blocks);
    gd::Generator g(62);
    const Tensor grad_out = gd::randn(jet.sizes(), g, f64).to(device);
    std::vector<Tensor> inputs = leaves;
    inputs.push_back(x);
    std::vector<Tensor> out = gd::autograd::grad({jet}, inputs, {grad_out}, true);
    out.insert(out.begin(), jet);
    return out;
  };
  const std::vector<Tensor> cpu = run(gd::Device(gd::kCPU), true), gpu = run(kGpu, true), layered = run(kGpu, false);
  REQUIRE(cpu.size() == gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    check_close(cpu[i], gpu[i], 1e-12, fmt::format("fused on the GPU, tensor {}", i));
    check_close(layered[i].cpu(), gpu[i], 1e-12, fmt::format("layered on the GPU, tensor {}", i));
  }
  // The fused op takes one device and dtype, and on a GPU at most kMaxJetCoordinates coordinates.
  const std::vector<gp::JetMlpStep> on_gpu{{.linear = true, .weight = weights[0].to(kGpu), .bias = weights[1].to(kGpu)}};
  CHECK(!gp::jet_mlp_fused_applies(x_host, on_gpu));
  CHECK(!gp::jet_mlp_fused_applies(x_host.to(kGpu).to(gd::kFloat32), on_gpu));
  CHECK(!gp::jet_mlp_fused_applies(gd::zeros({2, gd::kernels::cuda::kMaxJetCoordinates + 1}, f64).to(kGpu), {}));
}

TEST_CASE("cuda: the Taylor engine on the GPU equals the CPU: value, gradient, Laplacian, pure orders 2-4") {
  const std::vector<double> weights{0.5, -2.0, 3.0};
  for (const char* activation : kActivations) {
    for (bool fourier : {false, true}) {
      for (int64_t n : {int64_t{37}, int64_t{0}, int64_t{1500}}) {
        CAPTURE(activation);
        CAPTURE(fourier);
        CAPTURE(n);
        nn::Sequential net = make_net(activation, fourier, 3, 2, 11, gd::Device(gd::kCPU));
        nn::Sequential net_gpu = make_net(activation, fourier, 3, 2, 11, kGpu);
        const Tensor x = points(n, 3, 3);
        for (const gp::TaylorRequest& request :
             {gp::TaylorRequest{.pure_dims = {2, 0}, .pure_order = 4}, gp::TaylorRequest{.laplacian_weights = weights},
              gp::TaylorRequest{.laplacian = false, .pure_dims = {1}, .pure_order = 3}}) {
          const gp::TaylorOutputs cpu = gp::taylor_forward(*net, x, request);
          const gp::TaylorOutputs gpu = gp::taylor_forward(*net_gpu, x.to(kGpu), request);
          check_close(cpu.value, gpu.value, 1e-12, "value");
          check_close(cpu.gradient, gpu.gradient, 1e-12, "gradient");
          if (request.laplacian) check_close(cpu.laplacian, gpu.laplacian, 1e-12, "laplacian");
          for (int64_t dim : request.pure_dims)
            for (int order = 2; order <= request.pure_order; ++order)
              check_close(cpu.pure(dim, order), gpu.pure(dim, order), 1e-12, fmt::format("d^{}/dx{}^{}", order, dim, order));
        }
      }
    }
  }
}

TEST_CASE("cuda: parameter and input gradients through the Taylor engine on the GPU equal the CPU's") {
  // loss = mean((weighted lap u + u u_x0 + u_x1x1x1 / 10 + sin x0)^2): the fused
  // MLP backward without create_graph, the layered pass with it.
  const std::vector<double> weights{1.0, 0.25, 2.0};
  for (const char* activation : {"tanh", "sigmoid", "silu", "relu"}) {
    for (bool fourier : {false, true}) {
      CAPTURE(activation);
      CAPTURE(fourier);
      auto gradients = [&](const gd::Device& device, bool create_graph) {
        nn::Sequential net = make_net(activation, fourier, 3, 1, 21, device);
        Tensor x = points(300, 3, 4).to(device).requires_grad_();
        const gp::TaylorOutputs t =
            gp::taylor_forward(*net, x, {.laplacian_weights = weights, .pure_dims = {1}, .pure_order = 3});
        const Tensor r = t.laplacian + t.value * t.gradient.select(2, 0) + t.pure(1, 3) / 10 + gd::sin(x.narrow(1, 0, 1));
        const Tensor loss = r.square().mean();
        std::vector<Tensor> inputs = net->parameters();
        inputs.push_back(x);
        std::vector<Tensor> grads = gd::autograd::grad({loss}, inputs, {}, true, create_graph);
        grads.push_back(loss);
        if (create_graph) grads.push_back(gd::autograd::grad({grads[0].square().sum()}, {x}, {}, true)[0]);
        return grads;
      };
      for (bool create_graph : {false, true}) {
        CAPTURE(create_graph);
        const std::vector<Tensor> cpu = gradients(gd::Device(gd::kCPU), create_graph);
        const std::vector<Tensor> gpu = gradients(kGpu, create_graph);
        REQUIRE(cpu.size() == gpu.size());
        for (size_t i = 0; i < cpu.size(); ++i) check_close(cpu[i], gpu[i], 1e-12, fmt::format("gradient {}", i));
      }
    }
  }
}

TEST_CASE("cuda: the Taylor and nested engines agree on the GPU") {
  for (const char* activation : {"tanh", "silu"}) {
    CAPTURE(activation);
    nn::Sequential net = make_net(activation, true, 3, 2, 5, kGpu);
    const Tensor x = points(64, 3, 6).to(kGpu).requires_grad_();
    const gp::TaylorOutputs taylor = gp::taylor_forward(*net, x, {.pure_dims = {0}, .pure_order = 4});
    const Tensor u = net->forward(x);
    for (int64_t c = 0; c < 2; ++c) {
      CAPTURE(c);
      check_close(gp::grad(u, x, c).cpu(), taylor.gradient.select(1, c), 1e-12, "gradient");
      check_close(gp::laplacian(u, x, c).cpu(), taylor.laplacian.narrow(1, c, 1), 1e-12, "laplacian");
      for (int order = 2; order <= 4; ++order) {
        CAPTURE(order);
        check_close(gp::partial(u, x, std::vector<int64_t>(static_cast<size_t>(order), 0), c).cpu(),
                    taylor.pure(0, order).narrow(1, c, 1), 1e-12, "pure");
      }
    }
  }
}

TEST_CASE("cuda: inputs wider than the fused kernels carry take the layered pass on the GPU") {
  const int64_t d = gd::kernels::cuda::kMaxJetCoordinates + 2;
  nn::Sequential net = make_net("tanh", false, d, 1, 8, gd::Device(gd::kCPU));
  nn::Sequential net_gpu = make_net("tanh", false, d, 1, 8, kGpu);
  const Tensor x = points(5, d, 9) * 0.1;
  const gp::TaylorOutputs cpu = gp::taylor_forward(*net, x);
  const gp::TaylorOutputs gpu = gp::taylor_forward(*net_gpu, x.to(kGpu));
  check_close(cpu.value, gpu.value, 1e-12, "value");
  check_close(cpu.laplacian, gpu.laplacian, 1e-12, "laplacian");
}

TEST_CASE("cuda: a Poisson PINN with a trainable coefficient trains the same through the Taylor engine on the CPU "
          "and the GPU (float64, 100 Adam steps)") {
  // k lap u = -2 pi^2 sin(pi x) sin(pi y) on the unit square, u = 0 on its
  // boundary, k trainable (the exact k is 1): points drawn on the host.
  auto run = [](const gd::Device& device) {
    gp::Problem problem(gp::Rectangle({0, 0}, {1, 1}));
    Tensor k = problem.add_parameter("k", 1.3);
    gp::DerivativeNeeds needs{{}, true, {}};
    problem.add(std::make_shared<gp::OperatorCondition>(
        "pde", gp::PointSpec::interior(500, gp::Sampler::kSobol), needs, [k](gp::Solution& s) {
          const Tensor x = s.x();
          const double pi = std::numbers::pi;
          return k * s.laplacian() + 2 * pi * pi * gd::sin(pi * x.narrow(1, 0, 1)) * gd::sin(pi * x.narrow(1, 1, 1));
        }));
    problem.add(std::make_shared<gp::DirichletBC>("bc", gp::PointSpec::boundary(100, gp::Sampler::kSobol),
                                                  [](const Tensor& x) { return gd::zeros({x.size(0), 1}, f64); }),
                10.0);
    gd::Generator generator(31);
    problem.sample(generator);
    nn::Sequential net = make_net("tanh", false, 2, 1, 32, device);
    if (device.is_cuda()) {  // as gradiens-train moves a run's PDE parameters
      gd::NoGradGuard no_grad;
      k.set_data(k.to(device));
    }
    nn::AnyModule module(net);
    std::vector<Tensor> params = net->parameters();
    params.push_back(k);
    gd::optim::Adam optimizer(params, gd::optim::AdamOptions(1e-3));
    std::vector<double> losses;
    for (int step = 0; step < 100; ++step) {
      optimizer.zero_grad();
      gp::Losses l = problem.losses(module);
      CHECK(problem.last_engines() == std::vector<gp::Engine>(2, gp::Engine::kTaylor));
      l.total.backward();
      optimizer.step();
      losses.push_back(l.total.item<double>());
    }
    losses.push_back(k.item<double>());
    return losses;
  };
  const std::vector<double> cpu = run(gd::Device(gd::kCPU)), gpu = run(kGpu);
  REQUIRE(cpu.size() == gpu.size());
  double worst = 0;
  for (size_t i = 0; i < cpu.size(); ++i) worst = std::max(worst, std::abs(cpu[i] - gpu[i]) / std::abs(cpu[i]));
  INFO(fmt::format("worst relative difference {}; losses {} -> {}", worst, cpu.front(), cpu[cpu.size() - 2]));
  CHECK(worst <= 1e-10);
  CHECK(cpu[cpu.size() - 2] < cpu.front());  // it trained
}

// ---- the recurrent cells ---------------------------------------------------------

TEST_CASE("cuda: the fused LSTM and GRU cell steps on the GPU equal the CPU's, forward and backward") {
  for (int64_t batch : {int64_t{5}, int64_t{0}}) {
    for (gd::ScalarType dtype : {gd::kFloat64, gd::kFloat32}) {
      const double tolerance = dtype == gd::kFloat64 ? 1e-13 : 1e-5;
      CAPTURE(batch);
      CAPTURE(dtype == gd::kFloat64);
      const int64_t hidden = 7;
      gd::Generator generator(40);
      // Transposed (non-contiguous) gates.
      const Tensor gates = gd::randn({4 * hidden, batch}, generator, f64).t().to(dtype);
      const Tensor state = gd::randn({batch, hidden}, generator, f64).to(dtype);
      const Tensor dh = gd::randn({batch, hidden}, generator, f64).to(dtype);
      const Tensor dc = gd::randn({batch, hidden}, generator, f64).to(dtype);
      {
        Tensor g = gates.detach().requires_grad_(), c = state.detach().requires_grad_();
        Tensor g_gpu = gates.to(kGpu).requires_grad_(), c_gpu = state.to(kGpu).requires_grad_();
        auto [h1, c1] = nn::functional::lstm_cell_pointwise(g, c);
        auto [h1_gpu, c1_gpu] = nn::functional::lstm_cell_pointwise(g_gpu, c_gpu);
        check_close(h1, h1_gpu, tolerance, "lstm h");
        check_close(c1, c1_gpu, tolerance, "lstm c");
        // Both gradients arriving, and only h's (the kernel's null dc).
        auto both = gd::autograd::grad({h1, c1}, {g, c}, {dh, dc}, true);
        auto both_gpu = gd::autograd::grad({h1_gpu, c1_gpu}, {g_gpu, c_gpu}, {dh.to(kGpu), dc.to(kGpu)}, true);
        auto only_h = gd::autograd::grad({h1}, {g, c}, {dh}, true);
        auto only_h_gpu = gd::autograd::grad({h1_gpu}, {g_gpu, c_gpu}, {dh.to(kGpu)}, true);
        auto twice = gd::autograd::grad({h1}, {g}, {dh}, true, /*create_graph=*/true);
        auto twice_gpu = gd::autograd::grad({h1_gpu}, {g_gpu}, {dh.to(kGpu)}, true, true);
        for (size_t i = 0; i < 2; ++i) {
          check_close(both[i], both_gpu[i], tolerance, fmt::format("lstm gradient {}", i));
          check_close(only_h[i], only_h_gpu[i], tolerance, fmt::format("lstm gradient {} from h alone", i));
        }
        check_close(twice[0], twice_gpu[0], tolerance, "lstm differentiable backward");
      }
      {
        const Tensor input_gates = gd::randn({batch, 3 * hidden}, generator, f64).to(dtype);
        const Tensor hidden_gates = gd::randn({3 * hidden, batch}, generator, f64).t().to(dtype);
        Tensor gi = input_gates.detach().requires_grad_(), gh = hidden_gates.detach().requires_grad_(),
               hx = state.detach().requires_grad_();
        Tensor gi_gpu = input_gates.to(kGpu).requires_grad_(), gh_gpu = hidden_gates.to(kGpu).requires_grad_(),
               hx_gpu = state.to(kGpu).requires_grad_();
        const Tensor h = nn::functional::gru_cell_pointwise(gi, gh, hx);
        const Tensor h_gpu = nn::functional::gru_cell_pointwise(gi_gpu, gh_gpu, hx_gpu);
        check_close(h, h_gpu, tolerance, "gru h");
        auto grads = gd::autograd::grad({h}, {gi, gh, hx}, {dh}, true);
        auto grads_gpu = gd::autograd::grad({h_gpu}, {gi_gpu, gh_gpu, hx_gpu}, {dh.to(kGpu)}, true);
        for (size_t i = 0; i < 3; ++i) check_close(grads[i], grads_gpu[i], tolerance, fmt::format("gru gradient {}", i));
      }
    }
  }
}

namespace {

// The outputs and every parameter's and the input's gradient of a recurrent
// layer over a padded batch [B, T, F] and over the same batch packed (lengths
// sorted, packed on the host and moved), with the layer on `device`.
template <class Layer, class Forward>
std::vector<Tensor> recurrent_run(Layer layer, const gd::Device& device, const Tensor& padded,
                                  const std::vector<int64_t>& lengths, Forward forward) {
  layer->to(gd::kFloat64);
  layer->to(device);
  Tensor x = padded.to(device).requires_grad_();
  std::vector<Tensor> outputs = forward(layer, x, nn::utils::rnn::PackedSequence());
  const nn::utils::rnn::PackedSequence packed =
      nn::utils::rnn::pack_padded_sequence(padded, lengths, /*batch_first=*/true, /*enforce_sorted=*/true).to(device);
  Tensor packed_data = packed.data().detach().requires_grad_();
  const nn::utils::rnn::PackedSequence packed_leaf(packed_data, packed.batch_sizes());
  for (const Tensor& t : forward(layer, Tensor(), packed_leaf)) outputs.push_back(t);
  Tensor loss;
  for (const Tensor& out : outputs) {
    const Tensor term = (out * out).sum() + out.sum();
    loss = loss.defined() ? loss + term : term;
  }
  std::vector<Tensor> inputs = layer->parameters();
  inputs.push_back(x);
  inputs.push_back(packed_data);
  for (const Tensor& g : gd::autograd::grad({loss}, inputs, {}, true)) outputs.push_back(g);
  return outputs;
}

}  // namespace

TEST_CASE("cuda: LSTM, GRU and RNN layers on the GPU equal the CPU, padded and packed, forward and backward") {
  gd::Generator generator(50);
  const Tensor padded = gd::randn({4, 6, 3}, generator, f64);
  const std::vector<int64_t> lengths{6, 5, 3, 1};
  auto compare = [&](const std::string& name, auto make, auto forward) {
    CAPTURE(name);
    const std::vector<Tensor> cpu = recurrent_run(make(), gd::Device(gd::kCPU), padded, lengths, forward);
    const std::vector<Tensor> gpu = recurrent_run(make(), kGpu, padded, lengths, forward);
    REQUIRE(cpu.size() == gpu.size());
    for (size_t i = 0; i < cpu.size(); ++i) check_close(cpu[i], gpu[i], 1e-12, fmt::format("{} tensor {}", name, i));
  };
  using nn::utils::rnn::PackedSequence;
  compare(
      "LSTM",
      [] {
        gd::manual_seed(51);
        return nn::LSTM(nn::LSTMOptions(3, 5).num_layers(2).batch_first(true).bidirectional(true));
      },
      [](nn::LSTM& layer, const Tensor& x, const PackedSequence& packed) {
        if (x.defined()) {
          auto [out, state] = layer->forward(x);
          return std::vector<Tensor>{out, std::get<0>(state), std::get<1>(state)};
        }
        auto [out, state] = layer->forward_with_packed_input(packed);
        return std::vector<Tensor>{out.data(), std::get<0>(state), std::get<1>(state)};
      });
  compare(
      "LSTM with projections",
      [] {
        gd::manual_seed(52);
        return nn::LSTM(nn::LSTMOptions(3, 6).proj_size(4).batch_first(true));
      },
      [](nn::LSTM& layer, const Tensor& x, const PackedSequence& packed) {
        if (x.defined()) {
          auto [out, state] = layer->forward(x);
          return std::vector<Tensor>{out, std::get<0>(state), std::get<1>(state)};
        }
        auto [out, state] = layer->forward_with_packed_input(packed);
        return std::vector<Tensor>{out.data(), std::get<0>(state), std::get<1>(state)};
      });
  compare(
      "GRU",
      [] {
        gd::manual_seed(53);
        return nn::GRU(nn::GRUOptions(3, 5).num_layers(2).batch_first(true).bidirectional(true));
      },
      [](nn::GRU& layer, const Tensor& x, const PackedSequence& packed) {
        if (x.defined()) {
          auto [out, h] = layer->forward(x);
          return std::vector<Tensor>{out, h};
        }
        auto [out, h] = layer->forward_with_packed_input(packed);
        return std::vector<Tensor>{out.data(), h};
      });
  for (const char* nonlinearity : {"tanh", "relu"}) {
    compare(
        std::string("RNN ") + nonlinearity,
        [nonlinearity] {
          gd::manual_seed(54);
          return nn::RNN(nn::RNNOptions(3, 5).num_layers(2).batch_first(true).nonlinearity(nonlinearity));
        },
        [](nn::RNN& layer, const Tensor& x, const PackedSequence& packed) {
          if (x.defined()) {
            auto [out, h] = layer->forward(x);
            return std::vector<Tensor>{out, h};
          }
          auto [out, h] = layer->forward_with_packed_input(packed);
          return std::vector<Tensor>{out.data(), h};
        });
  }
}
