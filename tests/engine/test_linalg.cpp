// Tests of the matrix products (engine/ops/linalg.cpp): torch.matmul's shape rules,
// values against PyTorch and against the definition, strided operands, errors, and
// first and second derivatives by finite differences.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/allocator.h"
#include "engine/autograd/node.h"
#include "engine/dims.h"
#include "gradiens.h"

namespace gd = gradiens;
using Shape = std::vector<int64_t>;

namespace {

// sin(0.7 i + offset) laid out in `shape`: smooth, sign-changing, no two rows alike.
// The PyTorch literals below come from the same formula.
gd::Tensor seq(const Shape& shape, double offset, gd::ScalarType dtype = gd::kFloat64) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return gd::sin(gd::arange(n, gd::TensorOptions().dtype(dtype)) * 0.7 + offset).reshape(shape);
}

// The product by its definition, sum_l a[..., i, l] b[..., l, j], with broadcasting
// elementwise ops and a sum (no GEMM), following matmul's rules for 1-D operands.
gd::Tensor reference_matmul(const gd::Tensor& a, const gd::Tensor& b) {
  gd::Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  gd::Tensor b2 = b.dim() == 1 ? b.unsqueeze(-1) : b;
  gd::Tensor out = (a2.unsqueeze(-1) * b2.unsqueeze(-3)).sum({-2});
  if (a.dim() == 1) out = out.squeeze(-2);
  if (b.dim() == 1) out = out.squeeze(-1);
  return out;
}

std::vector<double> values(const gd::Tensor& t) {
  gd::Tensor c = t.contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

void check_values(const gd::Tensor& t, const Shape& shape, const std::vector<double>& expected, double eps = 1e-12) {
  REQUIRE(t.sizes() == gd::IntArrayRef(shape));
  std::vector<double> got = values(t.to(gd::kFloat64));
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(eps));
}

int64_t allocations() { return gd::cpu_allocator::stats().num_allocs; }

}  // namespace

TEST_CASE("matmul: the shapes of torch.matmul's documented cases, values by definition") {
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{3}, {3}, {}},                         // vector x vector: dot
      {{3, 4}, {4}, {3}},                     // matrix x vector: mv
      {{4}, {4, 5}, {5}},                     // vector x matrix: prepended 1, removed
      {{3, 4}, {4, 5}, {3, 5}},               // matrix x matrix: mm
      {{10, 3, 4}, {10, 4, 5}, {10, 3, 5}},   // batched x batched
      {{10, 3, 4}, {4, 5}, {10, 3, 5}},       // batched x broadcast matrix (folded)
      {{10, 3, 4}, {4}, {10, 3}},             // batched x vector (folded)
      {{4}, {10, 4, 5}, {10, 5}},             // vector x batched
      {{3, 4}, {10, 4, 5}, {10, 3, 5}},       // matrix x batched
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}},  // (j,1,n,m) x (k,m,p) -> (j,k,n,p)
      {{1, 3, 4}, {5, 4, 6}, {5, 3, 6}},      // batch of one broadcast
      {{2, 3, 4, 6}, {6}, {2, 3, 4}},
      {{4}, {2, 3, 4, 6}, {2, 3, 6}},
      {{4, 6}, {2, 3, 6, 5}, {2, 3, 4, 5}},
      {{2, 1, 4, 6}, {1, 3, 6, 5}, {2, 3, 4, 5}},
      {{7, 2, 1, 4, 6}, {1, 3, 6, 5}, {7, 2, 3, 4, 5}},
      {{2, 3, 4}, {5, 2, 4, 3}, {5, 2, 3, 3}},
      {{1, 1}, {1, 1}, {1, 1}},
      {{0, 2, 3}, {3, 4}, {0, 2, 4}},         // empty batch
      {{3, 5, 0}, {0, 0}, {3, 5, 0}},         // empty everything
      {{2, 3, 0}, {2, 0, 4}, {2, 3, 4}},      // empty contraction: zeros
      {{0}, {0}, {}},
  };
  for (const Case& c : cases) {
    CAPTURE(gd::shape_to_string(c.a));
    CAPTURE(gd::shape_to_string(c.b));
    gd::Tensor a = seq(c.a, 0.1), b = seq(c.b, 0.5);
    gd::Tensor out = gd::matmul(a, b);
    CHECK(out.sizes() == gd::IntArrayRef(c.out));
    gd::Tensor expected = reference_matmul(a, b);
    CHECK(gd::allclose(out, expected, 1e-12, 1e-12));
    CHECK(a.matmul(b).sizes() == gd::IntArrayRef(c.out));
    // float32 takes the other GEMM backend (oneDNN for most shapes).
    gd::Tensor out32 = gd::matmul(a.to(gd::kFloat32), b.to(gd::kFloat32));
    CHECK(out32.dtype() == gd::kFloat32);
    CHECK(gd::allclose(out32, expected.to(gd::kFloat32), 1e-5, 1e-5));
  }
}

