// Sparse COO tensors (engine/sparse.h): construction checks, coalesce, to_dense
// and the SparseMM op (sparse x dense, with its backward beside it).
#include "engine/sparse.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/tensor_impl.h"
#include "kernels/sparse.h"

namespace gradiens {

// What a sparse tensor's TensorImpl::sparse points to. indices is a contiguous
// int64 (ndim, nnz) tensor; values is the caller's tensor (with its history).
struct SparseCOO {
  Tensor indices;
  Tensor values;
  bool coalesced = false;
};

namespace {

const SparseCOO& sparse_of(const Tensor& t, std::string_view op) {
  GD_CHECK(is_sparse(t), fmt::format("{}: expected a sparse COO tensor, but got a dense (strided) tensor", op));
  return *t.impl()->sparse;
}

void check_dense(const Tensor& t, std::string_view op, std::string_view arg) {
  GD_CHECK(!is_sparse(t), fmt::format("{}: expected a dense tensor for {}, but got a sparse tensor", op, arg));
}

// Builds the tensor without re-checking the indices (callers made them valid).
Tensor make_sparse(Tensor indices, Tensor values, IntArrayRef size, bool coalesced) {
  // Empty storage: nothing can be read through the dense view of a sparse tensor.
  auto storage = std::make_shared<StorageImpl>(nullptr, 0, values.device(), std::function<void(void*)>());
  auto impl = std::make_shared<TensorImpl>(std::move(storage), size.dims(), contiguous_strides(size), 0,
                                           values.dtype());
  impl->sparse = std::make_shared<SparseCOO>(SparseCOO{std::move(indices), std::move(values), coalesced});
  return Tensor(std::move(impl));
}

// The permutation that sorts the columns of `indices` (ndim, nnz) lexicographically
// (row-major order of the entries); stable, so duplicates keep their order.
std::vector<int64_t> row_major_order(const int64_t* idx, int64_t ndim, int64_t nnz) {
  std::vector<int64_t> order(static_cast<size_t>(nnz));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    for (int64_t d = 0; d < ndim; ++d) {
      int64_t x = idx[d * nnz + a], y = idx[d * nnz + b];
      if (x != y) return x < y;
    }
    return false;
  });
  return order;
}

// Host-built int64 data as a tensor on `device`.
Tensor int64_tensor(const std::vector<int64_t>& data, IntArrayRef sizes, Device device) {
  Tensor t = empty(sizes, TensorOptions().dtype(kInt64));
  std::copy(data.begin(), data.end(), t.cpu_data_ptr<int64_t>());
  return t.to(device);
}

// out (M, N) = S (M, K) @ dense (K, N), S given as coalesced COO (rows sorted).
// Each output row is summed by one thread in index order, so the result does
// not depend on the thread count. The row bookkeeping is done on the host (a
// copy of the indices, for a GPU tensor); the product runs on the operands'
// device.
struct SparseMM {
  static constexpr std::string_view name = "SparseMmBackward";
  static Tensor forward(Ctx& ctx, const Tensor& indices, const Tensor& values, const Tensor& dense, int64_t rows,
                        int64_t cols) {
    ctx.save_for_backward(values, dense);
    ctx.extra = {indices};
    ctx.ints = {rows, cols};
    const int64_t nnz = indices.size(1), n = dense.size(1);
    const Tensor host_indices = indices.cpu();
    const int64_t* row_of = host_indices.cpu_data_ptr<int64_t>();
    // row_start[r] .. row_start[r + 1] are the entries of row r.
    std::vector<int64_t> row_start(static_cast<size_t>(rows) + 1, 0);
    for (int64_t k = 0; k < nnz; ++k) ++row_start[static_cast<size_t>(row_of[k]) + 1];
    std::partial_sum(row_start.begin(), row_start.end(), row_start.begin());
    const Tensor starts = int64_tensor(row_start, {rows + 1}, dense.device());
    const int64_t* col_of = static_cast<const int64_t*>(indices.data_ptr()) + nnz;
    Tensor vals = values.contiguous(), mat = dense.contiguous();
    Tensor out = zeros({rows, n}, dense.options());
    kernels::sparse_dense_mm(dense.dtype(), static_cast<const int64_t*>(starts.data_ptr()), col_of, vals.data_ptr(),
                             nnz, mat.data_ptr(), rows, n, out.data_ptr(), cuda_seam::device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [values, dense] = ctx.saved<2>();
    const Tensor& indices = ctx.extra[0];
    const int64_t rows = ctx.ints[0], cols = ctx.ints[1], nnz = indices.size(1);
    Tensor grad_values, grad_dense;
    if (ctx.needs_input_grad(1)) {
      // grad_values[k] = sum_j g[row_k, j] * dense[col_k, j]
      grad_values = (g.index_select(0, indices.select(0, 0)) * dense.index_select(0, indices.select(0, 1))).sum(1);
    }
    if (ctx.needs_input_grad(2)) {
      // S^T g, with S^T's entries re-sorted by their new rows (S's columns).
      const Tensor host_indices = indices.cpu();
      const int64_t* idx = host_indices.cpu_data_ptr<int64_t>();
      std::vector<int64_t> swapped(static_cast<size_t>(2 * nnz));
      std::copy(idx + nnz, idx + 2 * nnz, swapped.begin());
      std::copy(idx, idx + nnz, swapped.begin() + nnz);
      std::vector<int64_t> order = row_major_order(swapped.data(), 2, nnz);
      std::vector<int64_t> sorted(static_cast<size_t>(2 * nnz));
      for (int64_t k = 0; k < nnz; ++k) {
        sorted[static_cast<size_t>(k)] = swapped[static_cast<size_t>(order[static_cast<size_t>(k)])];
        sorted[static_cast<size_t>(nnz + k)] = swapped[static_cast<size_t>(nnz + order[static_cast<size_t>(k)])];
      }
      Tensor values_t = values.index_select(0, int64_tensor(order, {nnz}, values.device()));
      grad_dense = apply<SparseMM>(int64_tensor(sorted, {2, nnz}, indices.device()), values_t, g, cols, rows);
    }
    return {Tensor(), grad_values, grad_dense};
  }
};

}  // namespace

