// index_fill/index_copy, scatter_reduce, unique/unique_consecutive,
// embedding_bag and Embedding's max_norm on the GPU against the same ops on the
// CPU: forward and backward (autograd::grad), float64 to 1e-12 and float32 to
// 1e-5, with repeated, negative and empty indices, 0-dim and strided inputs.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/cuda.h"
#include "engine/nn_ops.h"
#include "gradiens.h"
#include "nn/functional/embedding_bag.h"
#include "nn/modules/embedding.h"
#include "tests/cuda/cuda_checks.h"

namespace gd = gradiens;
namespace F = gradiens::nn::functional;
using gd::Tensor;

namespace {

const gd::Device kGpu("cuda:0");
const gd::Device kHost("cpu");
using V = std::vector<Tensor>;

Tensor i64(std::vector<int64_t> values, std::vector<int64_t> shape = {}) {
  Tensor t = values.empty() ? gd::empty({0}, gd::TensorOptions().dtype(gd::kInt64)) : gd::tensor(values, gd::kInt64);
  return shape.empty() ? t : t.reshape(shape);
}

double tolerance(gd::ScalarType dt) { return dt == gd::kFloat64 ? 1e-12 : 1e-5; }

Tensor draw(gd::IntArrayRef shape, gd::ScalarType dt, uint64_t seed = 3) {
  gd::manual_seed(seed);
  return gd::randn(shape, gd::TensorOptions().dtype(dt));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gd::Error& e) {
    return e.what();
  }
  return "";
}

// y = f(inputs, device) on both devices; the floating inputs are leaves that
// require grad, and d(sum(y * g))/d input for a random g is compared too.
void check_both(const std::function<Tensor(const V&, const gd::Device&)>& f, const V& inputs, const std::string& what,
                bool backward = true) {
  V cpu, gpu, cpu_leaves, gpu_leaves;
  for (const Tensor& t : inputs) {
    Tensor c = t.detach().clone(), g = t.detach().to(kGpu);
    // Keep the layout of a strided input on the GPU too.
    if (!t.is_contiguous() && t.dim() == 2) g = t.detach().t().contiguous().to(kGpu).t();
    if (backward && gd::is_floating_point(t.scalar_type())) {
      c.requires_grad_();
      g.requires_grad_();
      cpu_leaves.push_back(c);
      gpu_leaves.push_back(g);
    }
    cpu.push_back(c);
    gpu.push_back(g);
  }
  Tensor yc = f(cpu, kHost), yg = f(gpu, kGpu);
  CHECK(yg.device().is_cuda());
  const double tol = gd::is_floating_point(yc.scalar_type()) ? tolerance(yc.scalar_type()) : 0;
  gd::testing::check_matches(yc.detach(), yg.detach(), what + " forward", tol, tol);
  if (cpu_leaves.empty() || yc.numel() == 0 || !yc.requires_grad()) return;
  gd::manual_seed(11);
  Tensor g = gd::randn(yc.sizes(), gd::TensorOptions().dtype(yc.scalar_type()));
  V gc = gd::autograd::grad({yc}, cpu_leaves, {g}, false, false, true);
  V gg = gd::autograd::grad({yg}, gpu_leaves, {g.to(kGpu)}, false, false, true);
  for (size_t i = 0; i < gc.size(); ++i) {
    if (!gc[i].defined()) {
      CHECK_FALSE(gg[i].defined());
      continue;
    }
    gd::testing::check_matches(gc[i], gg[i], fmt::format("{} backward of input {}", what, i), tol, tol);
  }
}

const gd::ScalarType kFloatTypes[] = {gd::kFloat64, gd::kFloat32};

}  // namespace

