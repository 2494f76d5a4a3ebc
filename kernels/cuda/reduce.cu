// The CUDA reduction of ops.h: sum, product, max, min and sum of squares over
// the trailing dimensions of a strided buffer, in an order fixed by the shape
// (Note [Fixed reduction tree] in device_math.cuh), never with atomics.
#include <algorithm>
#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {
namespace {

// Note [CUDA reduction strategy]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// M outputs, each reducing R values; the strategy depends on (M, R) only, so a
// given shape always sums in the same order:
//  - R <= kSerialReduceMax: one thread per output adds its R values left to
//    right (a block-wide tree would leave most lanes idle).
//  - otherwise each output's R values are cut into `parts` consecutive chunks
//    of part_length values, each reduced by one block with the fixed tree.
//    parts = 1 (one block per output, writing the output) unless there are too
//    few outputs to fill the GPU: then each output gets up to
//    ceil(kTargetBlocks / M) parts of at least kMinPartLength values, the
//    blocks write their partials (in the accumulator type) to a scratch buffer
//    and a second kernel reduces each output's partials with the same tree.
//    Since parts > 1 only when M < kTargetBlocks, the scratch holds fewer than
//    2 * kTargetBlocks values.
constexpr int64_t kSerialReduceMax = 64;
constexpr int64_t kTargetBlocks = 2048;
constexpr int64_t kMinPartLength = 16 * kThreadsPerBlock;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Where the values of one reduction sit: output m's first value is at
// kept.offset(m), its value r at that plus reduced.offset(r).
struct ReduceGeometry {
  StridedIndexer<1> kept;
  StridedIndexer<1> reduced;
  int64_t outputs = 0;         // M
  int64_t reduced_count = 0;   // R
  int64_t parts = 1;           // chunks per output (the block strategy)
  int64_t part_length = 0;     // values per chunk, the last one possibly shorter
  bool fits_32bit = false;     // M and R both below 2^31: 32-bit index divisions
};

__device__ int64_t offset_of(const StridedIndexer<1>& indexer, int64_t linear, bool fits_32bit) {
  int64_t offsets[1];
  if (fits_32bit) {
    indexer.offsets_of(static_cast<uint32_t>(linear), offsets);
  } else {
    indexer.offsets_of(static_cast<uint64_t>(linear), offsets);
  }
  return offsets[0];
}

// The binary operation of each Reduce, on the accumulator type Acc (float,
// double or int64_t), and the map applied to each value before it (x * x
// for SumOfSquares). Integer arithmetic wraps around, through unsigned.
template <Reduce kOp, class Acc>
struct Reducer {
  static constexpr bool kIntegral = std::is_integral_v<Acc>;

  __device__ static Acc add(Acc a, Acc b) {
    if constexpr (kIntegral) return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    else return a + b;
  }
  __device__ static Acc multiply(Acc a, Acc b) {
    if constexpr (kIntegral) return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else return a * b;
  }

  // x * x rounded before it is added (never an fma with the running sum), so
  // the result does not hang on how the compiler schedules the loop.
  __device__ static Acc map(Acc x) {
    if constexpr (kOp != Reduce::SumOfSquares) return x;
    else if constexpr (kIntegral) return multiply(x, x);
    else return multiply_rounded(x, x);
  }

  // Max and Min propagate NaN; between equal values the earlier one wins.
  __device__ Acc operator()(Acc a, Acc b) const {
    if constexpr (kOp == Reduce::Sum || kOp == Reduce::SumOfSquares) return add(a, b);
    if constexpr (kOp == Reduce::Prod) return multiply(a, b);
    if constexpr (kOp == Reduce::Max) return (a != a || a >= b) ? a : b;
    if constexpr (kOp == Reduce::Min) return (a != a || a <= b) ? a : b;
  }

