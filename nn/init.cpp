// The initializers of nn/init.h, following torch/nn/init.py: the same
// formulas, checks and error messages.
#include "nn/init.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/linalg.h"
#include "kernels/error.h"

namespace gradiens::nn::init {

namespace {

Generator& generator_or_default(std::optional<Generator>& generator) {
  return generator ? *generator : default_generator();
}

// Inverse of erf on [-1, 1]: the rational first guess PyTorch's calc_erfinv
// uses, refined by two Newton steps to double precision.
double erfinv(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1) return std::numeric_limits<double>::infinity();
  if (y == -1) return -std::numeric_limits<double>::infinity();
  constexpr double a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
  constexpr double b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
  constexpr double c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
  constexpr double d[2] = {3.543889200, 1.637067800};
  double x;
  if (std::abs(y) <= 0.7) {
    const double z = y * y;
    const double num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0];
    const double den = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0;
    x = y * num / den;
  } else {
    const double z = std::sqrt(-std::log((1.0 - std::abs(y)) / 2.0));
    const double num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];
    const double den = (d[1] * z + d[0]) * z + 1.0;
    x = std::copysign(num / den, y);
  }
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::numbers::pi);
  for (int step = 0; step < 2; ++step) x -= (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  return x;
}

double norm_cdf(double x) { return (1.0 + std::erf(x / std::numbers::sqrt2)) / 2.0; }

double correct_fan(const Tensor& tensor, const FanModeType& mode) {
  std::string name = mode.name();
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  GD_CHECK(name == "fan_in" || name == "fan_out",
           fmt::format("Mode {} not supported, please use one of ['fan_in', 'fan_out']", name));
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  return static_cast<double>(name == "fan_in" ? fan_in : fan_out);
}

bool has_zero_dim(const Tensor& tensor) {
  for (int64_t s : tensor.sizes())
    if (s == 0) return true;
  return false;
}

}  // namespace

NonlinearityType::NonlinearityType(Nonlinearity kind) {
  switch (kind) {
    case Nonlinearity::Linear: name_ = "linear"; break;
    case Nonlinearity::Conv1D: name_ = "conv1d"; break;
    case Nonlinearity::Conv2D: name_ = "conv2d"; break;
    case Nonlinearity::Conv3D: name_ = "conv3d"; break;
    case Nonlinearity::ConvTranspose1D: name_ = "conv_transpose1d"; break;
    case Nonlinearity::ConvTranspose2D: name_ = "conv_transpose2d"; break;
    case Nonlinearity::ConvTranspose3D: name_ = "conv_transpose3d"; break;
    case Nonlinearity::Sigmoid: name_ = "sigmoid"; break;
    case Nonlinearity::Tanh: name_ = "tanh"; break;
    case Nonlinearity::ReLU: name_ = "relu"; break;
    case Nonlinearity::LeakyReLU: name_ = "leaky_relu"; break;
    case Nonlinearity::SELU: name_ = "selu"; break;
  }
}

double calculate_gain(const NonlinearityType& nonlinearity, std::optional<double> param) {
  const std::string& name = nonlinearity.name();
  for (const char* linear : {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                             "conv_transpose3d", "sigmoid"})
    if (name == linear) return 1.0;
  if (name == "tanh") return 5.0 / 3;
  if (name == "relu") return std::sqrt(2.0);
  if (name == "leaky_relu") {
    const double negative_slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1 + negative_slope * negative_slope));
  }
  if (name == "selu") return 3.0 / 4;  // found empirically (pytorch/pytorch#50664)
  throw Error(fmt::format("Unsupported nonlinearity {}", name));
}

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  GD_CHECK(tensor.dim() >= 2, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive_field_size = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field_size *= tensor.size(d);
  return {tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size};
}

Tensor uniform_(Tensor tensor, double a, double b, std::optional<Generator> generator) {
  NoGradGuard no_grad;
  gradiens::uniform_(tensor, a, b, generator_or_default(generator));
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std, std::optional<Generator> generator) {
  NoGradGuard no_grad;
  gradiens::normal_(tensor, mean, std, generator_or_default(generator));
  return tensor;
}

Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b, std::optional<Generator> generator) {
  GD_CHECK(std > 0, fmt::format("trunc_normal_ expects std > 0, but found std={}", std));
  NoGradGuard no_grad;
  const double lower = norm_cdf((a - mean) / std), upper = norm_cdf((b - mean) / std);
  gradiens::uniform_(tensor, 2 * lower - 1, 2 * upper - 1, generator_or_default(generator));
  // The inverse CDF is applied in float64 on a CPU copy, whatever the
  // tensor's dtype and device, then written back.
  Tensor work = tensor.to(TensorOptions().dtype(kFloat64).device(Device(kCPU)), /*copy=*/true).contiguous();
  double* values = work.cpu_data_ptr<double>();
  const double scale = std * std::numbers::sqrt2;
  for (int64_t i = 0; i < work.numel(); ++i) values[i] = erfinv(values[i]) * scale + mean;
  tensor.copy_(work);
  // Rounding to a narrower dtype can step just past a bound; clamp after it.
  tensor.clamp_(a, b);
  return tensor;
}