TEST_CASE("products: values against PyTorch") {
  // python3 -c "import torch; seq=lambda s,o: torch.sin(torch.arange(s.numel())*0.7+o).reshape(s); ..."
  // with torch.float64 (torch 1.13), printed with repr.
  check_values(gd::mm(seq({2, 3}, 0.1), seq({3, 2}, 0.5)), {2, 2},
               {0.569346282201656, -0.29205999957541473, 0.6838211795752394, 1.2117841823512885});
  check_values(gd::mv(seq({2, 3}, 0.1), seq({3}, 0.9)), {2}, {1.5390896248145094, 0.5424745024168929});
  check_values(gd::dot(seq({4}, 0.2), seq({4}, 1.3)), {}, {1.1403459182125066});
  check_values(gd::bmm(seq({2, 2, 3}, 0.1), seq({2, 3, 2}, 0.4)), {2, 2, 2},
               {0.6792445778198434, -0.1677533822395365, 0.5736674736086942, 1.168072590342637, 0.6834185977444871,
                -0.1598296323887149, 0.5778998446480501, 1.1665999657787647});
  check_values(gd::matmul(seq({2, 1, 2, 3}, 0.1), seq({3, 3, 2}, 0.6)), {2, 3, 2, 2},
               {0.4537592667325687,  -0.4134484499377354,  0.7871423703566979,  1.2433880273724807,
                0.8064398146437795,  1.2444226681458417,   -1.2535988300861842, -0.8312649701547598,
                -1.2444909585107709, -0.8067349088225962,  0.44203841378288933, -0.4283147333328308,
                -1.2485307856127228, -0.8419907543124592,  0.47348943682246775, -0.39323652252499874,
                0.4593091575561168,  -0.40510090399994836, 0.789837952087688,   1.2402921968632683,
                0.7981682159471886,  1.2392009581542092,   -1.2479426430556004, -0.8228968197482955});
  check_values(gd::matmul(seq({3}, 0.3), seq({2, 3, 2}, 0.7)), {2, 2},
               {0.5688855969200692, -0.29120790667426877, 0.7037454746240982, 1.2137587771493046});
  check_values(gd::matmul(seq({2, 2, 3}, 0.2), seq({3, 2}, 0.8)), {2, 2, 2},
               {0.33350189004594316, -0.5301931872368548, 0.8834945189423458, 1.2630179022569321,
                -1.2255594226926794, -0.7450661487517362, 0.3539432820617533, -0.5107304165238677});
  // float32 through the float32 GEMM (torch.float32 literals).
  gd::Tensor f32 = gd::mm(seq({2, 3}, 0.1, gd::kFloat32), seq({3, 2}, 0.5, gd::kFloat32));
  CHECK(f32.dtype() == gd::kFloat32);
  check_values(f32, {2, 2}, {0.5693463683128357, -0.2920599579811096, 0.6838213801383972, 1.2117843627929688}, 1e-6);
}

