// conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d: PyTorch's checks and
// messages, dispatch to kernels/conv.h (on a cuda device in the layouts of
// Note [Convolutions on CUDA]), and backward formulas built from these same ops
// (derivative orders are listed in engine/convolution.h). Channels-last inputs run
// in NHWC throughout, forward and backward (Note [Channels-last ops]).
#include "engine/convolution.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/elementwise.h"
#include "engine/tensor_data.h"
#include "kernels/conv.h"

namespace gradiens {

namespace {

using Pair = std::array<int64_t, 2>;
using Layout = kernels::ConvLayout;

// Note [Channels-last ops]
// As in PyTorch, a 4-d input whose strides are channels_last (suggest_memory_format)
// makes these ops run on its NHWC data as it is, give a channels_last output, and
// give a channels_last gradient, whatever layout the incoming gradient has (it is
// made NHWC if it is not). conv2d also runs NHWC when only its weight is
// channels_last (then the input is made NHWC). The choice is made once in forward
// and kept in the node, so backward and double backward stay in the same layout.

Layout layout_of(MemoryFormat memory_format) {
  return memory_format == MemoryFormat::ChannelsLast ? Layout::NHWC : Layout::NCHW;
}

// The layout of a 4-d (or 3-d unbatched) input for the pooling kernels.
MemoryFormat pool_format(const Tensor& input) {
  return input.dim() == 4 && input.suggest_memory_format() == MemoryFormat::ChannelsLast
             ? MemoryFormat::ChannelsLast
             : MemoryFormat::Contiguous;
}

// A weight dense in one of the two orders the kernels take: OHWI for a
// channels_last weight, OIHW otherwise (itself when it already is).
Tensor dense_weight(const Tensor& weight) {
  if (weight.is_contiguous() || weight.is_contiguous(MemoryFormat::ChannelsLast)) return weight;
  return weight.contiguous(weight.suggest_memory_format() == MemoryFormat::ChannelsLast ? MemoryFormat::ChannelsLast
                                                                                         : MemoryFormat::Contiguous);
}
Layout weight_layout_of(const Tensor& dense) { return dense.is_contiguous() ? Layout::NCHW : Layout::NHWC; }

// float16/bfloat16 operands of the kernels that exist only for float32 and
// float64 (the CPU's convolutions, pooling on both devices) are float32
// copies, and the result is rounded once to the operands' dtype (Note [Reduced
// floats compute in float32]); other dtypes pass through untouched. Copies
// keep the memory format (Tensor::to would make them contiguous). No graph:
// for use inside an op's forward.
Tensor converted(const Tensor& t, ScalarType dtype) {
  if (!t.defined() || t.dtype() == dtype) return t;
  Tensor out = empty(t.sizes(), t.options().dtype(dtype).memory_format(t.suggest_memory_format()));
  out.copy_(t);
  return out;
}
Tensor in_float32(const Tensor& t) {
  return t.defined() && is_reduced_floating_point(t.dtype()) ? converted(t, kFloat32) : t;
}
Tensor rounded_to(const Tensor& t, ScalarType dtype) { return converted(t, dtype); }

// One value for both spatial dims, or (height, width).
Pair pair_of(IntArrayRef values, std::string_view what) {
  GD_CHECK(values.size() == 1 || values.size() == 2,
           fmt::format("expected {} to be a single integer value or a list of 2 values to match the "
                       "convolution dimensions, but got {}={}",
                       what, what, shape_to_string(values)));
  return values.size() == 1 ? Pair{values[0], values[0]} : Pair{values[0], values[1]};
}

// ---------------------------------------------------------------------------------
// conv2d

struct ConvParams {
  Pair stride, padding, dilation;
  int64_t groups;
  MemoryFormat memory_format = MemoryFormat::Contiguous;  // of input, output and their gradients
};

// PyTorch's rule (mkldnn_conv_use_channels_last): NHWC when input or weight is channels_last.
MemoryFormat conv_format(const Tensor& input, const Tensor& weight) {
  return input.suggest_memory_format() == MemoryFormat::ChannelsLast ||
                 weight.suggest_memory_format() == MemoryFormat::ChannelsLast
             ? MemoryFormat::ChannelsLast
             : MemoryFormat::Contiguous;
}

DimVector conv_output_size(IntArrayRef input, IntArrayRef weight, const ConvParams& p) {
  DimVector out{input[0], weight[0]};
  for (size_t d = 0; d < 2; ++d)
    out.push_back((input[d + 2] + 2 * p.padding[d] - p.dilation[d] * (weight[d + 2] - 1) - 1) / p.stride[d] + 1);
  return out;
}

// The kernels' geometry for dense operands in p's layout and the weight in weight_layout.
kernels::Conv2dGeometry conv_geometry(IntArrayRef input, IntArrayRef weight, const ConvParams& p,
                                      Layout weight_layout) {
  const DimVector out = conv_output_size(input, weight, p);
  kernels::Conv2dGeometry g{input[0],     input[1],      input[2],      input[3],      weight[0],
                            weight[2],    weight[3],     out[2],        out[3],        p.stride[0],
                            p.stride[1],  p.padding[0],  p.padding[1],  p.dilation[0], p.dilation[1],
                            p.groups};
  g.layout = layout_of(p.memory_format);
  g.weight_layout = weight_layout;
  return g;
}

DimVector conv_ints(const ConvParams& p) {
  return {p.stride[0],   p.stride[1],   p.padding[0], p.padding[1],
          p.dilation[0], p.dilation[1], p.groups,     static_cast<int64_t>(p.memory_format)};
}

Tensor conv2d_4d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p);
Tensor conv_backward_input_4d(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_size,
                              const ConvParams& p);
// The weight gradient comes out in weight_format (the weight's own layout when
// called from conv2d's backward, so that .grad matches its parameter as PyTorch's does).
Tensor conv_backward_weight_4d(const Tensor& grad_output, const Tensor& input, IntArrayRef weight_size,
                               const ConvParams& p, MemoryFormat weight_format);

MemoryFormat weight_format_of(const Tensor& weight) {
  return weight.suggest_memory_format() == MemoryFormat::ChannelsLast ? MemoryFormat::ChannelsLast
                                                                      : MemoryFormat::Contiguous;
}

// Note [Convolutions on CUDA]
// On a cuda device each of the three passes runs through kernels/conv.h with
// every operand dense in one layout: p's for float32, float16 and bfloat16
// (cuDNN takes NCHW and NHWC alike), NCHW for float64 (im2col + cuBLAS). The
// weight follows the activations there, and each result is returned in the layout the CPU path gives it, so the
// nodes, their saved tensors and the gradients' layouts are the same on both
// devices. The bias is added by a broadcast add, and its gradient is grad.sum.

MemoryFormat cuda_conv_format(const Tensor& t, const ConvParams& p) {
  return t.dtype() == kFloat64 ? MemoryFormat::Contiguous : p.memory_format;
}

// The geometry with every operand, the weight included, dense in `format`.
kernels::Conv2dGeometry cuda_conv_geometry(IntArrayRef input, IntArrayRef weight, const ConvParams& p,
                                           MemoryFormat format) {
  kernels::Conv2dGeometry g = conv_geometry(input, weight, p, layout_of(format));
  g.layout = layout_of(format);
  return g;
}

Tensor cuda_conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  dispatch_floating_and_reduced(input.dtype(), "conv2d", []<class T>() {});
  const MemoryFormat format = cuda_conv_format(input, p);
  const Tensor x = input.contiguous(format), w = weight.contiguous(format);
  Tensor out = empty(conv_output_size(x.sizes(), w.sizes(), p), x.options().memory_format(format));
  kernels::conv2d_forward(x.dtype(), cuda_conv_geometry(x.sizes(), w.sizes(), p, format), x.data_ptr(),
                          w.data_ptr(), nullptr, out.data_ptr(), cuda_seam::device_of(x),
                          are_deterministic_algorithms_enabled());
  if (bias.defined()) cuda_seam::binary_op(kernels::Binary::Add, out, out, bias.reshape({1, -1, 1, 1}), 1, "conv2d");
  return out.contiguous(p.memory_format);
}

Tensor cuda_conv_backward_input(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_size,
                                const ConvParams& p) {
  dispatch_floating_and_reduced(grad_output.dtype(), "conv2d_backward_input", []<class T>() {});
  const MemoryFormat format = cuda_conv_format(grad_output, p);
  const Tensor gy = grad_output.contiguous(format), w = weight.contiguous(format);
  Tensor grad_input = empty(input_size, gy.options().memory_format(format));
  kernels::conv2d_backward_input(gy.dtype(), cuda_conv_geometry(input_size, w.sizes(), p, format), gy.data_ptr(),
                                 w.data_ptr(), grad_input.data_ptr(), cuda_seam::device_of(gy),
                                 are_deterministic_algorithms_enabled());
  return grad_input.contiguous(p.memory_format);
}

