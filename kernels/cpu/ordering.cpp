// The CPU's cumulative loop (kernels/cpu/ordering.h): one line at a time, the
// lines in parallel.
#include "kernels/cpu/ordering.h"

#include <array>
#include <type_traits>

#include "kernels/cpu/lines.h"

namespace gradiens::kernels::cpu {

namespace {

// Integers accumulate in int64 (wrapping through uint64, so overflow is not
// undefined) and floats in double, as PyTorch's CPU kernel does for float32.
template <class T>
using CumulativeAcc = std::conditional_t<is_floating_type_v<T>, double, uint64_t>;

template <bool IsProd>
void cumulative_lines(ScalarType dtype, IntArrayRef sizes, int64_t dim, void* out, IntArrayRef out_strides,
                      const void* in, IntArrayRef in_strides) {
  const int64_t n = sizes[dim], in_stride = in_strides[dim], out_stride = out_strides[dim];
  const std::array<DimVector, 2> strides{in_strides.dims(), out_strides.dims()};
  dispatch_numeric_and_reduced(dtype, IsProd ? "cumprod" : "cumsum", [&]<class T>() {
    const T* src = static_cast<const T*>(in);
    T* dst = static_cast<T*>(out);
    for_each_line<2>(sizes, dim, strides, n, [&](const std::array<int64_t, 2>& offsets) {
      CumulativeAcc<T> acc = IsProd ? 1 : 0;
      for (int64_t j = 0; j < n; ++j) {
        auto v = static_cast<CumulativeAcc<T>>(src[offsets[0] + j * in_stride]);
        if constexpr (IsProd) acc *= v;
        else acc += v;
        dst[offsets[1] + j * out_stride] = static_cast<T>(acc);
      }
    });
  });
}

}  // namespace

void cumulative(bool product, ScalarType dtype, IntArrayRef sizes, int64_t dim, void* out, IntArrayRef out_strides,
                const void* in, IntArrayRef in_strides) {
  if (product) cumulative_lines<true>(dtype, sizes, dim, out, out_strides, in, in_strides);
  else cumulative_lines<false>(dtype, sizes, dim, out, out_strides, in, in_strides);
}

}  // namespace gradiens::kernels::cpu
