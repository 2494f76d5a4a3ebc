// A whole MLP's jet for the Taylor-mode engine (pinn/taylor.h), two ways: one
// fused op that runs the network on blocks of samples kept in cache, with its
// own backward (Note [Jet MLP in cache] in kernels/cpu/taylor.h), and one
// differentiable op per layer (a GEMM per Linear, jet_activation per
// activation), which the fused op's backward falls back to under create_graph.
#pragma once

#include <vector>

#include "engine/tensor.h"
#include "pinn/taylor/jet_activation.h"

namespace gradiens::pinn {

// One layer: a Linear (weight [out, in], bias [out] or undefined) or an
// activation; `mask` [width] (optional) limits the activation to the columns
// where it is 1, the others passing through (a periodic embedding's
// non-periodic coordinates). The fused op takes no mask.
struct JetMlpStep {
  bool linear = false;
  Tensor weight{}, bias{};
  JetActivation activation = JetActivation::Tanh;
  Tensor mask{};
};

// The jet [K, N, m] of the layers at x [N, d], in blocks' layout, by the fused op.
// Needs float32/float64 tensors of one dtype on one device, CPU or cuda
// (jet_mlp_fused_applies).
Tensor jet_mlp(const Tensor& x, const std::vector<JetMlpStep>& steps, const JetBlocks& blocks);
bool jet_mlp_fused_applies(const Tensor& x, const std::vector<JetMlpStep>& steps);

// The same jet by one differentiable op per layer.
Tensor jet_mlp_layered(const Tensor& x, const std::vector<JetMlpStep>& steps, const JetBlocks& blocks);

// One Linear layer of a probed pass: its weight and bias, its input jet H
// [K, N, in] (detached) and a zero leaf E [K, N, out] added to its output.
// Because samples never mix in an MLP, the gradient of a sum of per-sample
// residuals with respect to E holds each sample's own sensitivity D, and the
// residual of sample n has d r_n / dW = sum_k D[k, n]^T H[k, n] and
// d r_n / db = D[0, n] (the bias enters the value block only).
struct JetProbe {
  Tensor weight, bias, input, probe;
};

// The jet by the layered pass with a probe on every Linear, appended to `probes`.
Tensor jet_mlp_probed(const Tensor& x, const std::vector<JetMlpStep>& steps, const JetBlocks& blocks,
                      std::vector<JetProbe>& probes);

}  // namespace gradiens::pinn
