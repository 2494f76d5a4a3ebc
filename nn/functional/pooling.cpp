// The pooling functionals: options unpacked onto the engine's pooling ops;
// lp_pool and max_unpool as composites (pow, avg_pool; scatter).
#include "nn/functional/pooling.h"

#include <fmt/format.h>

#include "engine/convolution.h"
#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens::nn {

namespace {

// Adaptive output sizes with nullopt (keep the input's size) resolved.
template <size_t D>
std::vector<int64_t> resolved(const ExpandingArrayWithOptional<D>& size, const Tensor& input) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < D; ++d) {
    const int64_t from_end = static_cast<int64_t>(D - d);
    out.push_back(size[d] ? *size[d] : (input.dim() >= from_end ? input.size(input.dim() - from_end) : 1));
  }
  return out;
}

}  // namespace

namespace detail {

template <size_t D>
std::vector<int64_t> unpool_output_size(const Tensor& input, const ExpandingArray<D>& kernel_size,
                                        const ExpandingArray<D>& stride, const ExpandingArray<D>& padding,
                                        const std::optional<std::vector<int64_t>>& output_size) {
  const int64_t dims = static_cast<int64_t>(D);
  GD_CHECK(input.dim() >= dims, fmt::format("max_unpool{}d: expected an input with at least {} dims, but got {}", D,
                                            dims, shape_to_string(input.sizes())));
  std::vector<int64_t> defaults;
  for (size_t d = 0; d < D; ++d)
    defaults.push_back((input.size(input.dim() - dims + static_cast<int64_t>(d)) - 1) * stride[d] + kernel_size[d] -
                       2 * padding[d]);
  if (!output_size) return defaults;
  std::vector<int64_t> wanted = *output_size;
  if (wanted.size() == D + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
  GD_CHECK(wanted.size() == D, fmt::format("output_size should be a sequence containing {} or {} elements, but it has "
                                           "a length of '{}'",
                                           D, D + 2, output_size->size()));
  for (size_t d = 0; d < D; ++d) {
    const int64_t min_size = defaults[d] - stride[d], max_size = defaults[d] + stride[d];
    GD_CHECK(min_size < wanted[d] && wanted[d] < max_size,
             fmt::format("invalid output_size \"{}\" (dim {} must be between {} and {})", shape_to_string(wanted), d,
                         min_size, max_size));
  }
  return wanted;
}

template std::vector<int64_t> unpool_output_size<1>(const Tensor&, const ExpandingArray<1>&, const ExpandingArray<1>&,
                                                    const ExpandingArray<1>&, const std::optional<std::vector<int64_t>>&);
template std::vector<int64_t> unpool_output_size<2>(const Tensor&, const ExpandingArray<2>&, const ExpandingArray<2>&,
                                                    const ExpandingArray<2>&, const std::optional<std::vector<int64_t>>&);
template std::vector<int64_t> unpool_output_size<3>(const Tensor&, const ExpandingArray<3>&, const ExpandingArray<3>&,
                                                    const ExpandingArray<3>&, const std::optional<std::vector<int64_t>>&);

}  // namespace detail

namespace functional {

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ::gradiens::max_pool1d(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ::gradiens::max_pool2d(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return ::gradiens::max_pool3d(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ::gradiens::max_pool1d_with_indices(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ::gradiens::max_pool2d_with_indices(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return ::gradiens::max_pool3d_with_indices(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  return ::gradiens::avg_pool1d(input, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_);
}
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return ::gradiens::avg_pool2d(input, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_,
                                o.divisor_override_);
}
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  return ::gradiens::avg_pool3d(input, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_,
                                o.divisor_override_);
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  return ::gradiens::adaptive_max_pool1d(input, o.output_size_);
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& o) {
  return ::gradiens::adaptive_max_pool2d(input, resolved<2>(o.output_size_, input));
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  return ::gradiens::adaptive_max_pool3d(input, resolved<3>(o.output_size_, input));
}
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, o));
}
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, o));
}

Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return ::gradiens::adaptive_avg_pool1d(input, o.output_size_);
}
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return ::gradiens::adaptive_avg_pool2d(input, resolved<2>(o.output_size_, input));
}
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  return ::gradiens::adaptive_avg_pool3d(input, resolved<3>(o.output_size_, input));
}