Tensor cuda_conv_backward_weight(const Tensor& grad_output, const Tensor& input, IntArrayRef weight_size,
                                 const ConvParams& p, MemoryFormat weight_format) {
  dispatch_floating_and_reduced(grad_output.dtype(), "conv2d_backward_weight", []<class T>() {});
  const MemoryFormat format = cuda_conv_format(grad_output, p);
  const Tensor gy = grad_output.contiguous(format), x = input.contiguous(format);
  Tensor grad_weight = empty(weight_size, gy.options().memory_format(format));
  kernels::conv2d_backward_weight(gy.dtype(), cuda_conv_geometry(x.sizes(), weight_size, p, format), gy.data_ptr(),
                                  x.data_ptr(), grad_weight.data_ptr(), cuda_seam::device_of(gy),
                                  are_deterministic_algorithms_enabled());
  return grad_weight.contiguous(weight_format);
}

struct Conv2dOp {
  static constexpr std::string_view name = "ConvolutionBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvParams& p) {
    ctx.save_for_backward(input, weight);
    ctx.ints = conv_ints(p);
    if (input.device().is_cuda()) return cuda_conv_forward(input, weight, bias, p);
    if (is_reduced_floating_point(input.dtype()))
      return rounded_to(cpu_forward(in_float32(input), in_float32(weight), in_float32(bias), p), input.dtype());
    return cpu_forward(input, weight, bias, p);
  }
  static Tensor cpu_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
    const Tensor x = input.contiguous(p.memory_format), w = dense_weight(weight);
    const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
    const kernels::Conv2dGeometry g = conv_geometry(x.sizes(), w.sizes(), p, weight_layout_of(w));
    Tensor out = empty(conv_output_size(x.sizes(), w.sizes(), p), x.options().memory_format(p.memory_format));
    dispatch_floating(x.dtype(), "conv2d", []<class T>() {});
    kernels::conv2d_forward(x.dtype(), g, x.data_ptr(), w.data_ptr(), b.defined() ? b.data_ptr() : nullptr,
                            out.data_ptr(), cuda_seam::device_of(x), are_deterministic_algorithms_enabled());
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& grad) {
    auto [input, weight] = ctx.saved<2>();
    const ConvParams p = params_from(ctx);
    if (!GradMode::is_enabled() && grad.dtype() == kFloat32 && ctx.needs_input_grad(1) &&
        !grad.device().is_cuda()) {
      if (std::optional<GradList> grads = fused_backward(ctx, grad, input, weight, p)) return *grads;
    }
    return {ctx.needs_input_grad(0) ? conv_backward_input_4d(grad, weight, input.sizes(), p) : Tensor(),
            ctx.needs_input_grad(1)
                ? conv_backward_weight_4d(grad, input, weight.sizes(), p, weight_format_of(weight))
                : Tensor(),
            ctx.needs_input_grad(2) ? grad.sum({0, 2, 3}) : Tensor()};
  }
  // Without create_graph the three gradients come from one kernel call (PyTorch's
  // convolution_backward), which reorders grad once for both passes and takes the
  // bias gradient out of the weight pass; with it they are ops with their own
  // backward. Empty when the weight's layout is ambiguous (then the ops decide).
  static std::optional<GradList> fused_backward(const Ctx& ctx, const Tensor& grad, const Tensor& input,
                                                const Tensor& weight, const ConvParams& p) {
    const Tensor w = dense_weight(weight);
    const MemoryFormat weight_format = weight_format_of(weight);
    if (weight_layout_of(w) != layout_of(weight_format)) return std::nullopt;
    const Tensor gy = grad.contiguous(p.memory_format), x = input.contiguous(p.memory_format);
    const kernels::Conv2dGeometry g = conv_geometry(x.sizes(), w.sizes(), p, weight_layout_of(w));
    GradList grads{ctx.needs_input_grad(0) ? empty(x.sizes(), gy.options().memory_format(p.memory_format)) : Tensor(),
                   empty(w.sizes(), gy.options().memory_format(weight_format)),
                   ctx.needs_input_grad(2) ? empty({w.size(0)}, gy.options()) : Tensor()};
    const auto data = [](const Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; };
    const bool bias_done =
        kernels::conv2d_backward_fused(g, gy.data_ptr<float>(), x.data_ptr<float>(), w.data_ptr<float>(),
                                       data(grads[0]), data(grads[1]), data(grads[2]), cuda_seam::device_of(gy));
    if (grads[2].defined() && !bias_done) grads[2] = gy.sum({0, 2, 3});
    return grads;
  }
  static ConvParams params_from(const Ctx& ctx) {
    const auto& v = ctx.ints;
    return {{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, v[6], static_cast<MemoryFormat>(v[7])};
  }
};

// The adjoint of conv2d in its input: <gy, conv2d(x, w)> is bilinear in (x, w), so
// this op's backward is conv2d itself (for grad_output) and the weight adjoint (for w).
struct Conv2dBackwardInputOp {
  static constexpr std::string_view name = "ConvolutionBackwardInputBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad_output, const Tensor& weight, const DimVector& input_size,
                        const ConvParams& p) {
    ctx.save_for_backward(grad_output, weight);
    ctx.ints = conv_ints(p);
    if (grad_output.device().is_cuda()) return cuda_conv_backward_input(grad_output, weight, input_size, p);
    if (is_reduced_floating_point(grad_output.dtype()))
      return rounded_to(cpu_forward(in_float32(grad_output), in_float32(weight), input_size, p), grad_output.dtype());
    return cpu_forward(grad_output, weight, input_size, p);
  }
  static Tensor cpu_forward(const Tensor& grad_output, const Tensor& weight, const DimVector& input_size,
                            const ConvParams& p) {
    const Tensor gy = grad_output.contiguous(p.memory_format), w = dense_weight(weight);
    const kernels::Conv2dGeometry g = conv_geometry(input_size, w.sizes(), p, weight_layout_of(w));
    Tensor grad_input = empty(input_size, gy.options().memory_format(p.memory_format));
    dispatch_floating(gy.dtype(), "conv2d_backward_input", []<class T>() {});
    kernels::conv2d_backward_input(gy.dtype(), g, gy.data_ptr(), w.data_ptr(), grad_input.data_ptr(),
                                   cuda_seam::device_of(gy), are_deterministic_algorithms_enabled());
    return grad_input;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    auto [grad_output, weight] = ctx.saved<2>();
    const ConvParams p = Conv2dOp::params_from(ctx);
    return {ctx.needs_input_grad(0) ? conv2d_4d(gg, weight, Tensor(), p) : Tensor(),
            ctx.needs_input_grad(1)
                ? conv_backward_weight_4d(grad_output, gg, weight.sizes(), p, weight_format_of(weight))
                : Tensor()};
  }
};

// The adjoint of conv2d in its weight; backward by the same bilinearity.
struct Conv2dBackwardWeightOp {
  static constexpr std::string_view name = "ConvolutionBackwardWeightBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad_output, const Tensor& input, const DimVector& weight_size,
                        const ConvParams& p, MemoryFormat weight_format) {
    ctx.save_for_backward(grad_output, input);
    ctx.ints = conv_ints(p);
    if (grad_output.device().is_cuda())
      return cuda_conv_backward_weight(grad_output, input, weight_size, p, weight_format);
    if (is_reduced_floating_point(grad_output.dtype()))
      return rounded_to(cpu_forward(in_float32(grad_output), in_float32(input), weight_size, p, weight_format),
                        grad_output.dtype());
    return cpu_forward(grad_output, input, weight_size, p, weight_format);
  }
  static Tensor cpu_forward(const Tensor& grad_output, const Tensor& input, const DimVector& weight_size,
                            const ConvParams& p, MemoryFormat weight_format) {
    const Tensor gy = grad_output.contiguous(p.memory_format), x = input.contiguous(p.memory_format);
    const kernels::Conv2dGeometry g = conv_geometry(x.sizes(), weight_size, p, layout_of(weight_format));
    Tensor grad_weight = empty(weight_size, gy.options().memory_format(weight_format));
    dispatch_floating(gy.dtype(), "conv2d_backward_weight", []<class T>() {});
    kernels::conv2d_backward_weight(gy.dtype(), g, gy.data_ptr(), x.data_ptr(), grad_weight.data_ptr(),
                                    cuda_seam::device_of(gy), are_deterministic_algorithms_enabled());
    return grad_weight;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    auto [grad_output, input] = ctx.saved<2>();
    const ConvParams p = Conv2dOp::params_from(ctx);
    return {ctx.needs_input_grad(0) ? conv2d_4d(input, gg, Tensor(), p) : Tensor(),
            ctx.needs_input_grad(1) ? conv_backward_input_4d(grad_output, gg, input.sizes(), p) : Tensor()};
  }
};

Tensor conv2d_4d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  return apply<Conv2dOp>(input, weight, bias, p);
}
Tensor conv_backward_input_4d(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_size,
                              const ConvParams& p) {
  return apply<Conv2dBackwardInputOp>(grad_output, weight, input_size.dims(), p);
}
Tensor conv_backward_weight_4d(const Tensor& grad_output, const Tensor& input, IntArrayRef weight_size,
                               const ConvParams& p, MemoryFormat weight_format) {
  return apply<Conv2dBackwardWeightOp>(grad_output, input, weight_size.dims(), p, weight_format);
}

