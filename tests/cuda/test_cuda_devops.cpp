// The ops that now run one kernel each on the GPU instead of a composite of
// device ops, against the same ops on the CPU: softmax / log_softmax and their
// backward, argmax / argmin and max(dim) / min(dim), norm, clamp, softplus,
// logical_not / isnan / isinf / isfinite, eye / linspace / arange, and
// nll_loss / cross_entropy / multi_margin_loss's target picks; forward and
// backward, over empty, 0-dim, strided and transposed inputs, NaN and ties.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
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
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using gd::testing::check_same_bits;

double tolerance_of(gd::ScalarType dt) { return dt == gd::kFloat64 ? 1e-12 : 1e-5; }

void check_close(const Tensor& cpu, const Tensor& gpu, const std::string& what, gd::ScalarType dt) {
  gd::testing::check_matches(cpu, gpu, what, tolerance_of(dt), tolerance_of(dt));
}

Tensor draw(gd::IntArrayRef shape, gd::ScalarType dt, uint64_t seed = 5) {
  gd::manual_seed(seed);
  return gd::randn(shape, gd::TensorOptions().dtype(dt));
}

// The inputs each op sees: several shapes, a transposed and a strided view, an
// empty tensor and a 0-dim one.
std::vector<std::pair<std::string, Tensor>> inputs_of(gd::ScalarType dt) {
  std::vector<std::pair<std::string, Tensor>> inputs;
  inputs.emplace_back("[7]", draw({7}, dt));
  inputs.emplace_back("[5, 300]", draw({5, 300}, dt, 6));  // long lines: the block kernels
  inputs.emplace_back("[3, 4, 5]", draw({3, 4, 5}, dt, 7));
  inputs.emplace_back("[300, 6]^T", draw({300, 6}, dt, 8).t());
  inputs.emplace_back("[6, 20][:, ::3]", draw({6, 20}, dt, 9).slice(1, 0, 20, 3));
  inputs.emplace_back("[0, 4]", draw({0, 4}, dt));
  inputs.emplace_back("[]", draw({}, dt, 10));
  return inputs;
}

// y = f(x) on both devices, and d(sum(y * g))/dx for a random g.
void check_forward_backward(const std::function<Tensor(const Tensor&)>& f, const Tensor& x_cpu,
                            const std::string& what) {
  const gd::ScalarType dt = x_cpu.dtype();
  Tensor xc = x_cpu.detach().clone().requires_grad_();
  Tensor xg = x_cpu.detach().to(kGpu).requires_grad_();
  Tensor yc = f(xc), yg = f(xg);
  INFO(what);
  CHECK(yg.device() == kGpu);
  check_close(yc.detach(), yg.detach(), what + " forward", dt);
  if (yc.numel() == 0 || !yc.requires_grad()) return;
  gd::manual_seed(11);
  Tensor g = gd::randn(yc.sizes(), gd::TensorOptions().dtype(yc.dtype()));
  Tensor gc = gd::autograd::grad({yc}, {xc}, {g})[0];
  Tensor gg = gd::autograd::grad({yg}, {xg}, {g.to(kGpu)})[0];
  check_close(gc, gg, what + " backward", dt);
}

const gd::ScalarType kFloatTypes[] = {gd::kFloat64, gd::kFloat32};

}  // namespace