namespace {
// PyTorch's lp_pool: (sign(s) relu(|s|)) * window size, to the 1/p, with s the mean of x^p.
Tensor lp_finish(const Tensor& mean, double norm_type, int64_t window) {
  return (mean.sign() * mean.abs().relu()).mul(static_cast<double>(window)).pow(1.0 / norm_type);
}
}  // namespace

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  const Tensor mean = ::gradiens::avg_pool1d(input.pow(o.norm_type_), o.kernel_size_, o.stride_, 0, o.ceil_mode_);
  return lp_finish(mean, o.norm_type_, o.kernel_size_[0]);
}
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  const Tensor mean = ::gradiens::avg_pool2d(input.pow(o.norm_type_), o.kernel_size_, o.stride_, {0, 0}, o.ceil_mode_);
  return lp_finish(mean, o.norm_type_, o.kernel_size_[0] * o.kernel_size_[1]);
}

namespace {

template <size_t D>
Tensor max_unpool_nd(const Tensor& input, const Tensor& indices, const MaxUnpoolFuncOptions<D>& o) {
  const int64_t dims = static_cast<int64_t>(D);
  // PyTorch unpools 1-D as 2-D (its message names the 2-D input).
  const int64_t shown = D == 1 ? 2 : dims;
  GD_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2,
           fmt::format("Input to max_unpooling{}d should be a {}d or {}d Tensor, but got a tensor with {} dimensions.",
                       shown, shown + 1, shown + 2, input.dim() + (D == 1 ? 1 : 0)));
  GD_CHECK(indices.dtype() == kInt64,
           fmt::format("elements in indices should be type int64 but got: {}", c10_type_name(indices.dtype())));
  GD_CHECK(input.sizes() == indices.sizes(),
           fmt::format("Expected shape of indices to be same as that of the input tensor ({}) but got indices tensor "
                       "with shape: {}",
                       shape_to_string(input.sizes()), shape_to_string(indices.sizes())));
  const std::vector<int64_t> out =
      detail::unpool_output_size<D>(input, o.kernel_size_, o.stride_, o.padding_, o.output_size_);
  int64_t plane = 1;
  for (int64_t s : out) plane *= s;
  const Tensor flat_indices = indices.flatten(-dims);
  if (flat_indices.numel() > 0) {
    const int64_t lowest = flat_indices.min().item<int64_t>(), highest = flat_indices.max().item<int64_t>();
    const int64_t bad = lowest < 0 ? lowest : highest;
    if (lowest < 0 || highest >= plane) {
      std::string volume;
      for (size_t d = 0; d < D; ++d) {
      if (d) volume += "x";
      volume += std::to_string(out[d]);
    }
      if (D == 1) volume += "x1";  // PyTorch unpools 1-D as 2-D with a width of 1
      throw Error(fmt::format("Found an invalid max index: {} (output volumes are of size {}", bad, volume));
    }
  }
  DimVector flat_shape = flat_indices.sizes().dims();
  flat_shape.back() = plane;
  DimVector shape = input.sizes().dims();
  for (size_t d = 0; d < D; ++d) shape[shape.size() - D + d] = out[d];
  return zeros(flat_shape, input.options()).scatter(-1, flat_indices, input.flatten(-dims)).view(shape);
}

}  // namespace

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options) {
  return max_unpool_nd<1>(input, indices, options);
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options) {
  return max_unpool_nd<2>(input, indices, options);
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options) {
  return max_unpool_nd<3>(input, indices, options);
}

}  // namespace functional

}  // namespace gradiens::nn