TEST_CASE("products: integer dtypes use the plain loop") {
  // torch.mm(torch.arange(6).reshape(2,3), torch.arange(6).reshape(3,2)-2) = [[4, 7], [4, 16]]
  gd::Tensor a = gd::arange(6, gd::kInt64).reshape({2, 3}), b = gd::arange(6, gd::kInt64).reshape({3, 2}) - 2;
  gd::Tensor c = gd::mm(a, b);
  REQUIRE(c.dtype() == gd::kInt64);
  CHECK(c.contiguous().data_ptr<int64_t>()[0] == 4);
  CHECK(c.contiguous().data_ptr<int64_t>()[1] == 7);
  CHECK(c.contiguous().data_ptr<int64_t>()[2] == 4);
  CHECK(c.contiguous().data_ptr<int64_t>()[3] == 16);
  // Strided and broadcast integer operands, against the definition.
  gd::Tensor x = gd::arange(24, gd::kInt32).reshape({2, 1, 3, 4}), y = gd::arange(40, gd::kInt32).reshape({5, 4, 2});
  CHECK(gd::equal(gd::matmul(x, y), reference_matmul(x, y)));
  gd::Tensor xt = x.transpose(-1, -2), broadcast = gd::arange(3, gd::kInt32).reshape({3, 1}).expand({5, 3, 2});
  CHECK(gd::equal(gd::matmul(xt, broadcast), reference_matmul(xt, broadcast)));
  CHECK(gd::dot(gd::arange(4, gd::kUInt8), gd::arange(4, gd::kUInt8)).item<int64_t>() == 14);
}

TEST_CASE("products: transposed and strided operands") {
  // Each operand pair is a view; the reference multiplies contiguous copies.
  gd::Tensor a = seq({5, 4}, 0.1), b = seq({4, 3}, 0.4), big = seq({6, 8}, 0.2);
  struct Case {
    std::string what;
    gd::Tensor a, b;
  };
  const Case cases[] = {
      {"A^T", seq({4, 5}, 0.1).t(), b},
      {"B^T", a, seq({3, 4}, 0.4).t()},
      {"A^T B^T", seq({4, 5}, 0.1).t(), seq({3, 4}, 0.4).t()},
      {"row stride > cols", big.narrow(1, 1, 4).narrow(0, 0, 5), big.narrow(1, 2, 3).narrow(0, 1, 4)},
      {"transposed with ld > rows", big.t().narrow(0, 0, 5).narrow(1, 0, 4), b},
      {"column step 2 (copied)", big.slice(1, 0, 8, 2).narrow(0, 0, 5), b},
      {"broadcast rows (copied)", seq({1, 4}, 0.3).expand({5, 4}), b},
      {"broadcast columns (copied)", a, seq({4, 1}, 0.3).expand({4, 3})},
      {"one row", seq({1, 4}, 0.3), b},
      {"one column", a, seq({4, 1}, 0.3)},
      {"column vector from a row", a, seq({6}, 0.2).narrow(0, 1, 4).unsqueeze(1)},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    gd::Tensor expected = reference_matmul(c.a.contiguous(), c.b.contiguous());
    CHECK(gd::allclose(gd::mm(c.a, c.b), expected, 1e-12, 1e-12));
    CHECK(gd::allclose(gd::mm(c.a.to(gd::kFloat32), c.b.to(gd::kFloat32)), expected.to(gd::kFloat32), 1e-5, 1e-5));
  }
  // Batched operands with transposed matrices, permuted batch dims and broadcasts.
  gd::Tensor x = seq({3, 4, 2}, 0.1), y = seq({3, 5, 4}, 0.7);
  CHECK(gd::allclose(gd::bmm(x.transpose(1, 2), y.transpose(1, 2)),
                     reference_matmul(x.transpose(1, 2), y.transpose(1, 2)), 1e-12, 1e-12));
  gd::Tensor p = seq({4, 3, 2}, 0.5).permute({1, 0, 2});  // batch stride smaller than the matrix's
  CHECK(gd::allclose(gd::bmm(p, seq({3, 2, 6}, 0.2)), reference_matmul(p, seq({3, 2, 6}, 0.2)), 1e-12, 1e-12));
  gd::Tensor q = seq({2, 3, 4}, 0.4).transpose(0, 1);  // [3, 2, 4]: rows do not fold without a copy
  CHECK(gd::allclose(gd::matmul(q, seq({4, 5}, 0.1)), reference_matmul(q, seq({4, 5}, 0.1)), 1e-12, 1e-12));
  CHECK(gd::allclose(gd::matmul(q, seq({4}, 0.1)), reference_matmul(q, seq({4}, 0.1)), 1e-12, 1e-12));
  gd::Tensor e = seq({1, 3, 4}, 0.9).expand({2, 3, 4});  // stride-0 batch: one matrix for every product
  CHECK(gd::allclose(gd::bmm(e, seq({2, 4, 2}, 0.3)), reference_matmul(e, seq({2, 4, 2}, 0.3)), 1e-12, 1e-12));
  gd::Tensor v = seq({8}, 0.6).slice(0, 0, 8, 2);
  CHECK(gd::allclose(gd::mv(a, v), reference_matmul(a, v), 1e-12, 1e-12));
  gd::Tensor w = seq({1}, 0.3).expand({4});
  CHECK(gd::allclose(gd::dot(v, w), reference_matmul(v, w), 1e-12, 1e-12));
}

