// Device-neutral entry points of the counter-based random fills: a dense buffer
// filled from the Philox stream (seed, offset) by kernels/cpu/random.h on the
// CPU or kernels/cuda/random.h on a cuda device, both following Note [Philox
// stream layout] in kernels/cpu/random.h.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

struct PhiloxState {
  uint64_t seed;
  uint64_t offset;  // Philox blocks (128 bits each) already used on this seed
};

// Blocks a fill of n values will consume, known before the fill so that a
// Generator can reserve its range under a lock and fill outside it.
constexpr uint64_t philox_blocks_for_32bit_draws(int64_t n) { return static_cast<uint64_t>((n + 3) / 4); }
constexpr uint64_t philox_blocks_for_64bit_draws(int64_t n) { return static_cast<uint64_t>((n + 1) / 2); }

// Each fill writes out[0, n) (dense, on `device`) and returns the Philox blocks
// it consumed, which the caller adds to its offset. n must be >= 0; the ranges
// and std are checked and throw gradiens::Error. On a cuda device the fill is
// queued on device.stream; its uniform, integer and raw-bit values equal the
// CPU's bit for bit, its normals may differ in the last ulp or two (libm).

// Uniform on [low, high) for float32 or float64 (low and high rounded to the
// dtype first); never returns high. Needs low < high and a finite width.
uint64_t fill_uniform(ScalarType dtype, void* out, int64_t n, PhiloxState state, double low, double high,
                      const DeviceRef& device);

// Normal(mean, std^2) by Box-Muller for float32 or float64 (mean and std rounded
// to the dtype first). Needs a finite mean and std >= 0.
uint64_t fill_normal(ScalarType dtype, void* out, int64_t n, PhiloxState state, double mean, double std,
                     const DeviceRef& device);

// Integers uniform on [low, high), 64 bits per draw. Needs low < high.
uint64_t fill_randint(int64_t* out, int64_t n, PhiloxState state, int64_t low, int64_t high, const DeviceRef& device);

// Raw Philox output words, four per block.
uint64_t fill_random_bits(uint32_t* out, int64_t n, PhiloxState state, const DeviceRef& device);

}  // namespace gradiens::kernels
