// The indexing family on the GPU against the same ops on the CPU: index and
// index_put_, scatter/gather, index_select/index_add, masks, nonzero, sort,
// topk, kthvalue, median, cumsum/cumprod, flip and embedding, forward and
// backward, with duplicates, negative and broadcast indices, ties, NaN, empty
// and strided inputs; out-of-range indices give the CPU's errors; an
// Embedding + Linear model trains the same on both devices.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/cuda.h"
#include "gradiens.h"
#include "tests/cuda/cuda_checks.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::indexing::None;
using gd::indexing::Slice;

namespace {

const gd::Device kGpu("cuda:0");

Tensor i64(std::vector<int64_t> values, std::vector<int64_t> shape = {}) {
  Tensor t = values.empty() ? gd::empty({0}, gd::TensorOptions().dtype(gd::kInt64)) : gd::tensor(values, gd::kInt64);
  return shape.empty() ? t : t.reshape(shape);
}

// Values within atol + rtol |cpu| (equal ones by default), NaN in the same places.
void check_close(const Tensor& cpu, const Tensor& gpu, const std::string& what, double rtol = 0, double atol = 0) {
  gd::testing::check_matches(cpu, gpu, what, rtol, atol);
}
using gd::testing::check_same_bits;

double rtol_of(gd::ScalarType dt) { return dt == gd::kFloat64 ? 1e-12 : 1e-5; }

// The message of the gradiens::Error f throws ("" when it throws none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gd::Error& e) {
    return e.what();
  }
  return "";
}

// A floating tensor of `shape` with values drawn on the CPU.
Tensor draw(gd::IntArrayRef shape, gd::ScalarType dt, uint64_t seed = 3) {
  gd::manual_seed(seed);
  return gd::randn(shape, gd::TensorOptions().dtype(dt));
}

// y = f(x) on both devices, and d(sum(y * g))/dx for a random g: forward exact
// (a gather moves values), backward to rtol (atomicAdd orders sums freely).
void check_forward_backward(const std::function<Tensor(const Tensor&)>& f, const Tensor& x_cpu,
                            const std::string& what) {
  Tensor xc = x_cpu.detach().clone().requires_grad_();
  Tensor xg = x_cpu.detach().to(kGpu).requires_grad_();
  Tensor yc = f(xc), yg = f(xg);
  check_same_bits(yc.detach(), yg.detach(), what + " forward");
  if (yc.numel() == 0) return;
  gd::manual_seed(11);
  Tensor g = gd::randn(yc.sizes(), gd::TensorOptions().dtype(yc.dtype()));
  Tensor gc = gd::autograd::grad({yc}, {xc}, {g})[0];
  Tensor gg = gd::autograd::grad({yg}, {xg}, {g.to(kGpu)})[0];
  check_close(gc, gg, what + " backward", rtol_of(x_cpu.dtype()), rtol_of(x_cpu.dtype()));
}

const gd::ScalarType kFloatTypes[] = {gd::kFloat64, gd::kFloat32};

}  // namespace

TEST_CASE("cuda: index with tensors and masks matches the CPU, forward and backward") {
  for (gd::ScalarType dt : kFloatTypes) {
    Tensor x = draw({4, 5, 3}, dt);
    Tensor strided = draw({3, 5, 4}, dt).transpose(0, 2);  // [4, 5, 3], not contiguous
    Tensor i = i64({2, 0, -1, 2});                          // negative and repeated
    Tensor k = i64({1, -2, 0, 4});
    Tensor column = i64({0, 3, 1}, {3, 1});                 // broadcasts with k against [3, 4]
    Tensor m = gd::tensor(std::vector<bool>{true, false, true, true, false});
    Tensor m2 = draw({4, 5}, dt) > 0.0;
    struct Case {
      const char* name;
      std::function<Tensor(const Tensor&, const gd::Device&)> fn;
    };
    std::vector<Case> cases = {
        {"x[i]", [&](const Tensor& t, const gd::Device& d) { return t.index({i.to(d)}); }},
        {"x[:, k]", [&](const Tensor& t, const gd::Device& d) { return t.index({Slice(), k.to(d)}); }},
        {"x[i, k] (adjacent)", [&](const Tensor& t, const gd::Device& d) { return t.index({i.to(d), k.to(d)}); }},
        {"x[i, :, k.remainder] (separated)",
         [&](const Tensor& t, const gd::Device& d) { return t.index({i.to(d), Slice(), i64({0, 2, 1, 1}).to(d)}); }},
        {"x[column, k] (broadcast)",
         [&](const Tensor& t, const gd::Device& d) { return t.index({column.to(d), k.to(d)}); }},
        {"x[1, None, k]", [&](const Tensor& t, const gd::Device& d) { return t.index({1, None, k.to(d)}); }},
        {"x[:, m] (mask)", [&](const Tensor& t, const gd::Device& d) { return t.index({Slice(), m.to(d)}); }},
        {"x[m2] (2-D mask)", [&](const Tensor& t, const gd::Device& d) { return t.index({m2.to(d)}); }},
        {"x[cpu index] on the GPU", [&](const Tensor& t, const gd::Device&) { return t.index({i}); }},
        {"x[empty]", [&](const Tensor& t, const gd::Device& d) { return t.index({i64({}).to(d)}); }},
    };
    for (const Case& c : cases) {
      for (const Tensor& input : {x, strided}) {
        const std::string what = fmt::format("{} {} {}", c.name, gd::dtype_name(dt),
                                             input.is_contiguous() ? "contiguous" : "strided");
        Tensor xc = input.detach().clone().requires_grad_();
        Tensor xg = input.detach().to(kGpu).requires_grad_();
        Tensor yc = c.fn(xc, gd::Device(gd::kCPU)), yg = c.fn(xg, kGpu);
        check_same_bits(yc.detach(), yg.detach(), what + " forward");
        if (yc.numel() == 0) continue;
        gd::manual_seed(5);
        Tensor g = gd::randn(yc.sizes(), gd::TensorOptions().dtype(dt));
        Tensor gc = gd::autograd::grad({yc}, {xc}, {g})[0];
        Tensor gg = gd::autograd::grad({yg}, {xg}, {g.to(kGpu)})[0];
        check_close(gc, gg, what + " backward", rtol_of(dt), rtol_of(dt));
      }
    }
  }
}

