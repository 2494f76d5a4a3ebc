// The CPU's softmax kernels (kernels/cpu/softmax.h): stable (the line's max is
// subtracted before exp), the exp vectorized along contiguous lines.
#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu/lines.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vector_math.h"

namespace gradiens::kernels::cpu {

namespace {

// float32 sums accumulate in double: a long line then loses no mass to rounding.
template <class T>
using SoftmaxAcc = std::conditional_t<std::is_same_v<T, float>, double, T>;

// Contiguous x with d not the last dim, viewed as [outer, n, inner]: each
// n x inner block is done with loops running along the contiguous inner dim
// and one vectorized exp over the block, instead of n-strided lines.
template <bool Log, class T>
void softmax_blocks(const T* src, T* dst, int64_t outer, int64_t n, int64_t inner) {
  int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / (4 * n * inner));
  parallel_for(0, outer, grain, [&](int64_t begin, int64_t end) {
    std::vector<T> max(static_cast<size_t>(inner));
    std::vector<SoftmaxAcc<T>> total(static_cast<size_t>(inner));
    for (int64_t block = begin; block < end; ++block) {
      const T* x = src + block * n * inner;
      T* y = dst + block * n * inner;
      std::fill(max.begin(), max.end(), -std::numeric_limits<T>::infinity());
      std::fill(total.begin(), total.end(), 0);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) max[i] = x[j * inner + i] > max[i] ? x[j * inner + i] : max[i];
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) y[j * inner + i] = x[j * inner + i] - max[i];
      unary_math(UnaryMath::Exp, y, y, n * inner);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) total[i] += y[j * inner + i];
      if constexpr (Log) {
        for (int64_t i = 0; i < inner; ++i) total[i] = std::log(total[i]);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i)
            y[j * inner + i] = (x[j * inner + i] - max[i]) - static_cast<T>(total[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) total[i] = 1 / total[i];
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i) y[j * inner + i] *= static_cast<T>(total[i]);
      }
    }
  });
}

// A NaN anywhere in a line makes the whole line NaN, as do +inf and an all -inf
// line (PyTorch's results). The output line holds exp(x - max) until the sum is
// known; along a contiguous line the exp is the vectorized one.
template <bool Log>
void softmax_lines(ScalarType dtype, const void* x, IntArrayRef x_strides, bool x_contiguous, void* y,
                   IntArrayRef y_strides, IntArrayRef sizes, int64_t d) {
  const int64_t n = sizes[d], in_stride = x_strides[d], out_stride = y_strides[d];
  dispatch_floating(dtype, Log ? "log_softmax" : "softmax", [&]<class T>() {
    const T* src = static_cast<const T*>(x);
    T* dst = static_cast<T*>(y);
    int64_t inner = 1;
    for (size_t i = static_cast<size_t>(d) + 1; i < sizes.size(); ++i) inner *= sizes[i];
    if (x_contiguous && inner > 1) {
      int64_t numel = 1;
      for (int64_t s : sizes) numel *= s;
      softmax_blocks<Log>(src, dst, numel / (n * inner), n, inner);
      return;
    }
    const std::array<DimVector, 2> strides{DimVector(x_strides.begin(), x_strides.end()),
                                           DimVector(y_strides.begin(), y_strides.end())};
    for_each_line<2>(sizes, d, strides, 4 * n, [&](const std::array<int64_t, 2>& offsets) {
      const T* xl = src + offsets[0];
      T* yl = dst + offsets[1];
      T max = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < n; ++j) max = xl[j * in_stride] > max ? xl[j * in_stride] : max;
      for (int64_t j = 0; j < n; ++j) yl[j * out_stride] = xl[j * in_stride] - max;
      if (out_stride == 1) unary_math(UnaryMath::Exp, yl, yl, n);
      else
        for (int64_t j = 0; j < n; ++j) yl[j * out_stride] = std::exp(yl[j * out_stride]);
      SoftmaxAcc<T> total = 0;
      for (int64_t j = 0; j < n; ++j) total += yl[j * out_stride];
      if constexpr (Log) {
        T log_total = static_cast<T>(std::log(total));
        for (int64_t j = 0; j < n; ++j) yl[j * out_stride] = (xl[j * in_stride] - max) - log_total;
      } else {
        T inverse = static_cast<T>(1 / total);
        for (int64_t j = 0; j < n; ++j) yl[j * out_stride] *= inverse;
      }
    });
  });
}

template <bool Log>
void softmax_backward_lines(ScalarType dtype, const void* g, IntArrayRef g_strides, const void* y,
                            IntArrayRef y_strides, void* out, IntArrayRef out_strides, IntArrayRef sizes, int64_t d) {
  const int64_t n = sizes[d], gs = g_strides[d], ys = y_strides[d], os = out_strides[d];
  dispatch_floating(dtype, Log ? "log_softmax_backward" : "softmax_backward", [&]<class T>() {
    const T* gp = static_cast<const T*>(g);
    const T* yp = static_cast<const T*>(y);
    T* op = static_cast<T*>(out);
    const std::array<DimVector, 3> strides{DimVector(g_strides.begin(), g_strides.end()),
                                           DimVector(y_strides.begin(), y_strides.end()),
                                           DimVector(out_strides.begin(), out_strides.end())};
    for_each_line<3>(sizes, d, strides, 3 * n, [&](const std::array<int64_t, 3>& offsets) {
      const T* gl = gp + offsets[0];
      const T* yl = yp + offsets[1];
      T* ol = op + offsets[2];
      SoftmaxAcc<T> total = 0;
      if constexpr (Log) {
        for (int64_t j = 0; j < n; ++j) total += gl[j * gs];
        for (int64_t j = 0; j < n; ++j) ol[j * os] = gl[j * gs] - std::exp(yl[j * ys]) * static_cast<T>(total);
      } else {
        for (int64_t j = 0; j < n; ++j) total += static_cast<SoftmaxAcc<T>>(gl[j * gs]) * yl[j * ys];
        for (int64_t j = 0; j < n; ++j) ol[j * os] = yl[j * ys] * (gl[j * gs] - static_cast<T>(total));
      }
    });
  });
}

}  // namespace

void softmax(bool log, ScalarType dtype, const void* x, IntArrayRef x_strides, bool x_contiguous, void* y,
             IntArrayRef y_strides, IntArrayRef sizes, int64_t dim) {
  if (log) softmax_lines<true>(dtype, x, x_strides, x_contiguous, y, y_strides, sizes, dim);
  else softmax_lines<false>(dtype, x, x_strides, x_contiguous, y, y_strides, sizes, dim);
}

void softmax_backward(bool log, ScalarType dtype, const void* g, IntArrayRef g_strides, const void* y,
                      IntArrayRef y_strides, void* out, IntArrayRef out_strides, IntArrayRef sizes, int64_t dim) {
  if (log) softmax_backward_lines<true>(dtype, g, g_strides, y, y_strides, out, out_strides, sizes, dim);
  else softmax_backward_lines<false>(dtype, g, g_strides, y, y_strides, out, out_strides, sizes, dim);
}

}  // namespace gradiens::kernels::cpu
