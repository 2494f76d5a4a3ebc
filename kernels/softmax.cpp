// The softmax entry points (kernels/softmax.h): the CPU's line kernels.
#include "kernels/softmax.h"

#include "kernels/cpu/softmax.h"
#include "kernels/error.h"

namespace gradiens::kernels {

void softmax(bool log, ScalarType dtype, const void* x, IntArrayRef x_strides, bool x_contiguous, void* y,
             IntArrayRef y_strides, IntArrayRef sizes, int64_t dim, const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::softmax has no CUDA kernel");
  cpu::softmax(log, dtype, x, x_strides, x_contiguous, y, y_strides, sizes, dim);
}

void softmax_backward(bool log, ScalarType dtype, const void* g, IntArrayRef g_strides, const void* y,
                      IntArrayRef y_strides, void* out, IntArrayRef out_strides, IntArrayRef sizes, int64_t dim,
                      const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::softmax_backward has no CUDA kernel");
  cpu::softmax_backward(log, dtype, g, g_strides, y, y_strides, out, out_strides, sizes, dim);
}

}  // namespace gradiens::kernels
