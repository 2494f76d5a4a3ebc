// float16 and bfloat16 convolutions and pooling on the GPU against the same ops
// on the CPU: conv2d through cuDNN with half/bfloat16 tensors and float32
// compute (NCHW, channels_last, groups, strides, empty batches), its two
// gradients, conv2d_backward_input/weight, the 1-D, 3-D and transposed
// composites, and max/avg pooling (float32 kernels on float32 copies on both
// devices, so bit for bit).
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gradiens.h"
#include "tests/cuda/cuda_checks.h"

namespace gd = gradiens;
using gd::Tensor;

namespace {

const gd::Device kGpu("cuda:0");
const gd::Device kCpu(gd::kCPU);
using gd::testing::largest_magnitude;

// Both devices sum in float32 and round the result (the CPU once; cuDNN's
// output is rounded before the engine adds the bias, a second rounding): four
// units in the last place of the dtype relative to the tensor's largest
// magnitude, 2^-8 for float16 and 2^-5 for bfloat16.
double tolerance_of(gd::ScalarType dt) { return dt == gd::kFloat16 ? 1.0 / 256 : 1.0 / 32; }

void check_close(const Tensor& cpu, const Tensor& gpu, const std::string& what) {
  const double tol = tolerance_of(cpu.dtype());
  gd::testing::check_matches(cpu, gpu, what, tol, tol * std::max(1.0, largest_magnitude(cpu)));
}

using Fn = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;

struct ReducedConv {
  std::string name;
  std::vector<int64_t> input, weight;
  int64_t bias_size;  // 0: no bias
  Fn f;
  bool channels_last = false;
};

const std::vector<ReducedConv>& reduced_conv_cases() {
  static const std::vector<ReducedConv> cases = {
      {"conv2d 3x3", {2, 8, 9, 11}, {16, 8, 3, 3}, 16,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv2d(x, w, b, 1, 1); }},
      {"conv2d no bias, odd channels", {2, 3, 9, 11}, {4, 3, 3, 3}, 0,
       [](const Tensor& x, const Tensor& w, const Tensor&) { return gd::conv2d(x, w); }},
      {"conv2d stride, padding, dilation", {2, 4, 10, 9}, {6, 4, 3, 2}, 6,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv2d(x, w, b, {2, 1}, {1, 2}, {1, 2}); }},
      {"conv2d groups", {2, 8, 8, 8}, {8, 4, 3, 3}, 8,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv2d(x, w, b, 1, 1, 1, 2); }},
      {"conv2d depthwise", {2, 8, 7, 9}, {8, 1, 3, 3}, 0,
       [](const Tensor& x, const Tensor& w, const Tensor&) { return gd::conv2d(x, w, {}, 1, 1, 1, 8); }},
      {"conv2d channels_last", {2, 8, 9, 11}, {16, 8, 3, 3}, 16,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv2d(x, w, b, 1, 1); }, true},
      {"conv2d larger", {8, 16, 28, 28}, {32, 16, 3, 3}, 32,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv2d(x, w, b, 1, 1); }},
      {"conv2d unbatched", {8, 8, 8}, {8, 8, 3, 3}, 8,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv2d(x, w, b, 1, 1); }},
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
      {"conv_transpose3d", {1, 2, 3, 4, 3}, {2, 3, 2, 2, 2}, 3,
       [](const Tensor& x, const Tensor& w, const Tensor& b) { return gd::conv_transpose3d(x, w, b, 2, 1); }},
  };
  return cases;
}

}  // namespace

