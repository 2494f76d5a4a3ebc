// CPU convolution and pooling kernels: float32 convolution through oneDNN primitives
// cached per thread (Note [Convolution cache]), float64 (and any float32 shape oneDNN
// refuses) through im2col + GEMM, pooling as direct loops over planes.
#include "kernels/cpu/conv.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/parallel.h"

namespace gradiens::kernels::cpu {
namespace {

struct ConvScratchpad;  // tags this file's per-thread oneDNN scratchpad

// ---------------------------------------------------------------------------------
// im2col + GEMM, for every dtype.

// col [C/G * KH * KW, OH * OW] of one image and group; taps outside the plane read 0.
template <class T>
void im2col(const Conv2dGeometry& g, const T* image, T* col) {
  const int64_t channels = g.in_channels / g.groups, plane = g.out_h * g.out_w;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        T* row = col + ((c * g.kernel_h + kh) * g.kernel_w + kw) * plane;
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
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < g.kernel_h; ++kh)
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const T* row = col + ((c * g.kernel_h + kh) * g.kernel_w + kw) * plane;
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

struct GemmLayout {
  int64_t group_in, group_out, taps, plane;  // C/G, O/G, C/G * KH * KW, OH * OW
  int64_t image, output_image;               // elements per image of input and output
};

GemmLayout gemm_layout(const Conv2dGeometry& g) {
  const int64_t group_in = g.in_channels / g.groups;
  return {group_in, g.out_channels / g.groups, group_in * g.kernel_h * g.kernel_w, g.out_h * g.out_w,
          g.in_channels * g.in_h * g.in_w, g.out_channels * g.out_h * g.out_w};
}

// Per group: output[n, g] (O/G x OH*OW) = weight[g] (O/G x taps) . col (taps x OH*OW).
template <class T>
void gemm_conv_forward(const Conv2dGeometry& g, const T* input, const T* weight, const T* bias, T* output) {
  const GemmLayout l = gemm_layout(g);
  std::vector<T> col(static_cast<size_t>(l.taps * l.plane));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      im2col(g, input + n * l.image + grp * l.group_in * g.in_h * g.in_w, col.data());
      T* out = output + n * l.output_image + grp * l.group_out * l.plane;
      gemm(false, false, l.group_out, l.plane, l.taps, T(1), weight + grp * l.group_out * l.taps, l.taps,
           col.data(), l.plane, T(0), out, l.plane);
      if (bias != nullptr)
        for (int64_t o = 0; o < l.group_out; ++o)
          for (int64_t p = 0; p < l.plane; ++p) out[o * l.plane + p] += bias[grp * l.group_out + o];
    }
}

// col = weight[g]^T . grad_output[n, g], then col2im.
template <class T>
void gemm_conv_backward_input(const Conv2dGeometry& g, const T* grad_output, const T* weight, T* grad_input) {
  const GemmLayout l = gemm_layout(g);
  std::fill(grad_input, grad_input + g.batch * l.image, T(0));
  std::vector<T> col(static_cast<size_t>(l.taps * l.plane));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      gemm(true, false, l.taps, l.plane, l.group_out, T(1), weight + grp * l.group_out * l.taps, l.taps,
           grad_output + n * l.output_image + grp * l.group_out * l.plane, l.plane, T(0), col.data(), l.plane);
      col2im(g, col.data(), grad_input + n * l.image + grp * l.group_in * g.in_h * g.in_w);
    }
}

// grad_weight[g] += grad_output[n, g] . col^T, summed over the batch.
template <class T>
void gemm_conv_backward_weight(const Conv2dGeometry& g, const T* grad_output, const T* input, T* grad_weight) {
  const GemmLayout l = gemm_layout(g);
  std::fill(grad_weight, grad_weight + g.out_channels * l.taps, T(0));
  std::vector<T> col(static_cast<size_t>(l.taps * l.plane));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      im2col(g, input + n * l.image + grp * l.group_in * g.in_h * g.in_w, col.data());
      gemm(false, true, l.group_out, l.taps, l.plane, T(1),
           grad_output + n * l.output_image + grp * l.group_out * l.plane, l.plane, col.data(), l.plane, T(1),
           grad_weight + grp * l.group_out * l.taps, l.taps);
    }
}

// ---------------------------------------------------------------------------------
// oneDNN (float32)

enum class ConvPass { Forward, ForwardBias, BackwardInput, BackwardWeight };

struct ConvKey {
  Conv2dGeometry geometry;
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
                      static_cast<int64_t>(key.pass), static_cast<int64_t>(key.threads)})
      seed ^= std::hash<int64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    return seed;
  }
};

// A primitive bound to memory objects whose data pointers each call rewrites. The
// arguments are always plain NCHW/OIHW: a blocked layout would need reorders on every
// call, which for these sizes cost about what they save.
struct BoundConv {
  dnnl::primitive primitive;  // empty when oneDNN has no implementation
  dnnl::memory src, weights, bias, dst, scratchpad;
  std::unordered_map<int, dnnl::memory> args;
};

