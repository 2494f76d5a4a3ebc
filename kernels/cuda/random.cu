// Philox4x32-10 random fills on CUDA, one thread per Philox block; the stream
// layout and the conversions from words are those of kernels/cpu/random.cpp
// (Note [Philox stream layout] in kernels/cpu/random.h), step for step.
#include "kernels/cuda/random.h"

#include <Random123/philox.h>

#include <cmath>
#include <string>

#include "kernels/cpu/random.h"
#include "kernels/cuda/device_math.cuh"

namespace gradiens::kernels::cuda {
namespace {

struct PhiloxWords {
  uint32_t w[4];
};

// The CPU's philox_words: counter = offset + block as a 128-bit number.
__host__ __device__ inline PhiloxWords philox_words(uint64_t seed, uint64_t offset, uint64_t block) {
  const uint64_t counter = offset + block;
  const uint32_t carry = counter < offset ? 1u : 0u;
  const r123::Philox4x32::ctr_type ctr = {
      {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), carry, 0u}};
  const r123::Philox4x32::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  const r123::Philox4x32::ctr_type words = r123::Philox4x32()(ctr, key);
  return {{words[0], words[1], words[2], words[3]}};
}

__host__ __device__ inline uint64_t join64(uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; }

// High 64 bits of the 128-bit product.
__host__ __device__ inline uint64_t multiply_high(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
  return __umul64hi(a, b);
#else
  __extension__ using Uint128 = unsigned __int128;
  return static_cast<uint64_t>((static_cast<Uint128>(a) * b) >> 64);
#endif
}

// [0, 1) and (0, 1] with the full significand of the type (exact conversions).
__host__ __device__ inline float unit_float(uint32_t w) { return static_cast<float>(w >> 8) * 0x1p-24f; }
__host__ __device__ inline float unit_float_open_below(uint32_t w) {
  return static_cast<float>((w >> 8) + 1) * 0x1p-24f;
}
__host__ __device__ inline double unit_double(uint64_t w) { return static_cast<double>(w >> 11) * 0x1p-53; }
__host__ __device__ inline double unit_double_open_below(uint64_t w) {
  return static_cast<double>((w >> 11) + 1) * 0x1p-53;
}

// low + u * (high - low), rounded twice as on the CPU (never an fma); a y
// that rounds up to high steps back to the largest value below it.
template <class T>
__host__ __device__ T scale_half_open(T u, T low, T high) {
  const T y = add_rounded(low, multiply_rounded(u, high - low));
  return y < high ? y : math_nextafter(high, low);
}

template <class T>
struct NormalPair {
  T first;   // r cos(theta)
  T second;  // r sin(theta)
};

// Box-Muller as the CPU writes it: u1 in (0, 1], so the log never sees 0.
template <class T>
__host__ __device__ NormalPair<T> box_muller(T u1, T u2) {
  constexpr T kTwoPi = T(2) * T(3.14159265358979323846);  // the CPU's T(2) * pi_v<T>
  const T radius = math_sqrt(T(-2) * math_log(u1));
  const T theta = kTwoPi * u2;
  return {radius * math_cos(theta), radius * math_sin(theta)};
}

// Stores the first `count` of one block's values at out + first: a full
// block is one 16-byte store when out is 16-byte aligned (the block's first
// element then is too, since a block holds 16 bytes of values).
template <class T, int kCount>
__host__ __device__ void store_block(T* out, int64_t first, const T (&values)[kCount], int count) {
  static_assert(sizeof(T) * kCount == 16);
#ifdef __CUDA_ARCH__
  if (count == kCount && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
    struct alignas(16) Block {
      T values[kCount];
    } block;
    for (int k = 0; k < kCount; ++k) block.values[k] = values[k];
    *reinterpret_cast<Block*>(out + first) = block;
    return;
  }
#endif
  for (int k = 0; k < kCount; ++k) {  // a constant trip count keeps values in registers
    if (k < count) out[first + k] = values[k];
  }
}

// The per-block writers: each gets the block's words, the index of its first
// element and how many of its elements exist (fewer in the last block). They
// compute a whole block's values and store the ones that exist.

struct RandomBitsWriter {
  static constexpr int kPerBlock = 4;
  uint32_t* out;
  __host__ __device__ void operator()(const PhiloxWords& words, int64_t first, int count) const {
    store_block(out, first, words.w, count);
  }
};

struct UniformFloatWriter {
  static constexpr int kPerBlock = 4;
  float* out;
  float low, high;
  __host__ __device__ void operator()(const PhiloxWords& words, int64_t first, int count) const {
    float values[kPerBlock];
    for (int k = 0; k < kPerBlock; ++k) values[k] = scale_half_open(unit_float(words.w[k]), low, high);
    store_block(out, first, values, count);
  }
};

struct UniformDoubleWriter {
  static constexpr int kPerBlock = 2;
  double* out;
  double low, high;
  __host__ __device__ void operator()(const PhiloxWords& words, int64_t first, int count) const {
    double values[kPerBlock];
    for (int k = 0; k < kPerBlock; ++k)
      values[k] = scale_half_open(unit_double(join64(words.w[2 * k], words.w[2 * k + 1])), low, high);
    store_block(out, first, values, count);
  }
};

// Words 2p and 2p + 1 give elements 2p (cos) and 2p + 1 (sin).
struct NormalFloatWriter {
  static constexpr int kPerBlock = 4;
  float* out;
  float mean, std;
  __host__ __device__ void operator()(const PhiloxWords& words, int64_t first, int count) const {
    float values[kPerBlock];
    for (int pair = 0; pair < kPerBlock / 2; ++pair) {
      const NormalPair<float> z =
          box_muller(unit_float_open_below(words.w[2 * pair]), unit_float(words.w[2 * pair + 1]));
      values[2 * pair] = add_rounded(mean, multiply_rounded(std, z.first));
      values[2 * pair + 1] = add_rounded(mean, multiply_rounded(std, z.second));
    }
    store_block(out, first, values, count);
  }
};

struct NormalDoubleWriter {
  static constexpr int kPerBlock = 2;
  double* out;
  double mean, std;
  __host__ __device__ void operator()(const PhiloxWords& words, int64_t first, int count) const {
    const NormalPair<double> z = box_muller(unit_double_open_below(join64(words.w[0], words.w[1])),
                                            unit_double(join64(words.w[2], words.w[3])));
    const double values[kPerBlock] = {add_rounded(mean, multiply_rounded(std, z.first)),
                                      add_rounded(mean, multiply_rounded(std, z.second))};
    store_block(out, first, values, count);
  }
};

// Lemire's multiply-high without rejection; unsigned so the sum wraps mod 2^64
// (the result lies in [low, high), so it fits).
struct RandintWriter {
  static constexpr int kPerBlock = 2;
  int64_t* out;
  int64_t low;
  uint64_t width;  // high - low, which can exceed INT64_MAX
  __host__ __device__ void operator()(const PhiloxWords& words, int64_t first, int count) const {
    int64_t values[kPerBlock];
    for (int k = 0; k < kPerBlock; ++k) {
      const uint64_t draw = join64(words.w[2 * k], words.w[2 * k + 1]);
      values[k] = static_cast<int64_t>(static_cast<uint64_t>(low) + multiply_high(draw, width));
    }
    store_block(out, first, values, count);
  }
};

template <class Writer>
__global__ void __launch_bounds__(kThreadsPerBlock)
    philox_fill_kernel(uint64_t seed, uint64_t offset, int64_t n, int64_t philox_blocks, Writer writer) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t block = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; block < philox_blocks;
       block += stride) {
    const int64_t first = block * Writer::kPerBlock;
    const int count = static_cast<int>(min(static_cast<int64_t>(Writer::kPerBlock), n - first));
    writer(philox_words(seed, offset, static_cast<uint64_t>(block)), first, count);
  }
}

