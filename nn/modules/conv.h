// Conv1d, Conv2d, Conv3d, ConvTranspose1d/2d/3d and LazyConv2d (in_channels
// inferred on the first forward) with libtorch's options (ConvOptions<D>,
// ConvTransposeOptions<D>), PyTorch's padding modes and default
// initialization; ExpandingArray, the "one value or one per dim" size type the
// conv, pooling and padding options share.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "nn/functional/options.h"
#include "nn/module.h"
#include "nn/modules/any_value.h"

namespace gradiens::nn {

// D sizes given as one value (repeated) or as D values, as libtorch's
// ExpandingArray. It remembers which, because PyTorch prints a pooling layer's
// sizes as the user gave them ("kernel_size=2" but "kernel_size=(2, 3)").
template <size_t D, class T = int64_t>
class ExpandingArray {
 public:
  template <class I>
    requires(std::integral<I> || (std::floating_point<T> && std::floating_point<I>))
  ExpandingArray(I value) : single_(true) {
    values_.fill(static_cast<T>(value));
  }
  ExpandingArray(std::initializer_list<T> values) : ExpandingArray(std::vector<T>(values)) {}
  ExpandingArray(const std::vector<T>& values) {
    GD_CHECK(values.size() == D || values.size() == 1,
             "expected " + std::to_string(D) + " values (or one for all), but got " + std::to_string(values.size()));
    for (size_t i = 0; i < D; ++i) values_[i] = values[values.size() == 1 ? 0 : i];
  }
  ExpandingArray(IntArrayRef values)
    requires std::same_as<T, int64_t>
      : ExpandingArray(values.vec()) {}

  T operator[](size_t i) const { return values_[i]; }
  T& operator[](size_t i) { return values_[i]; }
  operator IntArrayRef() const
    requires std::same_as<T, int64_t>
  {
    return IntArrayRef(values_.data(), D);
  }
  // libtorch's `*array` and `array->`: the values as a vector.
  std::vector<T> operator*() const { return std::vector<T>(values_.begin(), values_.end()); }
  const std::array<T, D>* operator->() const { return &values_; }
  static constexpr size_t size() { return D; }
  const T* begin() const { return values_.data(); }
  const T* end() const { return values_.data() + D; }
  bool is_single() const { return single_; }
  bool operator==(const ExpandingArray& other) const { return values_ == other.values_; }
  bool all_equal_to(T value) const {
    for (T v : values_)
      if (v != value) return false;
    return true;
  }
  // Python's repr of the tuple: "(2, 3)", "(2,)".
  std::string tuple_repr() const {
    std::string out = "(";
    for (size_t i = 0; i < D; ++i) {
      if (i) out += ", ";
      out += number(values_[i]);
    }
    return out + (D == 1 ? ",)" : ")");
  }
  // As the user gave it: "2" or "(2, 3)".
  std::string repr() const { return single_ || D == 1 ? number(values_[0]) : tuple_repr(); }
  // As libtorch streams it: "5" for one dim, "[5, 5]" otherwise.
  std::string libtorch_repr() const {
    if (D == 1) return number(values_[0]);
    std::string out = "[";
    for (size_t i = 0; i < D; ++i) {
      if (i) out += ", ";
      out += number(values_[i]);
    }
    return out + "]";
  }

 private:
  static std::string number(T v) {
    if constexpr (std::integral<T>) {
      return std::to_string(v);
    } else {
      std::string out = std::to_string(v);  // "0.500000": trimmed to "0.5", "2.0"
      while (out.size() > 1 && out.back() == '0' && out[out.size() - 2] != '.') out.pop_back();
      return out;
    }
  }
  std::array<T, D> values_{};
  bool single_ = false;
};

// D output sizes where each may be nullopt ("keep the input's size", Python's
// None), as libtorch's ExpandingArrayWithOptional.
template <size_t D>
class ExpandingArrayWithOptional {
 public:
  template <std::integral I>
  ExpandingArrayWithOptional(I value) : single_(true) {
    values_.fill(static_cast<int64_t>(value));
  }
  ExpandingArrayWithOptional(std::nullopt_t) : single_(true) {}
  ExpandingArrayWithOptional(std::initializer_list<std::optional<int64_t>> values)
      : ExpandingArrayWithOptional(std::vector<std::optional<int64_t>>(values)) {}
  ExpandingArrayWithOptional(const std::vector<std::optional<int64_t>>& values);
  ExpandingArrayWithOptional(const std::vector<int64_t>& values);
  ExpandingArrayWithOptional(const ExpandingArray<D>& values) {
    for (size_t i = 0; i < D; ++i) values_[i] = values[i];
    single_ = values.is_single();
  }
  const std::optional<int64_t>& operator[](size_t i) const { return values_[i]; }
  static constexpr size_t size() { return D; }
  // As the user gave it: "2", "(2, 3)" or "(2, None)" (Python's repr).
  std::string repr() const;
  // As libtorch streams it: "5" for one dim, "[5, None]" otherwise.
  std::string libtorch_repr() const;

