// Convolution and pooling on the GPU against the same ops on the CPU: conv2d
// forward and both gradients (float64 to 1e-12 through im2col + cuBLAS; float32
// to 1e-5 through cuDNN with TF32 off; both relative) over strides, paddings, dilations,
// groups, bias, channels_last, strided and empty inputs; the 1-D, 3-D and
// transposed composites; max/avg pooling forward and backward (bitwise, with
// the CPU's indices); gradcheck on the GPU; a small CNN trained on both devices.
#include <doctest/doctest.h>

#include <algorithm>
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
const gd::Device kCpu(gd::kCPU);
using gd::testing::largest_magnitude;

// Relative tolerances of the convolutions, applied to each element and, as an
// absolute floor, to the largest magnitude of the tensor (a long sum that
// cancels to near zero keeps the rounding of its large terms): float32 because
// cuDNN and oneDNN sum in different orders (TF32 off), float64 because cuBLAS
// and OpenBLAS do.
constexpr double kFloat32Tolerance = 1e-5;
constexpr double kFloat64Tolerance = 1e-12;

double tolerance_of(gd::ScalarType dt) { return dt == gd::kFloat64 ? kFloat64Tolerance : kFloat32Tolerance; }


// Every element within atol + rtol |cpu| (NaNs in the same places).
void check_close(const Tensor& cpu, const Tensor& gpu, const std::string& what, double rtol, double atol) {
  gd::testing::check_matches(cpu, gpu, what, rtol, atol);
}

void check_close(const Tensor& cpu, const Tensor& gpu, const std::string& what) {
  const double tol = tolerance_of(cpu.dtype());
  check_close(cpu, gpu, what, tol, tol * std::max(1.0, largest_magnitude(cpu)));
}

struct ConvCase {
  std::string name;
  std::vector<int64_t> input;   // [N, C, H, W] or [C, H, W]
  std::vector<int64_t> weight;  // [O, C / G, KH, KW]
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  bool bias = true;
  bool channels_last = false;
  bool strided_input = false;  // the input a transposed view, not contiguous
};

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"3x3", {2, 3, 9, 11}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}},
      {"3x3 no bias", {2, 3, 9, 11}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, false},
      {"stride and padding", {2, 4, 10, 9}, {6, 4, 3, 2}, {2, 1}, {1, 2}, {1, 1}},
      {"dilation", {1, 3, 12, 12}, {5, 3, 3, 3}, {1, 2}, {2, 1}, {2, 3}, 1, false},
      {"groups 2", {2, 4, 8, 8}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},
      {"depthwise", {2, 6, 7, 9}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 6},
      {"depthwise x2", {2, 4, 7, 7}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 4, false},
      {"1x1", {3, 8, 5, 5}, {4, 8, 1, 1}, {1, 1}, {0, 0}, {1, 1}},
      {"unbatched", {3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"strided input", {2, 3, 9, 11}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, true, false, true},
      {"channels_last", {2, 3, 9, 11}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
      {"channels_last groups", {2, 4, 8, 8}, {6, 2, 3, 3}, {2, 1}, {1, 0}, {1, 2}, 2, true, true},
      {"channels_last depthwise", {2, 6, 7, 9}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 6, false, true},
      {"empty batch", {0, 3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"larger", {8, 16, 28, 28}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
  };
  return cases;
}

// The output and the gradients of (output * probe).sum() for input, weight and bias.
std::vector<Tensor> run_conv(const ConvCase& c, const Tensor& x0, const Tensor& w0, const Tensor& b0,
                             const Tensor& probe0, const gd::Device& device) {
  Tensor x = x0.to(device), w = w0.to(device);
  if (c.strided_input) x = x.transpose(-1, -2).contiguous().transpose(-1, -2);
  if (c.channels_last) {
    x = x.contiguous(gd::channels_last);
    w = w.contiguous(gd::channels_last);
  }
  x.requires_grad_();
  w.requires_grad_();
  Tensor b = c.bias ? b0.to(device).requires_grad_() : Tensor();
  Tensor y = gd::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  std::vector<Tensor> leaves{x, w};
  if (c.bias) leaves.push_back(b);
  std::vector<Tensor> grads = gd::autograd::grad({(y * probe0.to(device)).sum()}, leaves);
  grads.insert(grads.begin(), y);
  return grads;
}

}  // namespace

TEST_CASE("cuda: conv2d forward and both gradients match the CPU (float64 1e-12, float32 1e-5)") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (const ConvCase& c : conv_cases()) {
      INFO(fmt::format("{} ({})", c.name, gd::dtype_name(dt)));
      gd::manual_seed(11);
      const auto opt = gd::TensorOptions().dtype(dt);
      Tensor x = gd::randn(c.input, opt), w = gd::randn(c.weight, opt) * 0.3, b = gd::randn({c.weight[0]}, opt);
      Tensor y_shape = gd::conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation, c.groups);
      Tensor probe = gd::randn(y_shape.sizes(), opt);
      std::vector<Tensor> cpu = run_conv(c, x, w, b, probe, kCpu);
      std::vector<Tensor> gpu = run_conv(c, x, w, b, probe, kGpu);
      const char* names[] = {"output", "grad input", "grad weight", "grad bias"};
      for (size_t i = 0; i < cpu.size(); ++i) check_close(cpu[i], gpu[i], names[i]);
      if (c.channels_last) {
        CHECK(gpu[0].is_contiguous(gd::channels_last));
        CHECK(gpu[1].is_contiguous(gd::channels_last));
        CHECK(gpu[2].is_contiguous(gd::channels_last));
      }
    }
  }
}

