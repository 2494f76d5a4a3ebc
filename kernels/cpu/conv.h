// CPU 2-D convolution (forward, backward-data, backward-weights) and max/average
// pooling on dense NCHW or NHWC (channels-last) buffers; float32 convolution runs
// through oneDNN, float64 through im2col + GEMM. Shapes only: no autograd here.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/conv_geometry.h"

namespace gradiens::kernels::cpu {

// The shapes (kernels/conv_geometry.h); Layout is the CPU kernels' name for ConvLayout.
using Layout = kernels::ConvLayout;
using kernels::Conv2dGeometry;
using kernels::Pool2dGeometry;

// output = conv(input, weight) + bias; bias may be null.
void conv2d_forward(const Conv2dGeometry& g, const float* input, const float* weight, const float* bias,
                    float* output);
void conv2d_forward(const Conv2dGeometry& g, const double* input, const double* weight, const double* bias,
                    double* output);
// grad_input (overwritten) = the adjoint of conv(., weight) applied to grad_output.
void conv2d_backward_input(const Conv2dGeometry& g, const float* grad_output, const float* weight,
                           float* grad_input);
void conv2d_backward_input(const Conv2dGeometry& g, const double* grad_output, const double* weight,
                           double* grad_input);
// grad_weight (overwritten) = the adjoint of conv(input, .) applied to grad_output.
void conv2d_backward_weight(const Conv2dGeometry& g, const float* grad_output, const float* input,
                            float* grad_weight);
void conv2d_backward_weight(const Conv2dGeometry& g, const double* grad_output, const double* input,
                            double* grad_weight);
// The gradients of a float32 convolution in one call (PyTorch's convolution_backward):
// any of grad_input, grad_weight and grad_bias may be null (not wanted). grad_output is reordered once for
// both passes, and the bias gradient (the sum of grad_output over N, OH and OW) comes
// out of oneDNN's weight pass. Returns whether grad_bias was written: when oneDNN does
// not take the geometry, only the input and weight gradients are, and the caller sums.
[[nodiscard]] bool conv2d_backward(const Conv2dGeometry& g, const float* grad_output, const float* input, const float* weight,
                     float* grad_input, float* grad_weight, float* grad_bias);


// Max over each window, and the flat index h * W + w of the max within its plane
// (the first one on ties; NaN counts as the largest value and the last NaN wins, as in
// PyTorch).
void max_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, int64_t* indices);
void max_pool2d_forward(const Pool2dGeometry& g, const double* input, double* output, int64_t* indices);
// grad_input (overwritten) = each grad_output element added at its window's
// argmax, `indices` as max_pool2d_forward wrote them (in [0, H * W), unchecked).
void max_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, const int64_t* indices,
                         float* grad_input);
void max_pool2d_backward(const Pool2dGeometry& g, const double* grad_output, const int64_t* indices,
                         double* grad_input);
// The same with int32 indices, half the bytes of the memory-bound pool's output
// (float32; every plane has fewer than 2^31 elements).
void max_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, int32_t* indices);
void max_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, const int32_t* indices,
                         float* grad_input);

// Mean over each window (dilation must be 1). count_include_pad divides by the window
// clipped to the padded plane, else by the window clipped to the plane (PyTorch's rule).
void avg_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, bool count_include_pad);
void avg_pool2d_forward(const Pool2dGeometry& g, const double* input, double* output, bool count_include_pad);
// grad_input (overwritten) = the adjoint of avg_pool2d_forward applied to grad_output.
void avg_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, float* grad_input,
                         bool count_include_pad);
void avg_pool2d_backward(const Pool2dGeometry& g, const double* grad_output, double* grad_input,
                         bool count_include_pad);

namespace testing {
// Number of oneDNN convolution primitives cached for the calling thread.
int conv_onednn_cache_size();

// How the calling thread's last call of one convolution kernel ran: through
// "onednn", "gemm" (im2col + GEMM) or "direct" (narrow_conv.h), on which layouts, and oneDNN's name for the
// implementation it picked (e.g. "brgconv:avx512_core"; "ref:any" is its slow
// reference code). Empty until the kernel has run.
enum class ConvKernel { Forward, BackwardInput, BackwardWeight };
struct ConvRun {
  std::string backend;
  Layout layout = Layout::NCHW;
  Layout weight_layout = Layout::NCHW;
  std::string implementation;
};
ConvRun last_conv_run(ConvKernel kernel);
}  // namespace testing

}  // namespace gradiens::kernels::cpu