TEST_CASE("cuda: index_fill and index_copy match the CPU, forward and backward") {
  for (gd::ScalarType dt : kFloatTypes) {
    const std::string name(gd::dtype_name(dt));
    Tensor x = draw({4, 5}, dt), strided = draw({5, 4}, dt, 4).t(), src = draw({4, 3}, dt, 5);
    Tensor value = draw({}, dt, 6);
    for (const Tensor& self : {x, strided}) {
      const std::string layout = self.is_contiguous() ? " contiguous" : " strided";
      check_both(
          [](const V& v, const gd::Device& d) {
            return v[0].index_fill(1, i64({3, -1, 0, 3}).to(d), 0.5);
          },
          {self}, "index_fill" + layout + " " + name);
      check_both(
          [](const V& v, const gd::Device& d) {
            return v[0].index_fill(0, i64({2, 2}).to(d), v[1]);
          },
          {self, value}, "index_fill (tensor value)" + layout + " " + name);
      check_both(
          [](const V& v, const gd::Device& d) {
            return v[0].index_copy(1, i64({4, 0, 2}).to(d), v[1]);
          },
          {self, src}, "index_copy" + layout + " " + name);
      check_both([](const V& v, const gd::Device& d) { return v[0].index_copy(1, i64({}).to(d), v[1]); },
                 {self, src.narrow(1, 0, 0)}, "index_copy (empty index)" + layout + " " + name);
    }
    check_both([](const V& v, const gd::Device& d) { return v[0].index_fill(0, i64({0}).to(d), -2.0); }, {draw({}, dt)},
               "index_fill 0-dim " + name);
    check_both(
        [](const V& v, const gd::Device& d) {
          Tensor y = v[0].clone();
          y.index_copy_(0, i64({1, 3}).to(d), v[1]);
          return y;
        },
        {draw({4, 3}, dt), draw({2, 3}, dt, 8)}, "index_copy_ " + name);
  }
  // Integers and a repeated index under deterministic algorithms (the last write wins, as on the CPU).
  gd::use_deterministic_algorithms(true);
  check_both(
      [](const V& v, const gd::Device& d) {
        return v[0].index_copy(0, i64({1, 1, 0}).to(d), v[1]);
      },
      {gd::zeros({3}, gd::kInt64), i64({5, 6, 7})}, "index_copy int64 repeated, deterministic");
  gd::use_deterministic_algorithms(false);
  Tensor g = gd::zeros({3, 4}, gd::TensorOptions().device(kGpu));
  CHECK(error_of([&] { g.index_fill(1, i64({4}).to(kGpu), 1); }) ==
        "index 4 is out of bounds for dimension 1 with size 4");
  CHECK(error_of([&] {
          g.index_copy(0, i64({3}).to(kGpu), gd::ones({1, 4}, gd::TensorOptions().device(kGpu)));
        }) == "index_copy_(): index 3 is out of bounds for dimension 0 with size 3");
}

TEST_CASE("cuda: scatter_reduce matches the CPU, forward and backward") {
  Tensor index = i64({3, 0, 3, 1, 1, 2, 0, 0, 0}, {3, 3});
  for (gd::ScalarType dt : kFloatTypes) {
    const std::string name(gd::dtype_name(dt));
    Tensor self = draw({3, 4}, dt), strided = draw({4, 3}, dt, 4).t(), src = draw({3, 3}, dt, 5);
    for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
      for (bool include_self : {true, false})
        for (const Tensor& s : {self, strided}) {
          const std::string what = fmt::format("scatter_reduce {}{} {} {}", reduce, include_self ? "" : " (no self)",
                                               s.is_contiguous() ? "contiguous" : "strided", name);
          check_both(
              [&](const V& v, const gd::Device& d) {
                return v[0].scatter_reduce(1, index.to(d), v[1], reduce, include_self);
              },
              {s, src}, what);
        }
    // src larger than index; an empty index; a 0-dim self.
    check_both(
        [&](const V& v, const gd::Device& d) {
          return v[0].scatter_reduce(0, i64({1, 1}).to(d), v[1], "amax");
        },
        {draw({3}, dt), draw({5}, dt, 9)}, "scatter_reduce src larger " + name);
    check_both([&](const V& v, const gd::Device& d) { return v[0].scatter_reduce(0, i64({}).to(d), v[1], "prod"); },
               {draw({3}, dt), draw({2}, dt, 9)}, "scatter_reduce empty index " + name);
    check_both([&](const V& v, const gd::Device& d) { return v[0].scatter_reduce(0, i64({0}).to(d), v[1], "mean"); },
               {draw({}, dt), draw({1}, dt, 9)}, "scatter_reduce 0-dim self " + name);
  }
  // Integers: exact on both devices, the mean rounding down.
  Tensor ints = i64({-5, 6, 7, 0}), int_src = i64({1, 2, -3, 4, 9});
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
    for (bool include_self : {true, false})
      check_both(
          [&](const V& v, const gd::Device& d) {
            return v[0].scatter_reduce(0, i64({0, 0, 1, 3, 1}).to(d), v[1], reduce, include_self);
          },
          {ints, int_src}, fmt::format("scatter_reduce int64 {} {}", reduce, include_self));
  // Deterministic sum: the CPU's bits.
  gd::use_deterministic_algorithms(true);
  Tensor many = draw({1000}, gd::kFloat32, 12);
  Tensor targets = gd::randint(0, 7, {1000}, gd::TensorOptions().dtype(gd::kInt64));
  Tensor c = gd::zeros({7}).scatter_reduce(0, targets, many, "sum");
  Tensor gpu =
      gd::zeros({7}, gd::TensorOptions().device(kGpu)).scatter_reduce(0, targets.to(kGpu), many.to(kGpu), "sum");
  gd::testing::check_same_bits(c, gpu, "scatter_reduce sum, deterministic");
  gd::use_deterministic_algorithms(false);
  Tensor g = gd::zeros({3}, gd::TensorOptions().device(kGpu));
  CHECK(error_of([&] {
          g.scatter_reduce(0, i64({3}).to(kGpu), gd::ones({1}, gd::TensorOptions().device(kGpu)), "amax");
        }) == "index 3 is out of bounds for dimension 0 with size 3");
}

