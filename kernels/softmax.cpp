// The softmax entry points (kernels/softmax.h): the CPU's line kernels, or the
// CUDA line kernels on the device's stream.
#include "kernels/softmax.h"

#include "kernels/cpu/softmax.h"
#include "kernels/cuda/ops.h"
#include "kernels/error.h"

namespace gradiens::kernels {

namespace {
cuda::Strided cuda_operand(const void* data, IntArrayRef strides) {
  cuda::Strided operand;
  operand.data = const_cast<void*>(data);
  for (size_t d = 0; d < strides.size(); ++d) operand.strides[d] = strides[d];
  return operand;
}
}  // namespace

void softmax(bool log, ScalarType dtype, const void* x, IntArrayRef x_strides, bool x_contiguous, void* y,
             IntArrayRef y_strides, IntArrayRef sizes, int64_t dim, const DeviceRef& device) {
  if (device.is_cuda()) {
    const cuda::Shape shape = cuda::shape_of(sizes);
    cuda::softmax(log, dtype, cuda_operand(x, x_strides), cuda_operand(y, y_strides), shape, static_cast<int>(dim),
                  device.stream);
    return;
  }
  cpu::softmax(log, dtype, x, x_strides, x_contiguous, y, y_strides, sizes, dim);
}

void softmax_backward(bool log, ScalarType dtype, const void* g, IntArrayRef g_strides, const void* y,
                      IntArrayRef y_strides, void* out, IntArrayRef out_strides, IntArrayRef sizes, int64_t dim,
                      const DeviceRef& device) {
  if (device.is_cuda()) {
    const cuda::Shape shape = cuda::shape_of(sizes);
    cuda::softmax_backward(log, dtype, cuda_operand(g, g_strides), cuda_operand(y, y_strides),
                           cuda_operand(out, out_strides), shape, static_cast<int>(dim), device.stream);
    return;
  }
  cpu::softmax_backward(log, dtype, g, g_strides, y, y_strides, out, out_strides, sizes, dim);
}

}  // namespace gradiens::kernels
