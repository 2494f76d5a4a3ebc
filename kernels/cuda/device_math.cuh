// Building blocks every CUDA kernel file shares: the device type of each dtype
// and a dtype dispatch onto it, value conversions that round like the CPU's
// static_cast, strided offsets from a linear index, launch sizes and the fixed
// block reduction tree. Include only from .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "kernels/cuda/check.h"
#include "kernels/cuda/ops.h"
#include "kernels/error.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cuda {

// ---- dtypes on the device ---------------------------------------------------------
// float16 is __half and bfloat16 is __nv_bfloat16; both compute in float32 and
// round once per stored result, as on the CPU (Note [Reduced floats compute in float32]).

template <class T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// The type a kernel computes in for storage type T (float for the 16-bit floats).
template <class T>
using opmath_type = std::conditional_t<is_reduced_float_v<T>, float, T>;

[[noreturn]] inline void throw_unsupported_cuda_dtype(std::string_view op, ScalarType dtype) {
  throw Error(std::string(op) + ": not implemented for dtype " + std::string(dtype_name(dtype)) + " on CUDA");
}

// The one dtype dispatch of the CUDA kernels: calls f.template operator()<T>()
// with T the device type of `dtype`, or throws naming `op` when the dtype is
// outside the family: floating (float, double), floating and reduced, or all
// (every dtype). Ops with other families (binary's) switch themselves.
template <class F>
decltype(auto) dispatch_cuda_floating(ScalarType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case ScalarType::Float32: return f.template operator()<float>();
    case ScalarType::Float64: return f.template operator()<double>();
    default: throw_unsupported_cuda_dtype(op, dtype);
  }
}

// floating, and float16 / bfloat16 (which compute in float32).
template <class F>
decltype(auto) dispatch_cuda_floating_and_reduced(ScalarType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case ScalarType::Float16: return f.template operator()<__half>();
    case ScalarType::BFloat16: return f.template operator()<__nv_bfloat16>();
    default: return dispatch_cuda_floating(dtype, op, std::forward<F>(f));
  }
}

template <class F>
decltype(auto) dispatch_cuda_all(ScalarType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case ScalarType::UInt8: return f.template operator()<uint8_t>();
    case ScalarType::Int8: return f.template operator()<int8_t>();
    case ScalarType::Int16: return f.template operator()<int16_t>();
    case ScalarType::Int32: return f.template operator()<int32_t>();
    case ScalarType::Int64: return f.template operator()<int64_t>();
    case ScalarType::Float16: return f.template operator()<__half>();
    case ScalarType::BFloat16: return f.template operator()<__nv_bfloat16>();
    case ScalarType::Float32: return f.template operator()<float>();
    case ScalarType::Float64: return f.template operator()<double>();
    case ScalarType::Bool: return f.template operator()<bool>();
  }
  throw_unsupported_cuda_dtype(op, dtype);
}

inline cudaStream_t as_cuda_stream(StreamHandle stream) { return static_cast<cudaStream_t>(stream); }

// ---- conversions --------------------------------------------------------------
// Note [CUDA conversions follow the CPU's static_cast]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The CPU converts with static_cast through gradiens::Half / BFloat16, which
// have only float constructors and a float conversion operator. So every
// conversion into a 16-bit float goes through float first (double -> float ->
// half rounds twice, as on the CPU), every conversion out of one starts from
// its exact float value, and a NaN stored as float16 / bfloat16 has the CPU's
// bits (0x7E00 with the input's sign; 0x7FC0), not CUDA's canonical 0x7FFF.
// Floating to uint8, int8 and int16 goes through int64, which is what x86 does
// for the (undefined) out-of-range case: -1.0 becomes 255 as uint8 and 200.0
// becomes -56 as int8 there, where CUDA's direct conversion would saturate.

__host__ __device__ inline float to_float(__half value) { return __half2float(value); }
__host__ __device__ inline float to_float(__nv_bfloat16 value) { return __bfloat162float(value); }

__host__ __device__ inline __half float_to_half(float value) {
  if (value != value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    __half_raw raw;
    raw.x = static_cast<unsigned short>(((bits >> 16) & 0x8000u) | 0x7E00u);
    return __half(raw);
  }
  return __float2half_rn(value);
}