bool is_sparse(const Tensor& t) { return t.defined() && t.impl()->sparse != nullptr; }

Tensor sparse_coo_tensor(const Tensor& indices, const Tensor& values, IntArrayRef size, bool is_coalesced) {
  check_dense(indices, "sparse_coo_tensor", "indices");
  check_dense(values, "sparse_coo_tensor", "values");
  GD_CHECK(indices.dtype() == kInt64, fmt::format("sparse_coo_tensor: indices must be an int64 tensor, but got {}",
                                                  c10_type_name(indices.dtype())));
  GD_CHECK(indices.dim() == 2,
           fmt::format("indices must be sparse_dim x nnz, but got: {}", shape_to_string(indices.sizes())));
  GD_CHECK(values.dim() == 1, fmt::format("sparse_coo_tensor: values must be 1-D (nnz); hybrid sparse tensors "
                                          "are not supported, but got values of shape {}",
                                          shape_to_string(values.sizes())));
  GD_CHECK(indices.device() == values.device(),
           fmt::format("sparse_coo_tensor: indices and values must be on the same device, but got {} and {}",
                       indices.device().str(), values.device().str()));
  const int64_t ndim = indices.size(0), nnz = indices.size(1);
  GD_CHECK(nnz == values.size(0),
           fmt::format("indices and values must have same nnz, but got nnz from indices: {}, nnz from values: {}",
                       nnz, values.size(0)));
  GD_CHECK(static_cast<int64_t>(size.size()) == ndim,
           fmt::format("number of dimensions must be sparse_dim ({}) + dense_dim (0), but got {}", ndim,
                       size.size()));
  for (int64_t s : size) GD_CHECK(s >= 0, fmt::format("sparse_coo_tensor: negative dimension {}", s));
  checked_numel(size, "sparse_coo_tensor");
  Tensor idx = indices.detach().contiguous();
  const Tensor host_idx = idx.cpu();  // checked on the host, a GPU tensor too
  const int64_t* p = host_idx.cpu_data_ptr<int64_t>();
  for (int64_t d = 0; d < ndim; ++d)
    for (int64_t k = 0; k < nnz; ++k) {
      int64_t i = p[d * nnz + k];
      GD_CHECK(i >= 0, fmt::format("found negative index {} for dim {}", i, d));
      GD_CHECK(i < size[static_cast<size_t>(d)],
               fmt::format("size is inconsistent with indices: for dim {}, size is {} but found index {}", d,
                           size[static_cast<size_t>(d)], i));
    }
  if (idx.is_same(indices)) idx = idx.clone();  // later writes to the caller's indices must not reach us
  return make_sparse(std::move(idx), values, size, is_coalesced);
}

Tensor sparse_indices(const Tensor& t) {
  const SparseCOO& s = sparse_of(t, "indices");
  GD_CHECK(s.coalesced, "Cannot get indices on an uncoalesced tensor, please call .coalesce() first");
  // A copy, unlike PyTorch's alias: an in-place write to it could otherwise put
  // an index out of bounds behind the checks sparse_coo_tensor made.
  return s.indices.clone();
}