TEST_CASE("cuda: conv2d_backward_input and conv2d_backward_weight match the CPU, first and second derivatives") {
  gd::manual_seed(12);
  const auto opt = gd::TensorOptions().dtype(gd::kFloat64);
  Tensor gy = gd::randn({2, 6, 5, 4}, opt), w = gd::randn({6, 2, 3, 3}, opt), x = gd::randn({2, 4, 10, 8}, opt);
  auto run = [&](const gd::Device& device) {
    Tensor GY = gy.to(device).requires_grad_(), W = w.to(device).requires_grad_(), X = x.to(device).requires_grad_();
    Tensor gx = gd::conv2d_backward_input(GY, W, {2, 4, 10, 8}, {2, 2}, {1, 1}, {1, 1}, 2);
    Tensor gw = gd::conv2d_backward_weight(GY, X, {6, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 2);
    Tensor loss = (gx * gx).sum() + (gw * gw).sum();
    std::vector<Tensor> grads = gd::autograd::grad({loss}, {GY, W, X});
    return std::vector<Tensor>{gx, gw, grads[0], grads[1], grads[2]};
  };
  std::vector<Tensor> cpu = run(kCpu), gpu = run(kGpu);
  const char* names[] = {"backward input", "backward weight", "d/d grad_output", "d/d weight", "d/d input"};
  for (size_t i = 0; i < cpu.size(); ++i) check_close(cpu[i], gpu[i], names[i]);
}

TEST_CASE("cuda: conv1d, conv3d and the transposed convolutions (composites of conv2d) match the CPU") {
  gd::manual_seed(13);
  using Fn = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
  struct Composite {
    std::string name;
    std::vector<int64_t> input, weight;
    int64_t bias_size;
    Fn f;
  };
  const std::vector<Composite> cases = {
      {"conv1d", {2, 4, 17}, {6, 2, 3}, 6,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv1d(x, w, b, 2, 1, 2, 2); }},
      {"conv3d", {2, 3, 5, 6, 7}, {4, 3, 2, 3, 3}, 4,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv3d(x, w, b, {1, 2, 1}, {1, 1, 0}); }},
      {"conv_transpose2d", {2, 4, 5, 6}, {4, 3, 3, 3}, 6,
       [](const Tensor& x, const Tensor& w, const Tensor& b) {
         return gd::conv_transpose2d(x, w, b, {2, 2}, {1, 0}, {1, 1}, 2);
       }},
      {"conv_transpose1d", {2, 3, 9}, {3, 2, 4}, 2,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv_transpose1d(x, w, b, 3, 1, 2); }},
  };
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    const auto opt = gd::TensorOptions().dtype(dt);
    for (const Composite& c : cases) {
      INFO(fmt::format("{} ({})", c.name, gd::dtype_name(dt)));
      Tensor x = gd::randn(c.input, opt), w = gd::randn(c.weight, opt) * 0.3, b = gd::randn({c.bias_size}, opt);
      auto run = [&](const gd::Device& device) {
        Tensor X = x.to(device).requires_grad_(), W = w.to(device).requires_grad_(), B = b.to(device).requires_grad_();
        Tensor y = c.f(X, W, B);
        std::vector<Tensor> grads = gd::autograd::grad({(y * y).sum()}, {X, W, B});
        grads.insert(grads.begin(), y);
        return grads;
      };
      std::vector<Tensor> cpu, gpu;
      try {
        cpu = run(kCpu);
        gpu = run(kGpu);
      } catch (const gd::Error& e) {
        FAIL_CHECK(std::string(e.what()));
        continue;
      }
      const char* names[] = {"output", "grad input", "grad weight", "grad bias"};
      for (size_t i = 0; i < cpu.size(); ++i) check_close(cpu[i], gpu[i], names[i]);
    }
  }
}

