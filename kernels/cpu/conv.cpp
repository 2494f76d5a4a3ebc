// CPU convolution and pooling kernels on NCHW or NHWC buffers: float32 convolution
// through oneDNN primitives cached per thread (Note [Convolution cache], Note
// [Convolution layouts]), float64 (and any float32 shape oneDNN refuses) through
// im2col + GEMM, narrow NCHW inputs (a first layer) through direct kernels
// (narrow_conv.h), pooling as direct loops.
#include "kernels/cpu/conv.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/narrow_conv.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/error.h"

namespace gradiens::kernels::cpu {
namespace {

struct ConvScratchpad;  // tags this file's per-thread oneDNN workspace (scratchpad and staged arguments)

// ---------------------------------------------------------------------------------
// im2col + GEMM, for every dtype and both layouts.
//
// A group's weight is a matrix [O/G, taps] whatever its layout, with the taps of
// an OIHW weight ordered (c, kh, kw) and those of an OHWI weight (kh, kw, c); the
// col matrix orders its taps the same way, so one GEMM applies them. NCHW images
// give col [taps, OH * OW] (the output's rows are channels); NHWC images give col
// [OH * OW, taps] (the output's rows are pixels, C apart).

// Where tap (c, kh, kw) sits in a weight row: c * channel_step + (kh * KW + kw) * kernel_step.
struct TapOrder {
  int64_t channel_step, kernel_step;
};

TapOrder tap_order(const Conv2dGeometry& g) {
  return g.weight_layout == Layout::NCHW ? TapOrder{g.kernel_h * g.kernel_w, 1} : TapOrder{1, g.in_channels / g.groups};
}

// col [C/G * KH * KW, OH * OW] of one NCHW image and group; taps outside the plane read 0.
template <class T>
void im2col(const Conv2dGeometry& g, const T* image, T* col) {
  const int64_t channels = g.in_channels / g.groups, plane = g.out_h * g.out_w;
  const TapOrder order = tap_order(g);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        T* row = col + (c * order.channel_step + (kh * g.kernel_w + kw) * order.kernel_step) * plane;
        const T* src = image + c * g.in_h * g.in_w;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const int64_t h = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          T* dst = row + oh * g.out_w;
          if (h < 0 || h >= g.in_h) {
            std::fill(dst, dst + g.out_w, T(0));
            continue;
          }
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const int64_t w = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
            dst[ow] = w >= 0 && w < g.in_w ? src[h * g.in_w + w] : T(0);
          }
        }
      }
}

// The adjoint of im2col: adds each col entry back into the image it was read from.
template <class T>
void col2im(const Conv2dGeometry& g, const T* col, T* image) {
  const int64_t channels = g.in_channels / g.groups, plane = g.out_h * g.out_w;
  const TapOrder order = tap_order(g);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const T* row = col + (c * order.channel_step + (kh * g.kernel_w + kw) * order.kernel_step) * plane;
        T* dst = image + c * g.in_h * g.in_w;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const int64_t h = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          if (h < 0 || h >= g.in_h) continue;
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const int64_t w = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
            if (w >= 0 && w < g.in_w) dst[h * g.in_w + w] += row[oh * g.out_w + ow];
          }
        }
      }
}

// col [OH * OW, C/G * KH * KW] of one NHWC image and group (image points at the
// group's first channel; pixels are C apart).
template <class T>
void im2col_nhwc(const Conv2dGeometry& g, const T* image, T* col) {
  const int64_t channels = g.in_channels / g.groups, taps = channels * g.kernel_h * g.kernel_w;
  const TapOrder order = tap_order(g);
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      T* row = col + (oh * g.out_w + ow) * taps;
      for (int64_t kh = 0; kh < g.kernel_h; ++kh)
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          T* dst = row + (kh * g.kernel_w + kw) * order.kernel_step;
          const int64_t h = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          const int64_t w = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
          if (h < 0 || h >= g.in_h || w < 0 || w >= g.in_w) {
            for (int64_t c = 0; c < channels; ++c) dst[c * order.channel_step] = T(0);
            continue;
          }
          const T* src = image + (h * g.in_w + w) * g.in_channels;
          for (int64_t c = 0; c < channels; ++c) dst[c * order.channel_step] = src[c];
        }
    }
}

// The adjoint of im2col_nhwc.
template <class T>
void col2im_nhwc(const Conv2dGeometry& g, const T* col, T* image) {
  const int64_t channels = g.in_channels / g.groups, taps = channels * g.kernel_h * g.kernel_w;
  const TapOrder order = tap_order(g);
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const T* row = col + (oh * g.out_w + ow) * taps;
      for (int64_t kh = 0; kh < g.kernel_h; ++kh)
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const int64_t h = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          const int64_t w = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
          if (h < 0 || h >= g.in_h || w < 0 || w >= g.in_w) continue;
          const T* src = row + (kh * g.kernel_w + kw) * order.kernel_step;
          T* dst = image + (h * g.in_w + w) * g.in_channels;
          for (int64_t c = 0; c < channels; ++c) dst[c] += src[c * order.channel_step];
        }
    }
}

struct GemmLayout {
  int64_t group_in, group_out, taps, plane;  // C/G, O/G, C/G * KH * KW, OH * OW
  int64_t image, output_image;               // elements per image of input and output
  int64_t group_offset, output_group_offset;  // from a group's first input (output) element to the next's
};

GemmLayout gemm_layout(const Conv2dGeometry& g) {
  const int64_t group_in = g.in_channels / g.groups, group_out = g.out_channels / g.groups;
  const bool nchw = g.layout == Layout::NCHW;
  return {group_in,
          group_out,
          group_in * g.kernel_h * g.kernel_w,
          g.out_h * g.out_w,
          g.in_channels * g.in_h * g.in_w,
          g.out_channels * g.out_h * g.out_w,
          nchw ? group_in * g.in_h * g.in_w : group_in,
          nchw ? group_out * g.out_h * g.out_w : group_out};
}

