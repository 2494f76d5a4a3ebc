// The free-function forms of the ops (gradiens::exp(x), gradiens::matmul(a, b),
// ...), the operators, and the factories. Each is defined beside its op in
// engine/ops/<family>.cpp.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "engine/tensor.h"

namespace gradiens {

// ---- factories (engine/ops/factories.cpp, engine/ops/random.cpp) ----
Tensor empty(IntArrayRef sizes, const TensorOptions& options = {});
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {});
Tensor ones(IntArrayRef sizes, const TensorOptions& options = {});
Tensor full(IntArrayRef sizes, Scalar value, const TensorOptions& options = {});
Tensor eye(int64_t n, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});
Tensor arange(Scalar end, const TensorOptions& options = {});
Tensor arange(Scalar start, Scalar end, Scalar step = 1, const TensorOptions& options = {});
Tensor arange(Scalar start, Scalar end, const TensorOptions& options);
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options = {});
Tensor scalar_tensor(Scalar value, const TensorOptions& options = {});
Tensor empty_like(const Tensor& t, const TensorOptions& options = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& options = {});
Tensor ones_like(const Tensor& t, const TensorOptions& options = {});
Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& options = {});
// Wraps caller-owned memory (no copy); `deleter`, if given, runs when the last tensor goes.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter,
                 const TensorOptions& options = {});

class Generator;
Tensor rand(IntArrayRef sizes, const TensorOptions& options = {});
Tensor rand(IntArrayRef sizes, Generator& generator, const TensorOptions& options = {});
Tensor randn(IntArrayRef sizes, const TensorOptions& options = {});
Tensor randn(IntArrayRef sizes, Generator& generator, const TensorOptions& options = {});
Tensor rand_like(const Tensor& t, const TensorOptions& options = {});
Tensor randn_like(const Tensor& t, const TensorOptions& options = {});
// Integers uniform in [low, high) (low = 0 when not given), shaped like t, of t's dtype unless options say.
Tensor randint_like(const Tensor& t, int64_t high, const TensorOptions& options = {});
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, const TensorOptions& options = {});

// ---- elementwise (engine/ops/binary.cpp, engine/ops/unary.cpp) ----
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
// multiply is mul's alias, as in PyTorch.
Tensor multiply(const Tensor& a, const Tensor& b);
Tensor multiply(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, Scalar b);
// ---- out= forms (engine/ops/out_variants.cpp): the result written into `out`
// (resized to it), as libtorch's *_out; they record no history, and refuse an
// input that requires grad while grad mode is on, as libtorch.
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& base, const Tensor& exponent);
Tensor pow(const Tensor& base, Scalar exponent);
Tensor pow(Scalar base, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
// libtorch's max(a, b) / min(a, b): maximum / minimum.
Tensor max(const Tensor& a, const Tensor& b);
Tensor min(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp_min(const Tensor& x, Scalar min);
Tensor clamp_max(const Tensor& x, Scalar max);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, Scalar a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, Scalar b);
// Both branches numbers: the result's dtype is theirs (the default dtype for
// floating ones, int64 for integers, bool for two bools), as torch.where.
Tensor where(const Tensor& condition, Scalar a, Scalar b);

Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, Scalar b);
Tensor logical_not(const Tensor& x);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);

Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor reciprocal(const Tensor& x);
// Rounding to integers (floating dtypes; an integer tensor comes back as a
// copy); their gradient is zero. round halves to even; round(x, decimals)
// rounds to that many decimal places (negative: to tens, hundreds, ...).
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor round(const Tensor& x, int64_t decimals);
Tensor trunc(const Tensor& x);
// x - trunc(x), the fractional part with x's sign; its gradient is the identity.
Tensor frac(const Tensor& x);
Tensor square(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x, Scalar beta = 1, Scalar threshold = 20);
Tensor erf(const Tensor& x);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
// Fused backward kernels, each an op with its own backward (STYLE.md habit 3).
Tensor tanh_backward(const Tensor& grad, const Tensor& y);     // grad * (1 - y^2)
Tensor scaled_product(const Tensor& a, const Tensor& b, const Tensor& c, double scale);  // scale * a * b * c
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y);  // grad * y * (1 - y)
Tensor threshold_backward(const Tensor& grad, const Tensor& self, Scalar threshold);  // self <= threshold ? 0 : grad

