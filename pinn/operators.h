// Differential operators of a network's output with respect to its input, by
// nested reverse mode (autograd::grad with create_graph), for any network:
// each result is itself differentiable, so a PDE residual built from them
// trains and can be differentiated again.
//   u: the output [N, m] (column `component` is differentiated), x: the input
//   [N, d] that requires grad and from which u was computed.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::pinn {

// du/dx: [N, d] (zeros where u does not depend on x).
Tensor grad(const Tensor& u, const Tensor& x, int64_t component = 0);
// The mixed partial derivative d^k u / dx_{dims[0]} ... dx_{dims[k-1]}, [N, 1]:
// partial(u, x, {0, 0}) is u_xx, partial(u, x, {0, 1}) is u_xy. An empty
// `dims` is u itself.
Tensor partial(const Tensor& u, const Tensor& x, const std::vector<int64_t>& dims, int64_t component = 0);
// sum_i d^2 u / dx_i^2 over every input coordinate, [N, 1].
Tensor laplacian(const Tensor& u, const Tensor& x, int64_t component = 0);
// sum_i dv_i / dx_i for a vector field v [N, d] of x [N, d], [N, 1].
Tensor divergence(const Tensor& v, const Tensor& x);

}  // namespace gradiens::pinn