ConvParams conv_params(IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const ConvParams p{pair_of(stride, "stride"), pair_of(padding, "padding"), pair_of(dilation, "dilation"), groups};
  GD_CHECK(p.stride[0] > 0 && p.stride[1] > 0, "non-positive stride is not supported");
  GD_CHECK(p.padding[0] >= 0 && p.padding[1] >= 0, "negative padding is not supported");
  GD_CHECK(p.dilation[0] > 0 && p.dilation[1] > 0, "dilation should be greater than zero");
  GD_CHECK(groups > 0, "non-positive groups is not supported");
  return p;
}

void check_same_dtype(const Tensor& expected, const Tensor& found) {
  GD_CHECK(expected.dtype() == found.dtype(), fmt::format("expected scalar type {} but found {}",
                                                          c10_type_name(expected.dtype()), c10_type_name(found.dtype())));
  check_same_device(expected, found, "conv2d");
}

// ---------------------------------------------------------------------------------
// Pooling

struct PoolParams {
  Pair kernel, stride, padding, dilation;
  bool ceil_mode;
  MemoryFormat memory_format = MemoryFormat::Contiguous;  // of input, output and their gradients
};

// PyTorch's pooling_output_shape: with ceil_mode the last window may hang over the
// right edge, but must start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t numerator = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  const int64_t floor_div = numerator >= 0 ? numerator / stride : -((-numerator + stride - 1) / stride);
  int64_t out = floor_div + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

PoolParams pool_params(IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                       bool ceil_mode) {
  PoolParams p;
  p.kernel = pair_of(kernel_size, "kernel_size");
  p.stride = stride.empty() ? p.kernel : pair_of(stride, "stride");
  p.padding = pair_of(padding, "padding");
  p.dilation = pair_of(dilation, "dilation");
  p.ceil_mode = ceil_mode;
  GD_CHECK(p.kernel[0] > 0 && p.kernel[1] > 0,
           fmt::format("kernel size should be greater than zero, but got kH: {} kW: {}", p.kernel[0], p.kernel[1]));
  GD_CHECK(p.stride[0] > 0 && p.stride[1] > 0,
           fmt::format("stride should be greater than zero, but got dH: {} dW: {}", p.stride[0], p.stride[1]));
  GD_CHECK(p.dilation[0] > 0 && p.dilation[1] > 0,
           fmt::format("dilation should be greater than zero, but got dilationH: {} dilationW: {}", p.dilation[0],
                       p.dilation[1]));
  for (size_t d = 0; d < 2; ++d)
    GD_CHECK(p.padding[d] >= 0 && p.padding[d] <= p.kernel[d] / 2,
             fmt::format("pad should be at most half of kernel size, but got pad={} and kernel_size={}", p.padding[d],
                         p.kernel[d]));
  return p;
}

// Checks the input and returns the output size: input's with the last two replaced.
DimVector pool_output_size(const Tensor& input, const PoolParams& p) {
  GD_CHECK((input.dim() == 3 || input.dim() == 4) && input.size(-1) != 0 && input.size(-2) != 0 &&
               input.size(-3) != 0,
           "non-empty 3D or 4D (batch mode) tensor expected for input");
  dispatch_floating_and_reduced(input.dtype(), "pool2d", []<class T>() {});
  const int64_t h = input.size(-2), w = input.size(-1);
  const int64_t oh = pooled_size(h, p.kernel[0], p.padding[0], p.stride[0], p.dilation[0], p.ceil_mode);
  const int64_t ow = pooled_size(w, p.kernel[1], p.padding[1], p.stride[1], p.dilation[1], p.ceil_mode);
  GD_CHECK(oh >= 1 && ow >= 1, fmt::format("Given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). "
                                           "Output size is too small",
                                           input.size(-3), h, w, input.size(-3), oh, ow));
  DimVector out = input.sizes().dims();
  out[out.size() - 2] = oh;
  out[out.size() - 1] = ow;
  return out;
}

// For a [N, C, H, W] or unbatched [C, H, W] input.
kernels::Pool2dGeometry pool_geometry(IntArrayRef input, IntArrayRef output, const PoolParams& p) {
  const bool batched = input.size() == 4;
  const size_t h = input.size() - 2, w = input.size() - 1;
  return {batched ? input[0] : 1, input[h - 1],  input[h],     input[w],      output[h],
          output[w],              p.kernel[0],   p.kernel[1],  p.stride[0],   p.stride[1],
          p.padding[0],           p.padding[1],  p.dilation[0], p.dilation[1], layout_of(p.memory_format)};
}

DimVector avg_pool_ints(const PoolParams& p, bool count_include_pad) {
  return {p.kernel[0],  p.kernel[1],  p.stride[0],       p.stride[1],
          p.padding[0], p.padding[1], count_include_pad, static_cast<int64_t>(p.memory_format)};
}
PoolParams avg_pool_params_from(const Ctx& ctx) {
  const auto& v = ctx.ints;
  return {{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {1, 1}, false, static_cast<MemoryFormat>(v[7])};
}

Tensor avg_pool_4d(const Tensor& input, const DimVector& output_size, const PoolParams& p, bool count_include_pad);

// The adjoint of avg_pool2d (a linear map), so its own backward is avg_pool2d.
struct AvgPool2dBackwardOp {
  static constexpr std::string_view name = "AvgPool2DBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad_output, const DimVector& input_size, const PoolParams& p,
                        bool count_include_pad) {
    const Tensor gy = in_float32(grad_output).contiguous(p.memory_format);
    Tensor grad_input = empty(input_size, gy.options().memory_format(p.memory_format));
    kernels::avg_pool2d_backward(gy.dtype(), pool_geometry(input_size, gy.sizes(), p), gy.data_ptr(),
                                 grad_input.data_ptr(), count_include_pad, cuda_seam::device_of(gy));
    ctx.shape = gy.sizes().dims();
    ctx.ints = avg_pool_ints(p, count_include_pad);
    return rounded_to(grad_input, grad_output.dtype());
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    return {avg_pool_4d(gg, ctx.shape, avg_pool_params_from(ctx), ctx.ints[6] != 0)};
  }
};

struct AvgPool2dOp {
  static constexpr std::string_view name = "AvgPool2DBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, const DimVector& output_size, const PoolParams& p,
                        bool count_include_pad) {
    const Tensor x = in_float32(input).contiguous(p.memory_format);
    Tensor out = empty(output_size, x.options().memory_format(p.memory_format));
    kernels::avg_pool2d_forward(x.dtype(), pool_geometry(x.sizes(), output_size, p), x.data_ptr(), out.data_ptr(),
                                count_include_pad, cuda_seam::device_of(x));
    ctx.shape = x.sizes().dims();
    ctx.ints = avg_pool_ints(p, count_include_pad);
    return rounded_to(out, input.dtype());
  }
  static GradList backward(Ctx& ctx, const Tensor& grad) {
    return {apply<AvgPool2dBackwardOp>(grad, ctx.shape, avg_pool_params_from(ctx), ctx.ints[6] != 0)};
  }
};

Tensor avg_pool_4d(const Tensor& input, const DimVector& output_size, const PoolParams& p, bool count_include_pad) {
  return apply<AvgPool2dOp>(input, output_size, p, count_include_pad);
}

DimVector pool_ints(const PoolParams& p) {
  return {p.kernel[0],  p.kernel[1],  p.stride[0],   p.stride[1],   p.padding[0],
          p.padding[1], p.dilation[0], p.dilation[1], p.ceil_mode, static_cast<int64_t>(p.memory_format)};
}
PoolParams pool_params_from(const Ctx& ctx) {
  const auto& v = ctx.ints;
  return {{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {v[6], v[7]}, v[8] != 0, static_cast<MemoryFormat>(v[9])};
}

// x at max pooling's argmax indices ([N, C, OH, OW] or [C, OH, OW]), gathered in
// the layout of `format`; gather and scatter_add differentiate each other, so
// this has derivatives of every order.
Tensor gather_at_argmax(const Tensor& x, const Tensor& indices, MemoryFormat format) {
  if (format == MemoryFormat::ChannelsLast) {
    // In the NHWC order, [N, H * W, C], so that values and gradients stay channels_last.
    const IntArrayRef out = indices.sizes();
    return x.permute({0, 2, 3, 1})
        .flatten(1, 2)
        .gather(1, indices.permute({0, 2, 3, 1}).flatten(1, 2))
        .view({out[0], out[2], out[3], out[1]})
        .permute({0, 3, 1, 2});
  }
  return x.flatten(-2).gather(-1, indices.flatten(-2)).view(indices.sizes());
}

// max_pool2d's indices as gather takes them: int64 (the op keeps int32 ones on the CPU).
Tensor long_indices(const Tensor& indices) {
  return indices.scalar_type() == kInt64 ? indices : indices.to(kInt64);
}

// Max pooling's backward: each output gradient added at its window's argmax. It
// is linear in grad_output, so its own backward gathers gg at the same indices
// (PyTorch's max_pool_double_backward); the indices are constants.
struct MaxPool2dBackwardOp {
  static constexpr std::string_view name = "MaxPool2DWithIndicesBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad_output, const Tensor& indices, const DimVector& input_size,
                        const PoolParams& p) {
    const Tensor gy = in_float32(grad_output).contiguous(p.memory_format);
    Tensor grad_input = empty(input_size, gy.options().memory_format(p.memory_format));
    check_same_device(gy, indices, "max_pool2d_backward");
    const kernels::Pool2dGeometry g = pool_geometry(input_size, gy.sizes(), p);
    if (indices.scalar_type() == kInt32)
      kernels::max_pool2d_backward(g, gy.data_ptr<float>(), indices.data_ptr<int32_t>(), grad_input.data_ptr<float>(),
                                   cuda_seam::device_of(gy));
    else
      kernels::max_pool2d_backward(gy.dtype(), g, gy.data_ptr(), indices.data_ptr<int64_t>(), grad_input.data_ptr(),
                                   cuda_seam::device_of(gy));
    ctx.save_for_backward(indices);
    ctx.ints = pool_ints(p);
    return rounded_to(grad_input, grad_output.dtype());
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    return {gather_at_argmax(gg, long_indices(ctx.saved(0)), pool_params_from(ctx).memory_format), Tensor()};
  }
};