TEST_CASE("products: operands are read in place, only the output is allocated") {
  gd::Tensor x = seq({10000, 20}, 0.1), w = seq({20, 20}, 0.3), x3 = seq({4, 6, 20}, 0.2);
  struct Case {
    std::string what;
    gd::Tensor a, b;
    int64_t expected_allocations;
  };
  const Case cases[] = {
      {"PINN layer x W^T", x, w.t(), 1},
      {"PINN layer x W", x, w, 1},
      {"A^T B", x.t(), x, 1},
      {"folded batch x W^T", x3, w.t(), 1},
      {"(j,1,n,m) x (k,m,p)", seq({2, 1, 3, 4}, 0.1), seq({5, 4, 6}, 0.5), 1},
      {"broadcast rows need a copy", seq({1, 20}, 0.3).expand({7, 20}), w, 2},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    int64_t before = allocations();
    gd::Tensor out = gd::matmul(c.a, c.b);
    CHECK(allocations() - before == c.expected_allocations);
  }
}

TEST_CASE("products: errors with PyTorch's messages") {
  auto z = [](const Shape& s, gd::ScalarType dt = gd::kFloat32) { return gd::zeros(s, gd::TensorOptions().dtype(dt)); };
  const auto f64 = gd::kFloat64, b8 = gd::kBool;
  struct Case {
    std::function<gd::Tensor()> run;
    std::string message;
  };
  // Texts from torch 1.13 except mm's dtype message, which is PyTorch 2's (it names both dtypes).
  const Case cases[] = {
      {[&] { return gd::mm(z({2, 3}), z({4, 5})); }, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"},
      {[&] { return gd::mm(z({2, 3, 1}), z({4, 5})); }, "self must be a matrix"},
      {[&] { return gd::mm(z({2, 3}), z({4})); }, "mat2 must be a matrix"},
      {[&] { return gd::mm(z({2, 3}), z({3, 4}, f64)); }, "expected m1 and m2 to have the same dtype, but got: float != double"},
      {[&] { return gd::mm(z({2, 3}, f64), z({3, 4})); }, "expected m1 and m2 to have the same dtype, but got: double != float"},
      {[&] { return gd::mm(z({2, 3}, b8), z({3, 4}, b8)); }, "\"addmm_impl_cpu_\" not implemented for 'Bool'"},
      {[&] { return gd::bmm(z({2, 3, 4}), z({2, 5, 6})); },
       "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."},
      {[&] { return gd::bmm(z({2, 3, 4}), z({3, 4, 6})); },
       "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4]."},
      {[&] { return gd::bmm(z({3, 4}), z({3, 4, 6})); }, "batch1 must be a 3D tensor"},
      {[&] { return gd::bmm(z({2, 3, 4}), z({4, 6})); }, "batch2 must be a 3D tensor"},
      {[&] { return gd::bmm(z({2, 3, 4}), z({2, 4, 6}, f64)); }, "expected scalar type Float but found Double"},
      {[&] { return gd::bmm(z({2, 3, 4}, b8), z({2, 4, 6}, b8)); }, "\"bmm\" not implemented for 'Bool'"},
      {[&] { return gd::mv(z({2, 3}), z({4})); }, "size mismatch, got 2, 2x3,4"},
      {[&] { return gd::mv(z({2, 3}), z({3, 1})); }, "vector + matrix @ vector expected, got 1, 2, 2"},
      {[&] { return gd::mv(z({3}), z({3})); }, "vector + matrix @ vector expected, got 1, 1, 1"},
      {[&] { return gd::mv(z({2, 3}), z({3}, f64)); }, "expected scalar type Float but found Double"},
      {[&] { return gd::mv(z({2, 3}, b8), z({3}, b8)); }, "\"addmv_impl_cpu\" not implemented for 'Bool'"},
      {[&] { return gd::dot(z({3}), z({4})); },
       "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 "
       "and 4 elements respectively"},
      {[&] { return gd::dot(z({3, 1}), z({3})); }, "1D tensors expected, but got 2D and 1D tensors"},
      {[&] { return gd::dot(z({3}), z({3, 1})); }, "1D tensors expected, but got 1D and 2D tensors"},
      {[&] { return gd::dot(z({3}), z({3}, f64)); }, "dot : expected both vectors to have same dtype, but found Float and Double"},
      {[&] { return gd::dot(z({4}, b8), z({4}, b8)); }, "\"dot\" not implemented for 'Bool'"},
      {[&] { return gd::matmul(z({2, 3}), z({4, 5})); }, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"},
      {[&] { return gd::matmul(z({3}), z({4})); },
       "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 "
       "and 4 elements respectively"},
      {[&] { return gd::matmul(z({2, 3}), z({4})); }, "size mismatch, got 2, 2x3,4"},
      {[&] { return gd::matmul(z({3}), z({4, 5})); }, "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)"},
      {[&] { return gd::matmul(z({2, 2, 3}), z({3, 4, 5})); },
       "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"},
      {[&] { return gd::matmul(z({2, 2, 3}), z({4, 5})); }, "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)"},
      {[&] { return gd::matmul(z({5, 2, 3}), z({4})); }, "size mismatch, got 10, 10x3,4"},
      {[&] { return gd::matmul(z({4}), z({5, 2, 3})); }, "size mismatch, got 15, 15x2,4"},
      {[&] { return gd::matmul(z({2, 3}), z({5, 4, 6})); }, "mat1 and mat2 shapes cannot be multiplied (30x4 and 3x2)"},
      {[&] { return gd::matmul(z({2, 3}), z({2, 5, 4, 6})); }, "mat1 and mat2 shapes cannot be multiplied (60x4 and 3x2)"},
      {[&] { return gd::matmul(z({3}), z({2, 5, 4, 6})); }, "size mismatch, got 60, 60x4,3"},
      {[&] { return gd::matmul(z({2, 2, 3}), z({2, 4, 5})); },
       "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."},
      {[&] { return gd::matmul(z({3, 1, 2, 3}), z({2, 4, 5})); },
       "Expected size for first two dimensions of batch2 tensor to be: [6, 3] but got: [6, 4]."},
      {[&] { return gd::matmul(gd::scalar_tensor(1.0), z({3})); },
       "both arguments to matmul need to be at least 1D, but they are 0D and 1D"},
      {[&] { return gd::matmul(z({3}), gd::scalar_tensor(1.0)); },
       "both arguments to matmul need to be at least 1D, but they are 1D and 0D"},
      {[&] { return gd::matmul(z({5, 2, 3}), z({5, 3, 6}, f64)); }, "expected scalar type Float but found Double"},
      {[&] { return gd::matmul(z({5, 2, 3}), z({3}, f64)); }, "expected scalar type Float but found Double"},
      // PyTorch computes [n, m] @ [..., m, p] as a transposed product and names b's dtype first.
      {[&] { return gd::matmul(z({2, 3}), z({5, 3, 6}, f64)); }, "expected scalar type Double but found Float"},
      {[&] { return gd::matmul(z({2, 3}), z({3, 4}, f64)); }, "expected m1 and m2 to have the same dtype, but got: float != double"},
      {[&] { return gd::matmul(z({4, 2, 3}), z({3, 4}, f64)); }, "expected m1 and m2 to have the same dtype, but got: float != double"},
      {[&] { return gd::matmul(z({2, 3}, b8), z({3, 4}, b8)); }, "\"addmm_impl_cpu_\" not implemented for 'Bool'"},
      {[&] { return gd::matmul(z({4}, b8), z({4}, b8)); }, "\"dot\" not implemented for 'Bool'"},
  };
  for (const Case& c : cases) CHECK_THROWS_WITH_AS(c.run(), c.message.c_str(), gd::Error);
}

TEST_CASE("products: gradcheck and gradgradcheck") {
  using Fn = std::function<gd::Tensor(const gd::Tensor&, const gd::Tensor&)>;
  struct Case {
    std::string what;
    Shape a, b;
    Fn fn;
  };
  const Case cases[] = {
      {"mm", {3, 4}, {4, 2}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::mm(a, b); }},
      {"mm A^T B^T", {4, 3}, {2, 4}, [](const gd::Tensor& a, const gd::Tensor& b) { return a.t().mm(b.t()); }},
      {"bmm", {2, 3, 4}, {2, 4, 2}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::bmm(a, b); }},
      {"bmm transposed", {2, 4, 3}, {2, 4, 2},
       [](const gd::Tensor& a, const gd::Tensor& b) { return a.transpose(1, 2).bmm(b); }},
      {"matmul (j,1,n,m) x (k,m,p)", {2, 1, 2, 3}, {3, 3, 2},
       [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a, b); }},
      {"matmul batched x batched", {2, 2, 3}, {2, 3, 2}, [](const gd::Tensor& a, const gd::Tensor& b) { return a.matmul(b); }},
      {"matmul folded 3-D x 2-D", {2, 2, 3}, {3, 2}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a, b); }},
      {"matmul unfoldable 3-D x 2-D", {2, 3, 3}, {3, 2},
       [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a.transpose(0, 1), b); }},
      {"matmul folded 3-D x 1-D", {2, 2, 3}, {3}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a, b); }},
      {"matmul unfoldable 3-D x 1-D", {2, 3, 3}, {3},
       [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a.transpose(0, 1), b); }},
      {"matmul 2-D x 3-D", {2, 3}, {2, 3, 2}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a, b); }},
      {"matmul 1-D x 3-D", {3}, {2, 3, 2}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a, b); }},
      {"matmul 1-D x 2-D", {3}, {3, 2}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a, b); }},
      {"matmul 1-D x 1-D", {3}, {3}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::matmul(a, b); }},
      {"mv", {3, 4}, {4}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::mv(a, b); }},
      {"mv strided", {4, 3}, {8}, [](const gd::Tensor& a, const gd::Tensor& b) { return a.t().mv(b.slice(0, 0, 8, 2)); }},
      {"dot", {4}, {4}, [](const gd::Tensor& a, const gd::Tensor& b) { return gd::dot(a, b); }},
      {"mm of a product (create_graph through both)", {3, 3}, {3, 3},
       [](const gd::Tensor& a, const gd::Tensor& b) { return gd::mm(gd::mm(a, b), a); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    gd::Tensor a = seq(c.a, 0.1).requires_grad_(), b = seq(c.b, 0.6).requires_grad_();
    auto fn = [&](const std::vector<gd::Tensor>& in) { return std::vector<gd::Tensor>{c.fn(in[0], in[1])}; };
    CHECK(gd::autograd::gradcheck(fn, {a, b}));
    CHECK(gd::autograd::gradgradcheck(fn, {a, b}));
    // One input at a time: the other's gradient is skipped.
    gd::Tensor a_only = seq(c.a, 0.1).requires_grad_(), b_const = seq(c.b, 0.6);
    CHECK(gd::autograd::gradcheck(fn, {a_only, b_const}));
    gd::Tensor a_const = seq(c.a, 0.1), b_only = seq(c.b, 0.6).requires_grad_();
    CHECK(gd::autograd::gradgradcheck(fn, {a_const, b_only}));
  }
}