TEST_CASE("cuda: index_put_ with set and accumulate matches the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kInt64}) {
    Tensor base = dt == gd::kInt64 ? gd::randint(-50, 50, {6, 4}, gd::TensorOptions().dtype(gd::kInt64))
                                   : draw({6, 4}, dt);
    Tensor rows = i64({5, 0, -2});  // distinct rows for the set form
    Tensor dup = i64({1, 3, 1, 1, -1, 3});
    Tensor values = (dt == gd::kInt64 ? gd::arange(24, gd::TensorOptions().dtype(dt)) : draw({24}, dt, 9))
                        .reshape({6, 4});
    const std::string name(gd::dtype_name(dt));
    {
      Tensor c = base.clone(), g = base.to(kGpu);
      c.index_put_({rows}, values.narrow(0, 0, 3));
      g.index_put_({rows.to(kGpu)}, values.narrow(0, 0, 3).to(kGpu));
      check_same_bits(c, g, "index_put_ set " + name);
    }
    {
      Tensor c = base.clone(), g = base.to(kGpu);
      c.index_put_({dup}, values, true);
      g.index_put_({dup}, values.to(kGpu), true);  // a CPU index on a cuda tensor
      check_close(c, g, "index_put_ accumulate with duplicates " + name, rtol_of(dt), rtol_of(dt));
    }
    {
      Tensor c = base.clone(), g = base.to(kGpu);
      c.index_put_({Slice(), i64({2, 0})}, gd::Scalar(7));  // a scalar value, broadcast
      g.index_put_({Slice(), i64({2, 0}).to(kGpu)}, gd::Scalar(7));
      check_same_bits(c, g, "index_put_ scalar " + name);
    }
    {
      Tensor mask = base > 0;
      Tensor c = base.clone(), g = base.to(kGpu);
      c.index_put_({mask}, gd::Scalar(-1));
      g.index_put_({mask.to(kGpu)}, gd::Scalar(-1));
      check_same_bits(c, g, "index_put_ through a mask " + name);
    }
  }
  // Differentiable: gradients for self and values.
  for (gd::ScalarType dt : kFloatTypes) {
    Tensor dup = i64({1, 3, 1, 0});
    Tensor v = draw({4, 3}, dt, 21);
    for (bool accumulate : {false, true}) {
      auto f = [&](const Tensor& x, const Tensor& values, const gd::Device& d) {
        Tensor y = x * 1.0;  // a non-leaf: the in-place put is recorded
        y.index_put_({accumulate ? dup.to(d) : i64({1, 3, 2, 0}).to(d)}, values, accumulate);
        return y;
      };
      Tensor xc = draw({5, 3}, dt).requires_grad_(), vc = v.clone().requires_grad_();
      Tensor xg = xc.detach().to(kGpu).requires_grad_(), vg = v.to(kGpu).requires_grad_();
      Tensor yc = f(xc, vc, gd::Device(gd::kCPU)), yg = f(xg, vg, kGpu);
      const std::string what = fmt::format("index_put accumulate={} {}", accumulate, gd::dtype_name(dt));
      check_close(yc.detach(), yg.detach(), what + " forward", rtol_of(dt), rtol_of(dt));
      Tensor g = draw({5, 3}, dt, 8);
      auto gc = gd::autograd::grad({yc}, {xc, vc}, {g});
      auto gg = gd::autograd::grad({yg}, {xg, vg}, {g.to(kGpu)});
      check_close(gc[0], gg[0], what + " grad self", rtol_of(dt), rtol_of(dt));
      check_close(gc[1], gg[1], what + " grad values", rtol_of(dt), rtol_of(dt));
    }
  }
}

