// The products beyond matmul: outer, addr, inner, vdot, kron, tensordot, cross,
// cdist and cartesian_prod (einsum is in einsum.cpp). Every one is a composite of
// mul/matmul/sum/norm and views, so none needs a backward of its own (STYLE.md habit 1).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/elementwise.h"

namespace gradiens {

namespace {

// The GEMM-backed products need one dtype; PyTorch's kernels say it in these words.
void check_same_dtype(const Tensor& a, const Tensor& b, std::string_view op) {
  GD_CHECK(a.dtype() == b.dtype(), fmt::format("{}: expected scalar type {} but found {}", op, c10_type_name(a.dtype()),
                                               c10_type_name(b.dtype())));
}

void check_1d(const Tensor& t, std::string_view arg, std::string_view op) {
  GD_CHECK(t.dim() == 1, fmt::format("{}: Expected 1-D argument {}, but got {}-D", op, arg, t.dim()));
}

// The elementwise products (outer, addr, kron) promote like mul, except that
// float32 with float64 is an error naming the op instead of a silent promotion.
void check_elementwise_product(const Tensor& a, const Tensor& b, std::string_view op) {
  check_same_device(a, b, op);
  (void)result_type(a, b, op);
}

// ||x1_i - x2_j||_2 for every pair through one GEMM, as PyTorch's _euclidean_dist
// does for large inputs: [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T = |x1|^2 - 2 x1.x2 + |x2|^2.
// Cancellation can leave a tiny negative square: clamped to 0. sqrt's slope is
// infinite at 0, so a zero distance gets a zero gradient (the subgradient
// PyTorch's cdist backward gives) through the inner where, at every order.
Tensor euclidean_dist_via_gemm(const Tensor& x1, const Tensor& x2) {
  Tensor x1_sq = x1.square().sum({-1}, true);
  Tensor x2_sq = x2.square().sum({-1}, true);
  Tensor x1_ext = cat({x1 * -2.0, x1_sq, ones_like(x1_sq)}, -1);
  Tensor x2_ext = cat({x2, ones_like(x2_sq), x2_sq}, -1);
  Tensor squared = matmul(x1_ext, x2_ext.mT()).clamp_min(0);
  Tensor positive = squared > 0;
  return where(positive, sqrt(where(positive, squared, 1.0)), 0.0);
}

}  // namespace

// ---- outer products ----

Tensor outer(const Tensor& a, const Tensor& b) {
  check_1d(a, "self", "outer");
  check_1d(b, "vec2", "outer");
  check_elementwise_product(a, b, "outer");
  return a.unsqueeze(1) * b;
}

// beta * input + alpha * outer(vec1, vec2); beta = 0 ignores input entirely (its
// NaN and inf do not propagate), as in PyTorch.
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, Scalar beta, Scalar alpha) {
  check_1d(vec1, "vec1", "addr");
  check_1d(vec2, "vec2", "addr");
  check_elementwise_product(vec1, vec2, "addr");
  check_elementwise_product(input, vec1, "addr");
  // expand gives PyTorch's message for a bad shape; a 0-dim input stays 0-dim so
  // that it keeps the 0-dim promotion rule.
  Tensor base = input.dim() == 0 ? input : input.expand({vec1.size(0), vec2.size(0)});
  Tensor product = vec1.unsqueeze(1) * vec2;
  if (alpha.to_double() != 1.0) product = product * alpha;
  if (beta.to_double() == 0.0) return product;
  return (beta.to_double() == 1.0 ? base : base * beta) + product;
}

// ---- contractions ----

// Contracts the last dimension of each: a [..., k] and b [..., k] give a.shape[:-1] + b.shape[:-1].
Tensor inner(const Tensor& a, const Tensor& b) {
  check_same_device(a, b, "inner");
  if (a.dim() == 0 || b.dim() == 0) return a * b;
  GD_CHECK(a.size(-1) == b.size(-1),
           fmt::format("inner() the last dimension must match on both input tensors but got shapes {} and {}",
                       shape_to_string(a.sizes()), shape_to_string(b.sizes())));
  check_same_dtype(a, b, "inner");
  return tensordot(a, b, {-1}, {-1});
}

// Real dtypes only, so conjugating the first operand is the identity; dot's
// messages are the ones PyTorch's vdot gives.
Tensor vdot(const Tensor& a, const Tensor& b) { return dot(a, b); }

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  GD_CHECK(dims >= 0, fmt::format("tensordot expects dims >= 0, but got dims={}", dims));
  DimVector dims_a, dims_b;
  for (int64_t i = 0; i < dims; ++i) {
    dims_a.push_back(i - dims);
    dims_b.push_back(i);
  }
  return tensordot(a, b, dims_a, dims_b);
}