TEST_CASE("cuda: softmax and log_softmax match the CPU, forward, backward and double backward") {
  if (!gd::cuda::is_available()) return;
  for (gd::ScalarType dt : kFloatTypes) {
    for (const auto& [name, x] : inputs_of(dt)) {
      const int64_t rank = std::max<int64_t>(x.dim(), 1);
      for (int64_t d = 0; d < rank; ++d) {
        const std::string what = fmt::format("{} {} dim {}", gd::dtype_name(dt), name, d);
        check_forward_backward([d](const Tensor& t) { return gd::softmax(t, d); }, x, "softmax " + what);
        check_forward_backward([d](const Tensor& t) { return gd::log_softmax(t, d); }, x, "log_softmax " + what);
      }
    }
    // Second order: the fused backward's own backward on the device.
    Tensor x = draw({4, 70}, dt, 12);
    for (bool log : {false, true}) {
      auto second = [log](const Tensor& t) {
        Tensor y = log ? gd::log_softmax(t, 1) : gd::softmax(t, 1);
        Tensor w = gd::sin(gd::arange(y.numel(), gd::TensorOptions().dtype(y.dtype()).device(y.device())))
                       .reshape(y.sizes());
        return gd::autograd::grad({(y * w).sum()}, {t}, {}, true, true)[0];
      };
      check_forward_backward(second, x, fmt::format("{} second order {}", log ? "log_softmax" : "softmax",
                                                    gd::dtype_name(dt)));
    }
  }
  // Edge values: a NaN, +inf or an all -inf line is NaN throughout; large values stay finite.
  Tensor edges = gd::tensor({1.0, kNan, 2.0, 1.0, kInf, 2.0, -kInf, -kInf, -kInf, 1e300, -1e300, 0.0},
                            gd::kFloat64)
                     .reshape({4, 3});
  // (Equal values and NaN in the same places: NaN bits differ between x86 and CUDA arithmetic.)
  gd::testing::check_matches(gd::softmax(edges, 1), gd::softmax(edges.to(kGpu), 1), "softmax edge values", 0, 0);
  gd::testing::check_matches(gd::log_softmax(edges, 1), gd::log_softmax(edges.to(kGpu), 1),
                             "log_softmax edge values", 0, 0);
  Tensor big = gd::tensor({1e4, 0.0, -1e4}, gd::kFloat32);
  check_close(gd::softmax(big, 0), gd::softmax(big.to(kGpu), 0), "softmax float32 1e4", gd::kFloat32);
}

TEST_CASE("cuda: argmax, argmin, max(dim) and min(dim) give the CPU's first extremum, NaN winning") {
  if (!gd::cuda::is_available()) return;
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kInt64, gd::kInt32}) {
    for (const auto& [name, x_float] : inputs_of(gd::kFloat64)) {
      // Ties: values rounded to few levels, so every line has repeats.
      Tensor x = gd::round(x_float * 2).to(dt);
      const int64_t rank = std::max<int64_t>(x.dim(), 1);
      for (int64_t d = 0; d < rank; ++d) {
        const std::string what = fmt::format("{} {} dim {}", gd::dtype_name(dt), name, d);
        INFO(what);
        if (x.dim() > 0 && x.size(d) == 0) {
          CHECK_THROWS_AS(gd::argmax(x.to(kGpu), d), gd::Error);
          continue;
        }
        for (bool keepdim : {false, true}) {
          check_same_bits(gd::argmax(x, d, keepdim), gd::argmax(x.to(kGpu), d, keepdim).cpu(), "argmax " + what);
          check_same_bits(gd::argmin(x, d, keepdim), gd::argmin(x.to(kGpu), d, keepdim).cpu(), "argmin " + what);
          auto [max_c, at_max_c] = gd::max(x, d, keepdim);
          auto [max_g, at_max_g] = gd::max(x.to(kGpu), d, keepdim);
          check_same_bits(max_c, max_g.cpu(), "max values " + what);
          check_same_bits(at_max_c, at_max_g.cpu(), "max indices " + what);
          auto [min_c, at_min_c] = gd::min(x, d, keepdim);
          auto [min_g, at_min_g] = gd::min(x.to(kGpu), d, keepdim);
          check_same_bits(min_c, min_g.cpu(), "min values " + what);
          check_same_bits(at_min_c, at_min_g.cpu(), "min indices " + what);
        }
      }
      if (x.numel() > 0) {
        check_same_bits(gd::argmax(x), gd::argmax(x.to(kGpu)).cpu(), "argmax flat " + name);
        check_same_bits(gd::argmin(x), gd::argmin(x.to(kGpu)).cpu(), "argmin flat " + name);
      }
    }
  }
  // NaN wins (the first NaN), for both; a long line with NaN late and early.
  Tensor x = draw({3, 500}, gd::kFloat32, 13);
  x.index_put_({1, 400}, kNan);
  x.index_put_({1, 450}, kNan);
  x.index_put_({2, 3}, kNan);
  for (int64_t d : {0, 1}) {
    check_same_bits(gd::argmax(x, d), gd::argmax(x.to(kGpu), d).cpu(), "argmax NaN");
    check_same_bits(gd::argmin(x, d), gd::argmin(x.to(kGpu), d).cpu(), "argmin NaN");
    check_same_bits(std::get<0>(gd::max(x, d)), std::get<0>(gd::max(x.to(kGpu), d)).cpu(), "max NaN values");
  }
  // Long reductions with few outputs (split into chunks), many ties and a late NaN.
  Tensor long_ties = gd::round(draw({2, 100000}, gd::kFloat64, 19) * 2);
  for (int64_t d : {0, 1}) {
    check_same_bits(gd::argmax(long_ties, d), gd::argmax(long_ties.to(kGpu), d).cpu(), "argmax long");
    check_same_bits(gd::argmin(long_ties, d), gd::argmin(long_ties.to(kGpu), d).cpu(), "argmin long");
  }
  check_same_bits(gd::argmax(long_ties), gd::argmax(long_ties.to(kGpu)).cpu(), "argmax long flat");
  long_ties.index_put_({1, 99000}, kNan);
  long_ties.index_put_({1, 99999}, kNan);
  check_same_bits(gd::argmin(long_ties), gd::argmin(long_ties.to(kGpu)).cpu(), "argmin long flat NaN");
  check_same_bits(std::get<0>(gd::max(long_ties, 1)), std::get<0>(gd::max(long_ties.to(kGpu), 1)).cpu(),
                  "max long NaN values");
  check_same_bits(std::get<1>(gd::max(long_ties, 1)), std::get<1>(gd::max(long_ties.to(kGpu), 1)).cpu(),
                  "max long NaN indices");
  // bool: max(dim) takes it, argmax does not.
  Tensor b = gd::tensor(std::vector<int64_t>{0, 1, 1, 0, 0, 0}, gd::kInt64).reshape({2, 3}).to(gd::kBool);
  check_same_bits(std::get<1>(gd::max(b, 1)), std::get<1>(gd::max(b.to(kGpu), 1)).cpu(), "max(dim) bool");
  CHECK_THROWS_AS(gd::argmax(b.to(kGpu), 1), gd::Error);
  // Gradients reach the chosen element only.
  for (gd::ScalarType dt : kFloatTypes) {
    for (const auto& [name, x_float] : inputs_of(dt)) {
      if (x_float.numel() == 0) continue;
      const int64_t rank = std::max<int64_t>(x_float.dim(), 1);
      for (int64_t d = 0; d < rank; ++d) {
        const std::string what = fmt::format("{} {} dim {}", gd::dtype_name(dt), name, d);
        check_forward_backward([d](const Tensor& t) { return std::get<0>(gd::max(t, d)); }, x_float, "max " + what);
        check_forward_backward([d](const Tensor& t) { return std::get<0>(gd::min(t, d, true)); }, x_float,
                               "min " + what);
      }
    }
  }
}