namespace {
// Turns use_deterministic_algorithms on for a scope (restored even when a REQUIRE fails).
struct DeterministicScope {
  bool was = gd::are_deterministic_algorithms_enabled();
  DeterministicScope() { gd::use_deterministic_algorithms(true); }
  ~DeterministicScope() { gd::use_deterministic_algorithms(was); }
};
}  // namespace

TEST_CASE("cuda: deterministic scatters give the CPU's bits, the same twice") {
  DeterministicScope deterministic;
  for (gd::ScalarType dt : kFloatTypes) {
    const std::string name(gd::dtype_name(dt));
    gd::manual_seed(2);
    Tensor index = gd::randint(0, 7, {5000}, gd::TensorOptions().dtype(gd::kInt64));  // many duplicates
    Tensor values = draw({5000, 3}, dt, 4);
    Tensor base = draw({7, 3}, dt, 6);
    Tensor cpu = base.clone();
    cpu.index_put_({index}, values, true);
    Tensor first = base.to(kGpu), second = base.to(kGpu);
    first.index_put_({index.to(kGpu)}, values.to(kGpu), true);
    second.index_put_({index.to(kGpu)}, values.to(kGpu), true);
    check_same_bits(cpu, first, "index_put_ accumulate " + name);
    check_same_bits(first.cpu(), second, "index_put_ accumulate twice " + name);

    // Set with duplicates: the last write wins, as in the CPU's serial loop.
    Tensor set_cpu = base.clone();
    set_cpu.index_put_({index}, values);
    Tensor set_gpu = base.to(kGpu);
    set_gpu.index_put_({index.to(kGpu)}, values.to(kGpu));
    check_same_bits(set_cpu, set_gpu, "index_put_ set with duplicates " + name);

    Tensor scatter_index = index.reshape({1000, 5}).narrow(1, 0, 3);
    Tensor src = values.reshape({1000, 15}).narrow(1, 0, 3);
    Tensor sc = gd::scatter_add(base, 0, scatter_index, src);
    Tensor sg1 = gd::scatter_add(base.to(kGpu), 0, scatter_index.to(kGpu), src.to(kGpu));
    Tensor sg2 = gd::scatter_add(base.to(kGpu), 0, scatter_index.to(kGpu), src.to(kGpu));
    check_same_bits(sc, sg1, "scatter_add " + name);
    check_same_bits(sg1.cpu(), sg2, "scatter_add twice " + name);
    check_same_bits(gd::scatter(base, 0, scatter_index, src),
                    gd::scatter(base.to(kGpu), 0, scatter_index.to(kGpu), src.to(kGpu)),
                    "scatter with duplicates " + name);

    Tensor ac = gd::index_add(base, 0, index, values, 0.5);
    Tensor ag = gd::index_add(base.to(kGpu), 0, index.to(kGpu), values.to(kGpu), 0.5);
    check_same_bits(ac, ag, "index_add alpha 0.5 " + name);
  }
}

