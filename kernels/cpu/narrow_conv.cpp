// The direct convolution kernels of narrow_conv.h in Highway, compiled once per
// SIMD target and chosen at runtime (Note [Compiled SIMD targets] in
// kernels/cpu/vector_math.cpp).

// Note [Narrow convolutions]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A grey first layer (1 input channel, 3x3) does little arithmetic per output:
// 9 multiply-adds. oneDNN's blocked kernels run it near
// peak, but their NCHW <-> nChw16c reorders of the output and of its gradient
// move the whole activation twice more, and here the activation is the largest
// tensor of the network: on Fashion-MNIST's conv 1->32 3x3, [128, 1, 28, 28],
// the two reorders took 0.8 of the epoch's 11 s, more than the convolution's two
// passes. im2col + GEMM (oneDNN's gemm:jit, or ours) writes NCHW directly but
// loses more in its K = 9 GEMM than it saves. These kernels work on NCHW as it is:
// - each image is copied once into a zero-bordered buffer [C, H + 2 pad_h,
//   W + 2 pad_w], so every tap of an output vector is one unaligned load with no
//   bounds check; rows of at least 16 outputs let the last vector of a row start
//   at OW - lanes, overlapping the one before it, instead of being partial;
// - forward: at each vector position the taps' input vectors (at most 12) are
//   loaded once into registers and applied to every output channel, one
//   multiply-add per tap with the weight broadcast from memory; the output is
//   written once, in NCHW (the overlapping lanes twice, to the same values);
// - backward-weights: per output channel, the gradient vector is loaded once and
//   multiplied by each tap's input vector into one accumulator per tap; the bias
//   gradient is the same loop's sum, and the overlapping lanes are zeroed.
//   Threads split the output channels, each summing over the whole batch in a
//   fixed order, so the result does not depend on the thread count.

#include "kernels/cpu/narrow_conv.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/narrow_conv.cpp"
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)  // as kernels/cpu/vector_math.cpp
#include "hwy/foreach_target.h"                         // must come before highway.h
#include "hwy/highway.h"

#ifndef GRADIENS_NARROW_CONV_ONCE
#define GRADIENS_NARROW_CONV_ONCE
namespace gradiens::kernels::cpu {
inline constexpr int64_t kMaxNarrowTaps = 12;
}  // namespace gradiens::kernels::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace gradiens::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One image in its zero-bordered buffer, and where each tap (c, kh, kw) sits
// from an output's corner: (c * height + kh) * width + kw.
template <class T>
struct PaddedImage {
  int64_t height = 0, width = 0, taps = 0;
  std::array<int64_t, kMaxNarrowTaps> tap_offset{};
  std::vector<T> data;

  explicit PaddedImage(const Conv2dGeometry& g)
      : height(g.in_h + 2 * g.pad_h),
        width(g.in_w + 2 * g.pad_w),
        taps(g.in_channels * g.kernel_h * g.kernel_w),
        data(static_cast<size_t>(g.in_channels * height * width), T(0)) {
    int64_t k = 0;
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t kh = 0; kh < g.kernel_h; ++kh)
        for (int64_t kw = 0; kw < g.kernel_w; ++kw)
          tap_offset[static_cast<size_t>(k++)] = (c * height + kh) * width + kw;
  }

  // Copies image n's channels inside the zero border (which stays zero).
  void load(const Conv2dGeometry& g, const T* input, int64_t n) {
    const T* image = input + n * g.in_channels * g.in_h * g.in_w;
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t h = 0; h < g.in_h; ++h) {
        const T* row = image + (c * g.in_h + h) * g.in_w;
        std::copy(row, row + g.in_w, data.data() + (c * height + h + g.pad_h) * width + g.pad_w);
      }
  }
};

// A row's output vectors start at 0, lanes, 2 lanes, ...; the last one starts at
// out_w - lanes (out_w >= lanes: narrow_conv_applies), overlapping the one before
// it by `overlap` lanes.
inline int64_t last_start(int64_t out_w, int64_t lanes) { return out_w - lanes; }