__host__ __device__ inline __nv_bfloat16 float_to_bfloat16(float value) {
  if (value != value) {
    __nv_bfloat16_raw raw;
    raw.x = 0x7FC0u;
    return __nv_bfloat16(raw);
  }
  return __float2bfloat16_rn(value);
}

// static_cast<To>(value) with the CPU's rounding (see the note above).
template <class To, class From>
__host__ __device__ inline To convert_value(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (is_reduced_float_v<From>) {
    return convert_value<To>(to_float(value));
  } else if constexpr (std::is_same_v<To, __half>) {
    return float_to_half(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return float_to_bfloat16(static_cast<float>(value));
  } else if constexpr ((std::is_same_v<To, uint8_t> || std::is_same_v<To, int8_t> || std::is_same_v<To, int16_t>) &&
                       std::is_floating_point_v<From>) {
    return static_cast<To>(static_cast<int64_t>(value));
  } else {
    return static_cast<To>(value);
  }
}

// A stored value as the type kernels compute in (float for the 16-bit floats).
template <class T>
__host__ __device__ inline opmath_type<T> load_as_opmath(T value) {
  return convert_value<opmath_type<T>>(value);
}

// ---- arithmetic that is never fused --------------------------------------------
// nvcc contracts a * b + c into one fma by default; the CPU build (ISO C++,
// no -march) never does. Where a formula must round like its CPU twin, its
// products and sums go through these, which the compiler leaves alone. (The
// host copies, used only by host-side checks, are plain: g++ does not contract
// in ISO mode.)
#ifdef __CUDA_ARCH__
__device__ inline float multiply_rounded(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double multiply_rounded(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float add_rounded(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add_rounded(double a, double b) { return __dadd_rn(a, b); }
#else
inline float multiply_rounded(float a, float b) { return a * b; }
inline double multiply_rounded(double a, double b) { return a * b; }
inline float add_rounded(float a, float b) { return a + b; }
inline double add_rounded(double a, double b) { return a + b; }
#endif

// Short names for kernels that transcribe a CPU formula step by step (the
// fused jet and RNN kernels): each product and sum rounded as on the CPU, and
// mul_add as Highway's MulAdd(a, b, c) = a * b + c with one rounding.
namespace rounded {
template <class T>
__device__ inline T mul(T a, T b) {
  return multiply_rounded(a, b);
}
template <class T>
__device__ inline T add(T a, T b) {
  return add_rounded(a, b);
}
template <class T>
__device__ inline T sub(T a, T b) {
  return add_rounded(a, -b);
}
__device__ inline float mul_add(float a, float b, float c) { return fmaf(a, b, c); }
__device__ inline double mul_add(double a, double b, double c) { return fma(a, b, c); }
}  // namespace rounded

// ---- math functions by overload ---------------------------------------------------
// CUDA's float and double functions (never the __expf-style intrinsics), under
// one name per function so a template over T picks the right precision.
__host__ __device__ inline float math_exp(float x) { return expf(x); }
__host__ __device__ inline double math_exp(double x) { return exp(x); }
__host__ __device__ inline float math_expm1(float x) { return expm1f(x); }
__host__ __device__ inline double math_expm1(double x) { return expm1(x); }
__host__ __device__ inline float math_log(float x) { return logf(x); }
__host__ __device__ inline double math_log(double x) { return log(x); }
__host__ __device__ inline float math_log1p(float x) { return log1pf(x); }
__host__ __device__ inline double math_log1p(double x) { return log1p(x); }
__host__ __device__ inline float math_sqrt(float x) { return sqrtf(x); }
__host__ __device__ inline double math_sqrt(double x) { return sqrt(x); }
__host__ __device__ inline float math_tanh(float x) { return tanhf(x); }
__host__ __device__ inline double math_tanh(double x) { return tanh(x); }
__host__ __device__ inline float math_sin(float x) { return sinf(x); }
__host__ __device__ inline double math_sin(double x) { return sin(x); }
__host__ __device__ inline float math_cos(float x) { return cosf(x); }
__host__ __device__ inline double math_cos(double x) { return cos(x); }
__host__ __device__ inline float math_tan(float x) { return tanf(x); }
__host__ __device__ inline double math_tan(double x) { return tan(x); }
__host__ __device__ inline float math_erf(float x) { return erff(x); }
__host__ __device__ inline double math_erf(double x) { return erf(x); }
__host__ __device__ inline float math_erfc(float x) { return erfcf(x); }
__host__ __device__ inline double math_erfc(double x) { return erfc(x); }
__host__ __device__ inline float math_abs(float x) { return fabsf(x); }
__host__ __device__ inline double math_abs(double x) { return fabs(x); }
__host__ __device__ inline float math_pow(float x, float y) { return powf(x, y); }
__host__ __device__ inline double math_pow(double x, double y) { return pow(x, y); }
__host__ __device__ inline float math_atan2(float y, float x) { return atan2f(y, x); }
__host__ __device__ inline double math_atan2(double y, double x) { return atan2(y, x); }
__host__ __device__ inline float math_nextafter(float from, float to) { return nextafterf(from, to); }
__host__ __device__ inline double math_nextafter(double from, double to) { return nextafter(from, to); }

// ---- launch sizes -------------------------------------------------------------

constexpr int kThreadsPerBlock = 256;
// Grid-stride loops cover the rest; the cap keeps a 32-bit index from
// overflowing (i + stride < 2^31 + 2^24 < 2^32).
constexpr int64_t kMaxBlocks = 65536;

inline unsigned int blocks_for(int64_t work_items) {
  const int64_t blocks = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// ---- strided offsets ------------------------------------------------------------

inline void check_shape(const Shape& shape, std::string_view op) {
  GD_CHECK(shape.ndim >= 0 && shape.ndim <= kMaxDims,
           std::string(op) + ": expected 0 to " + std::to_string(kMaxDims) + " dimensions, got " +
               std::to_string(shape.ndim));
  for (int d = 0; d < shape.ndim; ++d) {
    GD_CHECK(shape.sizes[d] >= 0, std::string(op) + ": negative size " + std::to_string(shape.sizes[d]) +
                                      " in dimension " + std::to_string(d));
  }
}

// Maps a linear row-major index over a shape to the element offset of each of
// kOperands operands. The dimensions are stored innermost first, after
// coalescing: size-1 dimensions are dropped and neighbours that are contiguous
// for every operand are merged, so a contiguous operand set becomes one
// dimension and needs no division at all.
template <int kOperands>
struct StridedIndexer {
  int ndim = 0;  // >= 1
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kOperands][kMaxDims] = {};

  // Index is uint32_t when the element count fits (a 64-bit division costs
  // several times a 32-bit one) and uint64_t otherwise.
  template <class Index>
  __host__ __device__ void offsets_of(Index linear, int64_t (&offsets)[kOperands]) const {
    for (int k = 0; k < kOperands; ++k) offsets[k] = 0;
#ifdef __CUDA_ARCH__  // unrolled, the dimension indices are constants (no local-memory arrays)
#pragma unroll
#endif
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == ndim - 1) {  // the outermost dimension: linear < sizes[d] already
        for (int k = 0; k < kOperands; ++k) offsets[k] += static_cast<int64_t>(linear) * strides[k][d];
        break;
      }
      const Index size = static_cast<Index>(sizes[d]);
      const Index quotient = linear / size;
      const Index index = linear - quotient * size;
      for (int k = 0; k < kOperands; ++k) offsets[k] += static_cast<int64_t>(index) * strides[k][d];
      linear = quotient;
    }
  }
};

// Builds the indexer of `operand_strides` (each an array of shape.ndim element
// strides, outermost first) over dimensions [first_dim, last_dim) of `shape`.
template <int kOperands>
StridedIndexer<kOperands> make_indexer(const Shape& shape, int first_dim, int last_dim,
                                       const int64_t* const (&operand_strides)[kOperands]) {
  StridedIndexer<kOperands> indexer;
  // Walk from the innermost dimension outwards, merging d into the current
  // innermost-first slot when, for every operand, stepping d once equals
  // stepping the slot through its whole size.
  for (int d = last_dim - 1; d >= first_dim; --d) {
    const int64_t size = shape.sizes[d];
    if (size == 1) continue;
    if (indexer.ndim > 0) {
      const int slot = indexer.ndim - 1;
      bool mergeable = true;
      for (int k = 0; k < kOperands; ++k)
        mergeable = mergeable && operand_strides[k][d] == indexer.strides[k][slot] * indexer.sizes[slot];
      if (mergeable) {
        indexer.sizes[slot] *= size;
        continue;
      }
    }
    const int slot = indexer.ndim++;
    indexer.sizes[slot] = size;
    for (int k = 0; k < kOperands; ++k) indexer.strides[k][slot] = operand_strides[k][d];
  }
  if (indexer.ndim == 0) {  // a single element (or no dimensions): one dimension of size 1
    indexer.ndim = 1;
    indexer.sizes[0] = 1;
  }
  return indexer;
}

// Runs op(offsets) for every element of `shape`, offsets holding each
// operand's element offset; op carries the typed base pointers.
template <int kOperands, class Index, class ElementOp>
__global__ void __launch_bounds__(kThreadsPerBlock)
    strided_elementwise_kernel(StridedIndexer<kOperands> indexer, Index numel, ElementOp op) {
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += stride) {
    int64_t offsets[kOperands];
    indexer.offsets_of(i, offsets);
    op(offsets);
  }
}

template <int kOperands, class ElementOp>
void launch_strided_elementwise(const Shape& shape, const int64_t* const (&operand_strides)[kOperands],
                                ElementOp op, StreamHandle stream) {
  const int64_t numel = shape.numel();
  if (numel == 0) return;
  const StridedIndexer<kOperands> indexer = make_indexer<kOperands>(shape, 0, shape.ndim, operand_strides);
  const unsigned int blocks = blocks_for(numel);
  if (numel <= std::numeric_limits<int32_t>::max()) {
    strided_elementwise_kernel<kOperands, uint32_t><<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
        indexer, static_cast<uint32_t>(numel), op);
  } else {
    strided_elementwise_kernel<kOperands, uint64_t><<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
        indexer, static_cast<uint64_t>(numel), op);
  }
  GD_CUDA_LAUNCH_CHECK();
}

