// float16 and bfloat16 tensors: storage and conversions between every dtype,
// factories, data movement, ops computed in float32 (bits against PyTorch),
// type promotion, to(dtype) backward, and the errors of unsupported ops.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "engine/autograd/node.h"
#include "engine/convolution.h"
#include "engine/linalg.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::BFloat16;
using gd::Half;
using gd::kBFloat16;
using gd::kHalf;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::values_of;
using Bits = std::vector<uint16_t>;

namespace {

// The 16-bit patterns of a float16/bfloat16 tensor, row-major (PyTorch's
// t.view(torch.int16) & 0xFFFF).
Bits bits_of(const Tensor& t) {
  Tensor c = t.contiguous();
  Bits out(static_cast<size_t>(c.numel()));
  const auto* p = static_cast<const uint16_t*>(c.data_ptr());
  for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  return out;
}

std::string hex(const Bits& bits) {
  std::ostringstream out;
  out << std::hex << "{";
  for (size_t i = 0; i < bits.size(); ++i) out << (i ? ", 0x" : "0x") << bits[i];
  return out.str() + "}";
}

// "" when t has dtype `dtype` and exactly the bits `want`.
std::string bits_mismatch(const Tensor& t, gd::ScalarType dtype, const Bits& want) {
  if (t.dtype() != dtype) return "dtype " + std::string(gd::dtype_name(t.dtype()));
  Bits got = bits_of(t);
  return got == want ? "" : hex(got) + " != " + hex(want);
}

// One reduced dtype and the PyTorch bits an op gives in it.
struct Expected {
  gd::ScalarType dtype;
  Bits bits;
};

Tensor from_floats(const std::vector<double>& values, const std::vector<int64_t>& shape, gd::ScalarType dtype) {
  return gd::testing::tensor_of(values, shape, gd::kFloat32).to(dtype);
}

}  // namespace

// ---- storage and conversions ----

TEST_CASE("tensor(), data_ptr<Half>, item<Half> and Scalar for float16/bfloat16") {
  Tensor h = gd::tensor({1.0, -2.5, 0.1, 65520.0}, kHalf);
  CHECK(h.dtype() == kHalf);
  CHECK(h.element_size() == 2);
  // torch.tensor([1., -2.5, .1, 65520.], dtype=torch.half).view(torch.int16)
  CHECK(bits_mismatch(h, kHalf, {0x3C00, 0xC100, 0x2E66, 0x7C00}) == "");
  CHECK(h.data_ptr<Half>()[1].x == 0xC100);
  CHECK(error_of([&] { h.data_ptr<BFloat16>(); }) == "data_ptr<bfloat16>() called on a tensor of dtype float16");
  CHECK(float(h[2].item<Half>()) == float(Half(0.1f)));
  CHECK(h[2].item<double>() == static_cast<double>(Half(0.1f)));
  CHECK(h[1].item<int64_t>() == -2);
  CHECK(h[0].item().is_floating_point());
  CHECK(h[0].item().to_double() == 1.0);

  Tensor b = gd::tensor({1.0, -2.5, 0.1, 3.4e38}, kBFloat16);
  CHECK(bits_mismatch(b, kBFloat16, {0x3F80, 0xC020, 0x3DCD, 0x7F80}) == "");
  CHECK(float(b[3].item<BFloat16>()) == INFINITY);

  // Scalars convert to the 16-bit types (through float32).
  CHECK(gd::Scalar(1.5).to<Half>().x == 0x3E00);
  CHECK(gd::Scalar(int64_t{3}).to<BFloat16>().x == 0x4040);
  CHECK(bits_mismatch(gd::full({2}, float(Half(1.5f)), kHalf), kHalf, {0x3E00, 0x3E00}) == "");
  // double -> half goes through float32, as PyTorch's static_cast<Half>(double):
  // torch.tensor([1 + 2**-11 + 2**-40], dtype=torch.float64).half() is 1.0.
  CHECK(bits_mismatch(gd::tensor({1 + std::ldexp(1, -11) + std::ldexp(1, -40)}, gd::kFloat64).to(kHalf), kHalf,
                      {0x3C00}) == "");
}

TEST_CASE("tensor() of Half and BFloat16 values keeps their dtype, as libtorch's tensor()") {
  // libtorch: only float and double values take the default dtype; at::Half and at::BFloat16 keep theirs.
  Tensor h = gd::tensor({Half(-INFINITY), Half(1.5f), Half(INFINITY)});
  CHECK(h.dtype() == kHalf);
  CHECK(bits_mismatch(h, kHalf, {0xFC00, 0x3E00, 0x7C00}) == "");
  Tensor b = gd::tensor({{BFloat16(2.0f)}, {BFloat16(-0.5f)}});
  CHECK(b.dtype() == kBFloat16);
  CHECK(b.sizes().vec() == std::vector<int64_t>{2, 1});
  CHECK(bits_mismatch(b, kBFloat16, {0x4000, 0xBF00}) == "");
  CHECK(gd::tensor(Half(0.25f)).dim() == 0);
  CHECK(gd::tensor({Half(1.0f)}, gd::kFloat64).dtype() == gd::kFloat64);
  CHECK(error_of([&] { gd::tensor({Half(1.0f), 2.0}); }) ==
        "Expected all elements of the tensor to have the same scalar type: Half, but got element of scalar type: "
        "Double");
}

