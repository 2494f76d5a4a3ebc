// Device-neutral entry points of the factories that compute their values
// (eye, arange, linspace): a loop on the CPU, kernels/cuda/ops.h on a cuda
// device, with the same values bit for bit.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// out (rows x columns, dense) = the identity; any dtype. out is not zeroed first
// on the CPU only if the caller did: every element is written on both devices.
void eye(ScalarType dtype, void* out, int64_t rows, int64_t columns, const DeviceRef& device);

// out[i] = start + i * step for i < n, in int64 when `integral`, in double
// otherwise, then converted to dtype (any dtype but bool).
void range(ScalarType dtype, void* out, int64_t n, const Number& start, const Number& step, bool integral,
           const DeviceRef& device);

// `steps` values from start to end as PyTorch spaces them: the first half
// counts up from start, the second down from end (any dtype but bool).
void linspace(ScalarType dtype, void* out, double start, double end, int64_t steps, const DeviceRef& device);

}  // namespace gradiens::kernels
