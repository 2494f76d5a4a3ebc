// What the tests of whole gradiens-train runs share: running a command,
// reading a file, a run's metric lines without wall-clock times, the one run
// directory under an --out folder, and writing a config into a folder.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

namespace gradiens::train::testing {

namespace fs = std::filesystem;

// Runs a shell command; returns its exit status (or 128 + the signal).
inline int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of metrics.jsonl without the wall-clock field.
inline std::vector<std::string> metric_lines(const fs::path& run_dir) {
  std::vector<std::string> lines;
  std::istringstream in(slurp(run_dir / "metrics.jsonl"));
  for (std::string line; std::getline(in, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    record.erase("time");
    lines.push_back(record.dump());
  }
  return lines;
}

// A file of the newest checkpoint of a run.
inline std::string latest_checkpoint_file(const fs::path& run_dir, const std::string& name) {
  const std::string latest = slurp(run_dir / "checkpoints" / "latest");
  return slurp(run_dir / "checkpoints" / latest.substr(0, latest.find('\n')) / name);
}

inline fs::path write_config(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path;
}

inline fs::path only_run_dir(const fs::path& out) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(out)) dirs.push_back(entry.path());
  REQUIRE(dirs.size() == 1);
  return dirs[0];
}

// `config` with "plots": false turned on.
inline std::string with_plots(std::string config) {
  config.replace(config.find("\"plots\": false"), 14, "\"plots\": true");
  return config;
}

// Runs `trainer` on `config` into a fresh `out` (which must succeed); returns the run directory.
inline fs::path run_fresh(const std::string& trainer, const fs::path& config, const fs::path& out) {
  fs::remove_all(out);
  REQUIRE(shell(trainer + " --config " + config.string() + " --out " + out.string() + " > /dev/null") == 0);
  return only_run_dir(out);
}

}  // namespace gradiens::train::testing
