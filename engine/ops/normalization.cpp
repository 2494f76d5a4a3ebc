// layer_norm and batch_norm as composites of mean, square, rsqrt and
// elementwise ops: no backward of their own, so every derivative order comes
// from the ops they are built of.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "kernels/error.h"

namespace gradiens {

namespace {

// PyTorch's dispatch error for a dtype its kernel lacks: "LayerNormKernelImpl"
// not implemented for 'Long'.
void check_floating(const Tensor& input, std::string_view kernel) {
  if (input.is_floating_point()) return;
  std::string_view type = legacy_tensor_type_name(input.dtype());
  type.remove_suffix(std::string_view("Tensor").size());
  throw Error(fmt::format("\"{}\" not implemented for '{}'", kernel, type));
}

// (x - mean) / sqrt(var + eps) over `dims` (kept as size 1), with the biased
// variance. The variance is the mean of the centred squares, not
// E[x^2] - E[x]^2, which cancels catastrophically when |mean| >> std.
struct Normalized {
  Tensor out, mean, var;
};
Normalized normalize(const Tensor& x, IntArrayRef dims, double eps) {
  Tensor mean = x.mean(dims, true);
  Tensor centred = x - mean;
  Tensor var = centred.square().mean(dims, true);
  return {centred * (var + eps).rsqrt(), mean, var};
}

void check_channels(const Tensor& t, std::string_view name, int64_t channels) {
  if (!t.defined()) return;
  GD_CHECK(t.numel() == channels, fmt::format("{} should contain {} elements not {}", name, channels, t.numel()));
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  GD_CHECK(k >= 1, fmt::format("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                               "element, but got normalized_shape = {}",
                               shape_to_string(normalized_shape)));
  GD_CHECK(!weight.defined() || weight.sizes() == normalized_shape,
           fmt::format("Expected weight to be of same shape as normalized_shape, but got weight of shape {} and "
                       "normalized_shape = {}",
                       shape_to_string(weight.defined() ? weight.sizes() : IntArrayRef()),
                       shape_to_string(normalized_shape)));
  GD_CHECK(!bias.defined() || bias.sizes() == normalized_shape,
           fmt::format("Expected bias to be of same shape as normalized_shape, but got bias of shape {} and "
                       "normalized_shape = {}",
                       shape_to_string(bias.defined() ? bias.sizes() : IntArrayRef()),
                       shape_to_string(normalized_shape)));
  const int64_t ndim = input.dim();
  bool trailing = ndim >= k;
  for (int64_t i = 0; trailing && i < k; ++i) trailing = input.size(ndim - k + i) == normalized_shape[i];
  if (!trailing) {
    std::string expected = shape_to_string(normalized_shape);
    expected.insert(1, "*, ");
    throw Error(fmt::format("Given normalized_shape={}, expected input with shape {}, but got input of size{}",
                            shape_to_string(normalized_shape), expected, shape_to_string(input.sizes())));
  }
  check_floating(input, "LayerNormKernelImpl");

  DimVector dims;
  for (int64_t d = ndim - k; d < ndim; ++d) dims.push_back(d);
  Tensor out = normalize(input, dims, eps).out;
  if (weight.defined()) out = out * weight;
  if (bias.defined()) out = out + bias;
  return out;
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  GD_CHECK(input.dim() >= 2,
           fmt::format("batch_norm: expected input of shape (N, C, ...) with at least 2 dims, but got input of size {}",
                       shape_to_string(input.sizes())));
  const int64_t channels = input.size(1);
  // PyTorch's order: the running statistics first.
  check_channels(running_mean, "running_mean", channels);
  check_channels(running_var, "running_var", channels);
  check_channels(weight, "weight", channels);
  check_channels(bias, "bias", channels);
  GD_CHECK(training || running_mean.defined(), "running_mean must be defined in evaluation mode");
  GD_CHECK(training || running_var.defined(), "running_var must be defined in evaluation mode");
  check_floating(input, "batch_norm");
  const int64_t per_channel = channels == 0 ? 0 : input.numel() / channels;
  GD_CHECK(!training || per_channel != 1,
           fmt::format("Expected more than 1 value per channel when training, got input size {}",
                       shape_to_string(input.sizes())));

  // A channels_last input is normalized as its NHWC view [N, H, W, C], which is
  // dense: the reductions and elementwise ops run on the data as it lies, and the
  // output and the input's gradient come back channels_last through the permutes.
  const bool channels_last = input.dim() == 4 && input.suggest_memory_format() == MemoryFormat::ChannelsLast;
  const Tensor x = channels_last ? input.permute({0, 2, 3, 1}) : input;
  const int64_t channel_dim = channels_last ? 3 : 1;

  // Per-channel tensors broadcast against x as [1, C, 1, ...] (or [1, 1, 1, C]).
  DimVector channel_shape(static_cast<size_t>(x.dim()), 1);
  channel_shape[channel_dim] = channels;
  DimVector dims;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != channel_dim) dims.push_back(d);

  Tensor out;
  if (input.numel() == 0) {
    // As PyTorch: nothing to normalize and no statistics to update, but the
    // affine parameters stay in the graph.
    out = x.clone();
  } else if (training) {
    auto [normalized, mean, var] = normalize(x, dims, eps);
    out = normalized;
    if (running_mean.defined() || running_var.defined()) {
      NoGradGuard no_grad;
      const double n = static_cast<double>(per_channel);
      Tensor stat = running_mean;
      if (stat.defined())
        stat.copy_(stat * (1 - momentum) + mean.detach().reshape({channels}).to(stat.dtype()) * momentum);
      stat = running_var;
      if (stat.defined())
        stat.copy_(stat * (1 - momentum) +
                   var.detach().reshape({channels}).to(stat.dtype()) * (momentum * n / (n - 1)));
    }
  } else {
    out = (x - running_mean.reshape(channel_shape)) * (running_var.reshape(channel_shape) + eps).rsqrt();
  }
  if (weight.defined()) out = out * weight.reshape(channel_shape);
  if (bias.defined()) out = out + bias.reshape(channel_shape);
  return channels_last ? out.permute({0, 3, 1, 2}) : out;
}

}  // namespace gradiens