TEST_CASE("to(dtype) converts both ways between every dtype and float16/bfloat16") {
  // python3 -c "import torch; x = torch.tensor([0, 1, 2, 100, 255], dtype=torch.uint8);
  //             print(x.half().view(torch.int16), x.bfloat16().view(torch.int16))"
  const std::vector<gd::ScalarType> sources = {gd::kUInt8, gd::kInt32, gd::kInt64, gd::kFloat32, gd::kFloat64};
  for (gd::ScalarType source : sources) {
    CAPTURE(gd::dtype_name(source));
    Tensor x = gd::testing::tensor_of({0, 1, 2, 100, 255}, {}, source);
    Tensor h = x.to(kHalf), b = x.to(kBFloat16);
    CHECK(bits_mismatch(h, kHalf, {0x0000, 0x3C00, 0x4000, 0x5640, 0x5BF8}) == "");
    CHECK(bits_mismatch(b, kBFloat16, {0x0000, 0x3F80, 0x4000, 0x42C8, 0x437F}) == "");
    CHECK(gd::equal(h.to(source), x));
    CHECK(gd::equal(b.to(source), x));
  }
  Tensor flags = gd::tensor({true, false});
  CHECK(bits_mismatch(flags.to(kHalf), kHalf, {0x3C00, 0x0000}) == "");
  CHECK(values_of(gd::tensor({0.0, 0.5, -2.0}, kHalf).to(gd::kBool)) == std::vector<double>{0, 1, 1});
  // Between the two: torch.tensor([0.1, 70000., 1e-6], dtype=torch.half).bfloat16() (inf stays inf)
  // and torch.tensor([0.1, 1e5, 3e-8], dtype=torch.bfloat16).half().
  CHECK(bits_mismatch(gd::tensor({0.1, 70000.0, 1e-6}, kHalf).to(kBFloat16), kBFloat16, {0x3DCD, 0x7F80, 0x3588}) ==
        "");
  CHECK(bits_mismatch(gd::tensor({0.1, 1e5, 3e-8}, kBFloat16).to(kHalf), kHalf, {0x2E68, 0x7C00, 0x0001}) == "");
  // A transposed (non-contiguous) source and a long one (the vectorized path with a tail).
  Tensor m = gd::arange(12, gd::kFloat32).reshape({3, 4}).t();
  CHECK(gd::equal(m.to(kHalf).to(gd::kFloat32), m));
  Tensor big = gd::linspace(-3, 3, 1001, gd::kFloat32);
  Tensor big_h = big.to(kHalf);
  std::vector<double> from_big = values_of(big), back = values_of(big_h);
  int mismatches = 0;
  for (size_t i = 0; i < back.size(); ++i) mismatches += back[i] != static_cast<double>(Half(float(from_big[i])));
  CHECK(mismatches == 0);
}

TEST_CASE("copy_ and fill_ in float16/bfloat16, with broadcasting") {
  Tensor h = gd::zeros({2, 3}, kHalf);
  h.copy_(gd::tensor({1.0, 2.0, 3.0}, gd::kFloat64));
  CHECK(values_of(h) == std::vector<double>{1, 2, 3, 1, 2, 3});
  h.fill_(0.1);
  CHECK(bits_mismatch(h, kHalf, Bits(6, 0x2E66)) == "");
  Tensor f = gd::empty({3}, gd::kFloat32);
  f.copy_(gd::tensor({0.1, 0.2, 0.3}, kBFloat16));
  // torch.tensor([0.1, 0.2, 0.3], dtype=torch.bfloat16).float().tolist()
  CHECK(values_of(f) == std::vector<double>{0.10009765625, 0.2001953125, 0.30078125});
}

TEST_CASE("factories in float16/bfloat16 against PyTorch") {
  // torch.arange(0, 1, 0.25, dtype=torch.half), torch.linspace(-1, 1, 5, dtype=torch.bfloat16),
  // torch.ones(2, dtype=torch.half), torch.eye(2, dtype=torch.bfloat16), viewed as int16.
  CHECK(bits_mismatch(gd::arange(0, 1, 0.25, kHalf), kHalf, {0x0000, 0x3400, 0x3800, 0x3A00}) == "");
  CHECK(bits_mismatch(gd::linspace(-1, 1, 5, kBFloat16), kBFloat16, {0xBF80, 0xBF00, 0x0000, 0x3F00, 0x3F80}) == "");
  CHECK(bits_mismatch(gd::ones({2}, kHalf), kHalf, {0x3C00, 0x3C00}) == "");
  CHECK(bits_mismatch(gd::zeros({2}, kBFloat16), kBFloat16, {0x0000, 0x0000}) == "");
  CHECK(bits_mismatch(gd::eye(2, kBFloat16), kBFloat16, {0x3F80, 0x0000, 0x0000, 0x3F80}) == "");
  CHECK(bits_mismatch(gd::full({1}, 1.0 / 3, kHalf), kHalf, {0x3555}) == "");
}

TEST_CASE("random fills in float16/bfloat16: the float32 draws of the seed, rounded, in [from, to)") {
  for (gd::ScalarType dt : {kHalf, kBFloat16}) {
    CAPTURE(gd::dtype_name(dt));
    gd::manual_seed(5);
    Tensor u = gd::rand({1000}, dt);
    gd::manual_seed(5);
    Tensor u32 = gd::rand({1000}, gd::kFloat32);
    gd::manual_seed(5);
    Tensor z = gd::randn({1000}, dt);
    gd::manual_seed(5);
    Tensor z32 = gd::randn({1000}, gd::kFloat32);
    CHECK(u.dtype() == dt);
    CHECK((u >= 0).all().item<bool>());
    CHECK((u < 1).all().item<bool>());
    // Equal to the rounded float32 draws except where rounding reached 1.
    Tensor rounded = u32.to(dt);
    CHECK(gd::equal(gd::where(rounded == 1, u, rounded), u));
    CHECK(gd::equal(z, z32.to(dt)));
    Tensor w = gd::empty({3, 50}, dt).t();  // strided target
    w.uniform_(-2, -1);
    CHECK(((w >= -2) & (w < -1)).all().item<bool>());
    w.normal_(3, 0.5);
    CHECK(std::abs(w.to(gd::kFloat64).mean().item<double>() - 3) < 0.3);
  }
  // A range whose top rounds up: [0, 1 + 2^-12) in half holds 1 but not 1 + 2^-10.
  gd::manual_seed(1);
  Tensor top = gd::empty({4000}, kHalf).uniform_(0.999, 1.0);
  CHECK((top < 1).all().item<bool>());
  CHECK(error_of([] { gd::empty({2}, kHalf).uniform_(0, 70000); }) == "to is out of bounds for c10::Half");
  // torch.randint(0, 70000, (2,), dtype=torch.half) and torch.randperm(5000, dtype=torch.half)
  CHECK(error_of([] { gd::randint(0, 70000, {2}, kHalf); }) == "to - 1 is out of bounds for c10::Half");
  CHECK(error_of([] { gd::randperm(5000, kHalf); }) == "n cannot be greater than 2049 for Half type.");
  CHECK(gd::randint(0, 10, {20}, kBFloat16).dtype() == kBFloat16);
}

