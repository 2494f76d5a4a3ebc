// The engine's side of the kernel seam: turns tensors into the buffer
// descriptions the device-neutral entry points (kernels/*.h) and kernels/cuda
// take (device and stream, shape, element strides), and the handful of
// helpers (fill, copy) that ops share.
#pragma once

#include "engine/functions.h"
#include "kernels/cuda/runtime.h"
#include "kernels/device_ref.h"
#include "kernels/reduction_layout.h"

namespace gradiens::cuda_seam {

// A device as the entry points take it, with its current stream when it is a cuda device.
inline kernels::DeviceRef device_of(const Device& device) {
  if (!device.is_cuda()) return {};
  return {kernels::DeviceKind::CUDA, device.index(), kernels::cuda::current_stream(device.index())};
}
// The device t lives on.
inline kernels::DeviceRef device_of(const Tensor& t) { return device_of(t.device()); }
// A Scalar passed by value to an entry point.
inline kernels::Number number_of(const Scalar& value) {
  if (value.is_floating_point()) return kernels::Number::of_real(value.to_double());
  return kernels::Number::of_integer(value.to_long());
}
// t as an operand of an entry point: its first element, sizes and strides
// (borrowed from t).
inline kernels::StridedRef buffer_of(const Tensor& t) { return {t.data_ptr(), t.sizes(), t.strides()}; }

// The elementwise entry points of kernels/elementwise.h on tensors, on out's
// device; an operand on another device than out is a 0-dim CPU tensor (a
// scalar, see common_device) and is passed by value. `name` is the op errors name.
// out = op(a, b), a and b of out's dtype, broadcast to its shape.
void binary_op(kernels::Binary op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha,
               std::string_view name);
// out = op(a, s), or op(s, a) when scalar_first; a of out's dtype and shape.
void binary_scalar_op(kernels::Binary op, const Tensor& out, const Tensor& a, const Scalar& s, bool scalar_first,
                      const Scalar& alpha, std::string_view name);
// out (bool) = a op b, a and b of one dtype, broadcast to out's shape.
void compare_op(kernels::Compare op, const Tensor& out, const Tensor& a, const Tensor& b, std::string_view name);
// out = condition ? a : b, broadcast to out's shape.
void where_op(const Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b);
// dst = src (on dst's device) broadcast to dst's shape, converting the dtype.
void copy_op(const Tensor& dst, const Tensor& src);

// `t` viewed as `shape` (broadcast dimensions get stride 0), based at its first element.
kernels::cuda::Strided strided(const Tensor& t, IntArrayRef shape);
// The current stream of t's device.
kernels::cuda::StreamHandle stream_of(const Tensor& t);

// dst = src broadcast to dst's shape, converting the dtype; both on one cuda device.
void copy(const Tensor& dst, const Tensor& src);
// Every element of t set to value (any device).
void fill(const Tensor& t, const Scalar& value);
// Copies between the CPU and a cuda device (either direction), any dtype and layout.
void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking);

// out = op(a, scalar), or op(scalar, a) when scalar_first; a broadcast to out.
void binary_scalar(kernels::cuda::Binary op, const Tensor& out, const Tensor& a, double scalar, bool scalar_first,
                   double alpha = 1);

// A one-element cuda tensor of `dtype` holding value, on `device` (filled on the
// device's stream: no synchronisation).
Tensor scalar_on(const Device& device, const Scalar& value, ScalarType dtype);

}  // namespace gradiens::cuda_seam
