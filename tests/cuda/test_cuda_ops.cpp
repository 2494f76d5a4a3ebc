// The op sweep of the CUDA backend: every op that has a CUDA kernel, run on the
// GPU and on the CPU from the same inputs (contiguous, transposed, broadcast,
// 0-dim and empty), compared to a few ulp in float64 and 1e-6 in float32; the
// gradients and second derivatives against the CPU's; devices, copies and the
// cross-device error.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/cuda.h"
#include "gradiens.h"
#include "tests/cuda/cuda_checks.h"

namespace gd = gradiens;
using gd::Tensor;

namespace {

const gd::Device kGpu("cuda:0");
using gd::testing::check_matches;

double rtol_of(gd::ScalarType dt) { return dt == gd::kFloat64 ? 4e-15 : 1e-6; }
double atol_of(gd::ScalarType dt) { return dt == gd::kFloat64 ? 1e-15 : 1e-6; }

// check_matches at the tolerances of the elementwise kernels.
void check_matches(const Tensor& cpu, const Tensor& gpu, const std::string& what) {
  check_matches(cpu, gpu, what, rtol_of(cpu.dtype()), atol_of(cpu.dtype()));
}

// Inputs of one dtype in the layouts the sweep covers, each paired with its name.
std::vector<std::pair<std::string, Tensor>> layouts(gd::ScalarType dt, double low, double high) {
  gd::manual_seed(7);
  auto draw = [&](gd::IntArrayRef sizes) { return gd::rand(sizes, gd::TensorOptions().dtype(dt)) * (high - low) + low; };
  return {{"contiguous", draw({37, 53})},
          {"transposed", draw({53, 37}).t()},
          {"sliced", draw({40, 60}).narrow(1, 3, 50)},
          {"0-dim", draw({})},
          {"empty", draw({0, 5})},
          {"large", draw({300000})}};
}

using Unary = std::function<Tensor(const Tensor&)>;

}  // namespace

TEST_CASE("cuda: device, to() and copies") {
  Tensor x = gd::arange(12, gd::TensorOptions().dtype(gd::kFloat64)).reshape({3, 4});
  Tensor g = x.to(kGpu);
  CHECK(g.device() == kGpu);
  CHECK(g.device().str() == "cuda:0");
  CHECK(g.is_cuda());
  CHECK(g.sizes() == x.sizes());
  CHECK(gd::equal(g.cpu(), x));
  // Transposed, sliced and cast copies, both directions and on the device.
  check_matches(x.t().contiguous(), g.t().contiguous(), "transposed contiguous()");
  check_matches(x.t().contiguous(), x.t().to(kGpu), "strided host to device");
  check_matches(x.to(gd::kFloat32), g.to(gd::kFloat32), "cast on the device");
  check_matches(x.to(gd::kInt64).to(gd::kFloat64), g.to(gd::kInt64).to(gd::kFloat64), "to int64 and back");
  CHECK(gd::equal(g.narrow(1, 1, 2).cpu(), x.narrow(1, 1, 2)));
  Tensor h = gd::zeros({3, 4}, gd::TensorOptions().dtype(gd::kFloat64).device(kGpu));
  h.copy_(x);
  CHECK(gd::equal(h.cpu(), x));
  h.narrow(0, 1, 1).fill_(5.0);
  CHECK(h.cpu()[1][2].item<double>() == 5.0);
  CHECK(h.cpu()[0][2].item<double>() == 2.0);
  CHECK(g.sum().item<double>() == 66.0);
  CHECK(gd::ones({2, 2}, gd::TensorOptions().device(kGpu)).cpu().sum().item<float>() == 4.0f);
  CHECK(gd::full({3}, 2.5, gd::TensorOptions().dtype(gd::kFloat64).device(kGpu)).cpu()[2].item<double>() == 2.5);
  // Booleans and integers survive the round trip.
  Tensor mask = x > 5.0;
  CHECK(gd::equal(mask.to(kGpu).cpu(), mask));
}

TEST_CASE("cuda: ops across devices are errors with PyTorch's text") {
  Tensor a = gd::ones({2, 2});
  Tensor b = gd::ones({2, 2}, gd::TensorOptions().device(kGpu));
  CHECK_THROWS_WITH_AS(a + b, "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!",
                       gd::Error);
  CHECK_THROWS_AS(a.mm(b), gd::Error);
  // A 0-dim CPU tensor is a scalar and may meet a cuda tensor, as in PyTorch.
  Tensor s = gd::scalar_tensor(3.0, gd::TensorOptions().dtype(gd::kFloat32));
  CHECK(gd::equal((b * s).cpu(), gd::full({2, 2}, 3.0)));
}

