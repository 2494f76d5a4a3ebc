// Conv1d/2d/3d, LazyConv2d and ConvTranspose1d/2d/3d over the engine's
// convolutions; the padding modes go through F::pad.
#include "nn/modules/conv.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <ostream>

#include "engine/autograd/grad_mode.h"
#include "engine/convolution.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "nn/functional/padding.h"
#include "nn/init.h"

namespace gradiens::nn {

namespace detail {

Tensor pad2d(const Tensor& x, const std::array<int64_t, 4>& pad, const std::string& mode) {
  return functional::pad(x, functional::PadFuncOptions({pad[0], pad[1], pad[2], pad[3]})
                                .mode(mode == "zeros" ? std::string("constant") : mode));
}

std::string mode_enum_name(const std::string& mode) {
  if (mode.empty()) return "k";
  return "k" + std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(mode[0])))) + mode.substr(1);
}

}  // namespace detail

// ---- ExpandingArrayWithOptional ----

template <size_t D>
ExpandingArrayWithOptional<D>::ExpandingArrayWithOptional(const std::vector<std::optional<int64_t>>& values) {
  GD_CHECK(values.size() == D || values.size() == 1,
           fmt::format("output_size must have {} values (or one for all), but got {}", D, values.size()));
  for (size_t i = 0; i < D; ++i) values_[i] = values[values.size() == 1 ? 0 : i];
}

template <size_t D>
ExpandingArrayWithOptional<D>::ExpandingArrayWithOptional(const std::vector<int64_t>& values)
    : ExpandingArrayWithOptional(std::vector<std::optional<int64_t>>(values.begin(), values.end())) {}

template <size_t D>
std::string ExpandingArrayWithOptional<D>::repr() const {
  auto one = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("None"); };
  if (single_ || D == 1) return one(values_[0]);
  std::string out = "(";
  for (size_t i = 0; i < D; ++i) {
      if (i) out += ", ";
      out += one(values_[i]);
    }
  return out + ")";
}

template <size_t D>
std::string ExpandingArrayWithOptional<D>::libtorch_repr() const {
  auto one = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("None"); };
  if (D == 1) return one(values_[0]);
  std::string out = "[";
  for (size_t i = 0; i < D; ++i) {
      if (i) out += ", ";
      out += one(values_[i]);
    }
  return out + "]";
}

template class ExpandingArrayWithOptional<1>;
template class ExpandingArrayWithOptional<2>;
template class ExpandingArrayWithOptional<3>;

namespace {

// The engine's D-dim convolution.
template <size_t D>
Tensor conv_nd(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
               IntArrayRef dilation, int64_t groups) {
  if constexpr (D == 1) return conv1d(input, weight, bias, stride, padding, dilation, groups);
  if constexpr (D == 2) return conv2d(input, weight, bias, stride, padding, dilation, groups);
  if constexpr (D == 3) return conv3d(input, weight, bias, stride, padding, dilation, groups);
}

template <size_t D>
std::vector<int64_t> weight_shape(int64_t dim0, int64_t dim1, const ExpandingArray<D>& kernel_size) {
  std::vector<int64_t> shape{dim0, dim1};
  for (size_t d = 0; d < D; ++d) shape.push_back(kernel_size[d]);
  return shape;
}

// kaiming_uniform_(weight, sqrt(5)) and the bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as PyTorch's _ConvNd.
void reset_conv_parameters(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::_calculate_fan_in_and_fan_out(weight);
    if (fan_in != 0) {
      double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
      init::uniform_(bias, -bound, bound);
    }
  }
}

}  // namespace

// ---- Conv1d, Conv2d, Conv3d ----

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(ConvOptions<D> options_, std::string name) : Module(std::move(name)), options(std::move(options_)) {
  check_options();
  create_parameters(TensorOptions());
}

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(ConvOptions<D> options_, std::string name, LazyTag)
    : Module(std::move(name)), options(std::move(options_)) {
  check_options();
  lazy_ = true;
}

template <size_t D>
void ConvNdImpl<D>::check_options() const {
  // PyTorch's messages (torch.nn.modules.conv._ConvNd); its sets print in hash order, these in its source's.
  GD_CHECK(options.groups_ > 0, "groups must be a positive integer");
  GD_CHECK(options.in_channels_ % options.groups_ == 0, "in_channels must be divisible by groups");
  GD_CHECK(options.out_channels_ % options.groups_ == 0, "out_channels must be divisible by groups");
  const ConvPadding<D>& padding = options.padding_;
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

template <size_t D>
void ConvNdImpl<D>::to(ScalarType dtype) {
  Module::to(dtype);
  if (lazy_) pending_options_ = pending_options_.dtype(dtype);
}

template <size_t D>
void ConvNdImpl<D>::to(Device device) {
  Module::to(device);
  if (lazy_) pending_options_ = pending_options_.device(device);
}

template <size_t D>
void ConvNdImpl<D>::create_parameters(const TensorOptions& tensor_options) {
  weight = register_parameter(
      "weight",
      empty(weight_shape<D>(options.out_channels_, options.in_channels_ / options.groups_, options.kernel_size_),
            tensor_options));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_channels_}, tensor_options));
  reset_parameters();
}