// Runs op(i) for i in [0, n) (contiguous operands).
template <class ElementOp>
__global__ void __launch_bounds__(kThreadsPerBlock) contiguous_elementwise_kernel(int64_t n, ElementOp op) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) op(i);
}

template <class ElementOp>
void launch_contiguous_elementwise(int64_t n, ElementOp op, StreamHandle stream) {
  if (n == 0) return;
  contiguous_elementwise_kernel<<<blocks_for(n), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(n, op);
  GD_CUDA_LAUNCH_CHECK();
}

// ---- block reduction ----------------------------------------------------------
// Note [Fixed reduction tree]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A block of kThreadsPerBlock lanes reduces a range of `count` values: lane t
// combines values t, t + 256, t + 512, ... in that order, starting from its
// first value (no identity is added, so a sum of -0 stays -0); then lanes are
// halved in a shared-memory tree (lane t takes lane t + s for s = 128, 64,
// ..., 1) among the min(count, 256) lanes that hold a value. The order depends
// on `count` alone, never on timing, so a result is the same run to run.

// Reduces the lanes' values into the value returned to thread 0 (other threads
// get an unspecified value). Every thread of the block must call it; `count`
// lanes (threads 0 .. count-1, count >= 1) hold a value. The steps s >= 32 go
// through shared memory, the last five through warp 0's shuffles: the same
// tree either way, since lane t still takes lane t + s for t < s.
template <class Acc, class Combine>
__device__ Acc block_tree_reduce(Acc value, int count, Combine combine) {
  static_assert(kThreadsPerBlock % 64 == 0);
  __shared__ Acc lanes[kThreadsPerBlock];
  const int t = static_cast<int>(threadIdx.x);
  lanes[t] = value;
  __syncthreads();
#pragma unroll
  for (int s = kThreadsPerBlock / 2; s >= 32; s /= 2) {
    if (t < s && t + s < count) lanes[t] = combine(lanes[t], lanes[t + s]);
    __syncthreads();
  }
  Acc result = value;
  if (t < 32) {
    result = lanes[t];
#pragma unroll
    for (int s = 16; s > 0; s /= 2) {
      // Lanes t >= s combine garbage too; only lanes below s are read later.
      const Acc other = __shfl_down_sync(0xFFFFFFFFu, result, s);
      if (t + s < count) result = combine(result, other);
    }
  }
  __syncthreads();  // the next call overwrites lanes
  return result;
}

}  // namespace gradiens::kernels::cuda
