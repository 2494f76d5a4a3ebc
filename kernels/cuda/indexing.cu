// The gathers, scatters and nonzero compaction of indexing.h. One thread per
// element over a strided shape; the deterministic scatter sorts the targets
// with CUB and lets one thread do each run of equal targets in order.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/indexing.h"

namespace gradiens::kernels::cuda {
namespace {

// Same-size unsigned type, for the ops that only move bits.
template <size_t kBytes>
using bits_type = std::conditional_t<
    kBytes == 1, uint8_t,
    std::conditional_t<kBytes == 2, uint16_t, std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;

template <class F>
void dispatch_by_element_size(ScalarType dtype, F&& f) {
  switch (element_size(dtype)) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    default: return f.template operator()<uint64_t>();
  }
}

// The dtypes ScatterMode::Add takes.
template <class F>
void dispatch_add_dtype(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::Float32: return f.template operator()<float>();
    case ScalarType::Float64: return f.template operator()<double>();
    case ScalarType::Int32: return f.template operator()<int32_t>();
    case ScalarType::Int64: return f.template operator()<int64_t>();
    default: throw_unsupported_cuda_dtype("index add / scatter add", dtype);
  }
}

// alpha * value, rounded once (integers wrap through unsigned); alpha == 1
// gives value itself.
template <class T>
__device__ T scaled_value(T value, T alpha, bool unit_alpha) {
  if (unit_alpha) return value;
  if constexpr (std::is_integral_v<T>) {
    using Unsigned = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<Unsigned>(alpha) * static_cast<Unsigned>(value));
  } else {
    return multiply_rounded(alpha, value);
  }
}

// slot + alpha * value as the CPU computes it: two roundings (never an fma).
template <class T>
__device__ T add_scaled(T slot, T value, T alpha, bool unit_alpha) {
  const T scaled = scaled_value(value, alpha, unit_alpha);
  if constexpr (std::is_integral_v<T>) {
    using Unsigned = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<Unsigned>(slot) + static_cast<Unsigned>(scaled));
  } else {
    return add_rounded(slot, scaled);
  }
}

// ---- gather -----------------------------------------------------------------------

template <class Bits>
struct GatherElement {
  Bits* out;
  const Bits* src;
  const int64_t* index;
  int64_t scale;
  __device__ void operator()(const int64_t (&offsets)[3]) const {
    out[offsets[0]] = src[offsets[1] + index[offsets[2]] * scale];
  }
};

// ---- scatter, in parallel ---------------------------------------------------------

template <class Bits>
struct ScatterSetElement {
  Bits* dst;
  const Bits* src;
  const int64_t* index;
  int64_t scale;
  __device__ void operator()(const int64_t (&offsets)[3]) const {
    dst[offsets[0] + index[offsets[2]] * scale] = src[offsets[1]];
  }
};

__device__ inline void atomic_add(float* slot, float value) { atomicAdd(slot, value); }
__device__ inline void atomic_add(double* slot, double value) { atomicAdd(slot, value); }
__device__ inline void atomic_add(int32_t* slot, int32_t value) { atomicAdd(slot, value); }
__device__ inline void atomic_add(int64_t* slot, int64_t value) {
  // Two's complement: the unsigned sum has the bits of the wrapped signed one.
  atomicAdd(reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long>(value));
}

template <class T>
struct ScatterAddAtomicElement {
  T* dst;
  const T* src;
  const int64_t* index;
  int64_t scale;
  T alpha;
  bool unit_alpha;
  __device__ void operator()(const int64_t (&offsets)[3]) const {
    atomic_add(dst + offsets[0] + index[offsets[2]] * scale, scaled_value(src[offsets[1]], alpha, unit_alpha));
  }
};

// ---- scatter, deterministic -------------------------------------------------------
// Note [Deterministic scatter]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Element i of the iteration shape (row-major) writes to target t_i. The pairs
// (t_i, i) are sorted by t with CUB's radix sort, which is stable, so within
// each run of equal targets the positions i stay increasing. The first thread
// of a run then does the run's writes in that order: Set keeps the last value,
// Add sums left to right starting from the target's value, the order of a
// serial CPU loop over the same shape, so the bits are the CPU's too.