TEST_CASE("cuda: unary math matches the CPU") {
  const std::vector<std::tuple<std::string, Unary, double, double>> ops = {
      {"exp", [](const Tensor& t) { return gd::exp(t); }, -5, 5},
      {"expm1", [](const Tensor& t) { return gd::expm1(t); }, -2, 2},
      {"log", [](const Tensor& t) { return gd::log(t); }, 0.01, 10},
      {"log1p", [](const Tensor& t) { return gd::log1p(t); }, -0.5, 3},
      {"sqrt", [](const Tensor& t) { return gd::sqrt(t); }, 0, 10},
      {"rsqrt", [](const Tensor& t) { return gd::rsqrt(t); }, 0.1, 10},
      {"tanh", [](const Tensor& t) { return gd::tanh(t); }, -4, 4},
      {"sigmoid", [](const Tensor& t) { return gd::sigmoid(t); }, -8, 8},
      {"sin", [](const Tensor& t) { return gd::sin(t); }, -6, 6},
      {"cos", [](const Tensor& t) { return gd::cos(t); }, -6, 6},
      {"tan", [](const Tensor& t) { return gd::tan(t); }, -1.2, 1.2},
      {"erf", [](const Tensor& t) { return gd::erf(t); }, -3, 3},
      {"abs", [](const Tensor& t) { return gd::abs(t); }, -3, 3},
      {"neg", [](const Tensor& t) { return gd::neg(t); }, -3, 3},
      {"reciprocal", [](const Tensor& t) { return gd::reciprocal(t); }, 0.5, 3},
      {"relu", [](const Tensor& t) { return gd::relu(t); }, -3, 3},
      {"sign", [](const Tensor& t) { return gd::sign(t); }, -3, 3},
      {"gelu", [](const Tensor& t) { return gd::gelu(t); }, -4, 4},
      {"silu", [](const Tensor& t) { return gd::silu(t); }, -6, 6},
      {"square", [](const Tensor& t) { return gd::square(t); }, -3, 3},
  };
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (const auto& [name, f, low, high] : ops) {
      for (const auto& [layout, x] : layouts(dt, low, high)) {
        // Transcendentals differ by an ulp or two between libraries.
        check_matches(f(x), f(x.to(kGpu)), fmt::format("{} {} {}", name, gd::dtype_name(dt), layout),
                      dt == gd::kFloat64 ? 8e-16 * 4 : 1e-6, atol_of(dt));
      }
    }
  }
}

