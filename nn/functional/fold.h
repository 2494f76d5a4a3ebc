// F::unfold (im2col: the sliding blocks of a batched image as columns) and
// F::fold (col2im: the blocks summed back into an image), with libtorch's
// options, and the Unfold and Fold layers.
#pragma once

#include <iosfwd>
#include <string>

#include "engine/tensor.h"
#include "nn/functional/options.h"
#include "nn/module.h"
#include "nn/modules/conv.h"  // ExpandingArray

namespace gradiens::nn {

struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  GRADIENS_ARG(ExpandingArray<2>, output_size);
  GRADIENS_ARG(ExpandingArray<2>, kernel_size);
  GRADIENS_ARG(ExpandingArray<2>, dilation) = 1;
  GRADIENS_ARG(ExpandingArray<2>, padding) = 0;
  GRADIENS_ARG(ExpandingArray<2>, stride) = 1;
};

struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}
  GRADIENS_ARG(ExpandingArray<2>, kernel_size);
  GRADIENS_ARG(ExpandingArray<2>, dilation) = 1;
  GRADIENS_ARG(ExpandingArray<2>, padding) = 0;
  GRADIENS_ARG(ExpandingArray<2>, stride) = 1;
};

namespace functional {
using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;
// [N, C, H, W] -> [N, C kh kw, L], L the number of blocks; row c kh kw + i kw + j
// holds kernel position (i, j) of channel c.
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);
// [N, C kh kw, L] -> [N, C, output_size]: the adjoint of unfold (overlaps add up).
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
}  // namespace functional

class FoldImpl : public Module {
 public:
  FoldImpl(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : FoldImpl(FoldOptions(output_size, kernel_size)) {}
  explicit FoldImpl(const FoldOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  FoldOptions options;
};
GRADIENS_MODULE(Fold);

class UnfoldImpl : public Module {
 public:
  UnfoldImpl(ExpandingArray<2> kernel_size) : UnfoldImpl(UnfoldOptions(kernel_size)) {}
  explicit UnfoldImpl(const UnfoldOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  UnfoldOptions options;
};
GRADIENS_MODULE(Unfold);

}  // namespace gradiens::nn
