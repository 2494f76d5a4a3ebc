// The nn sweep on the CPU: every row of the functional table
// (tests/nn/functional_rows.cpp) passes float64 gradcheck and, where twice
// differentiable, gradgradcheck. tests/cuda/test_cuda_nn_sweep.cpp runs the
// same rows on the GPU against the CPU.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/nn/functional_rows.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;

TEST_CASE("nn sweep: every functional of the table passes gradcheck and gradgradcheck") {
  const auto& rows = gd::testing::nn_functional_rows();
  for (const gd::testing::NnRow& r : rows) {
    INFO(r.name);
    const std::vector<Tensor> inputs = gd::testing::nn_row_inputs(r, gd::Device(gd::kCPU));
    auto fn = [&r](const std::vector<Tensor>& x) { return gd::testing::call_nn_row(r, x); };
    CHECK(error_of([&] { gd::autograd::gradcheck(fn, inputs); }) == "");
    if (r.twice) CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, inputs); }) == "");
  }
  CHECK(rows.size() >= 100);
}

TEST_CASE("nn sweep: a row gives the same values on every call, the random ones included") {
  for (const gd::testing::NnRow& r : gd::testing::nn_functional_rows()) {
    INFO(r.name);
    const std::vector<Tensor> inputs = gd::testing::nn_row_inputs(r, gd::Device(gd::kCPU));
    const std::vector<Tensor> first = gd::testing::call_nn_row(r, inputs);
    gd::manual_seed(12345);  // the row's own seed, not the generator's state, decides its draws
    const std::vector<Tensor> again = gd::testing::call_nn_row(r, inputs);
    REQUIRE(first.size() == again.size());
    for (size_t o = 0; o < first.size(); ++o) CHECK(gd::testing::value_mismatch(again[o], first[o], 0, 0) == "");
  }
}
