// standard_plots picks the series of a run; draw_plots writes one gnuplot
// script (data inline) and runs gnuplot on it with posix_spawnp.
#include "train/run/plots.h"

#include <cerrno>
#include <cmath>
#include <set>
#include <system_error>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "kernels/error.h"
#include "train/run/files.h"

extern char** environ;

namespace gradiens::train {
namespace fs = std::filesystem;

namespace {

// "loss", "val/loss", and a PINN term's "train/loss_pde".
bool is_loss(const std::string& name) {
  return name == "loss" || name.ends_with("/loss") || name.find("/loss_") != std::string::npos;
}
bool is_learning_rate(const std::string& name) {
  return name == "lr" || name.ends_with("/lr") || name.starts_with("lr/");
}

PlotSeries series_of(const std::vector<MetricRecord>& records, const std::string& name) {
  PlotSeries series{name, {}};
  for (const MetricRecord& record : records) {
    auto found = record.values.find(name);
    if (found != record.values.end() && std::isfinite(found->second))
      series.points.emplace_back(static_cast<double>(record.step), found->second);
  }
  return series;
}

// A gnuplot single-quoted string: no escapes inside except '' for a quote,
// so any title is safe once quotes are doubled and line breaks flattened.
std::string gnuplot_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "''";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out + "'";
}

// The points gnuplot can draw: finite, and positive on a log axis.
std::vector<std::pair<double, double>> drawable(const PlotSeries& series, bool log_y) {
  std::vector<std::pair<double, double>> points;
  for (const auto& [x, y] : series.points)
    if (std::isfinite(x) && std::isfinite(y) && (!log_y || y > 0)) points.emplace_back(x, y);
  return points;
}

std::string heatmap_script(const Plot& plot, size_t index) {
  const Heatmap& map = *plot.heatmap;
  const size_t nx = map.xs.size(), ny = map.ys.size();
  if (nx == 0 || ny == 0 || map.values.size() != nx * ny)
    throw Error(fmt::format("plots: heatmap {} has {} values for a {} x {} grid", plot.name, map.values.size(), nx, ny));
  std::string block = fmt::format("$plot{}_map", index);
  std::string data = block + " << EOD\n";
  for (size_t j = 0; j < ny; ++j) {
    for (size_t i = 0; i < nx; ++i) {
      const double v = map.values[j * nx + i];
      data += fmt::format("{} {} {}\n", map.xs[i], map.ys[j], std::isfinite(v) ? fmt::format("{}", v) : "NaN");
    }
    data += "\n";
  }
  data += "EOD\n";
  return data + fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset view map\nset palette rgb 33,13,10\n"
                            "set autoscale xfix\nset autoscale yfix\nplot {} using 1:2:3 with image notitle\n",
                            gnuplot_string(plot.title), gnuplot_string(plot.xlabel), gnuplot_string(plot.ylabel), block);
}

std::string plot_script(const Plot& plot, size_t index) {
  if (plot.heatmap) return heatmap_script(plot, index);
  std::string data, commands;
  for (size_t s = 0; s < plot.series.size(); ++s) {
    std::vector<std::pair<double, double>> points = drawable(plot.series[s], plot.log_y);
    if (points.empty()) continue;
    std::string block = fmt::format("$plot{}_series{}", index, s);
    data += block + " << EOD\n";
    for (const auto& [x, y] : points) data += fmt::format("{} {}\n", x, y);
    data += "EOD\n";
    commands += fmt::format("{}{} using 1:2 {} title {}", commands.empty() ? "plot " : ", ", block,
                            points.size() > 1 ? "with lines lw 2" : "with points pt 7", gnuplot_string(plot.series[s].label));
  }
  if (commands.empty()) return "";
  std::string settings = fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset grid\nset key top right\n{}",
                                     gnuplot_string(plot.title), gnuplot_string(plot.xlabel), gnuplot_string(plot.ylabel),
                                     plot.log_y ? "set logscale y\n" : "");
  return data + settings + commands + "\n";
}

std::string tail_of(const std::string& text, size_t limit) {
  return text.size() <= limit ? text : "..." + text.substr(text.size() - limit);
}

