// Heatmaps of a PINN's solution, its reference and the error (train/pinn/field_plots.h).
#include "train/pinn/field_plots.h"

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens::train {

std::vector<Plot> field_plots(const PinnRun& run, const nn::AnyModule& net) {
  if (run.eval_grid.size() != 2 || !run.has_reference()) return {};
  NoGradGuard no_grad;
  const bool training = net.ptr()->is_training();
  net.ptr()->eval();
  const Tensor u = run.predict(net).contiguous();
  net.ptr()->train(training);
  const Tensor reference = run.eval_reference.contiguous();
  const Tensor error = (u - reference).abs().contiguous();
  const auto nx = static_cast<size_t>(run.eval_grid[0]), ny = static_cast<size_t>(run.eval_grid[1]);
  const Tensor points = run.eval_points.contiguous();
  const double* p = points.cpu_data_ptr<double>();
  Heatmap base;
  for (size_t i = 0; i < nx; ++i) base.xs.push_back(p[i * 2]);
  for (size_t j = 0; j < ny; ++j) base.ys.push_back(p[j * nx * 2 + 1]);
  auto values = [](const Tensor& t) { return std::vector<double>(t.cpu_data_ptr<double>(), t.cpu_data_ptr<double>() + t.numel()); };
  const std::string& x = run.context.names[0];
  const std::string& y = run.context.names[1];
  std::vector<Plot> plots;
  auto add = [&](const std::string& name, const std::string& title, const Tensor& field) {
    Plot plot{name, title, x, y, false, {}, base};
    plot.heatmap->values = values(field);
    plots.push_back(std::move(plot));
  };
  const double rel_l2 = (u - reference).norm().item<double>() / reference.norm().item<double>();
  add("field_u", "PINN solution u", u);
  add("field_reference", fmt::format("reference: {}", run.reference.description), reference);
  add("field_error", fmt::format("|u - reference| (relative L2 error {:.3e})", rel_l2), error);
  return plots;
}

std::vector<std::filesystem::path> draw_field_plots(const std::filesystem::path& plots_dir, const PinnRun& run,
                                                    const nn::AnyModule& net) {
  std::vector<Plot> plots = field_plots(run, net);
  if (plots.empty()) return {};
  return draw_plots(plots_dir, plots);
}

}  // namespace gradiens::train