// permute -> reshape -> one GEMM: a's free dims become the rows, the contracted
// dims (in list order) the shared inner dim, b's free dims the columns.
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  GD_CHECK(dims_a.size() == dims_b.size(), "both dimension lists should have same length");
  check_same_dtype(a, b, "tensordot");
  check_same_device(a, b, "tensordot");
  Tensor ta = a, tb = b;
  DimVector wrapped_a, wrapped_b;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t da = wrap_dim(dims_a[i], a.dim()), db = wrap_dim(dims_b[i], b.dim());
    int64_t size_a = a.size(da), size_b = b.size(db);
    // A size-1 dim contracted with a longer one broadcasts: the longer one is summed right away.
    if (size_b == 1) ta = ta.sum({da}, true);
    else if (size_a == 1) tb = tb.sum({db}, true);
    else
      GD_CHECK(size_a == size_b, fmt::format("contracted dimensions need to match, but first has size {} in dim {} and "
                                             "second has size {} in dim {}",
                                             size_a, dims_a[i], size_b, dims_b[i]));
    wrapped_a.push_back(da);
    wrapped_b.push_back(db);
  }
  auto contracted_flags = [](const DimVector& dims, int64_t ndim) {
    std::vector<bool> flags(static_cast<size_t>(ndim), false);
    for (int64_t d : dims) {
      GD_CHECK(!flags[static_cast<size_t>(d)], fmt::format("dim {} appears multiple times in the list of dims", d));
      flags[static_cast<size_t>(d)] = true;
    }
    return flags;
  };
  std::vector<bool> contracted_a = contracted_flags(wrapped_a, a.dim());
  std::vector<bool> contracted_b = contracted_flags(wrapped_b, b.dim());

  DimVector perm_a, perm_b, out_sizes;
  int64_t rows = 1, cols = 1, inner_size = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!contracted_a[static_cast<size_t>(d)]) {
      perm_a.push_back(d);
      out_sizes.push_back(ta.size(d));
      rows *= ta.size(d);
    }
  for (int64_t d : wrapped_a) {
    perm_a.push_back(d);
    inner_size *= ta.size(d);
  }
  for (int64_t d : wrapped_b) perm_b.push_back(d);
  for (int64_t d = 0; d < b.dim(); ++d)
    if (!contracted_b[static_cast<size_t>(d)]) {
      perm_b.push_back(d);
      out_sizes.push_back(tb.size(d));
      cols *= tb.size(d);
    }
  Tensor matrix_a = ta.permute(perm_a).reshape({rows, inner_size});
  Tensor matrix_b = tb.permute(perm_b).reshape({inner_size, cols});
  return mm(matrix_a, matrix_b).view(out_sizes);
}

// ---- Kronecker product ----

// With n = max(a.dim(), b.dim()) (the shorter operand gets leading 1s), a viewed
// as [a0, 1, a1, 1, ...] times b viewed as [1, b0, 1, b1, ...] is the contiguous
// [a0, b0, a1, b1, ...], which is the result viewed as [a0*b0, a1*b1, ...].
// PyTorch forms that product with a broadcast multiply; here it is a matmul of the
// same views (a batch of rank-1 GEMMs: [a_last, 1] @ [1, b_last] over the batch
// [a0, b0, ...]), because matmul's backward then contracts the gradient with the
// other operand as batched GEMVs that read it in place, where the multiply's
// backward materializes gradient-sized products and reduces them over strided
// dims: measured on [64, 64] kron [32, 32] float32, one thread, the forward is 2.6x
// faster (0.8 vs 2.1 ms) and the two gradients 6x (1.6 vs 10 ms). kron stays a
// composite. Mixed dtypes (promotion) and dtypes without a GEMM use the multiply.
Tensor kron(const Tensor& a, const Tensor& b) {
  check_elementwise_product(a, b, "kron");
  const int64_t n = std::max(a.dim(), b.dim());
  if (n == 0) return a * b;
  const int64_t pad_a = n - a.dim(), pad_b = n - b.dim();
  DimVector a_shape, b_shape, out_shape;
  for (int64_t i = 0; i < n; ++i) {
    int64_t size_a = i >= pad_a ? a.size(i - pad_a) : 1, size_b = i >= pad_b ? b.size(i - pad_b) : 1;
    a_shape.push_back(size_a);
    a_shape.push_back(1);
    b_shape.push_back(1);
    b_shape.push_back(size_b);
    out_shape.push_back(size_a * size_b);
  }
  Tensor a_view = a.reshape(a_shape), b_view = b.reshape(b_shape);
  const ScalarType t = a.dtype();
  const bool has_gemm = t == kFloat32 || t == kFloat64 || t == kInt64 || t == kInt32 || t == kUInt8;
  Tensor product = has_gemm && b.dtype() == t ? matmul(a_view, b_view) : a_view * b_view;
  return product.view(out_shape);
}

