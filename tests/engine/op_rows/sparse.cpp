// The op sweep's rows for sparse COO tensors (tests/engine/test_sparse.cpp):
// sparse.mm and to_dense, with gradients to the values and the dense operand.
#include <vector>

#include "engine/sparse.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/sparse_example.h"

namespace gd = gradiens;
using gd::Tensor;
using V = std::vector<Tensor>;

namespace {

// The example's fixed pattern holding `values`, its indices on the values' device
// (Note [Sweep indices on the input's device]).
Tensor sweep_sparse(const Tensor& values) {
  return gd::sparse_coo_tensor(gd::testing::sparse_example_indices().to(values.device()), values, {3, 4});
}

const gd::testing::OpRegistrar sparse_rows({
    {"sparse.mm", [](const V& x) { return V{gd::sparse::mm(sweep_sparse(x[0]), x[1])}; }, {{{7}}, {{4, 2}}},
     gd::testing::kContiguous | gd::testing::kTransposed | gd::testing::kBroadcast, {}},
    {"to_dense (sparse)", [](const V& x) { return V{gd::to_dense(sweep_sparse(x[0]))}; }, {{{7}}},
     gd::testing::kContiguous | gd::testing::kBroadcast, {}},
});

}  // namespace
