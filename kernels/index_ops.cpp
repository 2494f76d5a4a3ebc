// The reducing-scatter entry point (kernels/index_ops.h): a serial strided CPU
// loop, or the cuda kernels of kernels/cuda/indexing.h (Set, Sum) and
// kernels/cuda/index_ops.h (Prod, Max, Min) on the device's stream.
#include "kernels/index_ops.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cuda/index_ops.h"
#include "kernels/cuda/indexing.h"
#include "kernels/reduced_float.h"

namespace gradiens::kernels {

namespace {

void scatter_on_device(ScatterReduce op, ScalarType dtype, IntArrayRef shape, const StridedRef& dst,
                       const StridedRef& src, const StridedRef& index, int64_t index_scale, bool deterministic,
                       const DeviceRef& device) {
  const cuda::Shape cuda_shape = cuda::shape_of(shape);
  if (cuda_shape.numel() == 0) return;
  if (op == ScatterReduce::Set || op == ScatterReduce::Sum) {
    cuda::index_scatter(op == ScatterReduce::Set ? cuda::ScatterMode::Set : cuda::ScatterMode::Add, dtype, cuda_shape,
                        cuda::strided_of(dst), cuda::strided_of(src), cuda::strided_of(index), index_scale, 1.0,
                        deterministic, device.index, device.stream);
    return;
  }
  const cuda::AtomicReduce atomic = op == ScatterReduce::Prod  ? cuda::AtomicReduce::Prod
                                    : op == ScatterReduce::Max ? cuda::AtomicReduce::Max
                                                               : cuda::AtomicReduce::Min;
  cuda::index_scatter_atomic(atomic, dtype, cuda_shape, cuda::strided_of(dst), cuda::strided_of(src),
                             cuda::strided_of(index), index_scale, device.stream);
}

// reduce(slot, value) in T's arithmetic (float16/bfloat16 through float, one
// rounding per stored result); Max and Min keep a NaN from either side, as
// PyTorch's scatter_reduce does.
template <class T>
T reduce_one(ScatterReduce op, T slot, T value) {
  using M = opmath_t<T>;
  const M a = static_cast<M>(slot), b = static_cast<M>(value);
  if constexpr (std::is_floating_point_v<M>) {
    if ((op == ScatterReduce::Max || op == ScatterReduce::Min) && (std::isnan(a) || std::isnan(b)))
      return static_cast<T>(std::isnan(a) ? a : b);
  }
  switch (op) {
    case ScatterReduce::Set: return value;
    case ScatterReduce::Sum: return static_cast<T>(a + b);
    case ScatterReduce::Prod: return static_cast<T>(a * b);
    case ScatterReduce::Max: return static_cast<T>(a < b ? b : a);
    case ScatterReduce::Min: return static_cast<T>(b < a ? b : a);
  }
  return value;
}

}  // namespace

std::optional<int64_t> index_scatter_reduce(ScatterReduce op, ScalarType dtype, IntArrayRef shape,
                                            const StridedRef& dst, const StridedRef& src, const StridedRef& index,
                                            int64_t index_scale, int64_t index_limit, bool deterministic,
                                            const DeviceRef& device) {
  if (device.is_cuda()) {
    scatter_on_device(op, dtype, shape, dst, src, index, index_scale, deterministic, device);
    return std::nullopt;
  }
  const auto esize = static_cast<int64_t>(element_size(dtype));
  cpu::ElementwiseIterator iter(shape,
                                {cpu::Operand{dst.data, esize, dst.strides}, cpu::Operand{index.data, 8, index.strides},
                                 cpu::Operand{src.data, esize, src.strides}});
  std::optional<int64_t> bad;
  auto loop = [&]<class T>() {
    // Serial: two index entries may name the same output element.
    iter.for_each(
        [&](char** p, const int64_t* st, int64_t n) {
          for (int64_t j = 0; j < n; ++j) {
            const int64_t k = *reinterpret_cast<const int64_t*>(p[1] + j * st[1]);
            if (k < 0 || k >= index_limit) {
              if (!bad) bad = k;
              continue;
            }
            T& slot = reinterpret_cast<T*>(p[0] + j * st[0])[k * index_scale];
            slot = reduce_one<T>(op, slot, *reinterpret_cast<const T*>(p[2] + j * st[2]));
          }
        },
        std::numeric_limits<int64_t>::max());
  };
  if (op == ScatterReduce::Set)
    dispatch_all(dtype, "scatter", loop);
  else
    dispatch_numeric_and_reduced(dtype, "scatter_reduce", loop);
  return bad;
}

}  // namespace gradiens::kernels
