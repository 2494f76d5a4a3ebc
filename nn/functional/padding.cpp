// F::pad: constant padding from cat and narrow, the other modes from
// index_select with the source position of every padded position.
#include "nn/functional/padding.h"

#include <fmt/format.h>

#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"

namespace gradiens::nn::functional {

namespace {

// The source position of each padded position along a dim of `size`. Python's
// modulo for circular (wraps negative positions).
std::vector<int64_t> padded_positions(int64_t size, int64_t before, int64_t after, const std::string& mode) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(size + before + after));
  for (int64_t i = -before; i < size + after; ++i) {
    if (i >= 0 && i < size)
      out.push_back(i);
    else if (mode == "reflect")
      out.push_back(i < 0 ? -i : 2 * (size - 1) - i);
    else if (mode == "replicate")
      out.push_back(i < 0 ? 0 : size - 1);
    else
      out.push_back(((i % size) + size) % size);
  }
  return out;
}

// x padded along dim with `value` (a negative amount crops), as constant_pad_nd.
Tensor constant_pad_dim(const Tensor& x, int64_t dim, int64_t before, int64_t after, double value) {
  Tensor out = x;
  const int64_t crop_before = std::max<int64_t>(-before, 0), crop_after = std::max<int64_t>(-after, 0);
  if (crop_before > 0 || crop_after > 0) out = out.narrow(dim, crop_before, out.size(dim) - crop_before - crop_after);
  if (before <= 0 && after <= 0) return out;
  std::vector<Tensor> parts;
  auto filled = [&](int64_t n) {
    DimVector sizes = out.sizes().dims();
    sizes[static_cast<size_t>(dim)] = n;
    return full(sizes, value, out.options());
  };
  if (before > 0) parts.push_back(filled(before));
  parts.push_back(out);
  if (after > 0) parts.push_back(filled(after));
  return cat(parts, dim);
}

}  // namespace

Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  const std::vector<int64_t>& amounts = options.pad_;
  GD_CHECK(amounts.size() % 2 == 0, "Padding length must be divisible by 2");
  const int64_t padded_dims = static_cast<int64_t>(amounts.size() / 2);
  const std::string& mode = options.mode_;
  const int64_t ndim = input.dim();
  if (mode == "constant" || mode == "zeros") {
    GD_CHECK(padded_dims <= ndim, "Padding length too large");
    Tensor out = input;
    for (int64_t k = 0; k < padded_dims; ++k) {
      const int64_t dim = ndim - 1 - k, before = amounts[2 * k], after = amounts[2 * k + 1];
      const int64_t size = input.size(dim) + before + after;
      GD_CHECK(size >= 0, fmt::format("The input size {}, plus negative padding {} and {} resulted in a negative "
                                      "output size, which is invalid. Check dimension {} of your input.",
                                      input.size(dim), before, after, dim));
      out = constant_pad_dim(out, dim, before, after, options.value_);
    }
    return out;
  }
  GD_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular",
           fmt::format("Unrecognised padding mode {}", mode));
  GD_CHECK(options.value_ == 0, fmt::format("Padding mode \"{}\"\" doesn't take in value argument", mode));
  GD_CHECK(padded_dims >= 1 && padded_dims <= 3 && (ndim == padded_dims + 1 || ndim == padded_dims + 2),
           "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  for (int64_t p : amounts) GD_CHECK(p >= 0, "pad: negative padding is only supported in constant mode");
  Tensor out = input;
  for (int64_t k = 0; k < padded_dims; ++k) {
    const int64_t dim = ndim - 1 - k, before = amounts[2 * k], after = amounts[2 * k + 1];
    const int64_t size = input.size(dim);
    if (mode == "reflect") {
      // PyTorch's reflection_pad{1,2,3}d messages: argument #4 is the width, #6
      // the height, #8 the depth; the 2-D one names the input by its dim count.
      GD_CHECK(before < size && after < size,
               fmt::format("Argument #{}: Padding size should be less than the corresponding input dimension, but "
                           "got: padding ({}, {}) at dimension {} of input {}",
                           4 + 2 * k, before, after, dim,
                           padded_dims == 2 ? std::to_string(ndim) : shape_to_string(input.sizes())));
    } else if (mode == "circular") {
      GD_CHECK(before <= size && after <= size, "Padding value causes wrapping around more than once.");
    } else {
      for (int64_t d = ndim - padded_dims - 1; d < ndim; ++d)  // the channels too
        GD_CHECK(input.size(d) > 0,
                 fmt::format("Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero "
                             "dimensions for input, but got: {}",
                             padded_dims + 1, padded_dims + 2, shape_to_string(input.sizes())));
    }
    if (before == 0 && after == 0) continue;
    out = out.index_select(dim, tensor(padded_positions(size, before, after, mode),
                                       TensorOptions().dtype(kInt64).device(input.device())));
  }
  return out;
}

}  // namespace gradiens::nn::functional