// Per group, NCHW: output[n, g] (O/G x OH*OW) = weight[g] (O/G x taps) . col (taps x OH*OW);
// NHWC: output[n, g] (OH*OW x O/G, rows O apart) = col (OH*OW x taps) . weight[g]^T.
template <class T>
void gemm_conv_forward(const Conv2dGeometry& g, const T* input, const T* weight, const T* bias, T* output) {
  const GemmLayout l = gemm_layout(g);
  const bool nchw = g.layout == Layout::NCHW;
  std::vector<T> col(static_cast<size_t>(l.taps * l.plane));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* image = input + n * l.image + grp * l.group_offset;
      const T* w = weight + grp * l.group_out * l.taps;
      T* out = output + n * l.output_image + grp * l.output_group_offset;
      const T* b = bias != nullptr ? bias + grp * l.group_out : nullptr;
      if (nchw) {
        im2col(g, image, col.data());
        gemm(false, false, l.group_out, l.plane, l.taps, T(1), w, l.taps, col.data(), l.plane, T(0), out, l.plane);
        if (b != nullptr)
          for (int64_t o = 0; o < l.group_out; ++o)
            for (int64_t p = 0; p < l.plane; ++p) out[o * l.plane + p] += b[o];
      } else {
        im2col_nhwc(g, image, col.data());
        gemm(false, true, l.plane, l.group_out, l.taps, T(1), col.data(), l.taps, w, l.taps, T(0), out,
             g.out_channels);
        if (b != nullptr)
          for (int64_t p = 0; p < l.plane; ++p)
            for (int64_t o = 0; o < l.group_out; ++o) out[p * g.out_channels + o] += b[o];
      }
    }
}

// col = weight[g]^T . grad_output[n, g] (NCHW; the transposes for NHWC), then col2im.
template <class T>
void gemm_conv_backward_input(const Conv2dGeometry& g, const T* grad_output, const T* weight, T* grad_input) {
  const GemmLayout l = gemm_layout(g);
  const bool nchw = g.layout == Layout::NCHW;
  std::fill(grad_input, grad_input + g.batch * l.image, T(0));
  std::vector<T> col(static_cast<size_t>(l.taps * l.plane));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* gy = grad_output + n * l.output_image + grp * l.output_group_offset;
      const T* w = weight + grp * l.group_out * l.taps;
      T* image = grad_input + n * l.image + grp * l.group_offset;
      if (nchw) {
        gemm(true, false, l.taps, l.plane, l.group_out, T(1), w, l.taps, gy, l.plane, T(0), col.data(), l.plane);
        col2im(g, col.data(), image);
      } else {
        gemm(false, false, l.plane, l.taps, l.group_out, T(1), gy, g.out_channels, w, l.taps, T(0), col.data(),
             l.taps);
        col2im_nhwc(g, col.data(), image);
      }
    }
}

// grad_weight[g] += grad_output[n, g] . col^T (NCHW; the transposes for NHWC), summed over the batch.
template <class T>
void gemm_conv_backward_weight(const Conv2dGeometry& g, const T* grad_output, const T* input, T* grad_weight) {
  const GemmLayout l = gemm_layout(g);
  const bool nchw = g.layout == Layout::NCHW;
  std::fill(grad_weight, grad_weight + g.out_channels * l.taps, T(0));
  std::vector<T> col(static_cast<size_t>(l.taps * l.plane));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* gy = grad_output + n * l.output_image + grp * l.output_group_offset;
      const T* image = input + n * l.image + grp * l.group_offset;
      T* gw = grad_weight + grp * l.group_out * l.taps;
      if (nchw) {
        im2col(g, image, col.data());
        gemm(false, true, l.group_out, l.taps, l.plane, T(1), gy, l.plane, col.data(), l.plane, T(1), gw, l.taps);
      } else {
        im2col_nhwc(g, image, col.data());
        gemm(true, false, l.group_out, l.taps, l.plane, T(1), gy, g.out_channels, col.data(), l.taps, T(1), gw,
             l.taps);
      }
    }
}

// ---------------------------------------------------------------------------------
// oneDNN (float32)

enum class ConvPass { Forward, ForwardBias, BackwardInput, BackwardWeight, BackwardWeightBias };

struct ConvKey {
  Conv2dGeometry geometry;  // its layouts included: an NHWC primitive is another primitive
  ConvPass pass;
  int threads;
  bool operator==(const ConvKey&) const = default;
};

struct ConvKeyHash {
  size_t operator()(const ConvKey& key) const {
    const Conv2dGeometry& g = key.geometry;
    size_t seed = 0;
    for (int64_t v : {g.batch, g.in_channels, g.in_h, g.in_w, g.out_channels, g.kernel_h, g.kernel_w, g.out_h,
                      g.out_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w, g.groups,
                      static_cast<int64_t>(g.layout), static_cast<int64_t>(g.weight_layout),
                      static_cast<int64_t>(key.pass), static_cast<int64_t>(key.threads)})
      seed ^= std::hash<int64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    return seed;
  }
};

// A primitive bound to memory objects whose data pointers each call rewrites.
// Note [Convolution layouts]
// oneDNN's direct convolutions (jit:avx512_core) run on blocked layouts (nChw16c
// activations, OIhw16i16o weights) about 1.5x as fast as its im2col + GEMM path on
// plain NCHW, reorders included: conv 32->64 3x3 on [128, 32, 13, 13], 1 thread,
// forward / backward-data / backward-weights 8.0 / 9.2 / 8.6 ms plain against
// 6.0 / 6.4 / 7.1 ms blocked; 64->64 3x3 on [32, 64, 32, 32], 30 / 36 / 48 ms
// against 22 / 23 / 27 ms. So an NCHW call lets the primitive pick its layouts
// (`any`), and the caller's plain buffers are reordered into them (inputs) and out
// of them (outputs) in a per-thread workspace: tensors stay NCHW between calls.
// Three kinds of call keep the plain layout, where the blocked kernels lose or are
// untested: 1x1 kernels (a GEMM with no im2col: 2.8 against 3.8 ms on 64->256),
// backward-data with fewer than 8 input channels (a grey or RGB first layer: 1.9
// against 9.7 ms on 1->32), and grouped convolutions. A grey first layer (at most
// 12 taps, stride 1) skips oneDNN for its forward and weight passes: Note [Narrow
// convolutions] in narrow_conv.cpp.
// NHWC activations are passed as they are (oneDNN's brgconv and jit kernels take
// them), but oneDNN 2.6 has no fast NHWC kernel for plain weights (it falls back to
// its reference code, hundreds of times slower), so the weights there are `any` too.