TEST_CASE("cuda: unique and unique_consecutive match the CPU") {
  Tensor ints = gd::randint(-4, 5, {7, 6}, gd::TensorOptions().dtype(gd::kInt64));
  Tensor floats = draw({40}, gd::kFloat64).round();
  Tensor with_nan = gd::tensor(std::vector<double>{3, NAN, 1, 1, NAN, -0.0, 0.0}, gd::kFloat64);
  for (const Tensor& x :
       {ints, floats, with_nan, ints.t(), gd::empty({0}, gd::kFloat32), gd::scalar_tensor(2.0, gd::kFloat64)}) {
    const std::string what = fmt::format("unique {} dim={} numel={}{}", gd::dtype_name(x.scalar_type()), x.dim(),
                                         x.numel(), x.is_contiguous() ? "" : " strided");
    for (int part = 0; part < 3; ++part) {
      check_both(
          [part](const V& v, const gd::Device&) {
            auto r = gd::_unique2(v[0], true, true, true);
            return part == 0 ? std::get<0>(r) : part == 1 ? std::get<1>(r) : std::get<2>(r);
          },
          {x}, what + " part " + std::to_string(part), false);
      check_both(
          [part](const V& v, const gd::Device&) {
            auto r = gd::unique_consecutive(v[0], true, true);
            return part == 0 ? std::get<0>(r) : part == 1 ? std::get<1>(r) : std::get<2>(r);
          },
          {x}, "unique_consecutive " + what + " part " + std::to_string(part), false);
    }
  }
  Tensor rows = gd::randint(0, 2, {9, 3}, gd::TensorOptions().dtype(gd::kInt64));
  for (int64_t dim : {0, 1})
    for (int part = 0; part < 3; ++part)
      check_both(
          [dim, part](const V& v, const gd::Device&) {
            auto r = gd::unique_dim(v[0], dim, true, true, true);
            return part == 0 ? std::get<0>(r) : part == 1 ? std::get<1>(r) : std::get<2>(r);
          },
          {rows}, fmt::format("unique_dim {} part {}", dim, part), false);
}