 private:
  std::array<std::optional<int64_t>, D> values_{};
  bool single_ = false;
};

// A convolution's padding: sizes (one or per dim) or PyTorch's strings "valid"
// (none) and "same" (the output keeps the input's size; stride 1 only), also
// spelled torch::kValid and torch::kSame.
template <size_t D>
class ConvPadding {
 public:
  template <std::integral I>
  ConvPadding(I value) : value_(ExpandingArray<D>(value)) {}
  ConvPadding(std::initializer_list<int64_t> values) : value_(ExpandingArray<D>(values)) {}
  ConvPadding(const std::vector<int64_t>& values) : value_(ExpandingArray<D>(values)) {}
  ConvPadding(IntArrayRef values) : value_(ExpandingArray<D>(values)) {}
  ConvPadding(const ExpandingArray<D>& values) : value_(values) {}
  ConvPadding(const char* mode) : value_(std::string(mode)) {}
  ConvPadding(std::string mode) : value_(std::move(mode)) {}
  template <ModeTagType Tag>
  ConvPadding(Tag) : value_(std::string(Tag::name)) {}

  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  const std::string& mode() const { return std::get<std::string>(value_); }
  const ExpandingArray<D>& sizes() const { return std::get<ExpandingArray<D>>(value_); }

 private:
  std::variant<ExpandingArray<D>, std::string> value_;
};
using Conv2dPadding = ConvPadding<2>;

// libtorch's ConvOptions<D>: Conv1dOptions(3, 2, 3).stride(1).bias(false).
// padding_mode: "zeros" (torch::kZeros), "reflect", "replicate" or "circular".
template <size_t D>
struct ConvOptions {
  using padding_t = ConvPadding<D>;
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  GRADIENS_ARG(int64_t, in_channels);
  GRADIENS_ARG(int64_t, out_channels);
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(ExpandingArray<D>, stride) = 1;
  GRADIENS_ARG(padding_t, padding) = 0;
  GRADIENS_ARG(ExpandingArray<D>, dilation) = 1;
  GRADIENS_ARG(int64_t, groups) = 1;
  GRADIENS_ARG(bool, bias) = true;
  GRADIENS_ARG(std::string, padding_mode) = "zeros";
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

// libtorch's ConvTransposeOptions<D>. output_padding adds rows/columns at the
// end of the output (less than stride or dilation); only "zeros" padding.
template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  GRADIENS_ARG(int64_t, in_channels);
  GRADIENS_ARG(int64_t, out_channels);
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(ExpandingArray<D>, stride) = 1;
  GRADIENS_ARG(ExpandingArray<D>, padding) = 0;
  GRADIENS_ARG(ExpandingArray<D>, output_padding) = 0;
  GRADIENS_ARG(int64_t, groups) = 1;
  GRADIENS_ARG(bool, bias) = true;
  GRADIENS_ARG(ExpandingArray<D>, dilation) = 1;
  GRADIENS_ARG(std::string, padding_mode) = "zeros";
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

// The D-dim cross-correlation over [N, C, *spatial] (or unbatched [C, *spatial])
// input: weight [out_channels, in_channels / groups, *kernel_size], bias
// [out_channels]. Conv1d, Conv2d and Conv3d are this with D = 1, 2, 3.
template <size_t D>
class ConvNdImpl : public Module {
 public:
  // PyTorch's reset_parameters: kaiming_uniform_(weight, a = sqrt(5)), i.e.
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in_channels / groups * prod(kernel_size),
  // and the bias from the same range.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  // PyTorch's repr: "Conv1d(3, 2, kernel_size=(3,), stride=(1,))".
  std::string extra_repr() const override;
  // libtorch's: "torch::nn::Conv1d(3, 2, kernel_size=3, stride=1)".
  void pretty_print(std::ostream& stream) const;
  // A lazy module records these for the parameters it has not created yet.
  void to(ScalarType dtype) override;
  void to(Device device) override;

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;  // undefined without bias

