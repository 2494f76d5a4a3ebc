// What the PINN tests share: float64 options, the largest difference of two
// tensors, and a small seeded tanh MLP in float64.
#pragma once

#include <cstdint>

#include "engine/functions.h"
#include "engine/generator.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"

namespace gradiens::pinn::testing {

inline const TensorOptions kF64 = TensorOptions().dtype(kFloat64);

inline double max_error(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

// in -> width -> width -> out, tanh between, weights drawn after manual_seed(seed).
inline nn::Sequential tanh_mlp(int64_t in, int64_t width, int64_t out, uint64_t seed) {
  manual_seed(seed);
  nn::Sequential net(nn::Linear(in, width), nn::Tanh(), nn::Linear(width, width), nn::Tanh(), nn::Linear(width, out));
  net->to(kFloat64);
  return net;
}

}  // namespace gradiens::pinn::testing
