// The functional normalizations: checks with PyTorch's messages, then the
// engine's batch_norm / layer_norm or plain compositions.
#include "nn/functional/normalization.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "kernels/error.h"

namespace gradiens::nn::functional {

namespace {
std::string sizes_string(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

// A per-channel tensor shaped to broadcast along dim 1 of an input of rank `dim`.
Tensor channel_view(const Tensor& t, int64_t dim) {
  DimVector shape(static_cast<size_t>(dim), 1);
  shape[1] = t.numel();
  return t.reshape(shape);
}
}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options) {
  GD_CHECK(options.momentum().has_value(), "batch_norm: momentum must be given (None is for the modules only)");
  return gradiens::batch_norm(input, running_mean, running_var, options.weight(), options.bias(), options.training(),
                              *options.momentum(), options.eps());
}

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options) {
  GD_CHECK(input.dim() >= 3, fmt::format("instance_norm: expected input of shape (N, C, ...) with at least one "
                                         "spatial dim, but got input of size {}",
                                         sizes_string(input.sizes())));
  const int64_t batch = input.size(0), channels = input.size(1);
  if (options.use_input_stats()) {
    const int64_t spatial = channels == 0 || batch == 0 ? 0 : input.numel() / (batch * channels);
    GD_CHECK(spatial != 1, fmt::format("Expected more than 1 spatial element when training, got input size {}",
                                       sizes_string(input.sizes())));
  }
  // As PyTorch: a batch norm of the (1, N * C, ...) view, the per-channel
  // tensors repeated N times, the running statistics averaged back over N.
  auto repeated = [batch](const Tensor& t) { return t.defined() ? t.repeat({batch}) : Tensor(); };
  Tensor running_mean = repeated(options.running_mean());
  Tensor running_var = repeated(options.running_var());
  DimVector shape = input.sizes().dims();
  shape[0] = 1;
  shape[1] = batch * channels;
  Tensor out = gradiens::batch_norm(input.reshape(shape), running_mean, running_var, repeated(options.weight()),
                                    repeated(options.bias()), options.use_input_stats(), options.momentum(),
                                    options.eps());
  {
    NoGradGuard no_grad;
    Tensor target = options.running_mean();
    if (target.defined()) target.copy_(running_mean.view({batch, channels}).mean({0}));
    target = options.running_var();
    if (target.defined()) target.copy_(running_var.view({batch, channels}).mean({0}));
  }
  return out.view(input.sizes());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options) {
  GD_CHECK(input.dim() >= 2,
           fmt::format("Expected at least 2 dimensions for input tensor but received {}", input.dim()));
  const int64_t groups = options.num_groups(), channels = input.size(1);
  GD_CHECK(groups > 0 && channels % groups == 0,
           fmt::format("Expected number of channels in input to be divisible by num_groups, but got input of shape {} "
                       "and num_groups={}",
                       sizes_string(input.sizes()), groups));
  for (auto [t, name] : {std::pair{&options.weight(), "weight"}, std::pair{&options.bias(), "bias"}})
    GD_CHECK(!t->defined() || (t->dim() == 1 && t->numel() == channels),
             fmt::format("Expected {0} to be a vector of size equal to the number of channels in input, but got "
                         "{0} of shape {1} and input of shape {2}",
                         name, sizes_string(t->sizes()), sizes_string(input.sizes())));
  const int64_t batch = input.size(0);
  const int64_t group_size = batch * groups == 0 ? 0 : input.numel() / (batch * groups);
  Tensor out = gradiens::layer_norm(input.reshape({batch, groups, group_size}), {group_size}, {}, {}, options.eps())
                   .reshape(input.sizes());
  if (options.weight().defined()) out = out * channel_view(options.weight(), input.dim());
  if (options.bias().defined()) out = out + channel_view(options.bias(), input.dim());
  return out;
}

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  return gradiens::layer_norm(input, options.normalized_shape(), options.weight(), options.bias(), options.eps());
}

Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options) {
  const int64_t dim = input.dim();
  GD_CHECK(dim >= 3, fmt::format("Expected 3D or higher dimensionality input (got {} dimensions)", dim));
  const int64_t size = options.size();
  GD_CHECK(size > 0, fmt::format("local_response_norm: size must be positive, got {}", size));
  if (input.numel() == 0) return input;
  // PyTorch's zero-padded average pool of the squares along the channels, as
  // a sum of `size` shifted narrows of the padded squares.
  const int64_t channels = input.size(1);
  Tensor squares = input * input;
  DimVector pad_shape = input.sizes().dims();
  std::vector<Tensor> parts;
  pad_shape[1] = size / 2;
  parts.push_back(zeros(pad_shape, input.options()));
  parts.push_back(squares);
  pad_shape[1] = (size - 1) / 2;
  parts.push_back(zeros(pad_shape, input.options()));
  Tensor padded = cat(parts, 1);
  Tensor window = padded.narrow(1, 0, channels);
  for (int64_t s = 1; s < size; ++s) window = window + padded.narrow(1, s, channels);
  Tensor div = (window / static_cast<double>(size) * options.alpha() + options.k()).pow(options.beta());
  return input / div;
}

Tensor normalize(const Tensor& input, NormalizeFuncOptions options) {
  Tensor denom = norm(input, options.p(), {options.dim()}, true).clamp_min(options.eps()).expand_as(input);
  if (!options.out()) return input / denom;
  NoGradGuard no_grad;
  Tensor out = *options.out();
  out.copy_(input / denom);
  return out;
}

}  // namespace gradiens::nn::functional
