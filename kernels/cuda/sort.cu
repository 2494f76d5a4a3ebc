// The ordering kernels of indexing.h: a stable segmented sort of contiguous
// lines (CUB's DeviceSegmentedSort) and cumulative sums and products along a
// dim, one thread per line, in the CPU's accumulator types.
#include <cub/device/device_segmented_sort.cuh>

#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/indexing.h"

namespace gradiens::kernels::cuda {
namespace {

// ---- sort -------------------------------------------------------------------------
// Note [Sort keys on the device]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The CPU's comparators hold -0 == +0 and put every NaN above every number,
// ties keeping their order. CUB's segmented sort compares floating keys with
// `<` on its merge-sort path for short segments (where NaN is unordered) and
// by their bits on its radix path (-0 before +0, a NaN by sign and payload).
// So floating keys are sorted as unsigned integers instead: -0 is made +0 and
// every NaN the positive quiet NaN, then the bits are mapped so that unsigned
// order is numeric order (negative values: all bits flipped; others: the sign
// bit set), which puts the NaN above +inf. A stable sort of those keys then
// matches the CPU in both directions (descending puts the NaNs first, ties
// still in original order), on every path CUB takes.

template <class T>
using OrderedBits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <class T>
struct OrderedKeyElement {
  const T* in;
  OrderedBits<T>* out;
  __device__ void operator()(int64_t i) const {
    using Bits = OrderedBits<T>;
    T v = in[i];
    if (v != v) v = std::numeric_limits<T>::quiet_NaN();
    else if (v == T(0)) v = T(0);
    Bits bits;
    memcpy(&bits, &v, sizeof(Bits));
    constexpr Bits kSign = Bits(1) << (8 * sizeof(Bits) - 1);
    out[i] = (bits & kSign) ? Bits(~bits) : Bits(bits | kSign);
  }
};

// positions[i] = i's place within its line; offsets[s] = s * length.
struct LinePositionElement {
  int64_t length;
  int64_t* positions;
  __device__ void operator()(int64_t i) const { positions[i] = i % length; }
};
struct LineOffsetElement {
  int64_t length;
  int64_t* offsets;
  __device__ void operator()(int64_t s) const { offsets[s] = s * length; }
};

template <class T>
void sort_lines_typed(const void* keys_in, int64_t lines, int64_t length, bool descending, int64_t* positions_out,
                      int device, StreamHandle stream) {
  // Floating keys are sorted as their ordered bits (Note [Sort keys on the device]).
  using Key = std::conditional_t<std::is_floating_point_v<T>, OrderedBits<T>, T>;
  const int64_t n = lines * length;
  const cudaStream_t cuda_stream = as_cuda_stream(stream);
  DeviceScratch keys(std::is_floating_point_v<T> ? static_cast<size_t>(n) * sizeof(Key) : 0, device);
  DeviceScratch sorted_keys(static_cast<size_t>(n) * sizeof(Key), device);
  DeviceScratch positions(static_cast<size_t>(n) * sizeof(int64_t), device);
  DeviceScratch offsets(static_cast<size_t>(lines + 1) * sizeof(int64_t), device);

  const Key* sort_input;
  if constexpr (std::is_floating_point_v<T>) {
    launch_contiguous_elementwise(n, OrderedKeyElement<T>{static_cast<const T*>(keys_in), keys.get<Key>()}, stream);
    sort_input = keys.get<Key>();
  } else {
    sort_input = static_cast<const Key*>(keys_in);
  }
  launch_contiguous_elementwise(n, LinePositionElement{length, positions.get<int64_t>()}, stream);
  launch_contiguous_elementwise(lines + 1, LineOffsetElement{length, offsets.get<int64_t>()}, stream);

  const int64_t* begin_offsets = offsets.get<int64_t>();
  const int64_t* end_offsets = begin_offsets + 1;
  auto run = [&](void* temp, size_t& temp_bytes) {
    if (descending) {
      return cub::DeviceSegmentedSort::StableSortPairsDescending(
          temp, temp_bytes, sort_input, sorted_keys.get<Key>(), positions.get<int64_t>(), positions_out, n, lines,
          begin_offsets, end_offsets, cuda_stream);
    }
    return cub::DeviceSegmentedSort::StableSortPairs(temp, temp_bytes, sort_input, sorted_keys.get<Key>(),
                                                     positions.get<int64_t>(), positions_out, n, lines,
                                                     begin_offsets, end_offsets, cuda_stream);
  };
  size_t temp_bytes = 0;
  GD_CUDA_CHECK(run(nullptr, temp_bytes));
  DeviceScratch temp(temp_bytes, device);
  GD_CUDA_CHECK(run(temp.get(), temp_bytes));
}

// ---- cumsum / cumprod ---------------------------------------------------------------

// The CPU's accumulator (engine/ops/ordering.cpp): double for floating dtypes,
// uint64 (wrapping) for integers.
template <class T>
using CumulativeAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <bool kProduct, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    cumulative_kernel(StridedIndexer<2> lines_indexer, int64_t lines, int64_t length, T* out, int64_t out_stride,
                      const T* in, int64_t in_stride) {
  using Acc = CumulativeAcc<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines; line += stride) {
    int64_t offsets[2];
    lines_indexer.offsets_of(static_cast<uint64_t>(line), offsets);
    Acc total = kProduct ? Acc(1) : Acc(0);
    for (int64_t j = 0; j < length; ++j) {
      Acc value;
      if constexpr (std::is_integral_v<T>) value = static_cast<Acc>(in[offsets[1] + j * in_stride]);
      else value = convert_value<double>(in[offsets[1] + j * in_stride]);
      if constexpr (kProduct) total = total * value;
      else total = total + value;
      if constexpr (std::is_integral_v<T>) out[offsets[0] + j * out_stride] = static_cast<T>(total);
      else out[offsets[0] + j * out_stride] = convert_value<T>(total);
    }
  }
}

template <class F>
void dispatch_cumulative_dtype(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::Float32: return f.template operator()<float>();
    case ScalarType::Float64: return f.template operator()<double>();
    case ScalarType::Float16: return f.template operator()<__half>();
    case ScalarType::BFloat16: return f.template operator()<__nv_bfloat16>();
    case ScalarType::UInt8: return f.template operator()<uint8_t>();
    case ScalarType::Int8: return f.template operator()<int8_t>();
    case ScalarType::Int16: return f.template operator()<int16_t>();
    case ScalarType::Int32: return f.template operator()<int32_t>();
    case ScalarType::Int64: return f.template operator()<int64_t>();
    default: throw_unsupported_cuda_dtype("cumsum / cumprod", dtype);
  }
}

}  // namespace