TEST_CASE("cuda: embedding_bag matches the CPU, forward and backward") {
  Tensor input = i64({4, 0, 2, 1, 3, 0, 4, 4, 2});
  for (gd::ScalarType dt : kFloatTypes) {
    const std::string name(gd::dtype_name(dt));
    Tensor weight = draw({6, 5}, dt), psw = draw({9}, dt, 7);
    for (auto mode : {gd::nn::EmbeddingBagMode(gd::kSum), gd::nn::EmbeddingBagMode(gd::kMean), gd::kMax}) {
      for (bool last : {false, true})
        for (std::optional<int64_t> padding : {std::optional<int64_t>(), std::optional<int64_t>(0)}) {
          const std::string what =
              fmt::format("embedding_bag {} last={} padding={} {}", mode.name(), last, padding.has_value(), name);
          check_both(
              [&](const V& v, const gd::Device& d) {
                return F::embedding_bag(input.to(d), v[0],
                                        F::EmbeddingBagFuncOptions()
                                            .mode(mode)
                                            .offsets(i64({0, 3, 3, 7}).to(d))
                                            .include_last_offset(last)
                                            .padding_idx(padding));
              },
              {weight}, what);
        }
      check_both(
          [&](const V& v, const gd::Device& d) {
            return F::embedding_bag(input.narrow(0, 0, 8).reshape({2, 4}).to(d), v[0],
                                    F::EmbeddingBagFuncOptions().mode(mode));
          },
          {weight}, fmt::format("embedding_bag 2-D {} {}", mode.name(), name));
    }
    check_both(
        [&](const V& v, const gd::Device& d) {
          return F::embedding_bag(
              input.to(d), v[0],
              F::EmbeddingBagFuncOptions().mode(gd::kSum).offsets(i64({0, 2}).to(d)).per_sample_weights(v[1]));
        },
        {weight, psw}, "embedding_bag per_sample_weights " + name);
    check_both(
        [&](const V& v, const gd::Device& d) {
          return F::embedding_bag(
              input.to(d), v[0],
              F::EmbeddingBagFuncOptions().mode(gd::kSum).offsets(i64({0, 2}).to(d)).scale_grad_by_freq(true));
        },
        {weight}, "embedding_bag scale_grad_by_freq " + name);
  }
  // The module on the device, training a step like the CPU.
  gd::manual_seed(1);
  gd::nn::EmbeddingBag cpu_bag(gd::nn::EmbeddingBagOptions(6, 4).mode(gd::kSum));
  auto gpu_bag = gd::nn::EmbeddingBag::from_pretrained(
      cpu_bag->weight.detach().to(kGpu), gd::nn::EmbeddingBagFromPretrainedOptions().freeze(false).mode(gd::kSum));
  Tensor yc = cpu_bag->forward(input, i64({0, 4})), yg = gpu_bag->forward(input.to(kGpu), i64({0, 4}).to(kGpu));
  gd::testing::check_matches(yc.detach(), yg.detach(), "EmbeddingBag module forward", 1e-5, 1e-5);
  yc.square().sum().backward();
  yg.square().sum().backward();
  gd::testing::check_matches(cpu_bag->weight.grad(), gpu_bag->weight.grad(), "EmbeddingBag module backward", 1e-5,
                             1e-5);
}

TEST_CASE("cuda: Embedding's max_norm renormalizes a cuda weight like the CPU") {
  for (gd::ScalarType dt : kFloatTypes) {
    Tensor weight = draw({7, 4}, dt) * 3.0;
    Tensor indices = i64({1, 5, 1, -1, 0, 6});
    Tensor c = weight.clone(), g = weight.to(kGpu);
    F::embedding_renorm_(c, indices, 1.5, 2.0);
    F::embedding_renorm_(g, indices.to(kGpu), 1.5, 2.0);
    CHECK(g.device().is_cuda());
    gd::testing::check_matches(c, g, fmt::format("embedding_renorm_ {}", gd::dtype_name(dt)), tolerance(dt),
                               tolerance(dt));
    // Through the module, with an out-of-range index named as on the CPU.
    gd::nn::Embedding emb(gd::nn::EmbeddingOptions(7, 4).max_norm(1.0));
    emb->to(kGpu);
    Tensor out = emb->forward(i64({2, 3}).to(kGpu));
    CHECK(out.device().is_cuda());
    Tensor bad_c = weight.clone(), bad_g = weight.to(kGpu);
    CHECK(error_of([&] { F::embedding_renorm_(bad_g, i64({9}).to(kGpu), 1.0, 2.0); }) ==
          error_of([&] { F::embedding_renorm_(bad_c, i64({9}), 1.0, 2.0); }));
  }
}
