// Memory formats as in PyTorch: the strides each format gives a shape, and the
// layout rules of copies (Preserve) behind Tensor::contiguous/clone and the *_like factories.
#pragma once

#include "engine/tensor.h"

namespace gradiens {

// The dense strides that lay `sizes` out in `memory_format` (Contiguous: row-major;
// ChannelsLast: NHWC order, needs 4 dims; ChannelsLast3d: NDHWC, needs 5), with
// PyTorch's errors; Preserve has no strides of its own and is an error here.
DimVector contiguous_strides(IntArrayRef sizes, MemoryFormat memory_format);

// Whether the elements cover one block of memory without gaps and without two of
// them sharing an address, in some order of the dims (PyTorch's
// is_non_overlapping_and_dense: a transposed or channels_last tensor is).
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

// Dense strides for `sizes` that keep the order of `strides` (innermost stays
// innermost); dims of stride 0 keep their place (PyTorch's infer_dense_strides).
DimVector infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);

// The strides of a new tensor shaped like `like` in `memory_format`. Preserve, as
// PyTorch's empty_like: `like`'s own strides when it is non-overlapping and dense,
// else dense strides in the order of its strides.
DimVector like_strides(const Tensor& like, MemoryFormat memory_format);

}  // namespace gradiens