TEST_CASE("cuda: gather, scatter, scatter_add, index_select and index_add match the CPU") {
  for (gd::ScalarType dt : kFloatTypes) {
    const std::string name(gd::dtype_name(dt));
    Tensor x = draw({4, 6}, dt);
    Tensor xt = draw({6, 4}, dt).t();  // strided
    Tensor index = i64({0, 5, 5, 2, 1, 1, 3, 0}, {2, 4});
    Tensor index_t = i64({3, 0, 0, 2, 1, 3}, {3, 2}).t();  // strided [2, 3]
    Tensor rows = i64({3, 0, 3});
    for (const Tensor& input : {x, xt}) {
      const std::string layout = input.is_contiguous() ? " contiguous" : " strided";
      check_forward_backward([&](const Tensor& t) { return t.gather(1, t.device().is_cuda() ? index.to(kGpu) : index); },
                             input, "gather dim 1 " + name + layout);
      check_forward_backward(
          [&](const Tensor& t) { return t.gather(0, t.device().is_cuda() ? index_t.to(kGpu) : index_t); }, input,
          "gather dim 0, strided index " + name + layout);
      check_forward_backward([&](const Tensor& t) { return t.index_select(0, t.device().is_cuda() ? rows.to(kGpu) : rows); },
                             input, "index_select dim 0 " + name + layout);
      check_forward_backward(
          [&](const Tensor& t) {
            Tensor cols = i64({5, 1, -0}).to(gd::kInt32);
            return t.index_select(1, t.device().is_cuda() ? cols.to(kGpu) : cols);
          },
          input, "index_select dim 1, int32 index " + name + layout);
    }
    // scatter / scatter_add / index_add with gradients for self and src.
    Tensor src = draw({2, 4}, dt, 12);
    Tensor distinct = i64({0, 5, 3, 2, 1, 4, 3, 0}, {2, 4});  // no repeats within a row: set is well defined
    struct Case {
      const char* name;
      std::function<Tensor(const Tensor&, const Tensor&, const gd::Device&)> fn;
      Tensor source;
    };
    std::vector<Case> cases = {
        {"scatter", [&](const Tensor& s, const Tensor& v, const gd::Device& d) { return s.scatter(1, distinct.to(d), v); },
         src},
        {"scatter value",
         [&](const Tensor& s, const Tensor& v, const gd::Device& d) { return s.scatter(1, distinct.to(d), 2.5) + v.sum(); },
         src},
        {"scatter_add",
         [&](const Tensor& s, const Tensor& v, const gd::Device& d) { return s.scatter_add(1, index.to(d), v); }, src},
        {"index_add dim 1",
         [&](const Tensor& s, const Tensor& v, const gd::Device& d) {
           return s.index_add(1, i64({5, 0, 5}).to(d), v.narrow(1, 0, 3).t().t(), 2.0);
         },
         draw({4, 3}, dt, 13)},
        {"index_add dim 0",
         [&](const Tensor& s, const Tensor& v, const gd::Device& d) { return s.index_add(0, i64({3, 3}).to(d), v); },
         draw({2, 6}, dt, 14)},
    };
    for (const Case& c : cases) {
      const std::string what = std::string(c.name) + " " + name;
      Tensor sc = x.clone().requires_grad_(), vc = c.source.clone().requires_grad_();
      Tensor sg = x.to(kGpu).requires_grad_(), vg = c.source.to(kGpu).requires_grad_();
      Tensor yc = c.fn(sc, vc, gd::Device(gd::kCPU)), yg = c.fn(sg, vg, kGpu);
      check_close(yc.detach(), yg.detach(), what + " forward", rtol_of(dt), rtol_of(dt));
      Tensor g = draw(yc.sizes(), dt, 15);
      auto gc = gd::autograd::grad({yc}, {sc, vc}, {g});
      auto gg = gd::autograd::grad({yg}, {sg, vg}, {g.to(kGpu)});
      check_close(gc[0], gg[0], what + " grad self", rtol_of(dt), rtol_of(dt));
      check_close(gc[1], gg[1], what + " grad src", rtol_of(dt), rtol_of(dt));
    }
  }
  // Integers: exact, atomics included.
  Tensor xi = gd::randint(-9, 9, {5, 4}, gd::TensorOptions().dtype(gd::kInt64));
  Tensor index = i64({4, 4, 0, 4, 1, 1, 2, 3}, {2, 4});
  Tensor src = gd::randint(-9, 9, {2, 4}, gd::TensorOptions().dtype(gd::kInt64));
  check_same_bits(xi.gather(0, index), xi.to(kGpu).gather(0, index.to(kGpu)), "gather int64");
  check_same_bits(xi.scatter_add(0, index, src), xi.to(kGpu).scatter_add(0, index.to(kGpu), src.to(kGpu)),
                  "scatter_add int64");
  check_same_bits(xi.index_add(0, i64({4, 4}), src, 3), xi.to(kGpu).index_add(0, i64({4, 4}).to(kGpu), src.to(kGpu), 3),
                  "index_add int64 alpha 3");
  check_same_bits(xi.index_select(1, i64({3, 3, 0})), xi.to(kGpu).index_select(1, i64({3, 3, 0}).to(kGpu)),
                  "index_select int64");
  // Empty index tensors and 0-dim tensors.
  Tensor x0 = gd::scalar_tensor(4.5, gd::TensorOptions().dtype(gd::kFloat64));
  check_same_bits(x0.gather(0, i64({0})), x0.to(kGpu).gather(0, i64({0}).to(kGpu)), "gather 0-dim");
  check_same_bits(x0.index_select(0, i64({0})), x0.to(kGpu).index_select(0, i64({0}).to(kGpu)),
                  "index_select 0-dim");
  Tensor x2 = draw({3, 2}, gd::kFloat64);
  Tensor none = i64({}).reshape({0, 2});
  check_same_bits(x2.gather(0, none), x2.to(kGpu).gather(0, none.to(kGpu)), "gather with an empty index");
  check_same_bits(x2.scatter_add(0, none, x2), x2.to(kGpu).scatter_add(0, none.to(kGpu), x2.to(kGpu)),
                  "scatter_add with an empty index");
  check_same_bits(x2.index_select(0, i64({})), x2.to(kGpu).index_select(0, i64({}).to(kGpu)),
                  "index_select with an empty index");
  // gather, scatter and index_select keep PyTorch's same-device rule.
  CHECK_THROWS_AS(x2.to(kGpu).gather(0, i64({0, 1}, {1, 2})), gd::Error);
  CHECK_THROWS_AS(x2.to(kGpu).index_select(0, i64({0})), gd::Error);
  CHECK_THROWS_AS(x2.to(kGpu).scatter(0, i64({0, 1}, {1, 2}), 1.0), gd::Error);
}

