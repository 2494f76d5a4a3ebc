// MaxPool2d, AvgPool2d and AdaptiveAvgPool2d over the engine's pooling ops.
#include "nn/modules/pooling.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "engine/convolution.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"

namespace gradiens::nn {

namespace {
const char* python_bool(bool b) { return b ? "True" : "False"; }
}  // namespace

// ---- MaxPool2d ----

MaxPool2dImpl::MaxPool2dImpl(const MaxPool2dOptions& options_) : Module("MaxPool2d"), options(options_) {}

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return max_pool2d(input, options.kernel_size_, options.stride_, options.padding_, options.dilation_,
                    options.ceil_mode_);
}

std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return max_pool2d_with_indices(input, options.kernel_size_, options.stride_, options.padding_, options.dilation_,
                                 options.ceil_mode_);
}

std::string MaxPool2dImpl::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", options.kernel_size_.repr(),
                     options.stride_.repr(), options.padding_.repr(), options.dilation_.repr(),
                     python_bool(options.ceil_mode_));
}

// ---- AvgPool2d ----

AvgPool2dImpl::AvgPool2dImpl(const AvgPool2dOptions& options_) : Module("AvgPool2d"), options(options_) {
  GD_CHECK(!options.divisor_override_ || *options.divisor_override_ != 0, "divisor must be not zero");
}

namespace {

// The size of each window along one dim, clipped to the padded input: the
// divisor avg_pool2d uses with count_include_pad (for ceil_mode's last
// window it is less than the kernel).
std::vector<double> window_sizes(int64_t outputs, int64_t input, int64_t kernel, int64_t stride, int64_t pad) {
  std::vector<double> sizes;
  for (int64_t i = 0; i < outputs; ++i) {
    const int64_t start = i * stride - pad;
    sizes.push_back(static_cast<double>(std::min(start + kernel, input + pad) - start));
  }
  return sizes;
}

}  // namespace

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  if (!options.divisor_override_)
    return avg_pool2d(input, options.kernel_size_, options.stride_, options.padding_, options.ceil_mode_,
                      options.count_include_pad_);
  // The window sums divided by divisor_override: the count_include_pad mean
  // times its own divisor (a constant per output cell) over the override.
  Tensor mean = avg_pool2d(input, options.kernel_size_, options.stride_, options.padding_, options.ceil_mode_,
                           /*count_include_pad=*/true);
  const ExpandingArray<2>& k = options.kernel_size_;
  const ExpandingArray<2>& s = options.stride_;
  const ExpandingArray<2>& p = options.padding_;
  std::vector<double> rows = window_sizes(mean.size(-2), input.size(-2), k[0], s[0], p[0]);
  std::vector<double> cols = window_sizes(mean.size(-1), input.size(-1), k[1], s[1], p[1]);
  std::vector<double> scale;
  scale.reserve(rows.size() * cols.size());
  const double divisor = static_cast<double>(*options.divisor_override_);
  for (double r : rows)
    for (double c : cols) scale.push_back(r * c / divisor);
  Tensor factor = tensor(scale, TensorOptions().dtype(mean.dtype()).device(mean.device()))
                      .reshape({static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols.size())});
  return mean * factor;
}

std::string AvgPool2dImpl::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", options.kernel_size_.repr(), options.stride_.repr(),
                     options.padding_.repr());
}

// ---- AdaptiveAvgPool2d ----

AdaptiveOutputSize::AdaptiveOutputSize(std::initializer_list<std::optional<int64_t>> values) {
  GD_CHECK(values.size() == 2 || values.size() == 1,
           fmt::format("AdaptiveAvgPool2d: output_size must have 1 or 2 values, but got {}", values.size()));
  values_[0] = *values.begin();
  values_[1] = *(values.end() - 1);
}

std::string AdaptiveOutputSize::repr() const {
  auto one = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("None"); };
  return single_ ? one(values_[0]) : fmt::format("({}, {})", one(values_[0]), one(values_[1]));
}

AdaptiveAvgPool2dImpl::AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options_)
    : Module("AdaptiveAvgPool2d"), options(options_) {}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  const AdaptiveOutputSize& size = options.output_size_;
  // None keeps the input's size; an input too small to have one is left to the op's own check.
  auto resolve = [&](size_t i, int64_t dim_from_end) {
    if (size[i]) return *size[i];
    return input.dim() >= 2 ? input.size(input.dim() - dim_from_end) : int64_t{1};
  };
  return adaptive_avg_pool2d(input, {resolve(0, 2), resolve(1, 1)});
}

std::string AdaptiveAvgPool2dImpl::extra_repr() const { return "output_size=" + options.output_size_.repr(); }

}  // namespace gradiens::nn