TEST_CASE("products: grad_fn names and saved operands") {
  gd::Tensor a = seq({2, 3}, 0.1).requires_grad_(), b = seq({3, 2}, 0.4);
  CHECK(gd::mm(a, b).grad_fn()->name() == "MmBackward0");
  CHECK(gd::bmm(a.unsqueeze(0), b.unsqueeze(0)).grad_fn()->name() == "BmmBackward0");
  CHECK(gd::mv(a, seq({3}, 0.2)).grad_fn()->name() == "MvBackward0");
  CHECK(gd::dot(a.select(0, 0), seq({3}, 0.2)).grad_fn()->name() == "DotBackward0");

  // mm(a, b) with only a requiring grad saves b: changing b in place breaks backward.
  gd::Tensor b2 = seq({3, 2}, 0.4);
  gd::Tensor y = gd::mm(a, b2);
  b2.add_(1.0);
  CHECK_THROWS_AS(y.sum().backward(), gd::Error);
  // ...but a is not saved, so changing a non-leaf a in place leaves backward intact
  // (PyTorch behaves the same). d sum(a b) / da = ones [2, 2] b^T.
  gd::Tensor x = seq({2, 3}, 0.1).requires_grad_();
  gd::Tensor a2 = x * 1.0;
  gd::Tensor y2 = gd::mm(a2, b);
  a2.add_(1.0);
  y2.sum().backward();
  CHECK(gd::allclose(x.grad(), gd::ones({2, 2}, gd::kFloat64).mm(b.t())));
}

