// What the PINN tests share: float64 options, the largest difference of two
// tensors, a small seeded tanh MLP in float64, and two engines' solutions compared.
#pragma once

#include <cstdint>

#include <doctest/doctest.h>

#include "engine/functions.h"
#include "engine/generator.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "pinn/solution.h"

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

// Two solutions of the same points and needs (u_x0x0, u_x1x1 and the
// Laplacian declared), by different engines: u to 1e-14, the rest to 1e-12.
inline void check_same_second_order(Solution& a, Solution& b) {
  CHECK(max_error(a.u(), b.u()) < 1e-14);
  CHECK(max_error(a.gradient(), b.gradient()) < 1e-12);
  CHECK(max_error(a.d({0, 0}), b.d({0, 0})) < 1e-12);
  CHECK(max_error(a.d({1, 1}), b.d({1, 1})) < 1e-12);
  CHECK(max_error(a.laplacian(), b.laplacian()) < 1e-12);
}

}  // namespace gradiens::pinn::testing
