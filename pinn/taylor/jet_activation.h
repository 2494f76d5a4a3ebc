// The jet of an elementwise activation as one differentiable op for the
// Taylor-mode engine (pinn/taylor.h): forward by the fused kernel of
// kernels/jet.h, backward by its fused twin, or by differentiable ops
// when grad mode is on (create_graph), so every higher derivative exists.
// A jet is [K, N, w]: K blocks of [N, w] in the order of kernels/jet.h.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/tensor.h"
#include "kernels/jet.h"

namespace gradiens::pinn {

using JetActivation = kernels::JetActivation;

// Which derivative blocks a jet carries, after the value (block 0) and the d
// gradient rows (blocks 1..d).
struct JetBlocks {
  int64_t coordinates = 0;                  // d
  bool laplacian = false;                   // block d + 1: sum_i c_i d2/dx_i^2
  std::vector<double> laplacian_weights{};  // c_i; empty: every c_i = 1
  std::vector<int64_t> pure_dims{};         // distinct coordinates, each with orders 2..pure_order
  int pure_order = 2;

  int64_t count() const {
    return 1 + coordinates + (laplacian ? 1 : 0) + static_cast<int64_t>(pure_dims.size()) * (pure_order - 1);
  }
  int64_t laplacian_block() const { return 1 + coordinates; }
  // The block of d^order/dx^order along pure_dims[index], order 2..pure_order.
  int64_t pure_block(int64_t index, int order) const {
    return 1 + coordinates + (laplacian ? 1 : 0) + index * (pure_order - 1) + (order - 2);
  }
  // The kernels' view of these blocks over `samples` rows of `width` units
  // (pointing into this object, which must outlive it).
  kernels::JetLayout layout(int64_t samples, int64_t width) const {
    kernels::JetLayout out;
    out.samples = samples;
    out.width = width;
    out.coordinates = coordinates;
    out.laplacian = laplacian;
    out.laplacian_weights = laplacian_weights.empty() ? nullptr : laplacian_weights.data();
    out.pure_dims = pure_dims.data();
    out.pure_count = static_cast<int64_t>(pure_dims.size());
    out.pure_order = pure_order;
    return out;
  }
};

// Ctx keeps integers only: a JetBlocks written to and read back from a list
// of them (the weights bit-cast), for the ops' backward.
void append_blocks(DimVector& ints, const JetBlocks& blocks);
JetBlocks read_blocks(const DimVector& ints, size_t& position);

// The jet of s(z) for z = jet[0] + bias (bias [w], or undefined for none) and
// the derivative blocks of jet, as a new [K, N, w] jet. Differentiable in jet
// and bias to every order.
Tensor jet_activation(JetActivation activation, const JetBlocks& blocks, const Tensor& jet, const Tensor& bias);

// The same jet computed by differentiable elementwise ops: the reference the
// fused kernel is tested against, and the path for dtypes it lacks.
Tensor jet_activation_composite(JetActivation activation, const JetBlocks& blocks, const Tensor& jet,
                                const Tensor& bias);

}  // namespace gradiens::pinn
