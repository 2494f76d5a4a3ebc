// unfold from strided slices of the zero-padded input (exact, any derivative
// order); fold as conv_transpose2d with one-hot weights, its adjoint.
#include "nn/functional/fold.h"

#include <fmt/format.h>

#include <ostream>
#include <vector>

#include "engine/convolution.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "nn/functional/padding.h"

namespace gradiens::nn {

namespace functional {

namespace {

// PyTorch's im2col/col2im checks of the block geometry.
void check_blocks(const ExpandingArray<2>& kernel, const ExpandingArray<2>& dilation, const ExpandingArray<2>& padding,
                  const ExpandingArray<2>& stride) {
  GD_CHECK(kernel[0] > 0 && kernel[1] > 0,
           fmt::format("kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}", kernel[0],
                       kernel[1]));
  GD_CHECK(dilation[0] > 0 && dilation[1] > 0,
           fmt::format("dilation should be greater than zero, but got dilation_height: {} dilation_width: {}",
                       dilation[0], dilation[1]));
  GD_CHECK(padding[0] >= 0 && padding[1] >= 0,
           fmt::format("padding should be non-negative, but got pad_height: {} pad_width: {}", padding[0],
                       padding[1]));
  GD_CHECK(stride[0] > 0 && stride[1] > 0,
           fmt::format("stride should be greater than zero, but got stride_height: {} stride_width: {}", stride[0],
                       stride[1]));
}

int64_t blocks(int64_t size, int64_t kernel, int64_t dilation, int64_t padding, int64_t stride) {
  return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
}

}  // namespace

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  GD_CHECK(input.dim() == 4, fmt::format("Input Error: Only 4D input Tensors are supported (got {}D)", input.dim()));
  check_blocks(o.kernel_size_, o.dilation_, o.padding_, o.stride_);
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t bh = blocks(h, o.kernel_size_[0], o.dilation_[0], o.padding_[0], o.stride_[0]);
  const int64_t bw = blocks(w, o.kernel_size_[1], o.dilation_[1], o.padding_[1], o.stride_[1]);
  GD_CHECK(bh >= 1 && bw >= 1,
           fmt::format("Given input with spatial size ({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, "
                       "{}), calculated shape of the array of sliding blocks as ({}, {}), but its components must be "
                       "at least one.",
                       h, w, o.kernel_size_[0], o.kernel_size_[1], o.dilation_[0], o.dilation_[1], o.padding_[0],
                       o.padding_[1], bh, bw));
  const Tensor x = pad(input, PadFuncOptions({o.padding_[1], o.padding_[1], o.padding_[0], o.padding_[0]}));
  std::vector<Tensor> taps;
  for (int64_t i = 0; i < o.kernel_size_[0]; ++i) {
    const int64_t top = i * o.dilation_[0];
    const Tensor rows = x.slice(2, top, top + (bh - 1) * o.stride_[0] + 1, o.stride_[0]);
    for (int64_t j = 0; j < o.kernel_size_[1]; ++j) {
      const int64_t left = j * o.dilation_[1];
      taps.push_back(rows.slice(3, left, left + (bw - 1) * o.stride_[1] + 1, o.stride_[1]));
    }
  }
  return stack(taps, 2).reshape({n, c * o.kernel_size_[0] * o.kernel_size_[1], bh * bw});
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  GD_CHECK(input.dim() == 2 || input.dim() == 3,
           fmt::format("Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {}D)",
                       input.dim()));
  if (input.dim() == 2) return fold(input.unsqueeze(0), o).squeeze(0);
  check_blocks(o.kernel_size_, o.dilation_, o.padding_, o.stride_);
  const int64_t kernel = o.kernel_size_[0] * o.kernel_size_[1];
  GD_CHECK(input.size(1) % kernel == 0,
           fmt::format("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
                       "input.size(1)={} and kernel_size=({}, {}).",
                       input.size(1), o.kernel_size_[0], o.kernel_size_[1]));
  const int64_t h = o.output_size_[0], w = o.output_size_[1];
  const int64_t bh = blocks(h, o.kernel_size_[0], o.dilation_[0], o.padding_[0], o.stride_[0]);
  const int64_t bw = blocks(w, o.kernel_size_[1], o.dilation_[1], o.padding_[1], o.stride_[1]);
  GD_CHECK(bh >= 1 && bw >= 1,
           fmt::format("Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), "
                       "calculated shape of the array of sliding blocks as ({}, {}), but its components must be at "
                       "least one.",
                       h, w, o.kernel_size_[0], o.kernel_size_[1], o.dilation_[0], o.dilation_[1], o.padding_[0],
                       o.padding_[1], bh, bw));
  GD_CHECK(input.size(2) == bh * bw,
           fmt::format("Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), "
                       "stride=({}, {}), expected size of input's dimension 2 to match the calculated number of "
                       "sliding blocks {} * {} = {}, but got input.size(2)={}.",
                       h, w, o.kernel_size_[0], o.kernel_size_[1], o.dilation_[0], o.dilation_[1], o.padding_[0],
                       o.padding_[1], o.stride_[0], o.stride_[1], bh, bw, bh * bw, input.size(2)));
  const int64_t n = input.size(0), c = input.size(1) / kernel;
  // One-hot weights: block row c kernel + k feeds kernel position k of channel c.
  Tensor weight = zeros({kernel, 1, o.kernel_size_[0], o.kernel_size_[1]}, input.options().dtype(kFloat64));
  for (int64_t k = 0; k < kernel; ++k) weight.select(0, k).view({kernel}).select(0, k).fill_(1.0);
  weight = weight.to(input.dtype()).repeat({c, 1, 1, 1});
  std::vector<int64_t> output_padding;
  for (size_t d = 0; d < 2; ++d) {
    const int64_t reached = ((d == 0 ? bh : bw) - 1) * o.stride_[d] - 2 * o.padding_[d] +
                            o.dilation_[d] * (o.kernel_size_[d] - 1) + 1;
    output_padding.push_back(o.output_size_[d] - reached);
  }
  return conv_transpose2d(input.reshape({n, c * kernel, bh, bw}), weight, Tensor(), o.stride_, o.padding_,
                          output_padding, c, o.dilation_);
}

}  // namespace functional

