// Views and shape ops (engine/ops/shape.cpp): geometry and values against
// PyTorch, storage sharing and the shared version counter, copies only where
// needed, and gradients by gradcheck.
#include <doctest/doctest.h>

#include <functional>

#include "engine/dims.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::indexing::Ellipsis;
using gd::indexing::None;
using gd::indexing::Slice;
using gd::testing::error_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

using ViewFn = std::function<Tensor(const Tensor& x, const Tensor& m)>;

struct ViewCase {
  const char* expression;
  ViewFn fn;
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset;
  std::vector<double> values;
};

// x = torch.arange(24.).view(2, 3, 4), m = torch.arange(12.).view(3, 4): shape,
// stride(), storage_offset() and values of each expression in PyTorch 1.13.
const ViewCase kViews[] = {
    {"x.view({4, 6})", [](auto& x, auto&) { return x.view({4, 6}); }, {4, 6}, {6, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.view({-1, 8})", [](auto& x, auto&) { return x.view({-1, 8}); }, {3, 8}, {8, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.reshape({3, 8})", [](auto& x, auto&) { return x.reshape({3, 8}); }, {3, 8}, {8, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.flatten()", [](auto& x, auto&) { return x.flatten(); }, {24}, {1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.flatten(1)", [](auto& x, auto&) { return x.flatten(1); }, {2, 12}, {12, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.flatten(0, 1)", [](auto& x, auto&) { return x.flatten(0, 1); }, {6, 4}, {4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.unsqueeze(1)", [](auto& x, auto&) { return x.unsqueeze(1); }, {2, 1, 3, 4}, {12, 12, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.unsqueeze(-1)", [](auto& x, auto&) { return x.unsqueeze(-1); }, {2, 3, 4, 1}, {12, 4, 1, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.unsqueeze(1).squeeze(1)", [](auto& x, auto&) { return x.unsqueeze(1).squeeze(1); }, {2, 3, 4}, {12, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.squeeze(0)", [](auto& x, auto&) { return x.squeeze(0); }, {2, 3, 4}, {12, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x[0].unsqueeze(0).squeeze()", [](auto& x, auto&) { return x[0].unsqueeze(0).squeeze(); }, {3, 4}, {4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"x.unsqueeze(3).squeeze()", [](auto& x, auto&) { return x.unsqueeze(3).squeeze(); }, {2, 3, 4}, {12, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.transpose(0, 2)", [](auto& x, auto&) { return x.transpose(0, 2); }, {4, 3, 2}, {1, 4, 12}, 0, {0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23}},
    {"x.permute({2, 0, 1})", [](auto& x, auto&) { return x.permute({2, 0, 1}); }, {4, 2, 3}, {1, 12, 4}, 0, {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}},
    {"m.t()", [](auto&, auto& m) { return m.t(); }, {4, 3}, {1, 4}, 0, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}},
    {"x.mT()", [](auto& x, auto&) { return x.mT(); }, {2, 4, 3}, {12, 1, 4}, 0, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23}},
    {"x.narrow(2, 1, 2)", [](auto& x, auto&) { return x.narrow(2, 1, 2); }, {2, 3, 2}, {12, 4, 1}, 1, {1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}},
    {"x.narrow(1, -2, 2)", [](auto& x, auto&) { return x.narrow(1, -2, 2); }, {2, 2, 4}, {12, 4, 1}, 4, {4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.select(1, 2)", [](auto& x, auto&) { return x.select(1, 2); }, {2, 4}, {12, 1}, 8, {8, 9, 10, 11, 20, 21, 22, 23}},
    {"x.select(-1, -1)", [](auto& x, auto&) { return x.select(-1, -1); }, {2, 3}, {12, 4}, 3, {3, 7, 11, 15, 19, 23}},
    {"x[1]", [](auto& x, auto&) { return x[1]; }, {3, 4}, {4, 1}, 12, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.slice(2, 0, 4, 2)", [](auto& x, auto&) { return x.slice(2, 0, 4, 2); }, {2, 3, 2}, {12, 4, 2}, 0, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}},
    {"x.slice(1, 1)", [](auto& x, auto&) { return x.slice(1, 1); }, {2, 2, 4}, {12, 4, 1}, 4, {4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.slice(2, -3, -1)", [](auto& x, auto&) { return x.slice(2, -3, -1); }, {2, 3, 2}, {12, 4, 1}, 1, {1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}},
    {"x.slice(0, 0, 100)", [](auto& x, auto&) { return x.slice(0, 0, 100); }, {2, 3, 4}, {12, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
    {"x.index({Slice(), 0, None, Ellipsis})", [](auto& x, auto&) { return x.index({Slice(), 0, None, Ellipsis}); }, {2, 1, 4}, {12, 4, 1}, 0, {0, 1, 2, 3, 12, 13, 14, 15}},
    {"x.index({Ellipsis, Slice(None, None, 3)})", [](auto& x, auto&) { return x.index({Ellipsis, Slice(None, None, 3)}); }, {2, 3, 2}, {12, 4, 3}, 0, {0, 3, 4, 7, 8, 11, 12, 15, 16, 19, 20, 23}},
    {"x.index({1, Slice(1, None), -1})", [](auto& x, auto&) { return x.index({1, Slice(1, None), -1}); }, {2}, {4}, 19, {19, 23}},
    {"x.index({None, 0})", [](auto& x, auto&) { return x.index({None, 0}); }, {1, 3, 4}, {24, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"m.diagonal()", [](auto&, auto& m) { return m.diagonal(); }, {3}, {5}, 0, {0, 5, 10}},
    {"m.diagonal(1)", [](auto&, auto& m) { return m.diagonal(1); }, {3}, {5}, 1, {1, 6, 11}},
    {"m.diagonal(-1)", [](auto&, auto& m) { return m.diagonal(-1); }, {2}, {5}, 4, {4, 9}},
    {"x.diagonal(0, 1, 2)", [](auto& x, auto&) { return x.diagonal(0, 1, 2); }, {2, 3}, {12, 5}, 0, {0, 5, 10, 12, 17, 22}},
    {"x.diagonal(1, 0, 2)", [](auto& x, auto&) { return x.diagonal(1, 0, 2); }, {3, 2}, {4, 13}, 1, {1, 14, 5, 18, 9, 22}},
    {"m.unfold(1, 2, 1)", [](auto&, auto& m) { return m.unfold(1, 2, 1); }, {3, 3, 2}, {4, 1, 1}, 0, {0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 7, 8, 9, 9, 10, 10, 11}},
    {"m.unfold(0, 2, 1)", [](auto&, auto& m) { return m.unfold(0, 2, 1); }, {2, 4, 2}, {4, 1, 4}, 0, {0, 4, 1, 5, 2, 6, 3, 7, 4, 8, 5, 9, 6, 10, 7, 11}},
    {"x.unfold(2, 3, 2)", [](auto& x, auto&) { return x.unfold(2, 3, 2); }, {2, 3, 1, 3}, {12, 4, 2, 1}, 0, {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20, 21, 22}},
    {"m.as_strided({2, 2}, {1, 4}, 1)", [](auto&, auto& m) { return m.as_strided({2, 2}, {1, 4}, 1); }, {2, 2}, {1, 4}, 1, {1, 5, 2, 6}},
    {"m.as_strided({3, 3}, {1, 1})", [](auto&, auto& m) { return m.as_strided({3, 3}, {1, 1}); }, {3, 3}, {1, 1}, 0, {0, 1, 2, 1, 2, 3, 2, 3, 4}},
    {"m.expand({2, 3, 4})", [](auto&, auto& m) { return m.expand({2, 3, 4}); }, {2, 3, 4}, {0, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"m.select(1, 0).unsqueeze(1).expand({3, 5})", [](auto&, auto& m) { return m.select(1, 0).unsqueeze(1).expand({3, 5}); }, {3, 5}, {4, 0}, 0, {0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 8, 8, 8, 8, 8}},
    {"m.expand_as(x)", [](auto& x, auto& m) { return m.expand_as(x); }, {2, 3, 4}, {0, 4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"m.view_as(x[0])", [](auto& x, auto& m) { return m.view_as(x[0]); }, {3, 4}, {4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"m.t().t()", [](auto&, auto& m) { return m.t().t(); }, {3, 4}, {4, 1}, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"m.t().narrow(0, 1, 2).select(1, 1)", [](auto&, auto& m) { return m.t().narrow(0, 1, 2).select(1, 1); }, {2}, {1}, 5, {5, 6}},
};

Tensor arange_x() { return gd::arange(24, gd::kFloat64).view({2, 3, 4}); }
Tensor arange_m() { return gd::arange(12, gd::kFloat64).view({3, 4}); }

bool same_storage(const Tensor& a, const Tensor& b) { return a.storage() == b.storage(); }

}  // namespace

TEST_CASE("views: geometry and values match PyTorch, no copy") {
  Tensor x = arange_x(), m = arange_m();
  for (const auto& c : kViews) {
    INFO(c.expression);
    Tensor v = c.fn(x, m);
    CHECK(v.sizes() == gd::IntArrayRef(c.sizes));
    CHECK(v.strides() == gd::IntArrayRef(c.strides));
    CHECK(v.storage_offset() == c.storage_offset);
    CHECK(values_of(v) == c.values);
    CHECK((same_storage(v, x) || same_storage(v, m)));
  }
}

TEST_CASE("views: gradients by gradcheck, on contiguous and non-contiguous inputs") {
  for (const auto& c : kViews) {
    INFO(c.expression);
    std::string expression = c.expression;
    // view() and as_strided() need a compatible (here: contiguous) layout.
    bool needs_contiguous =
        expression.find("as_strided") != std::string::npos || expression.find("view") != std::string::npos;
    for (bool transposed : {false, true}) {
      if (transposed && needs_contiguous) continue;
      // Non-contiguous leaves of the same shapes: x from a (4, 3, 2) buffer, m from a (4, 3) one.
      Tensor x = transposed ? gd::testing::sample({4, 3, 2}, -1, 1, 1).permute({2, 1, 0})
                            : gd::testing::sample({2, 3, 4}, -1, 1, 1);
      Tensor m = transposed ? gd::testing::sample({4, 3}, -1, 1, 2).t() : gd::testing::sample({3, 4}, -1, 1, 2);
      x = x.detach().requires_grad_();
      m = m.detach().requires_grad_();
      CHECK(x.is_contiguous() == !transposed);
      auto f = [&c](const std::vector<Tensor>& in) { return std::vector<Tensor>{c.fn(in[0], in[1])}; };
      CHECK(gd::autograd::gradcheck(f, {x, m}));
      CHECK(gd::autograd::gradgradcheck(f, {x, m}));
    }
  }
}

TEST_CASE("view gradients in closed form") {
  // Overlapping windows: d/dm sum(unfold(m, 1, 2, 1)) counts the windows covering each element.
  Tensor m = gd::ones({3, 4}, gd::kFloat64).requires_grad_();
  m.unfold(1, 2, 1).sum().backward();
  CHECK(values_of(m.grad()) == std::vector<double>{1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 1});
  // Expanded: each element is used 5 times.
  Tensor v = gd::ones({3, 1}, gd::kFloat64).requires_grad_();
  (v.expand({3, 5}) * gd::arange(5, gd::kFloat64)).sum().backward();
  CHECK(values_of(v.grad()) == std::vector<double>{10, 10, 10});
  // The diagonal only receives gradient on its elements.
  Tensor d = gd::ones({3, 3}, gd::kFloat64).requires_grad_();
  (d.diagonal() * gd::arange(1, 4, 1, gd::kFloat64)).sum().backward();
  CHECK(values_of(d.grad()) == std::vector<double>{1, 0, 0, 0, 2, 0, 0, 0, 3});
  // Overlapping as_strided windows accumulate.
  Tensor a = gd::ones({5}, gd::kFloat64).requires_grad_();
  a.as_strided({3, 3}, {1, 1}).sum().backward();
  CHECK(values_of(a.grad()) == std::vector<double>{1, 2, 3, 2, 1});
  // chunk/split/unbind pieces each route their gradient to their slice.
  Tensor s = gd::ones({2, 5}, gd::kFloat64).requires_grad_();
  auto parts = s.split({1, 4}, 1);
  (parts[0] * 3 + parts[1].sum(std::vector<int64_t>{1}, true) * 2).sum().backward();
  CHECK(values_of(s.grad()) == std::vector<double>{3, 2, 2, 2, 2, 3, 2, 2, 2, 2});
}

TEST_CASE("chunk, split and unbind") {
  Tensor x = arange_x(), m = arange_m();
  // PyTorch 1.13: m.chunk(3, 1) gives two [3, 2] pieces at offsets 0 and 2.
  auto chunks = m.chunk(3, 1);
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0].sizes() == gd::IntArrayRef({3, 2}));
  CHECK(chunks[1].storage_offset() == 2);
  CHECK(values_of(chunks[1]) == std::vector<double>{2, 3, 6, 7, 10, 11});
  // torch.arange(6).chunk(5) -> 3 pieces of 2; torch.arange(5).chunk(4) -> [2, 2, 1].
  CHECK(gd::arange(6).chunk(5).size() == 3);
  auto uneven = gd::arange(5).chunk(4);
  REQUIRE(uneven.size() == 3);
  CHECK(uneven[2].numel() == 1);
  // x.split(2, 2) -> two [2, 3, 2]; x.split([1, 3], 2) -> [2, 3, 1] and [2, 3, 3] at offsets 0 and 1.
  auto halves = x.split(2, 2);
  REQUIRE(halves.size() == 2);
  CHECK(halves[1].sizes() == gd::IntArrayRef({2, 3, 2}));
  auto sized = x.split({1, 3}, 2);
  CHECK(sized[0].sizes() == gd::IntArrayRef({2, 3, 1}));
  CHECK(sized[1].sizes() == gd::IntArrayRef({2, 3, 3}));
  CHECK(sized[1].storage_offset() == 1);
  // m.unbind(1) -> the four columns.
  auto columns = m.unbind(1);
  REQUIRE(columns.size() == 4);
  CHECK(values_of(columns[3]) == std::vector<double>{3, 7, 11});
  CHECK(same_storage(columns[3], m));
  CHECK(gd::chunk(m, 2).size() == 2);
  CHECK(gd::split(m, 1).size() == 3);
  CHECK(gd::unbind(m).size() == 3);
  CHECK(error_of([&] { m.split({1, 2}, 1); }) ==
        "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension 1), but got "
        "split_sizes=[1, 2]");
  CHECK(error_of([] { gd::scalar_tensor(1.0).unbind(); }) == "Dimension specified as 0 but tensor has no dimensions");
}

TEST_CASE("reshape copies only when a view is impossible") {
  Tensor m = arange_m();
  Tensor r = m.reshape({2, 6});
  CHECK(same_storage(r, m));
  CHECK(r.data_ptr() == m.data_ptr());
  // m.t() cannot be flattened in place: reshape copies, view refuses.
  Tensor t = m.t();
  Tensor flat = t.reshape({-1});
  CHECK_FALSE(same_storage(flat, m));
  CHECK(values_of(flat) == std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(error_of([&] { t.view({-1}); }) ==
        "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
        "contiguous subspaces). Use .reshape(...) instead.");
  // ... but splitting a dim of a transposed tensor is a view.
  Tensor split = t.reshape({2, 2, 3});
  CHECK(same_storage(split, m));
  CHECK(split.strides() == gd::IntArrayRef({2, 1, 4}));
  // A narrowed (offset) tensor keeps its offset through view.
  Tensor row = m[1].view({2, 2});
  CHECK(row.storage_offset() == 4);
  CHECK(values_of(row) == std::vector<double>{4, 5, 6, 7});
  CHECK(gd::reshape(m, {12}).data_ptr() == m.data_ptr());
  CHECK(m.reshape_as(r).sizes() == gd::IntArrayRef({2, 6}));
  CHECK(error_of([&] { m.view({5, -1}); }) == "shape '[5, -1]' is invalid for input of size 12");
  CHECK(error_of([&] { m.view({-1, -1}); }) == "view: only one dimension can be inferred");
  // 0-dim and empty tensors.
  Tensor s = gd::scalar_tensor(3.0, gd::kFloat64);
  CHECK(s.view({1, 1}).sizes() == gd::IntArrayRef({1, 1}));
  CHECK(s.reshape({-1}).sizes() == gd::IntArrayRef({1}));
  CHECK(s.flatten().sizes() == gd::IntArrayRef({1}));
  CHECK(gd::zeros({0, 3}).view({3, 0}).numel() == 0);
}

TEST_CASE("contiguous, is_contiguous, clone and detach") {
  Tensor m = arange_m();
  // PyTorch 1.13: m.t().is_contiguous() False; x.unsqueeze(1) True; m.expand(2, 3, 4) False; ones(3, 1).t() True.
  CHECK(m.is_contiguous());
  CHECK_FALSE(m.t().is_contiguous());
  CHECK(arange_x().unsqueeze(1).is_contiguous());
  CHECK_FALSE(m.expand({2, 3, 4}).is_contiguous());
  CHECK(gd::ones({3, 1}).t().is_contiguous());
  CHECK(m.contiguous().is_same(m));
  Tensor c = m.t().contiguous();
  CHECK(c.is_contiguous());
  CHECK_FALSE(same_storage(c, m));
  CHECK(values_of(c) == values_of(m.t()));
  // clone(contiguous_format): same values, own storage, contiguous even from a
  // strided input (clone()'s default, Preserve, is in test_memory_format.cpp).
  Tensor k = m.t().clone(gd::contiguous_format);
  CHECK(k.is_contiguous());
  CHECK_FALSE(same_storage(k, m));
  CHECK(values_of(k) == values_of(m.t()));
  k.fill_(0);
  CHECK(values_of(m)[1] == 1);
  // detach shares the storage and the version counter, and has no history.
  Tensor x = gd::ones({3}, gd::kFloat64).requires_grad_();
  Tensor y = x * 2;
  Tensor d = y.detach();
  CHECK(same_storage(d, y));
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  d.add_(1);
  CHECK(y._version() == 1);
  CHECK(values_of(y) == std::vector<double>{3, 3, 3});
}

TEST_CASE("views share the version counter and the data of their base") {
  Tensor base = gd::zeros({3, 4}, gd::kFloat64);
  Tensor row = base[1], col = base.t()[2], diag = base.diagonal();
  CHECK(base._version() == 0);
  row.fill_(1);
  // Every alias sees the write and the bump.
  CHECK(base._version() == 1);
  CHECK(col._version() == 1);
  CHECK(diag._version() == 1);
  CHECK(values_of(col) == std::vector<double>{0, 1, 0});
  col.mul_(5);
  CHECK(base._version() == 2);
  CHECK(values_of(base) == std::vector<double>{0, 0, 0, 0, 1, 1, 5, 1, 0, 0, 0, 0});
  base.add_(1);
  CHECK(row._version() == 3);
  CHECK(values_of(diag) == std::vector<double>{1, 2, 1});
  // Reads never bump.
  values_of(base.t());
  CHECK(base._version() == 3);
}

TEST_CASE("index() forms") {
  Tensor x = arange_x();
  // torch: x[True].shape == [1, 2, 3, 4]; x[False].shape == [0, 2, 3, 4]; x[..., None].shape == [2, 3, 4, 1].
  CHECK(x.index({true}).sizes() == gd::IntArrayRef({1, 2, 3, 4}));
  CHECK(x.index({false}).sizes() == gd::IntArrayRef({0, 2, 3, 4}));
  CHECK(x.index({Ellipsis, None}).sizes() == gd::IntArrayRef({2, 3, 4, 1}));
  CHECK(x.index({Ellipsis}).sizes() == gd::IntArrayRef({2, 3, 4}));
  CHECK(x.index({0, 1, 2}).dim() == 0);
  CHECK(x.index({0, 1, 2}).item<double>() == 6);
  CHECK(x.index({Slice(1, None), Ellipsis, Slice(None, 1)}).sizes() == gd::IntArrayRef({1, 3, 1}));
  CHECK(error_of([&] { x.index({0, 0, 0, 0}); }) == "too many indices for tensor of dimension 3");
  CHECK(error_of([&] { x.index({Ellipsis, 0, Ellipsis}); }) == "an index can only have a single ellipsis ('...')");
  CHECK(error_of([&] { x.select(1, 3); }) == "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1");
  CHECK(error_of([&] { x.select(3, 0); }) == "select: Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  CHECK(error_of([&] { x.narrow(2, 3, 2); }) == "start (3) + length (2) exceeds dimension size (4).");
}

TEST_CASE("cat and stack") {
  Tensor m = arange_m();
  Tensor c = gd::cat({m, m * 10}, 0);
  CHECK(c.sizes() == gd::IntArrayRef({6, 4}));
  CHECK(values_of(c[4]) == std::vector<double>{40, 50, 60, 70});
  Tensor c1 = gd::cat({m.t(), m.t().narrow(1, 0, 1)}, 1);
  CHECK(c1.sizes() == gd::IntArrayRef({4, 4}));
  CHECK(values_of(c1.select(1, 3)) == std::vector<double>{0, 1, 2, 3});
  // int64 and float64 pieces promote to float64, as in torch.cat.
  CHECK(gd::cat({gd::arange(2), gd::ones({1}, gd::kFloat64)}).dtype() == gd::kFloat64);
  Tensor s = gd::stack({m[0], m[2]}, 1);
  CHECK(s.sizes() == gd::IntArrayRef({4, 2}));
  CHECK(values_of(s) == std::vector<double>{0, 8, 1, 9, 2, 10, 3, 11});
  CHECK(gd::stack({gd::scalar_tensor(1.0), gd::scalar_tensor(2.0)}).sizes() == gd::IntArrayRef({2}));
  CHECK(error_of([&] { gd::cat({m, gd::ones({2, 3}, gd::kFloat64)}, 0); }) ==
        "Sizes of tensors must match except in dimension 0. Expected size 4 but got size 3 for tensor number 1 in the "
        "list.");
  CHECK(error_of([] { gd::cat({gd::scalar_tensor(1.0), gd::scalar_tensor(2.0)}); }) ==
        "zero-dimensional tensor (at position 0) cannot be concatenated");
  CHECK(error_of([&] { gd::stack({m, m.t()}); }) ==
        "stack expects each tensor to be equal size, but got [3, 4] at entry 0 and [4, 3] at entry 1");
}

TEST_CASE("expand rules") {
  Tensor v = gd::arange(3, gd::kFloat64).view({3, 1});
  CHECK(v.expand({2, 3, 4}).strides() == gd::IntArrayRef({0, 1, 0}));
  CHECK(v.expand({-1, 4}).sizes() == gd::IntArrayRef({3, 4}));
  CHECK(gd::scalar_tensor(2.0).expand({2, 2}).strides() == gd::IntArrayRef({0, 0}));
  CHECK(error_of([&] { v.expand({2, 4}); }) ==
        "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  Target "
        "sizes: [2, 4].  Tensor sizes: [3, 1]");
  CHECK(error_of([&] { v.expand({4}); }) ==
        "expand: the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor "
        "(2)");
}

TEST_CASE("view() accepts exactly the shapes PyTorch accepts, with its strides") {
  struct Target {
    std::vector<int64_t> sizes;
    bool viewable;
    std::vector<int64_t> strides;
  };
  struct Source {
    const char* name;
    std::function<Tensor()> make;
    std::vector<Target> targets;
  };
  // PyTorch 1.13: t.view(*sizes).stride(), or a RuntimeError, for each source t.
  const Source sources[] = {
      {"(2,3,4).permute(1,0,2)", [] { return gd::arange(24, gd::kFloat64).view({2, 3, 4}).permute({1, 0, 2}); },
       {{{3, 8}, false, {}}, {{3, 2, 2, 2}, true, {4, 12, 2, 1}}, {{6, 4}, false, {}},
        {{3, 2, 4, 1}, true, {4, 12, 1, 1}}, {{1, 3, 2, 4}, true, {12, 4, 12, 1}}, {{24}, false, {}}}},
      {"(2,3,4).transpose(1,2)", [] { return gd::arange(24, gd::kFloat64).view({2, 3, 4}).transpose(1, 2); },
       {{{8, 3}, false, {}}, {{2, 12}, false, {}}, {{2, 2, 2, 3}, true, {12, 2, 1, 4}},
        {{2, 4, 3, 1}, true, {12, 1, 4, 4}}, {{2, 1, 4, 3}, true, {12, 4, 1, 4}}}},
      {"(4,6)[:, ::2]", [] { return gd::arange(24, gd::kFloat64).view({4, 6}).slice(1, 0, 6, 2); },
       {{{12}, true, {2}}, {{2, 2, 3}, true, {12, 6, 2}}, {{4, 3, 1}, true, {6, 2, 2}}, {{4, 1, 3}, true, {6, 6, 2}},
        {{2, 6}, true, {12, 2}}}},
      {"(4,6)[1:3]", [] { return gd::arange(24, gd::kFloat64).view({4, 6}).slice(0, 1, 3); },
       {{{12}, true, {1}}, {{3, 4}, true, {4, 1}}, {{2, 2, 3}, true, {6, 3, 1}}, {{6, 2}, true, {2, 1}}}},
      {"(3,1,4) expanded to (3,5,4)", [] { return gd::arange(12, gd::kFloat64).view({3, 1, 4}).expand({3, 5, 4}); },
       {{{15, 4}, false, {}}, {{3, 20}, false, {}}, {{3, 5, 2, 2}, true, {4, 0, 2, 1}},
        {{3, 5, 4, 1}, true, {4, 0, 1, 1}}}},
      {"(2,1,3).permute(2,1,0)", [] { return gd::arange(6, gd::kFloat64).view({2, 1, 3}).permute({2, 1, 0}); },
       {{{3, 2}, true, {1, 3}}, {{6}, false, {}}, {{3, 1, 1, 2}, true, {1, 6, 6, 3}}, {{1, 3, 2}, true, {3, 1, 3}}}},
      {"(0,3)", [] { return gd::zeros({0, 3}, gd::kFloat64); },
       {{{3, 0}, true, {1, 1}}, {{0}, true, {1}}, {{0, 1, 3}, true, {3, 3, 1}}}},
  };
  for (const Source& source : sources) {
    Tensor t = source.make();
    for (const Target& target : source.targets) {
      std::string label = std::string(source.name) + " -> " + gd::shape_to_string(target.sizes);
      INFO(label);
      std::string error = error_of([&] { t.view(target.sizes); });
      CHECK(error.empty() == target.viewable);
      if (!target.viewable || !error.empty()) continue;
      Tensor v = t.view(target.sizes);
      CHECK(v.strides() == gd::IntArrayRef(target.strides));
      CHECK(v.storage_offset() == t.storage_offset());
      CHECK(values_of(v) == values_of(t.reshape(target.sizes)));
    }
  }
}

TEST_CASE("large overlapping views accumulate their gradient exactly") {
  // Windows of 8 with step 1 over 200000 elements: above the parallel grain,
  // so the backward scatter must not split overlapping elements across threads.
  int previous = gd::get_num_threads();
  gd::set_num_threads(4);
  const int64_t n = 200000, window = 8;
  Tensor x = gd::ones({n}, gd::kFloat64).requires_grad_();
  x.unfold(0, window, 1).sum().backward();
  std::vector<double> g = values_of(x.grad()), want(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)  // the number of windows covering element i
    want[static_cast<size_t>(i)] = static_cast<double>(std::min({i + 1, window, n - i}));
  CHECK(g == want);
  // Non-overlapping large views (narrow, select) still scatter correctly.
  Tensor m = gd::ones({400, 300}, gd::kFloat64).requires_grad_();
  (m.narrow(1, 100, 150).t() * 2).sum().backward();
  CHECK(m.grad().sum().item<double>() == 400 * 150 * 2);
  gd::set_num_threads(previous);
}

TEST_CASE("transpose_ swaps two dims of the tensor itself; in the graph its history is the transpose") {
  // PyTorch 1.13: x = torch.arange(6.).view(2, 3); x.transpose_(0, 1) -> shape (3, 2), stride (1, 3).
  Tensor x = gd::arange(6, gd::kFloat64).view({2, 3});
  Tensor alias = x;
  CHECK(&x.transpose_(0, -1) == &x);
  CHECK(alias.sizes().vec() == std::vector<int64_t>{3, 2});
  CHECK(alias.strides().vec() == std::vector<int64_t>{1, 3});
  CHECK(values_of(x.contiguous()) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(error_of([&] { x.transpose_(0, 2); }) ==
        "transpose_: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  // y = w * 1 (a non-leaf); y.transpose_(0, 1); (y * c).sum().backward(): w.grad = c^T.
  Tensor w = gd::testing::sample({2, 3}, -1, 1, 8).requires_grad_();
  Tensor c = gd::testing::sample({3, 2}, -1, 1, 9);
  Tensor y = w * 1;
  y.transpose_(0, 1);
  CHECK(y.grad_fn()->name() == "PermuteBackward0");
  (y * c).sum().backward();
  CHECK(value_mismatch(w.grad(), c.t(), 0, 0) == "");
  CHECK(error_of([&] { w.transpose_(0, 1); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor z = in[0].exp();
    z.transpose_(1, 0);
    return std::vector<Tensor>{z.matmul(in[0])};
  };
  Tensor s = gd::testing::sample({3, 3}, -1, 1, 10).requires_grad_();
  CHECK(gd::autograd::gradcheck(fn, {s}));
  CHECK(gd::autograd::gradgradcheck(fn, {s}));
}

TEST_CASE("toType is libtorch's older spelling of to(dtype)") {
  Tensor b = gd::tensor({0.5, -2.0, 3.0}) > 0;
  Tensor i = b.toType(gd::kInt32);
  CHECK(i.dtype() == gd::kInt32);
  CHECK(values_of(i) == std::vector<double>{1, 0, 1});
}
