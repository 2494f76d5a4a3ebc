// _addmm_activation on the GPU (one cuBLASLt call with its relu or gelu
// epilogue where it applies, else addmm then the activation) against the CPU's
// composite: forward and gradients in float64, float32, float16 and bfloat16,
// over transposed, unaligned, broadcast and empty operands, the fused gelu
// under no_grad, and the node the relu form records.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "gradiens.h"
#include "tests/cuda/cuda_checks.h"

namespace gd = gradiens;
using gd::Tensor;

namespace {

const gd::Device kGpu("cuda:0");
const gd::Device kCpu(gd::kCPU);
using gd::testing::check_matches;
using gd::testing::largest_magnitude;

// Relative to each tensor's largest magnitude (the products sum 70 terms far
// larger than some results): float64 and float32 as the other GEMM tests
// (cuBLAS and OpenBLAS sum in different orders, TF32 off); float16 and
// bfloat16 four units in the last place (2^-8 and 2^-5 relative: the CPU
// rounds the product before adding the bias and again after the activation,
// the epilogue rounds once).
double tolerance_of(gd::ScalarType dt) {
  switch (dt) {
    case gd::kFloat64: return 1e-12;
    case gd::kFloat32: return 1e-5;
    case gd::kFloat16: return 1.0 / 256;
    default: return 1.0 / 32;
  }
}

void check_close(const Tensor& cpu, const Tensor& gpu, const std::string& what, double tol) {
  check_matches(cpu, gpu, what, tol, tol * std::max(1.0, largest_magnitude(cpu)));
}

struct Operands {
  std::string name;
  Tensor self, mat1, mat2;
  gd::Scalar beta = 1.0, alpha = 1.0;
};

std::vector<Operands> operand_cases(gd::ScalarType dt) {
  gd::manual_seed(31);
  const auto opt = gd::TensorOptions().dtype(dt);
  Tensor w = gd::randn({33, 70}, opt), bias = gd::randn({33}, opt), x = gd::randn({41, 70}, opt);
  Tensor xt = gd::randn({70, 41}, opt).t(), wide = gd::randn({41, 71}, opt);
  return {
      {"Linear (weight transposed)", bias, x, w.t()},
      {"contiguous weight", bias, x, w.t().contiguous()},
      {"transposed input", bias, xt, w.t()},
      {"unaligned input", bias, wide.narrow(1, 1, 70), w.t()},
      {"bias [1, p]", bias.reshape({1, 33}), x, w.t()},
      {"one feature", bias.narrow(0, 0, 1), x, w.narrow(0, 0, 1).t()},
      {"full self [n, p] (composite)", gd::randn({41, 33}, opt), x, w.t()},
      {"beta 0.5, alpha 2 (composite)", bias, x, w.t(), 0.5, 2.0},
      {"no rows", bias, gd::randn({0, 70}, opt), w.t()},
      {"k = 0", bias, gd::zeros({41, 0}, opt), gd::zeros({0, 33}, opt)},
  };
}

// The output and the gradients of (y * probe).sum() for self, mat1, mat2.
std::vector<Tensor> run(const Operands& c, bool use_gelu, const Tensor& probe, const gd::Device& device) {
  Tensor self = c.self.to(device).requires_grad_(), a = c.mat1.to(device).requires_grad_();
  Tensor b = c.mat2.to(device).requires_grad_();
  Tensor y = gd::_addmm_activation(self, a, b, c.beta, c.alpha, use_gelu);
  std::vector<Tensor> out = gd::autograd::grad({(y * probe.to(device)).sum()}, {self, a, b});
  out.insert(out.begin(), y);
  return out;
}

}  // namespace

TEST_CASE("cuda: _addmm_activation matches the CPU's addmm then relu or tanh gelu, forward and backward") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kFloat16, gd::kBFloat16}) {
    for (const Operands& c : operand_cases(dt)) {
      for (bool use_gelu : {false, true}) {
        INFO(fmt::format("{} ({}, {})", c.name, gd::dtype_name(dt), use_gelu ? "gelu" : "relu"));
        gd::manual_seed(32);
        Tensor probe = gd::randn({c.mat1.size(0), c.mat2.size(1)}, gd::TensorOptions().dtype(dt));
        const std::vector<Tensor> cpu = run(c, use_gelu, probe, kCpu), gpu = run(c, use_gelu, probe, kGpu);
        const double tol = tolerance_of(dt);
        check_close(cpu[0], gpu[0], "output", tol);
        if (!use_gelu && (dt == gd::kFloat16 || dt == gd::kBFloat16)) {
          // A pre-activation within a rounding of 0 may be cut on one device and
          // not the other, which moves whole terms of the gradients: only shapes here.
          for (size_t i = 1; i < cpu.size(); ++i) CHECK(gpu[i].sizes() == cpu[i].sizes());
          continue;
        }
        const char* names[] = {"output", "grad self", "grad mat1", "grad mat2"};
        for (size_t i = 1; i < cpu.size(); ++i) check_close(cpu[i], gpu[i], names[i], tol);
      }
    }
  }
}

