// Sparse COO tensors: construction, coalesce, to_dense and the sparse x dense
// matrix product (differentiable in the values and the dense operand).
#pragma once

#include <cstdint>

#include "engine/tensor.h"

namespace gradiens {

// A sparse tensor of shape `size` holding values[k] at indices[:, k]. indices is
// int64 (ndim, nnz), values is 1-D (nnz); hybrid (dense-dimension) values are not
// supported. The values keep their autograd history, so gradients of ops on the
// sparse tensor flow to them. The tensor's own storage is empty: dense ops must
// not be given it (the functions below check is_sparse and say so).
// is_coalesced = true is trusted, as in PyTorch: the indices must then be sorted
// row-major without duplicates, or sparse::mm sums entries into the wrong rows.
// A sparse tensor lives on its values' device (indices on the same one); the
// index bookkeeping (checks, sorting, row starts) runs on a host copy of the
// indices, the products and sums on the device.
Tensor sparse_coo_tensor(const Tensor& indices, const Tensor& values, IntArrayRef size, bool is_coalesced = false);
bool is_sparse(const Tensor& t);
// The indices and values of a coalesced sparse tensor, as PyTorch's indices()/values().
Tensor sparse_indices(const Tensor& t);
Tensor sparse_values(const Tensor& t);
int64_t sparse_nnz(const Tensor& t);
// Sums duplicate entries and sorts the indices row-major (differentiable in the values).
Tensor coalesce(const Tensor& t);
// The dense tensor the sparse one stands for (differentiable in the values).
Tensor to_dense(const Tensor& t);

namespace sparse {
// sparse_2d (M, K) @ dense_2d (K, N) -> dense (M, N), without densifying the
// sparse operand; gradients go to its values and to dense_2d.
Tensor mm(const Tensor& sparse_2d, const Tensor& dense_2d);
}  // namespace sparse

}  // namespace gradiens