namespace {

// at::_addmm_activation by its definition, element by element in double:
// act(beta * self[j] + alpha * sum_l a[i, l] b[l, j]) with a 1-D self.
std::vector<double> addmm_activation_by_definition(const gd::Tensor& self, const gd::Tensor& a, const gd::Tensor& b,
                                                   double beta, double alpha, bool use_gelu) {
  const std::vector<double> s = values(self), av = values(a), bv = values(b);
  const int64_t n = a.size(0), m = a.size(1), p = b.size(1);
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < p; ++j) {
      double acc = 0;
      for (int64_t l = 0; l < m; ++l) acc += av[static_cast<size_t>(i * m + l)] * bv[static_cast<size_t>(l * p + j)];
      const double x = beta * s[static_cast<size_t>(j)] + alpha * acc;
      const double k = std::sqrt(2.0 / 3.14159265358979323846);
      out.push_back(use_gelu ? 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x))) : std::max(x, 0.0));
    }
  return out;
}

}  // namespace

TEST_CASE("_addmm_activation: values by the definition (relu, tanh gelu, beta and alpha)") {
  const gd::Tensor self = seq({3}, 0.2), a = seq({2, 4}, 0.1), b = seq({4, 3}, 0.6);
  for (bool use_gelu : {false, true})
    for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{0.0, -1.5}}) {
      CAPTURE(use_gelu);
      CAPTURE(beta);
      CAPTURE(alpha);
      check_values(gd::_addmm_activation(self, a, b, beta, alpha, use_gelu), {2, 3},
                   addmm_activation_by_definition(self, a, b, beta, alpha, use_gelu));
    }
}

