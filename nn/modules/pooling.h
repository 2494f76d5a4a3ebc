// Pooling layers over the pooling functionals, with libtorch's options:
// MaxPool1d/2d/3d (with indices on request), AvgPool1d/2d/3d,
// AdaptiveMaxPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, LPPool1d/2d,
// MaxUnpool1d/2d/3d and FractionalMaxPool2d/3d. Each prints as PyTorch (repr) and as libtorch (pretty_print).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "nn/functional/pooling.h"
#include "nn/module.h"
#include "nn/modules/any_value.h"
#include "nn/modules/conv.h"  // ExpandingArray

namespace gradiens::nn {

// Max over each window of [N, C, *spatial] or [C, *spatial] input (padding counts as -inf).
template <size_t D>
class MaxPoolImpl : public Module {
 public:
  MaxPoolImpl(ExpandingArray<D> kernel_size) : MaxPoolImpl(MaxPoolOptions<D>(kernel_size)) {}
  explicit MaxPoolImpl(const MaxPoolOptions<D>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  // (output, indices): PyTorch's return_indices=True; indices are int64 flat
  // positions within each input plane.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  MaxPoolOptions<D> options;
};

template <size_t D>
class AvgPoolImpl : public Module {
 public:
  AvgPoolImpl(ExpandingArray<D> kernel_size) : AvgPoolImpl(AvgPoolOptions<D>(kernel_size)) {}
  explicit AvgPoolImpl(const AvgPoolOptions<D>& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  AvgPoolOptions<D> options;
};

// Max over each input region of a fixed output grid.
template <size_t D, class OutputSize>
class AdaptiveMaxPoolImpl : public Module {
 public:
  AdaptiveMaxPoolImpl(OutputSize output_size) : AdaptiveMaxPoolImpl(AdaptiveMaxPoolOptions<OutputSize>(output_size)) {}
  explicit AdaptiveMaxPoolImpl(const AdaptiveMaxPoolOptions<OutputSize>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  AdaptiveMaxPoolOptions<OutputSize> options;
};

// Averages over each input region of a fixed output grid.
template <size_t D, class OutputSize>
class AdaptiveAvgPoolImpl : public Module {
 public:
  AdaptiveAvgPoolImpl(OutputSize output_size) : AdaptiveAvgPoolImpl(AdaptiveAvgPoolOptions<OutputSize>(output_size)) {}
  explicit AdaptiveAvgPoolImpl(const AdaptiveAvgPoolOptions<OutputSize>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  AdaptiveAvgPoolOptions<OutputSize> options;
};

template <size_t D>
class LPPoolImpl : public Module {
 public:
  LPPoolImpl(double norm_type, ExpandingArray<D> kernel_size) : LPPoolImpl(LPPoolOptions<D>(norm_type, kernel_size)) {}
  explicit LPPoolImpl(const LPPoolOptions<D>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  LPPoolOptions<D> options;
};

// The partial inverse of MaxPool: each value placed at its index, zeros elsewhere.
template <size_t D>
class MaxUnpoolImpl : public Module {
 public:
  MaxUnpoolImpl(ExpandingArray<D> kernel_size) : MaxUnpoolImpl(MaxUnpoolOptions<D>(kernel_size)) {}
  explicit MaxUnpoolImpl(const MaxUnpoolOptions<D>& options) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(std::optional<std::vector<int64_t>>())})
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  MaxUnpoolOptions<D> options;
};

// Max over pseudo-random windows (fractional max pooling); see FractionalMaxPoolOptions.
template <size_t D>
class FractionalMaxPoolImpl : public Module {
 public:
  FractionalMaxPoolImpl(ExpandingArray<D> kernel_size)
      : FractionalMaxPoolImpl(FractionalMaxPoolOptions<D>(kernel_size)) {}
  explicit FractionalMaxPoolImpl(const FractionalMaxPoolOptions<D>& options);
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& stream) const;
  FractionalMaxPoolOptions<D> options;
};

// The holders: MaxPool1d, ..., as libtorch's (MaxPool1dImpl is a MaxPoolImpl<1>, ...).
#define GRADIENS_POOL_MODULE(Name, ...)          \
  using Name##Base = __VA_ARGS__;                \
  class Name##Impl : public Name##Base {         \
   public:                                       \
    using Name##Base::Name##Base;                \
  };                                             \
  GRADIENS_MODULE(Name)
GRADIENS_POOL_MODULE(MaxPool1d, MaxPoolImpl<1>);
GRADIENS_POOL_MODULE(MaxPool2d, MaxPoolImpl<2>);
GRADIENS_POOL_MODULE(MaxPool3d, MaxPoolImpl<3>);
GRADIENS_POOL_MODULE(AvgPool1d, AvgPoolImpl<1>);
GRADIENS_POOL_MODULE(AvgPool2d, AvgPoolImpl<2>);
GRADIENS_POOL_MODULE(AvgPool3d, AvgPoolImpl<3>);
GRADIENS_POOL_MODULE(AdaptiveMaxPool1d, AdaptiveMaxPoolImpl<1, ExpandingArray<1>>);
GRADIENS_POOL_MODULE(AdaptiveMaxPool2d, AdaptiveMaxPoolImpl<2, ExpandingArrayWithOptional<2>>);
GRADIENS_POOL_MODULE(AdaptiveMaxPool3d, AdaptiveMaxPoolImpl<3, ExpandingArrayWithOptional<3>>);
GRADIENS_POOL_MODULE(AdaptiveAvgPool1d, AdaptiveAvgPoolImpl<1, ExpandingArray<1>>);
GRADIENS_POOL_MODULE(AdaptiveAvgPool2d, AdaptiveAvgPoolImpl<2, ExpandingArrayWithOptional<2>>);
GRADIENS_POOL_MODULE(AdaptiveAvgPool3d, AdaptiveAvgPoolImpl<3, ExpandingArrayWithOptional<3>>);
GRADIENS_POOL_MODULE(LPPool1d, LPPoolImpl<1>);
GRADIENS_POOL_MODULE(LPPool2d, LPPoolImpl<2>);
GRADIENS_POOL_MODULE(MaxUnpool1d, MaxUnpoolImpl<1>);
GRADIENS_POOL_MODULE(MaxUnpool2d, MaxUnpoolImpl<2>);
GRADIENS_POOL_MODULE(MaxUnpool3d, MaxUnpoolImpl<3>);
GRADIENS_POOL_MODULE(FractionalMaxPool2d, FractionalMaxPoolImpl<2>);
GRADIENS_POOL_MODULE(FractionalMaxPool3d, FractionalMaxPoolImpl<3>);
#undef GRADIENS_POOL_MODULE

}  // namespace gradiens::nn
