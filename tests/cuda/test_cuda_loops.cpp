// The ops whose loops moved behind the kernel entry points (flip, cumsum and
// cumprod, the order statistics, advanced indexing, scatter, index_select and
// index_add, the strided-view backward) on the GPU against the CPU, in the
// layouts the move touched: size-1 and empty dims, 0-dim tensors, views with
// an offset, transposed inputs, reduced and integer dtypes, CPU scalars as
// values, overlapping views.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gradiens.h"
#include "tests/cuda/cuda_checks.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::indexing::Slice;

namespace {

const gd::Device kGpu("cuda:0");
using gd::testing::check_same_bits;

Tensor i64(std::vector<int64_t> values, std::vector<int64_t> shape = {}) {
  Tensor t = gd::tensor(values, gd::kInt64);
  return shape.empty() ? t : t.reshape(shape);
}

// The int64 tensor of values[i] mod n (n > 0).
Tensor modulo(std::vector<int64_t> values, int64_t n, std::vector<int64_t> shape = {}) {
  for (int64_t& v : values) v = ((v % n) + n) % n;
  return i64(values, shape);
}

Tensor draw(gd::IntArrayRef shape, gd::ScalarType dt, uint64_t seed = 5) {
  gd::manual_seed(seed);
  return (gd::randn(shape) * 8).to(dt);
}

// Inputs of one dtype in the layouts of this file: contiguous with a size-1
// dim, transposed, a narrowed view (an offset and a gap), empty, 0-dim.
std::vector<std::pair<std::string, Tensor>> layouts(gd::ScalarType dt) {
  Tensor x = draw({3, 1, 5}, dt);
  Tensor wide = draw({4, 7, 3}, dt, 6);
  return {{"size-1 dim", x},
          {"transposed", wide.transpose(0, 2)},
          {"narrowed", wide.narrow(1, 2, 4)},
          {"empty", gd::zeros({2, 0, 3}, gd::TensorOptions().dtype(dt))},
          {"0-dim", draw({1}, dt, 7).reshape({})}};
}

const gd::ScalarType kAllTypes[] = {gd::kFloat64, gd::kFloat32, gd::kFloat16, gd::kBFloat16,
                                    gd::kInt64,   gd::kInt32,   gd::kUInt8};

}  // namespace

TEST_CASE("cuda: flip, cumsum and cumprod match the CPU bit for bit in every layout and dtype") {
  for (gd::ScalarType dt : kAllTypes) {
    for (const auto& [layout, x] : layouts(dt)) {
      const std::string what = fmt::format("{} {}", gd::dtype_name(dt), layout);
      INFO(what);
      Tensor xg = x.to(kGpu);
      const int64_t dims = std::max<int64_t>(x.dim(), 1);
      for (int64_t d = 0; d < dims; ++d) {
        std::vector<int64_t> flip_dims;
        if (x.dim() > 0) flip_dims.push_back(d);
        check_same_bits(gd::flip(x, flip_dims), gd::flip(xg, flip_dims), "flip " + what);
        check_same_bits(gd::cumsum(x, d), gd::cumsum(xg, d), fmt::format("cumsum dim {} {}", d, what));
        Tensor small = gd::is_floating_point(dt) ? x / 8 : x;  // integers wrap alike on both
        check_same_bits(gd::cumprod(small, d), gd::cumprod(small.to(kGpu), d), fmt::format("cumprod dim {} {}", d, what));
      }
      if (x.dim() == 3) check_same_bits(gd::flip(x, {0, 1, 2}), gd::flip(xg, {0, 1, 2}), "flip all " + what);
    }
  }
  Tensor flags = draw({4, 3}, gd::kFloat32) > 0;
  check_same_bits(gd::flip(flags, {1}), gd::flip(flags.to(kGpu), {1}), "flip bool");
}

TEST_CASE("cuda: sort, topk, kthvalue and median match the CPU on transposed and narrowed inputs") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kFloat16, gd::kInt64, gd::kUInt8}) {
    for (const auto& [layout, x] : layouts(dt)) {
      const std::string what = fmt::format("{} {}", gd::dtype_name(dt), layout);
      INFO(what);
      Tensor xg = x.to(kGpu);
      const int64_t dims = std::max<int64_t>(x.dim(), 1);
      for (int64_t d = 0; d < dims; ++d) {
        for (bool descending : {false, true}) {
          auto [vc, ic] = gd::sort(x, d, descending);
          auto [vg, ig] = gd::sort(xg, d, descending);
          check_same_bits(vc, vg, fmt::format("sort values dim {} {}", d, what));
          check_same_bits(ic, ig, fmt::format("sort indices dim {} {}", d, what));
        }
        const int64_t n = x.dim() == 0 ? 1 : x.size(d);
        if (n == 0) continue;
        auto [tc, tic] = gd::topk(x, std::min<int64_t>(2, n), d);
        auto [tg, tig] = gd::topk(xg, std::min<int64_t>(2, n), d);
        check_same_bits(tic, tig, fmt::format("topk dim {} {}", d, what));
        auto [kc, kic] = gd::kthvalue(x, n, d);
        auto [kg, kig] = gd::kthvalue(xg, n, d);
        check_same_bits(kic, kig, fmt::format("kthvalue dim {} {}", d, what));
        auto [mc, mic] = gd::median(x, d);
        auto [mg, mig] = gd::median(xg, d);
        check_same_bits(mc, mg, fmt::format("median dim {} {}", d, what));
        check_same_bits(mic, mig, fmt::format("median indices dim {} {}", d, what));
      }
    }
  }
}

