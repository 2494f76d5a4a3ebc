// The Taylor-mode engine for MLPs (Linear layers, elementwise activations and
// Fourier features or a periodic embedding first): one forward pass carries the value, the first derivatives
// with respect to every input coordinate and, on request, a weighted Laplacian
// and pure derivatives d^k u/dx_i^k (k <= 4) through each layer (the forward
// Laplacian of Li et al., 2023; collapsed Taylor mode of Dangel et al., 2025):
//   z = W h + b maps every derivative linearly (the bias only the value);
//   an activation s gives G' = s'(z) G, L' = s'(z) L + s''(z) sum_i c_i G_i^2,
//   and along a pure coordinate with h1..h4 its derivatives (Faa di Bruno)
//     y2 = s' h2 + s'' h1^2
//     y3 = s' h3 + 3 s'' h1 h2 + s''' h1^3
//     y4 = s' h4 + s''(4 h1 h3 + 3 h2^2) + 6 s''' h1^2 h2 + s'''' h1^4.
// The derivatives travel as one jet tensor [K, N, w], so a Linear is one GEMM
// and an activation one fused op with its own backward
// (pinn/taylor/jet_activation.h). Training through it and create_graph work
// as for any op. Agrees with the nested engine (pinn/operators.h).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/tensor.h"
#include "nn/module.h"
#include "pinn/taylor/jet_mlp.h"

namespace gradiens::pinn {

// What the forward pass carries besides the value and the gradient.
struct TaylorRequest {
  bool laplacian = true;                    // carry sum_i c_i d2u/dx_i^2, collapsed into one jet block
  std::vector<double> laplacian_weights{};  // c_i (size d); empty means every c_i = 1
  std::vector<int64_t> pure_dims{};         // distinct coordinates i whose d^k u/dx_i^k are carried
  int pure_order = 2;                       // the highest k carried for pure_dims, 2..4 (k = 1 is in gradient)
};

struct TaylorOutputs {
  Tensor value;      // [N, m]
  Tensor gradient;   // [N, m, d]: d value_j / d x_i
  Tensor laplacian;  // [N, m]; undefined unless request.laplacian

  // d^order value / dx_dim^order, [N, m]: order 0 is value, 1 a column of
  // gradient, 2..pure_order for a dim in pure_dims. Anything not carried is
  // an Error saying what to request.
  Tensor pure(int64_t dim, int order) const;

 private:
  friend TaylorOutputs taylor_forward(const nn::Module& net, const Tensor& x, const TaylorRequest& request,
                                      std::vector<JetProbe>* probes);
  std::vector<int64_t> pure_dims_;
  int pure_order_ = 0;
  std::vector<Tensor> pure_;  // [N, m] per pure dim and order 2..pure_order_, dim-major
};

// Whether `net` is an MLP the engine carries: a Sequential (nested ones too)
// of Linear, Tanh, Sigmoid, SiLU, ReLU, Identity, FourierFeatures and
// PeriodicEmbedding, or one
// such layer.
bool taylor_supported(const nn::Module& net);

// The network's output at x [N, d] with its gradient and what `request` asks
// for. An unsupported layer, a request that does not fit x, or a layer whose
// weights do not fit its input is an Error naming it. With `probes`, the pass
// puts a probe on every Linear layer (pinn/taylor/jet_mlp.h), for per-sample
// Jacobians (pinn/least_squares.h).
TaylorOutputs taylor_forward(const nn::Module& net, const Tensor& x, const TaylorRequest& request = {},
                             std::vector<JetProbe>* probes = nullptr);

}  // namespace gradiens::pinn
