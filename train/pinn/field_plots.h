// Plots of a PINN run's solution fields on its evaluation grid (two
// coordinates): the network's u, the reference and the absolute error.
#pragma once

#include <filesystem>
#include <vector>

#include "nn/modules/container.h"
#include "train/pinn/pinn_run.h"
#include "train/run/plots.h"

namespace gradiens::train {

// The three heatmaps (field_u, field_reference, field_error); none when the
// evaluation points are not a two-coordinate grid or there is no reference.
std::vector<Plot> field_plots(const PinnRun& run, const nn::AnyModule& net);

// Draws them into plots_dir (PNG and SVG, by gnuplot); returns the paths.
std::vector<std::filesystem::path> draw_field_plots(const std::filesystem::path& plots_dir, const PinnRun& run,
                                                    const nn::AnyModule& net);

}  // namespace gradiens::train
