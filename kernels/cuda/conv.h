// The CUDA convolution and pooling entry points: conv2d forward and its two
// backward passes (float32 through cuDNN's graph API, float64 through im2col +
// cuBLAS) and max/average pooling, on dense device buffers, queued on the
// device's current stream. Needs no CUDA headers (engine code includes it).
#pragma once

#include <cstdint>

#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {

// The order of a dense 4-d buffer: NCHW (row-major) or NHWC (channels last); a
// weight [O, C / G, KH, KW] in the same order is OIHW or OHWI.
enum class ConvLayout : uint8_t { NCHW, NHWC };

// Shape legend: N batch, C input channels, H x W input plane, O output channels,
// KH x KW kernel, OH x OW output plane, G groups. Input [N, C, H, W], weight
// [O, C / G, KH, KW], output [N, O, OH, OW], every operand (and its gradient)
// dense in `layout`. float64 takes NCHW only.
struct Conv2dGeometry {
  int64_t batch, in_channels, in_h, in_w;
  int64_t out_channels, kernel_h, kernel_w;
  int64_t out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
  ConvLayout layout = ConvLayout::NCHW;
  bool operator==(const Conv2dGeometry&) const = default;
};

// output = conv(input, weight), without bias (the engine adds it). float32 runs
// through cuDNN (loaded on first use): IEEE unless allow_tf32(), and with
// `deterministic` only engines without cuDNN's nondeterministic note.
void conv2d_forward(ScalarType dtype, const Conv2dGeometry& g, const void* input, const void* weight, void* output,
                    int device, bool deterministic);
// grad_input (overwritten) = the adjoint of conv(., weight) applied to grad_output.
void conv2d_backward_input(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* weight,
                           void* grad_input, int device, bool deterministic);
// grad_weight (overwritten) = the adjoint of conv(input, .) applied to grad_output.
void conv2d_backward_weight(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* input,
                            void* grad_weight, int device, bool deterministic);

// The float64 path of the three above (im2col + cuBLAS, kernels/cuda/im2col.cu); NCHW.
void conv2d_forward_gemm(const Conv2dGeometry& g, const double* input, const double* weight, double* output,
                         int device);
void conv2d_backward_input_gemm(const Conv2dGeometry& g, const double* grad_output, const double* weight,
                                double* grad_input, int device);
void conv2d_backward_weight_gemm(const Conv2dGeometry& g, const double* grad_output, const double* input,
                                 double* grad_weight, int device);

// The cuDNN version of the loaded library (e.g. 91900), loading it; throws when it cannot be loaded.
int64_t cudnn_version();

// Pooling over N x C planes of H x W, stored NCHW or NHWC; windows start at
// o * stride - pad and take kernel taps dilation apart. Output, indices and
// gradients have the input's layout. Same conventions as kernels/cpu/conv.h.
struct Pool2dGeometry {
  int64_t batch, channels, in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  ConvLayout layout = ConvLayout::NCHW;
};

// Max over each window and the flat index h * W + w of the max within its plane
// (the first one on ties; NaN counts as the largest and the last NaN wins).
void max_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output, int64_t* indices,
                        StreamHandle stream);
// grad_input (overwritten) = each grad_output element added at its window's argmax;
// deterministic (each input element gathers from the windows covering it, in order).
void max_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, const int64_t* indices,
                         void* grad_input, StreamHandle stream);
// Mean over each window (dilation 1); count_include_pad as in kernels/cpu/conv.h.
void avg_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output,
                        bool count_include_pad, StreamHandle stream);
void avg_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, void* grad_input,
                         bool count_include_pad, StreamHandle stream);

}  // namespace gradiens::kernels::cuda
