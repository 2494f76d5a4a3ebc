// The CPU's line selections (kernels/cpu/sorting.h). The orders are strict and
// total on (value, position): NaN last ascending and first descending, ties by
// position, so std::sort and std::nth_element give what a stable sort would.
#include "kernels/cpu/sorting.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "kernels/cpu/lines.h"

namespace gradiens::kernels::cpu {

namespace {

template <class T>
bool is_nan(T v) {
  if constexpr (is_floating_type_v<T>) return v != v;
  else return false;
}

template <class T>
struct Ascending {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    bool a_nan = is_nan(a.first), b_nan = is_nan(b.first);
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && a.first != b.first) return a.first < b.first;
    return a.second < b.second;
  }
};
template <class T>
struct Descending {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    bool a_nan = is_nan(a.first), b_nan = is_nan(b.first);
    if (a_nan != b_nan) return a_nan;
    if (!a_nan && a.first != b.first) return a.first > b.first;
    return a.second < b.second;
  }
};

}  // namespace

void select_positions(Selection how, ScalarType dtype, IntArrayRef sizes, int64_t dim, int64_t count,
                      bool descending, void* out, IntArrayRef out_strides, const void* in, IntArrayRef in_strides,
                      std::string_view name) {
  const int64_t n = sizes[dim], in_stride = in_strides[dim], out_stride = out_strides[dim];
  const std::array<DimVector, 2> strides{in_strides.dims(), out_strides.dims()};
  dispatch_all(dtype, name, [&]<class T>() {
    const T* src = static_cast<const T*>(in);
    int64_t* dst = static_cast<int64_t*>(out);
    auto run = [&]<class Order>(Order order) {
      // By value: the stores through dst cannot then force reloads of the numbers.
      for_each_line<2>(sizes, dim, strides, 4 * n, [=](const std::array<int64_t, 2>& offsets) {
        std::vector<std::pair<T, int64_t>> line(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) line[j] = {src[offsets[0] + j * in_stride], j};
        if (how == Selection::Sort) std::sort(line.begin(), line.end(), order);
        else if (how == Selection::Partial) std::partial_sort(line.begin(), line.begin() + count, line.end(), order);
        else std::nth_element(line.begin(), line.begin() + (count - 1), line.end(), order);
        if (how == Selection::Nth) dst[offsets[1]] = line[count - 1].second;
        else
          for (int64_t j = 0; j < count; ++j) dst[offsets[1] + j * out_stride] = line[j].second;
      });
    };
    if (descending) run(Descending<T>{});
    else run(Ascending<T>{});
  });
}

void median_positions(ScalarType dtype, IntArrayRef sizes, int64_t dim, void* out, IntArrayRef out_strides,
                      const void* in, IntArrayRef in_strides) {
  const int64_t n = sizes[dim], in_stride = in_strides[dim];
  const std::array<DimVector, 2> strides{in_strides.dims(), out_strides.dims()};
  dispatch_numeric_and_reduced(dtype, "median", [&]<class T>() {
    const T* src = static_cast<const T*>(in);
    int64_t* dst = static_cast<int64_t*>(out);
    for_each_line<2>(sizes, dim, strides, 2 * n, [&](const std::array<int64_t, 2>& offsets) {
      std::vector<std::pair<T, int64_t>> line(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        line[j] = {src[offsets[0] + j * in_stride], j};
        if (is_nan(line[j].first)) {
          dst[offsets[1]] = j;
          return;
        }
      }
      auto middle = line.begin() + (n - 1) / 2;
      std::nth_element(line.begin(), middle, line.end(), Ascending<T>{});
      dst[offsets[1]] = middle->second;
    });
  });
}

}  // namespace gradiens::kernels::cpu
