// Advanced indexing: index() with integer tensors and masks, index_put_, scatter,
// index_select/index_add, masked_select/masked_fill_, nonzero/where. Values and
// messages against PyTorch 1.13; gradients by gradcheck/gradgradcheck (the sweep's
// rows are in op_rows/advanced_indexing.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/autograd/node.h"
#include "engine/dims.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::indexing::Ellipsis;
using gd::indexing::None;
using gd::indexing::Slice;
using gd::testing::error_of;
using gd::testing::tensor_of;

namespace {

using V = std::vector<Tensor>;

Tensor f64(std::vector<double> v, std::vector<int64_t> shape = {}) { return tensor_of(v, shape); }
Tensor i64(std::vector<double> v, std::vector<int64_t> shape = {}) { return tensor_of(v, shape, gd::kInt64); }
Tensor mask(std::vector<double> v, std::vector<int64_t> shape = {}) { return tensor_of(v, shape, gd::kBool); }
Tensor scalar_index(int64_t v) { return gd::scalar_tensor(v, gd::kInt64); }

// x = torch.arange(48.).reshape(2, 3, 4, 2): every value names its position.
Tensor X4() { return gd::arange(48, gd::kFloat64).reshape({2, 3, 4, 2}); }
// The same values in a non-contiguous layout.
Tensor X4_strided() { return X4().transpose(0, 2).contiguous().transpose(0, 2); }
// X = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
Tensor X() { return f64({1, 2, 3, 4, 5, 6}, {2, 3}); }

// "" when `got` has `shape` and exactly `values`, else what differs.
std::string mismatch(const Tensor& got, std::vector<int64_t> shape, std::vector<double> values) {
  if (!(got.sizes() == gd::IntArrayRef(shape)))
    return fmt::format("shape {} != {}", gd::shape_to_string(got.sizes()), gd::shape_to_string(shape));
  return gd::testing::value_mismatch(gd::testing::values_of(got), values, 0, 0);
}

struct Case {
  const char* expr;
  std::function<Tensor(const Tensor&)> fn;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

}  // namespace

TEST_CASE("index with tensors matches PyTorch on a 4-D tensor") {
  Tensor i = i64({2, 0, -1}), k = i64({1, -2, 0});
  Tensor m4 = mask({1, 0, 1, 1});
  // python3 -c "import torch; x = torch.arange(48.).reshape(2,3,4,2); i = torch.tensor([2,0,-1]); ...; print(x[...])"
  std::vector<Case> cases = {
      // i and the mask are separated by None: the broadcast index dims go first.
      {"x[:, i, None, m4]", [&](const Tensor& x) { return x.index({Slice(), i, None, m4}); }, {3, 2, 1, 2},
       {16, 17, 40, 41, 4, 5, 28, 29, 22, 23, 46, 47}},
      {"x[[1, -1, 0], 1, :, 0]", [](const Tensor& x) { return x.index({i64({1, -1, 0}), 1, Slice(), 0}); }, {3, 4},
       {32, 34, 36, 38, 32, 34, 36, 38, 8, 10, 12, 14}},
      {"x[:, i, k] (adjacent)", [&](const Tensor& x) { return x.index({Slice(), i, k}); }, {2, 3, 2},
       {18, 19, 4, 5, 16, 17, 42, 43, 28, 29, 40, 41}},
      {"x[[0, 1, 1], :, k] (separated)", [&](const Tensor& x) { return x.index({i64({0, 1, 1}), Slice(), k}); },
       {3, 3, 2}, {2, 3, 10, 11, 18, 19, 28, 29, 36, 37, 44, 45, 24, 25, 32, 33, 40, 41}},
      {"x[0, :, k] (an int selects)", [&](const Tensor& x) { return x.index({0, Slice(), k}); }, {3, 3, 2},
       {2, 3, 4, 5, 0, 1, 10, 11, 12, 13, 8, 9, 18, 19, 20, 21, 16, 17}},
      {"x[:, 1, k]", [&](const Tensor& x) { return x.index({Slice(), 1, k}); }, {2, 3, 2},
       {10, 11, 12, 13, 8, 9, 34, 35, 36, 37, 32, 33}},
      {"x[:, m34]", [](const Tensor& x) { return x.index({Slice(), mask({1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}, {3, 4})}); },
       {2, 3, 2}, {0, 1, 6, 7, 18, 19, 24, 25, 30, 31, 42, 43}},
      // PyTorch 1.13 raises here (it steps one dim past a 2-D mask); NumPy's x[m23, 1] is the reference.
      {"x[m23, 1] (numpy)", [](const Tensor& x) { return x.index({mask({1, 0, 1, 0, 0, 1}, {2, 3}), 1}); }, {3, 2},
       {2, 3, 18, 19, 42, 43}},
      {"x[True, 0, k]", [&](const Tensor& x) { return x.index({true, 0, k}); }, {3, 4, 2},
       {8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}},
      // True is an advanced index too, so it separates from [3, 0].
      {"x[True, 0, :, [3, 0]]", [](const Tensor& x) { return x.index({true, 0, Slice(), i64({3, 0})}); }, {2, 3, 2},
       {6, 7, 14, 15, 22, 23, 0, 1, 8, 9, 16, 17}},
      {"x[None, [1, 0], None, [2, 1]]", [](const Tensor& x) { return x.index({None, i64({1, 0}), None, i64({2, 1})}); },
       {2, 1, 1, 4, 2}, {40, 41, 42, 43, 44, 45, 46, 47, 8, 9, 10, 11, 12, 13, 14, 15}},
      {"x[[[0], [1]], [2, 0, 1], 0, 1] (broadcast)",
       [](const Tensor& x) { return x.index({i64({0, 1}, {2, 1}), i64({2, 0, 1}), 0, 1}); }, {2, 3},
       {17, 1, 9, 41, 25, 33}},
      {"x[:, [[0, 2], [1, 1]], 3]", [](const Tensor& x) { return x.index({Slice(), i64({0, 2, 1, 1}, {2, 2}), 3}); },
       {2, 2, 2, 2}, {6, 7, 22, 23, 14, 15, 14, 15, 30, 31, 46, 47, 38, 39, 38, 39}},
      {"x[1, 2, ..., [1, 1, 0]]", [](const Tensor& x) { return x.index({1, 2, Ellipsis, i64({1, 1, 0})}); }, {4, 3},
       {41, 41, 40, 43, 43, 42, 45, 45, 44, 47, 47, 46}},
      {"x[tensor(1), :, k] (0-dim acts as an int)", [&](const Tensor& x) { return x.index({scalar_index(1), Slice(), k}); },
       {3, 3, 2}, {26, 27, 28, 29, 24, 25, 34, 35, 36, 37, 32, 33, 42, 43, 44, 45, 40, 41}},
      // int32 indices as in PyTorch >= 2.0 (1.13 refuses them; the values are those of int64 indices).
      {"x[1, int32 [2, 0], uint8 mask]",
       [](const Tensor& x) {
         return x.index({1, i64({2, 0}).to(gd::kInt32), tensor_of({1, 0, 0, 1}, {}, gd::kUInt8)});
       },
       {2, 2}, {40, 41, 30, 31}},
      {"x[x > 40]", [](const Tensor& x) { return x.index({x > 40}); }, {7}, {41, 42, 43, 44, 45, 46, 47}},
      {"x[::2, :, [-1, 0], 1:]", [](const Tensor& x) { return x.index({Slice(None, None, 2), Slice(), i64({-1, 0}), Slice(1, None)}); },
       {1, 3, 2, 1}, {7, 1, 15, 9, 23, 17}},
      {"x[[], 0]", [](const Tensor& x) { return x.index({i64({}, {0}), 0}); }, {0, 4, 2}, {}},
      {"x[False, 0, 0, 0]", [](const Tensor& x) { return x.index({false, 0, 0, 0}); }, {0, 2}, {}},
      {"x[True, 1, 2, 3]", [](const Tensor& x) { return x.index({true, 1, 2, 3}); }, {1, 2}, {46, 47}},
      {"x[tensor(True), 1, 2]", [](const Tensor& x) { return x.index({gd::scalar_tensor(true, gd::kBool), 1, 2}); },
       {1, 4, 2}, {40, 41, 42, 43, 44, 45, 46, 47}},
  };
  for (const Case& c : cases) {
    INFO(c.expr);
    CHECK(mismatch(c.fn(X4()), c.shape, c.values) == "");
    CHECK(mismatch(c.fn(X4_strided()), c.shape, c.values) == "");
  }
}

TEST_CASE("index with tensors copies, and a basic index list still gives a view") {
  Tensor x = X4();
  Tensor copy = x.index({i64({0})});
  CHECK(copy.storage() != x.storage());
  CHECK(x.index({Slice(), 1}).storage() == x.storage());
  CHECK(x.index({Slice(), scalar_index(1)}).storage() == x.storage());  // a 0-dim integer tensor selects
  CHECK(gd::equal(x.index({Slice(), scalar_index(-1)}), x.select(1, 2)));
  CHECK(X4().to(gd::kFloat32).index({i64({1})}).dtype() == gd::kFloat32);
  // A non-contiguous index tensor reads like its contiguous copy.
  Tensor strided_index = i64({0, 2, 1, 1}, {2, 2}).t();
  CHECK(gd::equal(x.index({Slice(), strided_index, 3}), x.index({Slice(), strided_index.contiguous(), 3})));
  // An index tensor on a tensor that requires grad records IndexBackward0.
  Tensor leaf = X().requires_grad_();
  CHECK(leaf.index({i64({1})}).grad_fn()->name() == "IndexBackward0");
}

TEST_CASE("index errors match PyTorch") {
  Tensor x3 = f64({1, 2, 3});
  struct ErrorCase {
    const char* expr;
    std::function<void()> fn;
    std::string message;
  };
  // python3 -c "import torch; x = torch.tensor([1., 2., 3.]); x[torch.tensor([5])]"  and so on
  std::vector<ErrorCase> cases = {
      {"x3[[5]]", [&] { x3.index({i64({5})}); }, "index 5 is out of bounds for dimension 0 with size 3"},
      {"x3[[-4]]", [&] { x3.index({i64({0, -4})}); }, "index -4 is out of bounds for dimension 0 with size 3"},
      // PyTorch numbers the dimension among the index tensors, not the tensor's dims.
      {"x[:, [5]]", [] { X4().index({Slice(), i64({5})}); }, "index 5 is out of bounds for dimension 0 with size 3"},
      {"x[:, [0], [4]]", [] { X4().index({Slice(), i64({0}), i64({4})}); },
       "index 4 is out of bounds for dimension 1 with size 4"},
      {"x3[[0.]]", [&] { x3.index({f64({0})}); }, "tensors used as indices must be long, int, byte or bool tensors"},
      {"x4[mask of 3]", [] { f64({1, 2, 3, 4}).index({mask({1, 0, 1})}); },
       "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [4] at index 0"},
      {"x[:, [True, False]]", [] { X4().index({Slice(), mask({1, 0})}); },
       "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [2, 3, 4, 2] at index 1"},
      {"x[None, :, [True, False]]", [] { X4().index({None, Slice(), mask({1, 0})}); },
       "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [1, 2, 3, 4, 2] at index 2"},
      {"x[0, 0, 0, 0, [0]]", [] { X4().index({0, 0, 0, 0, i64({0})}); }, "too many indices for tensor of dimension 4"},
      {"x[m23, 0, 0, 0]", [] { X4().index({mask({1, 0, 1, 0, 0, 1}, {2, 3}), 0, 0, 0}); },
       "too many indices for tensor of dimension 4"},
      {"x[[0, 1], [0, 1, 2]]", [] { X4().index({i64({0, 1}), i64({0, 1, 2})}); },
       "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"},
      {"x[False, :, [0, 1]]", [] { X4().index({false, Slice(), i64({0, 1})}); },
       "shape mismatch: indexing tensors could not be broadcast together with shapes [0], [2]"},
  };
  for (const auto& c : cases) {
    INFO(c.expr);
    CHECK(error_of(c.fn) == c.message);
  }
}

TEST_CASE("index_put_ matches PyTorch") {
  struct PutCase {
    const char* expr;
    std::function<void(Tensor&)> put;
    std::vector<double> values;  // of the 3x4 result
  };
  // python3 -c "import torch; z = torch.zeros(3, 4); z.index_put_((torch.tensor([0, 2]),), ...); print(z)" and so on
  std::vector<PutCase> cases = {
      {"z[[0, 2]] = [[1]*4, [2]*4]", [](Tensor& z) { z.index_put_({i64({0, 2})}, f64({1, 1, 1, 1, 2, 2, 2, 2}, {2, 4})); },
       {1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2}},
      {"z[[0, 2]] = [1, 2, 3, 4] (broadcast)", [](Tensor& z) { z.index_put_({i64({0, 2})}, f64({1, 2, 3, 4})); },
       {1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4}},
      {"z[[0, 2, -1], [1, 3, 0]] = [5, 6, 7]",
       [](Tensor& z) { z.index_put_({i64({0, 2, -1}), i64({1, 3, 0})}, f64({5, 6, 7})); },
       {0, 5, 0, 0, 0, 0, 0, 0, 7, 0, 0, 6}},
      {"accumulate, repeated", [](Tensor& z) { z.index_put_({i64({0, 0, 2, 0}), i64({1, 1, 3, 1})}, f64({1, 2, 3, 4}), true); },
       {0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
      {"z[mask] = 9", [](Tensor& z) { z.index_put_({mask({1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}, {3, 4})}, 9.0); },
       {9, 0, 0, 9, 0, 0, 0, 0, 0, 9, 0, 0}},
      {"z[:, [3, 1]] = [1, 2]", [](Tensor& z) { z.index_put_({Slice(), i64({3, 1})}, f64({1, 2})); },
       {0, 2, 0, 1, 0, 2, 0, 1, 0, 2, 0, 1}},
      {"z[1:, mask] = [[1, 2], [3, 4]]",
       [](Tensor& z) { z.index_put_({Slice(1, None), mask({1, 0, 1, 0})}, f64({1, 2, 3, 4}, {2, 2})); },
       {0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0}},
      {"z[[2, 0], 1:3] = 7", [](Tensor& z) { z.index_put_({i64({2, 0}), Slice(1, 3)}, 7.0); },
       {0, 7, 7, 0, 0, 0, 0, 0, 0, 7, 7, 0}},
      {"z[1, [0, 0, 3]] = [1, 2, 3] (last write wins)", [](Tensor& z) { z.index_put_({1, i64({0, 0, 3})}, f64({1, 2, 3})); },
       {0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0}},
      {"accumulate, broadcast indices",
       [](Tensor& z) { z.index_put_({i64({1}), i64({0, 3}, {2, 1})}, f64({1, 2}, {2, 1}), true); },
       {0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0}},
  };
  for (const auto& c : cases) {
    INFO(c.expr);
    Tensor z = gd::zeros({3, 4}, gd::kFloat64);
    uint32_t version = z._version();
    c.put(z);
    CHECK(mismatch(z, {3, 4}, c.values) == "");
    CHECK(z._version() == version + 1);
  }
  // Values that alias the target are read before any write (PyTorch refuses them):
  // z[[1, 2]] = z[0:2] moves rows 0 and 1 down.
  Tensor z = gd::arange(12, gd::kFloat64).reshape({3, 4});
  z.index_put_({i64({1, 2})}, z.narrow(0, 0, 2));
  CHECK(mismatch(z, {3, 4}, {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7}) == "");
  // An integer tensor takes an integer scalar: z = torch.zeros(3, dtype=torch.long); z[[0, 2]] = 7
  Tensor zl = gd::zeros({3}, gd::kInt64);
  zl.index_put_({i64({0, 2})}, 7);
  CHECK(mismatch(zl, {3}, {7, 0, 7}) == "");
  // Writing through a view reaches the base.
  Tensor base = gd::zeros({2, 3}, gd::kFloat64);
  Tensor row = base.select(0, 1);
  row.index_put_({i64({2})}, 5.0);
  CHECK(mismatch(base, {2, 3}, {0, 0, 0, 0, 0, 5}) == "");
}

TEST_CASE("index_put_ errors match PyTorch and leave self unchanged") {
  Tensor z = gd::zeros({2, 3}, gd::kFloat64);
  CHECK(error_of([&] { gd::zeros({3}, gd::kFloat32).index_put_({i64({0})}, f64({1})); }) ==
        "Index put requires the source and destination dtypes match, got Float for the destination and Double for the "
        "source.");
  CHECK(error_of([&] { gd::zeros({3}, gd::kFloat64).index_put_({i64({0})}, f64({1, 2})); }) ==
        "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [1]");
  // ATen's index_put_ op keeps the values' leading 1s; libtorch's Tensor::index_put_({...}, v) drops them (x[i] = v).
  Tensor y = gd::zeros({3}, gd::kFloat64);
  CHECK(error_of([&] { gd::index_put_(y, {i64({0, 1})}, f64({1, 2}, {1, 2})); }) ==
        "shape mismatch: value tensor of shape [1, 2] cannot be broadcast to indexing result of shape [2]");
  y.index_put_({i64({0, 1})}, f64({1, 2}, {1, 1, 2}));
  CHECK(gd::testing::values_of(y) == std::vector<double>{1, 2, 0});
  z.index_put_({i64({0}), i64({2})}, 1.0);
  Tensor before = z.clone();
  CHECK(error_of([&] { z.index_put_({i64({0, 1}), i64({2, 5})}, f64({1}), true); }) ==
        "index 5 is out of bounds for dimension 1 with size 3");
  CHECK(gd::equal(z, before));
  CHECK(error_of([&] { gd::zeros({2}, gd::kFloat64).requires_grad_().index_put_({i64({0})}, 1.0); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK(error_of([&] { gd::zeros({1}, gd::kFloat64).expand({3}).index_put_({i64({0})}, 1.0); }) ==
        "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
        "Please clone() the tensor before performing the operation.");
}

TEST_CASE("masked_fill_ matches PyTorch") {
  // z = torch.arange(6.).reshape(2, 3); z.masked_fill_(torch.tensor([True, False, True]), -1.)
  Tensor z = gd::arange(6, gd::kFloat64).reshape({2, 3});
  Tensor& same = z.masked_fill_(mask({1, 0, 1}), -1.0);
  CHECK(same.is_same(z));
  CHECK(mismatch(z, {2, 3}, {-1, 1, -1, -1, 4, -1}) == "");
  CHECK(z._version() == 1);
  // torch.zeros(3, dtype=torch.long).masked_fill_(torch.tensor([True, False, True]), 2.5) -> [2, 0, 2]
  Tensor zl = gd::zeros({3}, gd::kInt64);
  zl.masked_fill_(mask({1, 0, 1}), 2.5);
  CHECK(mismatch(zl, {3}, {2, 0, 2}) == "");
  CHECK(error_of([] { gd::zeros({3, 4}, gd::kFloat64).masked_fill_(gd::ones({1, 3, 4}, gd::kBool), 1.0); }) ==
        "masked_fill_: output with shape [3, 4] doesn't match the broadcast shape [1, 3, 4]");
  CHECK(error_of([] { gd::zeros({3}, gd::kFloat64).masked_fill_(i64({1, 0, 1}), 1.0); }) ==
        "masked_fill_ only supports boolean masks, but got mask with dtype Long");
  CHECK(error_of([] { gd::zeros({3}, gd::kFloat64).requires_grad_().masked_fill_(mask({1, 0, 1}), 1.0); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("PyTorch documentation examples: masked_select, index_select, gather, scatter, index_add") {
  // torch.masked_select docs: x = torch.randn(3, 4) printed as below; mask = x.ge(0.5)
  Tensor x = tensor_of({0.3552, -2.3825, -0.8297, 0.3477, -1.2035, 1.2252, 0.5002, 0.6248, 0.1307, -2.0608, 0.1244, 2.0139},
                       {3, 4}, gd::kFloat32);
  CHECK(mismatch(gd::masked_select(x, x.ge(0.5)), {4},
                 {1.2252000570297241, 0.5001999735832214, 0.6248000264167786, 2.0139000415802}) == "");

  // torch.index_select docs
  Tensor y = tensor_of({0.1427, 0.0231, -0.5414, -1.0009, -0.4664, 0.2647, -0.1228, -1.1068, -1.1734, -0.6571, 0.7230,
                        -0.6004},
                       {3, 4}, gd::kFloat32);
  Tensor indices = i64({0, 2});
  CHECK(mismatch(gd::index_select(y, 0, indices), {2, 4},
                 {0.14270000159740448, 0.023099999874830246, -0.5414000153541565, -1.0009000301361084,
                  -1.1734000444412231, -0.6571000218391418, 0.7229999899864197, -0.6003999710083008}) == "");
  CHECK(mismatch(gd::index_select(y, 1, indices), {3, 2},
                 {0.14270000159740448, -0.5414000153541565, -0.46639999747276306, -0.12280000001192093,
                  -1.1734000444412231, 0.7229999899864197}) == "");

  // torch.gather docs: t = torch.tensor([[1, 2], [3, 4]]); torch.gather(t, 1, torch.tensor([[0, 0], [1, 0]]))
  CHECK(mismatch(gd::gather(i64({1, 2, 3, 4}, {2, 2}), 1, i64({0, 0, 1, 0}, {2, 2})), {2, 2}, {1, 1, 4, 3}) == "");

  // Tensor.scatter_ docs: src = torch.arange(1, 11).reshape((2, 5))
  Tensor src = gd::arange(1, 11, 1, gd::kInt64).reshape({2, 5});
  CHECK(mismatch(gd::zeros({3, 5}, gd::kInt64).scatter(0, i64({0, 1, 2, 0}, {1, 4}), src), {3, 5},
                 {1, 0, 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0}) == "");
  CHECK(mismatch(gd::zeros({3, 5}, gd::kInt64).scatter(1, i64({0, 1, 2, 0, 1, 4}, {2, 3}), src), {3, 5},
                 {1, 2, 3, 0, 0, 6, 7, 0, 0, 8, 0, 0, 0, 0, 0}) == "");
  // torch.full((2, 4), 2.).scatter_(1, torch.tensor([[2], [3]]), 1.23)
  CHECK(mismatch(gd::full({2, 4}, 2.0, gd::kFloat32).scatter(1, i64({2, 3}, {2, 1}), 1.23), {2, 4},
                 {2, 2, 1.2300000190734863, 2, 2, 2, 2, 1.2300000190734863}) == "");

  // Tensor.index_add_ docs: x = torch.ones(5, 3); t = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]; index = [0, 4, 2]
  Tensor t = tensor_of({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}, gd::kFloat32);
  Tensor ones = gd::ones({5, 3}, gd::kFloat32);
  CHECK(mismatch(ones.index_add(0, i64({0, 4, 2}), t), {5, 3}, {2, 3, 4, 1, 1, 1, 8, 9, 10, 1, 1, 1, 5, 6, 7}) == "");
  CHECK(mismatch(ones.index_add(0, i64({0, 4, 2}), t, -1), {5, 3},
                 {0, -1, -2, 1, 1, 1, -6, -7, -8, 1, 1, 1, -3, -4, -5}) == "");
}

TEST_CASE("scatter, index_select, index_add, masked_select values match PyTorch") {
  // python3 -c "import torch; X = torch.tensor([[1.,2,3],[4,5,6]]); print(X.t().contiguous().t().scatter(...))" and so on
  std::vector<Case> cases = {
      {"X.scatter(1, [[2, 0], [1, 2]], src) (strided X)",
       [](const Tensor& x) { return x.t().contiguous().t().scatter(1, i64({2, 0, 1, 2}, {2, 2}), f64({10, 20, 30, 40, 50, 60}, {2, 3})); },
       {2, 3}, {20, 2, 10, 4, 40, 50}},
      {"X.scatter(-2, [[1, 0, 1]], [[7, 8, 9]])", [](const Tensor& x) { return x.scatter(-2, i64({1, 0, 1}, {1, 3}), f64({7, 8, 9}, {1, 3})); },
       {2, 3}, {1, 8, 3, 7, 5, 9}},
      {"long X.scatter(1, [[0], [2]], 2.7)", [](const Tensor& x) { return x.to(gd::kInt64).scatter(1, i64({0, 2}, {2, 1}), 2.7); },
       {2, 3}, {2, 2, 3, 4, 5, 2}},
      {"tensor(5.).scatter(0, tensor(0), tensor(2.))",
       [](const Tensor&) { return gd::scalar_tensor(5.0, gd::kFloat64).scatter(0, scalar_index(0), gd::scalar_tensor(2.0, gd::kFloat64)); },
       {}, {2}},
      {"X.index_select(-1, [2, 2, 0])", [](const Tensor& x) { return x.index_select(-1, i64({2, 2, 0})); }, {2, 3},
       {3, 3, 1, 6, 6, 4}},
      {"X.index_select(0, int32 [1, 0, 1])", [](const Tensor& x) { return x.index_select(0, i64({1, 0, 1}).to(gd::kInt32)); },
       {3, 3}, {4, 5, 6, 1, 2, 3, 4, 5, 6}},
      {"X.index_select(1, tensor(1))", [](const Tensor& x) { return x.index_select(1, scalar_index(1)); }, {2, 1}, {2, 5}},
      {"tensor(5.).index_select(0, [0])",
       [](const Tensor&) { return gd::scalar_tensor(5.0, gd::kFloat64).index_select(0, i64({0})); }, {}, {5}},
      {"X.t().index_select(0, [2, 0])", [](const Tensor& x) { return x.t().index_select(0, i64({2, 0})); }, {2, 2},
       {3, 6, 1, 4}},
      {"X.index_select(1, [])", [](const Tensor& x) { return x.index_select(1, i64({}, {0})); }, {2, 0}, {}},
      {"bool index_select", [](const Tensor&) { return mask({1, 0, 0, 1}, {2, 2}).index_select(1, i64({1, 1, 0})); },
       {2, 3}, {0, 0, 1, 1, 1, 0}},
      {"X.index_add(1, [2, 2], [[1, 2], [3, 4]], alpha=2.5)",
       [](const Tensor& x) { return x.index_add(1, i64({2, 2}), f64({1, 2, 3, 4}, {2, 2}), 2.5); }, {2, 3},
       {1, 2, 10.5, 4, 5, 23.5}},
      {"long index_add(0, [1, 1, 0], ..., alpha=2)",
       [](const Tensor& x) { return x.to(gd::kInt64).index_add(0, i64({1, 1, 0}), i64({1, 1, 1, 2, 2, 2, 3, 3, 3}, {3, 3}), 2); },
       {2, 3}, {7, 8, 9, 10, 11, 12}},
      {"X.index_add(0, [1], strided source)",
       [](const Tensor& x) { return x.index_add(0, i64({1}), f64({1, 2, 3, 4, 5, 6}, {3, 2}).t().narrow(0, 0, 1)); },
       {2, 3}, {1, 2, 3, 5, 8, 11}},
      {"tensor(5.).index_add(0, [0], tensor(2.))",
       [](const Tensor&) { return gd::scalar_tensor(5.0, gd::kFloat64).index_add(0, i64({0}), gd::scalar_tensor(2.0, gd::kFloat64)); },
       {}, {7}},
      {"tensor([1., 2]).index_add(0, tensor(1), tensor(2.))",
       [](const Tensor&) { return f64({1, 2}).index_add(0, scalar_index(1), gd::scalar_tensor(2.0, gd::kFloat64)); },
       {2}, {1, 4}},
      {"X.masked_select([True, False, True]) (broadcast mask)", [](const Tensor& x) { return x.masked_select(mask({1, 0, 1})); },
       {4}, {1, 3, 4, 6}},
      {"[1., 2, 3].masked_select(2x3 mask) (broadcast x)",
       [](const Tensor&) { return f64({1, 2, 3}).masked_select(mask({1, 0, 1, 0, 1, 0}, {2, 3})); }, {3}, {1, 3, 2}},
      {"X.t().masked_select(mask)", [](const Tensor& x) { return x.t().masked_select(mask({1, 0, 0, 1, 1, 1}, {3, 2})); },
       {4}, {1, 5, 3, 6}},
      {"tensor(5.).masked_select(tensor(True))",
       [](const Tensor&) { return gd::scalar_tensor(5.0, gd::kFloat64).masked_select(gd::scalar_tensor(true, gd::kBool)); },
       {1}, {5}},
  };
  for (const Case& c : cases) {
    INFO(c.expr);
    CHECK(mismatch(c.fn(X()), c.shape, c.values) == "");
  }
  CHECK(X().index_select(0, i64({1})).dtype() == gd::kFloat64);
  CHECK(X().to(gd::kInt32).index_add(1, i64({0}), gd::ones({2, 1}, gd::kInt32)).dtype() == gd::kInt32);
}

TEST_CASE("scatter, index_select, index_add, masked_select errors match PyTorch") {
  Tensor z = gd::zeros({3, 4}, gd::kFloat32), src = gd::ones({3, 4}, gd::kFloat32);
  struct ErrorCase {
    const char* expr;
    std::function<void()> fn;
    std::string message;
  };
  // python3 -c "import torch; t = torch.zeros(3, 4); t.scatter(1, torch.tensor([[0]], dtype=torch.int32), torch.ones(3, 4))" ...
  std::vector<ErrorCase> cases = {
      {"scatter int32 index", [&] { z.scatter(1, i64({0}, {1, 1}).to(gd::kInt32), src); },
       "scatter(): Expected dtype int64 for index"},
      {"scatter index 5", [&] { z.scatter(1, i64({5}, {1, 1}), src); }, "index 5 is out of bounds for dimension 1 with size 4"},
      {"scatter index -1", [&] { z.scatter(1, i64({-1}, {1, 1}), 2.0); }, "index -1 is out of bounds for dimension 1 with size 4"},
      {"scatter index too large", [&] { z.scatter(1, i64({0, 1, 2, 3, 0}, {1, 5}), src); },
       "Expected index [1, 5] to be smaller than self [3, 4] apart from dimension 1 and to be smaller size than src [3, 4]"},
      {"scatter value index too large", [&] { z.scatter(1, gd::zeros({4, 4}, gd::kInt64), 1.5); },
       "Expected index [4, 4] to be smaller than self [3, 4] apart from dimension 1"},
      {"scatter 1-D index", [&] { z.scatter(1, i64({0, 1, 2, 3}), 1.5); },
       "Index tensor must have the same number of dimensions as self tensor"},
      {"scatter src dtype", [&] { z.scatter(1, i64({0, 1}, {1, 2}), gd::ones({3, 4}, gd::kFloat64)); },
       "scatter(): Expected self.dtype to be equal to src.dtype"},
      {"scatter src smaller", [&] { z.scatter(1, i64({0, 1}, {1, 2}), gd::ones({1, 1}, gd::kFloat32)); },
       "Expected index [1, 2] to be smaller than self [3, 4] apart from dimension 1 and to be smaller size than src [1, 1]"},
      {"index_select 2-D index", [&] { z.index_select(1, i64({0, 1}, {1, 2})); },
       "index_select(): Index is supposed to be a vector"},
      {"index_select float index", [&] { z.index_select(1, f64({0, 1})); },
       "index_select(): Expected dtype int32 or int64 for index"},
      {"index_select index 4", [&] { z.index_select(1, i64({0, 4})); }, "index 4 is out of bounds for dimension 1 with size 4"},
      {"index_select index -1", [&] { z.index_select(1, i64({0, -1})); },
       "index -1 is out of bounds for dimension 1 with size 4"},
      // PyTorch 1.13's text, for a nonempty index into a dimension of size 0.
      {"index_select from no rows", [] { gd::empty({0, 3}).index_select(0, i64({0})); },
       "index_select(): self indexing axis dim should be positive"},
      {"index_select dim 2", [&] { z.index_select(2, i64({0})); },
       "index_select: Dimension out of range (expected to be in range of [-2, 1], but got 2)"},
      {"index_select 0-dim self, 2 indices", [] { gd::scalar_tensor(5.0).index_select(0, i64({0, 0})); },
       "index_select(): Index to scalar can have only 1 value, got 2 value(s)"},
      {"index_add 2-D index", [&] { z.index_add(1, i64({0, 1}, {1, 2}), gd::ones({3, 2}, gd::kFloat32)); },
       "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: [1, 2]"},
      {"index_add float index", [&] { z.index_add(1, tensor_of({0, 1}, {}, gd::kFloat32), gd::ones({3, 2}, gd::kFloat32)); },
       "index_add_(): Expected dtype int32/int64 for index but got: Float"},
      {"index_add index count", [&] { z.index_add(1, i64({0, 1}), gd::ones({3, 3}, gd::kFloat32)); },
       "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 1"},
      {"index_add source dtype", [&] { z.index_add(1, i64({0, 1}), gd::ones({3, 2}, gd::kFloat64)); },
       "index_add_(): self (Float) and source (Double) must have the same scalar type"},
      // PyTorch 1.13 fails inside its kernel with a broadcasting message; this one names the shapes.
      {"index_add source shape", [&] { z.index_add(1, i64({0, 1}), gd::ones({2, 2}, gd::kFloat32)); },
       "index_add_(): self [3, 4] and source [2, 2] must have the same size in every dimension except dimension 1"},
      {"index_add index 4", [&] { z.index_add(1, i64({0, 4}), gd::ones({3, 2}, gd::kFloat32)); },
       "index 4 is out of bounds for dimension 1 with size 4"},
      {"index_add rows, index 3", [&] { z.index_add(0, i64({0, 3}), gd::ones({2, 4}, gd::kFloat32)); },
       "index 3 is out of bounds for dimension 0 with size 3"},
      // PyTorch >= 2.0's text (1.13 also names ByteTensor, which gradiens does not take as a mask here).
      {"masked_select long mask", [&] { z.masked_select(i64({1, 0, 1, 0})); }, "masked_select: expected BoolTensor for mask"},
      {"masked_select shapes", [&] { z.masked_select(mask({1, 0, 1})); },
       "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"},
  };
  for (const auto& c : cases) {
    INFO(c.expr);
    CHECK(error_of(c.fn) == c.message);
  }
}

TEST_CASE("nonzero and where(condition) match PyTorch") {
  // python3 -c "import torch; print(torch.tensor([[0., 1, 0], [2, 0, -3]]).nonzero())" and so on
  Tensor a = f64({0, 1, 0, 2, 0, -3}, {2, 3});
  CHECK(mismatch(a.nonzero(), {3, 2}, {0, 1, 1, 0, 1, 2}) == "");
  CHECK(a.nonzero().dtype() == gd::kInt64);
  CHECK(mismatch(a.t().nonzero(), {3, 2}, {0, 1, 1, 0, 2, 1}) == "");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(mismatch(gd::nonzero(f64({nan, 0, -0.0, 1e-300})), {2, 1}, {0, 3}) == "");  // NaN is nonzero, -0 is not
  CHECK(mismatch(mask({1, 0, 1, 1}, {2, 2}).nonzero(), {3, 2}, {0, 0, 1, 0, 1, 1}) == "");
  CHECK(mismatch(i64({0, 1, 1, 0, 0, 0, 0, 7}, {2, 2, 2}).nonzero(), {3, 3}, {0, 0, 1, 0, 1, 0, 1, 1, 1}) == "");
  CHECK(mismatch(gd::scalar_tensor(5.0).nonzero(), {1, 0}, {}) == "");
  CHECK(mismatch(gd::scalar_tensor(0.0).nonzero(), {0, 0}, {}) == "");
  CHECK(mismatch(gd::zeros({2, 0}).nonzero(), {0, 2}, {}) == "");

  std::vector<Tensor> w = gd::where(a);
  REQUIRE(w.size() == 2);
  CHECK(mismatch(w[0], {3}, {0, 1, 1}) == "");
  CHECK(mismatch(w[1], {3}, {1, 0, 2}) == "");
  // torch.where(torch.tensor(5.)) -> (tensor([0]),)
  std::vector<Tensor> w0 = gd::where(gd::scalar_tensor(5.0));
  REQUIRE(w0.size() == 1);
  CHECK(mismatch(w0[0], {1}, {0}) == "");
  // The index tensors of where(c) pick the same elements as the mask c.
  Tensor x = X4(), cond = x.gt(30);
  std::vector<Tensor> w4 = gd::where(cond);
  CHECK(gd::equal(x.index({w4[0], w4[1], w4[2], w4[3]}), x.masked_select(cond)));
}

TEST_CASE("large index, index_select and gather agree (the parallel paths)") {
  const int64_t n = 100003;
  Tensor x = gd::testing::sample({n}, -1, 1, 11);
  // A permutation, (7919 k) mod n (7919 is prime to n), and the same with odd k's entries made negative.
  std::vector<double> perm(n), signed_perm(n);
  for (int64_t k = 0; k < n; ++k) {
    perm[k] = static_cast<double>((7919 * k) % n);
    signed_perm[k] = k % 2 == 1 ? perm[k] - static_cast<double>(n) : perm[k];
  }
  Tensor index = i64(perm), mixed = i64(signed_perm);
  CHECK(gd::equal(x.index({mixed}), x.index_select(0, index)));
  CHECK(gd::equal(x.index({mixed}), x.gather(0, index)));
  Tensor back = gd::zeros({n}, gd::kFloat64);
  back.index_put_({mixed}, x.index({mixed}));
  CHECK(gd::equal(back, x));  // a permutation writes every element once
}

TEST_CASE("gradients of advanced indexing match PyTorch") {
  // x = torch.arange(6.).reshape(2, 3).requires_grad_(); x[[0, 0, 1], [2, 2, 0]].backward(torch.tensor([1., 2, 3]))
  Tensor x = gd::arange(6, gd::kFloat64).reshape({2, 3}).detach().requires_grad_();
  x.index({i64({0, 0, 1}), i64({2, 2, 0})}).backward(f64({1, 2, 3}));
  CHECK(mismatch(x.grad(), {2, 3}, {0, 0, 3, 3, 0, 0}) == "");  // repeated indices accumulate

  // y = x.clone(); y[[1], [0, 2]] = v; (y * torch.arange(6.).reshape(2, 3)).sum().backward()
  Tensor w = gd::arange(6, gd::kFloat64).reshape({2, 3});
  x = gd::arange(6, gd::kFloat64).reshape({2, 3}).detach().requires_grad_();
  Tensor v = f64({10, 20}).requires_grad_();
  Tensor y = x.clone();
  y.index_put_({i64({1}), i64({0, 2})}, v);
  CHECK(y.grad_fn()->name() == "IndexPutBackward0");
  (y * w).sum().backward();
  CHECK(mismatch(x.grad(), {2, 3}, {0, 1, 2, 0, 4, 0}) == "");
  CHECK(mismatch(v.grad(), {2}, {3, 5}) == "");

  // y.index_put_((torch.tensor([1, 1, 0]), torch.tensor([0, 0, 2])), v, accumulate=True) with v of shape [1]
  x = gd::arange(6, gd::kFloat64).reshape({2, 3}).detach().requires_grad_();
  v = f64({10}).requires_grad_();
  y = x.clone();
  y.index_put_({i64({1, 1, 0}), i64({0, 0, 2})}, v, true);
  (y * w).sum().backward();
  CHECK(mismatch(x.grad(), {2, 3}, {0, 1, 2, 3, 4, 5}) == "");
  CHECK(mismatch(v.grad(), {1}, {8}) == "");  // broadcast values: 3 + 3 + 2

  // x.masked_select(torch.tensor([True, False, True])).backward(torch.tensor([1., 2, 3, 4]))
  x = gd::arange(6, gd::kFloat64).reshape({2, 3}).detach().requires_grad_();
  x.masked_select(mask({1, 0, 1})).backward(f64({1, 2, 3, 4}));
  CHECK(mismatch(x.grad(), {2, 3}, {1, 0, 2, 3, 0, 4}) == "");

  // The index is saved like any input: changing it in place before backward is an error.
  x = X().requires_grad_();
  Tensor index = i64({1, 0});
  Tensor out = x.index({index});
  index.add_(1);
  CHECK(error_of([&] { out.sum().backward(); }).find("one of the variables needed for gradient computation has been "
                                                        "modified by an inplace operation") == 0);
}

TEST_CASE("gradcheck and gradgradcheck through mixed indexing, with create_graph") {
  // f(x) = sum(x[:, i, None, m]^3): its Hessian is diagonal, 6 x times how often each element is picked
  // (i = [2, 0, -1] picks index 2 twice).
  Tensor x = gd::testing::sample({2, 3, 4, 2}, -1, 1, 3).requires_grad_();
  Tensor i = i64({2, 0, -1}), m = mask({1, 0, 1, 1});
  Tensor y = x.index({Slice(), i, None, m}).pow(3).sum();
  Tensor g = gd::autograd::grad({y}, {x}, {}, true, true)[0];
  Tensor h = gd::autograd::grad({g.sum()}, {x})[0];
  Tensor picked = gd::zeros({2, 3, 4, 2}, gd::kFloat64);
  picked.index_put_({Slice(), i, None, m}, gd::scalar_tensor(1.0, gd::kFloat64), true);
  CHECK(gd::testing::value_mismatch(h, x.detach() * 6.0 * picked) == "");
}