// Max pooling; `indices` (the caller's, in p's layout) receives each window's
// argmax as a flat h * W + w, as in PyTorch. The backward scatters to those
// indices in one pass instead of recomputing the values as a gather.
struct MaxPool2dOp {
  static constexpr std::string_view name = "MaxPool2DWithIndicesBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, const Tensor& indices, const DimVector& output_size,
                        const PoolParams& p) {
    const Tensor x = in_float32(input).contiguous(p.memory_format);
    Tensor values = empty(output_size, x.options().memory_format(p.memory_format));
    const kernels::Pool2dGeometry g = pool_geometry(x.sizes(), output_size, p);
    if (indices.scalar_type() == kInt32)
      kernels::max_pool2d_forward(g, x.data_ptr<float>(), values.data_ptr<float>(), indices.data_ptr<int32_t>(),
                                  cuda_seam::device_of(x));
    else
      kernels::max_pool2d_forward(x.dtype(), g, x.data_ptr(), values.data_ptr(), indices.data_ptr<int64_t>(),
                                  cuda_seam::device_of(x));
    ctx.save_for_backward(indices);
    ctx.shape = x.sizes().dims();
    ctx.ints = pool_ints(p);
    return rounded_to(values, input.dtype());
  }
  static GradList backward(Ctx& ctx, const Tensor& grad) {
    return {apply<MaxPool2dBackwardOp>(grad, ctx.saved(0), ctx.shape, pool_params_from(ctx)), Tensor()};
  }
};

// [out, in] matrix whose row i averages in[floor(i in / out) .. ceil((i + 1) in / out)).
Tensor adaptive_average_matrix(int64_t out, int64_t in, const TensorOptions& options) {
  Tensor m = zeros({out, in}, TensorOptions().dtype(kFloat64));
  double* p = m.cpu_data_ptr<double>();
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t j = start; j < end; ++j) p[i * in + j] = 1.0 / static_cast<double>(end - start);
  }
  return m.to(options.device(), options.dtype());
}

// The size of each pooling window along one dim, clipped to the padded input:
// the divisor count_include_pad uses (for ceil_mode's last window it is less
// than the kernel).
std::vector<double> window_sizes(int64_t outputs, int64_t input, int64_t kernel, int64_t stride, int64_t pad) {
  std::vector<double> sizes;
  for (int64_t i = 0; i < outputs; ++i) {
    const int64_t start = i * stride - pad;
    sizes.push_back(static_cast<double>(std::min(start + kernel, input + pad) - start));
  }
  return sizes;
}

// The outer product of per-dim window sizes over `divisor`, shaped [outputs...]:
// what turns a count_include_pad mean into a divisor_override one.
Tensor window_scale(const std::vector<std::vector<double>>& sizes, double divisor, const TensorOptions& options) {
  std::vector<double> scale{1.0 / divisor};
  DimVector shape;
  for (const std::vector<double>& dim : sizes) {
    std::vector<double> next;
    next.reserve(scale.size() * dim.size());
    for (double s : scale)
      for (double w : dim) next.push_back(s * w);
    scale = std::move(next);
    shape.push_back(static_cast<int64_t>(dim.size()));
  }
  return tensor(scale, TensorOptions().dtype(options.dtype())).reshape(shape).to(options.device());
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  GD_CHECK(input.dim() == 3 || input.dim() == 4,
           fmt::format("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {}",
                       shape_to_string(input.sizes())));
  GD_CHECK(weight.dim() == 4, fmt::format("conv2d: expected weight to be 4-dimensional, but got weight of size {}",
                                          shape_to_string(weight.sizes())));
  check_same_dtype(input, weight);
  if (bias.defined()) check_same_dtype(input, bias);
  GD_CHECK(weight.size(2) > 0 && weight.size(3) > 0,
           fmt::format("kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}",
                       weight.size(2), weight.size(3)));
  ConvParams p = conv_params(stride, padding, dilation, groups);
  const bool batched = input.dim() == 4;
  const Tensor x = batched ? input : input.unsqueeze(0);
  GD_CHECK(weight.size(0) % groups == 0,
           fmt::format("Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of "
                       "size [{}] instead",
                       groups, groups, shape_to_string(weight.sizes())));
  GD_CHECK(x.size(1) == weight.size(1) * groups,
           fmt::format("Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} "
                       "channels instead",
                       groups, shape_to_string(weight.sizes()), shape_to_string(x.sizes()), weight.size(1) * groups,
                       x.size(1)));
  GD_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
           fmt::format("Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias "
                       "of size {} instead",
                       shape_to_string(weight.sizes()), weight.size(0), shape_to_string(bias.sizes())));
  const int64_t padded_h = x.size(2) + 2 * p.padding[0], padded_w = x.size(3) + 2 * p.padding[1];
  const int64_t kernel_h = p.dilation[0] * (weight.size(2) - 1) + 1;
  const int64_t kernel_w = p.dilation[1] * (weight.size(3) - 1) + 1;
  GD_CHECK(padded_h >= kernel_h && padded_w >= kernel_w,
           fmt::format("Calculated padded input size per channel: ({} x {}). Kernel size: ({} x {}). Kernel size "
                       "can't be greater than actual input size",
                       padded_h, padded_w, kernel_h, kernel_w));
  p.memory_format = conv_format(x, weight);
  Tensor out = conv2d_4d(x, weight, bias, p);
  return batched ? out : out.squeeze(0);
}

Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_size,
                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  GD_CHECK(grad_output.dim() == 4 && weight.dim() == 4 && input_size.size() == 4,
           "conv2d_backward_input: expected 4-D grad_output, weight and input_size");
  check_same_dtype(grad_output, weight);
  ConvParams p = conv_params(stride, padding, dilation, groups);
  p.memory_format = conv_format(grad_output, weight);
  GD_CHECK(conv_output_size(input_size, weight.sizes(), p) == IntArrayRef(grad_output.sizes()),
           fmt::format("conv2d_backward_input: grad_output of size {} does not match the output size {}",
                       shape_to_string(grad_output.sizes()),
                       shape_to_string(conv_output_size(input_size, weight.sizes(), p))));
  return conv_backward_input_4d(grad_output, weight, input_size, p);
}

Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, IntArrayRef weight_size,
                              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  GD_CHECK(grad_output.dim() == 4 && input.dim() == 4 && weight_size.size() == 4,
           "conv2d_backward_weight: expected 4-D grad_output, input and weight_size");
  check_same_dtype(grad_output, input);
  ConvParams p = conv_params(stride, padding, dilation, groups);
  p.memory_format = conv_format(grad_output, input);
  GD_CHECK(conv_output_size(input.sizes(), weight_size, p) == IntArrayRef(grad_output.sizes()),
           fmt::format("conv2d_backward_weight: grad_output of size {} does not match the output size {}",
                       shape_to_string(grad_output.sizes()),
                       shape_to_string(conv_output_size(input.sizes(), weight_size, p))));
  return conv_backward_weight_4d(grad_output, input, weight_size, p, p.memory_format);
}