// targets[i] = element i's target offset, positions[i] = i. The fourth operand
// has the shape's row-major strides, so its offset is the linear index i.
struct TargetOfElement {
  const int64_t* index;
  int64_t scale;
  int64_t* targets;
  int64_t* positions;
  __device__ void operator()(const int64_t (&offsets)[4]) const {
    const int64_t i = offsets[3];
    targets[i] = offsets[0] + index[offsets[2]] * scale;
    positions[i] = i;
  }
};

template <class T, bool kAdd>
__global__ void __launch_bounds__(kThreadsPerBlock)
    scatter_runs_kernel(const int64_t* targets, const int64_t* positions, int64_t n, T* dst, const T* src,
                        StridedIndexer<1> src_indexer, T alpha, bool unit_alpha) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    const int64_t target = targets[j];
    if (j > 0 && targets[j - 1] == target) continue;  // not the first of its run
    int64_t offsets[1];
    if constexpr (kAdd) {
      T total = dst[target];
      for (int64_t k = j; k < n && targets[k] == target; ++k) {
        src_indexer.offsets_of(static_cast<uint64_t>(positions[k]), offsets);
        total = add_scaled(total, src[offsets[0]], alpha, unit_alpha);
      }
      dst[target] = total;
    } else {
      int64_t last = j;
      while (last + 1 < n && targets[last + 1] == target) ++last;
      src_indexer.offsets_of(static_cast<uint64_t>(positions[last]), offsets);
      dst[target] = src[offsets[0]];
    }
  }
}

template <class T, bool kAdd>
void scatter_deterministic(const Shape& shape, const Strided& dst, const Strided& src, const Strided& index,
                           int64_t index_scale, T alpha, bool unit_alpha, int device, StreamHandle stream) {
  const int64_t n = shape.numel();
  const cudaStream_t cuda_stream = as_cuda_stream(stream);
  const size_t pair_bytes = static_cast<size_t>(n) * sizeof(int64_t);
  DeviceScratch targets(pair_bytes, device), positions(pair_bytes, device);
  DeviceScratch sorted_targets(pair_bytes, device), sorted_positions(pair_bytes, device);

  int64_t row_major[kMaxDims] = {};
  int64_t running = 1;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    row_major[d] = running;
    running *= shape.sizes[d];
  }
  const int64_t* const strides[4] = {dst.strides, src.strides, index.strides, row_major};
  launch_strided_elementwise<4>(shape, strides,
                                TargetOfElement{static_cast<const int64_t*>(index.data), index_scale,
                                                targets.get<int64_t>(), positions.get<int64_t>()},
                                stream);

  size_t temp_bytes = 0;
  GD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, targets.get<int64_t>(),
                                                sorted_targets.get<int64_t>(), positions.get<int64_t>(),
                                                sorted_positions.get<int64_t>(), n, 0, 64, cuda_stream));
  DeviceScratch temp(temp_bytes, device);
  GD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, targets.get<int64_t>(),
                                                sorted_targets.get<int64_t>(), positions.get<int64_t>(),
                                                sorted_positions.get<int64_t>(), n, 0, 64, cuda_stream));

  const int64_t* const src_strides[1] = {src.strides};
  const StridedIndexer<1> src_indexer = make_indexer<1>(shape, 0, shape.ndim, src_strides);
  scatter_runs_kernel<T, kAdd><<<blocks_for(n), kThreadsPerBlock, 0, cuda_stream>>>(
      sorted_targets.get<int64_t>(), sorted_positions.get<int64_t>(), n, static_cast<T*>(dst.data),
      static_cast<const T*>(src.data), src_indexer, alpha, unit_alpha);
  GD_CUDA_LAUNCH_CHECK();
}

// ---- nonzero ----------------------------------------------------------------------

template <class T>
struct NonzeroFlagElement {
  const T* in;
  uint8_t* flags;
  int64_t* positions;
  __device__ void operator()(int64_t i) const {
    flags[i] = load_as_opmath(in[i]) != opmath_type<T>(0) ? 1 : 0;  // NaN != 0 holds
    positions[i] = i;
  }
};

__global__ void __launch_bounds__(kThreadsPerBlock)
    unravel_kernel(const int64_t* positions, int64_t count, Shape shape, int64_t* out) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < count; c += stride) {
    int64_t linear = positions[c];
    int64_t* row = out + c * shape.ndim;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      const int64_t size = shape.sizes[d];
      row[d] = linear % size;
      linear /= size;
    }
  }
}

}  // namespace