bool blocked_activations(const Conv2dGeometry& g, ConvPass pass) {
  if (g.layout != Layout::NCHW || g.groups != 1 || g.kernel_h * g.kernel_w == 1) return false;
  return pass != ConvPass::BackwardInput || g.in_channels >= 8;
}

// One argument of a primitive: the caller's buffer (`user`, whose data handle every
// call rewrites) and, when the primitive wants another layout, a staged copy at
// `offset` in the thread's workspace with the reorder between them: the caller's
// -> staged before the call for an input, staged -> the caller's after it for an
// output.
struct ConvArg {
  dnnl::memory user, staged;
  dnnl::primitive reorder;  // empty when the primitive takes the caller's layout
  size_t offset = 0;
  bool output = false;
};

// A primitive bound to its arguments. The workspace holds the scratchpad (at 0)
// and the staged arguments.
struct BoundConv {
  dnnl::primitive primitive;  // empty when oneDNN has no implementation
  ConvArg src, weights, dst;  // (diff_)src, (diff_)weights, (diff_)dst of the pass
  dnnl::memory bias, scratchpad;
  size_t workspace_bytes = 0;
  std::unordered_map<int, dnnl::memory> args;
  std::string implementation;
};

size_t round_up_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

void bind_arg(BoundConv& bound, ConvArg& arg, int dnnl_arg, const dnnl::memory::desc& user_md,
              const dnnl::memory::desc& primitive_md, bool output) {
  const dnnl::engine& engine = onednn::cpu_engine();
  arg.user = dnnl::memory(user_md, engine, nullptr);
  arg.output = output;
  if (primitive_md == user_md) {
    bound.args.emplace(dnnl_arg, arg.user);
    return;
  }
  arg.staged = dnnl::memory(primitive_md, engine, nullptr);
  arg.offset = bound.workspace_bytes;
  bound.workspace_bytes += round_up_64(primitive_md.get_size());
  arg.reorder = output ? dnnl::reorder(arg.staged, arg.user) : dnnl::reorder(arg.user, arg.staged);
  bound.args.emplace(dnnl_arg, arg.staged);
}

BoundConv create_conv(const ConvKey& key) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const Conv2dGeometry& g = key.geometry;
  const auto f32 = memory::data_type::f32;
  const bool nhwc = g.layout == Layout::NHWC;
  const bool ohwi = g.weight_layout == Layout::NHWC;
  const bool blocked = blocked_activations(g, key.pass);
  const tag activations = nhwc ? tag::nhwc : tag::nchw;
  const memory::desc user_src_md({g.batch, g.in_channels, g.in_h, g.in_w}, f32, activations);
  const memory::desc user_dst_md({g.batch, g.out_channels, g.out_h, g.out_w}, f32, activations);
  const memory::desc user_weights_md =
      g.groups == 1
          ? memory::desc({g.out_channels, g.in_channels, g.kernel_h, g.kernel_w}, f32, ohwi ? tag::ohwi : tag::oihw)
          : memory::desc({g.groups, g.out_channels / g.groups, g.in_channels / g.groups, g.kernel_h, g.kernel_w},
                         f32, ohwi ? tag::gohwi : tag::goihw);
  const auto any_of = [](const memory::desc& md) { return memory::desc(md.dims(), md.data_type(), tag::any); };
  const memory::desc src_md = blocked ? any_of(user_src_md) : user_src_md;
  const memory::desc dst_md = blocked ? any_of(user_dst_md) : user_dst_md;
  const memory::desc weights_md = nhwc || blocked ? any_of(user_weights_md) : user_weights_md;
  const memory::desc bias_md({g.out_channels}, f32, tag::x);
  const memory::dims strides{g.stride_h, g.stride_w}, dilates{g.dilation_h - 1, g.dilation_w - 1};
  const memory::dims pad_l{g.pad_h, g.pad_w};
  // The right padding is whatever makes the last window fit; it may be negative when
  // the stride skips the plane's last rows.
  const memory::dims pad_r{(g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h + 1 - g.in_h - g.pad_h,
                           (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w + 1 - g.in_w - g.pad_w};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::engine& engine = onednn::cpu_engine();
  const auto algo = dnnl::algorithm::convolution_direct;
  BoundConv bound;
  try {
    const bool with_bias = key.pass == ConvPass::ForwardBias;
    auto forward_desc =
        with_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, src_md, weights_md,
                                                    bias_md, dst_md, strides, dilates, pad_l, pad_r)
                  : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, src_md, weights_md,
                                                    dst_md, strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc forward_pd(forward_desc, attr, engine);
    // The pass's primitive and the layouts it chose for (diff_)src, (diff_)weights, (diff_)dst.
    memory::desc scratchpad_md, primitive_src_md, primitive_weights_md, primitive_dst_md;
    int src_arg = DNNL_ARG_SRC, weights_arg = DNNL_ARG_WEIGHTS, dst_arg = DNNL_ARG_DIFF_DST;
    bool src_out = false, weights_out = false, dst_out = false;
    switch (key.pass) {
      case ConvPass::Forward:
      case ConvPass::ForwardBias:
        bound.primitive = dnnl::convolution_forward(forward_pd);
        scratchpad_md = forward_pd.scratchpad_desc();
        primitive_src_md = forward_pd.src_desc();
        primitive_weights_md = forward_pd.weights_desc();
        primitive_dst_md = forward_pd.dst_desc();
        bound.implementation = forward_pd.impl_info_str();
        dst_arg = DNNL_ARG_DST;
        dst_out = true;
        if (with_bias) {
          bound.bias = memory(bias_md, engine, nullptr);
          bound.args.emplace(DNNL_ARG_BIAS, bound.bias);
        }
        break;
      case ConvPass::BackwardInput: {
        dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(algo, src_md, weights_md, dst_md, strides, dilates, pad_l, pad_r),
            attr, engine, forward_pd);
        bound.primitive = dnnl::convolution_backward_data(pd);
        scratchpad_md = pd.scratchpad_desc();
        primitive_src_md = pd.diff_src_desc();
        primitive_weights_md = pd.weights_desc();
        primitive_dst_md = pd.diff_dst_desc();
        bound.implementation = pd.impl_info_str();
        src_arg = DNNL_ARG_DIFF_SRC;
        src_out = true;
        break;
      }
      case ConvPass::BackwardWeight:
      case ConvPass::BackwardWeightBias: {
        const bool bias_gradient = key.pass == ConvPass::BackwardWeightBias;
        dnnl::convolution_backward_weights::primitive_desc pd(
            bias_gradient ? dnnl::convolution_backward_weights::desc(algo, src_md, weights_md, bias_md, dst_md,
                                                                     strides, dilates, pad_l, pad_r)
                          : dnnl::convolution_backward_weights::desc(algo, src_md, weights_md, dst_md, strides,
                                                                     dilates, pad_l, pad_r),
            attr, engine, forward_pd);
        if (bias_gradient) {
          bound.bias = memory(bias_md, engine, nullptr);
          bound.args.emplace(DNNL_ARG_DIFF_BIAS, bound.bias);
        }
        bound.primitive = dnnl::convolution_backward_weights(pd);
        scratchpad_md = pd.scratchpad_desc();
        primitive_src_md = pd.src_desc();
        primitive_weights_md = pd.diff_weights_desc();
        primitive_dst_md = pd.diff_dst_desc();
        bound.implementation = pd.impl_info_str();
        weights_arg = DNNL_ARG_DIFF_WEIGHTS;
        weights_out = true;
        break;
      }
    }
    if (scratchpad_md.get_size() != 0) {
      bound.scratchpad = memory(scratchpad_md, engine, nullptr);
      bound.args.emplace(DNNL_ARG_SCRATCHPAD, bound.scratchpad);
      bound.workspace_bytes = round_up_64(scratchpad_md.get_size());
    }
    bind_arg(bound, bound.src, src_arg, user_src_md, primitive_src_md, src_out);
    bind_arg(bound, bound.weights, weights_arg, user_weights_md, primitive_weights_md, weights_out);
    bind_arg(bound, bound.dst, dst_arg, user_dst_md, primitive_dst_md, dst_out);
  } catch (const dnnl::error&) {
    return BoundConv{};  // cached empty: every call with this key takes im2col + GEMM
  }
  return bound;
}