namespace {

struct PoolCase {
  std::string name;
  std::vector<int64_t> input;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
  bool channels_last = false;
  bool strided_input = false;
};

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {"2x2", {2, 3, 8, 10}, {2, 2}, {}, {0, 0}, {1, 1}},
      {"3x3 stride 2 pad 1", {2, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},
      {"3x2 stride 1 (overlapping)", {2, 2, 7, 6}, {3, 2}, {1, 1}, {1, 0}, {1, 1}},
      {"ceil_mode", {2, 3, 9, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
      {"ceil_mode no padding", {1, 2, 7, 7}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
      {"dilation", {2, 2, 11, 12}, {3, 2}, {2, 1}, {1, 1}, {2, 3}},
      {"unbatched", {3, 8, 9}, {2, 3}, {2, 2}, {1, 1}, {1, 1}},
      {"channels_last", {2, 5, 9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true},
      {"channels_last ceil_mode", {2, 4, 9, 10}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true, true},
      {"strided input", {2, 3, 9, 11}, {3, 3}, {2, 1}, {1, 0}, {1, 1}, false, false, true},
  };
  return cases;
}

Tensor pool_input(const PoolCase& c, const Tensor& x0, const gd::Device& device) {
  Tensor x = x0.to(device);
  if (c.strided_input) x = x.transpose(-1, -2).contiguous().transpose(-1, -2);
  if (c.channels_last) x = x.contiguous(gd::channels_last);
  return x.requires_grad_();
}

}  // namespace

TEST_CASE("cuda: max_pool2d forward, indices and backward equal the CPU's, ties and NaNs included") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (const PoolCase& c : pool_cases()) {
      for (bool ties : {false, true}) {
        INFO(fmt::format("{} ({}{})", c.name, gd::dtype_name(dt), ties ? ", ties and NaNs" : ""));
        gd::manual_seed(14);
        Tensor x = ties ? gd::randint(0, 3, c.input).to(dt) : gd::randn(c.input, gd::TensorOptions().dtype(dt));
        if (ties) {
          Tensor flat = x.view({-1});
          for (int64_t i = 5; i < flat.numel(); i += 37) flat[i].fill_(NAN);
          flat[0].fill_(-INFINITY);
        }
        auto run = [&](const gd::Device& device) {
          Tensor X = pool_input(c, x, device);
          auto [values, indices] =
              gd::max_pool2d_with_indices(X, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
          Tensor probe = gd::arange(values.numel(), gd::TensorOptions().dtype(dt)).reshape(values.sizes()).to(device);
          Tensor grad = gd::autograd::grad({(values * probe).sum()}, {X})[0];
          return std::vector<Tensor>{values, indices, grad};
        };
        std::vector<Tensor> cpu = run(kCpu), gpu = run(kGpu);
        check_close(cpu[0], gpu[0], "values", 0, 0);
        CHECK(gpu[1].device().is_cuda());
        CHECK(gd::equal(gpu[1].cpu(), cpu[1]));
        check_close(cpu[2], gpu[2], "grad input", 0, 0);
        if (c.channels_last) CHECK(gpu[2].is_contiguous(gd::channels_last));
      }
    }
  }
}

TEST_CASE("cuda: avg_pool2d forward and backward equal the CPU's (count_include_pad, ceil_mode, divisor_override)") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (const PoolCase& c : pool_cases()) {
      if (c.dilation[0] != 1 || c.dilation[1] != 1) continue;  // avg_pool2d has no dilation
      for (int variant = 0; variant < 3; ++variant) {
        const bool count_include_pad = variant != 1;
        const std::optional<int64_t> divisor = variant == 2 ? std::optional<int64_t>(5) : std::nullopt;
        INFO(fmt::format("{} ({}, variant {})", c.name, gd::dtype_name(dt), variant));
        gd::manual_seed(15);
        Tensor x = gd::randn(c.input, gd::TensorOptions().dtype(dt));
        auto run = [&](const gd::Device& device) {
          Tensor X = pool_input(c, x, device);
          Tensor y = gd::avg_pool2d(X, c.kernel, c.stride, c.padding, c.ceil_mode, count_include_pad, divisor);
          Tensor probe = gd::arange(y.numel(), gd::TensorOptions().dtype(dt)).reshape(y.sizes()).to(device);
          return std::vector<Tensor>{y, gd::autograd::grad({(y * probe).sum()}, {X})[0]};
        };
        std::vector<Tensor> cpu = run(kCpu), gpu = run(kGpu);
        check_close(cpu[0], gpu[0], "output", 0, 0);
        check_close(cpu[1], gpu[1], "grad input", 0, 0);
      }
    }
  }
}

