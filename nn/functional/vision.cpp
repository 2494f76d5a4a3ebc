// affine_grid and grid_sample as composites of linspace, matmul, gather and
// arithmetic (PyTorch's affine_grid_generator and grid_sampler_2d formulas).
#include "nn/functional/vision.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens::nn::functional {

namespace {

// The element type's C++ name, as libtorch prints a dtype in these messages ("int", "long int").
std::string cpp_type_name(ScalarType t) {
  switch (t) {
    case kUInt8: return "unsigned char";
    case kInt32: return "int";
    case kInt64: return "long int";
    case kBool: return "bool";
    default: return c10_type_name(t);
  }
}

// n points from -1 to 1; without align_corners, scaled by (n - 1) / n to the pixel centers.
Tensor linspace_from_neg_one(int64_t n, bool align_corners, const TensorOptions& options) {
  if (n <= 1) return zeros({1}, options);
  Tensor points = linspace(-1.0, 1.0, n, options);
  if (!align_corners) points = points * (static_cast<double>(n - 1) / static_cast<double>(n));
  return points;
}

// Pixel coordinates of normalized ones along a dim of `size` pixels.
Tensor unnormalize(const Tensor& coord, int64_t size, bool align_corners) {
  if (align_corners) return (coord + 1) * (static_cast<double>(size - 1) / 2.0);
  return ((coord + 1) * static_cast<double>(size) - 1) / 2.0;
}

// PyTorch's reflect_coordinates: coord reflected into [twice_low / 2, twice_high / 2].
Tensor reflect(const Tensor& coord, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return zeros_like(coord);
  const double low = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  Tensor in = abs(coord - low);
  Tensor flips;
  {
    NoGradGuard no_grad;
    flips = floor(in / span);
  }
  Tensor extra = in - flips * span;
  Tensor even = eq(flips - floor(flips / 2) * 2, 0);
  return where(even, extra + low, span - extra + low);
}

// The source pixel coordinate of each grid coordinate, after the padding mode.
Tensor source_index(const Tensor& coord, int64_t size, const std::string& padding_mode, bool align_corners) {
  Tensor index = unnormalize(coord, size, align_corners);
  if (padding_mode == "border") return clamp(index, 0, size - 1);
  if (padding_mode == "reflection") {
    index = align_corners ? reflect(index, 0, 2 * (size - 1)) : reflect(index, -1, 2 * size - 1);
    return clamp(index, 0, size - 1);
  }
  return index;
}

// input [N, C, H * W] read at the integer pixels (x, y) [N, P]; points outside read 0.
Tensor read_pixels(const Tensor& flat, const Tensor& x, const Tensor& y, int64_t height, int64_t width) {
  Tensor inside = logical_and(logical_and(ge(x, 0), le(x, width - 1)), logical_and(ge(y, 0), le(y, height - 1)));
  Tensor index = (clamp(y, 0, height - 1) * width + clamp(x, 0, width - 1)).to(kInt64);
  Tensor values = flat.gather(2, index.unsqueeze(1).expand({flat.size(0), flat.size(1), index.size(1)}));
  return values * inside.unsqueeze(1).to(flat.dtype());
}

}  // namespace

Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners) {
  GD_CHECK(theta.is_floating_point(),
           "Expected theta to have floating point type, but got " + cpp_type_name(theta.dtype()));
  const std::string size_text = fmt::format("[{}]", fmt::join(size, ", "));
  const std::string theta_text = fmt::format("[{}]", fmt::join(theta.sizes().vec(), ", "));
  if (size.size() == 4) {
    GD_CHECK(theta.dim() == 3 && theta.size(-2) == 2 && theta.size(-1) == 3,
             fmt::format("Expected a batch of 2D affine matrices of shape Nx2x3 for size {}. Got {}.", size_text,
                         theta_text));
  } else if (size.size() == 5) {
    GD_CHECK(theta.dim() == 3 && theta.size(-2) == 3 && theta.size(-1) == 4,
             fmt::format("Expected a batch of 3D affine matrices of shape Nx3x4 for size {}. Got {}.", size_text,
                         theta_text));
  } else {
    throw Error("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size " +
                size_text);
  }
  GD_CHECK(*std::min_element(size.begin(), size.end()) > 0,
           "Expected non-zero, positive output size. Got " + size_text);
  const TensorOptions options = theta.options();
  const int64_t n = size[0];
  if (size.size() == 4) {
    const int64_t h = size[2], w = size[3];
    Tensor x = linspace_from_neg_one(w, align_corners, options).reshape({1, -1}).expand({h, w});
    Tensor y = linspace_from_neg_one(h, align_corners, options).reshape({-1, 1}).expand({h, w});
    Tensor base = stack({x, y, ones({h, w}, options)}, -1).reshape({1, h * w, 3});
    return base.matmul(theta.transpose(1, 2)).reshape({n, h, w, 2});
  }
  const int64_t d = size[2], h = size[3], w = size[4];
  Tensor x = linspace_from_neg_one(w, align_corners, options).reshape({1, 1, -1}).expand({d, h, w});
  Tensor y = linspace_from_neg_one(h, align_corners, options).reshape({1, -1, 1}).expand({d, h, w});
  Tensor z = linspace_from_neg_one(d, align_corners, options).reshape({-1, 1, 1}).expand({d, h, w});
  Tensor base = stack({x, y, z, ones({d, h, w}, options)}, -1).reshape({1, d * h * w, 4});
  return base.matmul(theta.transpose(1, 2)).reshape({n, d, h, w, 3});
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  const std::string& mode = options.mode();
  const std::string& padding_mode = options.padding_mode();
  GD_CHECK(mode == "bilinear" || mode == "nearest",
           fmt::format("nn.functional.grid_sample(): expected mode to be 'bilinear' or 'nearest', but got: '{}'",
                       mode));
  GD_CHECK(padding_mode == "zeros" || padding_mode == "border" || padding_mode == "reflection",
           fmt::format("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
                       "but got: '{}'",
                       padding_mode));
  GD_CHECK(input.dim() == 4, fmt::format("grid_sample: only 4-D input [N, C, H, W] is supported, got {}-D",
                                         input.dim()));
  GD_CHECK(grid.dim() == 4 && grid.size(-1) == 2,
           fmt::format("grid_sampler(): expected grid to have size 2 in last dimension, but got grid with sizes [{}]",
                       fmt::join(grid.sizes().vec(), ", ")));
  GD_CHECK(input.size(0) == grid.size(0),
           fmt::format("grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                       "[{}] and grid with sizes [{}]",
                       fmt::join(input.sizes().vec(), ", "), fmt::join(grid.sizes().vec(), ", ")));
  const bool align_corners = options.align_corners().value_or(false);
  const int64_t n = input.size(0), c = input.size(1), height = input.size(2), width = input.size(3);
  const int64_t out_h = grid.size(1), out_w = grid.size(2);
  const Tensor flat = input.reshape({n, c, height * width});
  const Tensor points = grid.reshape({n, out_h * out_w, 2});
  Tensor x = source_index(points.select(2, 0), width, padding_mode, align_corners);
  Tensor y = source_index(points.select(2, 1), height, padding_mode, align_corners);
  Tensor out;
  if (mode == "nearest") {
    Tensor xn, yn;
    {
      NoGradGuard no_grad;
      xn = round(x);
      yn = round(y);
    }
    out = read_pixels(flat, xn, yn, height, width);
  } else {
    Tensor x0, y0;
    {
      NoGradGuard no_grad;
      x0 = floor(x);
      y0 = floor(y);
    }
    Tensor wx1 = (x - x0).unsqueeze(1), wy1 = (y - y0).unsqueeze(1);
    Tensor wx0 = 1 - wx1, wy0 = 1 - wy1;
    out = read_pixels(flat, x0, y0, height, width) * (wx0 * wy0) +
          read_pixels(flat, x0 + 1, y0, height, width) * (wx1 * wy0) +
          read_pixels(flat, x0, y0 + 1, height, width) * (wx0 * wy1) +
          read_pixels(flat, x0 + 1, y0 + 1, height, width) * (wx1 * wy1);
  }
  return out.reshape({n, c, out_h, out_w});
}

}  // namespace gradiens::nn::functional
