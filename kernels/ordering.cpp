// The cumulative entry point (kernels/ordering.h): the CPU's line loop
// (kernels/cpu/ordering.h), or kernels/cuda/indexing.h on the device's stream.
#include "kernels/ordering.h"

#include "kernels/cpu/ordering.h"
#include "kernels/cuda/indexing.h"

namespace gradiens::kernels {

void cumulative(bool product, ScalarType dtype, IntArrayRef sizes, int64_t dim, const StridedRef& out,
                const StridedRef& in, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::Strided in_operand, out_operand;
    in_operand.data = in.data;
    out_operand.data = out.data;
    for (size_t k = 0; k < sizes.size() && k < static_cast<size_t>(cuda::kMaxDims); ++k) {
      in_operand.strides[k] = in.strides[k];
      out_operand.strides[k] = out.strides[k];
    }
    cuda::cumulative(product, dtype, cuda::shape_of(sizes), static_cast<int>(dim), out_operand, in_operand,
                     device.stream);
    return;
  }
  cpu::cumulative(product, dtype, sizes, dim, out.data, out.strides, in.data, in.strides);
}

}  // namespace gradiens::kernels
