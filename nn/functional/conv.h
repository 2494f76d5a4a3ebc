// F::conv1d/2d/3d and F::conv_transpose1d/2d/3d with libtorch's FuncOptions:
// F::conv1d(x, weight, F::Conv1dFuncOptions().bias(b).stride(2).padding("same")).
#pragma once

#include "engine/tensor.h"
#include "nn/functional/options.h"
#include "nn/modules/conv.h"  // ExpandingArray, ConvPadding

namespace gradiens::nn::functional {

template <size_t D>
struct ConvFuncOptions {
  using padding_t = ConvPadding<D>;
  GRADIENS_ARG(Tensor, bias);
  GRADIENS_ARG(ExpandingArray<D>, stride) = 1;
  GRADIENS_ARG(padding_t, padding) = 0;
  GRADIENS_ARG(ExpandingArray<D>, dilation) = 1;
  GRADIENS_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

// padding "valid" is none; "same" keeps the input's size (stride 1 only), an
// odd total padding putting the extra element at the end as PyTorch does.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options = {});
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options = {});
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options = {});

template <size_t D>
struct ConvTransposeFuncOptions {
  GRADIENS_ARG(Tensor, bias);
  GRADIENS_ARG(ExpandingArray<D>, stride) = 1;
  GRADIENS_ARG(ExpandingArray<D>, padding) = 0;
  GRADIENS_ARG(ExpandingArray<D>, output_padding) = 0;
  GRADIENS_ARG(int64_t, groups) = 1;
  GRADIENS_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;

// weight [in_channels, out_channels / groups, *kernel_size].
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& options = {});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options = {});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& options = {});

}  // namespace gradiens::nn::functional
