// index_reduce and index_reduce_: values and gradients from PyTorch 1.13.1
// (python3-torch), each case run there, PyTorch's error messages, and
// gradcheck/gradgradcheck rows in the op sweep (op_rows/index_reduce.cpp, which
// also puts the op in the CUDA sweep against the CPU).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::shape_value_mismatch;
using gd::testing::tensor_of;

namespace {

Tensor f64(std::vector<double> v, std::vector<int64_t> shape = {}) { return tensor_of(v, shape); }
Tensor i64(std::vector<double> v, std::vector<int64_t> shape = {}) { return tensor_of(v, shape, gd::kInt64); }
Tensor self4x3() { return gd::arange(1, 13, gd::kFloat64).reshape({4, 3}); }
Tensor source4x3() { return f64({2, -1, 0.5, 3, 3, 3, -2, 4, 1.5, 0.5, 0.25, 2}, {4, 3}); }
Tensor index4() { return i64({0, 3, 0, 2}); }

}  // namespace

TEST_CASE("index_reduce: each reduction, with and without self (values from PyTorch 1.13.1)") {
  struct Case {
    const char* reduce;
    bool include_self;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {"prod", true, {-4, -8, 2.25, 4, 5, 6, 3.5, 2, 18, 30, 33, 36}},
      {"prod", false, {-4, -4, 0.75, 4, 5, 6, 0.5, 0.25, 2, 3, 3, 3}},
      {"mean", true, {1.0 / 3, 5.0 / 3, 5.0 / 3, 4, 5, 6, 3.75, 4.125, 5.5, 6.5, 7, 7.5}},
      {"mean", false, {0, 1.5, 1, 4, 5, 6, 0.5, 0.25, 2, 3, 3, 3}},
      {"amax", true, {2, 4, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
      {"amax", false, {2, 4, 1.5, 4, 5, 6, 0.5, 0.25, 2, 3, 3, 3}},
      {"amin", true, {-2, -1, 0.5, 4, 5, 6, 0.5, 0.25, 2, 3, 3, 3}},
      {"amin", false, {-2, -1, 0.5, 4, 5, 6, 0.5, 0.25, 2, 3, 3, 3}},
  };
  for (const Case& c : cases) {
    INFO(c.reduce << (c.include_self ? "" : " without self"));
    CHECK(shape_value_mismatch(self4x3().index_reduce(0, index4(), source4x3(), c.reduce, c.include_self), c.expected,
                               {4, 3}) == "");
    Tensor y = self4x3();
    y.index_reduce_(0, index4(), source4x3(), c.reduce, c.include_self);
    CHECK(shape_value_mismatch(y, c.expected, {4, 3}) == "");
  }
}

TEST_CASE("index_reduce: other dims, int32 index, integer mean, 0-dim self (values from PyTorch 1.13.1)") {
  Tensor source = f64({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  CHECK(shape_value_mismatch(self4x3().index_reduce(1, i64({2, 0}), source, "mean"),
                             {1.5, 2, 2, 4, 5, 4.5, 6.5, 8, 7, 9, 11, 9.5}, {4, 3}) == "");
  CHECK(shape_value_mismatch(self4x3().index_reduce(-1, i64({2, 0}), source, "amin", false),
                             {2, 2, 1, 4, 5, 3, 6, 8, 5, 8, 11, 7}, {4, 3}) == "");
  // Integer mean divides with floor, as scatter_reduce; an int32 index is accepted.
  Tensor ints = tensor_of({5, 7, -3}, {3}, gd::kInt64);
  Tensor mean = ints.index_reduce(0, tensor_of({0, 0, 2, 2}, {4}, gd::kInt32), i64({4, 1, 6, -6}), "mean");
  CHECK(mean.dtype() == gd::kInt64);
  CHECK(shape_value_mismatch(mean, {3, 7, -1}, {3}) == "");
  CHECK(shape_value_mismatch(ints.index_reduce(0, i64({0, 0, 2}), i64({4, 1, -6}), "amax", false), {4, 7, -6}, {3}) ==
        "");
  Tensor scalar = gd::scalar_tensor(3.0, gd::kFloat64).index_reduce(0, i64({0, 0}), f64({2, 5}), "prod");
  CHECK(scalar.dim() == 0);
  CHECK(scalar.item<double>() == 30);
}

TEST_CASE("index_reduce: gradients of prod (values from PyTorch 1.13.1)") {
  Tensor x = self4x3().requires_grad_(true), source = source4x3().requires_grad_(true);
  Tensor w = gd::arange(12, gd::kFloat64).reshape({4, 3});
  auto grads = gd::autograd::grad({(x.index_reduce(0, index4(), source, "prod") * w).sum()}, {x, source});
  CHECK(shape_value_mismatch(grads[0], {0, -4, 1.5, 3, 4, 5, 3, 1.75, 16, 27, 30, 33}, {4, 3}) == "");
  CHECK(shape_value_mismatch(grads[1], {0, 8, 9, 90, 110, 132, 0, -2, 3, 42, 56, 72}, {4, 3}) == "");
}

TEST_CASE("index_reduce: errors with PyTorch's messages") {
  Tensor x = gd::ones({3, 4});
  auto call = [&](const Tensor& index, const Tensor& source, const char* reduce = "prod") {
    return error_of([&] { x.index_reduce(0, index, source, reduce); });
  };
  CHECK(call(i64({0, 2}), gd::ones({2, 4}), "sum") ==
        "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum.");
  CHECK(call(i64({0, 2}, {1, 2}), gd::ones({2, 4})) ==
        "index_reduce_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: [1, 2]");
  CHECK(call(i64({0, 2, 1}), gd::ones({2, 4})) ==
        "index_reduce_(): Number of indices (3) should be equal to source.size(dim): (2), for dim: 0");
  CHECK(call(i64({0, 5}), gd::ones({2, 4})) == "index out of range in self");
  CHECK(call(i64({0, -1}), gd::ones({2, 4})) == "index out of range in self");
  CHECK(call(tensor_of({0, 2}, {2}, gd::kFloat32), gd::ones({2, 4})) ==
        "index_reduce_(): Expected dtype int32/int64 for index but got: Float");
  CHECK(call(i64({0, 2}), gd::ones({2, 4}, gd::kFloat64)) ==
        "index_reduce_(): self (Float) and source (Double) must have the same scalar type");
  CHECK(call(i64({0, 2}), gd::ones({2, 3})) ==
        "index_reduce_(): source's size 3 at dimension 1 does not match self's size 4");
}
