// Factories: empty, zeros, ones, full, eye, arange, linspace, scalar_tensor,
// from_blob and the *_like forms.
#include <fmt/format.h>

#include <cmath>

#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/memory_format.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "engine/ops/cuda_seam.h"
#include "kernels/factories.h"

namespace gradiens {

namespace {
Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}
TensorOptions merge(const Tensor& t, const TensorOptions& options) {
  return TensorOptions()
      .dtype(options.has_dtype() ? options.dtype() : t.dtype())
      .device(options.has_device() ? options.device() : t.device())
      .requires_grad(options.requires_grad());
}
}  // namespace

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  GD_CHECK(sizes.size() == strides.size(),
           fmt::format("empty_strided: {} sizes but {} strides", sizes.size(), strides.size()));
  checked_numel(sizes, "empty");
  int64_t extent = 0;  // highest reachable element index + 1
  bool any_zero = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) any_zero = true;
    extent += (sizes[i] - 1) * strides[i];
  }
  size_t bytes = any_zero ? 0 : static_cast<size_t>(extent + 1) * element_size(options.dtype());
  auto storage = std::make_shared<StorageImpl>(bytes, options.device());
  auto impl = std::make_shared<TensorImpl>(std::move(storage), sizes.dims(), strides.dims(), 0, options.dtype());
  return finish(Tensor(std::move(impl)), options);
}

Tensor empty(IntArrayRef sizes, const TensorOptions& options) {
  int64_t n = checked_numel(sizes, "empty");
  auto storage = std::make_shared<StorageImpl>(static_cast<size_t>(n) * element_size(options.dtype()),
                                               options.device());
  auto impl = std::make_shared<TensorImpl>(std::move(storage), sizes.dims(),
                                           contiguous_strides(sizes, options.memory_format()), 0, options.dtype());
  return finish(Tensor(std::move(impl)), options);
}

Tensor full(IntArrayRef sizes, Scalar value, const TensorOptions& options) {
  Tensor t = empty(sizes, options.requires_grad(false));
  // Written directly rather than with fill_, which would count as a first
  // in-place write: a new tensor starts at version 0, as in PyTorch.
  copy_data(t, scalar_to_tensor(value, t.dtype()));
  return finish(t, options);
}
Tensor zeros(IntArrayRef sizes, const TensorOptions& options) { return full(sizes, 0, options); }
Tensor ones(IntArrayRef sizes, const TensorOptions& options) { return full(sizes, 1, options); }

Tensor scalar_tensor(Scalar value, const TensorOptions& options) {
  TensorOptions o = options.has_dtype() ? options : options.dtype(value.default_dtype());
  return full({}, value, o);
}

Tensor eye(int64_t n, const TensorOptions& options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  GD_CHECK(n >= 0 && m >= 0, fmt::format("eye: n and m must be non-negative, got {} and {}", n, m));
  Tensor t = empty({n, m}, options.requires_grad(false));
  kernels::eye(t.dtype(), t.data_ptr(), n, m, cuda_seam::device_of(t));
  return finish(t, options);
}

Tensor arange(Scalar end, const TensorOptions& options) { return arange(0, end, 1, options); }
Tensor arange(Scalar start, Scalar end, const TensorOptions& options) { return arange(start, end, 1, options); }

Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options) {
  bool integral = start.is_integral() && end.is_integral() && step.is_integral();
  ScalarType dt = options.has_dtype() ? options.dtype() : integral ? kInt64 : get_default_dtype();
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  GD_CHECK(st != 0, "arange: step must be nonzero");
  GD_CHECK(std::isfinite(s) && std::isfinite(e), fmt::format("arange: unsupported range: {} -> {}", s, e));
  GD_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger bound inconsistent with step sign");
  int64_t n = integral ? (end.to_long() - start.to_long() + step.to_long() - (step.to_long() > 0 ? 1 : -1)) /
                             step.to_long()
                       : static_cast<int64_t>(std::ceil((e - s) / st));
  Tensor t = empty({n}, options.dtype(dt).requires_grad(false));
  const kernels::Number first = integral ? kernels::Number::of_integer(start.to_long()) : kernels::Number::of_real(s);
  const kernels::Number stride = integral ? kernels::Number::of_integer(step.to_long()) : kernels::Number::of_real(st);
  kernels::range(dt, t.data_ptr(), n, first, stride, integral, cuda_seam::device_of(t));
  return finish(t, options.dtype(dt));
}

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options) {
  GD_CHECK(steps >= 0, "linspace: number of steps must be non-negative");
  Tensor t = empty({steps}, options.requires_grad(false));
  kernels::linspace(t.dtype(), t.data_ptr(), start, end, steps, cuda_seam::device_of(t));
  return finish(t, options);
}

// The *_like layout is options' memory format, Preserve by default as in PyTorch:
// a transposed or channels_last `t` gives a result with the same strides.
Tensor empty_like(const Tensor& t, const TensorOptions& options) {
  const MemoryFormat memory_format = options.has_memory_format() ? options.memory_format() : MemoryFormat::Preserve;
  return empty_strided(t.sizes(), like_strides(t, memory_format), merge(t, options));
}
Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& options) {
  Tensor out = empty_like(t, options.requires_grad(false));
  copy_data(out, scalar_to_tensor(value, out.dtype()));  // not fill_: a new tensor starts at version 0
  return finish(out, options);
}
Tensor zeros_like(const Tensor& t, const TensorOptions& options) { return full_like(t, 0, options); }
Tensor ones_like(const Tensor& t, const TensorOptions& options) { return full_like(t, 1, options); }

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  GD_CHECK(sizes.size() == strides.size(), "from_blob: sizes and strides must have the same length");
  int64_t n = checked_numel(sizes, "from_blob");
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) extent += (sizes[i] - 1) * strides[i];
  auto storage = std::make_shared<StorageImpl>(data, static_cast<size_t>(n == 0 ? 0 : extent) * element_size(options.dtype()),
                                               options.device(), nullptr);
  auto impl = std::make_shared<TensorImpl>(std::move(storage), sizes.dims(), strides.dims(), 0, options.dtype());
  return finish(Tensor(std::move(impl)), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  return from_blob(data, sizes, contiguous_strides(sizes), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, const TensorOptions& options) {
  int64_t n = checked_numel(sizes, "from_blob");
  auto storage = std::make_shared<StorageImpl>(data, static_cast<size_t>(n) * element_size(options.dtype()),
                                               options.device(), std::move(deleter));
  auto impl = std::make_shared<TensorImpl>(std::move(storage), sizes.dims(), contiguous_strides(sizes), 0,
                                           options.dtype());
  return finish(Tensor(std::move(impl)), options);
}

}  // namespace gradiens