Tensor sparse_values(const Tensor& t) {
  const SparseCOO& s = sparse_of(t, "values");
  GD_CHECK(s.coalesced, "Cannot get values on an uncoalesced tensor, please call .coalesce() first");
  return s.values;
}

int64_t sparse_nnz(const Tensor& t) { return sparse_of(t, "_nnz").indices.size(1); }

Tensor coalesce(const Tensor& t) {
  const SparseCOO& s = sparse_of(t, "coalesce");
  if (s.coalesced) return t;
  const int64_t ndim = s.indices.size(0), nnz = s.indices.size(1);
  const Tensor host_indices = s.indices.cpu();
  const int64_t* idx = host_indices.cpu_data_ptr<int64_t>();
  std::vector<int64_t> order = row_major_order(idx, ndim, nnz);
  // group[k]: the output entry that input entry k is summed into.
  std::vector<int64_t> group(static_cast<size_t>(nnz));
  std::vector<int64_t> firsts;  // one input entry per output entry
  for (int64_t r = 0; r < nnz; ++r) {
    int64_t k = order[static_cast<size_t>(r)];
    bool same = false;
    if (!firsts.empty()) {
      int64_t f = firsts.back();
      same = true;
      for (int64_t d = 0; d < ndim && same; ++d) same = idx[d * nnz + k] == idx[d * nnz + f];
    }
    if (!same) firsts.push_back(k);
    group[static_cast<size_t>(k)] = static_cast<int64_t>(firsts.size()) - 1;
  }
  const int64_t unique = static_cast<int64_t>(firsts.size());
  std::vector<int64_t> out_idx(static_cast<size_t>(ndim * unique));
  for (int64_t d = 0; d < ndim; ++d)
    for (int64_t u = 0; u < unique; ++u)
      out_idx[static_cast<size_t>(d * unique + u)] = idx[d * nnz + firsts[static_cast<size_t>(u)]];
  const Device device = s.values.device();
  Tensor values = zeros({unique}, s.values.options()).scatter_add(0, int64_tensor(group, {nnz}, device), s.values);
  return make_sparse(int64_tensor(out_idx, {ndim, unique}, device), values, t.sizes(), true);
}

Tensor to_dense(const Tensor& t) {
  const SparseCOO& s = sparse_of(t, "to_dense");
  const int64_t ndim = s.indices.size(0), nnz = s.indices.size(1);
  const Tensor host_indices = s.indices.cpu();
  const int64_t* idx = host_indices.cpu_data_ptr<int64_t>();
  DimVector strides = contiguous_strides(t.sizes());
  std::vector<int64_t> flat(static_cast<size_t>(nnz), 0);
  for (int64_t d = 0; d < ndim; ++d)
    for (int64_t k = 0; k < nnz; ++k)
      flat[static_cast<size_t>(k)] += idx[d * nnz + k] * strides[static_cast<size_t>(d)];
  return zeros({t.numel()}, s.values.options())
      .scatter_add(0, int64_tensor(flat, {nnz}, s.values.device()), s.values)
      .reshape(t.sizes());
}

namespace sparse {

Tensor mm(const Tensor& sparse_2d, const Tensor& dense_2d) {
  sparse_of(sparse_2d, "sparse.mm");
  check_dense(dense_2d, "sparse.mm", "the second argument");
  GD_CHECK(sparse_2d.dim() == 2,
           fmt::format("sparse.mm: expected a 2-D sparse matrix, but got a {}-D sparse tensor", sparse_2d.dim()));
  GD_CHECK(dense_2d.dim() == 2, fmt::format("addmm: matrices expected, got {}D tensor", dense_2d.dim()));
  GD_CHECK(dense_2d.size(0) == sparse_2d.size(1),
           fmt::format("addmm: Argument #3 (dense): Expected dim 0 size {}, got {}", sparse_2d.size(1),
                       dense_2d.size(0)));
  GD_CHECK(sparse_2d.dtype() == dense_2d.dtype(),
           fmt::format("sparse.mm: expected scalar type {} but found {}", c10_type_name(sparse_2d.dtype()),
                       c10_type_name(dense_2d.dtype())));
  GD_CHECK(sparse_2d.device() == dense_2d.device(),
           fmt::format("sparse.mm: expected both operands on the same device, but got {} and {}",
                       sparse_2d.device().str(), dense_2d.device().str()));
  const Tensor coalesced = coalesce(sparse_2d);  // keeps the SparseCOO below alive
  const SparseCOO& s = *coalesced.impl()->sparse;
  return apply<SparseMM>(s.indices, s.values, dense_2d, sparse_2d.size(0), sparse_2d.size(1));
}

}  // namespace sparse

}  // namespace gradiens
