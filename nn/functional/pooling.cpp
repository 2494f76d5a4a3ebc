// The pooling functionals: options unpacked onto the engine's pooling ops;
// lp_pool and max_unpool as composites (pow, avg_pool; scatter).
#include "nn/functional/pooling.h"

#include <fmt/format.h>

#include <tuple>

#include "engine/convolution.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"

namespace gradiens::nn {

namespace {

// Adaptive output sizes with nullopt (keep the input's size) resolved.
template <size_t D>
std::vector<int64_t> resolved(const ExpandingArrayWithOptional<D>& size, const Tensor& input) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < D; ++d) {
    const int64_t from_end = static_cast<int64_t>(D - d);
    out.push_back(size[d] ? *size[d] : (input.dim() >= from_end ? input.size(input.dim() - from_end) : 1));
  }
  return out;
}

}  // namespace

namespace detail {

template <size_t D>
std::vector<int64_t> unpool_output_size(const Tensor& input, const ExpandingArray<D>& kernel_size,
                                        const ExpandingArray<D>& stride, const ExpandingArray<D>& padding,
                                        const std::optional<std::vector<int64_t>>& output_size) {
  const int64_t dims = static_cast<int64_t>(D);
  GD_CHECK(input.dim() >= dims, fmt::format("max_unpool{}d: expected an input with at least {} dims, but got {}", D,
                                            dims, shape_to_string(input.sizes())));
  std::vector<int64_t> defaults;
  for (size_t d = 0; d < D; ++d)
    defaults.push_back((input.size(input.dim() - dims + static_cast<int64_t>(d)) - 1) * stride[d] + kernel_size[d] -
                       2 * padding[d]);
  if (!output_size) return defaults;
  std::vector<int64_t> wanted = *output_size;
  if (wanted.size() == D + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
  GD_CHECK(wanted.size() == D, fmt::format("output_size should be a sequence containing {} or {} elements, but it has "
                                           "a length of '{}'",
                                           D, D + 2, output_size->size()));
  for (size_t d = 0; d < D; ++d) {
    const int64_t min_size = defaults[d] - stride[d], max_size = defaults[d] + stride[d];
    GD_CHECK(min_size < wanted[d] && wanted[d] < max_size,
             fmt::format("invalid output_size \"{}\" (dim {} must be between {} and {})", shape_to_string(wanted), d,
                         min_size, max_size));
  }
  return wanted;
}

template std::vector<int64_t> unpool_output_size<1>(const Tensor&, const ExpandingArray<1>&, const ExpandingArray<1>&,
                                                    const ExpandingArray<1>&, const std::optional<std::vector<int64_t>>&);
template std::vector<int64_t> unpool_output_size<2>(const Tensor&, const ExpandingArray<2>&, const ExpandingArray<2>&,
                                                    const ExpandingArray<2>&, const std::optional<std::vector<int64_t>>&);
template std::vector<int64_t> unpool_output_size<3>(const Tensor&, const ExpandingArray<3>&, const ExpandingArray<3>&,
                                                    const ExpandingArray<3>&, const std::optional<std::vector<int64_t>>&);

}  // namespace detail

namespace functional {

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ::gradiens::max_pool1d(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ::gradiens::max_pool2d(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return ::gradiens::max_pool3d(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ::gradiens::max_pool1d_with_indices(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ::gradiens::max_pool2d_with_indices(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return ::gradiens::max_pool3d_with_indices(input, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  return ::gradiens::avg_pool1d(input, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_);
}
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return ::gradiens::avg_pool2d(input, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_,
                                o.divisor_override_);
}
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  return ::gradiens::avg_pool3d(input, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_,
                                o.divisor_override_);
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  return ::gradiens::adaptive_max_pool1d(input, o.output_size_);
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& o) {
  return ::gradiens::adaptive_max_pool2d(input, resolved<2>(o.output_size_, input));
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  return ::gradiens::adaptive_max_pool3d(input, resolved<3>(o.output_size_, input));
}
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, o));
}
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, o));
}

Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return ::gradiens::adaptive_avg_pool1d(input, o.output_size_);
}
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return ::gradiens::adaptive_avg_pool2d(input, resolved<2>(o.output_size_, input));
}
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  return ::gradiens::adaptive_avg_pool3d(input, resolved<3>(o.output_size_, input));
}

namespace {
// PyTorch's lp_pool: (sign(s) relu(|s|)) * window size, to the 1/p, with s the mean of x^p.
Tensor lp_finish(const Tensor& mean, double norm_type, int64_t window) {
  return (mean.sign() * mean.abs().relu()).mul(static_cast<double>(window)).pow(1.0 / norm_type);
}
}  // namespace

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  const Tensor mean = ::gradiens::avg_pool1d(input.pow(o.norm_type_), o.kernel_size_, o.stride_, 0, o.ceil_mode_);
  return lp_finish(mean, o.norm_type_, o.kernel_size_[0]);
}
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  const Tensor mean = ::gradiens::avg_pool2d(input.pow(o.norm_type_), o.kernel_size_, o.stride_, {0, 0}, o.ceil_mode_);
  return lp_finish(mean, o.norm_type_, o.kernel_size_[0] * o.kernel_size_[1]);
}