TEST_CASE("cuda: _addmm_activation records relu's node and runs the fused gelu without a graph") {
  gd::manual_seed(33);
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kFloat16, gd::kBFloat16}) {
    INFO(gd::dtype_name(dt));
    const auto opt = gd::TensorOptions().dtype(dt);
    Tensor w = gd::randn({24, 40}, opt), bias = gd::randn({24}, opt), x = gd::randn({17, 40}, opt);
    Tensor W = w.to(kGpu).requires_grad_(), B = bias.to(kGpu), X = x.to(kGpu);
    Tensor y = gd::_addmm_activation(B, X, W.t());
    REQUIRE(y.grad_fn());
    CHECK(y.grad_fn()->name() == "AddmmActivationBackward0");
    // No graph: the gelu epilogue (cuBLASLt evaluates its own tanh: within
    // 1e-4 of the largest value in float64 and float32).
    gd::NoGradGuard no_grad;
    const Tensor relu_gpu = gd::_addmm_activation(B, X, W.t());
    const Tensor gelu_gpu = gd::_addmm_activation(B, X, W.t(), 1, 1, true);
    const Tensor relu_cpu = gd::_addmm_activation(bias, x, w.t());
    const Tensor gelu_cpu = gd::_addmm_activation(bias, x, w.t(), 1, 1, true);
    CHECK_FALSE(gelu_gpu.requires_grad());
    const double tol = tolerance_of(dt);
    check_close(relu_cpu, relu_gpu, "relu", tol);
    check_close(gelu_cpu, gelu_gpu, "gelu", std::max(tol, 1e-4));
    // Every relu output is >= 0, zeros where the CPU's are.
    CHECK(relu_gpu.min().item<double>() >= 0);
  }
}

TEST_CASE("cuda: _addmm_activation checks as addmm does") {
  Tensor a = gd::randn({3, 4}).to(kGpu), b = gd::randn({4, 2}).to(kGpu), bias = gd::randn({2}).to(kGpu);
  CHECK_THROWS_AS(gd::_addmm_activation(bias, a, gd::randn({5, 2}).to(kGpu)), gd::Error);
  CHECK_THROWS_AS(gd::_addmm_activation(bias.cpu(), a, b), gd::Error);
  CHECK_THROWS_AS(gd::_addmm_activation(bias, a, b.to(gd::kFloat64)), gd::Error);
}

TEST_CASE("cuda: Linear's weight and bias gradients from one GEMM (bias-gradient epilogue) match the CPU") {
  gd::manual_seed(34);
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    const auto opt = gd::TensorOptions().dtype(dt);
    // float32 1e-6 relative to the largest gradient (the epilogue and a separate
    // sum add the rows in different orders), float64 1e-12.
    const double tol = dt == gd::kFloat64 ? 1e-12 : 1e-6;
    Tensor w = gd::randn({33, 70}, opt), bias = gd::randn({33}, opt), x = gd::randn({41, 70}, opt);
    Tensor wide = gd::randn({41, 71}, opt);
    struct Case {
      std::string name;
      Tensor input, bias;
      bool sum_loss;       // y.sum(): an expanded (stride 0) incoming gradient
      bool create_graph;   // recorded: the separate sum
    };
    const std::vector<Case> cases = {
        {"(y * y).sum()", x, bias, false, false},
        {"y.sum()", x, bias, true, false},
        {"bias [1, p]", x, bias.reshape({1, 33}), false, false},
        {"unaligned input", wide.narrow(1, 1, 70), bias, false, false},
        {"create_graph", x, bias, false, true},
    };
    for (const Case& c : cases) {
      INFO(c.name, " ", gd::dtype_name(dt));
      auto run = [&](const gd::Device& device) {
        Tensor X = c.input.to(device).requires_grad_(), W = w.to(device).requires_grad_();
        Tensor B = c.bias.to(device).requires_grad_();
        Tensor y = gd::nn::functional::linear(X, W, B);
        Tensor loss = c.sum_loss ? y.sum() : (y * y).sum();
        return gd::autograd::grad({loss}, {X, W, B}, {}, std::nullopt, c.create_graph);
      };
      const std::vector<Tensor> cpu = run(kCpu), gpu = run(kGpu);
      const char* names[] = {"input gradient", "weight gradient", "bias gradient"};
      for (size_t i = 0; i < cpu.size(); ++i) {
        CHECK(gpu[i].sizes() == cpu[i].sizes());
        check_close(cpu[i], gpu[i], names[i], tol);
      }
      // The weight gradient comes back in the weight's layout.
      CHECK(gpu[1].is_contiguous());
    }
  }
}