// Note [Convolution cache]
// As for matmul (Note [Matmul cache] in gemm.cpp): creating a primitive costs far
// more than a small convolution, and a training loop reuses a few shapes. The map is
// per thread because the bound memory objects are rewritten by every call; when it
// fills up it is simply emptied, since a loop that cycles through more than
// kCapacity shapes gains little from any policy.
class ConvCache {
 public:
  static constexpr size_t kCapacity = 64;
  BoundConv& get(const ConvKey& key) {
    auto found = entries_.find(key);
    if (found != entries_.end()) return found->second;
    if (entries_.size() >= kCapacity) entries_.clear();
    return entries_.emplace(key, create_conv(key)).first->second;
  }
  size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<ConvKey, BoundConv, ConvKeyHash> entries_;
};

ConvCache& thread_conv_cache() {
  thread_local ConvCache cache;
  return cache;
}

using onednn::OmpThreadsScope;

// Threads pay from a few MFLOP on, as for oneDNN's matmul (Note [GEMM threads]).
int conv_threads(const Conv2dGeometry& g) {
  const double flops = 2.0 * static_cast<double>(g.batch * g.out_channels * g.out_h * g.out_w) *
                       static_cast<double>(g.in_channels / g.groups * g.kernel_h * g.kernel_w);
  return flops >= 4e6 ? gemm_threads() : 1;
}

// What testing::last_conv_run reports, per kernel and thread.
testing::ConvRun& last_run(testing::ConvKernel kernel) {
  thread_local std::array<testing::ConvRun, 3> runs;
  return runs[static_cast<size_t>(kernel)];
}

void record_run(testing::ConvKernel kernel, const Conv2dGeometry& g, const char* backend,
                const std::string& implementation = {}) {
  testing::ConvRun& run = last_run(kernel);
  run.backend = backend;
  run.layout = g.layout;
  run.weight_layout = g.weight_layout;
  run.implementation = implementation;
}

testing::ConvKernel kernel_of(ConvPass pass) {
  switch (pass) {
    case ConvPass::BackwardInput: return testing::ConvKernel::BackwardInput;
    case ConvPass::BackwardWeight:
    case ConvPass::BackwardWeightBias: return testing::ConvKernel::BackwardWeight;
    case ConvPass::Forward:
    case ConvPass::ForwardBias: break;
  }
  return testing::ConvKernel::Forward;
}

// Runs a bound primitive with its workspace at `workspace`. A non-null
// `staged_dst` holds the (diff_)dst already in the primitive's layout (a previous
// pass put it there), so it is read from there and not reordered again.
void run_conv(BoundConv& conv, std::byte* workspace, const float* src, const float* weights, const float* bias,
              const float* dst, std::byte* staged_dst = nullptr) {
  if (conv.scratchpad) conv.scratchpad.set_data_handle(workspace);
  const std::array<std::pair<ConvArg*, const float*>, 3> bound_args{
      {{&conv.src, src}, {&conv.weights, weights}, {&conv.dst, dst}}};
  for (auto [arg, data] : bound_args) {
    arg->user.set_data_handle(const_cast<float*>(data));
    if (arg->staged) arg->staged.set_data_handle(workspace + arg->offset);
  }
  if (staged_dst != nullptr) conv.dst.staged.set_data_handle(staged_dst);
  if (bias != nullptr) conv.bias.set_data_handle(const_cast<float*>(bias));
  dnnl::stream& stream = onednn::thread_stream();
  for (auto [arg, data] : bound_args)
    if (arg->reorder && !arg->output && !(staged_dst != nullptr && arg == &conv.dst))
      arg->reorder.execute(stream, {{DNNL_ARG_FROM, arg->user}, {DNNL_ARG_TO, arg->staged}});
  conv.primitive.execute(stream, conv.args);
  for (auto [arg, data] : bound_args)
    if (arg->reorder && arg->output)
      arg->reorder.execute(stream, {{DNNL_ARG_FROM, arg->staged}, {DNNL_ARG_TO, arg->user}});
  stream.wait();
}