TEST_CASE("cuda: binary ops, broadcasting and scalars match the CPU") {
  using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, Binary>> ops = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
      {"add alpha", [](const Tensor& a, const Tensor& b) { return gd::add(a, b, 0.5); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return gd::maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return gd::minimum(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return gd::pow(gd::abs(a), b); }},
      {"scalar mul", [](const Tensor& a, const Tensor&) { return a * 3.5; }},
      {"scalar rsub", [](const Tensor& a, const Tensor&) { return 2.0 - a; }},
      {"scalar rdiv", [](const Tensor& a, const Tensor&) { return 2.0 / a; }},
      {"scalar pow 2", [](const Tensor& a, const Tensor&) { return gd::pow(a, 2); }},
      {"scalar pow 3", [](const Tensor& a, const Tensor&) { return gd::pow(a, 3); }},
  };
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    gd::manual_seed(3);
    auto opt = gd::TensorOptions().dtype(dt);
    const std::vector<std::tuple<std::string, Tensor, Tensor>> pairs = {
        {"same shape", gd::rand({64, 33}, opt) + 0.5, gd::rand({64, 33}, opt) + 0.5},
        {"row broadcast", gd::rand({64, 33}, opt) + 0.5, gd::rand({33}, opt) + 0.5},
        {"column broadcast", gd::rand({64, 1}, opt) + 0.5, gd::rand({1, 33}, opt) + 0.5},
        {"transposed", (gd::rand({33, 64}, opt) + 0.5).t(), gd::rand({64, 33}, opt) + 0.5},
        {"0-dim", gd::rand({}, opt) + 0.5, gd::rand({5, 3}, opt) + 0.5},
        {"empty", gd::rand({0, 3}, opt), gd::rand({3}, opt)},
    };
    for (const auto& [name, f] : ops) {
      for (const auto& [pair_name, a, b] : pairs) {
        check_matches(f(a, b), f(a.to(kGpu), b.to(kGpu)), fmt::format("{} {} {}", name, gd::dtype_name(dt), pair_name),
                      dt == gd::kFloat64 ? 8e-16 : 1e-6, atol_of(dt));
      }
    }
  }
  // In place, into a cuda tensor.
  Tensor a = gd::rand({10, 4}, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor b = gd::rand({4}, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor ga = a.to(kGpu);
  ga.add_(b.to(kGpu), 2.0);
  ga.mul_(3.0);
  check_matches((a + b * 2.0) * 3.0, ga, "add_ then mul_");
}

TEST_CASE("cuda: comparisons and where match the CPU") {
  gd::manual_seed(11);
  Tensor a = gd::randn({20, 7}, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor b = gd::randn({7}, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor ga = a.to(kGpu), gb = b.to(kGpu);
  CHECK(gd::equal((ga > gb).cpu(), a > b));
  CHECK(gd::equal((ga <= 0.0).cpu(), a <= 0.0));
  CHECK(gd::equal((ga == ga).cpu(), a == a));
  CHECK(gd::equal((ga != gb).cpu(), a != b));
  check_matches(gd::where(a > b, a, b), gd::where(ga > gb, ga, gb), "where");
  check_matches(gd::where(a > 0.0, a, 0.0), gd::where(ga > 0.0, ga, 0.0), "where with a scalar");
}

TEST_CASE("cuda: reductions match the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    gd::manual_seed(5);
    Tensor x = gd::randn({17, 300, 9}, gd::TensorOptions().dtype(dt));
    Tensor g = x.to(kGpu);
    // float32 sums on the CPU accumulate in float64: the GPU's float32 tree differs by rounding.
    const double rtol = dt == gd::kFloat64 ? 1e-13 : 2e-5, atol = dt == gd::kFloat64 ? 1e-13 : 2e-5;
    check_matches(x.sum(), g.sum(), "sum all", rtol, atol);
    check_matches(x.sum(0), g.sum(0), "sum 0", rtol, atol);
    check_matches(x.sum(1), g.sum(1), "sum 1", rtol, atol);
    check_matches(x.sum(2, true), g.sum(2, true), "sum 2 keepdim", rtol, atol);
    check_matches(x.sum({0, 2}), g.sum({0, 2}), "sum 0 and 2", rtol, atol);
    check_matches(x.mean(), g.mean(), "mean", rtol, atol);
    check_matches(x.transpose(0, 2).sum(1), g.transpose(0, 2).sum(1), "sum of a transposed view", rtol, atol);
    check_matches(gd::randn({0, 4}, gd::TensorOptions().dtype(dt)).sum(0),
                  gd::randn({0, 4}, gd::TensorOptions().dtype(dt).device(kGpu)).sum(0), "empty sum");
    // The same reduction twice gives the same bits (a fixed reduction order).
    CHECK(gd::equal(g.sum(1).cpu(), g.sum(1).cpu()));
  }
}

TEST_CASE("cuda: matrix products match the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    gd::manual_seed(9);
    auto opt = gd::TensorOptions().dtype(dt);
    Tensor a = gd::randn({65, 129}, opt), b = gd::randn({129, 33}, opt);
    const double rtol = dt == gd::kFloat64 ? 1e-12 : 1e-5;
    check_matches(a.mm(b), a.to(kGpu).mm(b.to(kGpu)), "mm", rtol, rtol);
    check_matches(b.t().mm(a.t()), b.to(kGpu).t().mm(a.to(kGpu).t()), "mm of transposes", rtol, rtol);
    check_matches(a.matmul(b), a.to(kGpu).matmul(b.to(kGpu)), "matmul", rtol, rtol);
    Tensor x = gd::randn({4, 7, 9}, opt), y = gd::randn({4, 9, 5}, opt);
    check_matches(x.bmm(y), x.to(kGpu).bmm(y.to(kGpu)), "bmm", rtol, rtol);
    check_matches(x.matmul(y[0]), x.to(kGpu).matmul(y[0].to(kGpu)), "broadcast matmul", rtol, rtol);
    Tensor v = gd::randn({129}, opt);
    check_matches(a.matmul(v), a.to(kGpu).matmul(v.to(kGpu)), "matrix-vector", rtol, rtol);
  }
}

TEST_CASE("cuda: float16 and bfloat16 products accumulate in float32 and round once, as on the CPU") {
  gd::manual_seed(10);
  for (gd::ScalarType dt : {gd::kFloat16, gd::kBFloat16}) {
    INFO(gd::dtype_name(dt));
    Tensor a = gd::randn({65, 129}).to(dt), b = gd::randn({129, 33}).to(dt);
    // Both sides round one float32 sum; its order differs, so a result may land one 16-bit ulp away.
    const double rtol = dt == gd::kFloat16 ? 2e-3 : 1.6e-2;
    check_matches(a.mm(b), a.to(kGpu).mm(b.to(kGpu)), "mm", rtol, rtol);
    check_matches(b.t().mm(a.t()), b.to(kGpu).t().mm(a.to(kGpu).t()), "mm of transposes", rtol, rtol);
    Tensor x = gd::randn({4, 7, 9}).to(dt), y = gd::randn({4, 9, 5}).to(dt);
    check_matches(x.bmm(y), x.to(kGpu).bmm(y.to(kGpu)), "bmm", rtol, rtol);
    // The float32 products of the 16-bit values, rounded once, are the reference too.
    check_matches(a.to(gd::kFloat32).mm(b.to(gd::kFloat32)).to(dt), a.to(kGpu).mm(b.to(kGpu)), "mm vs float32", rtol,
                  rtol);
  }
}

TEST_CASE("cuda: Linear's product and bias in one cuBLASLt call match the CPU, forward and backward") {
  gd::manual_seed(12);
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    auto opt = gd::TensorOptions().dtype(dt);
    const double rtol = dt == gd::kFloat64 ? 1e-12 : 1e-5;
    Tensor w = gd::randn({33, 70}, opt), bias = gd::randn({33}, opt);
    // Contiguous rows, a transposed input, rows starting at an odd element (unaligned for cuBLASLt),
    // a [1, p] bias, and a single output feature.
    Tensor x = gd::randn({41, 70}, opt), xt = gd::randn({70, 41}, opt).t(), wide = gd::randn({41, 71}, opt);
    const std::vector<std::tuple<std::string, Tensor, Tensor, Tensor>> cases = {
        {"contiguous", x, w, bias},
        {"transposed input", xt, w, bias},
        {"unaligned input", wide.narrow(1, 1, 70), w, bias},
        {"bias [1, p]", x, w, bias.reshape({1, 33})},
        {"one feature", x, w.narrow(0, 0, 1), bias.narrow(0, 0, 1)},
    };
    for (const auto& [name, input, weight, b] : cases) {
      INFO(name, " ", gd::dtype_name(dt));
      auto run = [&](const gd::Device& device) {
        Tensor X = input.to(device).requires_grad_(), W = weight.to(device).requires_grad_();
        Tensor B = b.to(device).requires_grad_();
        Tensor y = gd::addmm(B, X, W.t());
        auto grads = gd::autograd::grad({(y * y).sum()}, {X, W, B});
        return std::vector<Tensor>{y, grads[0], grads[1], grads[2]};
      };
      std::vector<Tensor> cpu = run(gd::Device(gd::kCPU)), gpu = run(kGpu);
      CHECK(gpu[0].grad_fn()->name() == "AddmmBackward0");
      // Each element within rtol of the tensor's largest magnitude: the input gradient sums terms far
      // larger than some of its elements, whose float32 rounding then shows relative to them.
      const char* names[] = {"output", "input gradient", "weight gradient", "bias gradient"};
      for (size_t i = 0; i < cpu.size(); ++i)
        check_matches(cpu[i], gpu[i], names[i], rtol, rtol * cpu[i].abs().max().item<double>());
    }
    // nn::Linear takes the same path; alpha and beta other than 1 do not.
    Tensor scaled_cpu = gd::addmm(bias, x, w.t(), 0.5, 2.0);
    Tensor scaled_gpu = gd::addmm(bias.to(kGpu), x.to(kGpu), w.t().to(kGpu), 0.5, 2.0);
    check_matches(scaled_cpu, scaled_gpu, "addmm with beta 0.5, alpha 2", rtol, rtol);
  }
}

