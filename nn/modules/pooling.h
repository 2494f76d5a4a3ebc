// Pooling layers over the engine's ops: MaxPool2d (with indices on request),
// AvgPool2d (divisor_override too) and AdaptiveAvgPool2d, with PyTorch's options.
#pragma once

#include <array>
#include <concepts>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>

#include "nn/module.h"
#include "nn/modules/conv.h"  // ExpandingArray

namespace gradiens::nn {

// stride defaults to kernel_size (PyTorch's stride=None).
struct MaxPool2dOptions {
  MaxPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  MaxPool2dOptions& stride(ExpandingArray<2> v) {
    stride_ = v;
    return *this;
  }
  MaxPool2dOptions& padding(ExpandingArray<2> v) {
    padding_ = v;
    return *this;
  }
  MaxPool2dOptions& dilation(ExpandingArray<2> v) {
    dilation_ = v;
    return *this;
  }
  MaxPool2dOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }
  ExpandingArray<2> kernel_size_;
  ExpandingArray<2> stride_;
  ExpandingArray<2> padding_ = 0;
  ExpandingArray<2> dilation_ = 1;
  bool ceil_mode_ = false;
};

// Max over each window of NCHW or CHW input (padding counts as -inf).
class MaxPool2dImpl : public Module {
 public:
  MaxPool2dImpl(ExpandingArray<2> kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options);
  Tensor forward(const Tensor& input);
  // (output, indices): PyTorch's return_indices=True. indices are int64 flat
  // positions h * W + w within each input plane.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  MaxPool2dOptions options;
};
GRADIENS_MODULE(MaxPool2d);

// stride defaults to kernel_size. divisor_override, when set, divides every
// window's sum by it instead of by the window's size.
struct AvgPool2dOptions {
  AvgPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  AvgPool2dOptions& stride(ExpandingArray<2> v) {
    stride_ = v;
    return *this;
  }
  AvgPool2dOptions& padding(ExpandingArray<2> v) {
    padding_ = v;
    return *this;
  }
  AvgPool2dOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }
  AvgPool2dOptions& count_include_pad(bool v) {
    count_include_pad_ = v;
    return *this;
  }
  AvgPool2dOptions& divisor_override(std::optional<int64_t> v) {
    divisor_override_ = v;
    return *this;
  }
  ExpandingArray<2> kernel_size_;
  ExpandingArray<2> stride_;
  ExpandingArray<2> padding_ = 0;
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};

class AvgPool2dImpl : public Module {
 public:
  AvgPool2dImpl(ExpandingArray<2> kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  explicit AvgPool2dImpl(const AvgPool2dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  AvgPool2dOptions options;
};
GRADIENS_MODULE(AvgPool2d);

// The output (height, width): one value for both, two, or nullopt for "keep
// the input's size" (PyTorch's None).
class AdaptiveOutputSize {
 public:
  template <std::integral I>
  AdaptiveOutputSize(I value) : values_{static_cast<int64_t>(value), static_cast<int64_t>(value)}, single_(true) {}
  AdaptiveOutputSize(std::initializer_list<std::optional<int64_t>> values);
  const std::optional<int64_t>& operator[](size_t i) const { return values_[i]; }
  // As the user gave it: "2", "(2, 3)" or "(2, None)".
  std::string repr() const;

 private:
  std::array<std::optional<int64_t>, 2> values_;
  bool single_ = false;
};

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(AdaptiveOutputSize output_size) : output_size_(output_size) {}
  AdaptiveOutputSize output_size_;
};

// Averages NCHW or CHW input onto a fixed output grid.
class AdaptiveAvgPool2dImpl : public Module {
 public:
  AdaptiveAvgPool2dImpl(AdaptiveOutputSize output_size)
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  AdaptiveAvgPool2dOptions options;
};
GRADIENS_MODULE(AdaptiveAvgPool2d);

}  // namespace gradiens::nn