std::byte* conv_workspace(size_t bytes) {
  return bytes != 0 ? static_cast<std::byte*>(onednn::thread_scratchpad<ConvScratchpad>(bytes)) : nullptr;
}

// Runs the cached primitive; false (having done nothing) when oneDNN has none.
bool onednn_conv(const Conv2dGeometry& g, ConvPass pass, const float* src, const float* weights,
                 const float* bias, const float* dst) {
  const int threads = conv_threads(g);
  const OmpThreadsScope omp_threads(threads);
  BoundConv& conv = thread_conv_cache().get(ConvKey{g, pass, threads});
  if (!conv.primitive) return false;
  run_conv(conv, conv_workspace(conv.workspace_bytes), src, weights, bias, dst);
  record_run(kernel_of(pass), g, "onednn", conv.implementation);
  return true;
}

// Both backward passes, as conv2d_backward describes; false (having done nothing)
// when oneDNN has no primitive for one of them.
bool onednn_conv_backward(const Conv2dGeometry& g, const float* grad_output, const float* input,
                          const float* weight, float* grad_input, float* grad_weight, float* grad_bias) {
  const int threads = conv_threads(g);
  const OmpThreadsScope omp_threads(threads);
  ConvCache& cache = thread_conv_cache();
  const ConvKey data_key{g, ConvPass::BackwardInput, threads};
  const ConvKey weight_key{g, grad_bias != nullptr ? ConvPass::BackwardWeightBias : ConvPass::BackwardWeight, threads};
  BoundConv* data = grad_input != nullptr ? &cache.get(data_key) : nullptr;
  BoundConv& weights = cache.get(weight_key);
  if (grad_input != nullptr) data = &cache.get(data_key);  // again: a full cache empties itself on insertion
  if ((data != nullptr && !data->primitive) || !weights.primitive) return false;
  const size_t data_bytes = data != nullptr ? data->workspace_bytes : 0;
  std::byte* workspace = conv_workspace(data_bytes + weights.workspace_bytes);
  // The weight pass reads the data pass's staged grad_output when both want the same layout.
  const bool shared = data != nullptr && data->dst.staged && weights.dst.staged &&
                      data->dst.staged.get_desc() == weights.dst.staged.get_desc();
  if (data != nullptr) {
    run_conv(*data, workspace, grad_input, weight, nullptr, grad_output);
    record_run(testing::ConvKernel::BackwardInput, g, "onednn", data->implementation);
  }
  run_conv(weights, workspace + data_bytes, input, grad_weight, grad_bias, grad_output,
           shared ? workspace + data->dst.offset : nullptr);
  record_run(testing::ConvKernel::BackwardWeight, g, "onednn", weights.implementation);
  return true;
}

// The direct kernels of narrow_conv.h, when they take the geometry (float32 and float64).
template <class T>
bool direct_forward(const Conv2dGeometry& g, const T* input, const T* weight, const T* bias, T* output) {
  if (!narrow_conv_applies(g)) return false;
  record_run(testing::ConvKernel::Forward, g, "direct");
  narrow_conv_forward(g, input, weight, bias, output);
  return true;
}
template <class T>
bool direct_backward_weight(const Conv2dGeometry& g, const T* grad_output, const T* input, T* grad_weight,
                            std::type_identity_t<T>* grad_bias) {
  if (!narrow_conv_applies(g)) return false;
  record_run(testing::ConvKernel::BackwardWeight, g, "direct");
  narrow_conv_backward_weight(g, grad_output, input, grad_weight, grad_bias);
  return true;
}

bool empty_conv(const Conv2dGeometry& g) {
  return g.batch == 0 || g.out_channels == 0 || g.out_h == 0 || g.out_w == 0 || g.in_channels == 0;
}

// ---------------------------------------------------------------------------------
// Pooling. NCHW loops run plane by plane; NHWC loops run pixel by pixel with the C
// channels of a pixel as the inner (vectorized) loop. Both visit each window in the
// same order, so the two layouts give bitwise the same values.

// The window's first row and column inside the plane, and its ends (exclusive).
struct MaxWindow {
  int64_t h_start, h_end, w_start, w_end;
};

MaxWindow max_window(const Pool2dGeometry& g, int64_t oh, int64_t ow) {
  int64_t h_start = oh * g.stride_h - g.pad_h, w_start = ow * g.stride_w - g.pad_w;
  const int64_t h_end = std::min(h_start + (g.kernel_h - 1) * g.dilation_h + 1, g.in_h);
  const int64_t w_end = std::min(w_start + (g.kernel_w - 1) * g.dilation_w + 1, g.in_w);
  while (h_start < 0) h_start += g.dilation_h;
  while (w_start < 0) w_start += g.dilation_w;
  return {h_start, h_end, w_start, w_end};
}

// The common 2x2 window at stride 2 (no padding, no dilation, every window
// inside the plane) on NCHW: vector code (Note [Vectorized 2x2 max pool]).
template <class T, class I>
bool max_pool_2x2(const Pool2dGeometry& g, const T* input, T* output, I* indices) {
  if (g.layout != Layout::NCHW || g.kernel_h != 2 || g.kernel_w != 2 || g.stride_h != 2 || g.stride_w != 2 ||
      g.pad_h != 0 || g.pad_w != 0 || g.dilation_h != 1 || g.dilation_w != 1 || 2 * g.out_h > g.in_h ||
      2 * g.out_w > g.in_w || g.in_h * g.in_w >= (int64_t{1} << 31))
    return false;
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  parallel_for(0, g.batch * g.channels, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
               [&](int64_t begin, int64_t end) {
                 max_pool_2x2_planes(input + begin * plane_in, end - begin, g.in_h, g.in_w, g.out_h, g.out_w,
                                     output + begin * plane_out, indices + begin * plane_out);
               });
  return true;
}

