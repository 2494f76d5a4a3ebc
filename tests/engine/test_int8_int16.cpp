// int8 (kChar) and int16 (kShort) tensors: names, PyTorch's promotion lattice,
// two's-complement wrap-around, literals, printing, safetensors, and a sampling
// of ops on both dtypes, each against PyTorch 1.13's values.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/generator.h"
#include "engine/io/safetensors.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::kInt16;
using gd::kInt8;
using gd::ScalarType;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::values_of;

namespace {

Tensor int8_of(const std::vector<int8_t>& values) { return gd::tensor(values); }
Tensor int16_of(const std::vector<int16_t>& values) { return gd::tensor(values); }

std::string printed(const Tensor& t) {
  std::ostringstream out;
  out << t;
  return out.str();
}

}  // namespace

TEST_CASE("int8 / int16: names, sizes and libtorch's aliases") {
  CHECK(gd::kChar == kInt8);
  CHECK(gd::kShort == kInt16);
  CHECK(ScalarType::Char == ScalarType::Int8);
  CHECK(ScalarType::Short == ScalarType::Int16);
  // Appended after Bool: the values of the existing dtypes (stored in checkpoints) do not move.
  CHECK(static_cast<int>(gd::kBool) == 7);
  CHECK(static_cast<int>(kInt8) == 8);
  CHECK(static_cast<int>(kInt16) == 9);
  CHECK(gd::element_size(kInt8) == 1);
  CHECK(gd::element_size(kInt16) == 2);
  CHECK(gd::dtype_name(kInt8) == "int8");
  CHECK(gd::dtype_name(kInt16) == "int16");
  CHECK(gd::legacy_tensor_type_name(kInt8) == "CharTensor");
  CHECK(gd::legacy_tensor_type_name(kInt16) == "ShortTensor");
  CHECK(gd::c10_type_name(kInt8) == "Char");
  CHECK(gd::c10_type_name(kInt16) == "Short");
  CHECK(gd::is_integral(kInt8, false));
  CHECK(gd::is_integral(kInt16, false));
  CHECK_FALSE(gd::is_floating_point(kInt8));
  CHECK(gd::is_signed(kInt8));
  CHECK(gd::is_signed(kInt16));
  CHECK_FALSE(gd::is_signed(gd::kUInt8));
  CHECK(gd::scalar_type_of<int8_t>() == kInt8);
  CHECK(gd::scalar_type_of<int16_t>() == kInt16);
  CHECK(std::is_same_v<gd::CppType<ScalarType::Int8>::type, int8_t>);
  CHECK(std::is_same_v<gd::CppType<ScalarType::Int16>::type, int16_t>);
  CHECK(gd::zeros({2}, kInt8).is_signed());
}

TEST_CASE("int8 / int16: promote_types as torch.promote_types") {
  // values from PyTorch 1.13: torch.promote_types(a, b) for b in the order below.
  const ScalarType others[] = {gd::kBool,    gd::kUInt8,   kInt8,        kInt16,       gd::kInt32,
                               gd::kInt64,   gd::kFloat16, gd::kBFloat16, gd::kFloat32, gd::kFloat64};
  const ScalarType with_int8[] = {kInt8,      kInt16,       kInt8,         kInt16,       gd::kInt32,
                                  gd::kInt64, gd::kFloat16, gd::kBFloat16, gd::kFloat32, gd::kFloat64};
  const ScalarType with_int16[] = {kInt16,     kInt16,       kInt16,        kInt16,       gd::kInt32,
                                   gd::kInt64, gd::kFloat16, gd::kBFloat16, gd::kFloat32, gd::kFloat64};
  for (size_t i = 0; i < std::size(others); ++i) {
    CAPTURE(gd::dtype_name(others[i]));
    CHECK(gd::promote_types(kInt8, others[i]) == with_int8[i]);
    CHECK(gd::promote_types(others[i], kInt8) == with_int8[i]);
    CHECK(gd::promote_types(kInt16, others[i]) == with_int16[i]);
    CHECK(gd::promote_types(others[i], kInt16) == with_int16[i]);
  }
  // uint8 + int8 computes in int16 (values from PyTorch 1.13: 200 + -100 = 100, int16).
  Tensor sum = gd::tensor({200}, gd::kUInt8) + gd::tensor({-100}, kInt8);
  CHECK(sum.dtype() == kInt16);
  CHECK(values_of(sum) == std::vector<double>{100});
}