// Launches the fill and returns the blocks it consumes, counted as the CPU
// counts them: ceil(n / 4) for 32-bit draws, ceil(n / 2) for 64-bit ones.
template <class Writer>
uint64_t launch_philox_fill(int64_t n, uint64_t seed, uint64_t offset, Writer writer, StreamHandle stream) {
  static_assert(Writer::kPerBlock == 4 || Writer::kPerBlock == 2);
  const uint64_t philox_blocks = Writer::kPerBlock == 4 ? philox_blocks_for_32bit_draws(n)
                                                        : philox_blocks_for_64bit_draws(n);
  if (philox_blocks == 0) return 0;
  const int64_t work_items = static_cast<int64_t>(philox_blocks);
  philox_fill_kernel<<<blocks_for(work_items), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(seed, offset, n,
                                                                                               work_items, writer);
  GD_CUDA_LAUNCH_CHECK();
  return philox_blocks;
}

void check_count(int64_t n, const char* name) {
  GD_CHECK(n >= 0, std::string(name) + ": expected a non-negative number of elements, got " + std::to_string(n));
}

template <class T>
void check_uniform_range(T low, T high) {
  GD_CHECK(low < high, "uniform: expected low < high, got low=" + std::to_string(low) +
                           " and high=" + std::to_string(high));
  GD_CHECK(std::isfinite(high - low), "uniform: high - low must be finite, got low=" + std::to_string(low) +
                                          " and high=" + std::to_string(high));
}