TEST_CASE("cuda: the 1-D, 3-D and adaptive pools run on the GPU and match the CPU") {
  gd::manual_seed(16);
  const auto opt = gd::TensorOptions().dtype(gd::kFloat64);
  using Fn = std::function<Tensor(const Tensor&)>;
  const std::vector<std::tuple<std::string, std::vector<int64_t>, Fn>> cases = {
      {"max_pool1d", {2, 3, 17}, [](const Tensor& x) { return gd::max_pool1d(x, {3}, {2}, 1); }},
      {"avg_pool1d", {2, 3, 17}, [](const Tensor& x) { return gd::avg_pool1d(x, {3}, {2}, {1}); }},
      {"avg_pool3d", {2, 2, 5, 6, 7},
       [](const Tensor& x) { return gd::avg_pool3d(x, {2, 3, 2}, {1, 2, 2}, {1, 1, 0}); }},
      {"adaptive_avg_pool2d", {2, 3, 9, 11}, [](const Tensor& x) { return gd::adaptive_avg_pool2d(x, {4, 3}); }},
      {"adaptive_avg_pool2d channels_last", {2, 3, 9, 11},
       [](const Tensor& x) { return gd::adaptive_avg_pool2d(x.contiguous(gd::channels_last), {4, 3}); }},
  };
  for (const auto& [name, shape, f] : cases) {
    INFO(name);
    Tensor x = gd::randn(shape, opt);
    auto run = [&](const gd::Device& device) {
      Tensor X = x.to(device).requires_grad_();
      Tensor y = f(X);
      return std::vector<Tensor>{y, gd::autograd::grad({(y * y).sum()}, {X})[0]};
    };
    try {
      std::vector<Tensor> cpu = run(kCpu), gpu = run(kGpu);
      check_close(cpu[0], gpu[0], "output");
      check_close(cpu[1], gpu[1], "grad input");
    } catch (const gd::Error& e) {
      FAIL_CHECK(std::string(e.what()));
    }
  }
}

TEST_CASE("cuda: gradcheck and gradgradcheck pass on the GPU for conv2d and the pools (float64)") {
  gd::manual_seed(17);
  const auto opt = gd::TensorOptions().dtype(gd::kFloat64).device(kGpu);
  gd::autograd::GradcheckOptions options;
  options.raise_exception = true;
  using gd::autograd::TensorFunction;
  {
    INFO("conv2d with stride, padding, dilation and groups");
    Tensor x = gd::randn({2, 4, 7, 6}, opt).requires_grad_();
    Tensor w = (gd::randn({4, 2, 3, 2}, opt) * 0.5).requires_grad_();
    Tensor b = gd::randn({4}, opt).requires_grad_();
    TensorFunction fn = [](const std::vector<Tensor>& v) {
      return std::vector<Tensor>{gd::conv2d(v[0], v[1], v[2], {2, 1}, {1, 1}, {1, 2}, 2)};
    };
    CHECK(gd::autograd::gradcheck(fn, {x, w, b}, options));
    CHECK(gd::autograd::gradgradcheck(fn, {x, w, b}, options));
  }
  {
    INFO("max_pool2d");
    // Distinct values, so that no finite difference moves an argmax.
    Tensor x = (gd::randperm(2 * 3 * 7 * 8).to(gd::kFloat64).reshape({2, 3, 7, 8}) * 0.01).to(kGpu).requires_grad_();
    TensorFunction fn = [](const std::vector<Tensor>& v) {
      return std::vector<Tensor>{gd::max_pool2d(v[0], {3, 3}, {2, 2}, {1, 1}, {1, 1}, true)};
    };
    CHECK(gd::autograd::gradcheck(fn, {x}, options));
  }
  {
    INFO("avg_pool2d");
    Tensor x = gd::randn({2, 3, 7, 8}, opt).requires_grad_();
    TensorFunction fn = [](const std::vector<Tensor>& v) {
      return std::vector<Tensor>{gd::avg_pool2d(v[0], {3, 2}, {2, 2}, {1, 1}, true, false)};
    };
    CHECK(gd::autograd::gradcheck(fn, {x}, options));
    CHECK(gd::autograd::gradgradcheck(fn, {x}, options));
  }
}

