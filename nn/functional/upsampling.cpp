// F::interpolate one spatial dim at a time: each output position's source
// indices and weights computed as PyTorch's upsample kernels compute them
// (in double, with the floors PyTorch takes in float taken in float), applied
// with index_select.
#include "nn/functional/upsampling.h"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "engine/convolution.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"

namespace gradiens::nn {

namespace functional {

namespace {

Tensor index_tensor(const std::vector<int64_t>& values, const Tensor& like) {
  return tensor(values, TensorOptions().dtype(kInt64).device(like.device()));
}

// Weights along `dim` of x, shaped to broadcast against it.
Tensor weight_tensor(const std::vector<double>& values, const Tensor& x, int64_t dim) {
  DimVector shape(static_cast<size_t>(x.dim()), 1);
  shape[static_cast<size_t>(dim)] = static_cast<int64_t>(values.size());
  return tensor(values, TensorOptions().dtype(x.dtype()).device(x.device())).view(shape);
}

// PyTorch's area_pixel_compute_scale: the step in input units per output unit.
double pixel_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
}

// PyTorch's area_pixel_compute_source_index.
double source_index(double scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<double>(dst);
  const double src = scale * (static_cast<double>(dst) + 0.5) - 0.5;
  return !cubic && src < 0 ? 0.0 : src;
}

Tensor nearest_dim(const Tensor& x, int64_t dim, int64_t out, std::optional<double> scale) {
  const int64_t in = x.size(dim);
  // PyTorch's HelperInterpNearest: the scale in double, the floor taken in float.
  const double step = pixel_scale(in, out, false, scale);
  std::vector<int64_t> src;
  for (int64_t i = 0; i < out; ++i)
    src.push_back(std::min(static_cast<int64_t>(std::floor(static_cast<float>(step * static_cast<double>(i)))), in - 1));
  return x.index_select(dim, index_tensor(src, x));
}

Tensor linear_dim(const Tensor& x, int64_t dim, int64_t out, bool align_corners, std::optional<double> scale) {
  const int64_t in = x.size(dim);
  if (in == out) return x;
  const double step = pixel_scale(in, out, align_corners, scale);
  std::vector<int64_t> i0, i1;
  std::vector<double> w0, w1;
  for (int64_t i = 0; i < out; ++i) {
    const double real = source_index(step, i, align_corners, false);
    const int64_t lo = static_cast<int64_t>(real);
    i0.push_back(lo);
    i1.push_back(lo + (lo < in - 1 ? 1 : 0));
    const double lambda = std::min(std::max(real - static_cast<double>(lo), 0.0), 1.0);
    w1.push_back(lambda);
    w0.push_back(1.0 - lambda);
  }
  return x.index_select(dim, index_tensor(i0, x)) * weight_tensor(w0, x, dim) +
         x.index_select(dim, index_tensor(i1, x)) * weight_tensor(w1, x, dim);
}

// Keys' cubic convolution with A = -0.75 (PyTorch's get_cubic_upsample_coefficients).
std::array<double, 4> cubic_coefficients(double t) {
  const double a = -0.75;
  auto near = [a](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [a](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  return {far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)};
}

Tensor cubic_dim(const Tensor& x, int64_t dim, int64_t out, bool align_corners, std::optional<double> scale) {
  const int64_t in = x.size(dim);
  const double step = pixel_scale(in, out, align_corners, scale);
  std::array<std::vector<int64_t>, 4> taps;
  std::array<std::vector<double>, 4> weights;
  for (int64_t i = 0; i < out; ++i) {
    const double real = source_index(step, i, align_corners, true);
    // guard_index_and_lambda: floorf, as PyTorch's kernel.
    const int64_t base = std::min(static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
    const double t = std::min(std::max(real - static_cast<double>(base), 0.0), 1.0);
    const std::array<double, 4> c = cubic_coefficients(t);
    for (int64_t k = 0; k < 4; ++k) {
      taps[k].push_back(std::min(std::max(base - 1 + k, int64_t{0}), in - 1));
      weights[k].push_back(c[k]);
    }
  }
  Tensor sum;
  for (size_t k = 0; k < 4; ++k) {
    const Tensor term = x.index_select(dim, index_tensor(taps[k], x)) * weight_tensor(weights[k], x, dim);
    sum = sum.defined() ? sum + term : term;
  }
  return sum;
}

std::string python_tuple(const std::vector<double>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    std::string v = fmt::format("{}", values[i]);
    if (v.find_first_of(".en") == std::string::npos) v += ".0";
    {
      if (i) out += ", ";
      out += v;
    }
  }
  return out + (values.size() == 1 ? ",)" : ")");
}

std::string python_tuple(const std::vector<int64_t>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) {
      if (i) out += ", ";
      out += std::to_string(values[i]);
    }
  return out + (values.size() == 1 ? ",)" : ")");
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options) {
  const std::string& mode = options.mode_;
  GD_CHECK(mode == "nearest" || mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear" ||
               mode == "area",
           fmt::format("interpolate: unknown mode '{}'; expected nearest, linear, bilinear, bicubic, trilinear or area",
                       mode));
  const bool interpolating = mode != "nearest" && mode != "area";
  GD_CHECK(interpolating || !options.align_corners_,
           "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
           "trilinear");
  const bool align_corners = options.align_corners_.value_or(false);
  GD_CHECK(input.dim() >= 3 && input.dim() <= 5,
           fmt::format("Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: nearest | "
                       "linear | bilinear | bicubic | trilinear | area | nearest-exact (got {})",
                       input.dim(), mode));
  const int64_t dims = input.dim() - 2;
  const std::vector<int64_t> spatial(input.sizes().begin() + 2, input.sizes().end());
  GD_CHECK(options.size_.has_value() != options.scale_factor_.has_value(),
           options.size_ ? "only one of size or scale_factor should be defined"
                         : "either size or scale_factor should be defined");
  GD_CHECK(!(options.recompute_scale_factor_.value_or(false) && options.size_),
           "recompute_scale_factor is not meaningful with an explicit size.");
  std::vector<int64_t> out;
  std::vector<std::optional<double>> scales(static_cast<size_t>(dims));
  if (options.size_) {
    out = *options.size_;
    if (out.size() == 1) out.assign(static_cast<size_t>(dims), out[0]);
    GD_CHECK(static_cast<int64_t>(out.size()) == dims,
             fmt::format("Input and output must have the same number of spatial dimensions, but got input with "
                         "spatial dimensions of {} and output size of {}. Please provide input tensor in (N, C, d1, "
                         "d2, ...,dK) format and output size in (o1, o2, ...,oK) format.",
                         shape_to_string(spatial), python_tuple(*options.size_)));
  } else {
    std::vector<double> factors = *options.scale_factor_;
    if (factors.size() == 1) factors.assign(static_cast<size_t>(dims), factors[0]);
    GD_CHECK(static_cast<int64_t>(factors.size()) == dims,
             fmt::format("Input and scale_factor must have the same number of spatial dimensions, but got input with "
                         "spatial dimensions of {} and scale_factor of shape {}. Please provide input tensor in (N, "
                         "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.",
                         shape_to_string(spatial), python_tuple(*options.scale_factor_)));
    // "area" always works from the output size (PyTorch recomputes for it).
    const bool recompute = options.recompute_scale_factor_.value_or(false) || mode == "area";
    for (int64_t d = 0; d < dims; ++d) {
      out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(spatial[d]) * factors[d])));
      if (!recompute) scales[d] = factors[d];
    }
  }
  static const char* const needs[] = {"", "3D", "4D", "5D"};
  auto require = [&](const char* name, int64_t want) {
    GD_CHECK(dims == want, fmt::format("Got {}D input, but {} mode needs {} input", input.dim(), name, needs[want]));
  };
  if (mode == "linear") require("linear", 1);
  if (mode == "bilinear") require("bilinear", 2);
  if (mode == "bicubic") require("bicubic", 2);
  if (mode == "trilinear") require("trilinear", 3);
  for (int64_t size : out)
    GD_CHECK(size > 0, fmt::format("Input and output sizes should be greater than 0, but got input ({}) and output "
                                   "({})",
                                   shape_to_string(spatial), shape_to_string(out)));
  if (mode == "area") {
    if (dims == 1) return adaptive_avg_pool1d(input, out);
    if (dims == 2) return adaptive_avg_pool2d(input, out);
    return adaptive_avg_pool3d(input, out);
  }
  Tensor y = input;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t dim = d + 2;
    if (mode == "nearest")
      y = nearest_dim(y, dim, out[d], scales[d]);
    else if (mode == "bicubic")
      y = cubic_dim(y, dim, out[d], align_corners, scales[d]);
    else
      y = linear_dim(y, dim, out[d], align_corners, scales[d]);
  }
  return y.contiguous();
}

}  // namespace functional