// ---- reductions (engine/ops/reduce.cpp) ----
Tensor sum(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& x);
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& x);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& x, std::optional<std::vector<int64_t>> dims = std::nullopt, double correction = 1,
           bool keepdim = false);
Tensor std(const Tensor& x, std::optional<std::vector<int64_t>> dims = std::nullopt, double correction = 1,
           bool keepdim = false);
// libtorch's spellings (Tensor::var(bool), Tensor::var(dim) over one integer dim, and
// Tensor::var(dims, unbiased, keepdim)).
Tensor var(const Tensor& x, bool unbiased);
Tensor std(const Tensor& x, bool unbiased);
template <class Int>
  requires(std::integral<Int> && !std::same_as<Int, bool>)
Tensor var(const Tensor& x, Int dim, bool unbiased = true, bool keepdim = false) {
  return x.var(dim, unbiased, keepdim);
}
template <class Int>
  requires(std::integral<Int> && !std::same_as<Int, bool>)
Tensor std(const Tensor& x, Int dim, bool unbiased = true, bool keepdim = false) {
  return x.std(dim, unbiased, keepdim);
}
template <class Bool>
  requires std::same_as<Bool, bool>
Tensor var(const Tensor& x, IntArrayRef dims, Bool unbiased, bool keepdim = false) {
  return x.var(dims, unbiased, keepdim);
}
template <class Bool>
  requires std::same_as<Bool, bool>
Tensor std(const Tensor& x, IntArrayRef dims, Bool unbiased, bool keepdim = false) {
  return x.std(dims, unbiased, keepdim);
}
// (var, mean) and (std, mean) over the same dims, as PyTorch's var_mean / std_mean.
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, std::optional<std::vector<int64_t>> dims = std::nullopt,
                                    double correction = 1, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, std::optional<std::vector<int64_t>> dims = std::nullopt,
                                    double correction = 1, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, bool unbiased);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, bool unbiased);
template <class Int>
  requires(std::integral<Int> && !std::same_as<Int, bool>)
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, Int dim, bool unbiased = true, bool keepdim = false) {
  return var_mean(x, std::vector<int64_t>{static_cast<int64_t>(dim)}, unbiased ? 1.0 : 0.0, keepdim);
}
template <class Int>
  requires(std::integral<Int> && !std::same_as<Int, bool>)
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, Int dim, bool unbiased = true, bool keepdim = false) {
  return std_mean(x, std::vector<int64_t>{static_cast<int64_t>(dim)}, unbiased ? 1.0 : 0.0, keepdim);
}
template <class Bool>
  requires std::same_as<Bool, bool>
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dims, Bool unbiased, bool keepdim = false) {
  return var_mean(x, std::optional<std::vector<int64_t>>(dims.vec()), unbiased ? 1.0 : 0.0, keepdim);
}
template <class Bool>
  requires std::same_as<Bool, bool>
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dims, Bool unbiased, bool keepdim = false) {
  return std_mean(x, std::optional<std::vector<int64_t>>(dims.vec()), unbiased ? 1.0 : 0.0, keepdim);
}
Tensor norm(const Tensor& x, Scalar p = 2);
Tensor norm(const Tensor& x, Scalar p, IntArrayRef dims, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
// Sums `x` down to `sizes` (the reverse of broadcasting): what backward does for
// a broadcast input.
Tensor sum_to(const Tensor& x, IntArrayRef sizes);

// ---- products (engine/ops/linalg.cpp) ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
// beta * self + alpha * (mat1 @ mat2), self broadcast to the product's shape.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1);
// relu(addmm(...)), or gelu(addmm(...), "tanh") with use_gelu (at::_addmm_activation).
Tensor _addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1,
                         Scalar alpha = 1, bool use_gelu = false);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& a, const Tensor& v);
Tensor dot(const Tensor& a, const Tensor& b);

// A copy of x with its own memory (Tensor::clone, engine/ops/copy.cpp).
inline Tensor clone(const Tensor& x, MemoryFormat memory_format = MemoryFormat::Preserve) {
  return x.clone(memory_format);
}

// ---- shape (engine/ops/shape.cpp) ----
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor reshape(const Tensor& x, IntArrayRef sizes);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& x, IntArrayRef dims);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// The sum of a matrix's diagonal (integers sum to int64).
Tensor trace(const Tensor& x);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);
Tensor as_strided(const Tensor& x, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset = std::nullopt);
// libtorch's private view op behind reshape: as_strided at x's own storage offset.
Tensor _reshape_alias(const Tensor& x, IntArrayRef sizes, IntArrayRef strides);