TEST_CASE("cuda: out-of-range indices are errors with the CPU's messages") {
  Tensor x = draw({3, 4}, gd::kFloat64);
  Tensor xg = x.to(kGpu);
  struct Case {
    const char* name;
    std::function<void(const Tensor&, const gd::Device&)> fn;
  };
  std::vector<Case> cases = {
      {"gather", [](const Tensor& t, const gd::Device& d) { t.gather(1, i64({0, 4, 1}, {1, 3}).to(d)); }},
      {"gather negative", [](const Tensor& t, const gd::Device& d) { t.gather(0, i64({-1}, {1, 1}).to(d)); }},
      {"scatter", [](const Tensor& t, const gd::Device& d) { t.scatter(0, i64({3}, {1, 1}).to(d), 1.0); }},
      {"scatter_add",
       [](const Tensor& t, const gd::Device& d) { t.scatter_add(1, i64({9}, {1, 1}).to(d), t.narrow(1, 0, 1)); }},
      {"index_select", [](const Tensor& t, const gd::Device& d) { t.index_select(0, i64({1, 3, 7}).to(d)); }},
      {"index_add",
       [](const Tensor& t, const gd::Device& d) { t.index_add(1, i64({4}).to(d), t.narrow(1, 0, 1)); }},
      {"index", [](const Tensor& t, const gd::Device& d) { t.index({Slice(), i64({0, -5, 9}).to(d)}); }},
      {"index_put_",
       [](const Tensor& t, const gd::Device& d) {
         Tensor c = t.clone();
         c.index_put_({i64({3}).to(d)}, gd::Scalar(1.0));
       }},
      {"embedding", [](const Tensor& t, const gd::Device& d) { gd::embedding(t, i64({0, 3}).to(d), -1); }},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string on_cpu = error_of([&] { c.fn(x, gd::Device(gd::kCPU)); });
    const std::string on_gpu = error_of([&] { c.fn(xg, kGpu); });
    CHECK(!on_cpu.empty());
    CHECK(on_gpu == on_cpu);
  }
  // The device is still usable.
  check_same_bits(x.sum({1}), xg.sum({1}), "a reduction after the errors");
}