TEST_CASE("int8 / int16: arithmetic wraps around as two's complement, as PyTorch") {
  // values from PyTorch 1.13
  Tensor a = int8_of({100, -128, 127, -1}), b = int8_of({100, -1, 1, -1});
  CHECK((a + b).dtype() == kInt8);
  CHECK(values_of(a + b) == std::vector<double>{-56, 127, -128, -2});
  CHECK(values_of(a * b) == std::vector<double>{16, -128, 127, 1});
  CHECK(values_of(a - b) == std::vector<double>{0, -127, 126, 0});
  CHECK(values_of(-a) == std::vector<double>{-100, -128, -127, 1});
  CHECK(values_of(a + 1000) == std::vector<double>{76, 104, 103, -25});  // the scalar wraps too
  Tensor s = int16_of({30000, -32768, 200, 7}), t = int16_of({30000, -1, 200, -2});
  CHECK(values_of(s + t) == std::vector<double>{-5536, 32767, 400, 5});
  CHECK(values_of(s * t) == std::vector<double>{-5888, -32768, -25536, -14});
  // A floating scalar promotes to the default dtype; true division of integers gives floats.
  Tensor scaled = a * 2.5;
  CHECK(scaled.dtype() == gd::kFloat32);
  CHECK(values_of(scaled) == std::vector<double>{250, -320, 317.5, -2.5});
  Tensor quotient = int8_of({7, -7}) / int8_of({2, 2});
  CHECK(quotient.dtype() == gd::kFloat32);
  CHECK(values_of(quotient) == std::vector<double>{3.5, -3.5});
}

TEST_CASE("int8 / int16: reductions, abs, comparisons, argmax and sort") {
  // values from PyTorch 1.13
  Tensor a = int8_of({100, -128, 127, -1});
  Tensor s = int16_of({30000, -32768, 200, 7});
  CHECK(a.sum().dtype() == gd::kInt64);  // integer sums accumulate in int64
  CHECK(a.sum().item<int64_t>() == 98);
  CHECK(s.sum().item<int64_t>() == -2561);
  CHECK(values_of(a.abs()) == std::vector<double>{100, -128, 127, 1});  // abs(-128) wraps
  CHECK(values_of(s.abs()) == std::vector<double>{30000, -32768, 200, 7});
  Tensor b = int8_of({100, -1, 1, -1});
  CHECK(values_of(a.gt(b)) == std::vector<double>{0, 0, 1, 0});
  CHECK(values_of(a.eq(b)) == std::vector<double>{1, 0, 0, 1});
  CHECK(a.argmax().item<int64_t>() == 2);
  CHECK(a.argmin().item<int64_t>() == 1);
  CHECK(s.argmax().item<int64_t>() == 0);
  CHECK(a.max().item<int8_t>() == 127);
  CHECK(s.min().item<int16_t>() == -32768);
  auto [sorted, order] = a.sort();
  CHECK(values_of(sorted) == std::vector<double>{-128, -1, 100, 127});
  CHECK(values_of(order) == std::vector<double>{1, 3, 0, 2});
  CHECK(values_of(s.to(gd::kFloat64).mean()) == std::vector<double>{-640.25});
}

TEST_CASE("int8 / int16: conversions, literals, from_blob, item and data_ptr") {
  // values from PyTorch 1.13: torch.tensor([1.7, -1.7, 127.9, -128.5]).to(torch.int8) truncates.
  Tensor from_float = gd::tensor({1.7, -1.7, 127.9, -128.5}).to(kInt8);
  CHECK(from_float.dtype() == kInt8);
  CHECK(values_of(from_float) == std::vector<double>{1, -1, 127, -128});
  // Literals of int8_t / int16_t keep their dtype, as libtorch's torch::tensor does.
  CHECK(gd::tensor(int8_t{3}).dtype() == kInt8);
  CHECK(gd::tensor({int16_t{1}, int16_t{2}}).dtype() == kInt16);
  CHECK(int8_of({1, 2}).dtype() == kInt8);
  CHECK(gd::tensor({1, 2, 3}, kInt8).dtype() == kInt8);
  std::array<int16_t, 3> blob = {-5, 6, 300};
  Tensor view = gd::from_blob(blob.data(), {3}, gd::TensorOptions().dtype(kInt16));
  CHECK(view.data_ptr<int16_t>() == blob.data());
  CHECK(view[2].item<int16_t>() == 300);
  CHECK(view[0].item<int8_t>() == -5);
  CHECK(view.to(kInt8)[2].item<int>() == 44);  // 300 wraps to 44 in int8
  CHECK(error_of([&] { (void)view.data_ptr<int8_t>(); }) == "data_ptr<int8>() called on a tensor of dtype int16");
  CHECK(gd::Scalar(300).toChar() == 44);
  CHECK(gd::Scalar(-1).toShort() == -1);
}