// ---- indexing along a dim (engine/ops/indexing.cpp) ----
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);

// ---- more products (engine/ops/products.cpp, engine/ops/einsum.cpp) ----
Tensor outer(const Tensor& a, const Tensor& b);
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, Scalar beta = 1, Scalar alpha = 1);
Tensor inner(const Tensor& a, const Tensor& b);
Tensor vdot(const Tensor& a, const Tensor& b);
Tensor kron(const Tensor& a, const Tensor& b);
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors);
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = std::nullopt);
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
Tensor cartesian_prod(const std::vector<Tensor>& tensors);

// ---- advanced indexing (engine/ops/advanced_indexing.cpp) ----
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, Scalar value);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1);
Tensor masked_select(const Tensor& x, const Tensor& mask);
Tensor nonzero(const Tensor& x);
// ATen's index / index_put_: one optional index tensor per leading dim (an empty
// one takes the whole dim, as a Slice()), x.index({...}) with tensors only.
Tensor index(const Tensor& x, const std::vector<std::optional<Tensor>>& indices);
Tensor& index_put_(Tensor& x, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false);
// where(condition) is nonzero(condition) as one index tensor per dimension.
std::vector<Tensor> where(const Tensor& condition);

// ---- index_fill/index_copy, scatter_reduce, unique (engine/ops/index_fill_copy.cpp,
// scatter_reduce.cpp, unique.cpp) ----
// The slices of x at `index` (int64, 0-d or 1-d; negative counts from the end) along dim set to value.
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, Scalar value);
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value);  // value 0-dim
// The slices of x at `index` along dim replaced by source's slices, in index order.
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
// scatter with reduce "sum", "prod", "mean", "amax" or "amin"; without include_self the
// scattered-to elements of x do not take part.
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self = true);
// index_reduce (engine/ops/index_reduce.cpp): source's slices along dim reduced ("prod", "mean",
// "amax" or "amin") into x's slices at `index` (int32/int64, 0-d or 1-d); without include_self
// the reduced-into slices of x do not take part.
Tensor index_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self = true);
// The distinct values of x, sorted (sorted=false sorts too, as PyTorch's CUDA
// backend does), with the int64 inverse (x's shape: each element's place in
// the values) and the counts when asked for, else empty tensors.
std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted = true, bool return_inverse = false);
std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted = true, bool return_inverse = false,
                                            bool return_counts = false);
// torch.unique's three results (_unique2, or unique_dim when dim is given).
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false, std::optional<int64_t> dim = std::nullopt);
// The distinct slices along dim, in lexicographic order.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, int64_t dim, bool sorted = true,
                                              bool return_inverse = false, bool return_counts = false);
// Each run of equal consecutive values (or slices along dim) kept once.
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);

// ---- order, cumulative and shape-repeating ops (engine/ops/ordering.cpp) ----
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt);
// repeats [n] alone: each index i repeated repeats[i] times ([1, 2] gives [0, 1, 1]).
Tensor repeat_interleave(const Tensor& repeats);
Tensor tile(const Tensor& x, IntArrayRef dims);
Tensor flip(const Tensor& x, IntArrayRef dims);
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims = {});
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);
Tensor median(const Tensor& x);
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor quantile(const Tensor& x, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor quantile(const Tensor& x, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor cumsum(const Tensor& x, int64_t dim);
Tensor cumprod(const Tensor& x, int64_t dim);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- comparison of whole tensors ----
bool equal(const Tensor& a, const Tensor& b);
// The truth of a one-element tensor (an Error for any other), as libtorch's is_nonzero.
bool is_nonzero(const Tensor& t);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

// ---- operators ----
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b);
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b);
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
inline Tensor operator&(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
inline Tensor operator|(const Tensor& a, const Tensor& b) { return logical_or(a, b); }
inline Tensor operator^(const Tensor& a, const Tensor& b) { return logical_xor(a, b); }
inline Tensor operator~(const Tensor& x) { return logical_not(x); }

// ---- threads ----
void set_num_threads(int n);
int get_num_threads();

}  // namespace gradiens
