// Copies and conversions: to(dtype/device), contiguous, clone, copy_, fill_,
// zero_, and the in-place rules of Note [In-place ops and autograd].
#include <fmt/format.h>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/cuda.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "kernels/cuda/runtime.h"

namespace gradiens {

void copy_data(const Tensor& dst, const Tensor& src_in, bool non_blocking) {
  DimVector shape = broadcast_shapes(dst.sizes(), src_in.sizes());
  GD_CHECK(IntArrayRef(shape) == dst.sizes(),
           fmt::format("output with shape {} doesn't match the broadcast shape {}", shape_to_string(dst.sizes()),
                       shape_to_string(shape)));
  check_no_internal_overlap(dst);
  if (dst.device() != src_in.device()) {
    if (dst.device().is_cuda() && src_in.device().is_cpu() && src_in.numel() == 1)
      cuda_seam::fill(dst, src_in.item());  // a scalar: filled on the device, no transfer
    else cuda_seam::copy_across_devices(dst, src_in, non_blocking);
    return;
  }
  cuda_seam::copy_op(dst, copy_if_overlapping(src_in, dst));
}

namespace {

// Under forward AD an in-place op on a dual tensor (or with a dual operand) is
// computed out of place and written back, so the tangent follows the values.
// A view's new tangent would also have to be written into its base's tangent;
// that case is refused rather than leaving the base's tangent stale.
bool check_inplace_dual(const Tensor& self, std::initializer_list<Tensor> operands, std::string_view op) {
  if (!detail::forward_ad_enabled()) return false;
  bool any = detail::has_tangent(self);
  for (const Tensor& t : operands) any = any || detail::has_tangent(t);
  if (!any) return false;
  const TensorImpl& impl = *self.impl();
  GD_CHECK(!(impl.view.is_view && detail::has_tangent(Tensor(impl.view.base))),
           fmt::format("{}: in-place operation on a view of a dual tensor is not supported by gradiens's forward-mode "
                       "AD; apply it to the base tensor, or clone() the view first",
                       op));
  return true;
}

}  // namespace

bool check_inplace(const Tensor& self, std::initializer_list<Tensor> operands, std::string_view op) {
  GD_CHECK(!self.is_inference() || InferenceMode::is_enabled(),
           "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
           "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
  const bool dual = check_inplace_dual(self, operands, op);
  if (!GradMode::is_enabled()) return dual;
  bool any = self.requires_grad();
  for (const Tensor& t : operands) any = any || (t.defined() && t.requires_grad());
  if (!any) return dual;
  const TensorImpl& impl = *self.impl();
  // libtorch's order: the view's own errors, then the leaf's.
  detail::check_inplace_on_view(impl);
  GD_CHECK(!(self.is_leaf() && self.requires_grad()),
           "a leaf Variable that requires grad is being used in an in-place operation.");
  GD_CHECK(!impl.view.is_view || Tensor(impl.view.base).is_contiguous(),
           fmt::format("{}: in-place operation on a view of a non-contiguous tensor that is part of an autograd graph "
                       "is not supported by gradiens; apply it to the base tensor, or clone() the view first",
                       op));
  return true;
}

namespace {

// The old base with the region `relative` (a geometry in the base's contiguous
// layout) replaced by values: the base's history after an in-place op through
// a view (Note [In-place ops and autograd]). Forward writes the values into the
// base's region itself and returns the base (apply gives the result a fresh
// alias that carries the node), so only the region is written. The backward is
// made of differentiable ops, so create_graph reaches through it.
struct CopySlices {
  static constexpr std::string_view name = "CopySlices";
  // ctx.shape holds the region's sizes, ctx.ints its strides and then its offset.
  static Tensor forward(Ctx& ctx, const Tensor& base, const Tensor& values, DimVector sizes, DimVector strides_offset) {
    ctx.shape = std::move(sizes);
    ctx.ints = std::move(strides_offset);
    copy_data(region(ctx, base), values);
    return base;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    Tensor outside_region = ones(g.sizes(), g.options().requires_grad(false));
    {
      NoGradGuard no_grad;
      region(ctx, outside_region).zero_();
    }
    return {g * outside_region, region(ctx, g.contiguous())};
  }
  // The region of a contiguous tensor of the base's shape.
  static Tensor region(const Ctx& ctx, const Tensor& dense) {
    IntArrayRef strides(ctx.ints.data(), ctx.ints.size() - 1);
    return dense.as_strided(ctx.shape, strides, dense.storage_offset() + ctx.ints.back());
  }
};

// Makes result's history self's; .grad keeps meaning the gradient of the
// current value, as in PyTorch.
void adopt_history(Tensor self, const Tensor& result) {
  TensorImpl& impl = *self.impl();
  impl.grad_fn = result.grad_fn();
  impl.output_nr = result.output_nr();
  impl.requires_grad = result.requires_grad();
  if (impl.retains_grad) {
    impl.retains_grad = false;
    self.retain_grad();
  }
}

}  // namespace

Tensor& commit_inplace(Tensor& self, const Tensor& result, bool record) {
  const TensorImpl& impl = *self.impl();
  if (record && impl.view.is_view) {
    // The base takes the CopySlices node, which writes the region; the view's
    // own history becomes the op's and is rebuilt from the base's newer one on
    // first use (Note [Views of a rebased base]).
    Tensor base(impl.view.base);
    Tensor rebased;
    {
      AutoGradMode enable(true);
      DimVector strides_offset(self.strides().begin(), self.strides().end());
      strides_offset.push_back(self.storage_offset() - base.storage_offset());
      rebased = apply<CopySlices>(base, result, self.sizes().dims(), strides_offset);
    }
    self.bump_version();  // the view and its base share the version counter
    adopt_history(base, rebased);
    adopt_history(self, result);
    return self;
  }
  {
    NoGradGuard no_grad;
    copy_data(self, result);
  }
  self.bump_version();
  if (detail::forward_ad_enabled() && (detail::has_tangent(self) || detail::has_tangent(result))) {
    Tensor tangent = detail::tangent_of(result);
    detail::set_tangent(self, tangent.defined() ? tangent : zeros_like(self));
  }
  if (record) adopt_history(self, result);
  return self;
}

namespace {

struct ToDtype {
  static constexpr std::string_view name = "ToCopyBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, ScalarType dtype) {
    ctx.dtype = x.dtype();
    Tensor out = empty(x.sizes(), TensorOptions().dtype(dtype).device(x.device()));
    copy_data(out, x);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g.to(ctx.dtype)}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, ScalarType dtype) { return t[0].to(dtype); }
};

// A copy on another device; the gradient goes back to the source's device.
struct ToDevice {
  static constexpr std::string_view name = "ToCopyBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, Device device, bool non_blocking) {
    ctx.ints = {static_cast<int64_t>(x.device().type()), x.device().index()};
    Tensor out = empty(x.sizes(), TensorOptions().dtype(x.dtype()).device(device));
    copy_data(out, x, non_blocking);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {g.to(Device(static_cast<DeviceType>(ctx.ints[0]), static_cast<int>(ctx.ints[1])))};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, Device device, bool non_blocking) {
    return t[0].to(device, non_blocking);
  }
};