template <class T>
void check_normal_params(T mean, T std) {
  GD_CHECK(std::isfinite(mean), "normal: expected a finite mean, got " + std::to_string(mean));
  GD_CHECK(std >= 0 && std::isfinite(std), "normal: expected a finite std >= 0, got " + std::to_string(std));
}

}  // namespace

uint64_t fill_uniform(ScalarType dtype, void* out, int64_t n, uint64_t seed, uint64_t offset, double low,
                      double high, StreamHandle stream) {
  check_count(n, "uniform");
  uint64_t used = 0;
  dispatch_cuda_floating(dtype, "uniform", [&]<class T>() {
    const T typed_low = static_cast<T>(low), typed_high = static_cast<T>(high);
    check_uniform_range(typed_low, typed_high);
    if constexpr (std::is_same_v<T, float>) {
      used = launch_philox_fill(n, seed, offset, UniformFloatWriter{static_cast<float*>(out), typed_low, typed_high},
                                stream);
    } else {
      used = launch_philox_fill(n, seed, offset, UniformDoubleWriter{static_cast<double*>(out), typed_low, typed_high},
                                stream);
    }
  });
  return used;
}

uint64_t fill_normal(ScalarType dtype, void* out, int64_t n, uint64_t seed, uint64_t offset, double mean,
                     double std, StreamHandle stream) {
  check_count(n, "normal");
  uint64_t used = 0;
  dispatch_cuda_floating(dtype, "normal", [&]<class T>() {
    const T typed_mean = static_cast<T>(mean), typed_std = static_cast<T>(std);
    check_normal_params(typed_mean, typed_std);
    if constexpr (std::is_same_v<T, float>) {
      used = launch_philox_fill(n, seed, offset, NormalFloatWriter{static_cast<float*>(out), typed_mean, typed_std},
                                stream);
    } else {
      used = launch_philox_fill(n, seed, offset, NormalDoubleWriter{static_cast<double*>(out), typed_mean, typed_std},
                                stream);
    }
  });
  return used;
}

uint64_t fill_randint(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high,
                      StreamHandle stream) {
  check_count(n, "randint");
  GD_CHECK(low < high, "randint: expected low < high, got low=" + std::to_string(low) +
                           " and high=" + std::to_string(high));
  const uint64_t width = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return launch_philox_fill(n, seed, offset, RandintWriter{out, low, width}, stream);
}

uint64_t fill_random_bits(uint32_t* out, int64_t n, uint64_t seed, uint64_t offset, StreamHandle stream) {
  check_count(n, "random_bits");
  return launch_philox_fill(n, seed, offset, RandomBitsWriter{out}, stream);
}

}  // namespace gradiens::kernels::cuda