TEST_CASE("cuda: norm matches the CPU for every p, forward and backward") {
  if (!gd::cuda::is_available()) return;
  for (gd::ScalarType dt : kFloatTypes) {
    for (const auto& [name, x] : inputs_of(dt)) {
      for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, -1.5, kInf, -kInf}) {
        const std::string what = fmt::format("{} {} p {}", gd::dtype_name(dt), name, p);
        check_forward_backward([p](const Tensor& t) { return gd::norm(t, p); }, x, "norm all " + what);
        if (x.dim() >= 2) {
          check_forward_backward([p](const Tensor& t) { return gd::norm(t, p, {1}, false); }, x, "norm dim 1 " + what);
          check_forward_backward([p](const Tensor& t) { return gd::norm(t, p, {0}, true); }, x, "norm dim 0 " + what);
        }
      }
    }
  }
  // A long reduction (block kernel), zeros, and NaN / inf.
  Tensor x = draw({2, 100000}, gd::kFloat64, 14);
  for (double p : {2.0, 1.0, 0.0, 3.0, kInf, -kInf}) {
    check_close(gd::norm(x, p, {1}, false), gd::norm(x.to(kGpu), p, {1}, false), "norm long", gd::kFloat64);
    check_close(gd::norm(x, p), gd::norm(x.to(kGpu), p), "norm long flat", gd::kFloat64);
    Tensor x32 = x.to(gd::kFloat32);
    check_close(gd::norm(x32, p), gd::norm(x32.to(kGpu), p), "norm long flat float32", gd::kFloat32);
  }
  Tensor edges = gd::tensor({0.0, 0.0, 0.0, 1.0, kNan, 2.0, -kInf, 1.0, 0.5}, gd::kFloat64).reshape({3, 3});
  for (double p : {2.0, 1.0, 0.0, 3.0, -1.5, kInf, -kInf})
    check_close(gd::norm(edges, p, {1}, false), gd::norm(edges.to(kGpu), p, {1}, false),
                fmt::format("norm edges p {}", p), gd::kFloat64);
}

