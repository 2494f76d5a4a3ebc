// The seam between Tensor::index (engine/ops/shape.cpp), which applies the basic
// part of an index list as views, and advanced indexing (engine/ops/advanced_indexing.cpp).
#pragma once

#include <vector>

#include "engine/tensor.h"

namespace gradiens {

// A tensor index (integer tensor or boolean mask) and the first dim of the
// view it applies to; a mask covers mask.dim() dims from there.
struct TensorIndexAt {
  int64_t dim;
  Tensor index;
};

// An index list with its basic part applied: integers select, slices slice,
// None adds a dim; a bool (or a 0-dim bool tensor) adds a dim indexed by a
// one-element mask, as in PyTorch. The tensor indices are left for advanced
// indexing, with their positions in `view`.
struct BasicIndexing {
  Tensor view;
  std::vector<TensorIndexAt> tensors;
};

// Defined in engine/ops/shape.cpp. Checks "too many indices" and index dtypes.
BasicIndexing apply_basic_indexing(const Tensor& self, const std::vector<indexing::TensorIndex>& indices);

// self.index(indices) when the list holds tensor indices or bools: a copy,
// differentiable (the backward is an accumulating index_put_ into zeros).
// Defined in engine/ops/advanced_indexing.cpp.
Tensor index_with_tensors(const Tensor& self, const std::vector<indexing::TensorIndex>& indices);

}  // namespace gradiens