// Runs `program script` with its output captured; returns the exit status and
// fills `messages`. Throws when the program cannot be started at all.
int run_gnuplot(const std::string& program, const fs::path& script, const fs::path& messages_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, messages_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::string script_arg = script.string();
  char* argv[] = {const_cast<char*>(program.c_str()), script_arg.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT) throw Error(fmt::format("plots: gnuplot is not installed ('{}' not found on PATH)", program));
  if (rc != 0)
    throw Error(fmt::format("plots: cannot run '{}': {}", program, std::error_code(rc, std::generic_category()).message()));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw Error(fmt::format("plots: waiting for '{}' failed: {}", program,
                              std::error_code(errno, std::generic_category()).message()));
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

std::vector<Plot> standard_plots(const std::vector<MetricRecord>& records, const std::vector<std::string>& metric_names) {
  Plot loss{"loss", "Loss", "step", "loss", false, {}};
  Plot learning_rate{"lr", "Learning rate", "step", "learning rate", false, {}};
  std::vector<Plot> others;
  std::set<std::string> seen, stems = {"loss", "lr"};
  for (const std::string& name : metric_names) {
    if (!seen.insert(name).second) continue;
    PlotSeries series = series_of(records, name);
    if (series.points.empty()) continue;
    if (is_loss(name)) {
      loss.series.push_back(std::move(series));
    } else if (is_learning_rate(name)) {
      learning_rate.series.push_back(std::move(series));
    } else {
      std::string stem = name;
      for (char& c : stem)
        if (c == '/') c = '_';
      // "val/acc" and "val_acc" would otherwise overwrite each other's files.
      for (int n = 2; !stems.insert(stem).second; ++n) stem = fmt::format("{}_{}", stem, n);
      others.push_back(Plot{stem, name, "step", name, false, {std::move(series)}});
    }
  }
  bool all_positive = true;
  for (const PlotSeries& series : loss.series)
    for (const auto& point : series.points) all_positive = all_positive && point.second > 0;
  loss.log_y = all_positive;

  std::vector<Plot> plots;
  if (!loss.series.empty()) plots.push_back(std::move(loss));
  for (Plot& plot : others) plots.push_back(std::move(plot));
  if (!learning_rate.series.empty()) plots.push_back(std::move(learning_rate));
  return plots;
}

std::vector<fs::path> draw_plots(const fs::path& plots_dir, const std::vector<Plot>& plots) {
  return draw_plots(plots_dir, plots, "gnuplot");
}

std::vector<fs::path> draw_plots(const fs::path& plots_dir, const std::vector<Plot>& plots,
                                 const std::string& gnuplot_program) {
  std::string script;
  std::vector<fs::path> outputs;
  for (size_t i = 0; i < plots.size(); ++i) {
    const Plot& plot = plots[i];
    if (plot.name.empty() || plot.name.find('/') != std::string::npos)
      throw Error(fmt::format("plots: invalid plot name \"{}\" (a file stem without '/')", plot.name));
    std::string body = plot_script(plot, i);
    if (body.empty()) continue;
    fs::path png = plots_dir / (plot.name + ".png"), svg = plots_dir / (plot.name + ".svg");
    // `reset` keeps the terminal and output, so each file sets both first.
    script += fmt::format("reset\nset terminal pngcairo size 960,600 noenhanced\nset output {}\n{}", gnuplot_string(png.string()),
                          body);
    script += fmt::format("reset\nset terminal svg size 960,600 noenhanced background rgb 'white'\nset output {}\n{}",
                          gnuplot_string(svg.string()), body);
    script += "unset output\n";
    outputs.push_back(png);
    outputs.push_back(svg);
  }
  if (outputs.empty()) return outputs;

  std::error_code ec;
  fs::create_directories(plots_dir, ec);
  if (ec) throw Error(fmt::format("plots: cannot create '{}': {}", plots_dir.string(), ec.message()));
  // A stale file from an earlier run must not pass for one gnuplot just wrote.
  for (const fs::path& path : outputs) fs::remove(path, ec);
  fs::path script_path = plots_dir / fmt::format(".plots.{}.gp", ::getpid());
  fs::path messages_path = plots_dir / fmt::format(".plots.{}.log", ::getpid());
  int status = 0;
  std::string messages;
  try {
    write_file_atomic(script_path, script);
    status = run_gnuplot(gnuplot_program, script_path, messages_path);
    messages = read_file(messages_path);
  } catch (...) {
    fs::remove(script_path, ec);
    fs::remove(messages_path, ec);
    throw;
  }
  fs::remove(script_path, ec);
  fs::remove(messages_path, ec);
  // posix_spawnp of an older C library reports a missing program only as exit status 127.
  if (status == 127)
    throw Error(fmt::format("plots: gnuplot is not installed ('{}' could not be run): {}", gnuplot_program,
                            tail_of(messages, 1000)));
  if (status != 0)
    throw Error(fmt::format("plots: gnuplot failed (exit status {}): {}", status, tail_of(messages, 2000)));
  for (const fs::path& path : outputs)
    if (fs::file_size(path, ec) == 0 || ec)
      throw Error(fmt::format("plots: gnuplot did not write '{}': {}", path.string(), tail_of(messages, 2000)));
  return outputs;
}

}  // namespace gradiens::train