template <size_t D>
void ConvNdImpl<D>::reset_parameters() {
  if (!weight.defined()) return;  // a lazy module before its first forward, as PyTorch's
  reset_conv_parameters(weight, bias);
}

template <size_t D>
void ConvNdImpl<D>::materialize(const Tensor& input) {
  const int64_t dims = static_cast<int64_t>(D);
  GD_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2,
           fmt::format("Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: torch.Size({})",
                       dims + 1, dims + 2, name(), shape_to_string(input.sizes())));
  const int64_t in_channels = input.size(input.dim() - dims - 1);
  GD_CHECK(in_channels % options.groups_ == 0, "in_channels must be divisible by groups");
  options.in_channels_ = in_channels;
  lazy_ = false;
  set_name(fmt::format("Conv{}d", D));  // as PyTorch swaps the module's class
  create_parameters(pending_options_);
}

template <size_t D>
bool ConvNdImpl<D>::explicit_padding_needed() const {
  if (options.padding_mode_ != "zeros") return true;
  if (!options.padding_.is_string() || options.padding_.mode() != "same") return false;
  // The convolution pads both sides alike; an odd total ("same" with an even
  // kernel) puts the extra element at the end, as PyTorch's conv_padding_same.
  for (size_t d = 0; d < D; ++d)
    if (options.dilation_[d] * (options.kernel_size_[d] - 1) % 2 != 0) return true;
  return false;
}

template <size_t D>
std::vector<int64_t> ConvNdImpl<D>::explicit_padding() const {
  std::vector<int64_t> out;  // last dim first, as F::pad takes it
  const ConvPadding<D>& padding = options.padding_;
  for (size_t i = 0; i < D; ++i) {
    const size_t d = D - 1 - i;
    if (!padding.is_string()) {
      out.push_back(padding.sizes()[d]);
      out.push_back(padding.sizes()[d]);
    } else if (padding.mode() == "valid") {
      out.push_back(0);
      out.push_back(0);
    } else {
      const int64_t total = options.dilation_[d] * (options.kernel_size_[d] - 1);
      out.push_back(total / 2);
      out.push_back(total - total / 2);
    }
  }
  return out;
}

template <size_t D>
Tensor ConvNdImpl<D>::forward(const Tensor& input) {
  if (lazy_) materialize(input);
  const std::vector<int64_t> pad = explicit_padding();
  if (explicit_padding_needed()) {
    const std::string mode = options.padding_mode_ == "zeros" ? "constant" : options.padding_mode_;
    return conv_nd<D>(functional::pad(input, functional::PadFuncOptions(pad).mode(mode)), weight, bias,
                      options.stride_, ExpandingArray<D>(0), options.dilation_, options.groups_);
  }
  ExpandingArray<D> symmetric(0);
  for (size_t d = 0; d < D; ++d) symmetric[d] = pad[2 * (D - 1 - d)];
  return conv_nd<D>(input, weight, bias, options.stride_, symmetric, options.dilation_, options.groups_);
}

