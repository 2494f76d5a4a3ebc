// nn::functional normalizations with libtorch's options structs: batch_norm,
// instance_norm, group_norm, layer_norm, local_response_norm and normalize.
// All are compositions (over the engine's batch_norm and layer_norm, norms,
// means and elementwise ops): derivatives of any order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/tensor.h"
#include "nn/functional/options.h"

namespace gradiens::nn {

// size channels around each one (size / 2 before, (size - 1) / 2 after):
// x / (k + alpha * mean of their squares)^beta.
struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, size);
  GRADIENS_ARG(double, alpha) = 1e-4;
  GRADIENS_ARG(double, beta) = 0.75;
  GRADIENS_ARG(double, k) = 1.0;
};

// num_channels split into num_groups groups, each normalized over its
// channels and the spatial dims; weight and bias per channel when affine.
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  GRADIENS_ARG(int64_t, num_groups);
  GRADIENS_ARG(int64_t, num_channels);
  GRADIENS_ARG(double, eps) = 1e-5;
  GRADIENS_ARG(bool, affine) = true;
};

namespace functional {

using LocalResponseNormFuncOptions = LocalResponseNormOptions;

// training: batch statistics (updating the running ones when given);
// otherwise the running statistics. momentum must hold a value here.
struct BatchNormFuncOptions {
  GRADIENS_ARG(Tensor, weight);
  GRADIENS_ARG(Tensor, bias);
  GRADIENS_ARG(bool, training) = false;
  GRADIENS_ARG(std::optional<double>, momentum) = 0.1;
  GRADIENS_ARG(double, eps) = 1e-5;
};

// use_input_stats: each sample's own statistics per channel (averaged over the
// batch into the running ones when given); otherwise the running statistics.
struct InstanceNormFuncOptions {
  GRADIENS_ARG(Tensor, running_mean);
  GRADIENS_ARG(Tensor, running_var);
  GRADIENS_ARG(Tensor, weight);
  GRADIENS_ARG(Tensor, bias);
  GRADIENS_ARG(bool, use_input_stats) = true;
  GRADIENS_ARG(double, momentum) = 0.1;
  GRADIENS_ARG(double, eps) = 1e-5;
};

struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, num_groups);
  GRADIENS_ARG(Tensor, weight);
  GRADIENS_ARG(Tensor, bias);
  GRADIENS_ARG(double, eps) = 1e-5;
};

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit as libtorch's
      : normalized_shape_(std::move(normalized_shape)) {}
  GRADIENS_ARG(std::vector<int64_t>, normalized_shape);
  GRADIENS_ARG(Tensor, weight);
  GRADIENS_ARG(Tensor, bias);
  GRADIENS_ARG(double, eps) = 1e-5;
};

// input / max(norm_p(input, dim), eps); with `out`, written there instead
// (not differentiable, as libtorch's div_out).
struct NormalizeFuncOptions {
  GRADIENS_ARG(double, p) = 2.0;
  GRADIENS_ARG(int64_t, dim) = 1;
  GRADIENS_ARG(double, eps) = 1e-12;
  GRADIENS_ARG(std::optional<Tensor>, out) = std::nullopt;
};

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options = {});
// input (N, C, ...) with at least one spatial dim.
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);
Tensor normalize(const Tensor& input, NormalizeFuncOptions options = {});

}  // namespace functional
}  // namespace gradiens::nn
