// What index_fill, index_copy, scatter_reduce and embedding_bag share: one
// reducing scatter along a dim through kernels/index_ops.h, with the index
// range checked (before the launch on a cuda device) and PyTorch's message.
#pragma once

#include <string_view>

#include "engine/tensor.h"
#include "kernels/index_ops.h"

namespace gradiens::index_scatter {

// out[i with i_dim replaced by index[i]] = op(out[...], src[i]) for every i of
// `shape`, walking out with `out_strides` (0 along dim), src with
// `src_strides` (a 0-dim src: all 0) and the int64 index with `index_strides`;
// the index picks out's position along `dim` (stride out.stride(dim), size
// `dim_size`). A value outside [0, dim_size) is an error worded
// "<prefix>index {} is out of bounds for dimension {} with size {}".
void scatter_along_dim(kernels::ScatterReduce op, const Tensor& out, IntArrayRef shape, IntArrayRef out_strides,
                       int64_t dim_stride, int64_t dim_size, int64_t dim, const Tensor& index,
                       IntArrayRef index_strides, const Tensor& src, IntArrayRef src_strides,
                       std::string_view prefix = "");

}  // namespace gradiens::index_scatter
