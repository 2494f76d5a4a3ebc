// Conv2d and LazyConv2d over the engine's conv2d, and the padding modes
// ("reflect", "replicate", "circular") built from index_select.
#include "nn/modules/conv.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/autograd/grad_mode.h"
#include "engine/convolution.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "nn/init.h"

namespace gradiens::nn {

namespace detail {

namespace {

// The source position of each padded position along a dim of `size`, or -1
// for a zero. Python's modulo for circular (wraps negative positions).
std::vector<int64_t> padded_positions(int64_t size, int64_t before, int64_t after, const std::string& mode) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(size + before + after));
  for (int64_t i = -before; i < size + after; ++i) {
    if (i >= 0 && i < size) {
      out.push_back(i);
    } else if (mode == "reflect") {
      out.push_back(i < 0 ? -i : 2 * (size - 1) - i);
    } else if (mode == "replicate") {
      out.push_back(i < 0 ? 0 : size - 1);
    } else {
      out.push_back(((i % size) + size) % size);
    }
  }
  return out;
}

Tensor zero_pad_dim(const Tensor& x, int64_t dim, int64_t before, int64_t after) {
  if (before == 0 && after == 0) return x;
  std::vector<Tensor> parts;
  auto zeros_of = [&](int64_t n) {
    std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
    sizes[static_cast<size_t>(dim)] = n;
    return zeros(sizes, x.options());
  };
  if (before > 0) parts.push_back(zeros_of(before));
  parts.push_back(x);
  if (after > 0) parts.push_back(zeros_of(after));
  return cat(parts, dim);
}

}  // namespace

Tensor pad2d(const Tensor& x, const std::array<int64_t, 4>& pad, const std::string& mode) {
  GD_CHECK(x.dim() >= 2, fmt::format("pad: expected an input with at least 2 dims for a 2-D padding, but got input "
                                     "of size {}",
                                     shape_to_string(x.sizes())));
  for (int64_t p : pad) GD_CHECK(p >= 0, "pad: negative padding is not supported");
  const int64_t ndim = x.dim();
  const int64_t dim_h = ndim - 2, dim_w = ndim - 1;
  const int64_t height = x.size(dim_h), width = x.size(dim_w);
  if (mode == "zeros" || mode == "constant")
    return zero_pad_dim(zero_pad_dim(x, dim_w, pad[0], pad[1]), dim_h, pad[2], pad[3]);
  if (mode == "reflect") {
    // PyTorch checks width (argument #4 of reflection_pad2d) before height (#6).
    GD_CHECK(pad[0] < width && pad[1] < width,
             fmt::format("Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                         "padding ({}, {}) at dimension {} of input {}",
                         pad[0], pad[1], dim_w, ndim));
    GD_CHECK(pad[2] < height && pad[3] < height,
             fmt::format("Argument #6: Padding size should be less than the corresponding input dimension, but got: "
                         "padding ({}, {}) at dimension {} of input {}",
                         pad[2], pad[3], dim_h, ndim));
  } else if (mode == "circular") {
    GD_CHECK(pad[0] <= width && pad[1] <= width && pad[2] <= height && pad[3] <= height,
             "Padding value causes wrapping around more than once.");
  } else if (mode == "replicate") {
    GD_CHECK(height > 0 && width > 0,
             fmt::format("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                         "dimensions for input, but got: {}",
                         shape_to_string(x.sizes())));
  } else {
    throw Error(fmt::format("pad: unknown padding mode '{}'; expected 'zeros', 'reflect', 'replicate' or 'circular'",
                            mode));
  }
  Tensor out = x;
  if (pad[0] > 0 || pad[1] > 0)
    out = out.index_select(dim_w, tensor(padded_positions(width, pad[0], pad[1], mode), TensorOptions()
                                                                                          .dtype(kInt64)
                                                                                          .device(x.device())));
  if (pad[2] > 0 || pad[3] > 0)
    out = out.index_select(dim_h, tensor(padded_positions(height, pad[2], pad[3], mode), TensorOptions()
                                                                                           .dtype(kInt64)
                                                                                           .device(x.device())));
  return out;
}

}  // namespace detail

// ---- Conv2d ----

Conv2dImpl::Conv2dImpl(Conv2dOptions options_) : Module("Conv2d"), options(std::move(options_)) {
  check_options();
  create_parameters(TensorOptions());
}

Conv2dImpl::Conv2dImpl(Conv2dOptions options_, LazyTag) : Module("LazyConv2d"), options(std::move(options_)) {
  check_options();
  lazy_ = true;
}

void Conv2dImpl::check_options() const {
  // PyTorch's messages (torch.nn.modules.conv._ConvNd); its sets print in hash order, these in its source's.
  GD_CHECK(options.groups_ > 0, "groups must be a positive integer");
  GD_CHECK(options.in_channels_ % options.groups_ == 0, "in_channels must be divisible by groups");
  GD_CHECK(options.out_channels_ % options.groups_ == 0, "out_channels must be divisible by groups");
  const Conv2dPadding& padding = options.padding_;
  if (padding.is_string()) {
    GD_CHECK(padding.mode() == "valid" || padding.mode() == "same",
             fmt::format("Invalid padding string '{}', should be one of {{'valid', 'same'}}", padding.mode()));
    GD_CHECK(padding.mode() != "same" || options.stride_.all_equal_to(1),
             "padding='same' is not supported for strided convolutions");
  }
  const std::string& mode = options.padding_mode_;
  GD_CHECK(mode == "zeros" || mode == "reflect" || mode == "replicate" || mode == "circular",
           fmt::format("padding_mode must be one of {{'zeros', 'reflect', 'replicate', 'circular'}}, but got "
                       "padding_mode='{}'",
                       mode));
}

