// Conv2d and LazyConv2d (in_channels inferred on the first forward) with
// PyTorch's options, padding modes and default initialization; ExpandingArray,
// the "one value or one per dim" size type the conv and pooling options share.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "nn/module.h"

namespace gradiens::nn {

// D sizes given as one value (repeated) or as D values, as libtorch's
// ExpandingArray. It remembers which, because PyTorch prints a pooling layer's
// sizes as the user gave them ("kernel_size=2" but "kernel_size=(2, 3)").
template <size_t D>
class ExpandingArray {
 public:
  template <std::integral I>
  ExpandingArray(I value) : single_(true) {
    values_.fill(static_cast<int64_t>(value));
  }
  ExpandingArray(std::initializer_list<int64_t> values) : ExpandingArray(std::vector<int64_t>(values)) {}
  ExpandingArray(const std::vector<int64_t>& values) {
    GD_CHECK(values.size() == D || values.size() == 1,
             "expected " + std::to_string(D) + " values (or one for all), but got " + std::to_string(values.size()));
    for (size_t i = 0; i < D; ++i) values_[i] = values[values.size() == 1 ? 0 : i];
  }

  int64_t operator[](size_t i) const { return values_[i]; }
  operator IntArrayRef() const { return IntArrayRef(values_.data(), D); }
  bool is_single() const { return single_; }
  bool operator==(const ExpandingArray& other) const { return values_ == other.values_; }
  bool all_equal_to(int64_t value) const {
    for (int64_t v : values_)
      if (v != value) return false;
    return true;
  }
  // Python's repr of the tuple: "(2, 3)".
  std::string tuple_repr() const {
    std::string out = "(";
    for (size_t i = 0; i < D; ++i) out += (i ? ", " : "") + std::to_string(values_[i]);
    return out + (D == 1 ? ",)" : ")");
  }
  // As the user gave it: "2" or "(2, 3)".
  std::string repr() const { return single_ ? std::to_string(values_[0]) : tuple_repr(); }

 private:
  std::array<int64_t, D> values_{};
  bool single_ = false;
};

// Conv2d's padding: sizes (one or per dim) or PyTorch's strings "valid" (none)
// and "same" (the output keeps the input's size; stride 1 only).
class Conv2dPadding {
 public:
  template <std::integral I>
  Conv2dPadding(I value) : value_(ExpandingArray<2>(value)) {}
  Conv2dPadding(std::initializer_list<int64_t> values) : value_(ExpandingArray<2>(values)) {}
  Conv2dPadding(const ExpandingArray<2>& values) : value_(values) {}
  Conv2dPadding(const char* mode) : value_(std::string(mode)) {}
  Conv2dPadding(std::string mode) : value_(std::move(mode)) {}

  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  const std::string& mode() const { return std::get<std::string>(value_); }
  const ExpandingArray<2>& sizes() const { return std::get<ExpandingArray<2>>(value_); }

 private:
  std::variant<ExpandingArray<2>, std::string> value_;
};

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  Conv2dOptions& stride(ExpandingArray<2> v) {
    stride_ = v;
    return *this;
  }
  Conv2dOptions& padding(Conv2dPadding v) {
    padding_ = std::move(v);
    return *this;
  }
  Conv2dOptions& dilation(ExpandingArray<2> v) {
    dilation_ = v;
    return *this;
  }
  Conv2dOptions& groups(int64_t v) {
    groups_ = v;
    return *this;
  }
  Conv2dOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  // "zeros", "reflect", "replicate" or "circular".
  Conv2dOptions& padding_mode(std::string v) {
    padding_mode_ = std::move(v);
    return *this;
  }

  int64_t in_channels_, out_channels_;
  ExpandingArray<2> kernel_size_;
  ExpandingArray<2> stride_ = 1;
  Conv2dPadding padding_ = 0;
  ExpandingArray<2> dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
  std::string padding_mode_ = "zeros";
};

// 2-D cross-correlation over NCHW (or unbatched CHW) input:
// weight [out_channels, in_channels / groups, KH, KW], bias [out_channels].
class Conv2dImpl : public Module {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(Conv2dOptions options);

  // PyTorch's reset_parameters: kaiming_uniform_(weight, a = sqrt(5)), i.e.
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in_channels / groups * KH * KW,
  // and the bias from the same range.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  // A lazy module records these for the parameters it has not created yet.
  void to(ScalarType dtype) override;
  void to(Device device) override;

  Conv2dOptions options;
  Tensor weight;
  Tensor bias;  // undefined without bias

 protected:
  struct LazyTag {};
  // No parameters until the first forward gives in_channels.
  Conv2dImpl(Conv2dOptions options, LazyTag);

 private:
  void check_options() const;
  void create_parameters(const TensorOptions& tensor_options);
  void materialize(const Tensor& input);
  // The amounts to pad (left, right, top, bottom) before a convolution with no
  // padding of its own: every non-"zeros" mode, and "same" with an odd total.
  std::array<int64_t, 4> explicit_padding() const;
  bool explicit_padding_needed() const;
  bool lazy_ = false;
  TensorOptions pending_options_;  // a lazy module's dtype/device from to()
};
GRADIENS_MODULE(Conv2d);

// Conv2d whose in_channels comes from the first input it sees (C of NCHW or
// CHW), as PyTorch's LazyConv2d: weight and bias are created and initialized
// then, in the dtype and on the device last given to to() (float32 on the CPU
// by default), and until then parameters() and state_dict() are empty. Build an
// optimizer only after that first forward (a dry run on a sample batch, as in
// PyTorch), or it holds no parameters. From then on it is a Conv2d: it prints
// as "Conv2d(...)" and name() is "Conv2d", as PyTorch changes its class.
class LazyConv2dImpl : public Conv2dImpl {
 public:
  LazyConv2dImpl(int64_t out_channels, ExpandingArray<2> kernel_size)
      : LazyConv2dImpl(Conv2dOptions(0, out_channels, kernel_size)) {}
  // options.in_channels_ must be 0 (the value it stands for is not known yet).
  explicit LazyConv2dImpl(Conv2dOptions options);
};
GRADIENS_MODULE(LazyConv2d);

namespace detail {
// Pads the last two dims of x by (left, right, top, bottom) with mode "zeros",
// "reflect", "replicate" or "circular", as F.pad; differentiable to any order
// (cat and index_select). The reflect and circular size checks give PyTorch's messages.
Tensor pad2d(const Tensor& x, const std::array<int64_t, 4>& pad, const std::string& mode);
}  // namespace detail

}  // namespace gradiens::nn
