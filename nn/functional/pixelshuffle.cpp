// pixel_shuffle and pixel_unshuffle as a reshape, a permute and a reshape (any
// derivative order for free), with PyTorch's checks and messages.
#include "nn/functional/pixelshuffle.h"

#include <fmt/format.h>

#include <ostream>

#include "engine/dims.h"

namespace gradiens::nn {

namespace functional {

namespace {
// The leading dims of x (all but the last three), then `tail`.
DimVector with_batch(const Tensor& x, std::initializer_list<int64_t> tail) {
  DimVector out(x.sizes().begin(), x.sizes().end() - 3);
  for (int64_t v : tail) out.push_back(v);
  return out;
}
// 0 .. batch-1, then the batch plus each of `tail`.
DimVector order(int64_t batch, std::initializer_list<int64_t> tail) {
  DimVector out;
  for (int64_t i = 0; i < batch; ++i) out.push_back(i);
  for (int64_t v : tail) out.push_back(batch + v);
  return out;
}
}  // namespace

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options) {
  const int64_t r = options.upscale_factor_;
  GD_CHECK(input.dim() >= 3, fmt::format("pixel_shuffle expects input to have at least 3 dimensions, but got input "
                                         "with {} dimension(s)",
                                         input.dim()));
  GD_CHECK(r > 0, fmt::format("pixel_shuffle expects a positive upscale_factor, but got {}", r));
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  GD_CHECK(c % (r * r) == 0, fmt::format("pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                                         "square of upscale_factor, but input.size(-3)={} is not divisible by {}",
                                         c, r * r));
  const int64_t batch = input.dim() - 3, oc = c / (r * r);
  return input.reshape(with_batch(input, {oc, r, r, h, w}))
      .permute(order(batch, {0, 3, 1, 4, 2}))
      .reshape(with_batch(input, {oc, h * r, w * r}));
}

Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options) {
  const int64_t r = options.downscale_factor_;
  GD_CHECK(input.dim() >= 3, fmt::format("pixel_unshuffle expects input to have at least 3 dimensions, but got input "
                                         "with {} dimension(s)",
                                         input.dim()));
  GD_CHECK(r > 0, fmt::format("pixel_unshuffle expects a positive downscale_factor, but got {}", r));
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  GD_CHECK(h % r == 0, fmt::format("pixel_unshuffle expects height to be divisible by downscale_factor, but "
                                   "input.size(-2)={} is not divisible by {}",
                                   h, r));
  GD_CHECK(w % r == 0, fmt::format("pixel_unshuffle expects width to be divisible by downscale_factor, but "
                                   "input.size(-1)={} is not divisible by {}",
                                   w, r));
  const int64_t batch = input.dim() - 3, oh = h / r, ow = w / r;
  return input.reshape(with_batch(input, {c, oh, r, ow, r}))
      .permute(order(batch, {0, 2, 4, 1, 3}))
      .reshape(with_batch(input, {c * r * r, oh, ow}));
}

}  // namespace functional

Tensor PixelShuffleImpl::forward(const Tensor& input) { return functional::pixel_shuffle(input, options); }
std::string PixelShuffleImpl::extra_repr() const { return fmt::format("upscale_factor={}", options.upscale_factor_); }
void PixelShuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::PixelShuffle(upscale_factor=" << options.upscale_factor_ << ")";
}

Tensor PixelUnshuffleImpl::forward(const Tensor& input) { return functional::pixel_unshuffle(input, options); }
std::string PixelUnshuffleImpl::extra_repr() const {
  return fmt::format("downscale_factor={}", options.downscale_factor_);
}
void PixelUnshuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::PixelUnshuffle(downscale_factor=" << options.downscale_factor_ << ")";
}

}  // namespace gradiens::nn