  // The result of an empty reduction (Max and Min get the lowest / highest
  // value: an empty one is the caller's error, this only keeps it defined).
  __device__ static Acc identity() {
    if constexpr (kOp == Reduce::Prod) return Acc(1);
    if constexpr (kOp == Reduce::Max) {
      if constexpr (kIntegral) return std::numeric_limits<Acc>::lowest();
      else return -std::numeric_limits<Acc>::infinity();
    }
    if constexpr (kOp == Reduce::Min) {
      if constexpr (kIntegral) return std::numeric_limits<Acc>::max();
      else return std::numeric_limits<Acc>::infinity();
    }
    return Acc(0);
  }
};

template <Reduce kOp, class In, class Acc, class Out>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_serially_kernel(const In* in, Out* out, ReduceGeometry geometry) {
  using Op = Reducer<kOp, Acc>;
  const Op combine;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < geometry.outputs; m += stride) {
    const In* row = in + offset_of(geometry.kept, m, geometry.fits_32bit);
    Acc total = Op::identity();
    for (int64_t r = 0; r < geometry.reduced_count; ++r) {
      const Acc value = Op::map(convert_value<Acc>(row[offset_of(geometry.reduced, r, geometry.fits_32bit)]));
      total = r == 0 ? value : combine(total, value);
    }
    out[m] = convert_value<Out>(total);
  }
}

// One block per (output, part), Note [Fixed reduction tree]. With partials
// null the block writes the output (parts == 1); otherwise its partial.
template <Reduce kOp, class In, class Acc, class Out>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_by_blocks_kernel(const In* in, Out* out, Acc* partials, ReduceGeometry geometry) {
  using Op = Reducer<kOp, Acc>;
  const Op combine;
  const int64_t tasks = geometry.outputs * geometry.parts;
  for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    const int64_t m = task / geometry.parts;
    const int64_t begin = (task - m * geometry.parts) * geometry.part_length;
    const int64_t end = min(begin + geometry.part_length, geometry.reduced_count);
    const In* row = in + offset_of(geometry.kept, m, geometry.fits_32bit);
    auto load = [&](int64_t r) {
      return Op::map(convert_value<Acc>(row[offset_of(geometry.reduced, r, geometry.fits_32bit)]));
    };
    // Lane values r = begin + t, + 256, ... combined left to right; four loads
    // are issued before their four combines, which keeps that order.
    constexpr int64_t kStep = kThreadsPerBlock;
    int64_t r = begin + threadIdx.x;
    Acc total = Op::identity();
    if (r < end) {
      total = load(r);
      r += kStep;
    }
    for (; r + 3 * kStep < end; r += 4 * kStep) {
      const Acc v0 = load(r), v1 = load(r + kStep), v2 = load(r + 2 * kStep), v3 = load(r + 3 * kStep);
      total = combine(combine(combine(combine(total, v0), v1), v2), v3);
    }
    for (; r < end; r += kStep) total = combine(total, load(r));
    const int count = static_cast<int>(min(end - begin, static_cast<int64_t>(kThreadsPerBlock)));
    total = block_tree_reduce(total, count, combine);
    if (threadIdx.x == 0) {
      if (partials != nullptr) partials[task] = total;
      else out[m] = convert_value<Out>(total);
    }
  }
}

// The second pass: output m reduces its `parts` partials, stored contiguously.
template <Reduce kOp, class Acc, class Out>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_partials_kernel(const Acc* partials, Out* out, int64_t outputs, int64_t parts) {
  const Reducer<kOp, Acc> combine;
  for (int64_t m = blockIdx.x; m < outputs; m += gridDim.x) {
    const Acc* row = partials + m * parts;
    Acc total = Reducer<kOp, Acc>::identity();
    const int64_t first = threadIdx.x;
    for (int64_t p = first; p < parts; p += blockDim.x) total = p == first ? row[p] : combine(total, row[p]);
    const int count = static_cast<int>(min(parts, static_cast<int64_t>(kThreadsPerBlock)));
    total = block_tree_reduce(total, count, combine);
    if (threadIdx.x == 0) out[m] = convert_value<Out>(total);
  }
}