// Output channels [0, outs) at one vector position: the kTaps input vectors are
// loaded once and applied to every channel.
template <int kTaps, class D, class T = hn::TFromD<D>>
HWY_INLINE void forward_taps(D d, const T* corner, const int64_t* offset, const T* weight, const T* bias, int64_t outs,
                             int64_t plane, T* at) {
  hn::Vec<D> in[kTaps];
  for (int k = 0; k < kTaps; ++k) in[k] = hn::LoadU(d, corner + offset[k]);
  for (int64_t o = 0; o < outs; ++o) {
    const T* w = weight + o * kTaps;
    auto a = bias != nullptr ? hn::Set(d, bias[o]) : hn::Zero(d);
    for (int k = 0; k < kTaps; ++k) a = hn::MulAdd(hn::Set(d, w[k]), in[k], a);
    hn::StoreU(a, d, at + o * plane);
  }
}

// Calls f(std::integral_constant<int, taps>{}) for taps in [1, kMaxNarrowTaps], so
// that the kernels' tap loops have constant trip counts (their vectors stay in registers).
template <class F>
HWY_INLINE void with_tap_count(int64_t taps, F&& f) {
  [&]<int... K>(std::integer_sequence<int, K...>) {
    (void)((taps == K + 1 ? (f(std::integral_constant<int, K + 1>{}), true) : false) || ...);
  }
  (std::make_integer_sequence<int, static_cast<int>(kMaxNarrowTaps)>{});
}

// Output channels go in groups of 8, a group's rows written one vector position
// after another: a plane of 1024 floats (32 x 32) puts every channel's row in
// the same L1 set, and 8 streams stay within its ways.
template <class T>
void forward_loop(const Conv2dGeometry& g, const T* input, const T* weight, const T* bias, T* output) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t outs = g.out_channels, plane = g.out_h * g.out_w;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, outs * plane));
  parallel_for(0, g.batch, grain, [&](int64_t begin, int64_t end) {
    PaddedImage<T> image(g);
    for (int64_t n = begin; n < end; ++n) {
      image.load(g, input, n);
      for (int64_t group = 0; group < outs; group += 8) {
        const int64_t count = std::min<int64_t>(8, outs - group);
        T* out = output + (n * outs + group) * plane;
        for (int64_t oh = 0; oh < g.out_h; ++oh)
          for (int64_t ow = 0;; ow = std::min(ow + lanes, last_start(g.out_w, lanes))) {
            // Overlapping outputs of the last vector are computed twice, the same way.
            with_tap_count(image.taps, [&](auto taps) {
              forward_taps<decltype(taps)::value>(d, image.data.data() + oh * image.width + ow, image.tap_offset.data(),
                                                  weight + group * image.taps, bias != nullptr ? bias + group : nullptr,
                                                  count, plane, out + oh * g.out_w + ow);
            });
            if (ow == last_start(g.out_w, lanes)) break;
          }
      }
    }
  });
}

// One output channel's gradient over one image, for its kTaps taps:
// the gradient vector loaded once and multiplied by each tap's input vector. In
// the last vector of a row the lanes that overlap the one before are zeroed, in
// the gradient and in the inputs (0 * inf would be NaN).
template <int kTaps, class D, class T = hn::TFromD<D>>
HWY_INLINE void weight_taps(D d, const Conv2dGeometry& g, const PaddedImage<T>& image, const int64_t* offset,
                            const T* gy, T* gw, T* gb) {
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t last = last_start(g.out_w, lanes);
  const int64_t overlap = (g.out_w % lanes == 0) ? 0 : lanes - g.out_w % lanes;
  const int64_t full_end = overlap == 0 ? g.out_w : last;  // the vectors that overlap nothing
  // All bits set in the lanes that overlap nothing: an And, not a masked load
  // (which Zen runs far slower here).
  const auto fresh = hn::VecFromMask(d, hn::Not(hn::FirstN(d, static_cast<size_t>(overlap))));
  hn::Vec<D> acc[kTaps];
  for (int k = 0; k < kTaps; ++k) acc[k] = hn::Zero(d);
  auto sum = hn::Zero(d);
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const T* row = gy + oh * g.out_w;
    const T* corner_row = image.data.data() + oh * image.width;
    for (int64_t ow = 0; ow < full_end; ow += lanes) {
      const auto gv = hn::LoadU(d, row + ow);
      const T* corner = corner_row + ow;
      for (int k = 0; k < kTaps; ++k) acc[k] = hn::MulAdd(gv, hn::LoadU(d, corner + offset[k]), acc[k]);
      sum = hn::Add(sum, gv);
    }
    if (overlap == 0) continue;
    const auto gv = hn::And(fresh, hn::LoadU(d, row + last));
    const T* corner = corner_row + last;
    for (int k = 0; k < kTaps; ++k) acc[k] = hn::MulAdd(gv, hn::And(fresh, hn::LoadU(d, corner + offset[k])), acc[k]);
    sum = hn::Add(sum, gv);
  }
  for (int k = 0; k < kTaps; ++k) gw[k] += hn::GetLane(hn::SumOfLanes(d, acc[k]));
  if (gb != nullptr) *gb += hn::GetLane(hn::SumOfLanes(d, sum));
}

