// Tests for gradiens::tensor(data, options): shapes, values, dtype inference
// (libtorch's torch::tensor) and the errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "engine/tensor_data.h"
#include "gradiens.h"

namespace gd = gradiens;

namespace {

std::vector<int64_t> shape(const gd::Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

// The elements in row-major order, as doubles.
std::vector<double> values(const gd::Tensor& t) {
  gd::Tensor flat = t.to(gd::kFloat64).contiguous().reshape({-1});
  const double* p = flat.data_ptr<double>();
  return {p, p + flat.numel()};
}

using Shape = std::vector<int64_t>;
using Values = std::vector<double>;

}  // namespace

TEST_CASE("tensor: shapes and values") {
  // clang-format off
  CHECK(shape(gd::tensor({{1., 2.}, {3., 4.}})) == Shape{2, 2});
  CHECK(values(gd::tensor({{1., 2.}, {3., 4.}})) == Values{1, 2, 3, 4});
  CHECK(shape(gd::tensor({{{1, 2, 3}}, {{4, 5, 6}}})) == Shape{2, 1, 3});
  CHECK(values(gd::tensor({{{1, 2, 3}}, {{4, 5, 6}}})) == Values{1, 2, 3, 4, 5, 6});
  CHECK(shape(gd::tensor(3.5)) == Shape{});
  CHECK(gd::tensor(3.5).item<double>() == 3.5);
  CHECK(shape(gd::tensor({3.5})) == Shape{1});
  CHECK(shape(gd::tensor({})) == Shape{0});
  CHECK(shape(gd::tensor({{}, {}})) == Shape{2, 0});                                       // torch.tensor([[], []]).shape
  CHECK(values(gd::tensor({true, false, true})) == Values{1, 0, 1});
  CHECK(values(gd::tensor(std::vector<double>{0.5, -1.5})) == Values{0.5, -1.5});
  CHECK(values(gd::tensor(std::vector<int64_t>{7, -8, 9})) == Values{7, -8, 9});
  CHECK(values(gd::tensor(std::vector<bool>{true, false})) == Values{1, 0});
  CHECK(shape(gd::tensor(std::vector<float>{})) == Shape{0});
  CHECK(values(gd::tensor({std::vector<double>{1, 2}, std::vector<double>{3, 4}})) == Values{1, 2, 3, 4});
  CHECK(shape(gd::tensor({std::vector<double>{1, 2}, std::vector<double>{3, 4}})) == Shape{2, 2});
  // libtorch's test (TensorTest.MultidimTensorCtor): eight levels of braces
  CHECK(shape(gd::tensor({{{{{{{{1.0, 2.0, 3.0}}}}}, {{{{{4.0, 5.0, 6.0}}}}}, {{{{{7.0, 8.0, 9.0}}}}}}}})) ==
        Shape{1, 1, 3, 1, 1, 1, 1, 3});
  // clang-format on
}

TEST_CASE("tensor: dtype inference") {
  // libtorch: floating data -> the default dtype, integers -> int64, bool -> bool,
  // an empty vector -> its element type's (a braced list mixing types is an
  // error, below).
  // clang-format off
  CHECK(gd::tensor({1., 2.}).dtype() == gd::kFloat32);
  CHECK(gd::tensor({1.f, 2.f}).dtype() == gd::kFloat32);
  CHECK(gd::tensor({1, 2}).dtype() == gd::kInt64);
  CHECK(gd::tensor({int64_t{1}, int64_t{2}}).dtype() == gd::kInt64);
  CHECK(gd::tensor({true, false}).dtype() == gd::kBool);
  CHECK(gd::tensor(3.5).dtype() == gd::kFloat32);
  CHECK(gd::tensor(3).dtype() == gd::kInt64);
  CHECK(gd::tensor(true).dtype() == gd::kBool);
  CHECK(gd::tensor({}).dtype() == gd::kFloat32);
  CHECK(gd::tensor(std::vector<int64_t>{}).dtype() == gd::kInt64);          // libtorch: Long, not the default dtype
  CHECK(gd::tensor(std::vector<int>{}).dtype() == gd::kInt64);
  CHECK(gd::tensor(std::vector<bool>{}).dtype() == gd::kBool);
  CHECK(gd::tensor(std::vector<double>{}).dtype() == gd::kFloat32);
  CHECK(gd::tensor(std::vector<double>{1, 2}).dtype() == gd::kFloat32);   // libtorch: std::vector<double> -> default dtype
  CHECK(gd::tensor(std::vector<int>{1, 2}).dtype() == gd::kInt64);
  CHECK(gd::tensor(std::vector<int64_t>{1, 2}).dtype() == gd::kInt64);
  CHECK(gd::tensor(std::vector<bool>{true}).dtype() == gd::kBool);
  CHECK(gd::tensor(std::vector<uint8_t>{1, 2}).dtype() == gd::kUInt8);
  CHECK(gd::tensor({1, 2}, gd::kFloat64).dtype() == gd::kFloat64);
  CHECK(gd::tensor({1.5, 2.5}, gd::kInt32).dtype() == gd::kInt32);
  // clang-format on
}

TEST_CASE("tensor: values keep their precision until the dtype is chosen") {
  // clang-format off
  CHECK(gd::tensor({0.1}, gd::kFloat64).item<double>() == 0.1);                            // not rounded through float32
  CHECK(gd::tensor(std::vector<double>{0.1}, gd::kFloat64).item<double>() == 0.1);
  CHECK(gd::tensor({0.1}).item<float>() == 0.1f);
  CHECK(gd::tensor({int64_t{9007199254740993}}).item<int64_t>() == 9007199254740993);     // 2^53 + 1: not through a double
  CHECK(gd::tensor(std::vector<int64_t>{9007199254740993}).item<int64_t>() == 9007199254740993);
  CHECK(values(gd::tensor({1.5, -2.7}, gd::kInt64)) == Values{1, -2});                     // torch.tensor([1.5, -2.7], dtype=torch.int64)
  CHECK(values(gd::tensor({0., 2.}, gd::kBool)) == Values{0, 1});                          // torch.tensor([0., 2.], dtype=torch.bool)
  // clang-format on
}

TEST_CASE("tensor: requires_grad from the options") {
  auto x = gd::tensor({1., 2.}, gd::requires_grad());
  CHECK(x.requires_grad());
  CHECK(x.is_leaf());
  CHECK_FALSE(gd::tensor({1., 2.}).requires_grad());
  CHECK_THROWS_AS(gd::tensor({1, 2}, gd::requires_grad()), gd::Error);  // integer tensors cannot require grad
}

TEST_CASE("tensor: ragged lists are errors with libtorch's message") {
  // clang-format off
  CHECK_THROWS_WITH_AS(gd::tensor({{1, 2}, {1, 2, 3}}),
                       "Expected all sub-lists to have sizes: 2 (e.g. {1, 2}), but got sub-list {1, 2, 3} with sizes: 3", gd::Error);
  // libtorch's test (TensorTest.TorchTensorCtorMultiDimErrorChecks)
  CHECK_THROWS_WITH_AS(gd::tensor({{{2, 3, 4}, {{5, 6}, {7}}}}),
                       "Expected all sub-lists to have sizes: 2 (e.g. {5, 6}), but got sub-list {7} with sizes: 1", gd::Error);
  CHECK_THROWS_WITH_AS(gd::tensor({{{1, 2}, {3, 4}}, {{1, 2}}}),
                       "Expected all sub-lists to have sizes: 2 2 (e.g. {{1, 2}, {3, 4}}), but got sub-list {{1, 2}} with sizes: 1 2",
                       gd::Error);
  CHECK_THROWS_WITH_AS(gd::tensor({{1.5, 2.5}, 3.5}),
                       "Expected all sub-lists to have sizes: 2 (e.g. {1.5, 2.5}), but got sub-list 3.5 with sizes: ", gd::Error);
  // clang-format on
}

TEST_CASE("tensor: a braced list mixing element types is an error, as in libtorch") {
  // libtorch's tests (TensorTest.MultidimTensorCtor, v1.9): the C++ types themselves
  // must agree (int is Int, double Double), not only their kinds.
  // clang-format off
  CHECK_THROWS_WITH_AS(gd::tensor({{{1, 2.0}, {1, 2.0}}}),
                       "Expected all elements of the tensor to have the same scalar type: Int, but got element of scalar type: Double", gd::Error);
  CHECK_THROWS_WITH_AS(gd::tensor({{{true, 2.0, 3}, {true, 2.0, 3}}}),
                       "Expected all elements of the tensor to have the same scalar type: Bool, but got element of scalar type: Double", gd::Error);
  CHECK_THROWS_WITH_AS(gd::tensor({1, int64_t{2}}),
                       "Expected all elements of the tensor to have the same scalar type: Int, but got element of scalar type: Long", gd::Error);
  CHECK_THROWS_WITH_AS(gd::tensor({{1, 2}, {3.5, 4.5}}),
                       "Expected all elements of the tensor to have the same scalar type: Int, but got element of scalar type: Double", gd::Error);
  CHECK_THROWS_WITH_AS(gd::tensor({1.f, 2.0}),
                       "Expected all elements of the tensor to have the same scalar type: Float, but got element of scalar type: Double", gd::Error);
  // clang-format on
}
