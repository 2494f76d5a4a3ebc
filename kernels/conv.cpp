// The convolution and pooling entry points (kernels/conv.h): the CPU's kernels
// (kernels/cpu/conv.h) or the CUDA kernels (kernels/cuda/conv.h), which share
// one geometry (kernels/conv_geometry.h).
#include "kernels/conv.h"

#include "kernels/cpu/conv.h"
#include "kernels/cuda/conv.h"
#include "kernels/error.h"

namespace gradiens::kernels {

namespace {

// The CUDA kernels take the weight in the activations' layout.
const Conv2dGeometry& cuda_geometry(const Conv2dGeometry& g) {
  GD_INTERNAL_ASSERT(g.weight_layout == g.layout, "CUDA convolutions take the weight in the activations' layout");
  return g;
}

}  // namespace

void conv2d_forward(ScalarType dtype, const Conv2dGeometry& g, const void* input, const void* weight,
                    const void* bias, void* output, const DeviceRef& device, bool deterministic) {
  if (device.is_cuda()) {
    GD_INTERNAL_ASSERT(bias == nullptr, "the CUDA convolution takes no bias (the engine adds it)");
    cuda::conv2d_forward(dtype, cuda_geometry(g), input, weight, output, device.index, deterministic);
    return;
  }
  dispatch_floating(dtype, "conv2d", [&]<class T>() {
    cpu::conv2d_forward(g, static_cast<const T*>(input), static_cast<const T*>(weight), static_cast<const T*>(bias),
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
  dispatch_floating(dtype, "conv2d_backward_input", [&]<class T>() {
    cpu::conv2d_backward_input(g, static_cast<const T*>(grad_output), static_cast<const T*>(weight),
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
  dispatch_floating(dtype, "conv2d_backward_weight", [&]<class T>() {
    cpu::conv2d_backward_weight(g, static_cast<const T*>(grad_output), static_cast<const T*>(input),
                                static_cast<T*>(grad_weight));
  });
}

bool conv2d_backward_fused(const Conv2dGeometry& g, const float* grad_output, const float* input,
                           const float* weight, float* grad_input, float* grad_weight, float* grad_bias,
                           const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::conv2d_backward_fused has no CUDA kernel");
  return cpu::conv2d_backward(g, grad_output, input, weight, grad_input, grad_weight, grad_bias);
}

void max_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output, int64_t* indices,
                        const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::max_pool2d_forward(dtype, g, input, output, indices, device.stream);
    return;
  }
  dispatch_floating(dtype, "max_pool2d", [&]<class T>() {
    cpu::max_pool2d_forward(g, static_cast<const T*>(input), static_cast<T*>(output), indices);
  });
}

void max_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, const int64_t* indices,
                         void* grad_input, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::max_pool2d_backward(dtype, g, grad_output, indices, grad_input, device.stream);
    return;
  }
  dispatch_floating(dtype, "max_pool2d_backward", [&]<class T>() {
    cpu::max_pool2d_backward(g, static_cast<const T*>(grad_output), indices, static_cast<T*>(grad_input));
  });
}

void max_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, int32_t* indices,
                        const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "int32 max_pool2d indices are CPU only");
  cpu::max_pool2d_forward(g, input, output, indices);
}

void max_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, const int32_t* indices,
                         float* grad_input, const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "int32 max_pool2d indices are CPU only");
  cpu::max_pool2d_backward(g, grad_output, indices, grad_input);
}

void avg_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output,
                        bool count_include_pad, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::avg_pool2d_forward(dtype, g, input, output, count_include_pad, device.stream);
    return;
  }
  dispatch_floating(dtype, "avg_pool2d", [&]<class T>() {
    cpu::avg_pool2d_forward(g, static_cast<const T*>(input), static_cast<T*>(output), count_include_pad);
  });
}

void avg_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, void* grad_input,
                         bool count_include_pad, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::avg_pool2d_backward(dtype, g, grad_output, grad_input, count_include_pad, device.stream);
    return;
  }
  dispatch_floating(dtype, "avg_pool2d_backward", [&]<class T>() {
    cpu::avg_pool2d_backward(g, static_cast<const T*>(grad_output), static_cast<T*>(grad_input), count_include_pad);
  });
}

}  // namespace gradiens::kernels
