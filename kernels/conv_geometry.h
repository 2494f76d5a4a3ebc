// The shapes of 2-D convolution and pooling on dense NCHW or NHWC buffers, one
// description for the device-neutral entry points (kernels/conv.h) and both
// backends (kernels/cpu/conv.h, kernels/cuda/conv.h).
#pragma once

#include <cstdint>

namespace gradiens::kernels {

// The order of a dense 4-d buffer: NCHW (row-major) or NHWC (channels last: the
// C values of one pixel are adjacent). A weight [O, C / G, KH, KW] is likewise
// OIHW (NCHW) or OHWI (NHWC).
enum class ConvLayout : uint8_t { NCHW, NHWC };

// Shape legend: N batch, C input channels, H x W input plane, O output channels,
// KH x KW kernel, OH x OW output plane, G groups. Input [N, C, H, W], weight
// [O, C / G, KH, KW], bias [O], output [N, O, OH, OW], each dense in its layout:
// `layout` for input, output and their gradients, `weight_layout` for the weight
// and its gradient. On a cuda device weight_layout must equal layout (and
// float64 takes NCHW only).
struct Conv2dGeometry {
  int64_t batch, in_channels, in_h, in_w;
  int64_t out_channels, kernel_h, kernel_w;
  int64_t out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
  ConvLayout layout = ConvLayout::NCHW;
  ConvLayout weight_layout = ConvLayout::NCHW;
  bool operator==(const Conv2dGeometry&) const = default;
};

// Pooling over N x C planes of H x W, stored NCHW or NHWC; windows start at
// o * stride - pad and take kernel taps dilation apart. Output, indices and
// gradients have the input's layout.
struct Pool2dGeometry {
  int64_t batch, channels, in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  ConvLayout layout = ConvLayout::NCHW;
  bool operator==(const Pool2dGeometry&) const = default;
};

}  // namespace gradiens::kernels
