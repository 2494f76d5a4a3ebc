// pinn-table: runs each PINN problem of configs/pinn twice through
// gradiens-train and prints the relative L2 error (on the problem's fixed
// evaluation points) and the training time of each:
//   vanilla  PINNacle's protocol (Hao et al., NeurIPS 2024): a 5x100 tanh MLP,
//            Adam lr 1e-3 for 20,000 steps, 8192 domain / 2048 boundary /
//            2048 initial points drawn at random, fixed unit weights, float32;
//   best     the config as shipped: float64, its network, points, adaptive
//            sampling and weighting, Adam then L-BFGS.
// Each run's directory holds its metrics and the plots of u, the reference
// and the error (two-coordinate problems).
//   pinn-table [--only burgers,wave1d] [--protocol both|vanilla|best] [--vanilla-steps 20000] [--out DIR] [--keep]
// With --keep, runs already finished under DIR are read, not repeated, and
// interrupted ones (stopped by a signal, which writes a checkpoint) resume
// where they stopped: the vanilla column takes hours on one core.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Options {
  std::string configs = fs::path(GRADIENS_SOURCE_DIR) / "configs" / "pinn";
  std::string out = "pinn-table";
  std::vector<std::string> only;
  std::string protocol = "both";
  int64_t vanilla_steps = 20000;
  int threads = 1;
  bool keep = false;
};

// The best recipe's targets (relative L2 error), where the issue sets one.
const std::map<std::string, double> kTargets = {{"burgers", 5e-4},   {"poisson5d", 1e-4}, {"heat5d", 1e-4},
                                                {"heat_multiscale", 1e-2}, {"wave1d", 1e-2}, {"allen_cahn", 1e-3}};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// PINNacle's vanilla protocol applied to a shipped config.
json vanilla(json config, int64_t steps) {
  json layers = json::array();
  for (int i = 0; i < 5; ++i) {
    layers.push_back({{"type", "Linear"}, {"out_features", 100}});
    layers.push_back({{"type", "Tanh"}});
  }
  // The output width of the shipped network's last layer.
  const json& shipped = config["model"]["layers"];
  layers.push_back({{"type", "Linear"}, {"out_features", shipped.back().value("out_features", 1)}});
  config["model"] = {{"type", "Sequential"}, {"layers", layers}};
  config["dtype"] = "float32";
  json& pinn = config["pinn"];
  pinn["pde"]["points"] = 8192;
  pinn["pde"]["sampler"] = "pseudo";
  pinn["pde"]["weight"] = 1.0;
  for (json& condition : pinn["conditions"]) {
    condition["weight"] = 1.0;
    if (condition["type"] == "data") continue;
    condition["points"] = 2048;
    condition["sampler"] = "pseudo";
  }
  pinn.erase("weighting");
  pinn.erase("refinement");
  pinn.erase("resample_every");
  pinn.erase("causal");
  pinn.erase("output_transform");  // hard constraints: the soft conditions stand alone
  config["name"] = config["name"].get<std::string>() + "-vanilla";
  config["train"]["phases"] = json::array({{{"name", "Adam"}, {"optimizer", {{"type", "Adam"}, {"lr", 1e-3}}},
                                            {"steps", steps}}});
  config["train"]["log_every"] = 100;
  config["train"]["eval_every"] = {{"every", 1000}, {"unit", "steps"}};
  config["train"]["checkpoint"] = {{"every", 5000}, {"unit", "steps"}, {"keep_last", 1}};
  return config;
}

struct Result {
  bool ran = false;
  double rel_l2 = 0, seconds = 0;
  std::string run_dir;
};

// The run directory gradiens-train made under `out`, if any.
std::optional<fs::path> run_directory(const fs::path& out) {
  if (!fs::is_directory(out)) return std::nullopt;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.is_directory()) return entry.path();
  return std::nullopt;
}

json read_summary(const fs::path& run_dir) {
  const fs::path path = run_dir / "summary.json";
  return fs::exists(path) ? json::parse(slurp(path), nullptr, /*allow_exceptions=*/false) : json();
}

// A run that ended by itself ("completed", or early stopping), not by a signal.
bool finished(const json& summary) {
  return summary.is_object() && summary.contains("status") && summary["status"] != "interrupted";
}

