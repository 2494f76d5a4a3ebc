// F::pixel_shuffle and F::pixel_unshuffle with libtorch's FuncOptions, and the
// PixelShuffle and PixelUnshuffle layers.
#pragma once

#include <iosfwd>
#include <string>

#include "engine/tensor.h"
#include "nn/functional/options.h"
#include "nn/module.h"

namespace gradiens::nn {

struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}
  GRADIENS_ARG(int64_t, upscale_factor);
};
struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}
  GRADIENS_ARG(int64_t, downscale_factor);
};

namespace functional {
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
// [*, C r^2, H, W] -> [*, C, H r, W r]: channel c r^2 + i r + j goes to pixel (h r + i, w r + j).
Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
// Its inverse: [*, C, H r, W r] -> [*, C r^2, H, W].
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);
}  // namespace functional

class PixelShuffleImpl : public Module {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  PixelShuffleOptions options;
};
GRADIENS_MODULE(PixelShuffle);

class PixelUnshuffleImpl : public Module {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  PixelUnshuffleOptions options;
};
GRADIENS_MODULE(PixelUnshuffle);

}  // namespace gradiens::nn
