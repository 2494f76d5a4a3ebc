// The factories of kernels/factories.h: a loop on the CPU, the kernels of
// kernels/cuda/ops.h on a cuda device.
#include "kernels/factories.h"

#include <algorithm>

#include "kernels/cuda/ops.h"

namespace gradiens::kernels {

void eye(ScalarType dtype, void* out, int64_t rows, int64_t columns, const DeviceRef& device) {
  if (device.is_cuda()) return cuda::eye(dtype, out, rows, columns, device.stream);
  dispatch_all(dtype, "eye", [&]<class T>() {
    T* p = static_cast<T*>(out);
    std::fill(p, p + rows * columns, T(0));
    for (int64_t i = 0; i < std::min(rows, columns); ++i) p[i * columns + i] = T(1);
  });
}

void range(ScalarType dtype, void* out, int64_t n, const Number& start, const Number& step, bool integral,
           const DeviceRef& device) {
  if (device.is_cuda()) return cuda::range(dtype, out, n, start, step, integral, device.stream);
  dispatch_numeric_and_reduced(dtype, "arange", [&]<class T>() {
    T* p = static_cast<T*>(out);
    if (integral) {
      const int64_t first = start.to<int64_t>(), stride = step.to<int64_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(first + i * stride);
    } else {
      const double first = start.to_double(), stride = step.to_double();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(first + static_cast<double>(i) * stride);
    }
  });
}

void linspace(ScalarType dtype, void* out, double start, double end, int64_t steps, const DeviceRef& device) {
  if (device.is_cuda()) return cuda::linspace(dtype, out, start, end, steps, device.stream);
  dispatch_numeric_and_reduced(dtype, "linspace", [&]<class T>() {
    T* p = static_cast<T*>(out);
    const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
    const int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i)
      p[i] = static_cast<T>(i < half ? start + step * static_cast<double>(i)
                                     : end - step * static_cast<double>(steps - 1 - i));
  });
}

}  // namespace gradiens::kernels
