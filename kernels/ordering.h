// Device-neutral entry point of the cumulative ops along one dim (cumsum,
// cumprod): a line loop on the CPU, or kernels/cuda/indexing.h on a cuda device.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels {

// out = the inclusive cumulative sum (product when `product`) of `in` along
// `dim` of `sizes` (a 0-dim tensor passed as [1]), out and in of `dtype` with
// their own element strides. Floating dtypes accumulate in double, integers in
// uint64 (wrapping), as PyTorch's CPU kernel does; numeric dtypes (on a cuda
// device: float32, float64, float16, bfloat16, uint8, int8, int16, int32 and int64).
void cumulative(bool product, ScalarType dtype, IntArrayRef sizes, int64_t dim, const StridedRef& out,
                const StridedRef& in, const DeviceRef& device);

}  // namespace gradiens::kernels