TEST_CASE("cuda: masked_select, masked_fill, nonzero and where(condition) match the CPU") {
  const double nan = std::nan("");
  Tensor x = gd::tensor(std::vector<double>{0.0, -0.0, 1.5, nan, 0.0, -2.0, 3.0, 0.0, 4.0, 0.0, 0.0, 7.0})
                 .reshape({3, 4});
  Tensor xt = x.t();
  for (const Tensor& t : {x, xt, x.to(gd::kFloat32), x.to(gd::kInt64), x.ne(0)}) {
    const std::string what = fmt::format("{} {}", gd::dtype_name(t.dtype()), t.is_contiguous() ? "" : "transposed");
    check_same_bits(gd::nonzero(t), gd::nonzero(t.to(kGpu)), "nonzero " + what);
    auto wc = gd::where(t);
    auto wg = gd::where(t.to(kGpu));
    REQUIRE(wc.size() == wg.size());
    for (size_t k = 0; k < wc.size(); ++k) check_same_bits(wc[k], wg[k], "where(condition) " + what);
  }
  check_same_bits(gd::nonzero(gd::zeros({0, 3})), gd::nonzero(gd::zeros({0, 3}, gd::TensorOptions().device(kGpu))),
                  "nonzero of an empty tensor");
  check_same_bits(gd::nonzero(gd::zeros({2, 2})), gd::nonzero(gd::zeros({2, 2}, gd::TensorOptions().device(kGpu))),
                  "nonzero of zeros");
  Tensor s = gd::scalar_tensor(2.0, gd::TensorOptions().dtype(gd::kFloat64));
  check_same_bits(gd::nonzero(s), gd::nonzero(s.to(kGpu)), "nonzero 0-dim");
  Tensor big = draw({1000, 300}, gd::kFloat32) > 1.0;
  check_same_bits(gd::nonzero(big), gd::nonzero(big.to(kGpu)), "nonzero of 300000 elements");

  for (gd::ScalarType dt : kFloatTypes) {
    Tensor v = draw({3, 4}, dt);
    Tensor mask = draw({3, 4}, dt, 8) > 0.0;
    Tensor row_mask = gd::tensor(std::vector<bool>{true, false, false, true});  // broadcast over rows
    check_forward_backward([&](const Tensor& t) { return t.masked_select(t.device().is_cuda() ? mask.to(kGpu) : mask); },
                           v, fmt::format("masked_select {}", gd::dtype_name(dt)));
    check_forward_backward(
        [&](const Tensor& t) { return t.masked_select(t.device().is_cuda() ? row_mask.to(kGpu) : row_mask); },
        v.t().contiguous().t(), fmt::format("masked_select broadcast mask, strided {}", gd::dtype_name(dt)));
    check_forward_backward(
        [&](const Tensor& t) { return t.masked_fill(t.device().is_cuda() ? mask.to(kGpu) : mask, -3.0); }, v,
        fmt::format("masked_fill {}", gd::dtype_name(dt)));
    Tensor c = v.clone(), g = v.to(kGpu);
    c.masked_fill_(mask, 9.0);
    g.masked_fill_(mask.to(kGpu), 9.0);
    check_same_bits(c, g, fmt::format("masked_fill_ {}", gd::dtype_name(dt)));
  }
}

TEST_CASE("cuda: sort, argsort, topk, kthvalue and median match the CPU, ties and NaN included") {
  const double nan = std::nan("");
  const double inf = INFINITY;
  // Ties, signed zeros, infinities and NaN (both signs) in each line.
  Tensor special = gd::tensor(std::vector<double>{3.0, nan, -0.0, 1.0, 0.0, 1.0, -inf, -nan, inf, 1.0, 3.0, 0.0,
                                                  2.0, 2.0, 2.0, nan, -1.0, 5.0, 2.0, -0.0, inf, -inf, 0.0, 2.0})
                       .reshape({2, 12});
  gd::manual_seed(9);
  Tensor ints = gd::randint(-4, 4, {5, 37}, gd::TensorOptions().dtype(gd::kInt64));  // many ties
  std::vector<std::pair<std::string, Tensor>> inputs = {
      {"special f64", special},
      {"special f32", special.to(gd::kFloat32)},
      {"special transposed", special.t().contiguous().t()},
      {"random f64 3-D", draw({3, 7, 5}, gd::kFloat64)},
      {"int64 ties", ints},
      {"int32 ties", ints.to(gd::kInt32)},
      {"long line f32", draw({2, 5000}, gd::kFloat32)},
  };
  for (const auto& [name, x] : inputs) {
    for (int64_t dim : {int64_t{-1}, int64_t{0}}) {
      for (bool descending : {false, true}) {
        const std::string what = fmt::format("{} dim {} descending {}", name, dim, descending);
        auto [vc, ic] = gd::sort(x, dim, descending);
        auto [vg, ig] = gd::sort(x.to(kGpu), dim, descending);
        check_same_bits(vc, vg, "sort values " + what);
        check_same_bits(ic, ig, "sort indices " + what);
        check_same_bits(gd::argsort(x, dim, descending), gd::argsort(x.to(kGpu), dim, descending), "argsort " + what);
        const int64_t k = std::min<int64_t>(3, x.size(dim));
        auto [tc, tic] = gd::topk(x, k, dim, descending);
        auto [tg, tig] = gd::topk(x.to(kGpu), k, dim, descending);
        check_same_bits(tc, tg, "topk values " + what);
        check_same_bits(tic, tig, "topk indices " + what);
      }
      const std::string what = fmt::format("{} dim {}", name, dim);
      auto [kc, kic] = gd::kthvalue(x, 2, dim);
      auto [kg, kig] = gd::kthvalue(x.to(kGpu), 2, dim);
      check_same_bits(kc, kg, "kthvalue values " + what);
      check_same_bits(kic, kig, "kthvalue indices " + what);
      auto [mc, mic] = gd::median(x, dim, true);
      auto [mg, mig] = gd::median(x.to(kGpu), dim, true);
      check_same_bits(mc, mg, "median values " + what);
      check_same_bits(mic, mig, "median indices " + what);
    }
    check_same_bits(gd::median(x), gd::median(x.to(kGpu)), "median of all " + name);
  }
  Tensor flags = gd::tensor(std::vector<bool>{true, false, true, false, false, true});
  auto [bc, bic] = gd::sort(flags);
  auto [bg, big] = gd::sort(flags.to(kGpu));
  check_same_bits(bc, bg, "sort bool values");
  check_same_bits(bic, big, "sort bool indices");
  // Empty lines, 0-dim and k = 0.
  Tensor empty = gd::zeros({3, 0});
  check_same_bits(std::get<1>(gd::sort(empty, 1)), std::get<1>(gd::sort(empty.to(kGpu), 1)), "sort of empty lines");
  check_same_bits(std::get<1>(gd::sort(gd::zeros({0, 4}), 1)),
                  std::get<1>(gd::sort(gd::zeros({0, 4}, gd::TensorOptions().device(kGpu)), 1)), "sort of no lines");
  Tensor s = gd::scalar_tensor(1.5);
  check_same_bits(std::get<0>(gd::sort(s)), std::get<0>(gd::sort(s.to(kGpu))), "sort 0-dim");
  check_same_bits(std::get<1>(gd::topk(special, 0)), std::get<1>(gd::topk(special.to(kGpu), 0)), "topk k = 0");
  // Gradients flow through the gathered values.
  for (gd::ScalarType dt : kFloatTypes) {
    Tensor x = draw({4, 9}, dt);
    check_forward_backward([](const Tensor& t) { return std::get<0>(gd::sort(t, 1, true)); }, x,
                           fmt::format("sort backward {}", gd::dtype_name(dt)));
    check_forward_backward([](const Tensor& t) { return std::get<0>(gd::topk(t, 4, 0)); }, x,
                           fmt::format("topk backward {}", gd::dtype_name(dt)));
    check_forward_backward([](const Tensor& t) { return std::get<0>(gd::kthvalue(t, 3, 1)); }, x,
                           fmt::format("kthvalue backward {}", gd::dtype_name(dt)));
    check_forward_backward([](const Tensor& t) { return gd::median(t); }, x,
                           fmt::format("median backward {}", gd::dtype_name(dt)));
  }
  // quantile (sort and gather on the device).
  Tensor q = draw({5, 8}, gd::kFloat64);
  check_close(gd::quantile(q, 0.3, 1), gd::quantile(q.to(kGpu), 0.3, 1), "quantile", 1e-15, 1e-15);
}