void Conv2dImpl::to(ScalarType dtype) {
  Module::to(dtype);
  if (lazy_) pending_options_ = pending_options_.dtype(dtype);
}

void Conv2dImpl::to(Device device) {
  Module::to(device);
  if (lazy_) pending_options_ = pending_options_.device(device);
}

void Conv2dImpl::create_parameters(const TensorOptions& tensor_options) {
  const ExpandingArray<2>& k = options.kernel_size_;
  weight = register_parameter(
      "weight", empty({options.out_channels_, options.in_channels_ / options.groups_, k[0], k[1]}, tensor_options));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_channels_}, tensor_options));
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  if (!weight.defined()) return;  // a LazyConv2d before its first forward, as PyTorch's
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::_calculate_fan_in_and_fan_out(weight);
    if (fan_in != 0) {
      double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
      init::uniform_(bias, -bound, bound);
    }
  }
}

void Conv2dImpl::materialize(const Tensor& input) {
  GD_CHECK(input.dim() == 3 || input.dim() == 4,
           fmt::format("Expected 3D (unbatched) or 4D (batched) input to {}, but got input of size: torch.Size({})",
                       name(), shape_to_string(input.sizes())));
  const int64_t in_channels = input.size(input.dim() - 3);
  GD_CHECK(in_channels % options.groups_ == 0, "in_channels must be divisible by groups");
  options.in_channels_ = in_channels;
  lazy_ = false;
  set_name("Conv2d");  // as PyTorch swaps the module's class to Conv2d
  TensorOptions tensor_options = pending_options_;
  create_parameters(tensor_options);
}

bool Conv2dImpl::explicit_padding_needed() const {
  if (options.padding_mode_ != "zeros") return true;
  if (!options.padding_.is_string() || options.padding_.mode() != "same") return false;
  // conv2d pads both sides alike; an odd total ("same" with an even kernel)
  // puts the extra row or column at the end, as PyTorch's conv_padding_same.
  for (size_t d = 0; d < 2; ++d)
    if (options.dilation_[d] * (options.kernel_size_[d] - 1) % 2 != 0) return true;
  return false;
}

std::array<int64_t, 4> Conv2dImpl::explicit_padding() const {
  const Conv2dPadding& padding = options.padding_;
  if (!padding.is_string()) {
    const ExpandingArray<2>& p = padding.sizes();
    return {p[1], p[1], p[0], p[0]};
  }
  if (padding.mode() == "valid") return {0, 0, 0, 0};
  std::array<int64_t, 4> out{};
  for (size_t d = 0; d < 2; ++d) {
    const int64_t total = options.dilation_[d] * (options.kernel_size_[d] - 1);
    const size_t at = d == 0 ? 2 : 0;  // height pads are (top, bottom) at 2, width (left, right) at 0
    out[at] = total / 2;
    out[at + 1] = total - total / 2;
  }
  return out;
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  if (lazy_) materialize(input);
  if (explicit_padding_needed()) {
    return conv2d(detail::pad2d(input, explicit_padding(), options.padding_mode_), weight, bias, options.stride_, {0, 0},
                  options.dilation_, options.groups_);
  }
  const std::array<int64_t, 4> pad = explicit_padding();  // symmetric here
  return conv2d(input, weight, bias, options.stride_, {pad[2], pad[0]}, options.dilation_, options.groups_);
}

std::string Conv2dImpl::extra_repr() const {
  std::string out = fmt::format("{}, {}, kernel_size={}, stride={}", options.in_channels_, options.out_channels_,
                                options.kernel_size_.tuple_repr(), options.stride_.tuple_repr());
  const Conv2dPadding& padding = options.padding_;
  if (padding.is_string())
    out += ", padding=" + padding.mode();
  else if (!padding.sizes().all_equal_to(0))
    out += ", padding=" + padding.sizes().tuple_repr();
  if (!options.dilation_.all_equal_to(1)) out += ", dilation=" + options.dilation_.tuple_repr();
  if (options.groups_ != 1) out += fmt::format(", groups={}", options.groups_);
  if (!options.bias_) out += ", bias=False";
  if (options.padding_mode_ != "zeros") out += ", padding_mode=" + options.padding_mode_;
  return out;
}

// ---- LazyConv2d ----

LazyConv2dImpl::LazyConv2dImpl(Conv2dOptions options_) : Conv2dImpl(std::move(options_), LazyTag{}) {
  GD_CHECK(options.in_channels_ == 0,
           fmt::format("LazyConv2d: in_channels is inferred from the first input, so the options must give 0, not {}",
                       options.in_channels_));
}

}  // namespace gradiens::nn