namespace {

// Max pooling and its indices: int64 as PyTorch returns them, or, for
// `internal_indices` that only the backward reads, int32 where they fit (Note
// [int32 pooling indices]).
std::tuple<Tensor, Tensor> max_pool2d_indexed(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                              IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                              bool internal_indices) {
  PoolParams p = pool_params(kernel_size, stride, padding, dilation, ceil_mode);
  const DimVector output_size = pool_output_size(input, p);
  p.memory_format = pool_format(input);
  // Note [int32 pooling indices]: a max pool moves its input once and writes its
  // output and indices; int64 indices are twice the output's float32 bytes, so on
  // the CPU the pool is mostly index traffic (Fashion-MNIST's first pool: 12.8 MB
  // in, 3.2 MB out, 6.4 MB of indices per batch of 128). max_pool2d returns no
  // indices, so it keeps int32 ones (every plane has fewer than 2^31 elements);
  // max_pool2d_with_indices returns PyTorch's int64.
  const bool int32 = internal_indices && input.is_cpu() && input.dim() >= 3 &&
                     (input.scalar_type() == kFloat32 || input.scalar_type() == kFloat16 ||
                      input.scalar_type() == kBFloat16) &&
                     input.size(-1) * input.size(-2) <= std::numeric_limits<int32_t>::max();
  Tensor indices = empty(output_size, TensorOptions()
                                          .dtype(int32 ? kInt32 : kInt64)
                                          .device(input.device())
                                          .memory_format(p.memory_format));
  Tensor values = apply<MaxPool2dOp>(input, indices, output_size, p);
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return max_pool2d_indexed(input, kernel_size, stride, padding, dilation, ceil_mode, false);
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_indexed(input, kernel_size, stride, padding, dilation, ceil_mode, true));
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  GD_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  PoolParams p = pool_params(kernel_size, stride, padding, {1, 1}, ceil_mode);
  const DimVector output_size = pool_output_size(input, p);
  p.memory_format = pool_format(input);
  if (!divisor_override) return avg_pool_4d(input, output_size, p, count_include_pad);
  // The window sums over divisor_override: the count_include_pad mean times
  // its own divisor (a constant per output cell) over the override.
  const Tensor mean = avg_pool_4d(input, output_size, p, /*count_include_pad=*/true);
  return mean * window_scale({window_sizes(mean.size(-2), input.size(-2), p.kernel[0], p.stride[0], p.padding[0]),
                              window_sizes(mean.size(-1), input.size(-1), p.kernel[1], p.stride[1], p.padding[1])},
                             static_cast<double>(*divisor_override), mean.options());
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  GD_CHECK(input.dim() == 3 || input.dim() == 4,
           fmt::format("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}", shape_to_string(input.sizes())));
  for (int64_t d = 1; d < input.dim(); ++d)
    GD_CHECK(input.size(d) > 0,
             fmt::format("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                         "but input has sizes {} with dimension {} being empty",
                         shape_to_string(input.sizes()), d));
  GD_CHECK(output_size.size() == 2 || output_size.size() == 1, "adaptive_avg_pool2d: output_size must be 2");
  const Pair out = pair_of(output_size, "output_size");
  GD_CHECK(out[0] >= 0 && out[1] >= 0,
           fmt::format("adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                       "received {{{}, {}}}",
                       out[0], out[1]));
  dispatch_floating_and_reduced(input.dtype(), "adaptive_avg_pool2d", []<class T>() {});
  const Tensor rows = adaptive_average_matrix(out[0], input.size(-2), input.options());
  const Tensor columns = adaptive_average_matrix(out[1], input.size(-1), input.options());
  if (pool_format(input) == MemoryFormat::ChannelsLast) {
    // The same two products on the NHWC data [N, H, W, C]: rows mix H with W * C
    // riding along, then columns mix W with C riding along.
    const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
    const Tensor nhwc = input.permute({0, 2, 3, 1}).reshape({n, h, w * c});
    const Tensor pooled_rows = matmul(rows, nhwc).reshape({n * out[0], w, c});
    return matmul(columns, pooled_rows).reshape({n, out[0], out[1], c}).permute({0, 3, 1, 2});
  }
  return matmul(matmul(rows, input), columns.t());
}

// ---------------------------------------------------------------------------------
// 1-D and 3-D convolution and pooling, and the transposed convolutions: composites
// of the 2-D ops above (1-D: a height of 1; 3-D: the depth planes stacked into the
// batch), so their derivatives of every order come from those ops' and the views'.

namespace {

// One value for every one of `dims` spatial dims, or one per dim.
DimVector per_dim(IntArrayRef values, size_t dims, std::string_view what) {
  GD_CHECK(values.size() == 1 || values.size() == dims,
           fmt::format("expected {} to be a single integer value or a list of {} values to match the "
                       "convolution dimensions, but got {}={}",
                       what, dims, what, shape_to_string(values)));
  DimVector out;
  for (size_t d = 0; d < dims; ++d) out.push_back(values[values.size() == 1 ? 0 : d]);
  return out;
}

std::string joined(const DimVector& values, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += separator;
    out += std::to_string(values[i]);
  }
  return out;
}

// x with `before` and `after` zeros along dim (a differentiable cat).
Tensor zero_pad_dim(const Tensor& x, int64_t dim, int64_t before, int64_t after) {
  if (before == 0 && after == 0) return x;
  std::vector<Tensor> parts;
  auto zeros_of = [&](int64_t n) {
    DimVector sizes = x.sizes().dims();
    sizes[static_cast<size_t>(dim)] = n;
    return zeros(sizes, x.options());
  };
  if (before > 0) parts.push_back(zeros_of(before));
  parts.push_back(x);
  if (after > 0) parts.push_back(zeros_of(after));
  return cat(parts, dim);
}

// PyTorch's checks of a convolution's operands (ConvUtils check_shape_forward),
// for `op` over `dims` spatial dims, in its messages.
void check_conv_operands(std::string_view op, size_t dims, const Tensor& input, const Tensor& weight,
                         const Tensor& bias, int64_t groups, bool transposed) {
  const int64_t d = static_cast<int64_t>(dims);
  GD_CHECK(input.dim() == d + 1 || input.dim() == d + 2,
           fmt::format("Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}", d + 1,
                       d + 2, op, shape_to_string(input.sizes())));
  GD_CHECK(weight.dim() == d + 2, fmt::format("{}: expected weight to be {}-dimensional, but got weight of size {}", op,
                                              d + 2, shape_to_string(weight.sizes())));
  check_same_dtype(input, weight);
  if (bias.defined()) check_same_dtype(input, bias);
  GD_CHECK(groups > 0, "non-positive groups is not supported");
  const DimVector x = input.dim() == d + 2 ? input.sizes().dims() : input.unsqueeze(0).sizes().dims();
  if (!transposed) {
    GD_CHECK(weight.size(0) % groups == 0,
             fmt::format("Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of "
                         "size [{}] instead",
                         groups, groups, shape_to_string(weight.sizes())));
    GD_CHECK(x[1] == weight.size(1) * groups,
             fmt::format("Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} "
                         "channels instead",
                         groups, shape_to_string(weight.sizes()), shape_to_string(x), weight.size(1) * groups, x[1]));
    GD_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
             fmt::format("Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias "
                         "of size {} instead",
                         shape_to_string(weight.sizes()), weight.size(0), shape_to_string(bias.sizes())));
  } else {
    GD_CHECK(x[1] == weight.size(0),
             fmt::format("Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} "
                         "channels instead",
                         shape_to_string(weight.sizes()), shape_to_string(x), weight.size(0), x[1]));
    GD_CHECK(weight.size(0) % groups == 0,
             fmt::format("Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of "
                         "size [{}] instead",
                         groups, groups, shape_to_string(weight.sizes())));
    GD_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(1) * groups),
             fmt::format("Given transposed=1, weight of size {}, expected bias to be 1-dimensional with {} elements, "
                         "but got bias of size {} instead",
                         shape_to_string(weight.sizes()), weight.size(1) * groups, shape_to_string(bias.sizes())));
  }
}

// Strides, paddings and dilations checked as conv_params does.
struct ConvNdParams {
  DimVector stride, padding, dilation;
};
ConvNdParams conv_nd_params(IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, size_t dims) {
  ConvNdParams p{per_dim(stride, dims, "stride"), per_dim(padding, dims, "padding"),
                 per_dim(dilation, dims, "dilation")};
  for (size_t d = 0; d < dims; ++d) {
    GD_CHECK(p.stride[d] > 0, "non-positive stride is not supported");
    GD_CHECK(p.padding[d] >= 0, "negative padding is not supported");
    GD_CHECK(p.dilation[d] > 0, "dilation should be greater than zero");
  }
  return p;
}