TEST_CASE("cuda: clamp, softplus and the predicates match the CPU") {
  if (!gd::cuda::is_available()) return;
  for (gd::ScalarType dt : kFloatTypes) {
    for (const auto& [name, x] : inputs_of(dt)) {
      const std::string what = fmt::format("{} {}", gd::dtype_name(dt), name);
      check_forward_backward([](const Tensor& t) { return gd::clamp(t, -0.5, 0.7); }, x, "clamp " + what);
      check_forward_backward([](const Tensor& t) { return gd::clamp_min(t, 0.1); }, x, "clamp_min " + what);
      check_forward_backward([](const Tensor& t) { return gd::clamp_max(t, -0.2); }, x, "clamp_max " + what);
      check_forward_backward([](const Tensor& t) { return gd::clamp(t, 0.5, -0.5); }, x, "clamp lo > hi " + what);
      check_forward_backward([](const Tensor& t) { return gd::softplus(t); }, x, "softplus " + what);
      check_forward_backward([](const Tensor& t) { return gd::softplus(t, 2.0, 1.0); }, x, "softplus beta 2 " + what);
    }
  }
  Tensor edges = gd::tensor({kNan, kInf, -kInf, 0.0, -0.0, 1.0, -30.0, 30.0}, gd::kFloat64);
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kFloat16, gd::kBFloat16}) {
    Tensor e = edges.to(dt);
    check_same_bits(gd::clamp(e, -1.0, 1.0), gd::clamp(e.to(kGpu), -1.0, 1.0).cpu(), "clamp edges");
    check_same_bits(gd::isnan(e), gd::isnan(e.to(kGpu)).cpu(), "isnan");
    check_same_bits(gd::isinf(e), gd::isinf(e.to(kGpu)).cpu(), "isinf");
    check_same_bits(gd::isfinite(e), gd::isfinite(e.to(kGpu)).cpu(), "isfinite");
    check_same_bits(gd::logical_not(e), gd::logical_not(e.to(kGpu)).cpu(), "logical_not");
  }
  check_close(gd::softplus(edges), gd::softplus(edges.to(kGpu)), "softplus edges", gd::kFloat64);
  // A NaN bound gives NaN, as in PyTorch.
  Tensor nan_low = gd::clamp(edges.to(kGpu), kNan, std::nullopt).cpu();
  CHECK(gd::isnan(nan_low).all().item<bool>());
  Tensor nan_high = gd::clamp(edges.to(kGpu), std::nullopt, kNan).cpu();
  CHECK(gd::isnan(nan_high).all().item<bool>());
  // Integer and bool inputs: clamp keeps the dtype, the predicates are constant but logical_not.
  Tensor ints = gd::tensor(std::vector<int64_t>{-5, 0, 3, 9, std::numeric_limits<int64_t>::max()}, gd::kInt64);
  check_same_bits(gd::clamp(ints, -2, 4), gd::clamp(ints.to(kGpu), -2, 4).cpu(), "clamp int64");
  check_same_bits(gd::clamp(ints.to(gd::kInt32), 1, std::nullopt),
                  gd::clamp(ints.to(gd::kInt32).to(kGpu), 1, std::nullopt).cpu(), "clamp int32");
  for (gd::ScalarType dt : {gd::kInt64, gd::kInt32, gd::kUInt8, gd::kBool}) {
    Tensor t = ints.to(dt);
    check_same_bits(gd::isnan(t), gd::isnan(t.to(kGpu)).cpu(), "isnan integer");
    check_same_bits(gd::isinf(t), gd::isinf(t.to(kGpu)).cpu(), "isinf integer");
    check_same_bits(gd::isfinite(t), gd::isfinite(t.to(kGpu)).cpu(), "isfinite integer");
    check_same_bits(gd::logical_not(t), gd::logical_not(t.to(kGpu)).cpu(), "logical_not integer");
  }
  // Strided predicate input.
  Tensor strided = draw({6, 8}, gd::kFloat32, 15).t();
  check_same_bits(gd::logical_not(strided > 0), gd::logical_not((strided > 0).to(kGpu)).cpu(), "logical_not strided");
  check_same_bits(gd::isfinite(strided), gd::isfinite(strided.to(kGpu)).cpu(), "isfinite strided");
}

