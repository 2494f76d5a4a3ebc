// The README's quick-start snippet, built with the examples so it keeps compiling.
#include <iostream>

#include "gradiens.h"
namespace gd = gradiens;

int main() {
  gd::manual_seed(0);
  auto opts = gd::TensorOptions().dtype(gd::kFloat64);
  auto x = gd::linspace(-1, 1, 64, opts).reshape({-1, 1}).requires_grad_();
  auto w1 = gd::randn({1, 16}, opts).requires_grad_(), b1 = gd::zeros({16}, opts);
  auto w2 = gd::randn({16, 1}, opts).requires_grad_();

  auto u = gd::matmul(gd::tanh(gd::matmul(x, w1) + b1), w2);
  // First and second derivatives of the network with respect to its input.
  auto u_x = gd::autograd::grad({u}, {x}, {gd::ones_like(u)}, true, /*create_graph=*/true)[0];
  auto u_xx = gd::autograd::grad({u_x}, {x}, {gd::ones_like(u_x)}, true, true)[0];

  auto loss = (u_xx + u).square().mean();  // a residual, as in a PINN
  loss.backward();                          // gradients through second derivatives
  std::cout << w1.grad().sizes()[1] << " weights updated, loss " << loss << "\n";
}