namespace {
std::string python_size(const ExpandingArray<2>& v) { return v.repr(); }
}  // namespace

Tensor FoldImpl::forward(const Tensor& input) { return functional::fold(input, options); }
std::string FoldImpl::extra_repr() const {
  return fmt::format("output_size={}, kernel_size={}, dilation={}, padding={}, stride={}",
                     python_size(options.output_size_), python_size(options.kernel_size_),
                     python_size(options.dilation_), python_size(options.padding_), python_size(options.stride_));
}
void FoldImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Fold(output_size=" << options.output_size_.libtorch_repr()
         << ", kernel_size=" << options.kernel_size_.libtorch_repr()
         << ", dilation=" << options.dilation_.libtorch_repr() << ", padding=" << options.padding_.libtorch_repr()
         << ", stride=" << options.stride_.libtorch_repr() << ")";
}

Tensor UnfoldImpl::forward(const Tensor& input) { return functional::unfold(input, options); }
std::string UnfoldImpl::extra_repr() const {
  return fmt::format("kernel_size={}, dilation={}, padding={}, stride={}", python_size(options.kernel_size_),
                     python_size(options.dilation_), python_size(options.padding_), python_size(options.stride_));
}
void UnfoldImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Unfold(kernel_size=" << options.kernel_size_.libtorch_repr()
         << ", dilation=" << options.dilation_.libtorch_repr() << ", padding=" << options.padding_.libtorch_repr()
         << ", stride=" << options.stride_.libtorch_repr() << ")";
}

}  // namespace gradiens::nn
