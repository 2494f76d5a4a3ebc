// The engine's side of the CUDA seam (see cuda_seam.h).
#include "engine/ops/cuda_seam.h"

#include <fmt/format.h>

#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "kernels/elementwise.h"

namespace gradiens::cuda_seam {

namespace kc = kernels::cuda;


void binary_op(kernels::Binary op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha,
               std::string_view name) {
  if (b.device() != out.device()) return binary_scalar_op(op, out, a, b.item(), false, alpha, name);
  if (a.device() != out.device()) return binary_scalar_op(op, out, b, a.item(), true, alpha, name);
  kernels::binary(op, out.dtype(), buffer_of(out), buffer_of(a), buffer_of(b), out.sizes(), number_of(alpha),
                  device_of(out), name);
}

void binary_scalar_op(kernels::Binary op, const Tensor& out, const Tensor& a, const Scalar& s, bool scalar_first,
                      const Scalar& alpha, std::string_view name) {
  kernels::binary_scalar(op, out.dtype(), buffer_of(out), buffer_of(a), out.sizes(), number_of(s), scalar_first,
                         number_of(alpha), device_of(out), name);
}

// t on out's device: itself, or (a 0-dim CPU scalar) a one-element copy made there.
static Tensor on_device_of(const Tensor& t, const Tensor& out) {
  return t.device() == out.device() ? t : scalar_on(out.device(), t.item(), t.dtype());
}

void compare_op(kernels::Compare op, const Tensor& out, const Tensor& a_in, const Tensor& b_in, std::string_view name) {
  if (out.numel() == 0 && out.device().is_cuda()) return;  // no scalar copied for nothing
  Tensor a = on_device_of(a_in, out), b = on_device_of(b_in, out);
  kernels::compare(op, a.dtype(), buffer_of(out), buffer_of(a), buffer_of(b), out.sizes(), device_of(out), name);
}

void where_op(const Tensor& out, const Tensor& condition_in, const Tensor& a_in, const Tensor& b_in) {
  if (out.numel() == 0 && out.device().is_cuda()) return;  // no scalar copied for nothing
  Tensor condition = on_device_of(condition_in, out), a = on_device_of(a_in, out), b = on_device_of(b_in, out);
  kernels::where(out.dtype(), buffer_of(out), buffer_of(condition), buffer_of(a), buffer_of(b), out.sizes(),
                 device_of(out));
}

void copy_op(const Tensor& dst, const Tensor& src) {
  kernels::copy(dst.dtype(), buffer_of(dst), src.dtype(), buffer_of(src), dst.sizes(), device_of(dst));
}

kc::Strided strided(const Tensor& t, IntArrayRef shape) {
  GD_INTERNAL_ASSERT(t.device().is_cuda(), "cuda_seam::strided on a tensor that is not on a cuda device");
  kc::Strided s;
  s.data = t.data_ptr();
  DimVector strides = broadcast_strides(t, shape);
  for (size_t d = 0; d < strides.size(); ++d) s.strides[d] = strides[d];
  return s;
}

kc::StreamHandle stream_of(const Tensor& t) { return kc::current_stream(t.device().index()); }

void copy(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  kc::Shape shape = kc::shape_of(dst.sizes());
  kc::copy(dst.dtype(), strided(dst, dst.sizes()), src.dtype(), strided(src, dst.sizes()), shape, stream_of(dst));
}

void fill(const Tensor& t, const Scalar& value) {
  if (t.device().is_cuda() && !t.is_contiguous()) {
    // The device's fill kernel takes a dense buffer: a strided t copies a one-element one.
    if (t.numel() > 0) copy(t, scalar_on(t.device(), value, t.dtype()));
    return;
  }
  kernels::fill(t.dtype(), buffer_of(t), t.sizes(), number_of(value), device_of(t));
}

Tensor scalar_on(const Device& device, const Scalar& value, ScalarType dtype) {
  Tensor t = empty({}, TensorOptions().dtype(dtype).device(device));
  kc::fill(dtype, t.data_ptr(), 1, number_of(value), stream_of(t));
  return t;
}

void copy_across_devices(const Tensor& dst, const Tensor& src_in, bool non_blocking) {
  if (dst.numel() == 0) return;
  // The bytes travel as a dense buffer in src's dtype and dst's shape; a cast or
  // a layout change happens on whichever side needs it.
  Tensor src = src_in.sizes() == dst.sizes() ? src_in : src_in.expand(dst.sizes());
  const bool dense_dst = dst.is_contiguous() && dst.dtype() == src.dtype();
  if (dst.device().is_cuda()) {
    Tensor host = src.contiguous();
    Tensor staged = dense_dst ? dst : empty(dst.sizes(), TensorOptions().dtype(src.dtype()).device(dst.device()));
    kc::copy_host_to_device(staged.data_ptr(),
                            host.data_ptr(),
                            static_cast<size_t>(host.numel()) * host.element_size(), dst.device().index(),
                            non_blocking && dense_dst);
    if (!dense_dst) copy(dst, staged);
  } else {
    Tensor device_src = src.contiguous();  // a dense copy on the device when src is strided
    Tensor staged = dense_dst ? dst : empty(dst.sizes(), TensorOptions().dtype(src.dtype()));
    kc::copy_device_to_host(
        staged.data_ptr(),
        device_src.data_ptr(),
        static_cast<size_t>(device_src.numel()) * device_src.element_size(), src.device().index(), false);
    if (!dense_dst) copy_data(dst, staged);
  }
}

void binary_scalar(kc::Binary op, const Tensor& out, const Tensor& a, double scalar, bool scalar_first, double alpha) {
  if (out.numel() == 0) return;
  IntArrayRef shape = out.sizes();
  kc::binary_scalar(op, out.dtype(), strided(out, shape), strided(a, shape), kc::shape_of(shape), scalar, scalar_first,
                    alpha, stream_of(out));
}

}  // namespace gradiens::cuda_seam