BoundConv create_conv(const ConvKey& key) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const Conv2dGeometry& g = key.geometry;
  const auto f32 = memory::data_type::f32;
  const memory::desc src_md({g.batch, g.in_channels, g.in_h, g.in_w}, f32, tag::nchw);
  const memory::desc dst_md({g.batch, g.out_channels, g.out_h, g.out_w}, f32, tag::nchw);
  const memory::desc weights_md =
      g.groups == 1
          ? memory::desc({g.out_channels, g.in_channels, g.kernel_h, g.kernel_w}, f32, tag::oihw)
          : memory::desc({g.groups, g.out_channels / g.groups, g.in_channels / g.groups, g.kernel_h, g.kernel_w},
                         f32, tag::goihw);
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
    memory::desc scratchpad_md;
    bound.src = memory(src_md, engine, nullptr);
    bound.weights = memory(weights_md, engine, nullptr);
    bound.dst = memory(dst_md, engine, nullptr);
    switch (key.pass) {
      case ConvPass::Forward:
      case ConvPass::ForwardBias:
        bound.primitive = dnnl::convolution_forward(forward_pd);
        scratchpad_md = forward_pd.scratchpad_desc();
        bound.args = {{DNNL_ARG_SRC, bound.src}, {DNNL_ARG_WEIGHTS, bound.weights}, {DNNL_ARG_DST, bound.dst}};
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
        bound.args = {{DNNL_ARG_DIFF_SRC, bound.src}, {DNNL_ARG_WEIGHTS, bound.weights},
                      {DNNL_ARG_DIFF_DST, bound.dst}};
        break;
      }
      case ConvPass::BackwardWeight: {
        dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(algo, src_md, weights_md, dst_md, strides, dilates, pad_l,
                                                     pad_r),
            attr, engine, forward_pd);
        bound.primitive = dnnl::convolution_backward_weights(pd);
        scratchpad_md = pd.scratchpad_desc();
        bound.args = {{DNNL_ARG_SRC, bound.src}, {DNNL_ARG_DIFF_WEIGHTS, bound.weights},
                      {DNNL_ARG_DIFF_DST, bound.dst}};
        break;
      }
    }
    if (scratchpad_md.get_size() != 0) {
      bound.scratchpad = memory(scratchpad_md, engine, nullptr);
      bound.args.emplace(DNNL_ARG_SCRATCHPAD, bound.scratchpad);
    }
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

// Runs the cached primitive; false (having done nothing) when oneDNN has none.
bool onednn_conv(const Conv2dGeometry& g, ConvPass pass, const float* src, const float* weights,
                 const float* bias, const float* dst) {
  const int threads = conv_threads(g);
  const OmpThreadsScope omp_threads(threads);
  BoundConv& conv = thread_conv_cache().get(ConvKey{g, pass, threads});
  if (!conv.primitive) return false;
  conv.src.set_data_handle(const_cast<float*>(src));
  conv.weights.set_data_handle(const_cast<float*>(weights));
  conv.dst.set_data_handle(const_cast<float*>(dst));
  if (bias != nullptr) conv.bias.set_data_handle(const_cast<float*>(bias));
  if (conv.scratchpad) conv.scratchpad.set_data_handle(onednn::thread_scratchpad<ConvScratchpad>(conv.scratchpad.get_desc().get_size()));
  dnnl::stream& stream = onednn::thread_stream();
  conv.primitive.execute(stream, conv.args);
  stream.wait();
  return true;
}

bool empty_conv(const Conv2dGeometry& g) {
  return g.batch == 0 || g.out_channels == 0 || g.out_h == 0 || g.out_w == 0 || g.in_channels == 0;
}

// ---------------------------------------------------------------------------------
// Pooling

