// float64 conv2d on the GPU as im2col + cuBLAS GEMM (cuDNN's double engines are
// few and slow): forward and backward of the weight multiply by column
// matrices of the input, backward of the input multiplies into columns and
// folds them back (col2im, one thread per input element gathering its taps, so
// the sums are deterministic). NCHW, any stride, padding, dilation and groups.
#include <algorithm>

#include "kernels/cuda/conv.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/runtime.h"

namespace gradiens::kernels::cuda {
namespace {

// Shape legend as in conv.h; K = KH * KW taps, P = OH * OW output positions,
// Cg = C / G and Og = O / G channels per group. A column matrix holds, for each
// image b of a chunk, input channel c, tap (kh, kw) and position p = (oh, ow),
// the input element that tap sees at that position (0 in the padding).

// Column matrices are kept under this many bytes; the batch is done in chunks.
constexpr int64_t kColumnBudgetBytes = int64_t(256) << 20;

struct ColumnShape {
  int64_t channels, in_h, in_w, kernel_h, kernel_w, out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

ColumnShape column_shape(const Conv2dGeometry& g) {
  return {g.in_channels, g.in_h, g.in_w, g.kernel_h, g.kernel_w, g.out_h, g.out_w,
          g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w};
}

// Writes the columns of `images` images starting at `input`. The element for
// (b, c, kh, kw, p) goes to ((b * C + c) * K + kh * KW + kw) * P + p when
// image_major (each image's [C K, P] matrix in turn), else to
// (((c * K + kh * KW + kw) * images + b) * P + p (one [C K, images P] matrix).
struct Im2col {
  ColumnShape s;
  const double* input;
  double* columns;
  int64_t images;
  bool image_major;
  __device__ void operator()(int64_t i) const {
    const int64_t positions = s.out_h * s.out_w, taps = s.kernel_h * s.kernel_w;
    const int64_t p = i % positions;
    const int64_t tap = i / positions % taps;
    const int64_t c = i / (positions * taps) % s.channels;
    const int64_t b = i / (positions * taps * s.channels);
    const int64_t oh = p / s.out_w, ow = p % s.out_w;
    const int64_t kh = tap / s.kernel_w, kw = tap % s.kernel_w;
    const int64_t h = oh * s.stride_h - s.pad_h + kh * s.dilation_h;
    const int64_t w = ow * s.stride_w - s.pad_w + kw * s.dilation_w;
    const double value = h >= 0 && h < s.in_h && w >= 0 && w < s.in_w
                             ? input[((b * s.channels + c) * s.in_h + h) * s.in_w + w]
                             : 0.0;
    const int64_t row = c * taps + tap;
    columns[image_major ? i : (row * images + b) * positions + p] = value;
  }
};

// grad_input element (b, c, h, w) = the sum, over the taps (kh, kw) in order, of
// the image-major column entry of the output position that tap maps onto it.
struct Col2im {
  ColumnShape s;
  const double* columns;
  double* grad_input;
  __device__ void operator()(int64_t i) const {
    const int64_t w = i % s.in_w, h = i / s.in_w % s.in_h;
    const int64_t c = i / (s.in_w * s.in_h) % s.channels, b = i / (s.in_w * s.in_h * s.channels);
    const int64_t positions = s.out_h * s.out_w, taps = s.kernel_h * s.kernel_w;
    const double* image = columns + (b * s.channels + c) * taps * positions;
    double total = 0;
    for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
      const int64_t h_offset = h + s.pad_h - kh * s.dilation_h;
      if (h_offset < 0 || h_offset % s.stride_h != 0) continue;
      const int64_t oh = h_offset / s.stride_h;
      if (oh >= s.out_h) continue;
      for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
        const int64_t w_offset = w + s.pad_w - kw * s.dilation_w;
        if (w_offset < 0 || w_offset % s.stride_w != 0) continue;
        const int64_t ow = w_offset / s.stride_w;
        if (ow >= s.out_w) continue;
        total += image[(kh * s.kernel_w + kw) * positions + oh * s.out_w + ow];
      }
    }
    grad_input[i] = total;
  }
};

// dst [O, images P] = src [images, O, P] with the image moved inside the channel.
struct ChannelMajor {
  const double* src;
  double* dst;
  int64_t images, channels, positions;
  __device__ void operator()(int64_t i) const {
    const int64_t p = i % positions, b = i / positions % images, o = i / (positions * images);
    dst[i] = src[(b * channels + o) * positions + p];
  }
};

// How many images one chunk holds when each needs `per_image` doubles of scratch.
int64_t chunk_images(int64_t batch, int64_t per_image) {
  const int64_t fit = kColumnBudgetBytes / std::max<int64_t>(1, per_image * int64_t(sizeof(double)));
  return std::clamp<int64_t>(fit, 1, batch);
}

// Scratch device memory freed with its owner (on the current stream's order).
class Scratch {
 public:
  Scratch(int64_t doubles, int device)
      : data_(static_cast<double*>(device_malloc(static_cast<size_t>(doubles) * sizeof(double), device))),
        device_(device) {}
  ~Scratch() { device_free(data_, device_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  double* get() const { return data_; }

 private:
  double* data_;
  int device_;
};

}  // namespace

void conv2d_forward_gemm(const Conv2dGeometry& g, const double* input, const double* weight, double* output,
                         int device) {
  DeviceGuard guard(device);
  const StreamHandle stream = current_stream(device);
  const ColumnShape s = column_shape(g);
  const int64_t taps = g.kernel_h * g.kernel_w, positions = g.out_h * g.out_w;
  const int64_t group_rows = g.in_channels / g.groups * taps, rows = g.in_channels * taps;
  const int64_t group_out = g.out_channels / g.groups;
  const int64_t chunk = chunk_images(g.batch, rows * positions);
  Scratch columns(chunk * rows * positions, device);
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t images = std::min(chunk, g.batch - first);
    launch_contiguous_elementwise(
        images * rows * positions,
        Im2col{s, input + first * g.in_channels * g.in_h * g.in_w, columns.get(), images, true}, stream);
    double* out = output + first * g.out_channels * positions;
    // output[b, group] [Og, P] = weight[group] [Og, Cg K] x columns[b, group] [Cg K, P], batched
    // over whichever of images and groups is larger.
    if (g.groups <= images) {
      for (int64_t group = 0; group < g.groups; ++group)
        gemm_batched(kFloat64, images, false, false, group_out, positions, group_rows, 1.0,
                     weight + group * group_out * group_rows, group_rows, 0,
                     columns.get() + group * group_rows * positions, positions, rows * positions, 0.0,
                     out + group * group_out * positions, positions, g.out_channels * positions, device);
    } else {
      for (int64_t b = 0; b < images; ++b)
        gemm_batched(kFloat64, g.groups, false, false, group_out, positions, group_rows, 1.0, weight, group_rows,
                     group_out * group_rows, columns.get() + b * rows * positions, positions, group_rows * positions,
                     0.0, out + b * g.out_channels * positions, positions, group_out * positions, device);
    }
  }
}

void conv2d_backward_input_gemm(const Conv2dGeometry& g, const double* grad_output, const double* weight,
                                double* grad_input, int device) {
  DeviceGuard guard(device);
  const StreamHandle stream = current_stream(device);
  const ColumnShape s = column_shape(g);
  const int64_t taps = g.kernel_h * g.kernel_w, positions = g.out_h * g.out_w;
  const int64_t group_rows = g.in_channels / g.groups * taps, rows = g.in_channels * taps;
  const int64_t group_out = g.out_channels / g.groups;
  const int64_t chunk = chunk_images(g.batch, rows * positions);
  Scratch columns(chunk * rows * positions, device);
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t images = std::min(chunk, g.batch - first);
    const double* gy = grad_output + first * g.out_channels * positions;
    // columns[b, group] [Cg K, P] = weight[group]^T [Cg K, Og] x grad_output[b, group] [Og, P].
    if (g.groups <= images) {
      for (int64_t group = 0; group < g.groups; ++group)
        gemm_batched(kFloat64, images, true, false, group_rows, positions, group_out, 1.0,
                     weight + group * group_out * group_rows, group_rows, 0, gy + group * group_out * positions,
                     positions, g.out_channels * positions, 0.0, columns.get() + group * group_rows * positions,
                     positions, rows * positions, device);
    } else {
      for (int64_t b = 0; b < images; ++b)
        gemm_batched(kFloat64, g.groups, true, false, group_rows, positions, group_out, 1.0, weight, group_rows,
                     group_out * group_rows, gy + b * g.out_channels * positions, positions, group_out * positions,
                     0.0, columns.get() + b * rows * positions, positions, group_rows * positions, device);
    }
    launch_contiguous_elementwise(images * g.in_channels * g.in_h * g.in_w,
                                  Col2im{s, columns.get(), grad_input + first * g.in_channels * g.in_h * g.in_w},
                                  stream);
  }
}