TEST_CASE("cuda: first and second derivatives match the CPU in float64") {
  // A tanh network and its input Laplacian: the nested derivatives a PINN uses.
  gd::manual_seed(21);
  auto opt = gd::TensorOptions().dtype(gd::kFloat64);
  Tensor w1 = gd::randn({2, 16}, opt) * 0.7, b1 = gd::randn({16}, opt) * 0.1;
  Tensor w2 = gd::randn({16, 1}, opt) * 0.7;
  Tensor x = gd::rand({50, 2}, opt);
  auto run = [&](const gd::Device& device) {
    Tensor W1 = w1.to(device).requires_grad_(), B1 = b1.to(device).requires_grad_(), W2 = w2.to(device).requires_grad_();
    Tensor X = x.to(device).requires_grad_();
    Tensor u = gd::tanh(X.matmul(W1) + B1).matmul(W2);
    Tensor du = gd::autograd::grad({u.sum()}, {X}, {}, std::nullopt, true)[0];
    Tensor u_xx = gd::autograd::grad({du.select(1, 0).sum()}, {X}, {}, std::nullopt, true)[0].select(1, 0);
    Tensor loss = (u_xx * u_xx).mean() + (u * u).mean();
    auto grads = gd::autograd::grad({loss}, {W1, B1, W2});
    return std::vector<Tensor>{u, du, u_xx, loss, grads[0], grads[1], grads[2]};
  };
  auto cpu = run(gd::Device(gd::kCPU));
  auto gpu = run(kGpu);
  const char* names[] = {"u", "du/dx", "u_xx", "loss", "dW1", "db1", "dW2"};
  for (size_t i = 0; i < cpu.size(); ++i) check_matches(cpu[i].detach(), gpu[i].detach(), names[i], 1e-12, 1e-12);
}

