// What the reference solutions share: reading a [N, 2] tensor of (x, t) points,
// and writing a solution on a (t, x) grid as CSV for plotting.
#pragma once

#include <string>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::pinn {

// `points` as a contiguous float64 CPU tensor [N, 2] (columns x, t). An Error
// naming `who` unless it is a floating-point [N, 2] tensor (N may be 0).
Tensor reference_points(const Tensor& points, const std::string& who);

// Writes "t,x,u" and one row per grid point (t outer, x inner; 17 significant
// digits, so the file reads back bit for bit). u is [t.size(), x.size()], as
// on_grid returns it. An Error if the shapes disagree or the file cannot be written.
void write_grid_csv(const std::string& path, const std::vector<double>& t, const std::vector<double>& x,
                    const Tensor& u);

}  // namespace gradiens::pinn
