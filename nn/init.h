// gradiens::nn::init: the weight initializers of torch.nn.init (calculate_gain,
// uniform_, normal_, xavier_*, kaiming_*, trunc_normal_, orthogonal_, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "engine/generator.h"
#include "engine/tensor.h"

namespace gradiens::nn::init {

// The nonlinearities calculate_gain knows, as libtorch's torch::kReLU etc.
enum class Nonlinearity {
  Linear, Conv1D, Conv2D, Conv3D, ConvTranspose1D, ConvTranspose2D, ConvTranspose3D,
  Sigmoid, Tanh, ReLU, LeakyReLU, SELU
};
inline constexpr Nonlinearity kLinear = Nonlinearity::Linear;
inline constexpr Nonlinearity kConv1D = Nonlinearity::Conv1D;
inline constexpr Nonlinearity kConv2D = Nonlinearity::Conv2D;
inline constexpr Nonlinearity kConv3D = Nonlinearity::Conv3D;
inline constexpr Nonlinearity kConvTranspose1D = Nonlinearity::ConvTranspose1D;
inline constexpr Nonlinearity kConvTranspose2D = Nonlinearity::ConvTranspose2D;
inline constexpr Nonlinearity kConvTranspose3D = Nonlinearity::ConvTranspose3D;
inline constexpr Nonlinearity kSigmoid = Nonlinearity::Sigmoid;
inline constexpr Nonlinearity kTanh = Nonlinearity::Tanh;
inline constexpr Nonlinearity kReLU = Nonlinearity::ReLU;
inline constexpr Nonlinearity kLeakyReLU = Nonlinearity::LeakyReLU;
inline constexpr Nonlinearity kSELU = Nonlinearity::SELU;

enum class FanMode { FanIn, FanOut };
inline constexpr FanMode kFanIn = FanMode::FanIn;
inline constexpr FanMode kFanOut = FanMode::FanOut;

// A nonlinearity given by enum (kReLU) or by PyTorch's name ("relu",
// "leaky_relu", "conv_transpose2d", ...). A name is checked where it is used,
// as Python does, so an unknown one is an error from calculate_gain.
class NonlinearityType {
 public:
  NonlinearityType(Nonlinearity kind);
  NonlinearityType(std::string_view name) : name_(name) {}
  NonlinearityType(const char* name) : name_(name) {}
  NonlinearityType(const std::string& name) : name_(name) {}
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// A fan mode given by enum (kFanIn) or by name ("fan_in", "fan_out", any case).
class FanModeType {
 public:
  FanModeType(FanMode mode) : name_(mode == FanMode::FanIn ? "fan_in" : "fan_out") {}
  FanModeType(std::string_view name) : name_(name) {}
  FanModeType(const char* name) : name_(name) {}
  FanModeType(const std::string& name) : name_(name) {}
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// The recommended gain for a nonlinearity: 1 for linear/conv*/sigmoid, 5/3 for
// tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (param is the
// negative slope, 0.01 when not given), 3/4 for selu.
double calculate_gain(const NonlinearityType& nonlinearity, std::optional<double> param = std::nullopt);

// (fan_in, fan_out) of a weight [out, in, *kernel]: in * prod(kernel) and
// out * prod(kernel). Needs at least 2 dims.
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

// Every initializer below fills `tensor` in place without recording it on the
// tape (a leaf that requires grad stays one) and returns it. Those that draw
// take an optional Generator; as a Generator is a handle, the one passed is
// the one that advances. Without it they draw from default_generator().

Tensor uniform_(Tensor tensor, double a = 0, double b = 1, std::optional<Generator> generator = std::nullopt);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1, std::optional<Generator> generator = std::nullopt);
// Normal(mean, std^2) restricted to [a, b], by the inverse CDF of a uniform
// draw between the CDF values of a and b.
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2,
                     std::optional<Generator> generator = std::nullopt);
Tensor constant_(Tensor tensor, Scalar value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
// The identity matrix (2-D tensors only).
Tensor eye_(Tensor tensor);
// The identity convolution kernel (3-, 4- or 5-D weights), per group.
Tensor dirac_(Tensor tensor, int64_t groups = 1);

// Glorot: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)), or
// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0, std::optional<Generator> generator = std::nullopt);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0, std::optional<Generator> generator = std::nullopt);

// He: std = calculate_gain(nonlinearity, a) / sqrt(fan), fan chosen by mode;
// uniform on [-sqrt(3) std, sqrt(3) std] or N(0, std^2). A tensor with a zero
// dimension is left as it is.
Tensor kaiming_uniform_(Tensor tensor, double a = 0, const FanModeType& mode = kFanIn,
                        const NonlinearityType& nonlinearity = kLeakyReLU,
                        std::optional<Generator> generator = std::nullopt);
Tensor kaiming_normal_(Tensor tensor, double a = 0, const FanModeType& mode = kFanIn,
                       const NonlinearityType& nonlinearity = kLeakyReLU,
                       std::optional<Generator> generator = std::nullopt);

// A (semi-)orthogonal matrix times gain: the Q of the QR factorization of a
// standard normal matrix, with Q's columns signed so R's diagonal is positive
// (which makes Q Haar-distributed). Dims after the first are flattened.
Tensor orthogonal_(Tensor tensor, double gain = 1.0, std::optional<Generator> generator = std::nullopt);

// N(0, std^2) with ceil(sparsity * rows) entries of each column set to zero
// (2-D tensors only).
Tensor sparse_(Tensor tensor, double sparsity, double std = 0.01, std::optional<Generator> generator = std::nullopt);

}  // namespace gradiens::nn::init

namespace gradiens {
// libtorch spells these torch::kReLU, torch::kTanh, torch::kFanIn, ... (torch::kLinear
// is the mode tag of nn/functional/options.h, which converts to Nonlinearity::Linear).
using nn::init::kConv1D;
using nn::init::kConv2D;
using nn::init::kConv3D;
using nn::init::kConvTranspose1D;
using nn::init::kConvTranspose2D;
using nn::init::kConvTranspose3D;
using nn::init::kFanIn;
using nn::init::kFanOut;
using nn::init::kLeakyReLU;
using nn::init::kReLU;
using nn::init::kSELU;
using nn::init::kSigmoid;
using nn::init::kTanh;
}  // namespace gradiens
