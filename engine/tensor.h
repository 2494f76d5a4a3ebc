// Tensor: the cheap value handle users hold (a shared pointer to TensorImpl),
// with the metadata accessors and the method forms of the ops. Each method is
// defined beside its op in engine/ops/<family>.cpp.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "engine/scalar.h"
#include "engine/tensor_impl.h"
#include "engine/tensor_options.h"

namespace gradiens::cuda {
class Stream;
}  // namespace gradiens::cuda

namespace gradiens {

class Node;
class Tensor;

namespace indexing {
struct NoneType {};
struct EllipsisType {};
inline constexpr NoneType None{};
inline constexpr EllipsisType Ellipsis{};

// What an absent Slice bound stands for, as in libtorch: past either end.
inline constexpr int64_t INDEX_MAX = std::numeric_limits<int64_t>::max();
inline constexpr int64_t INDEX_MIN = std::numeric_limits<int64_t>::min();

// One bound of a Slice: an integer or None.
struct SliceBound {
  SliceBound(NoneType) {}
  SliceBound(std::nullopt_t) {}
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  SliceBound(I v) : value(static_cast<int64_t>(v)) {}
  SliceBound(std::optional<int64_t> v) : value(v) {}
  std::optional<int64_t> value;
};

// Python's start:stop:step; Slice() is ':'. As in libtorch, an absent step is
// 1 and an absent start / stop is 0 / INDEX_MAX (INDEX_MAX / INDEX_MIN for a
// negative step); a zero step is an Error.
class Slice {
 public:
  Slice(SliceBound start = None, SliceBound stop = None, SliceBound step = None);
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};
// "1:9223372036854775807:2", as libtorch prints a Slice.
std::ostream& operator<<(std::ostream& out, const Slice& slice);

// An element of Tensor::index({...}): an integer, a Slice, None (new axis),
// Ellipsis, a bool, or a tensor (integer indices or a boolean mask; held by its
// impl because Tensor is not complete here).
class TensorIndex {
 public:
  using Value = std::variant<int64_t, bool, Slice, NoneType, EllipsisType, std::shared_ptr<TensorImpl>>;
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  TensorIndex(I v) : value_(static_cast<int64_t>(v)) {}
  TensorIndex(bool v) : value_(v) {}
  TensorIndex(Slice s) : value_(s) {}
  TensorIndex(NoneType) : value_(None) {}
  TensorIndex(EllipsisType) : value_(Ellipsis) {}
  // "..." is Ellipsis, as in libtorch (any other string is an Error).
  TensorIndex(const char* str);
  template <class T, std::enable_if_t<std::is_same_v<T, Tensor>, int> = 0>
  TensorIndex(const T& tensor) : value_(tensor.impl_ptr()) {}
  const Value& value() const { return value_; }

  // libtorch's accessors; each getter needs its kind (a wrong one is std::bad_variant_access).
  bool is_none() const { return std::holds_alternative<NoneType>(value_); }
  bool is_ellipsis() const { return std::holds_alternative<EllipsisType>(value_); }
  bool is_integer() const { return std::holds_alternative<int64_t>(value_); }
  bool is_boolean() const { return std::holds_alternative<bool>(value_); }
  bool is_slice() const { return std::holds_alternative<Slice>(value_); }
  bool is_tensor() const { return std::holds_alternative<std::shared_ptr<TensorImpl>>(value_); }
  int64_t integer() const { return std::get<int64_t>(value_); }
  bool boolean() const { return std::get<bool>(value_); }
  const Slice& slice() const { return std::get<Slice>(value_); }
  Tensor tensor() const;  // defined below Tensor

 private:
  Value value_;
};
// As libtorch prints indices: None, ..., 0, true, 1:3:1, a tensor; a list as (None, 0).
std::ostream& operator<<(std::ostream& out, const TensorIndex& index);
std::ostream& operator<<(std::ostream& out, const std::vector<TensorIndex>& indices);
}  // namespace indexing

// A tensor hook: gets the gradient, returns a replacement or an undefined Tensor
// to leave it unchanged.
using TensorHook = std::function<Tensor(const Tensor&)>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  // Assigning to a named tensor rebinds the handle; assigning to a temporary
  // (`x[0] = y`, `x.index({0}) = 1.5`) writes into the elements it views, as libtorch.
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  Tensor& operator=(const Tensor& source) && { return copy_(source); }
  Tensor& operator=(Tensor&& source) && { return copy_(source); }
  Tensor& operator=(Scalar value) && { return fill_(value); }