template <class T>
void backward_weight_loop(const Conv2dGeometry& g, const T* grad_output, const T* input, T* grad_weight, T* grad_bias) {
  const hn::ScalableTag<T> d;
  const int64_t outs = g.out_channels, plane = g.out_h * g.out_w;
  const int64_t taps = g.in_channels * g.kernel_h * g.kernel_w;
  std::fill(grad_weight, grad_weight + outs * taps, T(0));
  if (grad_bias != nullptr) std::fill(grad_bias, grad_bias + outs, T(0));
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, g.batch * plane * taps));
  parallel_for(0, outs, grain, [&](int64_t begin, int64_t end) {
    PaddedImage<T> image(g);
    for (int64_t n = 0; n < g.batch; ++n) {
      image.load(g, input, n);
      for (int64_t o = begin; o < end; ++o)
        with_tap_count(taps, [&](auto count) {
          weight_taps<decltype(count)::value>(d, g, image, image.tap_offset.data(),
                                              grad_output + (n * outs + o) * plane, grad_weight + o * taps,
                                              grad_bias != nullptr ? grad_bias + o : nullptr);
        });
    }
  });
}

// HWY_EXPORT needs plain (non-template) functions, one per dtype.
void forward_float(const Conv2dGeometry& g, const float* input, const float* weight, const float* bias, float* output) {
  forward_loop(g, input, weight, bias, output);
}
void forward_double(const Conv2dGeometry& g, const double* input, const double* weight, const double* bias,
                    double* output) {
  forward_loop(g, input, weight, bias, output);
}
void backward_weight_float(const Conv2dGeometry& g, const float* grad_output, const float* input, float* grad_weight,
                           float* grad_bias) {
  backward_weight_loop(g, grad_output, input, grad_weight, grad_bias);
}
void backward_weight_double(const Conv2dGeometry& g, const double* grad_output, const double* input,
                            double* grad_weight, double* grad_bias) {
  backward_weight_loop(g, grad_output, input, grad_weight, grad_bias);
}

}  // namespace HWY_NAMESPACE
}  // namespace gradiens::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gradiens::kernels::cpu {

HWY_EXPORT(forward_float);
HWY_EXPORT(forward_double);
HWY_EXPORT(backward_weight_float);
HWY_EXPORT(backward_weight_double);

bool narrow_conv_applies(const Conv2dGeometry& g) {
  return g.layout == ConvLayout::NCHW && g.weight_layout == ConvLayout::NCHW && g.groups == 1 && g.stride_h == 1 &&
         g.stride_w == 1 && g.dilation_h == 1 && g.dilation_w == 1 &&
         g.in_channels * g.kernel_h * g.kernel_w <= kMaxNarrowTaps && g.batch > 0 && g.in_channels > 0 &&
         g.out_channels > 0 && g.out_h > 0 && g.out_w >= 16 && g.out_h == g.in_h + 2 * g.pad_h - g.kernel_h + 1 &&
         g.out_w == g.in_w + 2 * g.pad_w - g.kernel_w + 1;
}

void narrow_conv_forward(const Conv2dGeometry& g, const float* input, const float* weight, const float* bias,
                         float* output) {
  HWY_DYNAMIC_DISPATCH(forward_float)(g, input, weight, bias, output);
}
void narrow_conv_forward(const Conv2dGeometry& g, const double* input, const double* weight, const double* bias,
                         double* output) {
  HWY_DYNAMIC_DISPATCH(forward_double)(g, input, weight, bias, output);
}
void narrow_conv_backward_weight(const Conv2dGeometry& g, const float* grad_output, const float* input,
                                 float* grad_weight, float* grad_bias) {
  HWY_DYNAMIC_DISPATCH(backward_weight_float)(g, grad_output, input, grad_weight, grad_bias);
}
void narrow_conv_backward_weight(const Conv2dGeometry& g, const double* grad_output, const double* input,
                                 double* grad_weight, double* grad_bias) {
  HWY_DYNAMIC_DISPATCH(backward_weight_double)(g, grad_output, input, grad_weight, grad_bias);
}

}  // namespace gradiens::kernels::cpu
#endif  // HWY_ONCE