// The padded input must hold the dilated kernel (PyTorch's message).
void check_kernel_fits(const Tensor& input, const Tensor& weight, const ConvNdParams& p, size_t dims) {
  DimVector padded, kernel;
  for (size_t d = 0; d < dims; ++d) {
    const int64_t at = input.dim() - static_cast<int64_t>(dims) + static_cast<int64_t>(d);
    padded.push_back(input.size(at) + 2 * p.padding[d]);
    kernel.push_back(p.dilation[d] * (weight.size(static_cast<int64_t>(d) + 2) - 1) + 1);
  }
  for (size_t d = 0; d < dims; ++d)
    GD_CHECK(padded[d] >= kernel[d],
             fmt::format("Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be "
                         "greater than actual input size",
                         joined(padded, " x "), joined(kernel, " x ")));
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  check_conv_operands("conv1d", 1, input, weight, bias, groups, false);
  const ConvNdParams p = conv_nd_params(stride, padding, dilation, 1);
  check_kernel_fits(input, weight, p, 1);
  return conv2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, {1, p.stride[0]}, {0, p.padding[0]},
                {1, p.dilation[0]}, groups)
      .squeeze(-2);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  check_conv_operands("conv3d", 3, input, weight, bias, groups, false);
  const ConvNdParams p = conv_nd_params(stride, padding, dilation, 3);
  check_kernel_fits(input, weight, p, 3);
  // The taps' planes are summed in float32 and rounded once (see in_float32).
  if (is_reduced_floating_point(input.dtype()))
    return conv3d(input.to(kFloat32), weight.to(kFloat32), bias.defined() ? bias.to(kFloat32) : bias, stride,
                  padding, dilation, groups)
        .to(input.dtype());
  const bool batched = input.dim() == 5;
  const Tensor x = zero_pad_dim(batched ? input : input.unsqueeze(0), 2, p.padding[0], p.padding[0]);
  const int64_t n = x.size(0), channels = x.size(1), height = x.size(3), width = x.size(4);
  const int64_t taps = weight.size(2);
  const int64_t out_depth = (x.size(2) - p.dilation[0] * (taps - 1) - 1) / p.stride[0] + 1;
  // Depth tap k sees the planes k dilation + i stride: a conv2d over them, stacked in the batch.
  Tensor sum;
  for (int64_t k = 0; k < taps; ++k) {
    const int64_t first = k * p.dilation[0];
    const Tensor planes = x.slice(2, first, first + (out_depth - 1) * p.stride[0] + 1, p.stride[0])
                              .transpose(1, 2)
                              .reshape({n * out_depth, channels, height, width});
    const Tensor y = conv2d(planes, weight.select(2, k), Tensor(), {p.stride[1], p.stride[2]},
                            {p.padding[1], p.padding[2]}, {p.dilation[1], p.dilation[2]}, groups);
    sum = sum.defined() ? sum + y : y;
  }
  Tensor out = sum.reshape({n, out_depth, sum.size(1), sum.size(2), sum.size(3)}).transpose(1, 2).contiguous();
  if (bias.defined()) out = out + bias.view({1, -1, 1, 1, 1});
  return batched ? out : out.squeeze(0);
}

namespace {

// PyTorch's check of output_padding (slow_conv_transpose shape check) and of the output size.
void check_transposed_sizes(const Tensor& input, const Tensor& weight, const ConvNdParams& p,
                            const DimVector& output_padding, size_t dims) {
  bool fits = true;
  for (size_t d = 0; d < dims; ++d) {
    GD_CHECK(output_padding[d] >= 0, "negative output_padding is not supported");
    fits = fits && (output_padding[d] < p.stride[d] || output_padding[d] < p.dilation[d]);
  }
  if (!fits) {
    // PyTorch runs 1-D as 2-D with a height of 1, and its message says so.
    const std::vector<const char*> names = dims == 3 ? std::vector<const char*>{"depth", "height", "width"}
                                                     : std::vector<const char*>{"height", "width"};
    const bool one_d = dims == 1;
    auto list = [&](std::string_view what, const DimVector& values, int64_t height_1d) {
      std::string out;
      for (size_t d = 0; d < names.size(); ++d)
        out += fmt::format(" {}_{}: {}", what, names[d], one_d ? (d == 0 ? height_1d : values[0]) : values[d]);
      return out;
    };
    throw Error("output padding must be smaller than either stride or dilation, but got" +
                list("output_padding", output_padding, 0) + list("stride", p.stride, 1) +
                list("dilation", p.dilation, 1));
  }
  DimVector in, out;
  for (size_t d = 0; d < dims; ++d) {
    in.push_back(input.size(input.dim() - static_cast<int64_t>(dims) + static_cast<int64_t>(d)));
    out.push_back((in.back() - 1) * p.stride[d] - 2 * p.padding[d] +
                  p.dilation[d] * (weight.size(static_cast<int64_t>(d) + 2) - 1) + output_padding[d] + 1);
  }
  for (size_t d = 0; d < dims; ++d)
    GD_CHECK(out[d] >= 1, fmt::format("Given input size per channel: ({}). Calculated output size per channel: ({}). "
                                      "Output size is too small",
                                      joined(in, " x "), joined(out, " x ")));
}

// conv_transpose2d on checked 4-D operands, without bias.
Tensor conv_transpose2d_4d(const Tensor& x, const Tensor& weight, const ConvNdParams& p, const DimVector& output_padding,
                           int64_t groups) {
  DimVector out_size{x.size(0), weight.size(1) * groups};
  Tensor y = x;
  for (size_t d = 0; d < 2; ++d) {
    const int64_t in = x.size(static_cast<int64_t>(d) + 2);
    out_size.push_back((in - 1) * p.stride[d] - 2 * p.padding[d] +
                       p.dilation[d] * (weight.size(static_cast<int64_t>(d) + 2) - 1) + output_padding[d] + 1);
    // The adjoint of conv2d on an input of out_size sees floor(output_padding /
    // stride) more outputs: zero rows at the end of x, which add nothing.
    y = zero_pad_dim(y, static_cast<int64_t>(d) + 2, 0, output_padding[d] / p.stride[d]);
  }
  return conv2d_backward_input(y, weight, out_size, {p.stride[0], p.stride[1]}, {p.padding[0], p.padding[1]},
                               {p.dilation[0], p.dilation[1]}, groups);
}

}  // namespace

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  check_conv_operands("conv_transpose2d", 2, input, weight, bias, groups, true);
  const ConvNdParams p = conv_nd_params(stride, padding, dilation, 2);
  const DimVector extra = per_dim(output_padding, 2, "output_padding");
  check_transposed_sizes(input, weight, p, extra, 2);
  const bool batched = input.dim() == 4;
  Tensor out = conv_transpose2d_4d(batched ? input : input.unsqueeze(0), weight, p, extra, groups);
  if (bias.defined()) out = out + bias.view({1, -1, 1, 1});
  return batched ? out : out.squeeze(0);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  check_conv_operands("conv_transpose1d", 1, input, weight, bias, groups, true);
  const ConvNdParams p = conv_nd_params(stride, padding, dilation, 1);
  const DimVector extra = per_dim(output_padding, 1, "output_padding");
  check_transposed_sizes(input, weight, p, extra, 1);
  const bool batched = input.dim() == 3;
  const ConvNdParams p2{{1, p.stride[0]}, {0, p.padding[0]}, {1, p.dilation[0]}};
  Tensor out = conv_transpose2d_4d((batched ? input : input.unsqueeze(0)).unsqueeze(2), weight.unsqueeze(2), p2,
                                   {0, extra[0]}, groups)
                   .squeeze(2);
  if (bias.defined()) out = out + bias.view({1, -1, 1});
  return batched ? out : out.squeeze(0);
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  check_conv_operands("conv_transpose3d", 3, input, weight, bias, groups, true);
  const ConvNdParams p = conv_nd_params(stride, padding, dilation, 3);
  const DimVector extra = per_dim(output_padding, 3, "output_padding");
  check_transposed_sizes(input, weight, p, extra, 3);
  if (is_reduced_floating_point(input.dtype()))  // summed in float32, rounded once (as conv3d)
    return conv_transpose3d(input.to(kFloat32), weight.to(kFloat32), bias.defined() ? bias.to(kFloat32) : bias,
                            stride, padding, output_padding, groups, dilation)
        .to(input.dtype());
  const bool batched = input.dim() == 5;
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), depth = x.size(2), taps = weight.size(2);
  const int64_t stride_d = p.stride[0], dilation_d = p.dilation[0];
  const int64_t out_depth = (depth - 1) * stride_d - 2 * p.padding[0] + dilation_d * (taps - 1) + extra[0] + 1;
  // Depth positions before cropping the padding: input plane i, tap k lands at i stride + k dilation.
  const int64_t full_depth = std::max((depth - 1) * stride_d + dilation_d * (taps - 1) + 1, p.padding[0] + out_depth);
  const Tensor planes = x.transpose(1, 2).reshape({n * depth, x.size(1), x.size(3), x.size(4)});
  const ConvNdParams p2{{p.stride[1], p.stride[2]}, {p.padding[1], p.padding[2]}, {p.dilation[1], p.dilation[2]}};
  Tensor sum;
  for (int64_t k = 0; k < taps; ++k) {
    Tensor y = conv_transpose2d_4d(planes, weight.select(2, k), p2, {extra[1], extra[2]}, groups);
    const int64_t channels = y.size(1), height = y.size(2), width = y.size(3);
    y = y.reshape({n, depth, channels, height, width});
    if (stride_d > 1)  // stride - 1 zero planes after each
      y = cat({y.unsqueeze(2), zeros({n, depth, stride_d - 1, channels, height, width}, y.options())}, 2)
              .reshape({n, depth * stride_d, channels, height, width})
              .narrow(1, 0, (depth - 1) * stride_d + 1);
    y = zero_pad_dim(y, 1, k * dilation_d, full_depth - k * dilation_d - y.size(1));
    sum = sum.defined() ? sum + y : y;
  }
  Tensor out = sum.narrow(1, p.padding[0], out_depth).transpose(1, 2).contiguous();
  if (bias.defined()) out = out + bias.view({1, -1, 1, 1, 1});
  return batched ? out : out.squeeze(0);
}

// ---- 1-D and 3-D pooling ----

