// The CUDA convolution and pooling entry points: conv2d forward and its two
// backward passes (float32, float16 and bfloat16 through cuDNN's graph API,
// float64 through im2col + cuBLAS) and max/average pooling, on dense device buffers, queued on the
// device's current stream. Needs no CUDA headers (engine code includes it).
#pragma once

#include <cstdint>

#include "kernels/conv_geometry.h"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {

// The shapes (kernels/conv_geometry.h). The CUDA kernels take every operand
// in `layout` (weight_layout must equal it) and float64 in NCHW only.
using kernels::ConvLayout;
using kernels::Conv2dGeometry;
using kernels::Pool2dGeometry;

// output = conv(input, weight), without bias (the engine adds it). float32,
// float16 and bfloat16 run through cuDNN (loaded on first use) with float32
// compute; float32 is IEEE unless allow_tf32(); with
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