TEST_CASE("int8 / int16: printing as PyTorch") {
  // values from PyTorch 1.13 (gradiens names the dtype without PyTorch's "torch." prefix)
  CHECK(printed(int8_of({1, -2, 3})) == "tensor([ 1, -2,  3], dtype=int8)");
  CHECK(printed(int16_of({1, -2, 300})) == "tensor([  1,  -2, 300], dtype=int16)");
  CHECK(printed(gd::tensor({{1, -2}, {3, 4}}, kInt8)) == "tensor([[ 1, -2],\n        [ 3,  4]], dtype=int8)");
}

TEST_CASE("int8 / int16: safetensors stores them as I8 and I16 and reads them back") {
  std::map<std::string, Tensor> tensors{{"a", int8_of({-128, 0, 127})}, {"b", int16_of({-32768, 1, 32767})}};
  const std::string bytes = gd::save_to_bytes(tensors);
  CHECK(bytes.find("\"dtype\":\"I8\"") != std::string::npos);
  CHECK(bytes.find("\"dtype\":\"I16\"") != std::string::npos);
  auto loaded = gd::load_from_bytes(bytes);
  CHECK(loaded.at("a").dtype() == kInt8);
  CHECK(loaded.at("b").dtype() == kInt16);
  CHECK(loaded.at("a").equal(tensors.at("a")));
  CHECK(loaded.at("b").equal(tensors.at("b")));
}

TEST_CASE("int8 / int16: random_, randint and randperm stay in the dtype's range") {
  gd::manual_seed(7);
  Tensor r = gd::empty({1000}, kInt8).random_();
  CHECK(r.min().item<int>() >= 0);  // random_() draws [0, max] as PyTorch
  CHECK(r.max().item<int>() <= 127);
  Tensor w = gd::randint(-128, 128, {1000}, gd::TensorOptions().dtype(kInt8));
  CHECK(w.min().item<int>() >= -128);
  CHECK(w.max().item<int>() <= 127);
  CHECK(gd::randint(-5, 5, {10}, gd::TensorOptions().dtype(kInt16)).dtype() == kInt16);
  CHECK(error_of([] { gd::randint(0, 300, {2}, gd::TensorOptions().dtype(kInt8)); }) ==
        "to - 1 is out of bounds for signed char");
  CHECK(error_of([] { gd::randperm(129, gd::TensorOptions().dtype(kInt8)); }) ==
        "value cannot be converted to type int8_t without overflow");
}

TEST_CASE("int8 / int16: indexing int8 values; int8 index tensors are refused as in PyTorch") {
  Tensor x = gd::arange(6).to(kInt8).view({2, 3});
  CHECK(values_of(x.index({1})) == std::vector<double>{3, 4, 5});
  CHECK(values_of(x.index({gd::tensor({1, 0})})) == std::vector<double>{3, 4, 5, 0, 1, 2});
  CHECK(values_of(x.index({x.gt(3)})) == std::vector<double>{4, 5});
  Tensor y = x.clone();
  y.index_put_({y.lt(2)}, gd::tensor(int8_t{-7}));
  CHECK(values_of(y) == std::vector<double>{-7, -7, 2, 3, 4, 5});
  CHECK(values_of(x.index_select(1, gd::tensor({2}))) == std::vector<double>{2, 5});
  CHECK(error_of([&] { x.index({gd::tensor({1, 0}, kInt8)}); }) ==
        "tensors used as indices must be long, int, byte or bool tensors");
}