template <Reduce kOp, class In, class Acc, class Out>
void launch_reduce(const void* in, void* out, const ReduceGeometry& geometry, StreamHandle stream) {
  const cudaStream_t cuda_stream = as_cuda_stream(stream);
  const In* typed_in = static_cast<const In*>(in);
  Out* typed_out = static_cast<Out*>(out);
  if (geometry.reduced_count <= kSerialReduceMax) {
    reduce_serially_kernel<kOp, In, Acc, Out>
        <<<blocks_for(geometry.outputs), kThreadsPerBlock, 0, cuda_stream>>>(typed_in, typed_out, geometry);
    GD_CUDA_LAUNCH_CHECK();
    return;
  }
  const int64_t tasks = geometry.outputs * geometry.parts;
  const unsigned int blocks = static_cast<unsigned int>(std::min(tasks, kMaxBlocks));
  if (geometry.parts == 1) {
    reduce_by_blocks_kernel<kOp, In, Acc, Out>
        <<<blocks, kThreadsPerBlock, 0, cuda_stream>>>(typed_in, typed_out, nullptr, geometry);
    GD_CUDA_LAUNCH_CHECK();
    return;
  }
  void* scratch = nullptr;
  GD_CUDA_CHECK(cudaMallocAsync(&scratch, static_cast<size_t>(tasks) * sizeof(Acc), cuda_stream));
  Acc* partials = static_cast<Acc*>(scratch);
  reduce_by_blocks_kernel<kOp, In, Acc, Out>
      <<<blocks, kThreadsPerBlock, 0, cuda_stream>>>(typed_in, typed_out, partials, geometry);
  const cudaError_t first_pass = cudaGetLastError();
  if (first_pass == cudaSuccess) {
    const unsigned int output_blocks = static_cast<unsigned int>(std::min(geometry.outputs, kMaxBlocks));
    reduce_partials_kernel<kOp, Acc, Out>
        <<<output_blocks, kThreadsPerBlock, 0, cuda_stream>>>(partials, typed_out, geometry.outputs, geometry.parts);
  }
  const cudaError_t second_pass = first_pass == cudaSuccess ? cudaGetLastError() : first_pass;
  // Freed in stream order after the second pass, and also when a launch failed.
  GD_CUDA_CHECK(cudaFreeAsync(scratch, cuda_stream));
  GD_CUDA_CHECK(second_pass);
}

const char* reduce_name(Reduce op) {
  switch (op) {
    case Reduce::Sum: return "sum";
    case Reduce::Prod: return "prod";
    case Reduce::Max: return "max";
    case Reduce::Min: return "min";
    case Reduce::SumOfSquares: return "sum of squares";
  }
  return "reduce";
}

template <class In, class Acc, class Out>
void reduce_every_op(Reduce op, const void* in, void* out, const ReduceGeometry& geometry, StreamHandle stream) {
  switch (op) {
    case Reduce::Sum: return launch_reduce<Reduce::Sum, In, Acc, Out>(in, out, geometry, stream);
    case Reduce::Prod: return launch_reduce<Reduce::Prod, In, Acc, Out>(in, out, geometry, stream);
    case Reduce::Max: return launch_reduce<Reduce::Max, In, Acc, Out>(in, out, geometry, stream);
    case Reduce::Min: return launch_reduce<Reduce::Min, In, Acc, Out>(in, out, geometry, stream);
    case Reduce::SumOfSquares: return launch_reduce<Reduce::SumOfSquares, In, Acc, Out>(in, out, geometry, stream);
  }
  GD_INTERNAL_ASSERT(false, "cuda::reduce: Reduce value " + std::to_string(static_cast<int>(op)) + " has no kernel");
}

}  // namespace

