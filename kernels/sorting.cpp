// The order-statistics entry points (kernels/sorting.h): the CPU's line
// selections (kernels/cpu/sorting.h), or the segmented sort of
// kernels/cuda/indexing.h on the device's stream.
#include "kernels/sorting.h"

#include "kernels/cpu/sorting.h"
#include "kernels/cuda/indexing.h"
#include "kernels/error.h"

namespace gradiens::kernels {

void select_positions(Selection how, ScalarType dtype, IntArrayRef sizes, int64_t dim, int64_t count,
                      bool descending, const StridedRef& out, const StridedRef& in, const DeviceRef& device,
                      std::string_view name) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::select_positions has no CUDA kernel");
  cpu::select_positions(how, dtype, sizes, dim, count, descending, out.data, out.strides, in.data, in.strides, name);
}

void median_positions(ScalarType dtype, IntArrayRef sizes, int64_t dim, const StridedRef& out, const StridedRef& in,
                      const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::median_positions has no CUDA kernel");
  cpu::median_positions(dtype, sizes, dim, out.data, out.strides, in.data, in.strides);
}

void sort_lines(ScalarType dtype, const void* keys, int64_t lines, int64_t length, bool descending,
                int64_t* positions, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::sort_lines(dtype, keys, lines, length, descending, positions, device.index, device.stream);
    return;
  }
  const DimVector sizes{lines, length}, strides{length, 1};
  cpu::select_positions(Selection::Sort, dtype, sizes, 1, length, descending, positions, strides, keys, strides,
                        "sort");
}

}  // namespace gradiens::kernels