// The copy's layout follows empty_like (Preserve keeps a dense input's strides);
// the gradient passes through in whatever layout it arrives.
struct Clone {
  static constexpr std::string_view name = "CloneBackward0";
  static Tensor forward(Ctx&, const Tensor& x, MemoryFormat memory_format) {
    Tensor out = empty_like(x, TensorOptions().memory_format(memory_format));
    copy_data(out, x);
    return out;
  }
  static GradList backward(Ctx&, const Tensor& g) { return {g}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, MemoryFormat memory_format) {
    return t[0].clone(memory_format);
  }
};

// fill_ on a tensor with history: the old values no longer reach the result.
struct Fill {
  static constexpr std::string_view name = "FillBackward0";
  static Tensor forward(Ctx&, const Tensor& self, Scalar value) { return full(self.sizes(), value, self.options()); }
  static GradList backward(Ctx&, const Tensor& g) { return {zeros_like(g)}; }
};

// copy_(src) recorded out of place: src broadcast to self's shape and dtype.
struct CopyFrom {
  static constexpr std::string_view name = "CopyBackwards";
  static Tensor forward(Ctx& ctx, const Tensor& self, const Tensor& src) {
    ctx.dtype = src.dtype();
    Tensor out = empty(self.sizes(), self.options());
    copy_data(out, src);
    return out;
  }
  // The overwritten values get a zero gradient, as in PyTorch (not none: a leaf
  // whose copy was overwritten still receives a .grad).
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {ctx.needs_input_grad(0) ? zeros_like(g) : Tensor(), g.to(ctx.dtype)};
  }
};

}  // namespace