TEST_CASE("cuda: streams, events and the caching allocator") {
  const int64_t before = gd::cuda::memory_allocated();
  {
    Tensor a = gd::empty({1024, 1024}, gd::TensorOptions().device(kGpu));
    CHECK(gd::cuda::memory_allocated() >= before + 4 * 1024 * 1024);
    CHECK(gd::cuda::memory_reserved() >= gd::cuda::memory_allocated());
    CHECK(gd::cuda::max_memory_allocated() >= gd::cuda::memory_allocated());
  }
  CHECK(gd::cuda::memory_allocated() == before);
  CHECK(gd::cuda::memory_summary().find("Allocated memory") != std::string::npos);

  gd::cuda::Stream side = gd::cuda::getStreamFromPool();
  CHECK_FALSE(side == gd::cuda::getDefaultCUDAStream());
  Tensor x = gd::rand({1000, 100}, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor gx = x.to(kGpu);
  gd::cuda::Event start, done;
  Tensor y;
  {
    gd::cuda::StreamGuard guard(side);
    CHECK(gd::cuda::getCurrentCUDAStream() == side);
    side.synchronize();
    start.record();
    y = (gx * 2.0).sum(1);
    done.record();
  }
  CHECK(gd::cuda::getCurrentCUDAStream() == gd::cuda::getDefaultCUDAStream());
  done.synchronize();
  CHECK(done.query());
  CHECK(start.elapsed_time(done) >= 0.0);
  check_matches((x * 2.0).sum(1), y, "work on a side stream", 1e-13, 1e-13);
}

TEST_CASE("cuda: softmax and log_softmax, forward and backward, match the CPU") {
  gd::manual_seed(13);
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    Tensor x = gd::randn({33, 10, 7}, gd::TensorOptions().dtype(dt)) * 4.0;
    Tensor g = gd::randn({33, 10, 7}, gd::TensorOptions().dtype(dt));
    const double tol = dt == gd::kFloat64 ? 1e-13 : 2e-6;
    for (int64_t dim : {0, 1, 2}) {
      for (bool log : {false, true}) {
        auto run = [&](const gd::Device& device) {
          Tensor xd = x.to(device).requires_grad_();
          Tensor y = log ? gd::log_softmax(xd, dim) : gd::softmax(xd, dim);
          Tensor gx = gd::autograd::grad({y}, {xd}, {g.to(device)})[0];
          return std::pair{y.detach(), gx};
        };
        auto [y_cpu, g_cpu] = run(gd::Device(gd::kCPU));
        auto [y_gpu, g_gpu] = run(kGpu);
        const std::string what = fmt::format("{} dim {} {}", log ? "log_softmax" : "softmax", dim, gd::dtype_name(dt));
        check_matches(y_cpu, y_gpu, what, tol, tol);
        check_matches(g_cpu, g_gpu, what + " backward", tol, tol);
      }
    }
  }
}

