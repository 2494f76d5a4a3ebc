// The sparse COO example that test_sparse.cpp checks against PyTorch and the op
// sweep's sparse rows (op_rows/sparse.cpp) build their sparse tensors from.
#pragma once

#include "tests/engine/op_registry.h"

namespace gradiens::testing {

// The indices of the 3x4 example, with duplicates (0,3) twice and (2,1) twice, out of order:
//   torch.sparse_coo_tensor([[2,0,1,0,2,1,0],[1,3,0,3,1,2,0]],
//                           [1.5,-2.,0.25,4.,3.,-1.,7.], (3,4))
inline Tensor sparse_example_indices() {
  return tensor_of({2, 0, 1, 0, 2, 1, 0, 1, 3, 0, 3, 1, 2, 0}, {2, 7}, kInt64);
}

}  // namespace gradiens::testing
