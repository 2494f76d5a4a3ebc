// The CPU's named reduction kernels (kernels/cpu/reduce_ops.h).
#include "kernels/cpu/reduce_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu/reduce.h"
#include "kernels/math_ops.h"

namespace gradiens::kernels::cpu {

namespace {

// Sums n contiguous values with four accumulators (breaks the add chain).
template <class Acc, class T>
Acc sum_contiguous(const T* p, int64_t n) {
  Acc a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 += static_cast<Acc>(p[i]);
    a1 += static_cast<Acc>(p[i + 1]);
    a2 += static_cast<Acc>(p[i + 2]);
    a3 += static_cast<Acc>(p[i + 3]);
  }
  for (; i < n; ++i) a0 += static_cast<Acc>(p[i]);
  return (a0 + a1) + (a2 + a3);
}

template <class T>
using SumAcc = std::conditional_t<is_floating_type_v<T>, double, int64_t>;

// Integer products wrap modulo 2^64 as in PyTorch (unsigned, so no overflow UB).
template <class T>
using ProdAcc = std::conditional_t<is_floating_type_v<T>, double, uint64_t>;

template <class T>
bool is_nan(T v) {
  if constexpr (is_floating_type_v<T>) return v != v;
  else return false;
}

// Whether v replaces best as the running extremum: a NaN wins and then stays.
template <bool IsMax, class T>
bool beats(T v, T best) {
  if (is_nan(best)) return false;
  if (is_nan(v)) return true;
  if constexpr (IsMax) return v > best;
  else return v < best;
}

template <bool IsMax>
void extremum_kernel(ScalarType dtype, const void* in, const ReductionLayout& layout, void* out,
                     std::string_view name) {
  dispatch_all(dtype, name, [&]<class T>() {
    T* o = static_cast<T*>(out);
    for_each_output(layout, static_cast<const T*>(in), [&](int64_t index, const T* base) {
      T best = *base;
      for_each_reduced(layout, base, [&](T v, int64_t) {
        if (beats<IsMax>(v, best)) best = v;
      });
      o[index] = best;
    });
  });
}

template <bool IsMax>
void arg_extremum_kernel(ScalarType dtype, const void* in, const ReductionLayout& layout, int64_t* o, void* values,
                         bool allow_bool, std::string_view name) {
  auto kernel = [&]<class T>() {
    T* v_out = static_cast<T*>(values);
    for_each_output(layout, static_cast<const T*>(in), [&](int64_t index, const T* base) {
      T best = *base;
      int64_t best_index = 0;
      for_each_reduced(layout, base, [&](T v, int64_t i) {
        if (beats<IsMax>(v, best)) {
          best = v;
          best_index = i;
        }
      });
      o[index] = best_index;
      if (v_out != nullptr) v_out[index] = best;
    });
  };
  if (allow_bool) dispatch_all(dtype, name, kernel);
  else dispatch_numeric_and_reduced(dtype, name, kernel);
}

}  // namespace

void vector_norm(double p, ScalarType dtype, const void* in, const ReductionLayout& layout, void* out,
                 std::string_view name) {
  const NormKind kind = norm_kind(p);
  dispatch_floating_and_reduced(dtype, name, [&]<class T>() {
    T* o = static_cast<T*>(out);
    const T* x = static_cast<const T*>(in);
    if (kind == NormKind::Two && layout.reduced_sizes.size() == 1 && layout.reduced_strides[0] == 1) {
      // The common case (gradient norms): one contiguous run per output.
      const int64_t n = layout.reduced_sizes[0];
      for_each_output(layout, x, [&](int64_t index, const T* base) {
        o[index] = static_cast<T>(std::sqrt(sum_of_squares(base, n)));
      });
      return;
    }
    for_each_output(layout, x, [&](int64_t index, const T* base) {
      double acc = kind == NormKind::NegInf ? std::numeric_limits<double>::infinity() : 0.0;
      bool any = false, nan = false;
      for_each_reduced(layout, base, [&](T v, int64_t) {
        double a = std::abs(static_cast<double>(v));
        any = true;
        switch (kind) {
          case NormKind::Zero: acc += v != 0; break;
          case NormKind::One: acc += a; break;
          case NormKind::Two: acc += a * a; break;
          case NormKind::Inf: nan |= a != a; acc = std::max(acc, a); break;
          case NormKind::NegInf: nan |= a != a; acc = std::min(acc, a); break;
          case NormKind::General: acc += std::pow(a, p); break;
        }
      });
      if (kind == NormKind::Two) acc = std::sqrt(acc);
      else if (kind == NormKind::General) acc = std::pow(acc, 1.0 / p);
      else if (nan) acc = std::numeric_limits<double>::quiet_NaN();
      else if (kind == NormKind::NegInf && !any) acc = 0;
      o[index] = static_cast<T>(acc);
    });
  });
}

