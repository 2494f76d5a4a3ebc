// max_pool2d and avg_pool2d on the GPU, forward and backward, NCHW and NHWC,
// with kernels::cpu's conventions (kernels/cpu/conv.cpp): the same windows, the
// same tie and NaN rule for the max, the same divisors for the mean, and the
// same order of every sum, so float32 and float64 results equal the CPU's
// bitwise. Forward: one thread per output element. Backward: one thread per
// input element gathering from the windows that cover it, in the order the CPU
// scatters them (deterministic, no atomics).

#include "kernels/cuda/conv.h"
#include "kernels/cuda/device_math.cuh"

namespace gradiens::kernels::cuda {
namespace {

__device__ inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ inline int64_t larger(int64_t a, int64_t b) { return a < b ? b : a; }

// The position of element i of a [N, C, H, W] tensor stored in `layout`.
struct Position {
  int64_t n, c, h, w;
};

__device__ inline Position position_of(int64_t i, int64_t channels, int64_t height, int64_t width, ConvLayout layout) {
  if (layout == ConvLayout::NCHW)
    return {i / (width * height * channels), i / (width * height) % channels, i / width % height, i % width};
  return {i / (width * height * channels), i % channels, i / (width * channels) % height, i / channels % width};
}

__device__ inline int64_t offset_of(const Position& at, int64_t channels, int64_t height, int64_t width,
                                    ConvLayout layout) {
  if (layout == ConvLayout::NCHW) return ((at.n * channels + at.c) * height + at.h) * width + at.w;
  return ((at.n * height + at.h) * width + at.w) * channels + at.c;
}

// ---- max pooling ----------------------------------------------------------------

// max_window of kernels/cpu/conv.cpp: the first tap inside the plane and the ends.
struct MaxWindow {
  int64_t h_start, h_end, w_start, w_end;
};

__device__ inline MaxWindow max_window(const Pool2dGeometry& g, int64_t oh, int64_t ow) {
  int64_t h_start = oh * g.stride_h - g.pad_h, w_start = ow * g.stride_w - g.pad_w;
  const int64_t h_end = smaller(h_start + (g.kernel_h - 1) * g.dilation_h + 1, g.in_h);
  const int64_t w_end = smaller(w_start + (g.kernel_w - 1) * g.dilation_w + 1, g.in_w);
  while (h_start < 0) h_start += g.dilation_h;
  while (w_start < 0) w_start += g.dilation_w;
  return {h_start, h_end, w_start, w_end};
}

// A value replaces the running max when it is larger or NaN: the first max wins
// ties and the last NaN wins, as on the CPU.
template <class T>
struct MaxPoolForward {
  Pool2dGeometry g;
  const T* input;
  T* output;
  int64_t* indices;
  __device__ void operator()(int64_t i) const {
    const Position at = position_of(i, g.channels, g.out_h, g.out_w, g.layout);
    const MaxWindow win = max_window(g, at.h, at.w);
    int64_t best_index = win.h_start * g.in_w + win.w_start;
    T best = -std::numeric_limits<T>::infinity();
    for (int64_t h = win.h_start; h < win.h_end; h += g.dilation_h)
      for (int64_t w = win.w_start; w < win.w_end; w += g.dilation_w) {
        const T v = input[offset_of({at.n, at.c, h, w}, g.channels, g.in_h, g.in_w, g.layout)];
        if (v > best || v != v) {
          best = v;
          best_index = h * g.in_w + w;
        }
      }
    output[i] = best;
    indices[i] = best_index;
  }
};

// The outputs oh in [first, last] whose windows (kernel taps `dilation` apart
// from oh * stride - pad) can reach input row h; clipped to [0, out).
struct Covering {
  int64_t first, last;
};

__device__ inline Covering covering(int64_t h, int64_t out, int64_t kernel_span, int64_t stride, int64_t pad) {
  // oh * stride - pad <= h  and  oh * stride - pad + kernel_span - 1 >= h.
  const int64_t low = h + pad - (kernel_span - 1);
  const int64_t first = low <= 0 ? 0 : (low + stride - 1) / stride;
  const int64_t last = smaller((h + pad) / stride, out - 1);
  return {first, last};
}

// Each input element adds the gradients of the windows whose argmax it is, in
// the order (oh, ow) the CPU's scatter visits them.
template <class T>
struct MaxPoolBackward {
  Pool2dGeometry g;
  const T* grad_output;
  const int64_t* indices;
  T* grad_input;
  __device__ void operator()(int64_t i) const {
    const Position at = position_of(i, g.channels, g.in_h, g.in_w, g.layout);
    const int64_t self = at.h * g.in_w + at.w;
    const Covering rows = covering(at.h, g.out_h, (g.kernel_h - 1) * g.dilation_h + 1, g.stride_h, g.pad_h);
    const Covering columns = covering(at.w, g.out_w, (g.kernel_w - 1) * g.dilation_w + 1, g.stride_w, g.pad_w);
    T total = 0;
    for (int64_t oh = rows.first; oh <= rows.last; ++oh)
      for (int64_t ow = columns.first; ow <= columns.last; ++ow) {
        const int64_t o = offset_of({at.n, at.c, oh, ow}, g.channels, g.out_h, g.out_w, g.layout);
        if (indices[o] == self) total += grad_output[o];
      }
    grad_input[i] = total;
  }
};

// ---- average pooling ------------------------------------------------------------

// avg_window of kernels/cpu/conv.cpp: the window clipped to the plane, and its divisor.
struct AvgWindow {
  int64_t h_start, h_end, w_start, w_end, divisor;
};

__device__ inline AvgWindow avg_window(const Pool2dGeometry& g, int64_t oh, int64_t ow, bool count_include_pad) {
  int64_t h_start = oh * g.stride_h - g.pad_h, w_start = ow * g.stride_w - g.pad_w;
  int64_t h_end = smaller(h_start + g.kernel_h, g.in_h + g.pad_h);
  int64_t w_end = smaller(w_start + g.kernel_w, g.in_w + g.pad_w);
  const int64_t padded_size = (h_end - h_start) * (w_end - w_start);
  h_start = larger(h_start, 0);
  w_start = larger(w_start, 0);
  h_end = smaller(h_end, g.in_h);
  w_end = smaller(w_end, g.in_w);
  return {h_start, h_end, w_start, w_end, count_include_pad ? padded_size : (h_end - h_start) * (w_end - w_start)};
}

template <class T>
struct AvgPoolForward {
  Pool2dGeometry g;
  const T* input;
  T* output;
  bool count_include_pad;
  __device__ void operator()(int64_t i) const {
    const Position at = position_of(i, g.channels, g.out_h, g.out_w, g.layout);
    const AvgWindow win = avg_window(g, at.h, at.w, count_include_pad);
    T total = 0;
    for (int64_t h = win.h_start; h < win.h_end; ++h)
      for (int64_t w = win.w_start; w < win.w_end; ++w)
        total += input[offset_of({at.n, at.c, h, w}, g.channels, g.in_h, g.in_w, g.layout)];
    output[i] = total / static_cast<T>(win.divisor);
  }
};

// Each input element adds grad / divisor of every window that holds it, in (oh, ow) order.
template <class T>
struct AvgPoolBackward {
  Pool2dGeometry g;
  const T* grad_output;
  T* grad_input;
  bool count_include_pad;
  __device__ void operator()(int64_t i) const {
    const Position at = position_of(i, g.channels, g.in_h, g.in_w, g.layout);
    const Covering rows = covering(at.h, g.out_h, g.kernel_h, g.stride_h, g.pad_h);
    const Covering columns = covering(at.w, g.out_w, g.kernel_w, g.stride_w, g.pad_w);
    T total = 0;
    for (int64_t oh = rows.first; oh <= rows.last; ++oh)
      for (int64_t ow = columns.first; ow <= columns.last; ++ow) {
        const AvgWindow win = avg_window(g, oh, ow, count_include_pad);
        if (at.h < win.h_start || at.h >= win.h_end || at.w < win.w_start || at.w >= win.w_end) continue;
        const int64_t o = offset_of({at.n, at.c, oh, ow}, g.channels, g.out_h, g.out_w, g.layout);
        total += grad_output[o] / static_cast<T>(win.divisor);
      }
    grad_input[i] = total;
  }
};

void check_pool(const Pool2dGeometry& g, const char* op) {
  GD_CHECK(g.batch >= 0 && g.channels >= 0 && g.in_h >= 0 && g.in_w >= 0 && g.out_h >= 0 && g.out_w >= 0 &&
               g.kernel_h > 0 && g.kernel_w > 0 && g.stride_h > 0 && g.stride_w > 0 && g.pad_h >= 0 &&
               g.pad_w >= 0 && g.dilation_h > 0 && g.dilation_w > 0,
           std::string(op) + ": invalid pooling geometry");
}

int64_t input_numel(const Pool2dGeometry& g) { return g.batch * g.channels * g.in_h * g.in_w; }
int64_t output_numel(const Pool2dGeometry& g) { return g.batch * g.channels * g.out_h * g.out_w; }

}  // namespace

void max_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output, int64_t* indices,
                        StreamHandle stream) {
  check_pool(g, "max_pool2d");
  dispatch_cuda_floating(dtype, "max_pool2d", [&]<class T>() {
    launch_contiguous_elementwise(
        output_numel(g), MaxPoolForward<T>{g, static_cast<const T*>(input), static_cast<T*>(output), indices}, stream);
  });
}