void reduce(Reduce op, ScalarType in_dtype, const Strided& in, const Shape& shape, int reduced_ndim,
            ScalarType out_dtype, void* out, StreamHandle stream) {
  check_shape(shape, "reduce");
  GD_CHECK(reduced_ndim >= 0 && reduced_ndim <= shape.ndim,
           "reduce: cannot reduce " + std::to_string(reduced_ndim) + " trailing dimensions of a " +
               std::to_string(shape.ndim) + "-dimensional shape");
  const int kept_ndim = shape.ndim - reduced_ndim;
  ReduceGeometry geometry;
  geometry.outputs = 1;
  for (int d = 0; d < kept_ndim; ++d) geometry.outputs *= shape.sizes[d];
  geometry.reduced_count = 1;
  for (int d = kept_ndim; d < shape.ndim; ++d) geometry.reduced_count *= shape.sizes[d];
  if (geometry.outputs == 0) return;
  const int64_t* const strides[1] = {in.strides};
  geometry.kept = make_indexer<1>(shape, 0, kept_ndim, strides);
  geometry.reduced = make_indexer<1>(shape, kept_ndim, shape.ndim, strides);
  geometry.fits_32bit = geometry.outputs <= std::numeric_limits<int32_t>::max() &&
                        geometry.reduced_count <= std::numeric_limits<int32_t>::max();
  // Note [CUDA reduction strategy]
  const int64_t most_parts = std::max<int64_t>(1, geometry.reduced_count / kMinPartLength);
  geometry.parts = std::clamp<int64_t>(ceil_div(kTargetBlocks, geometry.outputs), 1, most_parts);
  geometry.part_length = ceil_div(std::max<int64_t>(geometry.reduced_count, 1), geometry.parts);
  geometry.parts = ceil_div(std::max<int64_t>(geometry.reduced_count, 1), geometry.part_length);  // none empty

  const char* name = reduce_name(op);
  if (in_dtype == out_dtype) {
    switch (in_dtype) {
      // Floating values accumulate in float32, float64 in float64.
      case ScalarType::Float32: return reduce_every_op<float, float, float>(op, in.data, out, geometry, stream);
      case ScalarType::Float64: return reduce_every_op<double, double, double>(op, in.data, out, geometry, stream);
      case ScalarType::Float16: return reduce_every_op<__half, float, __half>(op, in.data, out, geometry, stream);
      case ScalarType::BFloat16:
        return reduce_every_op<__nv_bfloat16, float, __nv_bfloat16>(op, in.data, out, geometry, stream);
      // Integers accumulate in int64_t; the wrapped result cast back equals
      // the narrower type's own wrapped arithmetic.
      case ScalarType::UInt8: return reduce_every_op<uint8_t, int64_t, uint8_t>(op, in.data, out, geometry, stream);
      case ScalarType::Int8: return reduce_every_op<int8_t, int64_t, int8_t>(op, in.data, out, geometry, stream);
      case ScalarType::Int16: return reduce_every_op<int16_t, int64_t, int16_t>(op, in.data, out, geometry, stream);
      case ScalarType::Int32: return reduce_every_op<int32_t, int64_t, int32_t>(op, in.data, out, geometry, stream);
      case ScalarType::Int64: return reduce_every_op<int64_t, int64_t, int64_t>(op, in.data, out, geometry, stream);
      case ScalarType::Bool:  // max = any, min = all = prod
        if (op == Reduce::Max) return launch_reduce<Reduce::Max, bool, int64_t, bool>(in.data, out, geometry, stream);
        if (op == Reduce::Min) return launch_reduce<Reduce::Min, bool, int64_t, bool>(in.data, out, geometry, stream);
        if (op == Reduce::Prod)
          return launch_reduce<Reduce::Prod, bool, int64_t, bool>(in.data, out, geometry, stream);
        break;
    }
  } else if (op == Reduce::Sum && out_dtype == ScalarType::Int64) {
    switch (in_dtype) {
      case ScalarType::Bool: return launch_reduce<Reduce::Sum, bool, int64_t, int64_t>(in.data, out, geometry, stream);
      case ScalarType::UInt8:
        return launch_reduce<Reduce::Sum, uint8_t, int64_t, int64_t>(in.data, out, geometry, stream);
      case ScalarType::Int8:
        return launch_reduce<Reduce::Sum, int8_t, int64_t, int64_t>(in.data, out, geometry, stream);
      case ScalarType::Int16:
        return launch_reduce<Reduce::Sum, int16_t, int64_t, int64_t>(in.data, out, geometry, stream);
      case ScalarType::Int32:
        return launch_reduce<Reduce::Sum, int32_t, int64_t, int64_t>(in.data, out, geometry, stream);
      default: break;
    }
  }
  throw Error(std::string("reduce: ") + name + " of dtype " + std::string(dtype_name(in_dtype)) + " into dtype " +
              std::string(dtype_name(out_dtype)) + " is not implemented on CUDA");
}

}  // namespace gradiens::kernels::cuda