TEST_CASE("data movement in float16/bfloat16: cat, stack, indexing, gather, scatter, masks, where, flip, roll, sort") {
  for (gd::ScalarType dt : {kHalf, kBFloat16}) {
    CAPTURE(gd::dtype_name(dt));
    Tensor x = from_floats({0.5, -1.5, 2.25, 3.0, -0.75, 8.0}, {2, 3}, dt);
    auto values = [](const Tensor& t) { return values_of(t.to(gd::kFloat64)); };
    using V = std::vector<double>;
    CHECK(values(gd::cat({x, x[0].unsqueeze(0)}, 0)) == V{0.5, -1.5, 2.25, 3, -0.75, 8, 0.5, -1.5, 2.25});
    CHECK(gd::cat({x, x}, 1).dtype() == dt);
    CHECK(gd::cat({x, gd::zeros({1, 3}, gd::kFloat32)}, 0).dtype() == gd::kFloat32);  // promotion, as PyTorch
    CHECK(values(gd::stack({x[0], x[1]}, 1)) == V{0.5, 3, -1.5, -0.75, 2.25, 8});
    Tensor idx = gd::tensor({int64_t{2}, int64_t{0}});
    CHECK(values(x.index({gd::indexing::Slice(), idx})) == V{2.25, 0.5, 8, 3});
    CHECK(values(x.index_select(1, idx)) == V{2.25, 0.5, 8, 3});
    CHECK(values(x.gather(1, gd::tensor({{int64_t{1}}, {int64_t{2}}}))) == V{-1.5, 8});
    CHECK(values(x.scatter(1, gd::tensor({{int64_t{0}}}), 9.0)) == V{9, -1.5, 2.25, 3, -0.75, 8});
    CHECK(values(x.scatter_add(1, gd::tensor({{int64_t{0}, int64_t{0}}}), from_floats({1, 2}, {1, 2}, dt))) ==
          V{3.5, -1.5, 2.25, 3, -0.75, 8});
    CHECK(values(x.index_add(0, gd::tensor({int64_t{1}}), x[0].unsqueeze(0), 2)) == V{0.5, -1.5, 2.25, 4, -3.75, 12.5});
    Tensor y = x.clone();
    y.index_put_({gd::tensor({int64_t{0}, int64_t{0}})}, from_floats({1, 1, 1}, {3}, dt), true);
    CHECK(values(y) == V{2.5, 0.5, 4.25, 3, -0.75, 8});
    Tensor mask = x > 1;
    const double tenth = dt == kHalf ? double(Half(0.1f)) : double(BFloat16(0.1f));
    CHECK(values(x.masked_fill(mask, 0.1)) == V{0.5, -1.5, tenth, tenth, -0.75, tenth});
    CHECK(values(x.masked_select(mask)) == V{2.25, 3, 8});
    CHECK(values(gd::where(mask, x, -x)) == V{-0.5, 1.5, 2.25, 3, 0.75, 8});
    CHECK(values(x.flip({1})) == V{2.25, -1.5, 0.5, 8, -0.75, 3});
    CHECK(values(x.roll({1}, {1})) == V{2.25, 0.5, -1.5, 8, 3, -0.75});
    auto [sorted, order] = x.sort(1, true);
    CHECK(values(sorted) == V{2.25, 0.5, -1.5, 8, 3, -0.75});
    CHECK(values_of(order) == V{2, 0, 1, 2, 0, 1});
    CHECK(values(std::get<0>(x.topk(2, 1))) == V{2.25, 0.5, 8, 3});
    CHECK(values_of(x.nonzero()).size() == 12);
    CHECK(values(x.t().contiguous()) == V{0.5, 3, -1.5, -0.75, 2.25, 8});
    CHECK(values(x.repeat({1, 2})[0]) == V{0.5, -1.5, 2.25, 0.5, -1.5, 2.25});
    Tensor nan = from_floats({1, NAN, 0}, {3}, dt);
    CHECK(values_of(gd::isnan(nan)) == V{0, 1, 0});
    CHECK(values_of(gd::isinf(nan / 0.0)) == V{1, 0, 0});
    CHECK(values_of(gd::isfinite(nan)) == V{1, 0, 1});
    CHECK(std::isnan(nan.max().item<double>()));
  }
}

TEST_CASE("printing float16/bfloat16 tensors") {
  std::ostringstream out;
  out << gd::tensor({1.0, 2.5}, kHalf) << " " << gd::tensor({0.1}, kBFloat16);
  // print(torch.tensor([1., 2.5], dtype=torch.half), torch.tensor([.1], dtype=torch.bfloat16))
  CHECK(out.str() == "tensor([1.0000, 2.5000], dtype=float16) tensor([0.1001], dtype=bfloat16)");
}

// ---- arithmetic in float32, rounded once ----