namespace {

// The 1-D pooling options checked with PyTorch's max_pool1d messages.
void check_pool1d(std::string_view op, const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation) {
  GD_CHECK(input.dim() == 2 || input.dim() == 3,
           fmt::format("{}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but "
                       "got:{}",
                       op, shape_to_string(input.sizes())));
  GD_CHECK(kernel_size.size() == 1, fmt::format("{}() kernel_size must be an int, list of ints or tuple of ints of "
                                                "size 1 but got size {}",
                                                op, kernel_size.size()));
  GD_CHECK(stride.size() <= 1, fmt::format("{}() stride must be None, an int, list of ints, or tuple of ints of size "
                                           "1 but got size {}",
                                           op, stride.size()));
  GD_CHECK(padding.size() == 1, fmt::format("{}() padding must be an int, list of ints, or tuple of ints of size 1 "
                                            "but got size {}",
                                            op, padding.size()));
  GD_CHECK(dilation.size() == 1, fmt::format("{}() dilation must be an int, list of ints or tuple of ints of size 1 "
                                             "but got size {}",
                                             op, dilation.size()));
  GD_CHECK(kernel_size[0] > 0,
           fmt::format("{}() kernel_size must be greater than zero, but got {}", op, kernel_size[0]));
  GD_CHECK(stride.empty() || stride[0] > 0,
           fmt::format("{}() stride must be greater than zero, but got {}", op, stride[0]));
  GD_CHECK(padding[0] >= 0, fmt::format("{}() padding must be non-negative, but got {}", op, padding[0]));
  GD_CHECK(padding[0] <= kernel_size[0] / 2,
           fmt::format("{}() padding should be at most half of kernel size, but got padding={} and kernel_size={}", op,
                       padding[0], kernel_size[0]));
  GD_CHECK(dilation[0] > 0, fmt::format("{}() dilation must be greater than zero, but got {}", op, dilation[0]));
}

struct Pool3dParams {
  DimVector kernel, stride, padding, dilation;
  bool ceil_mode;
};

// PyTorch's 3-D pooling checks (pool3d_shape_check) and the output size [.., OD, OH, OW].
Pool3dParams pool3d_params(std::string_view op, const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, DimVector& output_size) {
  GD_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3,
           fmt::format("{}: kernel_size must either be a single int, or a tuple of three ints", op));
  GD_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
           fmt::format("{}: stride must either be omitted, a single int, or a tuple of three ints", op));
  GD_CHECK(padding.size() == 1 || padding.size() == 3,
           fmt::format("{}: padding must either be a single int, or a tuple of three ints", op));
  GD_CHECK(dilation.size() == 1 || dilation.size() == 3,
           fmt::format("{}: dilation must be either a single int, or a tuple of three ints", op));
  Pool3dParams p{per_dim(kernel_size, 3, "kernel_size"), {}, per_dim(padding, 3, "padding"),
                 per_dim(dilation, 3, "dilation"), ceil_mode};
  p.stride = stride.empty() ? p.kernel : per_dim(stride, 3, "stride");
  GD_CHECK(p.kernel[0] > 0 && p.kernel[1] > 0 && p.kernel[2] > 0,
           fmt::format("kernel size should be greater than zero, but got kT: {} kH: {} kW: {}", p.kernel[0],
                       p.kernel[1], p.kernel[2]));
  GD_CHECK(p.stride[0] > 0 && p.stride[1] > 0 && p.stride[2] > 0,
           fmt::format("stride should be greater than zero, but got dT: {} dH: {} dW: {}", p.stride[0], p.stride[1],
                       p.stride[2]));
  GD_CHECK(p.dilation[0] > 0 && p.dilation[1] > 0 && p.dilation[2] > 0,
           fmt::format("dilation should be greater than zero, but got dilationT: {} dilationH: {} dilationW: {}",
                       p.dilation[0], p.dilation[1], p.dilation[2]));
  GD_CHECK((input.dim() == 4 || input.dim() == 5) && input.numel() > 0,
           "non-empty 4D or 5D (batch mode) tensor expected for input");
  for (size_t d = 0; d < 3; ++d) {
    GD_CHECK(p.padding[d] >= 0, "pad must be non-negative");
    GD_CHECK(p.padding[d] <= p.kernel[d] / 2,
             fmt::format("pad should be at most half of kernel size, but got pad={} and kernel_size={}", p.padding[d],
                         p.kernel[d]));
  }
  dispatch_floating_and_reduced(input.dtype(), op, []<class T>() {});
  DimVector in, out;
  for (size_t d = 0; d < 3; ++d) {
    in.push_back(input.size(input.dim() - 3 + static_cast<int64_t>(d)));
    out.push_back(pooled_size(in.back(), p.kernel[d], p.padding[d], p.stride[d], p.dilation[d], ceil_mode));
  }
  const int64_t channels = input.size(input.dim() - 4);
  GD_CHECK(out[0] >= 1 && out[1] >= 1 && out[2] >= 1,
           fmt::format("Given input size: ({}x{}x{}x{}). Calculated output size: ({}x{}x{}x{}). Output size is too "
                       "small",
                       channels, in[0], in[1], in[2], channels, out[0], out[1], out[2]));
  output_size = input.sizes().dims();
  for (size_t d = 0; d < 3; ++d) output_size[output_size.size() - 3 + d] = out[d];
  return p;
}

// The positions 0..n-1 along a dim, int64, shaped to broadcast against it.
Tensor positions(int64_t n, const Tensor& like) {
  return arange(n, TensorOptions().dtype(kInt64).device(like.device()));
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  check_pool1d("max_pool1d", input, kernel_size, stride, padding, dilation);
  GD_CHECK(input.size(-1) > 0 && input.size(-2) > 0,
           fmt::format("max_pool1d() Expected 2D or 3D input tensor with non-zero size for non-batch dimensions, but "
                       "got {}",
                       shape_to_string(input.sizes())));
  const int64_t out = pooled_size(input.size(-1), kernel_size[0], padding[0],
                                  stride.empty() ? kernel_size[0] : stride[0], dilation[0], ceil_mode);
  GD_CHECK(out >= 1, fmt::format("max_pool1d() Invalid computed output size: {}", out));
  auto [values, indices] =
      max_pool2d_with_indices(input.unsqueeze(-2), {1, kernel_size[0]}, {1, stride.empty() ? kernel_size[0] : stride[0]},
                              {0, padding[0]}, {1, dilation[0]}, ceil_mode);
  return {values.squeeze(-2), indices.squeeze(-2)};
}

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

namespace {

// Max pooling in 3-D: the max over each depth plane's (height, width) window,
// then over the depth window of those; the indices (when wanted) are the depth
// found second with the plane index found first at that depth.
std::tuple<Tensor, Tensor> max_pool3d_impl(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                           IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                           bool want_indices) {
  DimVector output_size;
  const Pool3dParams p = pool3d_params("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, output_size);
  const bool batched = input.dim() == 5;
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), channels = x.size(1), depth = x.size(2), height = x.size(3), width = x.size(4);
  auto [planes, plane_indices] =
      max_pool2d_with_indices(x.reshape({n, channels * depth, height, width}), {p.kernel[1], p.kernel[2]},
                              {p.stride[1], p.stride[2]}, {p.padding[1], p.padding[2]}, {p.dilation[1], p.dilation[2]},
                              ceil_mode);
  const int64_t out_h = planes.size(2), out_w = planes.size(3), cells = out_h * out_w;
  // [N, C, cells, depth]: each output cell's column through the depth planes.
  const Tensor columns = planes.reshape({n, channels, depth, cells}).transpose(2, 3).contiguous();
  auto [pooled, column_indices] = max_pool2d_with_indices(columns, {1, p.kernel[0]}, {1, p.stride[0]}, {0, p.padding[0]},
                                                          {1, p.dilation[0]}, ceil_mode);
  const int64_t out_d = pooled.size(3);
  Tensor values = pooled.transpose(2, 3).reshape({n, channels, out_d, out_h, out_w});
  Tensor indices;
  if (want_indices) {
    // column_indices is cell * depth + d; the plane index at that d gives h * W + w.
    const Tensor d = (column_indices - (positions(cells, x) * depth).view({cells, 1})).transpose(2, 3);
    const Tensor hw = plane_indices.reshape({n, channels, depth, cells}).gather(2, d);
    indices = (d * (height * width) + hw).reshape({n, channels, out_d, out_h, out_w});
    if (!batched) indices = indices.squeeze(0);
  }
  return {batched ? values : values.squeeze(0), indices};
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return max_pool3d_impl(input, kernel_size, stride, padding, dilation, ceil_mode, true);
}

Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool3d_impl(input, kernel_size, stride, padding, dilation, ceil_mode, false));
}

Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  GD_CHECK(input.dim() == 2 || input.dim() == 3,
           fmt::format("Expected 2 to 3 dimensions, but got {}-dimensional tensor for argument #1 'self' (while "
                       "checking arguments for avg_pool1d)",
                       input.dim()));
  GD_CHECK(kernel_size.size() == 1,
           fmt::format("avg_pool1d() argument 'kernel_size' should contain one int (got {})", kernel_size.size()));
  GD_CHECK(stride.size() <= 1,
           fmt::format("avg_pool1d() argument 'stride' should contain one int (got {})", stride.size()));
  GD_CHECK(padding.size() == 1,
           fmt::format("avg_pool1d() argument 'padding' should contain one int (got {})", padding.size()));
  const int64_t step = stride.empty() ? kernel_size[0] : stride[0];
  return avg_pool2d(input.unsqueeze(-2), {1, kernel_size[0]}, {1, step}, {0, padding[0]}, ceil_mode,
                    count_include_pad)
      .squeeze(-2);
}

Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  GD_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  DimVector output_size;
  const Pool3dParams p = pool3d_params("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode, output_size);
  const bool batched = input.dim() == 5;
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), channels = x.size(1), depth = x.size(2), height = x.size(3), width = x.size(4);
  const bool include_pad = count_include_pad || divisor_override.has_value();
  // Separable: a box's count of padded (or of real) elements is the product of its per-dim counts.
  const Tensor planes = avg_pool2d(x.reshape({n, channels * depth, height, width}), {p.kernel[1], p.kernel[2]},
                                   {p.stride[1], p.stride[2]}, {p.padding[1], p.padding[2]}, ceil_mode, include_pad);
  const int64_t out_h = planes.size(2), out_w = planes.size(3);
  const Tensor columns = planes.reshape({n, channels, depth, out_h * out_w}).transpose(2, 3).contiguous();
  const Tensor pooled =
      avg_pool2d(columns, {1, p.kernel[0]}, {1, p.stride[0]}, {0, p.padding[0]}, ceil_mode, include_pad);
  const int64_t out_d = pooled.size(3);
  Tensor out = pooled.transpose(2, 3).reshape({n, channels, out_d, out_h, out_w});
  if (divisor_override)
    out = out * window_scale({window_sizes(out_d, depth, p.kernel[0], p.stride[0], p.padding[0]),
                              window_sizes(out_h, height, p.kernel[1], p.stride[1], p.padding[1]),
                              window_sizes(out_w, width, p.kernel[2], p.stride[2], p.padding[2])},
                             static_cast<double>(*divisor_override), out.options());
  return batched ? out : out.squeeze(0);
}