TEST_CASE("cuda: cumsum, cumprod and flip match the CPU, forward and backward") {
  for (gd::ScalarType dt : kFloatTypes) {
    const std::string name(gd::dtype_name(dt));
    Tensor x = draw({4, 6, 3}, dt);
    Tensor strided = draw({3, 6, 4}, dt).transpose(0, 2);
    for (const Tensor& input : {x, strided}) {
      for (int64_t dim : {0, 1, 2}) {
        const std::string what = fmt::format("{} dim {} {}", name, dim, input.is_contiguous() ? "" : "strided");
        // The accumulation is serial in double, as on the CPU: the same bits.
        check_same_bits(gd::cumsum(input, dim), gd::cumsum(input.to(kGpu), dim), "cumsum " + what);
        check_same_bits(gd::cumprod(input, dim), gd::cumprod(input.to(kGpu), dim), "cumprod " + what);
        check_forward_backward([dim](const Tensor& t) { return gd::cumsum(t, dim); }, input, "cumsum grad " + what);
        check_forward_backward([dim](const Tensor& t) { return gd::cumprod(t, dim); }, input, "cumprod grad " + what);
        check_same_bits(gd::flip(input, {dim}), gd::flip(input.to(kGpu), {dim}), "flip " + what);
      }
    }
    // cumprod's backward at zeros (one and two zeros in a line).
    Tensor zeros_in = draw({3, 5}, dt);
    zeros_in.select(0, 0).select(0, 2).fill_(0);
    zeros_in.select(0, 1).select(0, 1).fill_(0);
    zeros_in.select(0, 1).select(0, 3).fill_(0);
    check_forward_backward([](const Tensor& t) { return gd::cumprod(t, 1); }, zeros_in, "cumprod with zeros " + name);
    check_same_bits(gd::flip(x, {0, 2}), gd::flip(x.to(kGpu), {0, 2}), "flip two dims " + name);
  }
  gd::manual_seed(4);
  Tensor ints = gd::randint(-1000, 1000, {7, 50}, gd::TensorOptions().dtype(gd::kInt64));
  check_same_bits(gd::cumsum(ints, 1), gd::cumsum(ints.to(kGpu), 1), "cumsum int64");
  check_same_bits(gd::cumprod(ints, 1), gd::cumprod(ints.to(kGpu), 1), "cumprod int64 (wrapping)");
  check_same_bits(gd::cumsum(ints.to(gd::kInt32), 0), gd::cumsum(ints.to(gd::kInt32).to(kGpu), 0), "cumsum int32");
  Tensor flags = ints > 0;
  check_same_bits(gd::cumsum(flags, 1), gd::cumsum(flags.to(kGpu), 1), "cumsum bool");
  Tensor empty = gd::zeros({0, 3});
  check_same_bits(gd::cumsum(empty, 0), gd::cumsum(empty.to(kGpu), 0), "cumsum empty");
  Tensor s = gd::scalar_tensor(2.5);
  check_same_bits(gd::cumsum(s, 0), gd::cumsum(s.to(kGpu), 0), "cumsum 0-dim");
  Tensor repeats = i64({2, 0, 3});
  Tensor base = draw({3, 2}, gd::kFloat64);
  check_same_bits(base.repeat_interleave(repeats, 0), base.to(kGpu).repeat_interleave(repeats.to(kGpu), 0),
                  "repeat_interleave with tensor repeats");
}