Tensor constant_(Tensor tensor, Scalar value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) {
  NoGradGuard no_grad;
  tensor.zero_();
  return tensor;
}

Tensor ones_(Tensor tensor) {
  NoGradGuard no_grad;
  tensor.fill_(1);
  return tensor;
}

Tensor eye_(Tensor tensor) {
  GD_CHECK(tensor.dim() == 2, "Only tensors with 2 dimensions are supported");
  NoGradGuard no_grad;
  tensor.copy_(eye(tensor.size(0), tensor.size(1), tensor.options()));
  return tensor;
}

Tensor dirac_(Tensor tensor, int64_t groups) {
  const int64_t dims = tensor.dim();
  GD_CHECK(dims >= 3 && dims <= 5, "Only tensors with 3, 4, or 5 dimensions are supported");
  GD_CHECK(groups > 0, fmt::format("dirac_: groups must be positive, got {}", groups));
  GD_CHECK(tensor.size(0) % groups == 0, "dim 0 must be divisible by groups");
  const int64_t out_channels_per_group = tensor.size(0) / groups;
  const int64_t min_dim = std::min(out_channels_per_group, tensor.size(1));
  NoGradGuard no_grad;
  tensor.zero_();
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t d = 0; d < min_dim; ++d) {
      Tensor center = tensor.select(0, g * out_channels_per_group + d).select(0, d);
      // After two selects the spatial dims are 0 .. dims-3; each select removes one.
      for (int64_t k = 2; k < dims; ++k) center = center.select(0, tensor.size(k) / 2);
      center.fill_(1);
    }
  }
  return tensor;
}

Tensor xavier_uniform_(Tensor tensor, double gain, std::optional<Generator> generator) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  if (tensor.numel() == 0) return tensor;
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(tensor, -bound, bound, generator);
}

Tensor xavier_normal_(Tensor tensor, double gain, std::optional<Generator> generator) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  if (tensor.numel() == 0) return tensor;
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return normal_(tensor, 0, std, generator);
}

Tensor kaiming_uniform_(Tensor tensor, double a, const FanModeType& mode, const NonlinearityType& nonlinearity,
                        std::optional<Generator> generator) {
  if (has_zero_dim(tensor)) return tensor;  // PyTorch warns "Initializing zero-element tensors is a no-op"
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(correct_fan(tensor, mode));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(tensor, -bound, bound, generator);
}

Tensor kaiming_normal_(Tensor tensor, double a, const FanModeType& mode, const NonlinearityType& nonlinearity,
                       std::optional<Generator> generator) {
  if (has_zero_dim(tensor)) return tensor;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(correct_fan(tensor, mode));
  return normal_(tensor, 0, std, generator);
}

Tensor orthogonal_(Tensor tensor, double gain, std::optional<Generator> generator) {
  GD_CHECK(tensor.dim() >= 2, "Only tensors with 2 or more dimensions are supported");
  if (tensor.numel() == 0) return tensor;
  NoGradGuard no_grad;
  const int64_t rows = tensor.size(0), cols = tensor.numel() / rows;
  Tensor flattened = empty({rows, cols}, tensor.options());
  gradiens::normal_(flattened, 0, 1, generator_or_default(generator));
  // QR wants a tall matrix; a wide one is factored transposed and Q transposed back.
  if (rows < cols) flattened = flattened.t();
  auto [q, r] = linalg::qr(flattened);
  // Scaling column j by sign(R[j, j]) makes the factorization unique (R's
  // diagonal positive), so Q is uniform over the orthogonal matrices
  // (Mezzadri, arXiv:math-ph/0609050).
  q = q * r.diagonal().sign();
  if (rows < cols) q = q.t();
  tensor.copy_(q.reshape(tensor.sizes()));
  tensor.mul_(gain);
  return tensor;
}

Tensor sparse_(Tensor tensor, double sparsity, double std, std::optional<Generator> generator) {
  GD_CHECK(tensor.dim() == 2, "Only tensors with 2 dimensions are supported");
  NoGradGuard no_grad;
  Generator& gen = generator_or_default(generator);
  const int64_t rows = tensor.size(0), cols = tensor.size(1);
  const auto num_zeros = static_cast<int64_t>(std::ceil(sparsity * static_cast<double>(rows)));
  gradiens::normal_(tensor, 0, std, gen);
  for (int64_t col = 0; col < cols; ++col) {
    Tensor zero_rows = randperm(rows, gen, TensorOptions().device(tensor.device())).slice(0, 0, num_zeros);
    Tensor column = tensor.select(1, col);
    column.index_put_({zero_rows}, Scalar(0));
  }
  return tensor;
}

}  // namespace gradiens::nn::init
