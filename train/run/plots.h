// Plots of a run's metrics (loss, each monitored metric, learning rate),
// drawn as PNG and SVG by an external gnuplot.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "train/run/metrics_log.h"

namespace gradiens::train {

struct PlotSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

// Values on a regular grid, drawn as an image with a color bar.
struct Heatmap {
  std::vector<double> xs, ys;  // the grid's coordinates, increasing
  std::vector<double> values;  // values[j * xs.size() + i] at (xs[i], ys[j])
};

struct Plot {
  std::string name;  // file stem, e.g. "loss"
  std::string title, xlabel, ylabel;
  bool log_y = false;
  std::vector<PlotSeries> series;
  std::optional<Heatmap> heatmap{};  // drawn instead of the series when set
};

// The standard plots of a run, all against step: "loss" (every metric named
// "loss" or "<prefix>/loss", log y when all values are positive), "lr" (metrics
// named "lr", "<prefix>/lr" or "lr/<suffix>") and one per other metric in
// `metric_names`, named with slashes turned into underscores ("val_accuracy").
// Non-finite values are left out; series without points are dropped.
std::vector<Plot> standard_plots(const std::vector<MetricRecord>& records, const std::vector<std::string>& metric_names);

// Writes plots_dir/<name>.png and .svg of each plot that has points, by
// running gnuplot once; returns the paths written. Throws gradiens::Error
// when gnuplot is not installed or fails (callers treat it as a warning).
std::vector<std::filesystem::path> draw_plots(const std::filesystem::path& plots_dir, const std::vector<Plot>& plots);

// The same with another gnuplot executable (a name looked up on PATH, or a path).
std::vector<std::filesystem::path> draw_plots(const std::filesystem::path& plots_dir, const std::vector<Plot>& plots,
                                              const std::string& gnuplot_program);

}  // namespace gradiens::train
