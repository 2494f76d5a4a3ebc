// Copies and conversions: to(dtype/device), contiguous, clone, copy_, fill_,
// zero_, and the in-place rules of Note [In-place ops and autograd].
#include <fmt/format.h>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"

namespace gradiens {

void copy_data(const Tensor& dst, const Tensor& src_in) {
  check_same_device(dst, src_in, "copy_");
  DimVector shape = broadcast_shapes(dst.sizes(), src_in.sizes());
  GD_CHECK(IntArrayRef(shape) == dst.sizes(),
           fmt::format("output with shape {} doesn't match the broadcast shape {}", shape_to_string(dst.sizes()),
                       shape_to_string(shape)));
  check_no_internal_overlap(dst);
  Tensor src = copy_if_overlapping(src_in, dst);
  auto iter = make_iterator(dst, {src});
  dispatch_all(dst.dtype(), "copy_", [&]<class D>() {
    dispatch_all(src.dtype(), "copy_", [&]<class S>() {
      kernels::cpu::elementwise_kernel<D, S>(iter, [](S v) { return static_cast<D>(v); });
    });
  });
}

bool check_inplace(const Tensor& self, std::initializer_list<Tensor> operands, std::string_view op) {
  if (!GradMode::is_enabled()) return false;
  bool any = self.requires_grad();
  for (const Tensor& t : operands) any = any || (t.defined() && t.requires_grad());
  if (!any) return false;
  GD_CHECK(!(self.is_leaf() && self.requires_grad()),
           "a leaf Variable that requires grad is being used in an in-place operation.");
  const TensorImpl& impl = *self.impl();
  GD_CHECK(!impl.is_view,
           fmt::format("{}: in-place operation on a view of a tensor that is part of an autograd graph is not "
                       "supported by gradiens; apply it to the base tensor, or clone() the view first",
                       op));
  return true;
}

Tensor& commit_inplace(Tensor& self, const Tensor& result, bool record) {
  {
    NoGradGuard no_grad;
    copy_data(self, result);
  }
  self.bump_version();
  if (record) {
    TensorImpl& impl = *self.impl();
    impl.grad_fn = result.grad_fn();
    impl.output_nr = result.output_nr();
    impl.requires_grad = result.requires_grad();
    if (impl.retains_grad) {
      // .grad keeps meaning the gradient of the current value, as in PyTorch.
      impl.retains_grad = false;
      self.retain_grad();
    }
  }
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
};

struct Clone {
  static constexpr std::string_view name = "CloneBackward0";
  static Tensor forward(Ctx&, const Tensor& x) {
    Tensor out = empty(x.sizes(), x.options());
    copy_data(out, x);
    return out;
  }
  static GradList backward(Ctx&, const Tensor& g) { return {g}; }
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

Tensor Tensor::to(Device device, bool copy) const {
  GD_CHECK(device.is_cpu(), "gradiens was built without CUDA support: cannot move a tensor to " + device.str());
  return copy ? clone() : *this;
}

Tensor Tensor::to(const TensorOptions& options, bool copy) const {
  Tensor t = options.has_device() ? to(options.device(), copy) : *this;
  if (options.has_dtype()) t = t.to(options.dtype(), copy && !options.has_device());
  return t;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }
Tensor Tensor::clone() const { return apply<Clone>(*this); }

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
  dispatch_all(dtype(), "fill_", [&]<class T>() {
    T v = value.to<T>();
    auto iter = make_iterator(*this, {});
    kernels::cpu::elementwise_kernel<T>(iter, [v]() { return v; });
  });
  bump_version();
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

}  // namespace gradiens