Result run(const fs::path& config, const fs::path& out, const Options& options) {
  Result result;
  std::optional<fs::path> run_dir = options.keep ? run_directory(out) : std::nullopt;
  std::string command;
  if (run_dir && !finished(read_summary(*run_dir)) && fs::exists(*run_dir / "checkpoints")) {
    std::printf("  resuming %s\n", run_dir->string().c_str());
    command = fmt::format("{} --resume {} --progress lines >> {} 2>&1", GRADIENS_TRAIN_BINARY, run_dir->string(),
                          (out / "log.txt").string());
  } else if (!run_dir || !finished(read_summary(*run_dir))) {
    fs::remove_all(out);
    fs::create_directories(out);
    command = fmt::format("{} --config {} --out {} --set threads={} --set output.progress=lines > {} 2>&1",
                          GRADIENS_TRAIN_BINARY, config.string(), out.string(), options.threads,
                          (out / "log.txt").string());
  }
  if (!command.empty() && std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "pinn-table: %s failed or was stopped; see %s\n", config.string().c_str(),
                 (out / "log.txt").string().c_str());
    return result;
  }
  run_dir = run_directory(out);
  const json summary = run_dir ? read_summary(*run_dir) : json();
  if (!finished(summary)) {
    std::fprintf(stderr, "pinn-table: no finished run under %s\n", out.string().c_str());
    return result;
  }
  result.run_dir = run_dir->string();
  result.rel_l2 = summary["final_metrics"].value("val/rel_l2", -1.0);
  result.seconds = summary["wall_time_seconds"].get<double>();
  result.ran = true;
  return result;
}

std::string cell(const Result& r) {
  return r.ran ? fmt::format("{:.2e} | {:>7.1f} s", r.rel_l2, r.seconds) : "   -     |    -     ";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app("Each configs/pinn problem under PINNacle's vanilla protocol and with its own recipe", "pinn-table");
  app.add_option("--configs", options.configs, "the folder of PINN configs");
  app.add_option("--out", options.out, "where the runs and the table go");
  app.add_option("--only", options.only, "problems to run (config names without .json)")->delimiter(',');
  app.add_option("--protocol", options.protocol, "both, vanilla or best")
      ->check(CLI::IsMember({"both", "vanilla", "best"}));
  app.add_option("--vanilla-steps", options.vanilla_steps, "Adam steps of the vanilla protocol")->check(CLI::PositiveNumber);
  app.add_option("--threads", options.threads, "threads per run")->check(CLI::Range(1, 1024));
  app.add_flag("--keep", options.keep, "read finished runs under --out and resume interrupted ones");
  CLI11_PARSE(app, argc, argv);

  std::vector<fs::path> configs;
  for (const auto& entry : fs::directory_iterator(options.configs))
    if (entry.path().extension() == ".json") configs.push_back(entry.path());
  std::sort(configs.begin(), configs.end());
  const fs::path out = options.out;
  std::string table = "| problem | vanilla L2RE | vanilla time | best L2RE | best time | target |\n|---|---|---|---|---|---|\n";
  json results = json::object();
  for (const fs::path& path : configs) {
    const std::string name = path.stem().string();
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), name) == options.only.end()) continue;
    Result plain, best;
    if (options.protocol != "best") {
      const fs::path config = out / "configs" / (name + "-vanilla.json");
      fs::create_directories(config.parent_path());
      std::ofstream(config) << vanilla(json::parse(slurp(path)), options.vanilla_steps).dump(2) << "\n";
      std::printf("%s: vanilla protocol ...\n", name.c_str());
      std::fflush(stdout);
      plain = run(config, out / "vanilla" / name, options);
    }
    if (options.protocol != "vanilla") {
      std::printf("%s: best recipe ...\n", name.c_str());
      std::fflush(stdout);
      best = run(path, out / "best" / name, options);
    }
    auto target = kTargets.find(name);
    const std::string target_text = target == kTargets.end() ? "" : fmt::format("<= {:.0e}", target->second);
    table += fmt::format("| {} | {} | {} | {} |\n", name, cell(plain), cell(best), target_text);
    results[name] = {{"vanilla", {{"rel_l2", plain.rel_l2}, {"seconds", plain.seconds}, {"run", plain.run_dir}}},
                     {"best", {{"rel_l2", best.rel_l2}, {"seconds", best.seconds}, {"run", best.run_dir}}}};
    std::ofstream(out / "table.md") << table;
    std::ofstream(out / "results.json") << results.dump(2) << "\n";
  }
  std::printf("\n%s\nruns, plots and this table (table.md, results.json) are under %s\n", table.c_str(),
              out.string().c_str());
  return 0;
}