TEST_CASE("cuda: +, -, *, maximum and minimum on uint8, int8, int16 and bool match the CPU, wrapping alike") {
  if (!gd::cuda::is_available()) return;
  // Values past each dtype's range, so sums and products wrap (uint8: 200 + 100 = 44).
  Tensor a64 = gd::tensor(std::vector<int64_t>{-128, -7, 0, 1, 100, 127, 200, 255, 30000, -32768}, gd::kInt64);
  Tensor b64 = gd::tensor(std::vector<int64_t>{-1, 3, 0, 255, 100, 2, 200, -3, 4, 127}, gd::kInt64);
  for (gd::ScalarType dt : {gd::kUInt8, gd::kInt8, gd::kInt16}) {
    const std::string name(gd::dtype_name(dt));
    Tensor a = a64.to(dt), b = b64.to(dt);
    Tensor ag = a.to(kGpu), bg = b.to(kGpu);
    check_same_bits(a + b, (ag + bg).cpu(), "add " + name);
    check_same_bits(gd::add(a, b, 3), gd::add(ag, bg, 3).cpu(), "add alpha " + name);
    check_same_bits(a - b, (ag - bg).cpu(), "sub " + name);
    check_same_bits(a * b, (ag * bg).cpu(), "mul " + name);
    check_same_bits(gd::maximum(a, b), gd::maximum(ag, bg).cpu(), "maximum " + name);
    check_same_bits(gd::minimum(a, b), gd::minimum(ag, bg).cpu(), "minimum " + name);
    check_same_bits(a * 3, (ag * 3).cpu(), "mul scalar " + name);
    check_same_bits(a - 1, (ag - 1).cpu(), "sub scalar " + name);
    // Broadcast and strided operands.
    Tensor m = a.reshape({2, 5}), mg = ag.reshape({2, 5});
    check_same_bits(m.t() + b.narrow(0, 0, 2), (mg.t() + bg.narrow(0, 0, 2)).cpu(), "add broadcast " + name);
    Tensor in_place = a.clone(), in_place_g = ag.clone();
    in_place.add_(b);
    in_place_g.add_(bg);
    check_same_bits(in_place, in_place_g.cpu(), "add_ " + name);
  }
  Tensor p = a64 > 0, q = b64 > 0;
  Tensor pg = p.to(kGpu), qg = q.to(kGpu);
  check_same_bits(p + q, (pg + qg).cpu(), "add bool (or)");
  check_same_bits(p * q, (pg * qg).cpu(), "mul bool (and)");
  check_same_bits(gd::maximum(p, q), gd::maximum(pg, qg).cpu(), "maximum bool");
  check_same_bits(gd::minimum(p, q), gd::minimum(pg, qg).cpu(), "minimum bool");
}

TEST_CASE("cuda: tanh and sigmoid backward in float16 and bfloat16 round once from float32, as the CPU") {
  if (!gd::cuda::is_available()) return;
  for (gd::ScalarType dt : {gd::kFloat16, gd::kBFloat16}) {
    const std::string name(gd::dtype_name(dt));
    Tensor y = gd::tanh(draw({5, 7}, gd::kFloat32, 31)).to(dt);  // a tanh or sigmoid output, made on the CPU
    Tensor g = draw({5, 7}, gd::kFloat32, 32).to(dt);
    check_same_bits(gd::tanh_backward(g, y), gd::tanh_backward(g.to(kGpu), y.to(kGpu)).cpu(), "tanh_backward " + name);
    Tensor s = (y + 1) / 2;
    check_same_bits(gd::sigmoid_backward(g, s), gd::sigmoid_backward(g.to(kGpu), s.to(kGpu)).cpu(),
                    "sigmoid_backward " + name);
  }
}