namespace {

// PyTorch's generate_intervals: the window starts along one dim for one sample
// u, in the input's precision T.
template <class T>
std::vector<int64_t> fractional_starts(T u, int64_t in, int64_t out, int64_t pool) {
  std::vector<int64_t> starts(static_cast<size_t>(out), 0);
  if (out > 1) {
    const T alpha = static_cast<T>(in - pool) / static_cast<T>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i)
      starts[static_cast<size_t>(i)] =
          static_cast<int64_t>(static_cast<int>((static_cast<T>(i) + u) * alpha) - static_cast<int>(u * alpha));
  }
  if (out > 0) starts[static_cast<size_t>(out - 1)] = in - pool;
  return starts;
}

// The max over windows [start, start + pool) along dim `dim` of x ([P, *spatial],
// P planes, each with its own starts); the values and the positions along `dim`.
std::tuple<Tensor, Tensor> window_max(const Tensor& x, int64_t dim, const std::vector<std::vector<int64_t>>& starts,
                                      int64_t pool) {
  const Tensor moved = x.transpose(dim, -1);  // [P, ..., size]
  const int64_t planes = x.size(0), out = static_cast<int64_t>(starts[0].size());
  std::vector<int64_t> taps;
  for (const std::vector<int64_t>& plane : starts)
    for (int64_t s : plane)
      for (int64_t j = 0; j < pool; ++j) taps.push_back(s + j);
  DimVector index_shape(static_cast<size_t>(x.dim()), 1);
  index_shape[0] = planes;
  index_shape.back() = out * pool;
  DimVector expanded = moved.sizes().dims();
  expanded.back() = out * pool;
  const Tensor index =
      tensor(taps, TensorOptions().dtype(kInt64).device(x.device())).view(index_shape).expand(expanded).contiguous();
  DimVector windows = expanded;
  windows.back() = out;
  windows.push_back(pool);
  auto [values, slot] = moved.gather(-1, index).reshape(windows).max(-1);
  const Tensor where = index.reshape(windows).gather(-1, slot.unsqueeze(-1)).squeeze(-1);
  return {values.transpose(dim, -1), where.transpose(dim, -1)};
}

template <size_t D>
std::tuple<Tensor, Tensor> fractional_max_pool_nd(const Tensor& input, const FractionalMaxPoolOptions<D>& o) {
  const int64_t dims = static_cast<int64_t>(D);
  const std::string op = fmt::format("fractional_max_pool{}d", D);
  GD_CHECK(o.output_size_ || o.output_ratio_,
           fmt::format("FractionalMaxPool{}d requires specifying either an output size, or a pooling ratio", D));
  GD_CHECK(!(o.output_size_ && o.output_ratio_), "only one of output_size and output_ratio may be specified");
  GD_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2,
           fmt::format("{}(): Expected {}D or {}D tensor, but got: {}", op, dims + 1, dims + 2,
                       shape_to_string(input.sizes())));
  const bool batched = input.dim() == dims + 2;
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), planes = n * c;
  static const char* const names[3][3] = {{"width"}, {"height", "width"}, {"time", "height", "width"}};
  std::vector<int64_t> in, out, pool;
  for (size_t d = 0; d < D; ++d) {
    in.push_back(x.size(2 + static_cast<int64_t>(d)));
    pool.push_back(o.kernel_size_[d]);
    if (o.output_size_) {
      out.push_back((*o.output_size_)[d]);
    } else {
      const double ratio = (*o.output_ratio_)[d];
      GD_CHECK(ratio > 0 && ratio < 1, fmt::format("output_ratio must be between 0 and 1 (got {})", ratio));
      out.push_back(static_cast<int64_t>(static_cast<double>(in.back()) * ratio));
    }
    GD_CHECK(out.back() + pool.back() - 1 < in.back(),
             fmt::format("{}(): pool {} {} too large relative to input {} {}", D == 3 ? op + "_out" : op,
                         names[D - 1][d], pool.back(), names[D - 1][d], in.back()));
  }
  Tensor samples = o._random_samples_;
  if (!samples.defined()) samples = rand({n, c, dims}, x.options());
  GD_CHECK(samples.dim() == 3 && samples.size(0) == n && samples.size(1) == c && samples.size(2) == dims,
           fmt::format("{}: expected _random_samples of size [{}, {}, {}], but got {}", op, n, c, dims,
                       shape_to_string(samples.sizes())));
  const Tensor u = samples.detach().to(kFloat64).cpu().contiguous();  // read on the host, a GPU tensor too
  const double* sample = u.cpu_data_ptr<double>();
  // Which sample drives which dim: PyTorch's 2-D kernel takes (width, height), its 3-D one (time, height, width).
  auto sample_of = [&](int64_t plane, size_t d) {
    const size_t slot = D == 2 ? 1 - d : d;
    return sample[static_cast<size_t>(plane * dims) + slot];
  };
  // The windows are boxes, so the max is taken one dim at a time, the last first.
  DimVector flat = x.sizes().dims();
  flat.erase(flat.begin());
  flat[0] = planes;
  Tensor values = x.reshape(flat);
  std::vector<Tensor> position(D);
  for (size_t i = 0; i < D; ++i) {
    const size_t d = D - 1 - i;
    std::vector<std::vector<int64_t>> starts;
    for (int64_t plane = 0; plane < planes; ++plane)
      starts.push_back(x.dtype() == kFloat64
                           ? fractional_starts<double>(sample_of(plane, d), in[d], out[d], pool[d])
                           : fractional_starts<float>(static_cast<float>(sample_of(plane, d)), in[d], out[d], pool[d]));
    std::tie(values, position[d]) = window_max(values, static_cast<int64_t>(d) + 1, starts, pool[d]);
  }
  // position[d] is the dim-d position of each maximum over the grid pooled in
  // dims >= d (earlier dims still at input size): follow the first dim's
  // choice into the later ones, as adaptive_max_pool3d does.
  Tensor index;
  if constexpr (D == 2) {
    const Tensor rows = position[0];  // [P, OH, OW]
    index = rows * in[1] + position[1].gather(1, rows);
  } else {
    const Tensor times = position[0];                                   // [P, OT, OH, OW]
    const Tensor rows = times * in[1] + position[1].gather(1, times);  // t H + h
    const Tensor columns = position[2]
                               .reshape({planes, in[0] * in[1], out[2]})
                               .gather(1, rows.reshape({planes, out[0] * out[1], out[2]}))
                               .reshape(rows.sizes());
    index = rows * in[2] + columns;
  }
  DimVector shape = x.sizes().dims();
  for (size_t d = 0; d < D; ++d) shape[2 + d] = out[d];
  values = values.reshape(shape);
  index = index.reshape(shape);
  return {batched ? values : values.squeeze(0), batched ? index : index.squeeze(0)};
}

}  // namespace