TEST_CASE("cuda: float16 and bfloat16 convolutions (cuDNN, float32 compute) match the CPU, forward and backward") {
  for (gd::ScalarType dt : {gd::kFloat16, gd::kBFloat16}) {
    for (const ReducedConv& c : reduced_conv_cases()) {
      INFO(fmt::format("{} ({})", c.name, gd::dtype_name(dt)));
      gd::manual_seed(41);
      Tensor x = gd::randn(c.input).to(dt), w = (gd::randn(c.weight) * 0.3).to(dt);
      Tensor b = c.bias_size > 0 ? gd::randn({c.bias_size}).to(dt) : Tensor();
      Tensor probe;
      auto run = [&](const gd::Device& device) {
        Tensor X = x.to(device), W = w.to(device);
        if (c.channels_last) {
          X = X.contiguous(gd::channels_last);
          W = W.contiguous(gd::channels_last);
        }
        X.requires_grad_();
        W.requires_grad_();
        std::vector<Tensor> leaves{X, W};
        Tensor B;
        if (b.defined()) leaves.push_back(B = b.to(device).requires_grad_());
        Tensor y = c.f(X, W, B);
        if (!probe.defined()) probe = gd::randn(y.sizes()).to(dt);
        std::vector<Tensor> grads = gd::autograd::grad({(y * probe.to(device)).sum()}, leaves);
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
      for (size_t i = 0; i < cpu.size(); ++i) {
        CHECK(gpu[i].dtype() == dt);
        check_close(cpu[i], gpu[i], names[i]);
      }
      if (c.channels_last) CHECK(gpu[0].is_contiguous(gd::channels_last));
    }
  }
}

TEST_CASE("cuda: float16 and bfloat16 conv2d_backward_input/weight, empty batches and deterministic mode") {
  for (gd::ScalarType dt : {gd::kFloat16, gd::kBFloat16}) {
    INFO(gd::dtype_name(dt));
    gd::manual_seed(42);
    Tensor gy = gd::randn({2, 6, 5, 4}).to(dt), w = gd::randn({6, 2, 3, 3}).to(dt), x = gd::randn({2, 4, 10, 8}).to(dt);
    auto run = [&](const gd::Device& device) {
      return std::vector<Tensor>{
          gd::conv2d_backward_input(gy.to(device), w.to(device), {2, 4, 10, 8}, {2, 2}, {1, 1}, {1, 1}, 2),
          gd::conv2d_backward_weight(gy.to(device), x.to(device), {6, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 2)};
    };
    std::vector<Tensor> cpu = run(kCpu), gpu = run(kGpu);
    check_close(cpu[0], gpu[0], "backward input");
    check_close(cpu[1], gpu[1], "backward weight");

    Tensor empty = gd::conv2d(gd::zeros({0, 3, 8, 8}, dt).to(kGpu), gd::ones({4, 3, 3, 3}, dt).to(kGpu));
    CHECK(empty.sizes() == gd::IntArrayRef(std::vector<int64_t>{0, 4, 6, 6}));

    // Deterministic algorithms: the same plan twice gives the same bits.
    gd::use_deterministic_algorithms(true);
    Tensor xg = gd::randn({4, 8, 12, 12}).to(dt).to(kGpu), wg = gd::randn({8, 8, 3, 3}).to(dt).to(kGpu);
    xg.requires_grad_();
    wg.requires_grad_();
    auto grads = [&] {
      Tensor y = gd::conv2d(xg, wg, {}, 1, 1);
      return gd::autograd::grad({y.sum()}, {xg, wg});
    };
    std::vector<Tensor> first = grads(), second = grads();
    gd::use_deterministic_algorithms(false);
    gd::testing::check_same_bits(first[0].cpu(), second[0], "deterministic grad input");
    gd::testing::check_same_bits(first[1].cpu(), second[1], "deterministic grad weight");
  }
}

TEST_CASE("cuda: float16 and bfloat16 pooling equals the CPU's bit for bit, forward and backward") {
  for (gd::ScalarType dt : {gd::kFloat16, gd::kBFloat16}) {
    for (bool channels_last : {false, true}) {
      INFO(fmt::format("{}{}", gd::dtype_name(dt), channels_last ? " channels_last" : ""));
      gd::manual_seed(43);
      Tensor x = gd::randn({2, 5, 9, 11}).to(dt), probe;
      auto run = [&](const gd::Device& device, int which) {
        Tensor X = x.to(device);
        if (channels_last) X = X.contiguous(gd::channels_last);
        X.requires_grad_();
        Tensor y = which == 0   ? gd::max_pool2d(X, 3, 2, 1)
                   : which == 1 ? gd::avg_pool2d(X, 3, 2, 1, true)
                                : gd::avg_pool2d(X, 2, 2, 1, false, false);
        if (!probe.defined() || probe.sizes() != y.sizes()) probe = gd::randn(y.sizes()).to(dt);
        Tensor g = gd::autograd::grad({(y * probe.to(device)).sum()}, {X})[0];
        return std::vector<Tensor>{y, g};
      };
      for (int which : {0, 1, 2}) {
        const std::string pool = which == 0 ? "max_pool2d" : which == 1 ? "avg_pool2d ceil" : "avg_pool2d exclude pad";
        INFO(pool);
        probe = Tensor();
        std::vector<Tensor> cpu = run(kCpu, which), gpu = run(kGpu, which);
        gd::testing::check_same_bits(cpu[0], gpu[0], "output");
        // The products y * probe are rounded alike; their gradients are each a
        // probe element (max) or a sum of them in float32, rounded once (avg).
        gd::testing::check_same_bits(cpu[1], gpu[1], "grad input");
      }
    }
  }
}
