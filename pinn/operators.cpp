// The nested reverse-mode differential operators (pinn/operators.h).
#include "pinn/operators.h"

#include <fmt/format.h>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::pinn {

namespace {

void check_pair(const Tensor& u, const Tensor& x, const char* op) {
  GD_CHECK(u.defined() && x.defined(), fmt::format("pinn::{}: undefined tensor", op));
  GD_CHECK(x.dim() == 2, fmt::format("pinn::{}: x must be [N, d], got {} dimensions", op, x.dim()));
  GD_CHECK(u.dim() == 2 && u.size(0) == x.size(0),
           fmt::format("pinn::{}: u must be [N, m] with N = {} (x's rows), got [{}]", op, x.size(0),
                       fmt::join(u.sizes(), ", ")));
  GD_CHECK(x.requires_grad(), fmt::format("pinn::{}: x does not require grad, so u cannot be differentiated by it", op));
}

// d(column)/dx of a column [N, 1] of something computed from x: [N, d].
Tensor column_grad(const Tensor& column, const Tensor& x) {
  if (!column.requires_grad()) return zeros_like(x);  // constant in x
  Tensor g = autograd::grad({column}, {x}, {ones_like(column)}, /*retain_graph=*/true, /*create_graph=*/true,
                            /*allow_unused=*/true)[0];
  return g.defined() ? g : zeros_like(x);
}

Tensor select_column(const Tensor& u, int64_t component, const char* op) {
  GD_CHECK(component >= 0 && component < u.size(1),
           fmt::format("pinn::{}: component {} is out of range for u with {} columns", op, component, u.size(1)));
  return u.narrow(1, component, 1);
}

}  // namespace

Tensor grad(const Tensor& u, const Tensor& x, int64_t component) {
  check_pair(u, x, "grad");
  return column_grad(select_column(u, component, "grad"), x);
}

Tensor partial(const Tensor& u, const Tensor& x, const std::vector<int64_t>& dims, int64_t component) {
  check_pair(u, x, "partial");
  Tensor derivative = select_column(u, component, "partial");
  for (int64_t dim : dims) {
    GD_CHECK(dim >= 0 && dim < x.size(1),
             fmt::format("pinn::partial: coordinate {} is out of range for x with {} columns", dim, x.size(1)));
    derivative = column_grad(derivative, x).narrow(1, dim, 1);
  }
  return derivative;
}

Tensor laplacian(const Tensor& u, const Tensor& x, int64_t component) {
  check_pair(u, x, "laplacian");
  Tensor g = column_grad(select_column(u, component, "laplacian"), x);
  Tensor sum = zeros({x.size(0), 1}, x.options().requires_grad(false));
  for (int64_t i = 0; i < x.size(1); ++i) sum = sum + column_grad(g.narrow(1, i, 1), x).narrow(1, i, 1);
  return sum;
}

Tensor divergence(const Tensor& v, const Tensor& x) {
  check_pair(v, x, "divergence");
  GD_CHECK(v.size(1) == x.size(1), fmt::format("pinn::divergence: v must have one column per coordinate of x ({}), "
                                               "got {}", x.size(1), v.size(1)));
  Tensor sum = zeros({x.size(0), 1}, x.options().requires_grad(false));
  for (int64_t i = 0; i < x.size(1); ++i) sum = sum + column_grad(v.narrow(1, i, 1), x).narrow(1, i, 1);
  return sum;
}

}  // namespace gradiens::pinn
