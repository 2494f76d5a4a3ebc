// The engine's side of the CUDA seam: turns tensors into the buffer
// descriptions kernels/cuda takes (shape, element strides, stream), and the
// handful of device-neutral helpers (fill, copy) that ops share.
#pragma once

#include "engine/functions.h"
#include "kernels/cuda/runtime.h"
#include "kernels/reduction_layout.h"

namespace gradiens::cuda_seam {

kernels::cuda::Shape shape_of(IntArrayRef sizes);
// `t` viewed as `shape` (broadcast dimensions get stride 0), based at its first element.
kernels::cuda::Strided strided(const Tensor& t, IntArrayRef shape);
// The current stream of t's device.
kernels::cuda::StreamHandle stream_of(const Tensor& t);

// dst = src broadcast to dst's shape, converting the dtype; both on one cuda device.
void copy(const Tensor& dst, const Tensor& src);
// Every element of t (cuda) set to value.
void fill(const Tensor& t, const Scalar& value);
// Copies between the CPU and a cuda device (either direction), any dtype and layout.
void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking);

// out = op(a, b) over out's shape; a and b of out's dtype, broadcast to it.
void binary(kernels::cuda::Binary op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1);
// out (contiguous) = op over the reduced dims of x's layout (kept dims first).
void reduce(kernels::cuda::Reduce op, const Tensor& x, const kernels::ReductionLayout& layout, const Tensor& out);

// out = op(a, scalar), or op(scalar, a) when scalar_first; a broadcast to out.
void binary_scalar(kernels::cuda::Binary op, const Tensor& out, const Tensor& a, double scalar, bool scalar_first,
                   double alpha = 1);

// A one-element cuda tensor of `dtype` holding value, on `device` (filled on the
// device's stream: no synchronisation).
Tensor scalar_on(const Device& device, const Scalar& value, ScalarType dtype);

}  // namespace gradiens::cuda_seam