TEST_CASE("cuda: eye, linspace and arange are made on the device with the CPU's values bit for bit") {
  if (!gd::cuda::is_available()) return;
  const auto on_gpu = [](gd::ScalarType dt) { return gd::TensorOptions().dtype(dt).device(kGpu); };
  const auto on_cpu = [](gd::ScalarType dt) { return gd::TensorOptions().dtype(dt); };
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kFloat16, gd::kBFloat16, gd::kInt64, gd::kInt32}) {
    const std::string name(gd::dtype_name(dt));
    for (auto [n, m] : {std::pair<int64_t, int64_t>{4, 4}, {3, 7}, {9, 2}, {0, 3}, {1, 1}})
      check_same_bits(gd::eye(n, m, on_cpu(dt)), gd::eye(n, m, on_gpu(dt)).cpu(), "eye " + name);
    for (int64_t steps : {0, 1, 2, 7, 100, 1001}) {
      check_same_bits(gd::linspace(-3.1, 2.7, steps, on_cpu(dt)), gd::linspace(-3.1, 2.7, steps, on_gpu(dt)).cpu(),
                      fmt::format("linspace {} steps {}", name, steps));
      check_same_bits(gd::linspace(5, -5, steps, on_cpu(dt)), gd::linspace(5, -5, steps, on_gpu(dt)).cpu(),
                      fmt::format("linspace down {} steps {}", name, steps));
    }
    check_same_bits(gd::arange(0.1, 5.3, 0.37, on_cpu(dt)), gd::arange(0.1, 5.3, 0.37, on_gpu(dt)).cpu(),
                    "arange float steps " + name);
    check_same_bits(gd::arange(-2, 40, 3, on_cpu(dt)), gd::arange(-2, 40, 3, on_gpu(dt)).cpu(),
                    "arange integer steps " + name);
    check_same_bits(gd::arange(10, 1.5, -0.5, on_cpu(dt)), gd::arange(10, 1.5, -0.5, on_gpu(dt)).cpu(),
                    "arange downward " + name);
  }
  check_same_bits(gd::eye(3, 5, on_cpu(gd::kBool)), gd::eye(3, 5, on_gpu(gd::kBool)).cpu(), "eye bool");
  // The default dtypes and requires_grad pass through.
  Tensor a = gd::arange(0.0, 1.0, 0.25, gd::TensorOptions().device(kGpu).requires_grad(true));
  CHECK(a.requires_grad());
  CHECK(a.dtype() == gd::get_default_dtype());
  check_same_bits(gd::arange(5), gd::arange(5, gd::TensorOptions().device(kGpu)).cpu(), "arange int64");
  Tensor big = gd::arange(0, 3000000, 7, gd::TensorOptions().dtype(gd::kInt64).device(kGpu));
  check_same_bits(gd::arange(0, 3000000, 7, on_cpu(gd::kInt64)), big.cpu(), "arange long");
}

TEST_CASE("cuda: nll_loss, cross_entropy and multi_margin_loss pick the target on the device") {
  if (!gd::cuda::is_available()) return;
  namespace F = gd::nn::functional;
  for (gd::ScalarType dt : kFloatTypes) {
    Tensor logits = draw({6, 5}, dt, 16);
    Tensor target = gd::tensor(std::vector<int64_t>{0, 4, 2, -100, 1, 4}, gd::kInt64);
    Tensor target_g = target.to(kGpu);
    const std::string name(gd::dtype_name(dt));
    for (gd::nn::Reduction reduction : {gd::kMean, gd::kSum, gd::kNone}) {
      check_forward_backward(
          [&](const Tensor& t) {
            return F::nll_loss(gd::log_softmax(t, 1), t.is_cuda() ? target_g : target,
                               F::NLLLossFuncOptions().reduction(reduction));
          },
          logits, "nll_loss " + name);
      check_forward_backward(
          [&](const Tensor& t) {
            return F::cross_entropy(t, t.is_cuda() ? target_g : target,
                                    F::CrossEntropyFuncOptions().label_smoothing(0.1).reduction(reduction));
          },
          logits, "cross_entropy " + name);
    }
    // A spatial target [N, d] with class dim 1 of [N, C, d].
    Tensor spatial = draw({2, 4, 3}, dt, 17);
    Tensor spatial_target = gd::tensor(std::vector<int64_t>{3, 0, 1, 2, 2, 0}, gd::kInt64).reshape({2, 3});
    check_forward_backward(
        [&](const Tensor& t) { return F::cross_entropy(t, t.is_cuda() ? spatial_target.to(kGpu) : spatial_target); },
        spatial, "cross_entropy spatial " + name);
    Tensor margin_target = gd::tensor(std::vector<int64_t>{0, 4, 2, 3, 1, 4}, gd::kInt64);
    check_forward_backward(
        [&](const Tensor& t) { return F::multi_margin_loss(t, t.is_cuda() ? margin_target.to(kGpu) : margin_target); },
        logits, "multi_margin_loss " + name);
  }
  // Out-of-range targets still give the CPU's error.
  Tensor logits = draw({2, 3}, gd::kFloat32, 18).to(kGpu);
  CHECK_THROWS_AS(F::nll_loss(logits, gd::tensor(std::vector<int64_t>{0, 3}, gd::kInt64).to(kGpu)), gd::Error);
}
