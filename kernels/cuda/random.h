// Counter-based random fills on CUDA: the device twins of kernels/cpu/random.h.
// They follow its Note [Philox stream layout], so uniform, randint and raw-bit
// fills equal the CPU's bit for bit; normals use the same formula and may
// differ in the last ulp or two (CUDA's log/sin/cos against the CPU's libm).
#pragma once

#include <cstdint>

#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {

// Each fill writes out[0, n) on `stream`, reading the stream (seed, offset),
// and returns the Philox blocks it consumes (philox_blocks_for_32bit_draws /
// _64bit_draws of kernels/random.h), which the caller adds to its offset.
// The checks match the CPU's: n >= 0 and the ranges below, else gradiens::Error.

// Uniform on [low, high) for float32 or float64 (low and high are first
// rounded to the dtype); never returns high. Needs low < high, finite width.
uint64_t fill_uniform(ScalarType dtype, void* out, int64_t n, uint64_t seed, uint64_t offset, double low,
                      double high, StreamHandle stream);

// Normal(mean, std^2) by Box-Muller for float32 or float64. Needs a finite
// mean and a finite std >= 0.
uint64_t fill_normal(ScalarType dtype, void* out, int64_t n, uint64_t seed, uint64_t offset, double mean,
                     double std, StreamHandle stream);

// Integers uniform on [low, high), 64 bits per draw. Needs low < high.
uint64_t fill_randint(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high,
                      StreamHandle stream);

// Raw Philox output words.
uint64_t fill_random_bits(uint32_t* out, int64_t n, uint64_t seed, uint64_t offset, StreamHandle stream);

}  // namespace gradiens::kernels::cuda
