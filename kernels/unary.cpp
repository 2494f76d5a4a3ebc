// The dense elementwise math entry points (kernels/unary.h): the CPU's
// vectorized kernels split over threads, or the CUDA kernels on the stream.
#include "kernels/unary.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/cuda/ops.h"
#include "kernels/error.h"

namespace gradiens::kernels {

void unary_math(UnaryMath op, ScalarType dtype, const void* in, void* out, int64_t n, const DeviceRef& device) {
  if (device.is_cuda()) {
    if (n > 0) cuda::unary_math(op, dtype, in, out, n, device.stream);
    return;
  }
  dispatch_floating_and_reduced(dtype, "unary_math", [&]<class T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    cpu::parallel_for(0, n, cpu::kElementwiseGrainSize / 4,
                      [&](int64_t b, int64_t e) { cpu::unary_math(op, x + b, y + b, e - b); });
  });
}

void tanh_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n, const DeviceRef& device) {
  if (device.is_cuda()) {
    if (n > 0) cuda::tanh_backward(dtype, grad, y, out, n, device.stream);
    return;
  }
  dispatch_floating_and_reduced(dtype, "tanh_backward", [&]<class T>() {
    cpu::tanh_backward(static_cast<const T*>(grad), static_cast<const T*>(y), static_cast<T*>(out), n);
  });
}

void sigmoid_backward(ScalarType dtype, const void* grad, const void* y, void* out, int64_t n,
                      const DeviceRef& device) {
  if (device.is_cuda()) {
    if (n > 0) cuda::sigmoid_backward(dtype, grad, y, out, n, device.stream);
    return;
  }
  dispatch_floating_and_reduced(dtype, "sigmoid_backward", [&]<class T>() {
    cpu::sigmoid_backward(static_cast<const T*>(grad), static_cast<const T*>(y), static_cast<T*>(out), n);
  });
}

void threshold_backward(ScalarType dtype, const void* grad, const void* self, const Number& threshold, void* out,
                        int64_t n, const DeviceRef& device) {
  if (n == 0) return;
  if (device.is_cuda()) {
    cuda::threshold_backward(dtype, grad, self, threshold.to_double(), out, n, device.stream);
    return;
  }
  dispatch_floating(dtype, "threshold_backward", [&]<class T>() {
    const T *gp = static_cast<const T*>(grad), *sp = static_cast<const T*>(self);
    T* op = static_cast<T*>(out);
    const T limit = threshold.to<T>();
    cpu::parallel_for(0, n, cpu::kElementwiseGrainSize, [&](int64_t lo, int64_t hi) {
      cpu::threshold_backward(gp + lo, sp + lo, limit, op + lo, hi - lo);
    });
  });
}

void tanh_backward_backward(ScalarType dtype, const void* gg, const void* grad, const void* y, void* d_grad,
                            void* d_y, int64_t n, const DeviceRef& device, uint32_t accumulate) {
  if (device.is_cuda()) {
    GD_INTERNAL_ASSERT(accumulate == 0, "tanh_backward_backward: accumulating outputs is CPU-only");
    if (n > 0) cuda::tanh_backward_backward(dtype, gg, grad, y, d_grad, d_y, n, device.stream);
    return;
  }
  dispatch_floating(dtype, "tanh_backward", [&]<class T>() {
    const T *ggp = static_cast<const T*>(gg), *gp = static_cast<const T*>(grad), *yp = static_cast<const T*>(y);
    T *dg = static_cast<T*>(d_grad), *dy = static_cast<T*>(d_y);
    cpu::parallel_for(0, n, cpu::kElementwiseGrainSize, [&](int64_t lo, int64_t hi) {
      cpu::tanh_backward_backward(ggp + lo, gp + lo, yp + lo, dg + lo, dy + lo, hi - lo, accumulate);
    });
  });
}

void tanh_backward_backward_backward(ScalarType dtype, const void* g_first, const void* g_second, const void* gg,
                                     const void* grad, const void* y, void* d_gg, void* d_grad, void* d_y, int64_t n,
                                     const DeviceRef& device, uint32_t accumulate) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "tanh_backward_backward_backward: the CPU only");
  dispatch_floating(dtype, "tanh_backward_backward_backward", [&]<class T>() {
    const T *g1 = static_cast<const T*>(g_first), *g2 = static_cast<const T*>(g_second);
    const T *ggp = static_cast<const T*>(gg), *gp = static_cast<const T*>(grad), *yp = static_cast<const T*>(y);
    T *dgg = static_cast<T*>(d_gg), *dg = static_cast<T*>(d_grad), *dy = static_cast<T*>(d_y);
    cpu::parallel_for(0, n, cpu::kElementwiseGrainSize, [&](int64_t lo, int64_t hi) {
      cpu::tanh_backward_backward_backward(g1 + lo, g2 + lo, ggp + lo, gp + lo, yp + lo, dgg + lo, dg + lo, dy + lo,
                                           hi - lo, accumulate);
    });
  });
}

void scaled_product(ScalarType dtype, const void* a, const void* b, const void* c, double s, void* out, int64_t n,
                    const DeviceRef& device) {
  if (device.is_cuda()) {
    if (n > 0) cuda::scaled_product(dtype, a, b, c, s, out, n, device.stream);
    return;
  }
  dispatch_floating(dtype, "scaled_product", [&]<class T>() {
    const T *ap = static_cast<const T*>(a), *bp = static_cast<const T*>(b), *cp = static_cast<const T*>(c);
    T* op = static_cast<T*>(out);
    const T st = static_cast<T>(s);
    cpu::parallel_for(0, n, cpu::kElementwiseGrainSize, [&](int64_t lo, int64_t hi) {
      cpu::scaled_product(ap + lo, bp + lo, cp + lo, st, op + lo, hi - lo);
    });
  });
}

void scaled_product_backward(ScalarType dtype, const void* g, const void* a, const void* b, const void* c, double s,
                             void* grad_a, void* grad_b, void* grad_c, int64_t n, const DeviceRef& device,
                             uint32_t accumulate) {
  if (device.is_cuda()) {
    GD_INTERNAL_ASSERT(accumulate == 0, "scaled_product_backward: accumulating outputs is CPU-only");
    if (n > 0) cuda::scaled_product_backward(dtype, g, a, b, c, s, grad_a, grad_b, grad_c, n, device.stream);
    return;
  }
  dispatch_floating(dtype, "scaled_product", [&]<class T>() {
    const T *gp = static_cast<const T*>(g), *ap = static_cast<const T*>(a), *bp = static_cast<const T*>(b),
            *cp = static_cast<const T*>(c);
    T *ga = static_cast<T*>(grad_a), *gb = static_cast<T*>(grad_b), *gc = static_cast<T*>(grad_c);
    const T st = static_cast<T>(s);
    cpu::parallel_for(0, n, cpu::kElementwiseGrainSize, [&](int64_t lo, int64_t hi) {
      cpu::scaled_product_backward(gp + lo, ap + lo, bp + lo, cp + lo, st, ga + lo, gb + lo, gc + lo, hi - lo,
                                   accumulate);
    });
  });
}

}  // namespace gradiens::kernels
