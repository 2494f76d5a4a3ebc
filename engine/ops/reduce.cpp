// Sum-family reductions: sum (the primitive), sum_to (what the engine uses to
// undo broadcasting), mean, and the shared reduction helpers.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/reduce_util.h"
#include "kernels/reduce.h"

namespace gradiens {

DimVector reduction_dims(const Tensor& x, IntArrayRef dims, std::string_view op) {
  DimVector out;
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, x.dim(), op);
    if (x.dim() == 0) continue;
    GD_CHECK(std::find(out.begin(), out.end(), w) == out.end(),
             fmt::format("{}: dim {} appears multiple times in the list of dims", op, w));
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

DimVector reduced_shape(IntArrayRef sizes, const DimVector& dims, bool keepdim) {
  DimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end();
    if (!reduced) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

kernels::ReductionLayout reduction_layout(const Tensor& x, const DimVector& dims) {
  kernels::ReductionLayout layout;
  for (int64_t d = 0; d < x.dim(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    int64_t size = x.sizes()[d], stride = x.strides()[d];
    if (!reduced) {
      layout.kept_sizes.push_back(size);
      layout.kept_strides.push_back(stride);
    } else if (size != 1) {
      if (!layout.reduced_sizes.empty() && layout.reduced_strides.back() == size * stride) {
        layout.reduced_sizes.back() *= size;
        layout.reduced_strides.back() = stride;
      } else {
        layout.reduced_sizes.push_back(size);
        layout.reduced_strides.push_back(stride);
      }
    }
  }
  return layout;
}

int64_t reduced_count(const Tensor& x, const DimVector& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.sizes()[d];
  return n;
}

Tensor unsqueeze_reduced(const Tensor& reduced, IntArrayRef input_sizes, const DimVector& dims, bool keepdim) {
  if (keepdim) return reduced;
  DimVector shape(input_sizes.begin(), input_sizes.end());
  for (int64_t d : dims) shape[d] = 1;
  return reduced.reshape(shape);
}

namespace {

struct Sum {
  static constexpr std::string_view name = "SumBackward1";
  static Tensor forward(Ctx& ctx, const Tensor& x, DimVector dims, bool keepdim, ScalarType out_dtype) {
    ctx.shape = x.sizes().dims();
    ctx.ints = dims;
    ctx.real = keepdim ? 1 : 0;
    Tensor out = empty(reduced_shape(x.sizes(), dims, keepdim), TensorOptions().dtype(out_dtype).device(x.device()));
    auto layout = reduction_layout(x, dims);
    kernels::reduce(kernels::Reduce::Sum, x.dtype(), x.data_ptr(), layout, out_dtype, out.data_ptr(),
                    cuda_seam::device_of(out), "sum");
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {unsqueeze_reduced(g, ctx.shape, ctx.ints, ctx.real != 0).expand(ctx.shape)};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, DimVector dims, bool keepdim,
                    ScalarType out_dtype) {
    return apply<Sum>(t[0], dims, keepdim, out_dtype);
  }
};

ScalarType sum_dtype(const Tensor& x, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(x.dtype(), true) ? kInt64 : x.dtype();
}

}  // namespace

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  return apply<Sum>(x, reduction_dims(x, dims, "sum"), keepdim, sum_dtype(x, dtype));
}
Tensor sum(const Tensor& x, std::optional<ScalarType> dtype) { return sum(x, {}, false, dtype); }

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(x.dtype());
  GD_CHECK(is_floating_point(dt),
           fmt::format("mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                       "dtype. Got: {}",
                       dtype_name(dt)));
  DimVector d = reduction_dims(x, dims, "mean");
  int64_t count = reduced_count(x, d);
  // float16/bfloat16: the sum and the division in float32, rounded once at the end.
  if (is_reduced_floating_point(dt)) return (sum(x, d, keepdim, kFloat32) / static_cast<double>(count)).to(dt);
  return sum(x, d, keepdim, dt) / static_cast<double>(count);
}
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype) { return mean(x, {}, false, dtype); }

Tensor sum_to(const Tensor& x, IntArrayRef sizes) {
  if (x.sizes() == sizes) return x;
  int64_t lead = x.dim() - static_cast<int64_t>(sizes.size());
  GD_CHECK(lead >= 0, fmt::format("sum_to: cannot sum {} to {}", shape_to_string(x.sizes()), shape_to_string(sizes)));
  DimVector dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t d = lead; d < x.dim(); ++d) {
    int64_t want = sizes[d - lead];
    if (want == 1 && x.sizes()[d] != 1) dims.push_back(d);
    else GD_CHECK(want == x.sizes()[d], fmt::format("sum_to: cannot sum {} to {}", shape_to_string(x.sizes()),
                                                     shape_to_string(sizes)));
  }
  Tensor r = dims.empty() ? x : sum(x, dims, true);
  return r.dim() == static_cast<int64_t>(sizes.size()) ? r : r.view(sizes);
}

// all/any count the nonzero elements (no gradient, bool result).
Tensor all(const Tensor& x) { return eq(sum(ne(x, 0), kInt64), x.numel()); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, x.dim(), "all");
  return eq(sum(ne(x, 0), {d}, keepdim, kInt64), x.dim() == 0 ? 1 : x.sizes()[d]);
}
Tensor any(const Tensor& x) { return gt(sum(ne(x, 0), kInt64), 0); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return gt(sum(ne(x, 0), {wrap_dim(dim, x.dim(), "any")}, keepdim, kInt64), 0);
}
Tensor Tensor::all() const { return gradiens::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return gradiens::all(*this, dim, keepdim); }
Tensor Tensor::any() const { return gradiens::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return gradiens::any(*this, dim, keepdim); }

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return gradiens::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return gradiens::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return gradiens::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return gradiens::mean(*this, dims, keepdim, dtype);
}

}  // namespace gradiens
