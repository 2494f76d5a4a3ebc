// F::conv*d and F::conv_transpose*d: the options unpacked onto the engine's
// convolutions, and "same" padding.
#include "nn/functional/conv.h"

#include <fmt/format.h>

#include <vector>

#include "engine/convolution.h"
#include "nn/functional/padding.h"

namespace gradiens::nn::functional {

namespace {

template <size_t D>
Tensor engine_conv(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  if constexpr (D == 1) return ::gradiens::conv1d(input, weight, bias, stride, padding, dilation, groups);
  if constexpr (D == 2) return ::gradiens::conv2d(input, weight, bias, stride, padding, dilation, groups);
  if constexpr (D == 3) return ::gradiens::conv3d(input, weight, bias, stride, padding, dilation, groups);
}

template <size_t D>
Tensor conv_nd(const Tensor& input, const Tensor& weight, const ConvFuncOptions<D>& options) {
  const ConvPadding<D>& padding = options.padding_;
  if (!padding.is_string())
    return engine_conv<D>(input, weight, options.bias_, options.stride_, padding.sizes(), options.dilation_,
                          options.groups_);
  GD_CHECK(padding.mode() == "valid" || padding.mode() == "same",
           fmt::format("Invalid padding string: '{}'", padding.mode()));
  if (padding.mode() == "valid")
    return engine_conv<D>(input, weight, options.bias_, options.stride_, ExpandingArray<D>(0), options.dilation_,
                          options.groups_);
  GD_CHECK(options.stride_.all_equal_to(1), "padding='same' is not supported for strided convolutions");
  GD_CHECK(weight.dim() == static_cast<int64_t>(D) + 2,
           fmt::format("conv{}d: expected weight to be {}-dimensional", D, D + 2));
  // PyTorch's _convolution_mode: pad both sides by half the total, and the odd
  // element, if any, explicitly at the end.
  ExpandingArray<D> symmetric(0);
  std::vector<int64_t> extra;  // F::pad's order: last dim first
  bool odd = false;
  for (size_t i = 0; i < D; ++i) {
    const size_t d = D - 1 - i;
    const int64_t total = options.dilation_[d] * (weight.size(static_cast<int64_t>(d) + 2) - 1);
    symmetric[d] = total / 2;
    extra.push_back(0);
      extra.push_back(total % 2);
    odd = odd || total % 2 != 0;
  }
  const Tensor x = odd ? pad(input, PadFuncOptions(extra)) : input;
  return engine_conv<D>(x, weight, options.bias_, options.stride_, symmetric, options.dilation_, options.groups_);
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options) {
  return conv_nd<1>(input, weight, options);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options) {
  return conv_nd<2>(input, weight, options);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options) {
  return conv_nd<3>(input, weight, options);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& options) {
  return ::gradiens::conv_transpose1d(input, weight, options.bias_, options.stride_, options.padding_,
                                      options.output_padding_, options.groups_, options.dilation_);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options) {
  return ::gradiens::conv_transpose2d(input, weight, options.bias_, options.stride_, options.padding_,
                                      options.output_padding_, options.groups_, options.dilation_);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& options) {
  return ::gradiens::conv_transpose3d(input, weight, options.bias_, options.stride_, options.padding_,
                                      options.output_padding_, options.groups_, options.dilation_);
}

}  // namespace gradiens::nn::functional