void max_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, const int64_t* indices,
                         void* grad_input, StreamHandle stream) {
  check_pool(g, "max_pool2d_backward");
  dispatch_cuda_floating(dtype, "max_pool2d_backward", [&]<class T>() {
    launch_contiguous_elementwise(
        input_numel(g),
        MaxPoolBackward<T>{g, static_cast<const T*>(grad_output), indices, static_cast<T*>(grad_input)}, stream);
  });
}

void avg_pool2d_forward(ScalarType dtype, const Pool2dGeometry& g, const void* input, void* output,
                        bool count_include_pad, StreamHandle stream) {
  check_pool(g, "avg_pool2d");
  dispatch_cuda_floating(dtype, "avg_pool2d", [&]<class T>() {
    launch_contiguous_elementwise(
        output_numel(g),
        AvgPoolForward<T>{g, static_cast<const T*>(input), static_cast<T*>(output), count_include_pad}, stream);
  });
}

void avg_pool2d_backward(ScalarType dtype, const Pool2dGeometry& g, const void* grad_output, void* grad_input,
                         bool count_include_pad, StreamHandle stream) {
  check_pool(g, "avg_pool2d_backward");
  dispatch_cuda_floating(dtype, "avg_pool2d_backward", [&]<class T>() {
    launch_contiguous_elementwise(
        input_numel(g),
        AvgPoolBackward<T>{g, static_cast<const T*>(grad_output), static_cast<T*>(grad_input), count_include_pad},
        stream);
  });
}

}  // namespace gradiens::kernels::cuda