Tensor UpsampleImpl::forward(const Tensor& input) {
  return functional::interpolate(input, functional::InterpolateFuncOptions()
                                            .size(options.size_)
                                            .scale_factor(options.scale_factor_)
                                            .mode(options.mode_)
                                            .align_corners(options.align_corners_));
}

std::string UpsampleImpl::extra_repr() const {
  auto one_or_tuple = [](const auto& values, auto format) {
    if (values.size() == 1) return format(values[0]);
    std::string out = "(";
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) out += ", ";
      out += format(values[i]);
    }
    return out + ")";
  };
  std::string out;
  if (options.scale_factor_) {
    out = "scale_factor=" + one_or_tuple(*options.scale_factor_, [](double v) {
            std::string s = fmt::format("{}", v);
            return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
          });
  } else if (options.size_) {
    out = "size=" + one_or_tuple(*options.size_, [](int64_t v) { return std::to_string(v); });
  } else {
    out = "size=None";
  }
  return out + ", mode=" + options.mode_;
}

void UpsampleImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Upsample(";
  if (options.scale_factor_) {
    stream << "scale_factor=[";
    for (size_t i = 0; i < options.scale_factor_->size(); ++i)
      stream << (i ? ", " : "") << fmt::format("{}", (*options.scale_factor_)[i]);
    stream << "]";
  } else if (options.size_) {
    stream << "size=" << IntArrayRef(*options.size_);
  }
  stream << ", mode=" << detail::mode_enum_name(options.mode_) << ")";
}

}  // namespace gradiens::nn
