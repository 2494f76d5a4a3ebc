// Counter-based random fills on the CPU: Philox4x32-10 (Random123) turned into
// uniform, normal, integer and raw-bit buffers, identical for any thread count.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/random.h"

namespace gradiens::kernels::cpu {

// Note [Philox stream layout]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A stream is named by (seed, offset). One Philox4x32-10 call ("block") maps a
// 128-bit counter and a 64-bit key to four 32-bit words:
//
//   key     = {lo32(seed), hi32(seed)}
//   counter = offset + b as a 128-bit number, little-endian in 32-bit words:
//             {lo32(offset + b), hi32(offset + b), carry, 0}
//
// where b = 0, 1, 2, ... is the block index inside one fill. Element i of a
// fill reads only block i / k (k from the table below), a pure function of
// (seed, offset, i): threads may split the blocks any way they like, and a
// CUDA kernel following this note reproduces the CPU bit for bit up to libm.
//
//   draw                        per block  element i uses words of block i/k
//   fill_random_bits   (u32)    k = 4      w[i%4]
//   fill_uniform       (float)  k = 4      w[i%4]
//   fill_normal        (float)  k = 4      u1 from w[2p], u2 from w[2p+1] with
//                                          p = (i%4)/2; even i cos, odd i sin
//   fill_uniform       (double) k = 2      u64 = w[2j+1] << 32 | w[2j], j = i%2
//   fill_normal        (double) k = 2      u1 from u64 of (w[0], w[1]), u2 from
//                                          u64 of (w[2], w[3]); even i cos, odd sin
//   fill_randint       (int64)  k = 2      u64 = w[2j+1] << 32 | w[2j], j = i%2
//
// A fill of n elements consumes ceil(n / k) blocks, the last one possibly in
// part; the unused words of that block are thrown away, never handed to the
// next fill. Every fill returns that block count, and the caller (a
// Generator) adds it to its offset: the next fill starts at the next unused
// counter, so consecutive fills never overlap. A fill of n = 0 consumes 0.
//
// Conversions from words:
//   float uniform:  u = (w >> 8) * 2^-24 in [0, 1), y = low + u * (high - low);
//                   a y that rounds up to high becomes nextafter(high, low).
//   double uniform: u = (u64 >> 11) * 2^-53, then as above.
//   normal:         Box-Muller. u1 = (bits + 1) * 2^-m in (0, 1] (never
//                   log(0)), u2 = bits * 2^-m in [0, 1); r = sqrt(-2 ln u1),
//                   z = {r cos(2 pi u2), r sin(2 pi u2)}; y = mean + std * z.
//                   m = 24 for float, 53 for double.
//   randint:        Lemire's multiply-high without rejection:
//                   y = low + (u64 * (high - low)) >> 64. The bias is at most
//                   (high - low) / 2^64 per value (below 2^-32 for any range
//                   under 2^32), and a fixed draw count keeps the layout above.

// The stream state and the block counts are shared with the CUDA twins
// (kernels/random.h); named here too for the CPU's callers.
using kernels::PhiloxState;
using kernels::philox_blocks_for_32bit_draws;
using kernels::philox_blocks_for_64bit_draws;

// The four words of block `block` of the stream `s` (see the note above).
std::array<uint32_t, 4> philox_block(PhiloxState s, uint64_t block);

// Each fill writes out[0, n) and returns the number of Philox blocks consumed.
// n must be >= 0; the ranges and std are checked and throw gradiens::Error.

// Uniform on [low, high); never returns high. Needs low < high, finite width.
uint64_t fill_uniform(float* out, int64_t n, PhiloxState s, float low, float high);
uint64_t fill_uniform(double* out, int64_t n, PhiloxState s, double low, double high);

// Normal(mean, std^2) by Box-Muller. Needs finite mean and std >= 0.
uint64_t fill_normal(float* out, int64_t n, PhiloxState s, float mean, float std);
uint64_t fill_normal(double* out, int64_t n, PhiloxState s, double mean, double std);

// Integers uniform on [low, high), 64 bits per draw. Needs low < high.
uint64_t fill_randint(int64_t* out, int64_t n, PhiloxState s, int64_t low, int64_t high);

// Raw Philox output words.
uint64_t fill_random_bits(uint32_t* out, int64_t n, PhiloxState s);

}  // namespace gradiens::kernels::cpu