Tensor Tensor::to(ScalarType dtype, bool copy) const {
  if (dtype == this->dtype() && !copy) return *this;
  if (dtype == this->dtype()) return clone();
  return apply<ToDtype>(*this, dtype);
}

Tensor Tensor::to(Device device, bool non_blocking, bool copy) const {
  if (device.is_cuda() && device.index() < 0) device = Device(kCUDA, kernels::cuda::current_device());
  if (device == this->device()) return copy ? clone() : *this;
  return apply<ToDevice>(*this, device, non_blocking);
}

Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy) const {
  Tensor t = to(device, non_blocking, copy);
  return t.to(dtype, copy && t.impl() == impl());
}

Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy) const {
  return to(other.device(), other.dtype(), non_blocking, copy);
}

Tensor Tensor::to(const TensorOptions& options, bool copy) const {
  // As libtorch: requires_grad(false) is accepted (the result keeps the tensor's own flag).
  GD_CHECK(!options.requires_grad(),
           "to(options) expects unset requires_grad flag, but got options.requires_grad set as true");
  Tensor t = options.has_device() ? to(options.device(), false, copy) : *this;
  if (options.has_dtype()) t = t.to(options.dtype(), copy && !options.has_device());
  return t;
}

Tensor Tensor::pin_memory() const {
  GD_CHECK(device().is_cpu(), fmt::format("cannot pin '{}' only dense CPU tensors can be pinned", toString()));
  if (is_pinned()) return *this;
  GD_CHECK(kernels::cuda::is_available(), "pin_memory: page-locked memory needs a CUDA device, and none is available");
  const size_t bytes = static_cast<size_t>(numel()) * element_size();
  void* memory = kernels::cuda::pinned_malloc(bytes);
  Tensor out = from_blob(memory, sizes(), [](void* p) { kernels::cuda::pinned_free(p); }, options());
  out.storage()->set_pinned(true);
  copy_data(out, *this);
  return out;
}

bool Tensor::is_pinned() const { return storage()->is_pinned(); }

void Tensor::record_stream(const cuda::Stream& stream) const {
  GD_CHECK(device().is_cuda(), "record_stream: the tensor is not on a cuda device");
  kernels::cuda::record_stream(storage()->data(), device().index(), stream.stream());
}

// Tensor::contiguous(memory_format) is in engine/ops/memory_format.cpp.
Tensor Tensor::clone(MemoryFormat memory_format) const { return apply<Clone>(*this, memory_format); }

Tensor& Tensor::copy_(const Tensor& src) {
  bool record = check_inplace(*this, {src}, "copy_");
  if (!record) {
    copy_data(*this, src);
    bump_version();
    return *this;
  }
  return commit_inplace(*this, apply<CopyFrom>(*this, src), true);
}

Tensor& Tensor::fill_(Scalar value) {
  // As in PyTorch, a filled non-leaf keeps requiring grad; its gradient to the old history is zero.
  if (check_inplace(*this, {}, "fill_")) return commit_inplace(*this, apply<Fill>(*this, value), true);
  check_no_internal_overlap(*this);
  cuda_seam::fill(*this, value);
  bump_version();
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

}  // namespace gradiens
