// unique (_unique, _unique2, unique_dim) and unique_consecutive, as PyTorch.
// Composite on every device: a stable sort (skipped by the consecutive forms),
// a flag where each run of equal neighbours begins, a cumulative sum of the
// flags for the inverse, and the flags' positions (nonzero: one read of the
// count on the host) for the values and counts. Not differentiable, as in PyTorch.
#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens {

namespace {

struct UniqueResult {
  Tensor values, inverse, counts;
};

Tensor empty_indices(const Device& device) { return empty({0}, TensorOptions().dtype(kInt64).device(device)); }

// Sort keys of a flat tensor: bool sorts as uint8.
Tensor sort_keys(const Tensor& flat) { return flat.dtype() == kBool ? flat.to(kUInt8) : flat; }

// The runs of the n rows of `sorted_rows` (1-D: one value a row; 2-D: a row a
// row), which came from the rows of the original at `order` (undefined: in
// place). values_of(starts) gives the unique values from the row numbers of
// each run's first row in the original order.
template <class ValuesOf>
UniqueResult runs(const Tensor& sorted_rows, const Tensor& order, bool return_inverse, bool return_counts,
                  ValuesOf values_of) {
  const int64_t n = sorted_rows.size(0);
  const Device device = sorted_rows.device();
  UniqueResult r;
  r.inverse = empty_indices(device);
  r.counts = empty_indices(device);
  if (n == 0) {
    r.values = values_of(empty_indices(device));
    return r;
  }
  Tensor differs = ne(sorted_rows.narrow(0, 1, n - 1), sorted_rows.narrow(0, 0, n - 1));
  if (differs.dim() > 1) differs = differs.any(1);
  Tensor starts_flag = cat({ones({1}, TensorOptions().dtype(kBool).device(device)), differs});
  Tensor starts = nonzero(starts_flag).reshape({-1});
  const int64_t u = starts.numel();
  r.values = values_of(order.defined() ? order.index_select(0, starts) : starts);
  if (return_inverse) {
    Tensor group = cumsum(starts_flag.to(kInt64), 0) - 1;
    r.inverse =
        order.defined() ? empty({n}, TensorOptions().dtype(kInt64).device(device)).scatter(0, order, group) : group;
  }
  if (return_counts) {
    Tensor ends = cat({starts.narrow(0, 1, u - 1), full({1}, n, TensorOptions().dtype(kInt64).device(device))});
    r.counts = ends - starts;
  }
  return r;
}

UniqueResult unique_flat(const Tensor& x, bool sort, bool return_inverse, bool return_counts) {
  NoGradGuard no_grad;
  Tensor flat = x.reshape({-1});
  Tensor keys = sort_keys(flat), order;
  if (sort && flat.numel() > 0) std::tie(keys, order) = gradiens::sort(keys, 0);
  UniqueResult r =
      runs(keys, order, return_inverse, return_counts, [&](const Tensor& rows) { return flat.index_select(0, rows); });
  if (return_inverse) r.inverse = r.inverse.reshape(x.sizes());
  return r;
}

// The slices of x along dim as the rows of an [n, m] tensor.
Tensor slices_as_rows(const Tensor& x, int64_t dim) {
  Tensor moved = x.transpose(0, dim).contiguous();
  const int64_t n = moved.size(0);
  int64_t m = 1;
  for (int64_t d = 1; d < moved.dim(); ++d) m *= moved.size(d);
  return moved.reshape({n, m});
}

UniqueResult unique_slices(const Tensor& x, int64_t dim_in, bool sort, bool return_inverse, bool return_counts) {
  NoGradGuard no_grad;
  GD_CHECK(x.dim() > 0, "unique_dim: the input must have at least one dimension");
  const int64_t dim = wrap_dim(dim_in, x.dim(), "unique_dim");
  Tensor rows = sort_keys(slices_as_rows(x, dim));
  const int64_t n = rows.size(0), m = rows.size(1);
  Tensor order;
  if (sort && n > 0) {
    // Lexicographic order: stable sorts by each column, the last column first.
    order = arange(n, TensorOptions().dtype(kInt64).device(x.device()));
    for (int64_t c = m - 1; c >= 0; --c) {
      Tensor column = rows.select(1, c).index_select(0, order);
      order = order.index_select(0, argsort(column, 0));
    }
    rows = rows.index_select(0, order);
  }
  return runs(rows, order, return_inverse, return_counts,
              [&](const Tensor& picked) { return x.index_select(dim, picked); });
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted, bool return_inverse, bool return_counts) {
  // PyTorch leaves the order of sorted=false unspecified; its CUDA backend sorts, and so do we.
  (void)sorted;
  UniqueResult r = unique_flat(x, true, return_inverse, return_counts);
  return {r.values, r.inverse, r.counts};
}

std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted, bool return_inverse) {
  auto [values, inverse, counts] = _unique2(x, sorted, return_inverse, false);
  return {values, inverse};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, int64_t dim, bool sorted, bool return_inverse,
                                              bool return_counts) {
  (void)sorted;  // always sorted, as in PyTorch
  UniqueResult r = unique_slices(x, dim, true, return_inverse, return_counts);
  return {r.values, r.inverse, r.counts};
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted, bool return_inverse, bool return_counts,
                                          std::optional<int64_t> dim) {
  if (dim) return unique_dim(x, *dim, sorted, return_inverse, return_counts);
  return _unique2(x, sorted, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  UniqueResult r = dim && x.dim() > 0 ? unique_slices(x, *dim, false, return_inverse, return_counts)
                                      : unique_flat(x, false, return_inverse, return_counts);
  return {r.values, r.inverse, r.counts};
}

}  // namespace gradiens