template <class T, class I>
void max_pool_impl(const Pool2dGeometry& geometry, const T* input, T* output, I* indices) {
  const int64_t plane_in = geometry.in_h * geometry.in_w, plane_out = geometry.out_h * geometry.out_w;
  parallel_for(0, geometry.batch * geometry.channels,
               std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
               [&](int64_t begin, int64_t end) {
                 // A local copy: stores through the int64 indices could alias the caller's
                 // geometry, which would make the compiler reload it after every store.
                 const Pool2dGeometry g = geometry;
                 for (int64_t p = begin; p < end; ++p) {
                   const T* in = input + p * plane_in;
                   for (int64_t oh = 0; oh < g.out_h; ++oh)
                     for (int64_t ow = 0; ow < g.out_w; ++ow) {
                       const MaxWindow win = max_window(g, oh, ow);
                       int64_t best_index = win.h_start * g.in_w + win.w_start;
                       T best = -INFINITY;
                       // On data the comparison is a coin toss, so the common case is
                       // written for conditional moves; a window holding a NaN is redone
                       // with PyTorch's rule (the last NaN wins).
                       bool has_nan = false;
                       for (int64_t h = win.h_start; h < win.h_end; h += g.dilation_h)
                         for (int64_t w = win.w_start; w < win.w_end; w += g.dilation_w) {
                           const T v = in[h * g.in_w + w];
                           const bool greater = v > best;
                           best_index = greater ? h * g.in_w + w : best_index;
                           best = greater ? v : best;
                           has_nan |= std::isnan(v);
                         }
                       if (has_nan) {
                         for (int64_t h = win.h_start; h < win.h_end; h += g.dilation_h)
                           for (int64_t w = win.w_start; w < win.w_end; w += g.dilation_w)
                             if (std::isnan(in[h * g.in_w + w])) {
                               best = in[h * g.in_w + w];
                               best_index = h * g.in_w + w;
                             }
                       }
                       output[p * plane_out + oh * g.out_w + ow] = best;
                       indices[p * plane_out + oh * g.out_w + ow] = static_cast<I>(best_index);
                     }
                 }
               });
}

// One output pixel's C channels: a value replaces the running max when it is larger
// or NaN, which is the NCHW loop's rule (first max on ties, last NaN wins) in one pass.
// The running max and index live in small local arrays, the index in an integer as
// wide as T, so that the selects compile to branch-free vector code (a branch per
// element mispredicts on data, and stores through the output defeat vectorization).
template <class T, class Index, class I>
void max_pixel_nhwc(const Pool2dGeometry& g, const MaxWindow& win, const T* __restrict__ image,
                    T* __restrict__ out, I* __restrict__ indices) {
  constexpr int64_t kBlock = 64;
  const int64_t channels = g.channels;
  const Index first = static_cast<Index>(win.h_start * g.in_w + win.w_start);
  for (int64_t c0 = 0; c0 < channels; c0 += kBlock) {
    const int64_t width = std::min(kBlock, channels - c0);
    T best[kBlock];
    Index index[kBlock];
    for (int64_t c = 0; c < width; ++c) {
      best[c] = -INFINITY;
      index[c] = first;
    }
    for (int64_t h = win.h_start; h < win.h_end; h += g.dilation_h)
      for (int64_t w = win.w_start; w < win.w_end; w += g.dilation_w) {
        const T* in = image + (h * g.in_w + w) * channels + c0;
        const Index at = static_cast<Index>(h * g.in_w + w);
        for (int64_t c = 0; c < width; ++c) {
          const T v = in[c];
          const bool take = (v > best[c]) | (v != v);
          best[c] = take ? v : best[c];
          index[c] = take ? at : index[c];
        }
      }
    for (int64_t c = 0; c < width; ++c) {
      out[c0 + c] = best[c];
      indices[c0 + c] = index[c];
    }
  }
}

template <class T, class I>
void max_pool_nhwc(const Pool2dGeometry& geometry, const T* input, T* output, I* indices) {
  const int64_t pixels = geometry.batch * geometry.out_h * geometry.out_w;
  const int64_t work = std::max<int64_t>(1, geometry.channels * geometry.kernel_h * geometry.kernel_w);
  // A float32 plane's positions fit in int32 unless the plane has 2^31 elements.
  const bool narrow = sizeof(T) == 4 && geometry.in_h * geometry.in_w <= INT32_MAX;
  parallel_for(0, pixels, std::max<int64_t>(1, kElementwiseGrainSize / work), [&](int64_t begin, int64_t end) {
    const Pool2dGeometry g = geometry;
    const int64_t image_size = g.in_h * g.in_w * g.channels;
    for (int64_t q = begin; q < end; ++q) {
      const int64_t n = q / (g.out_h * g.out_w), oh = q / g.out_w % g.out_h, ow = q % g.out_w;
      const MaxWindow win = max_window(g, oh, ow);
      if (narrow)
        max_pixel_nhwc<T, int32_t, I>(g, win, input + n * image_size, output + q * g.channels, indices + q * g.channels);
      else
        max_pixel_nhwc<T, int64_t, I>(g, win, input + n * image_size, output + q * g.channels, indices + q * g.channels);
    }
  });
}

// The window [h_start, h_end) x [w_start, w_end) clipped to the plane, and its divisor.
struct AvgWindow {
  int64_t h_start, h_end, w_start, w_end, divisor;
};

AvgWindow avg_window(const Pool2dGeometry& g, int64_t oh, int64_t ow, bool count_include_pad) {
  int64_t h_start = oh * g.stride_h - g.pad_h, w_start = ow * g.stride_w - g.pad_w;
  int64_t h_end = std::min(h_start + g.kernel_h, g.in_h + g.pad_h);
  int64_t w_end = std::min(w_start + g.kernel_w, g.in_w + g.pad_w);
  const int64_t padded_size = (h_end - h_start) * (w_end - w_start);
  h_start = std::max<int64_t>(h_start, 0);
  w_start = std::max<int64_t>(w_start, 0);
  h_end = std::min(h_end, g.in_h);
  w_end = std::min(w_end, g.in_w);
  return {h_start, h_end, w_start, w_end,
          count_include_pad ? padded_size : (h_end - h_start) * (w_end - w_start)};
}

template <class T>
void avg_pool_impl(const Pool2dGeometry& g, const T* input, T* output, bool count_include_pad) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  parallel_for(0, g.batch * g.channels, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p)
                   for (int64_t oh = 0; oh < g.out_h; ++oh)
                     for (int64_t ow = 0; ow < g.out_w; ++ow) {
                       const AvgWindow win = avg_window(g, oh, ow, count_include_pad);
                       T total = 0;
                       for (int64_t h = win.h_start; h < win.h_end; ++h)
                         for (int64_t w = win.w_start; w < win.w_end; ++w)
                           total += input[p * plane_in + h * g.in_w + w];
                       output[p * plane_out + oh * g.out_w + ow] = total / static_cast<T>(win.divisor);
                     }
               });
}

