// The pooling layers over the pooling functionals; their PyTorch and libtorch prints.
#include "nn/modules/pooling.h"

#include <fmt/format.h>

#include <ostream>

namespace gradiens::nn {

namespace F = functional;

namespace {
const char* python_bool(bool b) { return b ? "True" : "False"; }
const char* cpp_bool(bool b) { return b ? "true" : "false"; }
// A double as a C++ stream prints it ("2", "1.5").
std::string stream_double(double v) { return fmt::format("{}", v); }
}  // namespace

// ---- MaxPool ----

template <size_t D>
Tensor MaxPoolImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1) return F::max_pool1d(input, options);
  if constexpr (D == 2) return F::max_pool2d(input, options);
  if constexpr (D == 3) return F::max_pool3d(input, options);
}

template <size_t D>
std::tuple<Tensor, Tensor> MaxPoolImpl<D>::forward_with_indices(const Tensor& input) {
  if constexpr (D == 1) return F::max_pool1d_with_indices(input, options);
  if constexpr (D == 2) return F::max_pool2d_with_indices(input, options);
  if constexpr (D == 3) return F::max_pool3d_with_indices(input, options);
}

template <size_t D>
std::string MaxPoolImpl<D>::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", options.kernel_size_.repr(),
                     options.stride_.repr(), options.padding_.repr(), options.dilation_.repr(),
                     python_bool(options.ceil_mode_));
}

template <size_t D>
void MaxPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::MaxPool" << D << "d(kernel_size=" << options.kernel_size_.libtorch_repr()
         << ", stride=" << options.stride_.libtorch_repr() << ", padding=" << options.padding_.libtorch_repr()
         << ", dilation=" << options.dilation_.libtorch_repr() << ", ceil_mode=" << cpp_bool(options.ceil_mode_)
         << ")";
}

template class MaxPoolImpl<1>;
template class MaxPoolImpl<2>;
template class MaxPoolImpl<3>;

// ---- AvgPool ----

template <size_t D>
AvgPoolImpl<D>::AvgPoolImpl(const AvgPoolOptions<D>& options_) : options(options_) {
  GD_CHECK(!options.divisor_override_ || *options.divisor_override_ != 0, "divisor must be not zero");
}

template <size_t D>
Tensor AvgPoolImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1) return F::avg_pool1d(input, options);
  if constexpr (D == 2) return F::avg_pool2d(input, options);
  if constexpr (D == 3) return F::avg_pool3d(input, options);
}

template <size_t D>
std::string AvgPoolImpl<D>::extra_repr() const {
  // PyTorch's AvgPool1d keeps its sizes as 1-tuples; the others as given.
  if constexpr (D == 1)
    return fmt::format("kernel_size={}, stride={}, padding={}", options.kernel_size_.tuple_repr(),
                       options.stride_.tuple_repr(), options.padding_.tuple_repr());
  return fmt::format("kernel_size={}, stride={}, padding={}", options.kernel_size_.repr(), options.stride_.repr(),
                     options.padding_.repr());
}

template <size_t D>
void AvgPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AvgPool" << D << "d(kernel_size=" << options.kernel_size_.libtorch_repr()
         << ", stride=" << options.stride_.libtorch_repr() << ", padding=" << options.padding_.libtorch_repr() << ")";
}

template class AvgPoolImpl<1>;
template class AvgPoolImpl<2>;
template class AvgPoolImpl<3>;

// ---- AdaptiveMaxPool, AdaptiveAvgPool ----

template <size_t D, class OutputSize>
Tensor AdaptiveMaxPoolImpl<D, OutputSize>::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

template <size_t D, class OutputSize>
std::tuple<Tensor, Tensor> AdaptiveMaxPoolImpl<D, OutputSize>::forward_with_indices(const Tensor& input) {
  if constexpr (D == 1) return F::adaptive_max_pool1d_with_indices(input, options);
  if constexpr (D == 2) return F::adaptive_max_pool2d_with_indices(input, options);
  if constexpr (D == 3) return F::adaptive_max_pool3d_with_indices(input, options);
}

template <size_t D, class OutputSize>
std::string AdaptiveMaxPoolImpl<D, OutputSize>::extra_repr() const {
  return "output_size=" + options.output_size_.repr();
}

template <size_t D, class OutputSize>
void AdaptiveMaxPoolImpl<D, OutputSize>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AdaptiveMaxPool" << D << "d(output_size=" << options.output_size_.libtorch_repr() << ")";
}

template class AdaptiveMaxPoolImpl<1, ExpandingArray<1>>;
template class AdaptiveMaxPoolImpl<2, ExpandingArrayWithOptional<2>>;
template class AdaptiveMaxPoolImpl<3, ExpandingArrayWithOptional<3>>;