void arg_extremum(bool is_max, ScalarType dtype, const void* in, const ReductionLayout& layout, int64_t* out,
                  void* values, bool allow_bool, std::string_view name) {
  if (is_max) arg_extremum_kernel<true>(dtype, in, layout, out, values, allow_bool, name);
  else arg_extremum_kernel<false>(dtype, in, layout, out, values, allow_bool, name);
}

void prod(ScalarType dtype, const void* in, const ReductionLayout& layout, void* out, std::string_view name) {
  dispatch_numeric_and_reduced(dtype, name, [&]<class T>() {
    T* o = static_cast<T*>(out);
    for_each_output(layout, static_cast<const T*>(in), [&](int64_t index, const T* base) {
      ProdAcc<T> acc = 1;
      for_each_reduced(layout, base, [&](T v, int64_t) { acc *= static_cast<ProdAcc<T>>(v); });
      o[index] = static_cast<T>(acc);
    });
  });
}

void extremum(bool is_max, ScalarType dtype, const void* in, const ReductionLayout& layout, void* out,
              std::string_view name) {
  if (is_max) extremum_kernel<true>(dtype, in, layout, out, name);
  else extremum_kernel<false>(dtype, in, layout, out, name);
}

void sum(ScalarType in_dtype, const void* in_data, const ReductionLayout& layout, ScalarType out_dtype,
         void* out_data, std::string_view name) {
  dispatch_all(in_dtype, name, [&]<class T>() {
    dispatch_numeric_and_reduced(out_dtype, name, [&]<class O>() {
      O* o = static_cast<O*>(out_data);
      const T* in = static_cast<const T*>(in_data);
      // Innermost reduced elements adjacent: sum each run in four lanes (over
      // [N, C, H, W] to [C], a bias gradient, the runs are the planes).
      const bool contiguous_runs = !layout.reduced_sizes.empty() && layout.reduced_strides.back() == 1;
      const int64_t run = contiguous_runs ? layout.reduced_sizes.back() : 0;
      if (layout.kept_sizes.size() == 1 && layout.kept_strides[0] == 1 && layout.reduced_sizes.size() == 1) {
        // Summing over leading rows into a contiguous row (a bias gradient):
        // add whole rows, which vectorizes, instead of striding down each
        // column. Each output still adds its rows in order, so the result is
        // the same bits as the column walk, for any number of threads.
        const int64_t width = layout.kept_sizes[0], rows = layout.reduced_sizes[0];
        const int64_t row_stride = layout.reduced_strides[0];
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / std::max<int64_t>(rows, 1));
        parallel_for(0, width, grain, [&](int64_t lo, int64_t hi) {
          std::vector<SumAcc<O>> acc(static_cast<size_t>(hi - lo), SumAcc<O>(0));
          for (int64_t r = 0; r < rows; ++r) {
            const T* row = in + r * row_stride;
            for (int64_t j = lo; j < hi; ++j) acc[j - lo] += static_cast<SumAcc<O>>(row[j]);
          }
          for (int64_t j = lo; j < hi; ++j) o[j] = static_cast<O>(acc[j - lo]);
        });
        return;
      }
      for_each_output(layout, in, [&](int64_t index, const T* base) {
        SumAcc<O> acc = 0;
        if (layout.reduced_sizes.empty()) acc = static_cast<SumAcc<O>>(*base);
        else if (contiguous_runs)
          for_each_reduced_row(layout, base, [&](const T* row, int64_t) { acc += sum_contiguous<SumAcc<O>>(row, run); });
        else for_each_reduced(layout, base, [&](T v, int64_t) { acc += static_cast<SumAcc<O>>(v); });
        o[index] = static_cast<O>(acc);
      });
    });
  });
}

}  // namespace gradiens::kernels::cpu