template <size_t D>
std::string ConvNdImpl<D>::extra_repr() const {
  std::string out = fmt::format("{}, {}, kernel_size={}, stride={}", options.in_channels_, options.out_channels_,
                                options.kernel_size_.tuple_repr(), options.stride_.tuple_repr());
  const ConvPadding<D>& padding = options.padding_;
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

template <size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Conv" << D << "d(" << options.in_channels_ << ", " << options.out_channels_
         << ", kernel_size=" << options.kernel_size_.libtorch_repr() << ", stride=" << options.stride_.libtorch_repr();
  const ConvPadding<D>& padding = options.padding_;
  if (padding.is_string())
    stream << ", padding='" << padding.mode() << "'";
  else if (!padding.sizes().all_equal_to(0))
    stream << ", padding=" << padding.sizes().libtorch_repr();
  if (!options.dilation_.all_equal_to(1)) stream << ", dilation=" << options.dilation_.libtorch_repr();
  if (options.groups_ != 1) stream << ", groups=" << options.groups_;
  if (!options.bias_) stream << ", bias=false";
  if (options.padding_mode_ != "zeros") stream << ", padding_mode=" << detail::mode_enum_name(options.padding_mode_);
  stream << ")";
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;
template class ConvNdImpl<3>;

// ---- LazyConv2d ----

LazyConv2dImpl::LazyConv2dImpl(Conv2dOptions options_) : Conv2dImpl(std::move(options_), LazyTag{}) {
  GD_CHECK(options.in_channels_ == 0,
           fmt::format("LazyConv2d: in_channels is inferred from the first input, so the options must give 0, not {}",
                       options.in_channels_));
}

// ---- ConvTranspose1d, ConvTranspose2d, ConvTranspose3d ----

template <size_t D>
ConvTransposeNdImpl<D>::ConvTransposeNdImpl(ConvTransposeOptions<D> options_, std::string name)
    : Module(std::move(name)), options(std::move(options_)) {
  GD_CHECK(options.groups_ > 0, "groups must be a positive integer");
  GD_CHECK(options.in_channels_ % options.groups_ == 0, "in_channels must be divisible by groups");
  GD_CHECK(options.out_channels_ % options.groups_ == 0, "out_channels must be divisible by groups");
  weight = register_parameter(
      "weight", gradiens::empty(weight_shape<D>(options.in_channels_, options.out_channels_ / options.groups_,
                                                options.kernel_size_)));
  if (options.bias_) bias = register_parameter("bias", gradiens::empty({options.out_channels_}));
  reset_parameters();
}

template <size_t D>
void ConvTransposeNdImpl<D>::reset_parameters() {
  reset_conv_parameters(weight, bias);
}

// PyTorch's _ConvTransposeNd._output_padding.
template <size_t D>
std::vector<int64_t> ConvTransposeNdImpl<D>::output_padding_for(const Tensor& input,
                                                                const std::optional<IntArrayRef>& output_size) const {
  if (!output_size) return *options.output_padding_;
  const int64_t k = static_cast<int64_t>(D);
  std::vector<int64_t> wanted = output_size->vec();
  if (static_cast<int64_t>(wanted.size()) == k + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
  GD_CHECK(static_cast<int64_t>(wanted.size()) == k,
           fmt::format("ConvTranspose{}D: for {}D input, output_size must have {} or {} elements (got {})", D,
                       input.dim(), k, k + 2, output_size->size()));
  std::vector<int64_t> min_sizes, max_sizes, spatial;
  for (size_t d = 0; d < D; ++d) {
    const int64_t in = input.size(input.dim() - k + static_cast<int64_t>(d));
    spatial.push_back(in);
    min_sizes.push_back((in - 1) * options.stride_[d] - 2 * options.padding_[d] +
                        options.dilation_[d] * (options.kernel_size_[d] - 1) + 1);
    max_sizes.push_back(min_sizes.back() + options.stride_[d] - 1);
  }
  std::vector<int64_t> out;
  for (size_t d = 0; d < D; ++d) {
    GD_CHECK(wanted[d] >= min_sizes[d] && wanted[d] <= max_sizes[d],
             fmt::format("requested an output size of {}, but valid sizes range from {} to {} (for an input of {})",
                         shape_to_string(wanted), shape_to_string(min_sizes), shape_to_string(max_sizes),
                         shape_to_string(spatial)));
    out.push_back(wanted[d] - min_sizes[d]);
  }
  return out;
}

template <size_t D>
Tensor ConvTransposeNdImpl<D>::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  // As libtorch, another padding mode is refused here, not at construction (the module still prints).
  GD_CHECK(options.padding_mode_ == "zeros",
           fmt::format("Only \"zeros\" padding mode is supported for {}", this->name()));
  const std::vector<int64_t> output_padding = output_padding_for(input, output_size);
  if constexpr (D == 1)
    return conv_transpose1d(input, weight, bias, options.stride_, options.padding_, output_padding, options.groups_,
                            options.dilation_);
  if constexpr (D == 2)
    return conv_transpose2d(input, weight, bias, options.stride_, options.padding_, output_padding, options.groups_,
                            options.dilation_);
  if constexpr (D == 3)
    return conv_transpose3d(input, weight, bias, options.stride_, options.padding_, output_padding, options.groups_,
                            options.dilation_);
}

template <size_t D>
std::string ConvTransposeNdImpl<D>::extra_repr() const {
  std::string out = fmt::format("{}, {}, kernel_size={}, stride={}", options.in_channels_, options.out_channels_,
                                options.kernel_size_.tuple_repr(), options.stride_.tuple_repr());
  if (!options.padding_.all_equal_to(0)) out += ", padding=" + options.padding_.tuple_repr();
  if (!options.dilation_.all_equal_to(1)) out += ", dilation=" + options.dilation_.tuple_repr();
  if (!options.output_padding_.all_equal_to(0)) out += ", output_padding=" + options.output_padding_.tuple_repr();
  if (options.groups_ != 1) out += fmt::format(", groups={}", options.groups_);
  if (!options.bias_) out += ", bias=False";
  return out;
}

template <size_t D>
void ConvTransposeNdImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ConvTranspose" << D << "d(" << options.in_channels_ << ", " << options.out_channels_
         << ", kernel_size=" << options.kernel_size_.libtorch_repr() << ", stride=" << options.stride_.libtorch_repr();
  if (!options.padding_.all_equal_to(0)) stream << ", padding=" << options.padding_.libtorch_repr();
  if (!options.dilation_.all_equal_to(1)) stream << ", dilation=" << options.dilation_.libtorch_repr();
  if (!options.output_padding_.all_equal_to(0))
    stream << ", output_padding=" << options.output_padding_.libtorch_repr();
  if (options.groups_ != 1) stream << ", groups=" << options.groups_;
  if (!options.bias_) stream << ", bias=false";
  if (options.padding_mode_ != "zeros") stream << ", padding_mode=" << detail::mode_enum_name(options.padding_mode_);
  stream << ")";
}

template class ConvTransposeNdImpl<1>;
template class ConvTransposeNdImpl<2>;
template class ConvTransposeNdImpl<3>;

}  // namespace gradiens::nn