TEST_CASE("cuda: the same seed draws the same numbers and dropout masks on both devices (Philox on the device)") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    auto opt = gd::TensorOptions().dtype(dt);
    gd::manual_seed(17);
    Tensor u_cpu = gd::rand({1000}, opt), n_cpu = gd::randn({1001}, opt);
    Tensor d_cpu = gd::dropout(gd::ones({64, 33}, opt), 0.3, true);
    gd::manual_seed(17);
    Tensor u_gpu = gd::rand({1000}, opt.device(kGpu)), n_gpu = gd::randn({1001}, opt.device(kGpu));
    Tensor d_gpu = gd::dropout(gd::ones({64, 33}, opt.device(kGpu)), 0.3, true);
    CHECK(u_gpu.is_cuda());
    // Uniform draws and dropout masks bit for bit; normals to an ulp or two
    // (the device's log/sin/cos against the host's).
    CHECK(gd::equal(u_gpu.cpu(), u_cpu));
    check_matches(n_cpu, n_gpu, "randn", dt == gd::kFloat64 ? 1e-15 : 5e-7, dt == gd::kFloat64 ? 1e-15 : 5e-7);
    CHECK(gd::equal(d_gpu.cpu(), d_cpu));
    // A strided fill lands in logical order, and the stream moves on as on the CPU.
    gd::manual_seed(29);
    Tensor s_cpu = gd::empty({40, 30}, opt).t().uniform_(-2, 3);
    Tensor after_cpu = gd::rand({7}, opt);
    gd::manual_seed(29);
    Tensor s_gpu = gd::empty({40, 30}, opt.device(kGpu)).t().uniform_(-2, 3);
    Tensor after_gpu = gd::rand({7}, opt.device(kGpu));
    CHECK(gd::equal(s_gpu.cpu(), s_cpu));
    CHECK(gd::equal(after_gpu.cpu(), after_cpu));
  }
}

TEST_CASE("cuda: bernoulli draws on the device give the CPU's samples bit for bit") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    auto opt = gd::TensorOptions().dtype(dt);
    Tensor p_cpu = gd::linspace(0, 1, 257, opt).reshape({257, 1}).expand({257, 3});
    gd::manual_seed(5);
    Tensor a_cpu = gd::bernoulli(p_cpu), b_cpu = gd::bernoulli(gd::zeros({33, 7}, opt), 0.25);
    Tensor c_cpu = gd::empty({9, 4}, opt).bernoulli_(0.6), after_cpu = gd::rand({5}, opt);
    gd::manual_seed(5);
    Tensor a_gpu = gd::bernoulli(p_cpu.to(kGpu)), b_gpu = gd::bernoulli(gd::zeros({33, 7}, opt.device(kGpu)), 0.25);
    Tensor c_gpu = gd::empty({9, 4}, opt.device(kGpu)).bernoulli_(0.6), after_gpu = gd::rand({5}, opt.device(kGpu));
    CHECK(a_gpu.is_cuda());
    CHECK(gd::equal(a_gpu.cpu(), a_cpu));
    CHECK(gd::equal(b_gpu.cpu(), b_cpu));
    CHECK(gd::equal(c_gpu.cpu(), c_cpu));
    CHECK(gd::equal(after_gpu.cpu(), after_cpu));
    // Probabilities outside [0, 1] (NaN included) are refused as on the CPU.
    CHECK_THROWS_WITH_AS(gd::bernoulli(gd::full({3}, 1.5, opt.device(kGpu))),
                         "Expected p_in >= 0 && p_in <= 1 to be true, but got false.", gd::Error);
    CHECK_THROWS_AS(gd::bernoulli(gd::full({3}, std::nan(""), opt.device(kGpu))), gd::Error);
  }
}

