// Tests for operator<<(ostream, Tensor): every expected string is PyTorch 1.13's
// repr of the same tensor with "torch." removed from the dtype.
#include <doctest/doctest.h>

#include <limits>
#include <sstream>
#include <string>

#include "engine/tensor_data.h"
#include "gradiens.h"

namespace gd = gradiens;

namespace {

std::string repr(const gd::Tensor& t) {
  std::ostringstream out;
  out << t;
  return out.str();
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const gd::TensorOptions kF64 = gd::TensorOptions().dtype(gd::kFloat64);

}  // namespace

// Each expected string: python3 -c "import torch; print(repr(<the torch expression in the comment>))".
TEST_CASE("print: modes, alignment, suffixes") {
  // clang-format off
  CHECK(repr(gd::tensor({1., 2.})) == "tensor([1., 2.])");                                              // torch.tensor([1., 2.])
  CHECK(repr(gd::tensor({{1., 2.}, {3., 4.}}, kF64.requires_grad(true))) ==
        "tensor([[1., 2.],\n        [3., 4.]], dtype=float64, requires_grad=True)");                       // torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64, requires_grad=True)
  CHECK(repr(gd::tensor({0.1, 0.22, 0.333})) == "tensor([0.1000, 0.2200, 0.3330])");                     // torch.tensor([0.1, 0.22, 0.333])
  CHECK(repr(gd::tensor({-1.5, 2.25, 100.})) == "tensor([ -1.5000,   2.2500, 100.0000])");               // torch.tensor([-1.5, 2.25, 100.])
  CHECK(repr(gd::tensor({1., -2.})) == "tensor([ 1., -2.])");                                            // torch.tensor([1., -2.])
  CHECK(repr(gd::tensor({0., 0.})) == "tensor([0., 0.])");                                               // torch.tensor([0., 0.])
  CHECK(repr(gd::tensor({-0., 1.})) == "tensor([-0., 1.])");                                             // torch.tensor([-0., 1.])
  CHECK(repr(gd::tensor({1e-5, 1.})) == "tensor([1.0000e-05, 1.0000e+00])");                             // torch.tensor([1e-5, 1.])
  CHECK(repr(gd::tensor({1e9, 1.})) == "tensor([1.0000e+09, 1.0000e+00])");                              // torch.tensor([1e9, 1.])
  CHECK(repr(gd::tensor({1., 2000.})) == "tensor([1.0000e+00, 2.0000e+03])");                            // torch.tensor([1., 2000.])
  CHECK(repr(gd::tensor({0.5, 600.25})) == "tensor([5.0000e-01, 6.0025e+02])");                          // torch.tensor([0.5, 600.25])
  CHECK(repr(gd::tensor({123456789.})) == "tensor([1.2346e+08])");                                       // torch.tensor([123456789.])
  CHECK(repr(gd::tensor({1e-8, 0.})) == "tensor([1.0000e-08, 0.0000e+00])");                             // torch.tensor([1e-8, 0.])
  CHECK(repr(gd::tensor({kNaN, kInf, 1.5})) == "tensor([   nan,    inf, 1.5000])");                      // torch.tensor([nan, inf, 1.5])
  CHECK(repr(gd::tensor({kNaN, kInf, 1.})) == "tensor([nan, inf, 1.])");                                 // torch.tensor([nan, inf, 1.])
  CHECK(repr(gd::tensor({-kInf, 1e5, 1.})) == "tensor([      -inf, 1.0000e+05, 1.0000e+00])");           // torch.tensor([-inf, 1e5, 1.])
  CHECK(repr(gd::tensor({kNaN, kNaN})) == "tensor([nan, nan])");                                         // torch.tensor([nan, nan])
  CHECK(repr(gd::tensor({true, false})) == "tensor([ True, False])");                                    // torch.tensor([True, False])
  CHECK(repr(gd::tensor(true)) == "tensor(True)");                                                       // torch.tensor(True)
  CHECK(repr(gd::tensor({{1, -20}, {300, 4}})) == "tensor([[  1, -20],\n        [300,   4]])");          // torch.tensor([[1, -20], [300, 4]])
  CHECK(repr(gd::tensor({1, 2}, gd::kInt32)) == "tensor([1, 2], dtype=int32)");                          // torch.tensor([1, 2], dtype=torch.int32)
  CHECK(repr(gd::tensor({7, 200}, gd::kUInt8)) == "tensor([  7, 200], dtype=uint8)");                    // torch.tensor([7, 200], dtype=torch.uint8)
  CHECK(repr(gd::tensor(3.5)) == "tensor(3.5000)");                                                      // torch.tensor(3.5)
  CHECK(repr(gd::tensor(3.5, kF64)) == "tensor(3.5000, dtype=float64)");                                 // torch.tensor(3.5, dtype=torch.float64)
  CHECK(repr(gd::tensor(3)) == "tensor(3)");                                                             // torch.tensor(3)
  CHECK(repr(gd::tensor(3.5, gd::requires_grad())) == "tensor(3.5000, requires_grad=True)");             // torch.tensor(3.5, requires_grad=True)
  CHECK(repr(gd::tanh(gd::tensor({1., 2.}, gd::requires_grad()))) ==
        "tensor([0.7616, 0.9640], grad_fn=<TanhBackward0>)");                                            // torch.tensor([1., 2.], requires_grad=True).tanh()
  // clang-format on
}

TEST_CASE("print: empty tensors show size and dtype") {
  // clang-format off
  CHECK(repr(gd::zeros({0})) == "tensor([])");                                                           // torch.zeros(0)
  CHECK(repr(gd::zeros({0, 3})) == "tensor([], size=(0, 3))");                                           // torch.zeros(0, 3)
  CHECK(repr(gd::zeros({0}, gd::kFloat64)) == "tensor([], dtype=float64)");                              // torch.zeros(0, dtype=torch.float64)
  CHECK(repr(gd::zeros({0}, gd::kInt64)) == "tensor([], dtype=int64)");                                  // torch.zeros(0, dtype=torch.int64)
  CHECK(repr(gd::zeros({2, 0}, gd::kInt32)) == "tensor([], size=(2, 0), dtype=int32)");                  // torch.zeros(2, 0, dtype=torch.int32)
  CHECK(repr(gd::zeros({0}, gd::kBool)) == "tensor([], dtype=bool)");                                    // torch.zeros(0, dtype=torch.bool)
  // clang-format on
}

TEST_CASE("print: nesting, wrapping and summarization") {
  // clang-format off
  CHECK(repr(gd::arange(24.).reshape({2, 3, 4})) ==                                                      // torch.arange(24.).reshape(2, 3, 4)
        "tensor([[[ 0.,  1.,  2.,  3.],\n         [ 4.,  5.,  6.,  7.],\n         [ 8.,  9., 10., 11.]],\n\n"
        "        [[12., 13., 14., 15.],\n         [16., 17., 18., 19.],\n         [20., 21., 22., 23.]]])");
  CHECK(repr(gd::arange(16).reshape({2, 2, 2, 2})) ==                                                    // torch.arange(16).reshape(2, 2, 2, 2)
        "tensor([[[[ 0,  1],\n          [ 2,  3]],\n\n         [[ 4,  5],\n          [ 6,  7]]],\n\n\n"
        "        [[[ 8,  9],\n          [10, 11]],\n\n         [[12, 13],\n          [14, 15]]]])");
  CHECK(repr(gd::arange(6.).reshape({2, 3}).t()) == "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])");  // torch.arange(6.).reshape(2, 3).t()
  CHECK(repr(gd::arange(30, gd::kFloat64) / 7.0) ==                                                      // torch.arange(30, dtype=torch.float64) / 7
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429], dtype=float64)");
  CHECK(repr(gd::arange(2000.)) ==                                                                       // torch.arange(2000.)
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])");
  CHECK(repr(gd::arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");                 // torch.arange(2000)
  CHECK(repr(gd::arange(1010.).reshape({2, 505})) ==                                                     // torch.arange(1010.).reshape(2, 505)
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 5.0200e+02, 5.0300e+02,\n         5.0400e+02],\n"
        "        [5.0500e+02, 5.0600e+02, 5.0700e+02,  ..., 1.0070e+03, 1.0080e+03,\n         1.0090e+03]])");
  CHECK(repr(gd::arange(2000.).reshape({40, 50})) ==                                                     // torch.arange(2000.).reshape(40, 50)
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n         4.9000e+01],\n"
        "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n         9.9000e+01],\n"
        "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n         1.4900e+02],\n"
        "        ...,\n"
        "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n         1.8990e+03],\n"
        "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n         1.9490e+03],\n"
        "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n         1.9990e+03]])");
  // clang-format on
}

TEST_CASE("print: suffixes move to a new line past 80 columns") {
  // (torch.arange(n, dtype=torch.float64) / 3).requires_grad_(), n = 24 and 26: the
  // suffixes wrap at the same places in PyTorch's output.
  auto thirds = [](int64_t n) { return (gd::arange(n, gd::kFloat64) / 3.0).requires_grad_(); };
  CHECK(repr(thirds(24)) ==
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
        "        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667], dtype=float64,\n"
        "       requires_grad=True)");
  CHECK(repr(thirds(26)) ==
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
        "        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667, 8.0000, 8.3333],\n"
        "       dtype=float64, requires_grad=True)");
}

TEST_CASE("print: an undefined tensor") {
  CHECK(repr(gd::Tensor()) == "[ Tensor (undefined) ]");  // libtorch's text for an undefined tensor
}