// Note [Reduced floats compute in float32]: each reference is PyTorch 2's CPU
// result, f(x.float()).to(dtype), computed with PyTorch 1.13 (which lacks most
// float16 CPU kernels) as
//   python3 -c "import torch; x = torch.tensor([-2.5, -0.7, 0., .3, 1.1, 4.], dtype=dt);
//               print(torch.exp(x.float()).to(dt).view(torch.int16))"
TEST_CASE("unary math in float16/bfloat16 against PyTorch") {
  const std::vector<double> x = {-2.5, -0.7, 0.0, 0.3, 1.1, 4.0};
  const std::vector<double> positive = {0.3, 1.1, 4.0, 7.5};
  struct Row {
    std::string name;
    std::function<Tensor(const Tensor&)> fn;
    bool positive_domain;
    Bits half, bf16;
  };
  const std::vector<Row> rows = {
      {"exp", [](const Tensor& t) { return t.exp(); }, false,
       {0x2D41, 0x37F2, 0x3C00, 0x3D66, 0x4202, 0x52D3}, {0x3DA8, 0x3EFE, 0x3F80, 0x3FAD, 0x4041, 0x425A}},
      {"tanh", [](const Tensor& t) { return t.tanh(); }, false,
       {0xBBE5, 0xB8D6, 0x0000, 0x34A9, 0x3A67, 0x3BFF}, {0xBF7D, 0xBF1B, 0x0000, 0x3E96, 0x3F4D, 0x3F80}},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }, false,
       {0x2CDB, 0x354F, 0x3800, 0x3898, 0x3A00, 0x3BDB}, {0x3D9B, 0x3EAA, 0x3F00, 0x3F13, 0x3F40, 0x3F7B}},
      {"sin", [](const Tensor& t) { return t.sin(); }, false,
       {0xB8CA, 0xB928, 0x0000, 0x34BB, 0x3B21, 0xBA0E}, {0xBF19, 0xBF25, 0x0000, 0x3E98, 0x3F64, 0xBF42}},
      {"abs", [](const Tensor& t) { return t.abs(); }, false,
       {0x4100, 0x399A, 0x0000, 0x34CD, 0x3C66, 0x4400}, {0x4020, 0x3F33, 0x0000, 0x3E9A, 0x3F8D, 0x4080}},
      {"neg", [](const Tensor& t) { return -t; }, false,
       {0x4100, 0x399A, 0x8000, 0xB4CD, 0xBC66, 0xC400}, {0x4020, 0x3F33, 0x8000, 0xBE9A, 0xBF8D, 0xC080}},
      {"relu", [](const Tensor& t) { return t.relu(); }, false,
       {0x0000, 0x0000, 0x0000, 0x34CD, 0x3C66, 0x4400}, {0x0000, 0x0000, 0x0000, 0x3E9A, 0x3F8D, 0x4080}},
      {"expm1", [](const Tensor& t) { return t.expm1(); }, false,
       {0xBB58, 0xB807, 0x0000, 0x3599, 0x4002, 0x52B3}, {0xBF6B, 0xBF01, 0x0000, 0x3EB4, 0x4001, 0x4256}},
      {"erf", [](const Tensor& t) { return t.erf(); }, false,
       {0xBBFF, 0xB96C, 0x0000, 0x3542, 0x3B0A, 0x3C00}, {0xBF80, 0xBF2D, 0x0000, 0x3EA9, 0x3F61, 0x3F80}},
      {"softplus", [](const Tensor& t) { return t.softplus(); }, false,
       {0x2D0D, 0x3673, 0x398C, 0x3AD6, 0x3D8C, 0x4405}, {0x3DA2, 0x3ECF, 0x3F31, 0x3F5B, 0x3FB2, 0x4081}},
      {"gelu", [](const Tensor& t) { return t.gelu(); }, false,
       {0xA3F3, 0xB16C, 0x0000, 0x31EF, 0x3B9A, 0x4400}, {0xBC7E, 0xBE2D, 0x0000, 0x3E3E, 0x3F74, 0x4080}},
      {"gelu tanh", [](const Tensor& t) { return t.gelu("tanh"); }, false,
       {0xA3B9, 0xB16C, 0x0000, 0x31EF, 0x3B9A, 0x4400}, {0xBC77, 0xBE2D, 0x0000, 0x3E3E, 0x3F74, 0x4080}},
      {"silu", [](const Tensor& t) { return t.silu(); }, false,
       {0xB212, 0xB36F, 0x0000, 0x3184, 0x3A99, 0x43DB}, {0xBE42, 0xBE6E, 0x0000, 0x3E31, 0x3F54, 0x407B}},
      {"log", [](const Tensor& t) { return t.log(); }, true,
       {0xBCD1, 0x2E14, 0x3D8C, 0x4008}, {0xBF9A, 0x3DC6, 0x3FB1, 0x4001}},
      {"sqrt", [](const Tensor& t) { return t.sqrt(); }, true,
       {0x3862, 0x3C32, 0x4000, 0x417A}, {0x3F0C, 0x3F86, 0x4000, 0x402F}},
      {"rsqrt", [](const Tensor& t) { return t.rsqrt(); }, true,
       {0x3F4D, 0x3BA1, 0x3800, 0x35D8}, {0x3FE9, 0x3F74, 0x3F00, 0x3EBB}},
      {"reciprocal", [](const Tensor& t) { return t.reciprocal(); }, true,
       {0x42AA, 0x3B46, 0x3400, 0x3044}, {0x4055, 0x3F68, 0x3E80, 0x3E09}},
      {"log1p", [](const Tensor& t) { return t.log1p(); }, true,
       {0x3433, 0x39EF, 0x3E70, 0x4048}, {0x3E87, 0x3F3E, 0x3FCE, 0x4009}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    for (const Expected& e : {Expected{kHalf, row.half}, Expected{kBFloat16, row.bf16}}) {
      CAPTURE(gd::dtype_name(e.dtype));
      Tensor input = from_floats(row.positive_domain ? positive : x, {}, e.dtype);
      CHECK(bits_mismatch(row.fn(input), e.dtype, e.bits) == "");
      CHECK(bits_mismatch(row.fn(input.unsqueeze(1).expand({-1, 2}).t()).contiguous()[1], e.dtype, e.bits) == "");
    }
  }
}