TEST_CASE("cuda: conv2d across devices, float32 determinism and TF32") {
  gd::manual_seed(18);
  const auto opt = gd::TensorOptions().dtype(gd::kFloat32);
  Tensor x = gd::randn({4, 8, 16, 16}, opt), w = gd::randn({16, 8, 3, 3}, opt) * 0.1;
  CHECK_THROWS_WITH_AS(gd::conv2d(x.to(kGpu), w),
                       "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
                       gd::Error);
  CHECK_THROWS_AS(gd::conv2d(x, w.to(kGpu)), gd::Error);

  // With deterministic algorithms asked for, two runs give the same bits.
  gd::use_deterministic_algorithms(true);
  auto weight_grad = [&] {
    Tensor W = w.to(kGpu).requires_grad_();
    Tensor y = gd::conv2d(x.to(kGpu), W, Tensor(), {1, 1}, {1, 1});
    return gd::autograd::grad({(y * y).sum()}, {W})[0].cpu();
  };
  Tensor first = weight_grad(), second = weight_grad();
  gd::use_deterministic_algorithms(false);
  CHECK(gd::equal(first, second));

  // TF32 allowed: tensor-core engines may run; the result stays close.
  gd::cuda::set_allow_tf32(true);
  Tensor tf32 = gd::conv2d(x.to(kGpu), w.to(kGpu), Tensor(), {1, 1}, {1, 1}).cpu();
  gd::cuda::set_allow_tf32(false);
  Tensor ieee = gd::conv2d(x, w, Tensor(), {1, 1}, {1, 1});
  CHECK(gd::allclose(tf32, ieee, 1e-2, 1e-2));
}

namespace {

std::vector<double> train_cnn(const gd::Device& device, gd::ScalarType dtype, int steps, double lr) {
  gd::manual_seed(19);
  gd::nn::Sequential net(gd::nn::Conv2d(1, 4, 3), gd::nn::ReLU(), gd::nn::MaxPool2d(2), gd::nn::Conv2d(4, 6, 3),
                         gd::nn::ReLU(), gd::nn::Flatten(), gd::nn::Linear(6 * 3 * 3, 5));
  net->to(dtype);
  net->to(device);
  Tensor x = gd::randn({16, 1, 12, 12}, gd::TensorOptions().dtype(dtype)).to(device);
  Tensor y = gd::randint(0, 5, {16}).to(device);
  gd::optim::Adam optimizer(net->parameters(), gd::optim::AdamOptions(lr));
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    Tensor loss = gd::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

void check_same_curve(const std::vector<double>& cpu, const std::vector<double>& gpu, double tolerance) {
  REQUIRE(cpu.size() == gpu.size());
  double worst = 0;
  size_t worst_step = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double rel = std::abs(cpu[i] - gpu[i]) / std::abs(cpu[i]);
    if (rel > worst) {
      worst = rel;
      worst_step = i;
    }
  }
  INFO(fmt::format("worst relative difference {} at step {} (cpu {}, gpu {})", worst, worst_step, cpu[worst_step],
                   gpu[worst_step]));
  CHECK(worst <= tolerance);
  CHECK(cpu.back() < cpu.front());  // it trained
}

}  // namespace

TEST_CASE("cuda: a small CNN trains the same on the CPU and the GPU (float64, 20 Adam steps)") {
  check_same_curve(train_cnn(kCpu, gd::kFloat64, 20, 1e-2), train_cnn(kGpu, gd::kFloat64, 20, 1e-2), 1e-10);
}

TEST_CASE("cuda: the same CNN in float32 (cuDNN, TF32 off) stays within 1e-4 of the CPU for 20 Adam steps") {
  check_same_curve(train_cnn(kCpu, gd::kFloat32, 20, 1e-3), train_cnn(kGpu, gd::kFloat32, 20, 1e-3), 1e-4);
}