// ---- host entry points ------------------------------------------------------------

void sort_lines(ScalarType dtype, const void* keys, int64_t lines, int64_t length, bool descending,
                int64_t* positions, int device, StreamHandle stream) {
  GD_CHECK(lines >= 0 && length >= 0, "sort: negative line count or length");
  if (lines == 0 || length == 0) return;
  switch (dtype) {
    case ScalarType::Float32:
      return sort_lines_typed<float>(keys, lines, length, descending, positions, device, stream);
    case ScalarType::Float64:
      return sort_lines_typed<double>(keys, lines, length, descending, positions, device, stream);
    case ScalarType::UInt8:
      return sort_lines_typed<uint8_t>(keys, lines, length, descending, positions, device, stream);
    case ScalarType::Int8:
      return sort_lines_typed<int8_t>(keys, lines, length, descending, positions, device, stream);
    case ScalarType::Int16:
      return sort_lines_typed<int16_t>(keys, lines, length, descending, positions, device, stream);
    case ScalarType::Int32:
      return sort_lines_typed<int32_t>(keys, lines, length, descending, positions, device, stream);
    case ScalarType::Int64:
      return sort_lines_typed<int64_t>(keys, lines, length, descending, positions, device, stream);
    default: throw_unsupported_cuda_dtype("sort", dtype);
  }
}

void cumulative(bool product, ScalarType dtype, const Shape& shape, int dim, const Strided& out, const Strided& in,
                StreamHandle stream) {
  const char* name = product ? "cumprod" : "cumsum";
  check_shape(shape, name);
  GD_CHECK(dim >= 0 && dim < shape.ndim, std::string(name) + ": dimension out of range");
  const int64_t numel = shape.numel();
  if (numel == 0) return;
  const int64_t length = shape.sizes[dim];
  const int64_t lines = numel / length;
  // The lines' first elements: the shape with `dim` cut to one element.
  Shape line_shape = shape;
  line_shape.sizes[dim] = 1;
  const int64_t* const strides[2] = {out.strides, in.strides};
  const StridedIndexer<2> lines_indexer = make_indexer<2>(line_shape, 0, line_shape.ndim, strides);
  dispatch_cumulative_dtype(dtype, [&]<class T>() {
    auto launch = [&]<bool kProduct>() {
      cumulative_kernel<kProduct, T><<<blocks_for(lines), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
          lines_indexer, lines, length, static_cast<T*>(out.data), out.strides[dim], static_cast<const T*>(in.data),
          in.strides[dim]);
      GD_CUDA_LAUNCH_CHECK();
    };
    if (product) launch.template operator()<true>();
    else launch.template operator()<false>();
  });
}

}  // namespace gradiens::kernels::cuda