 protected:
  ConvNdImpl(ConvOptions<D> options, std::string name);
  struct LazyTag {};
  // No parameters until the first forward gives in_channels.
  ConvNdImpl(ConvOptions<D> options, std::string name, LazyTag);

 private:
  void check_options() const;
  void create_parameters(const TensorOptions& tensor_options);
  void materialize(const Tensor& input);
  // The amounts to pad in F::pad's order (last dim first, before then after)
  // before a convolution with no padding of its own: every non-"zeros" mode,
  // and "same" with an odd total.
  std::vector<int64_t> explicit_padding() const;
  bool explicit_padding_needed() const;
  bool lazy_ = false;
  TensorOptions pending_options_;  // a lazy module's dtype/device from to()
};
extern template class ConvNdImpl<1>;
extern template class ConvNdImpl<2>;
extern template class ConvNdImpl<3>;

class Conv1dImpl : public ConvNdImpl<1> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv1dImpl(Conv1dOptions options) : ConvNdImpl<1>(std::move(options), "Conv1d") {}
};
GRADIENS_MODULE(Conv1d);

class Conv2dImpl : public ConvNdImpl<2> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(Conv2dOptions options) : ConvNdImpl<2>(std::move(options), "Conv2d") {}

 protected:
  Conv2dImpl(Conv2dOptions options, LazyTag) : ConvNdImpl<2>(std::move(options), "LazyConv2d", LazyTag{}) {}
};
GRADIENS_MODULE(Conv2d);

class Conv3dImpl : public ConvNdImpl<3> {
 public:
  Conv3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv3dImpl(Conv3dOptions options) : ConvNdImpl<3>(std::move(options), "Conv3d") {}
};
GRADIENS_MODULE(Conv3d);

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

// The transposed convolution (the adjoint of ConvNd in its input, "deconvolution")
// over [N, C, *spatial] or [C, *spatial] input: weight [in_channels,
// out_channels / groups, *kernel_size], bias [out_channels]; each output size
// is (in - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1.
template <size_t D>
class ConvTransposeNdImpl : public Module {
 public:
  void reset_parameters();
  // output_size (D sizes, or D + 2 with batch and channels first) picks the
  // output_padding that gives it, as PyTorch's forward(input, output_size).
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(std::optional<IntArrayRef>())})
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;

  ConvTransposeOptions<D> options;
  Tensor weight;
  Tensor bias;

 protected:
  ConvTransposeNdImpl(ConvTransposeOptions<D> options, std::string name);

 private:
  std::vector<int64_t> output_padding_for(const Tensor& input, const std::optional<IntArrayRef>& output_size) const;
};
extern template class ConvTransposeNdImpl<1>;
extern template class ConvTransposeNdImpl<2>;
extern template class ConvTransposeNdImpl<3>;

#define GRADIENS_CONV_TRANSPOSE(D)                                                                                 \
  class ConvTranspose##D##dImpl : public ConvTransposeNdImpl<D> {                                                  \
   public:                                                                                                         \
    ConvTranspose##D##dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)              \
        : ConvTranspose##D##dImpl(ConvTranspose##D##dOptions(in_channels, out_channels, kernel_size)) {}           \
    explicit ConvTranspose##D##dImpl(ConvTranspose##D##dOptions options)                                           \
        : ConvTransposeNdImpl<D>(std::move(options), "ConvTranspose" #D "d") {}                                    \
  };                                                                                                               \
  GRADIENS_MODULE(ConvTranspose##D##d)
GRADIENS_CONV_TRANSPOSE(1);
GRADIENS_CONV_TRANSPOSE(2);
GRADIENS_CONV_TRANSPOSE(3);
#undef GRADIENS_CONV_TRANSPOSE

namespace detail {
// Pads the last two dims of x by (left, right, top, bottom) with mode "zeros",
// "reflect", "replicate" or "circular", as F.pad; differentiable to any order.
Tensor pad2d(const Tensor& x, const std::array<int64_t, 4>& pad, const std::string& mode);
}  // namespace detail

}  // namespace gradiens::nn