// ---- host entry points ------------------------------------------------------------

void index_gather(ScalarType dtype, const Shape& shape, const Strided& out, const Strided& src, const Strided& index,
                  int64_t index_scale, StreamHandle stream) {
  check_shape(shape, "index_gather");
  if (shape.numel() == 0) return;
  const int64_t* const strides[3] = {out.strides, src.strides, index.strides};
  dispatch_by_element_size(dtype, [&]<class Bits>() {
    launch_strided_elementwise<3>(shape, strides,
                                  GatherElement<Bits>{static_cast<Bits*>(out.data), static_cast<const Bits*>(src.data),
                                                      static_cast<const int64_t*>(index.data), index_scale},
                                  stream);
  });
}

void index_scatter(ScatterMode mode, ScalarType dtype, const Shape& shape, const Strided& dst, const Strided& src,
                   const Strided& index, int64_t index_scale, double alpha, bool deterministic, int device,
                   StreamHandle stream) {
  check_shape(shape, "index_scatter");
  if (shape.numel() == 0) return;
  const int64_t* const strides[3] = {dst.strides, src.strides, index.strides};
  if (mode == ScatterMode::Set) {
    dispatch_by_element_size(dtype, [&]<class Bits>() {
      if (deterministic) {
        scatter_deterministic<Bits, false>(shape, dst, src, index, index_scale, Bits(0), true, device, stream);
        return;
      }
      launch_strided_elementwise<3>(
          shape, strides,
          ScatterSetElement<Bits>{static_cast<Bits*>(dst.data), static_cast<const Bits*>(src.data),
                                  static_cast<const int64_t*>(index.data), index_scale},
          stream);
    });
    return;
  }
  dispatch_add_dtype(dtype, [&]<class T>() {
    const T typed_alpha = static_cast<T>(alpha);
    const bool unit_alpha = alpha == 1.0;
    if (deterministic) {
      scatter_deterministic<T, true>(shape, dst, src, index, index_scale, typed_alpha, unit_alpha, device, stream);
      return;
    }
    launch_strided_elementwise<3>(
        shape, strides,
        ScatterAddAtomicElement<T>{static_cast<T*>(dst.data), static_cast<const T*>(src.data),
                                   static_cast<const int64_t*>(index.data), index_scale, typed_alpha, unit_alpha},
        stream);
  });
}

int64_t select_nonzero(ScalarType dtype, const void* in, int64_t n, int64_t* positions, int device,
                       StreamHandle stream) {
  GD_CHECK(n >= 0, "nonzero: element count must be non-negative, got " + std::to_string(n));
  if (n == 0) return 0;
  const cudaStream_t cuda_stream = as_cuda_stream(stream);
  DeviceScratch flags(static_cast<size_t>(n), device);
  DeviceScratch all_positions(static_cast<size_t>(n) * sizeof(int64_t), device);
  DeviceScratch count(sizeof(int64_t), device);
  dispatch_cuda_all(dtype, "nonzero", [&]<class T>() {
    launch_contiguous_elementwise(
        n, NonzeroFlagElement<T>{static_cast<const T*>(in), flags.get<uint8_t>(), all_positions.get<int64_t>()},
        stream);
  });
  size_t temp_bytes = 0;
  GD_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, all_positions.get<int64_t>(), flags.get<uint8_t>(),
                                           positions, count.get<int64_t>(), n, cuda_stream));
  DeviceScratch temp(temp_bytes, device);
  GD_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.get(), temp_bytes, all_positions.get<int64_t>(),
                                           flags.get<uint8_t>(), positions, count.get<int64_t>(), n, cuda_stream));
  int64_t selected = 0;
  copy_device_to_host(&selected, count.get(), sizeof selected, device, false);
  return selected;
}

void unravel_positions(const int64_t* positions, int64_t count, const Shape& shape, int64_t* out,
                       StreamHandle stream) {
  check_shape(shape, "nonzero");
  if (count == 0 || shape.ndim == 0) return;
  unravel_kernel<<<blocks_for(count), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(positions, count, shape, out);
  GD_CUDA_LAUNCH_CHECK();
}

}  // namespace gradiens::kernels::cuda
