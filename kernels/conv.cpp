// The convolution and pooling entry points (kernels/conv.h): the geometry
// translated to the CPU's (kernels/cpu/conv.h) or the CUDA kernels' (kernels/cuda/conv.h).
#include "kernels/conv.h"

#include "kernels/cpu/conv.h"
#include "kernels/cuda/conv.h"
#include "kernels/error.h"

namespace gradiens::kernels {

namespace {

cpu::Layout cpu_layout(ConvLayout layout) { return layout == ConvLayout::NHWC ? cpu::Layout::NHWC : cpu::Layout::NCHW; }
cuda::ConvLayout cuda_layout(ConvLayout layout) {
  return layout == ConvLayout::NHWC ? cuda::ConvLayout::NHWC : cuda::ConvLayout::NCHW;
}

cpu::Conv2dGeometry cpu_geometry(const Conv2dGeometry& g) {
  cpu::Conv2dGeometry c{g.batch,    g.in_channels, g.in_h,     g.in_w,       g.out_channels, g.kernel_h,
                        g.kernel_w, g.out_h,       g.out_w,    g.stride_h,   g.stride_w,     g.pad_h,
                        g.pad_w,    g.dilation_h,  g.dilation_w, g.groups};
  c.layout = cpu_layout(g.layout);
  c.weight_layout = cpu_layout(g.weight_layout);
  return c;
}
cuda::Conv2dGeometry cuda_geometry(const Conv2dGeometry& g) {
  GD_INTERNAL_ASSERT(g.weight_layout == g.layout, "CUDA convolutions take the weight in the activations' layout");
  cuda::Conv2dGeometry c{g.batch,    g.in_channels, g.in_h,     g.in_w,       g.out_channels, g.kernel_h,
                         g.kernel_w, g.out_h,       g.out_w,    g.stride_h,   g.stride_w,     g.pad_h,
                         g.pad_w,    g.dilation_h,  g.dilation_w, g.groups};
  c.layout = cuda_layout(g.layout);
  return c;
}

cpu::Pool2dGeometry cpu_geometry(const Pool2dGeometry& g) {
  return {g.batch,    g.channels, g.in_h,  g.in_w,  g.out_h,      g.out_w,      g.kernel_h,          g.kernel_w,
          g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w, cpu_layout(g.layout)};
}
cuda::Pool2dGeometry cuda_geometry(const Pool2dGeometry& g) {
  return {g.batch,    g.channels, g.in_h,  g.in_w,  g.out_h,      g.out_w,      g.kernel_h,           g.kernel_w,
          g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w, cuda_layout(g.layout)};
}

}  // namespace

void conv2d_forward(ScalarType dtype, const Conv2dGeometry& g, const void* input, const void* weight,
                    const void* bias, void* output, const DeviceRef& device, bool deterministic) {
  if (device.is_cuda()) {
    GD_INTERNAL_ASSERT(bias == nullptr, "the CUDA convolution takes no bias (the engine adds it)");
    cuda::conv2d_forward(dtype, cuda_geometry(g), input, weight, output, device.index, deterministic);
    return;
  }
  const cpu::Conv2dGeometry c = cpu_geometry(g);
  dispatch_floating(dtype, "conv2d", [&]<class T>() {
    cpu::conv2d_forward(c, static_cast<const T*>(input), static_cast<const T*>(weight), static_cast<const T*>(bias),
                        static_cast<T*>(output));
  });
}

void conv2d_backward_input(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* weight,
                           void* grad_input, const DeviceRef& device, bool deterministic) {
  if (device.is_cuda()) {
    cuda::conv2d_backward_input(dtype, cuda_geometry(g), grad_output, weight, grad_input, device.index,
                                deterministic);
    return;
  }
  const cpu::Conv2dGeometry c = cpu_geometry(g);
  dispatch_floating(dtype, "conv2d_backward_input", [&]<class T>() {
    cpu::conv2d_backward_input(c, static_cast<const T*>(grad_output), static_cast<const T*>(weight),
                               static_cast<T*>(grad_input));
  });
}

void conv2d_backward_weight(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* input,
                            void* grad_weight, const DeviceRef& device, bool deterministic) {
  if (device.is_cuda()) {
    cuda::conv2d_backward_weight(dtype, cuda_geometry(g), grad_output, input, grad_weight, device.index,
                                 deterministic);
    return;
  }
  const cpu::Conv2dGeometry c = cpu_geometry(g);
  dispatch_floating(dtype, "conv2d_backward_weight", [&]<class T>() {
    cpu::conv2d_backward_weight(c, static_cast<const T*>(grad_output), static_cast<const T*>(input),
                                static_cast<T*>(grad_weight));
  });
}

bool conv2d_backward_fused(const Conv2dGeometry& g, const float* grad_output, const float* input,
                           const float* weight, float* grad_input, float* grad_weight, float* grad_bias,
                           const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::conv2d_backward_fused has no CUDA kernel");
  return cpu::conv2d_backward(cpu_geometry(g), grad_output, input, weight, grad_input, grad_weight, grad_bias);
}

void max_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output, int64_t* indices,
                        const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::max_pool2d_forward(dtype, cuda_geometry(g), input, output, indices, device.stream);
    return;
  }
  const cpu::Pool2dGeometry c = cpu_geometry(g);
  dispatch_floating(dtype, "max_pool2d", [&]<class T>() {
    cpu::max_pool2d_forward(c, static_cast<const T*>(input), static_cast<T*>(output), indices);
  });
}

void max_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, const int64_t* indices,
                         void* grad_input, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::max_pool2d_backward(dtype, cuda_geometry(g), grad_output, indices, grad_input, device.stream);
    return;
  }
  const cpu::Pool2dGeometry c = cpu_geometry(g);
  dispatch_floating(dtype, "max_pool2d_backward", [&]<class T>() {
    cpu::max_pool2d_backward(c, static_cast<const T*>(grad_output), indices, static_cast<T*>(grad_input));
  });
}

void avg_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output,
                        bool count_include_pad, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::avg_pool2d_forward(dtype, cuda_geometry(g), input, output, count_include_pad, device.stream);
    return;
  }
  const cpu::Pool2dGeometry c = cpu_geometry(g);
  dispatch_floating(dtype, "avg_pool2d", [&]<class T>() {
    cpu::avg_pool2d_forward(c, static_cast<const T*>(input), static_cast<T*>(output), count_include_pad);
  });
}

void avg_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, void* grad_input,
                         bool count_include_pad, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::avg_pool2d_backward(dtype, cuda_geometry(g), grad_output, grad_input, count_include_pad, device.stream);
    return;
  }
  const cpu::Pool2dGeometry c = cpu_geometry(g);
  dispatch_floating(dtype, "avg_pool2d_backward", [&]<class T>() {
    cpu::avg_pool2d_backward(c, static_cast<const T*>(grad_output), static_cast<T*>(grad_input), count_include_pad);
  });
}

}  // namespace gradiens::kernels
