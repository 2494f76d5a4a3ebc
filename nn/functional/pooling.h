// Pooling options (libtorch's MaxPoolOptions<D>, AvgPoolOptions<D>,
// AdaptiveMaxPoolOptions, AdaptiveAvgPoolOptions, LPPoolOptions<D>,
// MaxUnpoolOptions<D>) and the functionals F::max_pool1d/2d/3d (and
// _with_indices), avg_pool*, adaptive_max_pool* (and _with_indices),
// adaptive_avg_pool*, lp_pool1d/2d and max_unpool1d/2d/3d.
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include "engine/tensor.h"
#include "nn/functional/options.h"
#include "nn/modules/conv.h"  // ExpandingArray, ExpandingArrayWithOptional

namespace gradiens::nn {

// stride defaults to kernel_size (PyTorch's stride=None); padding counts as -inf.
template <size_t D>
struct MaxPoolOptions {
  MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(ExpandingArray<D>, stride);
  GRADIENS_ARG(ExpandingArray<D>, padding) = 0;
  GRADIENS_ARG(ExpandingArray<D>, dilation) = 1;
  GRADIENS_ARG(bool, ceil_mode) = false;
};
using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;

// stride defaults to kernel_size. divisor_override, when set, divides every
// window's sum by it instead of by the window's size (2-D and 3-D only, as PyTorch).
template <size_t D>
struct AvgPoolOptions {
  AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(ExpandingArray<D>, stride);
  GRADIENS_ARG(ExpandingArray<D>, padding) = 0;
  GRADIENS_ARG(bool, ceil_mode) = false;
  GRADIENS_ARG(bool, count_include_pad) = true;
  GRADIENS_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;

// The output size: ExpandingArray<1> in 1-D, ExpandingArrayWithOptional<D>
// (nullopt keeps the input's size) in 2-D and 3-D, as libtorch.
template <class OutputSize>
struct AdaptiveMaxPoolOptions {
  AdaptiveMaxPoolOptions(OutputSize output_size) : output_size_(output_size) {}
  GRADIENS_ARG(OutputSize, output_size);
};
using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<ExpandingArray<1>>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptional<2>>;
using AdaptiveMaxPool3dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptional<3>>;

template <class OutputSize>
struct AdaptiveAvgPoolOptions {
  AdaptiveAvgPoolOptions(OutputSize output_size) : output_size_(output_size) {}
  GRADIENS_ARG(OutputSize, output_size);
};
using AdaptiveAvgPool1dOptions = AdaptiveAvgPoolOptions<ExpandingArray<1>>;
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptional<2>>;
using AdaptiveAvgPool3dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptional<3>>;
// The 2-D output size under its earlier gradiens name.
using AdaptiveOutputSize = ExpandingArrayWithOptional<2>;

// The power-average pool: (sum over the window of x^p)^(1/p); stride defaults to kernel_size.
template <size_t D>
struct LPPoolOptions {
  LPPoolOptions(double norm_type, ExpandingArray<D> kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  GRADIENS_ARG(double, norm_type);
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(ExpandingArray<D>, stride);
  GRADIENS_ARG(bool, ceil_mode) = false;
};
using LPPool1dOptions = LPPoolOptions<1>;
using LPPool2dOptions = LPPoolOptions<2>;

// The max pooling whose indices MaxUnpool inverts; stride defaults to kernel_size.
template <size_t D>
struct MaxUnpoolOptions {
  MaxUnpoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(ExpandingArray<D>, stride);
  GRADIENS_ARG(ExpandingArray<D>, padding) = 0;
};
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;

// Fractional max pooling (Graham, 2014): windows of kernel_size at pseudo-random
// starts, one draw per (batch, channel) plane; output_size or output_ratio (of
// the input size, in (0, 1)) gives the output grid. _random_samples ([N, C, D],
// values in [0, 1), the last dim's sample first, as PyTorch) fixes the draws.
template <size_t D>
struct FractionalMaxPoolOptions {
  FractionalMaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size) {}
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(std::optional<ExpandingArray<D>>, output_size) = std::nullopt;
  using ExpandingArrayDouble = ExpandingArray<D, double>;
  GRADIENS_ARG(std::optional<ExpandingArrayDouble>, output_ratio) = std::nullopt;
  GRADIENS_ARG(Tensor, _random_samples);
};
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;

namespace functional {

using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool2dFuncOptions = MaxPool2dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using AvgPool3dFuncOptions = AvgPool3dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
using LPPool1dFuncOptions = LPPool1dOptions;
using LPPool2dFuncOptions = LPPool2dOptions;
using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;

// MaxUnpoolOptions plus the output size (D sizes, or D + 2 with batch and
// channels first); by default (in - 1) stride - 2 padding + kernel_size.
template <size_t D>
struct MaxUnpoolFuncOptions {
  MaxUnpoolFuncOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  GRADIENS_ARG(ExpandingArray<D>, kernel_size);
  GRADIENS_ARG(ExpandingArray<D>, stride);
  GRADIENS_ARG(ExpandingArray<D>, padding) = 0;
  GRADIENS_ARG(std::optional<std::vector<int64_t>>, output_size) = std::nullopt;
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
// (output, indices): the flat position of each max within its input plane.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& options);

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);

Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& options);

Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options);
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options);

Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& options);

// As PyTorch: avg_pool of x^p (no padding), times the window size, to the 1/p
// (sign(s) relu(|s|) first, so a negative sum of odd powers gives 0).
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);

// Places each input value at its index in a zero output (the inverse of max
// pooling where the indices came from); indices as max_pool*_with_indices gives them.
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options);
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options);
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options);

}  // namespace functional

namespace detail {
// The output sizes of MaxUnpool (PyTorch's _unpool_output_size): `output_size`
// given (D or D + 2 sizes) and checked, or the default.
template <size_t D>
std::vector<int64_t> unpool_output_size(const Tensor& input, const ExpandingArray<D>& kernel_size,
                                        const ExpandingArray<D>& stride, const ExpandingArray<D>& padding,
                                        const std::optional<std::vector<int64_t>>& output_size);
}  // namespace detail

}  // namespace gradiens::nn