template <class T>
void avg_pixel_nhwc(const Pool2dGeometry& g, const AvgWindow& win, const T* __restrict__ image,
                    T* __restrict__ out) {
  const int64_t channels = g.channels;
  std::fill(out, out + channels, T(0));
  for (int64_t h = win.h_start; h < win.h_end; ++h)
    for (int64_t w = win.w_start; w < win.w_end; ++w) {
      const T* in = image + (h * g.in_w + w) * channels;
      for (int64_t c = 0; c < channels; ++c) out[c] += in[c];
    }
  const T divisor = static_cast<T>(win.divisor);
  for (int64_t c = 0; c < channels; ++c) out[c] /= divisor;
}

template <class T>
void avg_pool_nhwc(const Pool2dGeometry& g, const T* input, T* output, bool count_include_pad) {
  const int64_t pixels = g.batch * g.out_h * g.out_w;
  const int64_t work = std::max<int64_t>(1, g.channels * g.kernel_h * g.kernel_w);
  const int64_t image_size = g.in_h * g.in_w * g.channels;
  parallel_for(0, pixels, std::max<int64_t>(1, kElementwiseGrainSize / work), [&](int64_t begin, int64_t end) {
    for (int64_t q = begin; q < end; ++q) {
      const int64_t n = q / (g.out_h * g.out_w), oh = q / g.out_w % g.out_h, ow = q % g.out_w;
      avg_pixel_nhwc(g, avg_window(g, oh, ow, count_include_pad), input + n * image_size, output + q * g.channels);
    }
  });
}

template <class T>
void avg_pool_backward_impl(const Pool2dGeometry& g, const T* grad_output, T* grad_input, bool count_include_pad) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  parallel_for(0, g.batch * g.channels, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
               [&](int64_t begin, int64_t end) {
                 std::fill(grad_input + begin * plane_in, grad_input + end * plane_in, T(0));
                 for (int64_t p = begin; p < end; ++p)
                   for (int64_t oh = 0; oh < g.out_h; ++oh)
                     for (int64_t ow = 0; ow < g.out_w; ++ow) {
                       const AvgWindow win = avg_window(g, oh, ow, count_include_pad);
                       const T share = grad_output[p * plane_out + oh * g.out_w + ow] / static_cast<T>(win.divisor);
                       for (int64_t h = win.h_start; h < win.h_end; ++h)
                         for (int64_t w = win.w_start; w < win.w_end; ++w)
                           grad_input[p * plane_in + h * g.in_w + w] += share;
                     }
               });
}

// Adds one output pixel's shares to its window; windows overlap, so each thread owns whole images.
template <class T>
void avg_pixel_backward_nhwc(const Pool2dGeometry& g, const AvgWindow& win, const T* __restrict__ grad_out,
                             T* __restrict__ image) {
  const int64_t channels = g.channels;
  const T divisor = static_cast<T>(win.divisor);
  for (int64_t h = win.h_start; h < win.h_end; ++h)
    for (int64_t w = win.w_start; w < win.w_end; ++w) {
      T* in = image + (h * g.in_w + w) * channels;
      for (int64_t c = 0; c < channels; ++c) in[c] += grad_out[c] / divisor;
    }
}

template <class T>
void avg_pool_backward_nhwc(const Pool2dGeometry& g, const T* grad_output, T* grad_input, bool count_include_pad) {
  const int64_t image_size = g.in_h * g.in_w * g.channels;
  parallel_for(0, g.batch, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, image_size)),
               [&](int64_t begin, int64_t end) {
                 std::fill(grad_input + begin * image_size, grad_input + end * image_size, T(0));
                 for (int64_t n = begin; n < end; ++n)
                   for (int64_t oh = 0; oh < g.out_h; ++oh)
                     for (int64_t ow = 0; ow < g.out_w; ++ow)
                       avg_pixel_backward_nhwc(g, avg_window(g, oh, ow, count_include_pad),
                                               grad_output + ((n * g.out_h + oh) * g.out_w + ow) * g.channels,
                                               grad_input + n * image_size);
               });
}

// Each output gradient added at its window's argmax. Windows may overlap (and
// share an argmax), so each thread owns whole planes (NCHW) or images (NHWC).
template <class T, class I>
void max_pool_backward(const Pool2dGeometry& g, const T* grad_output, const I* indices, T* grad_input) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  if (g.layout == Layout::NHWC) {
    const int64_t channels = g.channels, image_in = plane_in * channels, image_out = plane_out * channels;
    parallel_for(0, g.batch, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, image_in)),
                 [&](int64_t begin, int64_t end) {
                   std::fill(grad_input + begin * image_in, grad_input + end * image_in, T(0));
                   for (int64_t n = begin; n < end; ++n) {
                     T* image = grad_input + n * image_in;
                     const T* grad = grad_output + n * image_out;
                     const I* index = indices + n * image_out;
                     for (int64_t q = 0; q < plane_out; ++q)
                       for (int64_t c = 0; c < channels; ++c)
                         image[index[q * channels + c] * channels + c] += grad[q * channels + c];
                   }
                 });
    return;
  }
  parallel_for(0, g.batch * g.channels, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
               [&](int64_t begin, int64_t end) {
                 std::fill(grad_input + begin * plane_in, grad_input + end * plane_in, T(0));
                 for (int64_t p = begin; p < end; ++p) {
                   T* plane = grad_input + p * plane_in;
                   const T* grad = grad_output + p * plane_out;
                   const I* index = indices + p * plane_out;
                   for (int64_t q = 0; q < plane_out; ++q) plane[index[q]] += grad[q];
                 }
               });
}

}  // namespace