// A = [[0.1, -1.7, 2.3], [3.3, 0.05, -4.4]] and B = [1.9, -0.3, 7.1], M the 3x2
// below, each rounded to the dtype; every reference is f(A.float(), ...).to(dt)
// from PyTorch (softmax, matmul, var... in float32), bits as int16.
TEST_CASE("binary ops, reductions, softmax and matmul in float16/bfloat16 against PyTorch") {
  struct Row {
    std::string name;
    std::function<Tensor(const Tensor& A, const Tensor& B, const Tensor& M)> fn;
    Bits half, bf16;
  };
  const std::vector<Row> rows = {
      {"A + B (broadcast)", [](auto& A, auto& B, auto&) { return A + B; },
       {0x4000, 0xC000, 0x48B4, 0x4534, 0xB400, 0x4168}, {0x4000, 0xC000, 0x4116, 0x40A6, 0xBE80, 0x402C}},
      {"A - B", [](auto& A, auto& B, auto&) { return A - B; },
       {0xBF34, 0xBD9A, 0xC4CD, 0x3D9A, 0x359A, 0xC9C0}, {0xBFE6, 0xBFB4, 0xC09A, 0x3FB3, 0x3EB4, 0xC138}},
      {"A * B", [](auto& A, auto& B, auto&) { return A * B; },
       {0x3214, 0x3815, 0x4C16, 0x4646, 0xA3AE, 0xCFCF}, {0x3E43, 0x3F03, 0x4182, 0x40C8, 0xBC77, 0xC1FA}},
      {"A / B", [](auto& A, auto& B, auto&) { return A / B; },
       {0x2ABC, 0x45AB, 0x352F, 0x3EF3, 0xB155, 0xB8F4}, {0x3D58, 0x40B5, 0x3EA6, 0x3FDE, 0xBE2A, 0xBF1F}},
      {"pow(|A|, B)", [](auto& A, auto& B, auto&) { return gd::pow(A.abs(), B); },
       {0x2270, 0x3AD3, 0x5DCE, 0x48D6, 0x40EA, 0x7885}, {0x3C4F, 0x3F5A, 0x43B6, 0x411A, 0x401E, 0x4711}},
      {"maximum(A, B)", [](auto& A, auto& B, auto&) { return gd::maximum(A, B); },
       {0x3F9A, 0xB4CD, 0x471A, 0x429A, 0x2A66, 0x471A}, {0x3FF3, 0xBE9A, 0x40E3, 0x4053, 0x3D4D, 0x40E3}},
      // The scalar stays a float32 (PyTorch 2; 1.13 rounded 0.1 to the dtype first).
      {"A * 0.1", [](auto& A, auto&, auto&) { return A * 0.1; },
       {0x211E, 0xB171, 0x335D, 0x3548, 0x1D1E, 0xB70A}, {0x3C24, 0xBE2E, 0x3E6B, 0x3EA9, 0x3BA4, 0xBEE2}},
      {"add(A, B, alpha=0.3)", [](auto& A, auto& B, auto&) { return gd::add(A, B, 0.3); },
       {0x395C, 0xBF29, 0x446E, 0x43BE, 0xA920, 0xC089}, {0x3F2B, 0xBFE6, 0x408E, 0x4077, 0xBD25, 0xC012}},
      {"A.sum(0)", [](auto& A, auto&, auto&) { return A.sum({0}); },
       {0x42CD, 0xBE9A, 0xC032}, {0x4059, 0xBFD4, 0xC007}},
      {"A.sum(1)", [](auto& A, auto&, auto&) { return A.sum({1}); }, {0x399B, 0xBC31}, {0x3F32, 0xBF88}},
      {"A.sum()", [](auto& A, auto&, auto&) { return A.sum(); }, {0xB58E}, {0xBEBB}},
      {"A.mean(0)", [](auto& A, auto&, auto&) { return A.mean({0}); },
       {0x3ECD, 0xBA9A, 0xBC32}, {0x3FD9, 0xBF54, 0xBF87}},
      {"A.mean(1, keepdim)", [](auto& A, auto&, auto&) { return A.mean({1}, true); },
       {0x3379, 0xB596}, {0x3E6D, 0xBEB5}},
      {"A.mean()", [](auto& A, auto&, auto&) { return A.mean(); }, {0xAB68}, {0xBD7A}},
      {"A.softmax(1)", [](auto& A, auto&, auto&) { return A.softmax(1); },
       {0x2E47, 0x2426, 0x3B16, 0x3BB3, 0x28C6, 0x0F25}, {0x3DCA, 0x3C85, 0x3F63, 0x3F76, 0x3D19, 0x39E4}},
      {"A.softmax(0)", [](auto& A, auto&, auto&) { return A.softmax(0); },
       {0x2902, 0x30BD, 0x3BFD, 0x3BB0, 0x3AD1, 0x150A}, {0x3D21, 0x3E17, 0x3F80, 0x3F76, 0x3F5A, 0x3AA1}},
      {"A.log_softmax(1)", [](auto& A, auto&, auto&) { return A.log_softmax(1); },
       {0xC0A5, 0xC41F, 0xAFC4, 0xA8EC, 0xC294, 0xC7BD}, {0xC014, 0xC084, 0xBDF9, 0xBD1E, 0xC052, 0xC0F8}},
      {"A.matmul(M)", [](auto& A, auto&, auto& M) { return A.matmul(M); },
       {0xC40A, 0x3C85, 0x4224, 0xC876}, {0xC082, 0x3F90, 0x4045, 0xC10F}},
      {"A.mm(M)", [](auto& A, auto&, auto& M) { return A.mm(M); },
       {0xC40A, 0x3C85, 0x4224, 0xC876}, {0xC082, 0x3F90, 0x4045, 0xC10F}},
      {"bmm", [](auto& A, auto&, auto& M) { return A.unsqueeze(0).bmm(M.unsqueeze(0))[0]; },
       {0xC40A, 0x3C85, 0x4224, 0xC876}, {0xC082, 0x3F90, 0x4045, 0xC10F}},
      {"A.var(1)", [](auto& A, auto&, auto&) { return A.var(std::vector<int64_t>{1}); },
       {0x4404, 0x4B78}, {0x4080, 0x416F}},
      {"A.std()", [](auto& A, auto&, auto&) { return A.std(); }, {0x418B}, {0x4031}},
      {"A.norm()", [](auto& A, auto&, auto&) { return A.norm(); }, {0x4633}, {0x40C6}},
      {"A.logsumexp(1)", [](auto& A, auto&, auto&) { return A.logsumexp({1}); }, {0x40D8, 0x42AE}, {0x401B, 0x4055}},
      {"A.cumsum(1)", [](auto& A, auto&, auto&) { return A.cumsum(1); },
       {0x2E66, 0xBE67, 0x399B, 0x429A, 0x42B4, 0xBC31}, {0x3DCD, 0xBFCD, 0x3F32, 0x4053, 0x4056, 0xBF88}},
      {"A.prod(1)", [](auto& A, auto&, auto&) { return A.prod(1); }, {0xB642, 0xB9CE}, {0xBEC8, 0xBF3A}},
      {"A.amax(0)", [](auto& A, auto&, auto&) { return A.amax({0}); },
       {0x429A, 0x2A66, 0x409A}, {0x4053, 0x3D4D, 0x4013}},
      {"A.sort(1)", [](auto& A, auto&, auto&) { return std::get<0>(A.sort(1)); },
       {0xBECD, 0x2E66, 0x409A, 0xC466, 0x2A66, 0x429A}, {0xBFDA, 0x3DCD, 0x4013, 0xC08D, 0x3D4D, 0x4053}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    for (const Expected& e : {Expected{kHalf, row.half}, Expected{kBFloat16, row.bf16}}) {
      CAPTURE(gd::dtype_name(e.dtype));
      Tensor A = from_floats({0.1, -1.7, 2.3, 3.3, 0.05, -4.4}, {2, 3}, e.dtype);
      Tensor B = from_floats({1.9, -0.3, 7.1}, {3}, e.dtype);
      Tensor M = from_floats({0.5, -1.25, 2.0, 0.75, -0.3, 1.1}, {3, 2}, e.dtype);
      CHECK(bits_mismatch(row.fn(A, B, M), e.dtype, e.bits) == "");
      // The same through a transposed (non-contiguous) A.
      Tensor At = A.t().contiguous().t();
      CHECK(bits_mismatch(row.fn(At, B, M), e.dtype, e.bits) == "");
    }
  }
  // argmax and in-place forms keep the dtype.
  Tensor A = from_floats({0.1, -1.7, 2.3, 3.3, 0.05, -4.4}, {2, 3}, kHalf);
  CHECK(values_of(A.argmax(1)) == std::vector<double>{2, 0});
  Tensor C = A.clone();
  C.mul_(0.1);
  CHECK(bits_mismatch(C, kHalf, {0x211E, 0xB171, 0x335D, 0x3548, 0x1D1E, 0xB70A}) == "");
  C.copy_(A);
  C += from_floats({1.9, -0.3, 7.1}, {3}, kHalf);
  CHECK(bits_mismatch(C, kHalf, {0x4000, 0xC000, 0x48B4, 0x4534, 0xB400, 0x4168}) == "");
  C.exp_();
  CHECK(C.dtype() == kHalf);
  // float16 += float32 computes in float32 and rounds once: in PyTorch,
  // h = torch.ones(1, dtype=torch.half); h += torch.tensor([2**-11 + 2**-22]) is 0x3C01
  // (rounding the operand to float16 first would give the tie 1 + 2**-11, then 1.0).
  Tensor one = gd::ones({1}, kHalf);
  one += gd::tensor({std::ldexp(1.0, -11) + std::ldexp(1.0, -22)}, gd::kFloat32);
  CHECK(bits_mismatch(one, kHalf, {0x3C01}) == "");
}

TEST_CASE("a reduction accumulates beyond float16: 4096 ones sum to 4096, not to 2048") {
  // In float16, 2048 + 1 rounds back to 2048; accumulating in float16 would stop there.
  CHECK(gd::ones({4096}, kHalf).sum().item<double>() == 4096.0);
  CHECK(gd::ones({4096}, kHalf).cumsum(0)[4095].item<double>() == 4096.0);
  CHECK(gd::ones({4096}, kBFloat16).mean().item<double>() == 1.0);
  CHECK(gd::ones({1, 4096}, kHalf).matmul(gd::ones({4096, 1}, kHalf)).item<double>() == 4096.0);
  CHECK(gd::ones({4096}, kHalf).sum(gd::kFloat32).dtype() == gd::kFloat32);
}

// ---- type promotion ----

TEST_CASE("type promotion of float16/bfloat16 against PyTorch") {
  // python3 -c "import torch; print((torch.ones([2]*da, dtype=a) + torch.ones([2]*db, dtype=b)).dtype)"
  // over a in (half, bfloat16), every b, and whether each has dims (1) or is 0-dim (0).
  using gd::kBool, gd::kFloat32, gd::kFloat64, gd::kInt32, gd::kInt64, gd::kUInt8;
  struct Row {
    gd::ScalarType a;
    int a_dims;
    gd::ScalarType b;
    int b_dims;
    gd::ScalarType result;
  };
  const Row rows[] = {
      {kHalf, 1, kHalf, 1, kHalf},          {kHalf, 1, kHalf, 0, kHalf},
      {kHalf, 0, kHalf, 1, kHalf},          {kHalf, 0, kHalf, 0, kHalf},
      {kHalf, 1, kBFloat16, 1, kFloat32},   {kHalf, 1, kBFloat16, 0, kHalf},
      {kHalf, 0, kBFloat16, 1, kBFloat16},  {kHalf, 0, kBFloat16, 0, kFloat32},
      {kHalf, 1, kFloat32, 1, kFloat32},    {kHalf, 1, kFloat32, 0, kHalf},
      {kHalf, 0, kFloat32, 1, kFloat32},    {kHalf, 0, kFloat32, 0, kFloat32},
      {kHalf, 1, kFloat64, 1, kFloat64},    {kHalf, 1, kFloat64, 0, kHalf},
      {kHalf, 0, kFloat64, 1, kFloat64},    {kHalf, 0, kFloat64, 0, kFloat64},
      {kHalf, 1, kInt64, 1, kHalf},         {kHalf, 1, kInt64, 0, kHalf},
      {kHalf, 0, kInt64, 1, kHalf},         {kHalf, 0, kInt64, 0, kHalf},
      {kHalf, 1, kInt32, 1, kHalf},         {kHalf, 1, kInt32, 0, kHalf},
      {kHalf, 0, kInt32, 1, kHalf},         {kHalf, 0, kInt32, 0, kHalf},
      {kHalf, 1, kUInt8, 1, kHalf},         {kHalf, 1, kUInt8, 0, kHalf},
      {kHalf, 0, kUInt8, 1, kHalf},         {kHalf, 0, kUInt8, 0, kHalf},
      {kHalf, 1, kBool, 1, kHalf},          {kHalf, 1, kBool, 0, kHalf},
      {kHalf, 0, kBool, 1, kHalf},          {kHalf, 0, kBool, 0, kHalf},
      {kBFloat16, 1, kHalf, 1, kFloat32},   {kBFloat16, 1, kHalf, 0, kBFloat16},
      {kBFloat16, 0, kHalf, 1, kHalf},      {kBFloat16, 0, kHalf, 0, kFloat32},
      {kBFloat16, 1, kBFloat16, 1, kBFloat16}, {kBFloat16, 1, kBFloat16, 0, kBFloat16},
      {kBFloat16, 0, kBFloat16, 1, kBFloat16}, {kBFloat16, 0, kBFloat16, 0, kBFloat16},
      {kBFloat16, 1, kFloat32, 1, kFloat32}, {kBFloat16, 1, kFloat32, 0, kBFloat16},
      {kBFloat16, 0, kFloat32, 1, kFloat32}, {kBFloat16, 0, kFloat32, 0, kFloat32},
      {kBFloat16, 1, kFloat64, 1, kFloat64}, {kBFloat16, 1, kFloat64, 0, kBFloat16},
      {kBFloat16, 0, kFloat64, 1, kFloat64}, {kBFloat16, 0, kFloat64, 0, kFloat64},
      {kBFloat16, 1, kInt64, 1, kBFloat16}, {kBFloat16, 1, kInt64, 0, kBFloat16},
      {kBFloat16, 0, kInt64, 1, kBFloat16}, {kBFloat16, 0, kInt64, 0, kBFloat16},
      {kBFloat16, 1, kInt32, 1, kBFloat16}, {kBFloat16, 1, kInt32, 0, kBFloat16},
      {kBFloat16, 0, kInt32, 1, kBFloat16}, {kBFloat16, 0, kInt32, 0, kBFloat16},
      {kBFloat16, 1, kUInt8, 1, kBFloat16}, {kBFloat16, 1, kUInt8, 0, kBFloat16},
      {kBFloat16, 0, kUInt8, 1, kBFloat16}, {kBFloat16, 0, kUInt8, 0, kBFloat16},
      {kBFloat16, 1, kBool, 1, kBFloat16},  {kBFloat16, 1, kBool, 0, kBFloat16},
      {kBFloat16, 0, kBool, 1, kBFloat16},  {kBFloat16, 0, kBool, 0, kBFloat16},
  };
  for (const Row& r : rows) {
    CAPTURE(gd::dtype_name(r.a));
    CAPTURE(r.a_dims);
    CAPTURE(gd::dtype_name(r.b));
    CAPTURE(r.b_dims);
    Tensor a = gd::ones(r.a_dims ? std::vector<int64_t>{2} : std::vector<int64_t>{}, r.a);
    Tensor b = gd::ones(r.b_dims ? std::vector<int64_t>{2} : std::vector<int64_t>{}, r.b);
    CHECK(gd::dtype_name((a + b).dtype()) == gd::dtype_name(r.result));
    CHECK(gd::dtype_name((b + a).dtype()) == gd::dtype_name(r.result));
    CHECK(gd::dtype_name((a * b).dtype()) == gd::dtype_name(r.result));
  }
  // Python scalars: torch.ones(2, dtype=torch.half) + 2.5 (and * 2) stay half.
  CHECK((gd::ones({2}, kHalf) + 2.5).dtype() == kHalf);
  CHECK((gd::ones({2}, kBFloat16) * 2).dtype() == kBFloat16);
  CHECK((gd::ones({2}, gd::kInt64) * gd::scalar_tensor(1.5, kHalf)).dtype() == kHalf);
  CHECK((gd::ones({2}, gd::kInt64) / 2).dtype() == gd::kFloat32);
  // Comparisons round the scalar to the dtype: torch.tensor([.1], dtype=torch.half) == .1 is True.
  CHECK((gd::tensor({0.1}, kHalf) == 0.1).item<bool>());
  CHECK_FALSE((gd::tensor({0.1}, kHalf) > 0.1).item<bool>());
  CHECK(gd::promote_types(kHalf, kBFloat16) == gd::kFloat32);
}

// ---- autograd ----

TEST_CASE("to(dtype) is differentiable: the gradient converts back") {
  // float64 leaf through float16: x.grad is float64 (3 * 2 at each element).
  Tensor x = gd::tensor({0.5, -1.25, 3.0}, gd::kFloat64).requires_grad_();
  Tensor y = x.to(kHalf);
  CHECK(y.grad_fn()->name() == "ToCopyBackward0");
  (y * 3).to(gd::kFloat32).sum().backward();
  CHECK(x.grad().dtype() == gd::kFloat64);
  CHECK(values_of(x.grad()) == std::vector<double>{3, 3, 3});
  // float16 leaf through float32 and bfloat16.
  Tensor h = gd::tensor({0.5, -1.5}, kHalf).requires_grad_();
  (h.to(gd::kFloat32) * h.to(gd::kFloat32)).to(kBFloat16).sum().backward();
  CHECK(h.grad().dtype() == kHalf);
  CHECK(values_of(h.grad().to(gd::kFloat64)) == std::vector<double>{1, -3});
  // create_graph through the conversion: d2/dx2 of (x.half()^3).sum() at x is 6x.
  Tensor z = gd::tensor({0.5, 2.0}, gd::kFloat64).requires_grad_();
  Tensor g = gd::autograd::grad({z.to(kHalf).pow(3).sum()}, {z}, {}, true, true)[0];
  CHECK(g.dtype() == gd::kFloat64);
  CHECK(values_of(g) == std::vector<double>{0.75, 12});
  Tensor gg = gd::autograd::grad({g.sum()}, {z})[0];
  CHECK(values_of(gg) == std::vector<double>{3, 12});
}

TEST_CASE("backward through float16/bfloat16 ops gives gradients of the leaf's dtype") {
  for (gd::ScalarType dt : {kHalf, kBFloat16}) {
    CAPTURE(gd::dtype_name(dt));
    Tensor A = from_floats({0.1, -1.7, 2.3, 3.3, 0.05, -4.4}, {2, 3}, dt).requires_grad_();
    (A * A).sum().backward();
    // torch: A.grad of (A*A).sum() (2A, exact in the dtype).
    const Bits half_grad = {0x3266, 0xC2CD, 0x449A, 0x469A, 0x2E66, 0xC866};
    const Bits bf16_grad = {0x3E4D, 0xC05A, 0x4093, 0x40D3, 0x3DCD, 0xC10D};
    CHECK(bits_mismatch(A.grad(), dt, dt == kHalf ? half_grad : bf16_grad) == "");
    // Gradients of the float32-computed ops, against the float32 formulas rounded.
    Tensor x = from_floats({-1.5, 0.25, 2.0}, {3}, dt).requires_grad_();
    Tensor w = from_floats({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {3, 2}, dt).requires_grad_();
    (x.tanh().unsqueeze(0).matmul(w).softmax(1) * from_floats({1, 3}, {1, 2}, dt)).sum().backward();
    CHECK(x.grad().dtype() == dt);
    CHECK(w.grad().dtype() == dt);
    Tensor x32 = x.detach().to(gd::kFloat32).requires_grad_(), w32 = w.detach().to(gd::kFloat32).requires_grad_();
    (x32.tanh().unsqueeze(0).matmul(w32).softmax(1) * gd::tensor({{1.0, 3.0}})).sum().backward();
    // Each op rounds its result to the dtype, so a few ulps of the dtype apart.
    const double tolerance = dt == kHalf ? 2e-2 : 5e-2;
    CHECK(gd::allclose(x.grad().to(gd::kFloat32), x32.grad(), tolerance, 1e-3));
    CHECK(gd::allclose(w.grad().to(gd::kFloat32), w32.grad(), tolerance, 1e-3));
  }
}

// ---- what float16/bfloat16 cannot do ----

TEST_CASE("ops without float16/bfloat16 kernels throw naming the op and dtype") {
  Tensor h = gd::eye(2, kHalf), b = gd::eye(2, kBFloat16);
  // PyTorch 2's messages: torch.linalg.inv(torch.eye(2, dtype=torch.half)) etc.
  CHECK(error_of([&] { gd::linalg::inv(h); }) == "linalg.inv: Low precision dtypes not supported. Got Half");
  CHECK(error_of([&] { gd::linalg::inv(b); }) == "linalg.inv: Low precision dtypes not supported. Got BFloat16");
  CHECK(error_of([&] { gd::linalg::cholesky(h); }) != "");
  CHECK(error_of([&] { gd::linalg::det(b); }) != "");
  // torch.quantile(torch.ones(2, dtype=torch.half), 0.5)
  CHECK(error_of([&] { h.quantile(0.5); }) == "quantile() input tensor must be either float or double dtype");
  // Convolution computes in float32 (tests/engine/test_convolution.cpp).
  Tensor image = gd::ones({1, 1, 3, 3}, kHalf), kernel = gd::ones({1, 1, 2, 2}, kHalf);
  CHECK(gd::conv2d(image, kernel).dtype() == kHalf);
  // float32 with float64 (both with dims) stays an error; float16 with float64 promotes.
  CHECK(error_of([] { gd::ones({2}, gd::kFloat32) + gd::ones({2}, gd::kFloat64); }) != "");
  CHECK((gd::ones({2}, kHalf) + gd::ones({2}, gd::kFloat64)).dtype() == gd::kFloat64);
}