// ---- cross product ----

// torch.cross of PyTorch 1.13: without `dim`, the first dimension of size 3 in
// `a`'s shape (PyTorch's deprecated default, kept for compatibility; pass dim to
// get torch.linalg.cross's behaviour, whose default is -1). Batch dims broadcast.
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  if (!dim) {
    for (int64_t d = 0; d < a.dim() && !dim; ++d)
      if (a.size(d) == 3) dim = d;
    GD_CHECK(dim.has_value(), "no dimension of size 3 in input");
  }
  GD_CHECK(a.dim() == b.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = wrap_dim(*dim, a.dim());
  GD_CHECK(a.size(d) == 3 && b.size(d) == 3,
           fmt::format("linalg.cross: inputs dimension {} must have length 3. Got {} and {}", *dim, a.size(d),
                       b.size(d)));
  (void)broadcast_shapes(a.sizes(), b.sizes());  // PyTorch's message for batch dims that do not broadcast
  check_same_dtype(a, b, "cross");
  check_same_device(a, b, "cross");
  auto at = [d](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  Tensor a0 = at(a, 0), a1 = at(a, 1), a2 = at(a, 2), b0 = at(b, 0), b1 = at(b, 1), b2 = at(b, 2);
  return cat({a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0}, d);
}

// ---- pairwise distances ----

// x1 [B..., P, M] and x2 [B..., R, M] (batch dims broadcast) give [B..., P, R]:
// the p-norm of each row difference. p = 2 with more than 25 rows on either side
// goes through one GEMM (PyTorch's use_mm_for_euclid_dist_if_necessary); every
// other case reduces the [B..., P, R, M] differences with norm, whose backward
// gives PyTorch's cdist gradients (0 where a difference or distance is 0).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  GD_CHECK(x1.dim() >= 2, fmt::format("cdist only supports at least 2D tensors, X1 got: {}D", x1.dim()));
  GD_CHECK(x2.dim() >= 2, fmt::format("cdist only supports at least 2D tensors, X2 got: {}D", x2.dim()));
  GD_CHECK(x1.size(-1) == x2.size(-1), fmt::format("X1 and X2 must have the same number of columns. X1: {} X2: {}",
                                                   x1.size(-1), x2.size(-1)));
  GD_CHECK(x1.is_floating_point(),
           fmt::format("cdist only supports floating-point dtypes, X1 got: {}", c10_type_name(x1.dtype())));
  GD_CHECK(x2.is_floating_point(),
           fmt::format("cdist only supports floating-point dtypes, X2 got: {}", c10_type_name(x2.dtype())));
  GD_CHECK(p >= 0, "cdist only supports non-negative p values");
  check_same_dtype(x1, x2, "cdist");
  check_same_device(x1, x2, "cdist");
  IntArrayRef s1 = x1.sizes(), s2 = x2.sizes();
  (void)broadcast_shapes(IntArrayRef(s1.data(), s1.size() - 2), IntArrayRef(s2.data(), s2.size() - 2));
  if (p == 2 && (x1.size(-2) > 25 || x2.size(-2) > 25)) return euclidean_dist_via_gemm(x1, x2);
  return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, {-1});
}

// ---- cartesian product ----

// Rows of every combination, the last tensor varying fastest: the flattened
// "ij" meshgrid stacked as columns.
Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors)
    GD_CHECK(t.dim() == 1, fmt::format("Expect a 1D vector, but got shape {}", shape_to_string(t.sizes())));
  GD_CHECK(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  if (tensors.size() == 1) return tensors[0];
  DimVector grid;
  for (const Tensor& t : tensors) {
    GD_CHECK(t.dtype() == tensors[0].dtype(), "meshgrid expects all tensors to have the same dtype");
    GD_CHECK(t.device() == tensors[0].device(), "meshgrid expects all tensors to have the same device");
    grid.push_back(t.size(0));
  }
  std::vector<Tensor> columns;
  for (size_t i = 0; i < tensors.size(); ++i) {
    DimVector shape(grid.size(), 1);
    shape[i] = grid[i];
    columns.push_back(tensors[i].view(shape).expand(grid).reshape({-1}));
  }
  return stack(columns, 1);
}

// ---- methods ----
Tensor Tensor::outer(const Tensor& vec2) const { return gradiens::outer(*this, vec2); }
Tensor Tensor::inner(const Tensor& other) const { return gradiens::inner(*this, other); }
Tensor Tensor::vdot(const Tensor& other) const { return gradiens::vdot(*this, other); }
Tensor Tensor::kron(const Tensor& other) const { return gradiens::kron(*this, other); }
Tensor Tensor::cross(const Tensor& other, std::optional<int64_t> dim) const {
  return gradiens::cross(*this, other, dim);
}

}  // namespace gradiens
