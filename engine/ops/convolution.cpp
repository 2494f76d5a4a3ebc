// conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d: PyTorch's checks and
// messages, dispatch to kernels/cpu/conv.h, and backward formulas built from these
// same ops (derivative orders are listed in engine/convolution.h). Channels-last
// inputs run in NHWC throughout, forward and backward (Note [Channels-last ops]).
#include "engine/convolution.h"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "kernels/cpu/conv.h"

namespace gradiens {

namespace {

using Pair = std::array<int64_t, 2>;
using kernels::cpu::Layout;

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
kernels::cpu::Conv2dGeometry conv_geometry(IntArrayRef input, IntArrayRef weight, const ConvParams& p,
                                           Layout weight_layout) {
  const DimVector out = conv_output_size(input, weight, p);
  kernels::cpu::Conv2dGeometry g{input[0],     input[1],      input[2],      input[3],      weight[0],
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

struct Conv2dOp {
  static constexpr std::string_view name = "ConvolutionBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvParams& p) {
    const Tensor x = input.contiguous(p.memory_format), w = dense_weight(weight);
    const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
    const kernels::cpu::Conv2dGeometry g = conv_geometry(x.sizes(), w.sizes(), p, weight_layout_of(w));
    Tensor out = empty(conv_output_size(x.sizes(), w.sizes(), p), x.options().memory_format(p.memory_format));
    dispatch_floating(x.dtype(), "conv2d", [&]<class T>() {
      kernels::cpu::conv2d_forward(g, x.cpu_data_ptr<T>(), w.cpu_data_ptr<T>(), b.defined() ? b.cpu_data_ptr<T>() : nullptr,
                                   out.cpu_data_ptr<T>());
    });
    ctx.save_for_backward(input, weight);
    ctx.ints = conv_ints(p);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& grad) {
    auto [input, weight] = ctx.saved<2>();
    const ConvParams p = params_from(ctx);
    if (!GradMode::is_enabled() && grad.dtype() == kFloat32 && ctx.needs_input_grad(1)) {
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
    const kernels::cpu::Conv2dGeometry g = conv_geometry(x.sizes(), w.sizes(), p, weight_layout_of(w));
    GradList grads{ctx.needs_input_grad(0) ? empty(x.sizes(), gy.options().memory_format(p.memory_format)) : Tensor(),
                   empty(w.sizes(), gy.options().memory_format(weight_format)),
                   ctx.needs_input_grad(2) ? empty({w.size(0)}, gy.options()) : Tensor()};
    const auto data = [](const Tensor& t) { return t.defined() ? t.cpu_data_ptr<float>() : nullptr; };
    const bool bias_done =
        kernels::cpu::conv2d_backward(g, gy.cpu_data_ptr<float>(), x.cpu_data_ptr<float>(), w.cpu_data_ptr<float>(),
                                      data(grads[0]), data(grads[1]), data(grads[2]));
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
    const Tensor gy = grad_output.contiguous(p.memory_format), w = dense_weight(weight);
    const kernels::cpu::Conv2dGeometry g = conv_geometry(input_size, w.sizes(), p, weight_layout_of(w));
    Tensor grad_input = empty(input_size, gy.options().memory_format(p.memory_format));
    dispatch_floating(gy.dtype(), "conv2d_backward_input", [&]<class T>() {
      kernels::cpu::conv2d_backward_input(g, gy.cpu_data_ptr<T>(), w.cpu_data_ptr<T>(), grad_input.cpu_data_ptr<T>());
    });
    ctx.save_for_backward(grad_output, weight);
    ctx.ints = conv_ints(p);
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
    const Tensor gy = grad_output.contiguous(p.memory_format), x = input.contiguous(p.memory_format);
    const kernels::cpu::Conv2dGeometry g = conv_geometry(x.sizes(), weight_size, p, layout_of(weight_format));
    Tensor grad_weight = empty(weight_size, gy.options().memory_format(weight_format));
    dispatch_floating(gy.dtype(), "conv2d_backward_weight", [&]<class T>() {
      kernels::cpu::conv2d_backward_weight(g, gy.cpu_data_ptr<T>(), x.cpu_data_ptr<T>(), grad_weight.cpu_data_ptr<T>());
    });
    ctx.save_for_backward(grad_output, input);
    ctx.ints = conv_ints(p);
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
  GD_CHECK(expected.device() == found.device(),
           "Expected all tensors to be on the same device, but found at least two devices");
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
  dispatch_floating(input.dtype(), "pool2d", []<class T>() {});
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
kernels::cpu::Pool2dGeometry pool_geometry(IntArrayRef input, IntArrayRef output, const PoolParams& p) {
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
    const Tensor gy = grad_output.contiguous(p.memory_format);
    Tensor grad_input = empty(input_size, gy.options().memory_format(p.memory_format));
    const kernels::cpu::Pool2dGeometry g = pool_geometry(input_size, gy.sizes(), p);
    dispatch_floating(gy.dtype(), "avg_pool2d_backward", [&]<class T>() {
      kernels::cpu::avg_pool2d_backward(g, gy.cpu_data_ptr<T>(), grad_input.cpu_data_ptr<T>(), count_include_pad);
    });
    ctx.shape = gy.sizes().dims();
    ctx.ints = avg_pool_ints(p, count_include_pad);
    return grad_input;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    return {avg_pool_4d(gg, ctx.shape, avg_pool_params_from(ctx), ctx.ints[6] != 0)};
  }
};

struct AvgPool2dOp {
  static constexpr std::string_view name = "AvgPool2DBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, const DimVector& output_size, const PoolParams& p,
                        bool count_include_pad) {
    const Tensor x = input.contiguous(p.memory_format);
    Tensor out = empty(output_size, x.options().memory_format(p.memory_format));
    const kernels::cpu::Pool2dGeometry g = pool_geometry(x.sizes(), output_size, p);
    dispatch_floating(x.dtype(), "avg_pool2d", [&]<class T>() {
      kernels::cpu::avg_pool2d_forward(g, x.cpu_data_ptr<T>(), out.cpu_data_ptr<T>(), count_include_pad);
    });
    ctx.shape = x.sizes().dims();
    ctx.ints = avg_pool_ints(p, count_include_pad);
    return out;
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

// Max pooling's backward: each output gradient added at its window's argmax. It
// is linear in grad_output, so its own backward gathers gg at the same indices
// (PyTorch's max_pool_double_backward); the indices are constants.
struct MaxPool2dBackwardOp {
  static constexpr std::string_view name = "MaxPool2DWithIndicesBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad_output, const Tensor& indices, const DimVector& input_size,
                        const PoolParams& p) {
    const Tensor gy = grad_output.contiguous(p.memory_format);
    Tensor grad_input = empty(input_size, gy.options().memory_format(p.memory_format));
    const kernels::cpu::Pool2dGeometry g = pool_geometry(input_size, gy.sizes(), p);
    dispatch_floating(gy.dtype(), "max_pool2d_backward", [&]<class T>() {
      kernels::cpu::max_pool2d_backward(g, gy.cpu_data_ptr<T>(), indices.cpu_data_ptr<int64_t>(),
                                        grad_input.cpu_data_ptr<T>());
    });
    ctx.save_for_backward(indices);
    ctx.ints = pool_ints(p);
    return grad_input;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    return {gather_at_argmax(gg, ctx.saved(0), pool_params_from(ctx).memory_format), Tensor()};
  }
};

// Max pooling; `indices` (the caller's, in p's layout) receives each window's
// argmax as a flat h * W + w, as in PyTorch. The backward scatters to those
// indices in one pass instead of recomputing the values as a gather.
struct MaxPool2dOp {
  static constexpr std::string_view name = "MaxPool2DWithIndicesBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, const Tensor& indices, const DimVector& output_size,
                        const PoolParams& p) {
    const Tensor x = input.contiguous(p.memory_format);
    Tensor values = empty(output_size, x.options().memory_format(p.memory_format));
    const kernels::cpu::Pool2dGeometry g = pool_geometry(x.sizes(), output_size, p);
    dispatch_floating(x.dtype(), "max_pool2d", [&]<class T>() {
      kernels::cpu::max_pool2d_forward(g, x.cpu_data_ptr<T>(), values.cpu_data_ptr<T>(),
                                       indices.cpu_data_ptr<int64_t>());
    });
    ctx.save_for_backward(indices);
    ctx.shape = x.sizes().dims();
    ctx.ints = pool_ints(p);
    return values;
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
  return m.to(options.dtype());
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

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  PoolParams p = pool_params(kernel_size, stride, padding, dilation, ceil_mode);
  const DimVector output_size = pool_output_size(input, p);
  p.memory_format = pool_format(input);
  Tensor indices = empty(output_size, TensorOptions().dtype(kInt64).memory_format(p.memory_format));
  Tensor values = apply<MaxPool2dOp>(input, indices, output_size, p);
  return {values, indices};
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  PoolParams p = pool_params(kernel_size, stride, padding, {1, 1}, ceil_mode);
  const DimVector output_size = pool_output_size(input, p);
  p.memory_format = pool_format(input);
  return avg_pool_4d(input, output_size, p, count_include_pad);
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
  dispatch_floating(input.dtype(), "adaptive_avg_pool2d", []<class T>() {});
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

}  // namespace gradiens
