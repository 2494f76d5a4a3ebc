// The op sweep's rows for scatter_reduce (each reduction, with and without
// self), index_fill and index_copy (tests/engine/test_index_ops.cpp).
#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/row_builders.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::OpInfo;
using namespace gd::testing::rows;

namespace {

// Row-major [2, 3] index into dim 1 of a [2, 4] self, with a repeated target per row.
Tensor index_2x3_for(const Tensor& self) { return indices_for(self, {3, 0, 3, 1, 1, 2}, {2, 3}); }

std::vector<OpInfo> scatter_reduce_rows() {
  std::vector<OpInfo> rows;
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
    for (bool include_self : {true, false}) {
      // prod keeps its values away from 0, where its gradient has cases.
      const double lo = std::string(reduce) == "prod" ? 0.5 : -1.0;
      rows.push_back(binary_row(
          std::string("scatter_reduce ") + reduce + (include_self ? "" : " (no self)"), {2, 4}, {2, 3},
          [reduce, include_self](const Tensor& x, const Tensor& src) {
            return x.scatter_reduce(1, index_2x3_for(x), src, reduce, include_self);
          },
          kWithDims, lo, 1.5));
    }
  return rows;
}

const gd::testing::OpRegistrar index_ops_rows([] {
  std::vector<OpInfo> rows = scatter_reduce_rows();
  rows.push_back(unary_row("index_fill", {3, 4}, [](const Tensor& x) {
    return x.index_fill(1, indices_for(x, {2, 0, -1}), 0.5);
  }));
  rows.push_back(binary_row("index_fill (tensor value)", {3, 4}, {}, [](const Tensor& x, const Tensor& v) {
    return x.index_fill(0, indices_for(x, {1, 1}), v.dim() == 0 ? v : v.sum());
  }));
  rows.push_back(binary_row("index_copy", {3, 4}, {3, 2}, [](const Tensor& x, const Tensor& src) {
    return x.index_copy(1, indices_for(x, {3, 0}), src);
  }));
  rows.push_back(binary_row("index_copy_ (in place on a copy)", {4, 3}, {2, 3}, [](const Tensor& x, const Tensor& src) {
    Tensor y = x.clone();
    y.index_copy_(0, indices_for(y, {1, 3}), src);
    return y;
  }));
  return rows;
}());

}  // namespace
