// The Trainer: runs an Experiment's phases over one stream of batches, logs
// metrics, evaluates, stops early, writes checkpoints that resume bit for bit,
// and answers SIGINT/SIGTERM with a checkpoint. See Note [Exact resume].
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "train/experiment.h"

namespace gradiens::train {

struct TrainerOptions {
  std::filesystem::path run_dir;
  std::string progress = "auto";  // auto, bar, lines, none
  bool resume = false;
  std::string config_hash;        // of the resolved config without resume-safe keys
};

// What a finished (or interrupted) run reports.
struct RunResult {
  int64_t steps = 0;
  bool interrupted = false;
  int signal = 0;
  std::string stop_reason;                 // "completed", "early stopping on val/loss", ...
  std::map<std::string, double> final_metrics;
  std::optional<std::string> best_checkpoint;
  double seconds = 0;
};

RunResult train_experiment(Experiment& experiment, const TrainerOptions& options);

// The state_dict name of the first parameter holding a NaN or an infinity.
std::optional<std::string> first_nonfinite_parameter(const nn::Module& module);

// Evaluates `split` with the model in eval mode: its loss and the requested
// metrics ("loss", "accuracy", "top5_accuracy"); a confusion matrix is
// returned in `confusion` when asked for.
std::map<std::string, double> evaluate(const Experiment& experiment, const SplitData& split,
                                       const std::vector<std::string>& metrics, json* confusion = nullptr);

}  // namespace gradiens::train