TEST_CASE("_addmm_activation: on the CPU bit for bit addmm then relu or gelu(approximate='tanh')") {
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64, gd::kFloat16, gd::kBFloat16}) {
    const std::string dtype_text(gd::dtype_name(dtype));
    CAPTURE(dtype_text);
    const gd::Tensor a = seq({5, 7}, 0.1, dtype), b = seq({7, 6}, 0.6, dtype);
    const gd::Tensor row = seq({6}, 0.2, dtype), full = seq({5, 6}, 0.3, dtype), column = seq({5, 1}, 0.4, dtype);
    for (const gd::Tensor& self : {row, full, column, row.unsqueeze(0)}) {
      for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}}) {
        CHECK(gd::equal(gd::_addmm_activation(self, a, b, beta, alpha),
                        gd::relu(gd::addmm(self, a, b, beta, alpha))));
        CHECK(gd::equal(gd::_addmm_activation(self, a, b, beta, alpha, true),
                        gd::gelu(gd::addmm(self, a, b, beta, alpha), "tanh")));
      }
      // Transposed and strided operands, as Linear's weight.t().
      const gd::Tensor wt = seq({6, 7}, 0.6, dtype).t(), strided = seq({5, 14}, 0.1, dtype).slice(1, 0, 14, 2);
      CHECK(gd::equal(gd::_addmm_activation(self, strided, wt), gd::relu(gd::addmm(self, strided, wt))));
      CHECK(gd::equal(gd::_addmm_activation(self, strided, wt, 1, 1, true),
                      gd::gelu(gd::addmm(self, strided, wt), "tanh")));
    }
    // Empty operands: a [0, 6] result, and a k = 0 product (the bias alone).
    CHECK(gd::_addmm_activation(row, seq({0, 7}, 0.1, dtype), b).sizes() == gd::IntArrayRef(Shape{0, 6}));
    CHECK(gd::equal(gd::_addmm_activation(row, gd::zeros({5, 0}, dtype), gd::zeros({0, 6}, dtype)),
                    gd::relu(row).expand({5, 6})));
  }
}