TEST_CASE("cuda: embedding with padding_idx and its gradient match the CPU") {
  for (gd::ScalarType dt : kFloatTypes) {
    Tensor weight = draw({10, 4}, dt);
    Tensor ids = i64({1, 3, 3, 0, 9, 1, 3, 7}, {2, 4});
    for (int64_t padding : {int64_t{-1}, int64_t{3}}) {
      const std::string what = fmt::format("embedding {} padding_idx {}", gd::dtype_name(dt), padding);
      check_forward_backward(
          [&](const Tensor& w) { return gd::embedding(w, w.device().is_cuda() ? ids.to(kGpu) : ids, padding); },
          weight, what);
      check_forward_backward(
          [&](const Tensor& w) {
            Tensor int32_ids = ids.to(gd::kInt32);
            return gd::embedding(w, w.device().is_cuda() ? int32_ids.to(kGpu) : int32_ids, padding);
          },
          weight, what + " int32 ids");
    }
    check_forward_backward(
        [&](const Tensor& w) { return gd::embedding(w, w.device().is_cuda() ? i64({}).to(kGpu) : i64({}), -1); },
        weight, "embedding of no ids");
  }
  // The padding row gets no gradient on the GPU either.
  Tensor w = draw({5, 3}, gd::kFloat64).to(kGpu).requires_grad_();
  Tensor out = gd::embedding(w, i64({2, 2, 4}).to(kGpu), 2);
  Tensor grad = gd::autograd::grad({out.sum()}, {w})[0].cpu();
  CHECK(gd::equal(grad.select(0, 2), gd::zeros({3}, gd::TensorOptions().dtype(gd::kFloat64))));
  CHECK(gd::equal(grad.select(0, 4), gd::ones({3}, gd::TensorOptions().dtype(gd::kFloat64))));
}

TEST_CASE("cuda: an Embedding + Linear model trains the same on both devices in float64") {
  auto losses = [](const gd::Device& device) {
    gd::manual_seed(1);
    gd::nn::Embedding embed(gd::nn::EmbeddingOptions(20, 8).padding_idx(0));
    gd::nn::Linear head(8, 3);
    embed->to(gd::kFloat64);
    head->to(gd::kFloat64);
    embed->to(device);
    head->to(device);
    std::vector<Tensor> parameters = embed->parameters();
    for (const Tensor& p : head->parameters()) parameters.push_back(p);
    gd::optim::SGD optimizer(parameters, gd::optim::SGDOptions(0.1).momentum(0.9));
    gd::manual_seed(2);
    Tensor tokens = gd::randint(0, 20, {16, 5}, gd::TensorOptions().dtype(gd::kInt64)).to(device);
    Tensor targets = gd::randint(0, 3, {16}, gd::TensorOptions().dtype(gd::kInt64)).to(device);
    std::vector<double> out;
    for (int step = 0; step < 20; ++step) {
      optimizer.zero_grad();
      Tensor features = embed->forward(tokens).mean({1});
      Tensor loss = gd::nn::functional::cross_entropy(head->forward(features), targets);
      loss.backward();
      optimizer.step();
      out.push_back(loss.item<double>());
    }
    return out;
  };
  std::vector<double> cpu = losses(gd::Device(gd::kCPU)), gpu = losses(kGpu);
  REQUIRE(cpu.size() == gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    INFO(fmt::format("step {}: cpu {} gpu {}", i, cpu[i], gpu[i]));
    CHECK(std::abs(cpu[i] - gpu[i]) <= 1e-10 * std::abs(cpu[i]));
  }
  CHECK(cpu.back() < cpu.front());
}