  // ---- handle and metadata ----
  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  // libtorch's spelling of impl(), for its TensorImpl accessors (version_counter(), autograd_meta()).
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }

  IntArrayRef sizes() const { return checked().sizes; }
  IntArrayRef strides() const { return checked().strides; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(checked().sizes.size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return checked().numel; }
  int64_t storage_offset() const { return checked().storage_offset; }
  ScalarType scalar_type() const { return checked().dtype; }
  ScalarType dtype() const { return checked().dtype; }
  Device device() const { return checked().storage->device(); }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  size_t element_size() const { return gradiens::element_size(dtype()); }
  bool is_contiguous() const { return checked().is_contiguous; }
  // Whether the strides are those `memory_format` gives these sizes (ChannelsLast: 4-d NHWC order).
  bool is_contiguous(MemoryFormat memory_format) const;
  // ChannelsLast for a 4-d tensor whose strides are NHWC-ordered (ChannelsLast3d for
  // 5-d NDHWC), otherwise Contiguous, as PyTorch's suggest_memory_format.
  MemoryFormat suggest_memory_format() const;
  bool is_floating_point() const { return gradiens::is_floating_point(dtype()); }
  // Whether the dtype holds negative values (not bool, not uint8), as libtorch's.
  bool is_signed() const { return gradiens::is_signed(dtype()); }
  bool is_cpu() const { return device().is_cpu(); }
  // The cuda device's index, -1 for a CPU tensor (libtorch's get_device).
  int64_t get_device() const { return device().is_cuda() ? device().index() : -1; }
  bool is_cuda() const { return device().is_cuda(); }
  // Strided for dense tensors, Sparse for COO ones (engine/sparse.h).
  Layout layout() const;
  bool is_sparse() const { return layout() == Layout::Sparse; }
  const Storage& storage() const { return checked().storage; }
  std::string toString() const;  // "CPUDoubleType"-like short description: "DoubleTensor [3, 4]"

  // The buffer's address on its device (a device pointer for a cuda tensor).
  void* data_ptr() const { return checked().data(); }
  // Typed pointer; throws if T does not match the dtype.
  template <class T>
  T* data_ptr() const;
  // data_ptr() for code that reads or writes the buffer on the CPU: throws a
  // gradiens::Error instead of handing out a device pointer.
  void* cpu_data_ptr() const {
    if (!checked().storage->device().is_cpu()) throw_not_on_cpu();
    return data_ptr();
  }
  template <class T>
  T* cpu_data_ptr() const;
  // The value of a one-element tensor, converted to T.
  template <class T>
  T item() const;
  Scalar item() const;

  // ---- conversion and copies ----
  Tensor to(ScalarType dtype, bool copy = false) const;
  // libtorch's older spelling of to(dtype).
  Tensor toType(ScalarType dtype) const { return to(dtype); }
  // As in libtorch: non_blocking only orders a copy from pinned memory on the stream.
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& options, bool copy = false) const;
  // To other's device and dtype.
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }
  Tensor half() const { return to(kFloat16); }
  Tensor bfloat16() const { return to(kBFloat16); }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda() const { return to(Device(kCUDA)); }
  // A copy in page-locked host memory (needs a CUDA device), from which
  // to(kCUDA, non_blocking = true) copies without making the host wait.
  Tensor pin_memory() const;
  bool is_pinned() const;
  // The cuda tensor's memory is also used by work queued on `stream`: the
  // caching allocator reuses it only after that work, as PyTorch's record_stream.
  void record_stream(const cuda::Stream& stream) const;
  // The tensor itself when it is already contiguous in `memory_format`, else a copy that is.
  Tensor contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  // A copy; Preserve keeps the strides of a dense non-overlapping tensor (a
  // transposed or channels_last one) and makes any other row-major, as PyTorch.
  Tensor clone(MemoryFormat memory_format = MemoryFormat::Preserve) const;
  Tensor detach() const;
  // libtorch's Tensor::data(): the same storage without autograd history (detach()).
  Tensor data() const { return detach(); }
  // libtorch's names for the same: a new handle to the data, outside any graph.
  Tensor tensor_data() const { return detach(); }
  Tensor variable_data() const { return detach(); }
  Tensor& detach_();
  // Replaces this tensor's storage, geometry and dtype with new_data's, keeping
  // its identity and autograd flags (PyTorch's `param.data = ...`): how
  // Module::to converts parameters that optimizers already hold.
  void set_data(const Tensor& new_data) const;

  // ---- autograd ----
  // As in PyTorch, a view taken with grad mode off requires grad when its base
  // does (it has no grad_fn, so no gradient reaches the base through it).
  bool requires_grad() const {
    const TensorImpl& impl = checked();
    return impl.requires_grad || (impl.view.is_view && !impl.grad_fn && impl.view.base->requires_grad);
  }
  Tensor& requires_grad_(bool requires_grad = true);
  // libtorch also lets a const handle change the flag (it belongs to the shared impl).
  const Tensor& requires_grad_(bool requires_grad = true) const {
    const_cast<Tensor*>(this)->requires_grad_(requires_grad);
    return *this;
  }
  Tensor& set_requires_grad(bool requires_grad) { return requires_grad_(requires_grad); }
  // The accumulated gradient (undefined before the first backward). It shares
  // the gradient's storage, so grad().zero_() clears it. Read on a tensor that
  // is neither a leaf nor retains its grad, it warns as libtorch (it stays undefined).
  Tensor grad() const;
  // The gradient slot itself: `p.mutable_grad() = g` sets the gradient without
  // set_grad's checks, as libtorch's.
  Tensor& mutable_grad() const;
  // Replaces the gradient (an undefined tensor removes it, as set_to_none does).
  void set_grad(const Tensor& grad) const;
  bool is_leaf() const { return checked().grad_fn == nullptr; }
  // A view taken under NoGradGuard or InferenceMode whose storage was written
  // in place since raises here (Note [View creation meta]).
  const std::shared_ptr<Node>& grad_fn() const {
    const TensorImpl& impl = checked();
    if (impl.view.creation_meta != autograd::CreationMeta::DEFAULT) check_view_not_rebased();
    return impl.grad_fn;
  }
  // Whether autograd tracks this tensor as a view of another (libtorch's
  // is_view(): false for a view of an inference tensor).
  bool is_view() const { return checked().view.is_view; }
  // The tensor this view was taken from; an Error for a tensor that is no view.
  Tensor _base() const;
  uint32_t output_nr() const { return checked().output_nr; }
  void retain_grad();
  bool retains_grad() const { return checked().retains_grad; }
  // With `inputs`, gradients accumulate into those tensors only (leaves or not).
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, std::optional<std::vector<Tensor>> inputs = std::nullopt) const;
  // backward(g, retain, create, {x, y}): the inputs as a braced list, as libtorch takes them.
  void backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                std::initializer_list<Tensor> inputs) const {
    backward(gradient, retain_graph, create_graph, std::optional<std::vector<Tensor>>(std::vector<Tensor>(inputs)));
  }
  // Hooks run when this tensor's gradient is computed; returns a handle for remove_hook.
  unsigned register_hook(TensorHook hook) const;
  template <class F, std::enable_if_t<std::is_void_v<std::invoke_result_t<F, const Tensor&>>, int> = 0>
  unsigned register_hook(F&& hook) const {
    return register_hook(TensorHook([hook = std::forward<F>(hook)](const Tensor& g) {
      hook(g);
      return Tensor();
    }));
  }
  void remove_hook(unsigned handle) const;
  uint32_t _version() const {
    if (checked().is_inference) throw_no_version_counter();
    return checked().storage->version();
  }
  // Made under an InferenceMode guard (Note [Inference mode]).
  bool is_inference() const { return checked().is_inference; }
  // Marks an in-place write: bumps the version shared by every view of the storage.
  void bump_version() const { checked().storage->bump_version(); }

  // ---- views and shape (engine/ops/shape.cpp) ----
  Tensor view(IntArrayRef sizes) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape(IntArrayRef sizes) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  // Swaps two dims of this tensor itself (its sizes and strides); in the
  // autograd graph its history becomes the transpose of the old one.
  Tensor& transpose_(int64_t dim0, int64_t dim1);
  Tensor t() const;
  // The dims reversed (libtorch's T(); t() for a matrix).
  Tensor T() const;
  Tensor mT() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor trace() const;
  Tensor unfold(int64_t dimension, int64_t size, int64_t step) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset = std::nullopt) const;

  // ---- elementwise math (engine/ops/unary.cpp, engine/ops/binary.cpp) ----
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor add(Scalar other, Scalar alpha = 1) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(Scalar other, Scalar alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(Scalar other) const;
  Tensor multiply(const Tensor& other) const;
  Tensor multiply(Scalar other) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  // Same sizes and elements.
  bool equal(const Tensor& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(Scalar other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Scalar exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(Scalar min) const;
  Tensor clamp_max(Scalar max) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(Scalar other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(Scalar other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(Scalar other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(Scalar other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(Scalar other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(Scalar other) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;

  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor reciprocal() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor round(int64_t decimals) const;
  Tensor trunc() const;
  Tensor frac() const;
  Tensor square() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor gelu(std::string_view approximate = "none") const;
  Tensor silu() const;
  Tensor softplus(Scalar beta = 1, Scalar threshold = 20) const;
  Tensor erf() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;

  // ---- in-place forms (engine/ops/inplace.cpp) ----
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other, Scalar alpha = 1);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor& pow_(Scalar exponent);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& neg_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& abs_();
  Tensor& tanh_();
  Tensor& sigmoid_();
  Tensor& relu_();
  Tensor& square_();
  Tensor& floor_();
  Tensor& ceil_();
  Tensor& round_();
  Tensor& trunc_();
  Tensor& frac_();
  Tensor& zero_();
  Tensor& fill_(Scalar value);
  Tensor& copy_(const Tensor& src);
  Tensor& uniform_(double from = 0, double to = 1);
  Tensor& normal_(double mean = 0, double std = 1);
  Tensor& bernoulli_(double p = 0.5);
  // Integers drawn uniformly from [from, to) (to: one past the largest value the
  // dtype holds exactly, 2^24 for float32, 2^53 for float64), as PyTorch's random_.
  Tensor& random_(int64_t from, std::optional<int64_t> to);
  Tensor& random_(int64_t to);
  Tensor& random_();
  // Gives the tensor `sizes` (contiguous strides), keeping its storage when that
  // is large enough and growing it otherwise (the first elements keep their
  // values; new ones are uninitialized), as PyTorch's resize_.
  Tensor& resize_(IntArrayRef sizes, std::optional<MemoryFormat> memory_format = std::nullopt);
  Tensor& resize_as_(const Tensor& other) { return resize_(other.sizes()); }

  // ---- reductions (engine/ops/reduce.cpp) ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(std::optional<std::vector<int64_t>> dims = std::nullopt, double correction = 1, bool keepdim = false) const;
  Tensor std(std::optional<std::vector<int64_t>> dims = std::nullopt, double correction = 1, bool keepdim = false) const;
  // libtorch's spellings: over every element with a bool `unbiased`, over one
  // integer dim (x.std(0) is over dim 0, as libtorch since gh-40287), or over
  // dims with a bool `unbiased` (a number there is the correction of the
  // overloads above).
  Tensor var(bool unbiased) const;
  Tensor std(bool unbiased) const;
  template <class Int>
    requires(std::integral<Int> && !std::same_as<Int, bool>)
  Tensor var(Int dim, bool unbiased = true, bool keepdim = false) const {
    return var(std::vector<int64_t>{static_cast<int64_t>(dim)}, unbiased ? 1.0 : 0.0, keepdim);
  }
  template <class Int>
    requires(std::integral<Int> && !std::same_as<Int, bool>)
  Tensor std(Int dim, bool unbiased = true, bool keepdim = false) const {
    return std(std::vector<int64_t>{static_cast<int64_t>(dim)}, unbiased ? 1.0 : 0.0, keepdim);
  }
  template <class Bool>
    requires std::same_as<Bool, bool>
  Tensor var(IntArrayRef dims, Bool unbiased, bool keepdim = false) const {
    return var(std::optional<std::vector<int64_t>>(dims.vec()), unbiased ? 1.0 : 0.0, keepdim);
  }
  template <class Bool>
    requires std::same_as<Bool, bool>
  Tensor std(IntArrayRef dims, Bool unbiased, bool keepdim = false) const {
    return std(std::optional<std::vector<int64_t>>(dims.vec()), unbiased ? 1.0 : 0.0, keepdim);
  }
  Tensor norm(Scalar p = 2) const;
  Tensor norm(Scalar p, IntArrayRef dims, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;

  // ---- products (engine/ops/linalg.cpp) ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1) const;
  Tensor bmm(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;
  Tensor dot(const Tensor& other) const;

  // ---- indexing along a dim (engine/ops/indexing.cpp) ----
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;  // condition ? *this : other
  Tensor masked_fill(const Tensor& mask, Scalar value) const;

  // ---- more products (engine/ops/products.cpp) ----
  Tensor outer(const Tensor& vec2) const;
  Tensor inner(const Tensor& other) const;
  Tensor vdot(const Tensor& other) const;
  Tensor kron(const Tensor& other) const;
  Tensor cross(const Tensor& other, std::optional<int64_t> dim = std::nullopt) const;

  // ---- advanced indexing (engine/ops/advanced_indexing.cpp) ----
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, Scalar value) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& values, bool accumulate = false);
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value);
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  // ---- index_fill/index_copy, scatter_reduce (engine/ops/index_fill_copy.cpp, scatter_reduce.cpp) ----
  Tensor index_fill(int64_t dim, const Tensor& index, Scalar value) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Tensor& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, Scalar value);
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Tensor& value);
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source);
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true) const;
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                          bool include_self = true);
  // engine/ops/index_reduce.cpp
  Tensor index_reduce(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                      bool include_self = true) const;
  Tensor& index_reduce_(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                        bool include_self = true);

  // ---- order, cumulative and shape-repeating ops (engine/ops/ordering.cpp) ----
  Tensor repeat(IntArrayRef repeats) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor quantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor quantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor cumsum(int64_t dim) const;
  Tensor cumprod(int64_t dim) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  // ---- compound assignment ----
  Tensor& operator+=(const Tensor& other) { return add_(other); }
  Tensor& operator+=(Scalar other) { return add_(other); }
  Tensor& operator-=(const Tensor& other) { return sub_(other); }
  Tensor& operator-=(Scalar other) { return sub_(other); }
  Tensor& operator*=(const Tensor& other) { return mul_(other); }
  Tensor& operator*=(Scalar other) { return mul_(other); }
  Tensor& operator/=(const Tensor& other) { return div_(other); }
  Tensor& operator/=(Scalar other) { return div_(other); }
  Tensor operator[](int64_t index) const { return select(0, index); }

 private:
  [[noreturn]] void throw_not_on_cpu() const;
  [[noreturn]] static void throw_no_version_counter();
  void check_view_not_rebased() const;
  TensorImpl& checked() const {
    if (!impl_) throw_undefined();
    return *impl_;
  }
  [[noreturn]] static void throw_undefined();

  std::shared_ptr<TensorImpl> impl_;
};

// Prints like PyTorch: tensor([[1., 2.], [3., 4.]], dtype=float64, requires_grad=True)
std::ostream& operator<<(std::ostream& out, const Tensor& tensor);

inline Tensor indexing::TensorIndex::tensor() const { return Tensor(std::get<std::shared_ptr<TensorImpl>>(value_)); }

}  // namespace gradiens
