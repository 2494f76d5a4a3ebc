// The Taylor-mode engine for MLPs (Linear layers and elementwise activations):
// one forward pass carries the value, the first derivatives with respect to
// every input coordinate and the Laplacian through each layer (the forward
// Laplacian of Li et al., 2023; collapsed Taylor mode of Dangel et al., 2025):
//   z = W h + b maps all three linearly (the bias only the value);
//   an activation s gives G' = s'(z) G and L' = s'(z) L + s''(z) sum_d G_d^2.
// Written with differentiable ops, so training through it and create_graph
// work as for any op. Agrees with the nested engine (pinn/operators.h).
#pragma once

#include "engine/tensor.h"
#include "nn/module.h"

namespace gradiens::pinn {

struct TaylorOutputs {
  Tensor value;      // [N, m]
  Tensor gradient;   // [N, m, d]: d value_j / d x_i
  Tensor laplacian;  // [N, m]
};

// Whether `net` is an MLP the engine carries: a Sequential (nested ones too)
// of Linear, Tanh, Sigmoid, SiLU, ReLU and Identity, or one such layer.
bool taylor_supported(const nn::Module& net);

// The network's output at x [N, d] with its gradient and Laplacian in x. An
// unsupported layer is an Error naming it.
TaylorOutputs taylor_forward(const nn::Module& net, const Tensor& x);

}  // namespace gradiens::pinn