TEST_CASE("cuda: scalar operands of every binary op match the CPU, on either side") {
  gd::manual_seed(19);
  Tensor x = gd::rand({40, 9}, gd::TensorOptions().dtype(gd::kFloat64)) + 0.25;
  Tensor g = x.to(kGpu);
  check_matches(x + 2.5, g + 2.5, "add scalar");
  check_matches(x - 2.5, g - 2.5, "sub scalar");
  check_matches(2.5 - x, 2.5 - g, "rsub scalar");
  check_matches(x / 3.0, g / 3.0, "div scalar");
  check_matches(3.0 / x, 3.0 / g, "rdiv scalar");
  check_matches(gd::pow(x, 1.5), gd::pow(g, 1.5), "pow scalar", 8e-16, 1e-15);
  check_matches(gd::pow(2.0, x), gd::pow(2.0, g), "rpow scalar", 8e-16, 1e-15);
  check_matches(-x, -g, "neg");
  Tensor i = gd::arange(10);
  CHECK(gd::equal((i.to(kGpu) * 3 + 1).cpu(), i * 3 + 1));
  CHECK(gd::equal((-i.to(kGpu)).cpu(), -i));
}

TEST_CASE("cuda: pinned memory, non-blocking copies, record_stream and device factories") {
  Tensor x = gd::arange(1000, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor pinned = x.pin_memory();
  CHECK(pinned.is_pinned());
  CHECK_FALSE(x.is_pinned());
  CHECK(gd::equal(pinned, x));
  Tensor g = pinned.to(kGpu, /*non_blocking=*/true);
  gd::cuda::synchronize();
  CHECK(gd::equal(g.cpu(), x));
  // A loader with pin_memory hands over pinned batches.
  auto loader = gd::data::make_data_loader(std::make_shared<gd::data::TensorDataset>(x.reshape({100, 10}), gd::zeros({100})),
                                           gd::data::DataLoaderOptions().batch_size(25).pin_memory(true));
  int batches = 0;
  for (auto& batch : loader) {
    CHECK(batch.data.is_pinned());
    CHECK(batch.target.is_pinned());
    ++batches;
  }
  CHECK(batches == 4);
  // record_stream: memory used on a side stream is reused only after that work.
  gd::cuda::Stream side = gd::cuda::getStreamFromPool();
  {
    Tensor t = gd::ones({1 << 20}, gd::TensorOptions().device(kGpu));
    {
      gd::cuda::StreamGuard guard(side);
      Tensor s = (t * 2.0).sum();
      t.record_stream(side);
    }
  }
  side.synchronize();
  // Integer ranges are made on the device.
  CHECK(gd::equal(gd::arange(3, 30, 4, gd::TensorOptions().device(kGpu)).cpu(), gd::arange(3, 30, 4)));
  CHECK(gd::equal(gd::linspace(0, 1, 7, gd::TensorOptions().device(kGpu)).cpu(), gd::linspace(0, 1, 7)));
  CHECK(gd::equal(gd::eye(4, gd::TensorOptions().device(kGpu)).cpu(), gd::eye(4)));
}

TEST_CASE("cuda: gradcheck and gradgradcheck pass on the GPU in float64") {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"tanh(a) * b", [](const std::vector<Tensor>& v) { return gd::tanh(v[0]) * v[1]; }},
      {"sigmoid(a) / (b + 3)", [](const std::vector<Tensor>& v) { return gd::sigmoid(v[0]) / (v[1] + 3.0); }},
      {"a mm b^T", [](const std::vector<Tensor>& v) { return v[0].mm(v[1].t()); }},
      {"sum of exp over dim 1", [](const std::vector<Tensor>& v) { return gd::exp(v[0] - v[1]).sum(1); }},
      {"log_softmax(a + b)", [](const std::vector<Tensor>& v) { return gd::log_softmax(v[0] + v[1], 1); }},
      {"pow(|a| + 1, b)", [](const std::vector<Tensor>& v) { return gd::pow(gd::abs(v[0]) + 1.0, v[1]); }},
      {"where(a > b, a, b * b)", [](const std::vector<Tensor>& v) { return gd::where(v[0] > v[1], v[0], v[1] * v[1]); }},
  };
  gd::manual_seed(23);
  auto opt = gd::TensorOptions().dtype(gd::kFloat64);
  Tensor a = gd::randn({3, 4}, opt).to(kGpu).requires_grad_();
  Tensor b = gd::randn({3, 4}, opt).to(kGpu).requires_grad_();
  gd::autograd::GradcheckOptions options;
  options.raise_exception = true;
  for (const auto& [name, f] : cases) {
    INFO(name);
    gd::autograd::TensorFunction fn = [&](const std::vector<Tensor>& v) { return std::vector<Tensor>{f(v)}; };
    CHECK(gd::autograd::gradcheck(fn, {a, b}, options));
    CHECK(gd::autograd::gradgradcheck(fn, {a, b}, options));
  }
  CHECK(a.device() == kGpu);
}