void conv2d_forward(const Conv2dGeometry& g, const float* input, const float* weight, const float* bias,
                    float* output) {
  if (empty_conv(g)) {
    const int64_t size = g.batch * g.out_channels * g.out_h * g.out_w;
    std::fill(output, output + size, 0.0f);
    if (bias != nullptr && g.in_channels == 0)
      for (int64_t i = 0; i < size; ++i)
        output[i] = bias[g.layout == Layout::NHWC ? i % g.out_channels : i / (g.out_h * g.out_w) % g.out_channels];
    return;
  }
  if (direct_forward(g, input, weight, bias, output)) return;
  if (onednn_conv(g, bias != nullptr ? ConvPass::ForwardBias : ConvPass::Forward, input, weight, bias, output))
    return;
  record_run(testing::ConvKernel::Forward, g, "gemm");
  gemm_conv_forward(g, input, weight, bias, output);
}

void conv2d_forward(const Conv2dGeometry& g, const double* input, const double* weight, const double* bias,
                    double* output) {
  if (direct_forward(g, input, weight, bias, output)) return;
  record_run(testing::ConvKernel::Forward, g, "gemm");
  gemm_conv_forward(g, input, weight, bias, output);
}

void conv2d_backward_input(const Conv2dGeometry& g, const float* grad_output, const float* weight,
                           float* grad_input) {
  if (!empty_conv(g) && onednn_conv(g, ConvPass::BackwardInput, grad_input, weight, nullptr, grad_output)) return;
  record_run(testing::ConvKernel::BackwardInput, g, "gemm");
  gemm_conv_backward_input(g, grad_output, weight, grad_input);
}

void conv2d_backward_input(const Conv2dGeometry& g, const double* grad_output, const double* weight,
                           double* grad_input) {
  record_run(testing::ConvKernel::BackwardInput, g, "gemm");
  gemm_conv_backward_input(g, grad_output, weight, grad_input);
}

void conv2d_backward_weight(const Conv2dGeometry& g, const float* grad_output, const float* input,
                            float* grad_weight) {
  if (direct_backward_weight(g, grad_output, input, grad_weight, nullptr)) return;
  if (!empty_conv(g) && onednn_conv(g, ConvPass::BackwardWeight, input, grad_weight, nullptr, grad_output)) return;
  record_run(testing::ConvKernel::BackwardWeight, g, "gemm");
  gemm_conv_backward_weight(g, grad_output, input, grad_weight);
}

bool conv2d_backward(const Conv2dGeometry& g, const float* grad_output, const float* input, const float* weight,
                     float* grad_input, float* grad_weight, float* grad_bias) {
  if (grad_weight != nullptr && narrow_conv_applies(g)) {
    if (grad_input != nullptr) conv2d_backward_input(g, grad_output, weight, grad_input);
    direct_backward_weight(g, grad_output, input, grad_weight, grad_bias);
    return grad_bias != nullptr;
  }
  if (grad_weight != nullptr && !empty_conv(g) &&
      onednn_conv_backward(g, grad_output, input, weight, grad_input, grad_weight, grad_bias))
    return grad_bias != nullptr;
  if (grad_input != nullptr) conv2d_backward_input(g, grad_output, weight, grad_input);
  if (grad_weight != nullptr) conv2d_backward_weight(g, grad_output, input, grad_weight);
  return false;
}

void conv2d_backward_weight(const Conv2dGeometry& g, const double* grad_output, const double* input,
                            double* grad_weight) {
  if (direct_backward_weight(g, grad_output, input, grad_weight, nullptr)) return;
  record_run(testing::ConvKernel::BackwardWeight, g, "gemm");
  gemm_conv_backward_weight(g, grad_output, input, grad_weight);
}

namespace {
template <class T, class I>
void max_pool(const Pool2dGeometry& g, const T* input, T* output, I* indices) {
  if (g.layout == Layout::NHWC) max_pool_nhwc(g, input, output, indices);
  else if (!max_pool_2x2(g, input, output, indices)) max_pool_impl(g, input, output, indices);
}
template <class T>
void avg_pool(const Pool2dGeometry& g, const T* input, T* output, bool count_include_pad) {
  if (g.layout == Layout::NHWC) avg_pool_nhwc(g, input, output, count_include_pad);
  else avg_pool_impl(g, input, output, count_include_pad);
}
template <class T>
void avg_pool_backward(const Pool2dGeometry& g, const T* grad_output, T* grad_input, bool count_include_pad) {
  if (g.layout == Layout::NHWC) avg_pool_backward_nhwc(g, grad_output, grad_input, count_include_pad);
  else avg_pool_backward_impl(g, grad_output, grad_input, count_include_pad);
}
}  // namespace

void max_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, int64_t* indices) {
  max_pool(g, input, output, indices);
}
void max_pool2d_forward(const Pool2dGeometry& g, const double* input, double* output, int64_t* indices) {
  max_pool(g, input, output, indices);
}
void max_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, const int64_t* indices,
                         float* grad_input) {
  max_pool_backward(g, grad_output, indices, grad_input);
}
void max_pool2d_backward(const Pool2dGeometry& g, const double* grad_output, const int64_t* indices,
                         double* grad_input) {
  max_pool_backward(g, grad_output, indices, grad_input);
}
void max_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, int32_t* indices) {
  GD_INTERNAL_ASSERT(g.in_h * g.in_w <= INT32_MAX, "max_pool2d: int32 indices for a plane of 2^31 elements");
  max_pool(g, input, output, indices);
}
void max_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, const int32_t* indices,
                         float* grad_input) {
  max_pool_backward(g, grad_output, indices, grad_input);
}
void avg_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, bool count_include_pad) {
  avg_pool(g, input, output, count_include_pad);
}
void avg_pool2d_forward(const Pool2dGeometry& g, const double* input, double* output, bool count_include_pad) {
  avg_pool(g, input, output, count_include_pad);
}
void avg_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, float* grad_input,
                         bool count_include_pad) {
  avg_pool_backward(g, grad_output, grad_input, count_include_pad);
}
void avg_pool2d_backward(const Pool2dGeometry& g, const double* grad_output, double* grad_input,
                         bool count_include_pad) {
  avg_pool_backward(g, grad_output, grad_input, count_include_pad);
}

namespace testing {
int conv_onednn_cache_size() { return static_cast<int>(thread_conv_cache().size()); }
ConvRun last_conv_run(ConvKernel kernel) { return last_run(kernel); }
}  // namespace testing

}  // namespace gradiens::kernels::cpu