TEST_CASE("_addmm_activation: gradients are the composite's (gradcheck, gradgradcheck)") {
  for (bool use_gelu : {false, true}) {
    CAPTURE(use_gelu);
    auto fn = [use_gelu](const std::vector<gd::Tensor>& in) {
      return std::vector<gd::Tensor>{gd::_addmm_activation(in[0], in[1], in[2], 0.5, 1.5, use_gelu)};
    };
    // Offsets that keep every pre-activation away from relu's kink at 0.
    gd::Tensor self = seq({3}, 0.2).requires_grad_(), a = seq({2, 4}, 0.1).requires_grad_();
    gd::Tensor b = seq({4, 3}, 0.6).requires_grad_();
    CHECK(gd::autograd::gradcheck(fn, {self, a, b}));
    CHECK(gd::autograd::gradgradcheck(fn, {self, a, b}));
    // The weight transposed, as Linear passes it.
    gd::Tensor w = seq({3, 4}, 0.6).requires_grad_();
    auto linear = [use_gelu](const std::vector<gd::Tensor>& in) {
      return std::vector<gd::Tensor>{gd::_addmm_activation(in[0], in[1], in[2].t(), 1, 1, use_gelu)};
    };
    CHECK(gd::autograd::gradcheck(linear, {self, a, w}));
  }
}

TEST_CASE("_addmm_activation: addmm's checks and messages") {
  const gd::Tensor self = seq({3}, 0.2), a = seq({2, 4}, 0.1), b = seq({4, 3}, 0.6);
  CHECK_THROWS_WITH_AS(gd::_addmm_activation(self, a, seq({5, 3}, 0.6)),
                       "mat1 and mat2 shapes cannot be multiplied (2x4 and 5x3)", gd::Error);
  CHECK_THROWS_WITH_AS(gd::_addmm_activation(self, a.to(gd::kFloat32), b),
                       "expected m1 and m2 to have the same dtype, but got: float != double", gd::Error);
  CHECK_THROWS_WITH_AS(gd::_addmm_activation(self, seq({2, 4, 1}, 0.1), b), "self must be a matrix", gd::Error);
}