namespace {

template <size_t D>
Tensor max_unpool_nd(const Tensor& input, const Tensor& indices, const MaxUnpoolFuncOptions<D>& o) {
  const int64_t dims = static_cast<int64_t>(D);
  // PyTorch unpools 1-D as 2-D (its message names the 2-D input).
  const int64_t shown = D == 1 ? 2 : dims;
  GD_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2,
           fmt::format("Input to max_unpooling{}d should be a {}d or {}d Tensor, but got a tensor with {} dimensions.",
                       shown, shown + 1, shown + 2, input.dim() + (D == 1 ? 1 : 0)));
  GD_CHECK(indices.dtype() == kInt64,
           fmt::format("elements in indices should be type int64 but got: {}", c10_type_name(indices.dtype())));
  GD_CHECK(input.sizes() == indices.sizes(),
           fmt::format("Expected shape of indices to be same as that of the input tensor ({}) but got indices tensor "
                       "with shape: {}",
                       shape_to_string(input.sizes()), shape_to_string(indices.sizes())));
  const std::vector<int64_t> out =
      detail::unpool_output_size<D>(input, o.kernel_size_, o.stride_, o.padding_, o.output_size_);
  int64_t plane = 1;
  for (int64_t s : out) plane *= s;
  const Tensor flat_indices = indices.flatten(-dims);
  if (flat_indices.numel() > 0) {
    const int64_t lowest = flat_indices.min().item<int64_t>(), highest = flat_indices.max().item<int64_t>();
    const int64_t bad = lowest < 0 ? lowest : highest;
    if (lowest < 0 || highest >= plane) {
      std::string volume;
      for (size_t d = 0; d < D; ++d) {
      if (d) volume += "x";
      volume += std::to_string(out[d]);
    }
      if (D == 1) volume += "x1";  // PyTorch unpools 1-D as 2-D with a width of 1
      throw Error(fmt::format("Found an invalid max index: {} (output volumes are of size {}", bad, volume));
    }
  }
  DimVector flat_shape = flat_indices.sizes().dims();
  flat_shape.back() = plane;
  DimVector shape = input.sizes().dims();
  for (size_t d = 0; d < D; ++d) shape[shape.size() - D + d] = out[d];
  return zeros(flat_shape, input.options()).scatter(-1, flat_indices, input.flatten(-dims)).view(shape);
}

}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& options) {
  return fractional_max_pool_nd<2>(input, options);
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& options) {
  return fractional_max_pool_nd<3>(input, options);
}
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return std::get<0>(fractional_max_pool_nd<2>(input, options));
}
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return std::get<0>(fractional_max_pool_nd<3>(input, options));
}

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options) {
  return max_unpool_nd<1>(input, indices, options);
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options) {
  return max_unpool_nd<2>(input, indices, options);
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options) {
  return max_unpool_nd<3>(input, indices, options);
}

}  // namespace functional

}  // namespace gradiens::nn
