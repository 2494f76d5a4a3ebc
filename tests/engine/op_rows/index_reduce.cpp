// The op sweep's rows for index_reduce (tests/engine/test_index_reduce.cpp):
// each reduction, with and without self.
#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/row_builders.h"

namespace gd = gradiens;
using gd::testing::InputSpec;
using gd::testing::kContiguous;
using gd::testing::kTransposed;
using gd::testing::OpInfo;
using namespace gd::testing::rows;

namespace {

const gd::testing::OpRegistrar index_reduce_rows([] {
  std::vector<OpInfo> rows;
  for (const char* reduce : {"prod", "mean", "amax", "amin"})
    for (bool include_self : {true, false}) {
      // prod keeps its values away from 0, where its gradient has cases.
      const double lo = std::string(reduce) == "prod" ? 0.5 : -1.0;
      rows.push_back({std::string("index_reduce ") + reduce + (include_self ? "" : " (no self)"),
                      [reduce, include_self](const V& x) {
                        return V{x[0].index_reduce(1, indices_for(x[0], {3, 0, 3}), x[1], reduce, include_self)};
                      },
                      {InputSpec{{2, 4}, lo, 1.5}, InputSpec{{2, 3}, lo, 1.5}},
                      kContiguous | kTransposed,
                      {}});
    }
  return rows;
}());

}  // namespace
