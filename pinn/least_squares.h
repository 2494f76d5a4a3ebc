// A PINN's loss as a sum of squares, for Gauss-Newton and Levenberg-Marquardt
// (optim/levenberg_marquardt.h): the weighted residuals
//   rho = sqrt(f_n) r_nc over every term, point and component
// (f from Problem::point_weights), so that ||rho||^2 is Problem::losses'
// total, and their Jacobian with respect to the parameters, one row per
// residual. The network's columns come from one Taylor-mode pass with probes
// (pinn/taylor/jet_mlp.h) and one backward per term and residual component:
// samples never mix in an MLP, so that backward holds every sample's own
// sensitivity. Scalar PDE parameters get theirs by differentiating twice.
// Needs the Taylor engine and terms whose residual rows each read their own
// point (not the periodic condition, which pairs points).
#pragma once

#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/modules/container.h"
#include "pinn/problem.h"

namespace gradiens::pinn {

struct WeightedResiduals {
  std::vector<std::string> names;  // one per term, as Losses::names
  std::vector<Tensor> values;      // each term's unweighted loss, as Losses::values (no graph)
  Tensor residuals;                // rho [R], float64
  Tensor jacobian;                 // d rho / d params [R, P], float64, when asked
};

// Whether weighted_residuals can give the Jacobian for `net`: the Taylor
// engine serves every term and no term pairs points; when not, `why` says why.
bool least_squares_supported(const Problem& problem, const nn::AnyModule& net, std::string* why = nullptr);

// The weighted residuals of `problem` for `net` at the terms' current points;
// with `jacobian`, their Jacobian with respect to `params` flattened in order
// (the network's Linear weights and biases, and scalar PDE parameters; a
// parameter the residuals do not read gets zero columns).
WeightedResiduals weighted_residuals(const Problem& problem, const nn::AnyModule& net, const std::vector<Tensor>& params,
                                     bool jacobian);

}  // namespace gradiens::pinn