template <class T>
void max_pool_impl(const Pool2dGeometry& geometry, const T* input, T* output, int64_t* indices) {
  const int64_t plane_in = geometry.in_h * geometry.in_w, plane_out = geometry.out_h * geometry.out_w;
  parallel_for(0, geometry.planes, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
               [&](int64_t begin, int64_t end) {
                 // A local copy: stores through the int64 indices could alias the caller's
                 // geometry, which would make the compiler reload it after every store.
                 const Pool2dGeometry g = geometry;
                 for (int64_t p = begin; p < end; ++p) {
                   const T* in = input + p * plane_in;
                   for (int64_t oh = 0; oh < g.out_h; ++oh)
                     for (int64_t ow = 0; ow < g.out_w; ++ow) {
                       int64_t h_start = oh * g.stride_h - g.pad_h, w_start = ow * g.stride_w - g.pad_w;
                       const int64_t h_end = std::min(h_start + (g.kernel_h - 1) * g.dilation_h + 1, g.in_h);
                       const int64_t w_end = std::min(w_start + (g.kernel_w - 1) * g.dilation_w + 1, g.in_w);
                       while (h_start < 0) h_start += g.dilation_h;
                       while (w_start < 0) w_start += g.dilation_w;
                       int64_t best_index = h_start * g.in_w + w_start;
                       T best = -INFINITY;
                       // On data the comparison is a coin toss, so the common case is
                       // written for conditional moves; a window holding a NaN is redone
                       // with PyTorch's rule (the last NaN wins).
                       bool has_nan = false;
                       for (int64_t h = h_start; h < h_end; h += g.dilation_h)
                         for (int64_t w = w_start; w < w_end; w += g.dilation_w) {
                           const T v = in[h * g.in_w + w];
                           const bool greater = v > best;
                           best_index = greater ? h * g.in_w + w : best_index;
                           best = greater ? v : best;
                           has_nan |= std::isnan(v);
                         }
                       if (has_nan) {
                         for (int64_t h = h_start; h < h_end; h += g.dilation_h)
                           for (int64_t w = w_start; w < w_end; w += g.dilation_w)
                             if (std::isnan(in[h * g.in_w + w])) {
                               best = in[h * g.in_w + w];
                               best_index = h * g.in_w + w;
                             }
                       }
                       output[p * plane_out + oh * g.out_w + ow] = best;
                       indices[p * plane_out + oh * g.out_w + ow] = best_index;
                     }
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
  parallel_for(0, g.planes, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
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
void avg_pool_backward_impl(const Pool2dGeometry& g, const T* grad_output, T* grad_input, bool count_include_pad) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  parallel_for(0, g.planes, std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(1, plane_in)),
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

}  // namespace

void conv2d_forward(const Conv2dGeometry& g, const float* input, const float* weight, const float* bias,
                    float* output) {
  if (empty_conv(g)) {
    std::fill(output, output + g.batch * g.out_channels * g.out_h * g.out_w, 0.0f);
    if (bias != nullptr && g.in_channels == 0)
      for (int64_t i = 0; i < g.batch * g.out_channels * g.out_h * g.out_w; ++i)
        output[i] = bias[(i / (g.out_h * g.out_w)) % g.out_channels];
    return;
  }
  if (onednn_conv(g, bias != nullptr ? ConvPass::ForwardBias : ConvPass::Forward, input, weight, bias, output))
    return;
  gemm_conv_forward(g, input, weight, bias, output);
}

void conv2d_forward(const Conv2dGeometry& g, const double* input, const double* weight, const double* bias,
                    double* output) {
  gemm_conv_forward(g, input, weight, bias, output);
}

void conv2d_backward_input(const Conv2dGeometry& g, const float* grad_output, const float* weight,
                           float* grad_input) {
  if (!empty_conv(g) && onednn_conv(g, ConvPass::BackwardInput, grad_input, weight, nullptr, grad_output)) return;
  gemm_conv_backward_input(g, grad_output, weight, grad_input);
}

void conv2d_backward_input(const Conv2dGeometry& g, const double* grad_output, const double* weight,
                           double* grad_input) {
  gemm_conv_backward_input(g, grad_output, weight, grad_input);
}

void conv2d_backward_weight(const Conv2dGeometry& g, const float* grad_output, const float* input,
                            float* grad_weight) {
  if (!empty_conv(g) && onednn_conv(g, ConvPass::BackwardWeight, input, grad_weight, nullptr, grad_output)) return;
  gemm_conv_backward_weight(g, grad_output, input, grad_weight);
}

void conv2d_backward_weight(const Conv2dGeometry& g, const double* grad_output, const double* input,
                            double* grad_weight) {
  gemm_conv_backward_weight(g, grad_output, input, grad_weight);
}

void max_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, int64_t* indices) {
  max_pool_impl(g, input, output, indices);
}
void max_pool2d_forward(const Pool2dGeometry& g, const double* input, double* output, int64_t* indices) {
  max_pool_impl(g, input, output, indices);
}
void avg_pool2d_forward(const Pool2dGeometry& g, const float* input, float* output, bool count_include_pad) {
  avg_pool_impl(g, input, output, count_include_pad);
}
void avg_pool2d_forward(const Pool2dGeometry& g, const double* input, double* output, bool count_include_pad) {
  avg_pool_impl(g, input, output, count_include_pad);
}
void avg_pool2d_backward(const Pool2dGeometry& g, const float* grad_output, float* grad_input,
                         bool count_include_pad) {
  avg_pool_backward_impl(g, grad_output, grad_input, count_include_pad);
}
void avg_pool2d_backward(const Pool2dGeometry& g, const double* grad_output, double* grad_input,
                         bool count_include_pad) {
  avg_pool_backward_impl(g, grad_output, grad_input, count_include_pad);
}

namespace testing {
int conv_onednn_cache_size() { return static_cast<int>(thread_conv_cache().size()); }
}  // namespace testing

}  // namespace gradiens::kernels::cpu