void conv2d_backward_weight_gemm(const Conv2dGeometry& g, const double* grad_output, const double* input,
                                 double* grad_weight, int device) {
  DeviceGuard guard(device);
  const StreamHandle stream = current_stream(device);
  const ColumnShape s = column_shape(g);
  const int64_t taps = g.kernel_h * g.kernel_w, positions = g.out_h * g.out_w;
  const int64_t group_rows = g.in_channels / g.groups * taps, rows = g.in_channels * taps;
  const int64_t group_out = g.out_channels / g.groups;
  const int64_t chunk = chunk_images(g.batch, (rows + g.out_channels) * positions);
  Scratch columns(chunk * rows * positions, device);
  Scratch gradients(chunk * g.out_channels * positions, device);
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t images = std::min(chunk, g.batch - first);
    const int64_t span = images * positions;  // one row of either matrix
    launch_contiguous_elementwise(
        images * rows * positions,
        Im2col{s, input + first * g.in_channels * g.in_h * g.in_w, columns.get(), images, false}, stream);
    launch_contiguous_elementwise(
        images * g.out_channels * positions,
        ChannelMajor{grad_output + first * g.out_channels * positions, gradients.get(), images, g.out_channels,
                     positions},
        stream);
    // grad_weight[group] [Og, Cg K] (+)= gradients[group] [Og, images P] x columns[group]^T [images P, Cg K].
    gemm_batched(kFloat64, g.groups, false, true, group_out, group_rows, span, 1.0, gradients.get(), span,
                 group_out * span, columns.get(), span, group_rows * span, first == 0 ? 0.0 : 1.0, grad_weight,
                 group_rows, group_out * group_rows, device);
  }
}

}  // namespace gradiens::kernels::cuda
