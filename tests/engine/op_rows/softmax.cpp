// The op sweep's rows for softmax and log_softmax (tests/engine/test_softmax.cpp):
// each dim of 2-D and 3-D inputs, and logits far from 0.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/row_builders.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::OpInfo;
using namespace gd::testing::rows;

namespace {

constexpr unsigned kAll = gd::testing::kAllVariants;

// Logits in [-2, 2] unless a row says otherwise.
OpInfo row(std::string name, std::vector<int64_t> shape, std::function<Tensor(const Tensor&)> f, unsigned variants,
           double lo = -2.0, double hi = 2.0) {
  return unary_row(std::move(name), std::move(shape), std::move(f), variants, lo, hi);
}

const gd::testing::OpRegistrar softmax_rows({
    row("softmax", {2, 3}, [](const Tensor& x) { return x.softmax(-1); }, kAll),
    row("softmax dim 0", {3, 2}, [](const Tensor& x) { return x.softmax(0); }, kWithDims),
    row("softmax (3-D, middle dim)", {2, 3, 2}, [](const Tensor& x) { return x.softmax(1); }, kWithDims),
    row("softmax (large logits)", {2, 3}, [](const Tensor& x) { return x.softmax(-1); }, kWithDims, 300.0, 302.0),
    row("log_softmax", {2, 3}, [](const Tensor& x) { return x.log_softmax(-1); }, kAll),
    row("log_softmax dim 0", {3, 2}, [](const Tensor& x) { return x.log_softmax(0); }, kWithDims),
    row("log_softmax (3-D, middle dim)", {2, 3, 2}, [](const Tensor& x) { return x.log_softmax(-2); }, kWithDims),
});

}  // namespace