TEST_CASE("cuda: index, index_put_, scatter, index_select and index_add match the CPU in these layouts") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32, gd::kInt64}) {
    const std::string name(gd::dtype_name(dt));
    INFO(name);
    Tensor wide = draw({4, 7, 3}, dt, 6);
    Tensor view = wide.narrow(1, 2, 4).transpose(0, 1);  // [4, 4, 3], an offset and strides out of order
    Tensor vg = wide.to(kGpu).narrow(1, 2, 4).transpose(0, 1);
    Tensor rows = i64({3, -1, 0, 3});
    Tensor cols = i64({2, 0}, {2, 1});
    check_same_bits(view.index({rows}), vg.index({rows.to(kGpu)}), "index one tensor " + name);
    check_same_bits(view.index({Slice(), cols, modulo({3, -1, 0}, 3)}),
                    vg.index({Slice(), cols.to(kGpu), modulo({3, -1, 0}, 3).to(kGpu)}),
                    "index broadcast tensors " + name);
    check_same_bits(view.index({rows.narrow(0, 0, 0)}), vg.index({rows.narrow(0, 0, 0).to(kGpu)}), "index empty " + name);
    // A 0-dim CPU tensor put into a cuda tensor, and a broadcast row accumulated at repeated places.
    Tensor put_c = view.clone(), put_g = vg.clone();
    put_c.index_put_({rows}, gd::scalar_tensor(5, gd::TensorOptions().dtype(dt)));
    put_g.index_put_({rows.to(kGpu)}, gd::scalar_tensor(5, gd::TensorOptions().dtype(dt)));
    check_same_bits(put_c, put_g, "index_put_ a CPU scalar " + name);
    Tensor row = draw({3}, dt, 8);
    put_c.index_put_({Slice(), rows}, row, true);
    put_g.index_put_({Slice(), rows.to(kGpu)}, row.to(kGpu), true);
    gd::testing::check_matches(put_c, put_g, "index_put_ accumulate " + name, 1e-6, 1e-6);
    // scatter of a value (a CPU scalar) and of a transposed src, along each dim.
    const std::vector<int64_t> index = {1, 0, 3, 2, 3, 1};
    for (int64_t d = 0; d < 3; ++d) {
      Tensor ix = modulo(index, view.size(d), {1, 2, 3});
      check_same_bits(view.scatter(d, ix, 7), vg.scatter(d, ix.to(kGpu), 7), fmt::format("scatter value dim {} {}", d, name));
      Tensor src = draw({3, 2, 1}, dt, 9).transpose(0, 2);
      check_same_bits(view.scatter(d, ix.narrow(2, 0, 1).narrow(1, 0, 1), src.narrow(2, 0, 1).narrow(1, 0, 1)),
                      vg.scatter(d, ix.narrow(2, 0, 1).narrow(1, 0, 1).to(kGpu),
                                 src.narrow(2, 0, 1).narrow(1, 0, 1).to(kGpu)),
                      fmt::format("scatter src dim {} {}", d, name));
      Tensor picks = modulo({2, 0, 2}, view.size(d));
      Tensor wide_picks = modulo({2, 0, 2}, wide.size(d));
      check_same_bits(view.index_select(d, picks), vg.index_select(d, picks.to(kGpu)),
                      fmt::format("index_select dim {} {}", d, name));
      check_same_bits(wide.index_select(d, wide_picks), wide.to(kGpu).index_select(d, wide_picks.to(kGpu)),
                      fmt::format("index_select contiguous dim {} {}", d, name));
      std::vector<int64_t> source_shape = {4, 4, 3};
      source_shape[static_cast<size_t>(d)] = 3;
      Tensor source = draw(source_shape, dt, 10);
      gd::testing::check_matches(view.index_add(d, picks, source, 2), vg.index_add(d, picks.to(kGpu), source.to(kGpu), 2),
                                 fmt::format("index_add alpha 2 dim {} {}", d, name), 1e-6, 1e-6);
    }
    Tensor s = draw({1}, dt, 11).reshape({});
    check_same_bits(s.index_select(0, i64({0})), s.to(kGpu).index_select(0, i64({0}).to(kGpu)), "index_select 0-dim " + name);
  }
}

TEST_CASE("cuda: the strided-view backward matches the CPU, overlapping windows included") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    const std::string name(gd::dtype_name(dt));
    INFO(name);
    Tensor x = draw({9, 6}, dt, 12);
    auto grad_of = [&](const Tensor& input, auto&& view_of) {
      Tensor leaf = input.detach().requires_grad_();
      Tensor y = view_of(leaf);
      gd::manual_seed(13);
      Tensor g = gd::randn(y.sizes(), gd::TensorOptions().dtype(dt)).to(input.device());
      return gd::autograd::grad({y}, {leaf}, {g})[0];
    };
    auto narrowed = [](const Tensor& t) { return t.narrow(0, 2, 5).t(); };
    auto windows = [](const Tensor& t) { return t.unfold(0, 4, 1); };  // each row in up to four windows
    gd::testing::check_matches(grad_of(x, narrowed), grad_of(x.to(kGpu), narrowed), "narrow backward " + name, 0, 0);
    gd::testing::check_matches(grad_of(x, windows), grad_of(x.to(kGpu), windows), "unfold backward " + name, 1e-12,
                               1e-12);
  }
}
