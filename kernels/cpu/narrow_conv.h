// Direct 2-D convolution for inputs with few taps per output (C * KH * KW <= 12:
// the first layer of a grey network, 3x3), on NCHW buffers at stride 1 without
// dilation. It writes NCHW outputs and reads NCHW gradients as they are, where
// oneDNN's direct kernels would reorder both to and from their blocked layout
// (Note [Narrow convolutions] in narrow_conv.cpp).
#pragma once

#include "kernels/conv_geometry.h"

namespace gradiens::kernels::cpu {

// Whether the direct kernels take this geometry: NCHW input and weight, one group,
// stride 1, dilation 1, at most 12 taps, output rows of at least 16 (a row's
// vectors then never reach past it).
bool narrow_conv_applies(const Conv2dGeometry& g);

// output = conv(input, weight) + bias; bias may be null.
void narrow_conv_forward(const Conv2dGeometry& g, const float* input, const float* weight, const float* bias,
                         float* output);
void narrow_conv_forward(const Conv2dGeometry& g, const double* input, const double* weight, const double* bias,
                         double* output);
// grad_weight (overwritten) = the adjoint of conv(input, .) applied to grad_output;
// grad_bias (overwritten, may be null) = grad_output summed over N, OH and OW.
void narrow_conv_backward_weight(const Conv2dGeometry& g, const float* grad_output, const float* input,
                                 float* grad_weight, float* grad_bias);
void narrow_conv_backward_weight(const Conv2dGeometry& g, const double* grad_output, const double* input,
                                 double* grad_weight, double* grad_bias);

}  // namespace gradiens::kernels::cpu