template <size_t D, class OutputSize>
Tensor AdaptiveAvgPoolImpl<D, OutputSize>::forward(const Tensor& input) {
  if constexpr (D == 1) return F::adaptive_avg_pool1d(input, options);
  if constexpr (D == 2) return F::adaptive_avg_pool2d(input, options);
  if constexpr (D == 3) return F::adaptive_avg_pool3d(input, options);
}

template <size_t D, class OutputSize>
std::string AdaptiveAvgPoolImpl<D, OutputSize>::extra_repr() const {
  return "output_size=" + options.output_size_.repr();
}

template <size_t D, class OutputSize>
void AdaptiveAvgPoolImpl<D, OutputSize>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AdaptiveAvgPool" << D << "d(output_size=" << options.output_size_.libtorch_repr() << ")";
}

template class AdaptiveAvgPoolImpl<1, ExpandingArray<1>>;
template class AdaptiveAvgPoolImpl<2, ExpandingArrayWithOptional<2>>;
template class AdaptiveAvgPoolImpl<3, ExpandingArrayWithOptional<3>>;

// ---- LPPool ----

template <size_t D>
Tensor LPPoolImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1) return F::lp_pool1d(input, options);
  if constexpr (D == 2) return F::lp_pool2d(input, options);
}

template <size_t D>
std::string LPPoolImpl<D>::extra_repr() const {
  // PyTorch keeps stride=None when not given; a stride equal to the kernel size reads as that.
  const std::string stride = options.stride_ == options.kernel_size_ ? "None" : options.stride_.repr();
  return fmt::format("norm_type={}, kernel_size={}, stride={}, ceil_mode={}", stream_double(options.norm_type_),
                     options.kernel_size_.repr(), stride, python_bool(options.ceil_mode_));
}

template <size_t D>
void LPPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::LPPool" << D << "d(norm_type=" << stream_double(options.norm_type_)
         << ", kernel_size=" << options.kernel_size_.libtorch_repr() << ", stride=" << options.stride_.libtorch_repr()
         << ", ceil_mode=" << cpp_bool(options.ceil_mode_) << ")";
}

template class LPPoolImpl<1>;
template class LPPoolImpl<2>;

// ---- MaxUnpool ----

template <size_t D>
Tensor MaxUnpoolImpl<D>::forward(const Tensor& input, const Tensor& indices,
                                 const std::optional<std::vector<int64_t>>& output_size) {
  F::MaxUnpoolFuncOptions<D> o(options.kernel_size_);
  o.stride(options.stride_).padding(options.padding_).output_size(output_size);
  if constexpr (D == 1) return F::max_unpool1d(input, indices, o);
  if constexpr (D == 2) return F::max_unpool2d(input, indices, o);
  if constexpr (D == 3) return F::max_unpool3d(input, indices, o);
}

template <size_t D>
std::string MaxUnpoolImpl<D>::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", options.kernel_size_.tuple_repr(),
                     options.stride_.tuple_repr(), options.padding_.tuple_repr());
}

template <size_t D>
void MaxUnpoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::MaxUnpool" << D << "d(kernel_size=" << options.kernel_size_.libtorch_repr()
         << ", stride=" << options.stride_.libtorch_repr() << ", padding=" << options.padding_.libtorch_repr() << ")";
}

template class MaxUnpoolImpl<1>;
template class MaxUnpoolImpl<2>;
template class MaxUnpoolImpl<3>;

// ---- FractionalMaxPool ----

template <size_t D>
FractionalMaxPoolImpl<D>::FractionalMaxPoolImpl(const FractionalMaxPoolOptions<D>& options_) : options(options_) {
  GD_CHECK(options.output_size_ || options.output_ratio_,
           fmt::format("FractionalMaxPool{}d requires specifying either an output size, or a pooling ratio", D));
  GD_CHECK(!(options.output_size_ && options.output_ratio_), "only one of output_size and output_ratio may be specified");
  if (options.output_ratio_)
    for (size_t d = 0; d < D; ++d)
      GD_CHECK((*options.output_ratio_)[d] > 0 && (*options.output_ratio_)[d] < 1,
               fmt::format("output_ratio must be between 0 and 1 (got {})", options.output_ratio_->tuple_repr()));
}

template <size_t D>
Tensor FractionalMaxPoolImpl<D>::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

template <size_t D>
std::tuple<Tensor, Tensor> FractionalMaxPoolImpl<D>::forward_with_indices(const Tensor& input) {
  if constexpr (D == 2) return F::fractional_max_pool2d_with_indices(input, options);
  if constexpr (D == 3) return F::fractional_max_pool3d_with_indices(input, options);
}

template <size_t D>
void FractionalMaxPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::FractionalMaxPool" << D << "d()";
}

template class FractionalMaxPoolImpl<2>;
template class FractionalMaxPoolImpl<3>;

}  // namespace gradiens::nn