namespace {

// Checks an adaptive pool's input ([C, *spatial] or [N, C, *spatial]) and
// returns its `dims` output sizes.
DimVector adaptive_sizes(std::string_view op, const Tensor& input, IntArrayRef output_size, size_t dims) {
  const int64_t d = static_cast<int64_t>(dims);
  GD_CHECK(input.dim() == d + 1 || input.dim() == d + 2,
           fmt::format("{}(): Expected {}D or {}D tensor, but got {}", op, d + 1, d + 2, shape_to_string(input.sizes())));
  for (int64_t i = 1; i < input.dim(); ++i)
    GD_CHECK(input.size(i) > 0,
             fmt::format("{}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} "
                         "with dimension {} being empty",
                         op, shape_to_string(input.sizes()), i));
  GD_CHECK(output_size.size() == dims || output_size.size() == 1,
           fmt::format("{}: output_size must be {}", op, dims));
  DimVector out = per_dim(output_size, dims, "output_size");
  for (int64_t v : out)
    GD_CHECK(v >= 0, fmt::format("{}: elements of output_size must be greater than or equal to 0 but received {}", op,
                                 shape_to_string(out)));
  dispatch_floating_and_reduced(input.dtype(), op, []<class T>() {});
  return out;
}

// The max over adaptive windows of x's last dim, and the position along that dim
// of each max. Every window is gathered at the widest window's width, a short one
// repeating its last element (which changes neither the max nor its position).
std::tuple<Tensor, Tensor> adaptive_max_last_dim(const Tensor& x, int64_t out) {
  const int64_t in = x.size(-1);
  int64_t widest = 0;
  for (int64_t i = 0; i < out; ++i) widest = std::max(widest, ((i + 1) * in + out - 1) / out - i * in / out);
  std::vector<int64_t> taps;
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t j = 0; j < widest; ++j) taps.push_back(std::min(start + j, end - 1));
  }
  const Tensor index = tensor(taps, TensorOptions().dtype(kInt64)).to(x.device());
  DimVector shape = x.sizes().dims();
  shape.back() = out;
  shape.push_back(widest);
  const Tensor windows = x.index_select(-1, index).reshape(shape);
  auto [values, slot] = windows.max(-1);
  const Tensor where = index.view({out, widest}).expand(shape).gather(-1, slot.unsqueeze(-1)).squeeze(-1);
  return {values, where};
}

}  // namespace

Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  GD_CHECK(input.dim() == 2 || input.dim() == 3,
           fmt::format("Expected 2 to 3 dimensions, but got {}-dimensional tensor for argument #1 'self' (while "
                       "checking arguments for adaptive_avg_pool1d)",
                       input.dim()));
  GD_CHECK(output_size.size() == 1,
           fmt::format("adaptive_avg_pool1d() argument 'output_size' should contain one int (got {})",
                       output_size.size()));
  return adaptive_avg_pool2d(input.unsqueeze(-2), {1, output_size[0]}).squeeze(-2);
}

Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size) {
  const DimVector out = adaptive_sizes("adaptive_avg_pool3d", input, output_size, 3);
  const int64_t depth = input.size(-3), height = input.size(-2), width = input.size(-1);
  DimVector flat = input.sizes().dims();
  flat.pop_back();
  flat.back() = height * width;
  DimVector pooled = input.sizes().dims();
  pooled[pooled.size() - 3] = out[0];
  // Three products with averaging matrices: depth (height and width riding along), rows, columns.
  Tensor y = matmul(adaptive_average_matrix(out[0], depth, input.options()), input.reshape(flat));
  pooled[pooled.size() - 2] = height;
  y = y.reshape(pooled);
  y = matmul(adaptive_average_matrix(out[1], height, input.options()), y);
  return matmul(y, adaptive_average_matrix(out[2], width, input.options()).t());
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size) {
  GD_CHECK(input.dim() == 2 || input.dim() == 3,
           fmt::format("adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {}", shape_to_string(input.sizes())));
  GD_CHECK(output_size.size() == 1,
           fmt::format("adaptive_max_pool1d() argument 'output_size' should contain one int (got {})",
                       output_size.size()));
  const DimVector out = adaptive_sizes("adaptive_max_pool1d", input, output_size, 1);
  return adaptive_max_last_dim(input, out[0]);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  const DimVector out = adaptive_sizes("adaptive_max_pool2d", input, output_size, 2);
  const int64_t width = input.size(-1);
  auto [by_rows, w] = adaptive_max_last_dim(input, out[1]);                   // [..., H, OW]
  auto [pooled, h] = adaptive_max_last_dim(by_rows.transpose(-1, -2), out[0]);  // [..., OW, OH]
  const Tensor rows = h.transpose(-1, -2);
  return {pooled.transpose(-1, -2).contiguous(), rows * width + w.gather(-2, rows)};
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input, IntArrayRef output_size) {
  const DimVector out = adaptive_sizes("adaptive_max_pool3d", input, output_size, 3);
  const int64_t r = input.dim();
  const int64_t height = input.size(-2), width = input.size(-1);
  auto [by_rows, w] = adaptive_max_last_dim(input, out[2]);                       // [..., D, H, OW]
  auto [by_planes, h] = adaptive_max_last_dim(by_rows.transpose(-1, -2), out[1]);  // [..., D, OW, OH]
  // [..., OH, OW, D] for the depth windows, then back to [..., OD, OH, OW].
  DimVector to_last, from_last;
  for (int64_t i = 0; i < r - 3; ++i) {
    to_last.push_back(i);
    from_last.push_back(i);
  }
  for (int64_t d : {r - 1, r - 2, r - 3}) to_last.push_back(d);  // from [..., D, OW, OH]
  for (int64_t d : {r - 1, r - 3, r - 2}) from_last.push_back(d);
  auto [pooled, d] = adaptive_max_last_dim(by_planes.permute(to_last), out[0]);  // [..., OH, OW, OD]
  const Tensor depth_index = d.permute(from_last);                                // [..., OD, OH, OW]
  const Tensor row_index = h.transpose(-1, -2).gather(-3, depth_index);          // h at [..., d, oh, ow]
  DimVector plane_rows = w.sizes().dims();  // [..., D, H, OW] -> [..., D * H, OW]
  plane_rows.pop_back();
  plane_rows.pop_back();
  plane_rows.back() = input.size(-3) * height;
  plane_rows.push_back(out[2]);
  DimVector cells = depth_index.sizes().dims();  // [..., OD, OH, OW] -> [..., OD * OH, OW]
  cells.pop_back();
  cells.pop_back();
  cells.back() = out[0] * out[1];
  cells.push_back(out[2]);
  const Tensor plane_row = depth_index * height + row_index;
  const Tensor column_index = w.reshape(plane_rows).gather(-2, plane_row.reshape(cells)).reshape(depth_index.sizes());
  return {pooled.permute(from_last).contiguous(), plane_row * width + column_index};
}

}  // namespace gradiens