TEST_CASE("cuda: out of memory is a typed error that leaves the allocator usable") {
  gd::cuda::set_per_process_memory_fraction(0.05);
  const double total_gib = 150;  // more than any current card
  CHECK_THROWS_AS(gd::empty({static_cast<int64_t>(total_gib * (1 << 30) / 4)}, gd::TensorOptions().device(kGpu)),
                  gd::kernels::cuda::OutOfMemoryError);
  bool threw = false;
  try {
    gd::empty({int64_t(1) << 33}, gd::TensorOptions().device(kGpu));
  } catch (const gd::Error& e) {
    threw = true;
    CHECK(std::string(e.what()).find("CUDA out of memory. Tried to allocate 32.00 GiB") != std::string::npos);
  }
  CHECK(threw);
  gd::cuda::set_per_process_memory_fraction(1.0);
  Tensor small = gd::ones({16}, gd::TensorOptions().device(kGpu));
  CHECK(small.sum().item<float>() == 16.0f);
}

TEST_CASE("cuda: argmax, argmin and max/min over a dim find the first extremum, as on the CPU") {
  // Ties and a NaN: the first index wins, a NaN is the extremum of its line.
  Tensor x = gd::tensor({{1.0, 3.0, 3.0, -2.0}, {5.0, -1.0, 5.0, 0.5}, {0.0, std::nan(""), 2.0, std::nan("")}},
                        gd::TensorOptions().dtype(gd::kFloat64));
  Tensor g = x.to(kGpu);
  for (int64_t dim : {0, 1}) {
    CHECK(gd::equal(g.argmax(dim).cpu(), x.argmax(dim)));
    CHECK(gd::equal(g.argmin(dim, true).cpu(), x.argmin(dim, true)));
    auto [values, indices] = gd::max(g, dim);
    auto [cpu_values, cpu_indices] = gd::max(x, dim);
    CHECK(gd::equal(indices.cpu(), cpu_indices));
    CHECK(gd::allclose(values.cpu(), cpu_values, 0.0, 0.0, /*equal_nan=*/true));
  }
  CHECK(g.argmax().item<int64_t>() == x.argmax().item<int64_t>());
  Tensor b = x > 1.0;
  CHECK(gd::equal(std::get<1>(gd::max(b.to(kGpu), 1)).cpu(), std::get<1>(gd::max(b, 1))));
}

TEST_CASE("cuda: on the device, a growing batch keeps max reserved / max allocated <= 1.1") {
  // The fake-backend test of tests/kernels/test_cuda_caching_allocator.cpp on real device memory:
  // 50 layers keep an activation of N * 64 KiB * (1 + layer % 4) until the iteration ends, N = 1..150.
  gd::cuda::synchronize();
  gd::cuda::empty_cache();
  gd::cuda::reset_peak_memory_stats();
  const int64_t base_allocated = gd::cuda::memory_allocated();
  const int64_t base_reserved = gd::cuda::memory_reserved();
  auto opt = gd::TensorOptions().dtype(gd::kFloat32).device(kGpu);
  for (int64_t batch = 1; batch <= 150; ++batch) {
    std::vector<Tensor> activations;
    for (int64_t layer = 0; layer < 50; ++layer)
      activations.push_back(gd::empty({batch * 16384 * (1 + layer % 4)}, opt));
  }
  gd::cuda::synchronize();
  const double allocated = static_cast<double>(gd::cuda::max_memory_allocated() - base_allocated);
  const double reserved = static_cast<double>(gd::cuda::max_memory_reserved() - base_reserved);
  MESSAGE("device growing batch: max reserved " << reserved / 1048576 << " MiB, max allocated "
                                                << allocated / 1048576 << " MiB, ratio " << reserved / allocated);
  CHECK(reserved / allocated <= 1.1);
  CHECK(gd::cuda::memory_allocated() == base_allocated);
}
