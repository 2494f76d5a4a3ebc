// The multi-tensor update entry point (kernels/multi_tensor.h): the CPU's
// Highway loops, or the CUDA kernel on the device's stream.
#include "kernels/multi_tensor.h"

#include "kernels/cpu/multi_tensor.h"
#include "kernels/cuda/multi_tensor.h"

namespace gradiens::kernels {

void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<float>& list,
                         const DeviceRef& device) {
  if (device.is_cuda()) return cuda::multi_tensor_update(kernel, scalar_count, list, device.stream);
  cpu::multi_tensor_update(kernel, list);
}

void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<double>& list,
                         const DeviceRef& device) {
  if (device.is_cuda()) return cuda::multi_tensor_update(kernel, scalar_count, list, device.stream);
  cpu::multi_tensor_update(kernel, list);
}

}  // namespace gradiens::kernels
