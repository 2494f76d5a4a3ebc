// Whole runs of the built gradiens-train: the shipped configs validate (and
// match the exported JSON Schema), a run killed at several points and resumed
// ends bit for bit where an uninterrupted one does, CSV and plots.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/train/run_test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace gradiens::train::testing;

namespace {

const std::string kTrainer = GRADIENS_TRAIN_BINARY;
const fs::path kSource = GRADIENS_SOURCE_DIR;
const fs::path kWork = GRADIENS_TRAIN_TEST_DIR;

std::string final_weights(const fs::path& run_dir) { return latest_checkpoint_file(run_dir, "model.safetensors"); }

// A small run with dropout, two phases (the second an L-BFGS on full batches
// would need accumulate 1; here SGD with momentum), a per-step scheduler and
// checkpoints every 3 steps: 5 epochs of 7 batches.
const char* kResumeConfig = R"({
  "version": 1, "name": "resume", "seed": 11,
  "model": {"type": "Sequential", "layers": [
    {"type": "Linear", "out_features": 12}, {"type": "Tanh"}, {"type": "Dropout", "p": 0.2},
    {"type": "Linear", "out_features": 3}]},
  "data": {"train": {"type": "SyntheticClassification", "size": 100, "features": 5, "classes": 3, "seed": 4},
           "val": {"type": "SyntheticClassification", "size": 40, "features": 5, "classes": 3, "seed": 4},
           "loader": {"batch_size": 15}},
  "loss": {"type": "cross_entropy", "label_smoothing": 0.1},
  "metrics": {"train": ["loss", "accuracy", "lr", "grad_norm"], "val": ["loss", "accuracy"]},
  "train": {
    "phases": [
      {"optimizer": {"type": "Adam", "lr": 0.02}, "epochs": 2,
       "scheduler": {"type": "StepLR", "step_size": 4, "gamma": 0.7, "interval": "step"}},
      {"optimizer": {"type": "SGD", "lr": 0.05, "momentum": 0.9}, "steps": 19,
       "scheduler": {"type": "ReduceLROnPlateau", "monitor": "val/loss", "patience": 0, "factor": 0.5}}],
    "log_every": 2,
    "grad_clip": {"max_norm": 5.0},
    "eval_every": {"every": 5, "unit": "steps"},
    "checkpoint": {"every": 3, "unit": "steps", "keep_last": 2,
                   "keep_best": {"k": 1, "monitor": "val/accuracy", "mode": "max"}}
  },
  "output": {"plots": false, "progress": "lines"}
})";

fs::path write_config(const std::string& name, const std::string& text) {
  return gradiens::train::testing::write_config(kWork, name, text);
}

}  // namespace

// Debian's interpreter, where python3-jsonschema (scripts/install-deps.sh) installs.
TEST_CASE("runs: every shipped config validates against the schema and passes --validate") {
  fs::create_directories(kWork);
  const fs::path schema = kWork / "schema.json";
  REQUIRE(shell(kTrainer + " --print-schema > " + schema.string()) == 0);
  const json parsed = json::parse(slurp(schema));
  CHECK(parsed["$schema"] == "http://json-schema.org/draft-07/schema#");
  int configs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "configs")) {
    if (entry.path().extension() != ".json") continue;
    ++configs;
    CAPTURE(entry.path().string());
    const std::string check = "/usr/bin/python3 -c \"import json, jsonschema, sys; jsonschema.validate(json.load(open(sys.argv[1])), "
                              "json.load(open(sys.argv[2])))\" " + entry.path().string() + " " + schema.string();
    CHECK(shell(check) == 0);
    CHECK(shell(kTrainer + " --config " + entry.path().string() + " --validate > /dev/null") == 0);
  }
  CHECK(configs >= 5);
  // The schema rejects what the validator rejects: a misspelled key.
  const fs::path typo = write_config("typo.json", R"({"version": 1, "modle": {}})");
  CHECK(shell("/usr/bin/python3 -c \"import json, jsonschema, sys; jsonschema.validate(json.load(open(sys.argv[1])), "
              "json.load(open(sys.argv[2])))\" " + typo.string() + " " + schema.string() + " 2> /dev/null") != 0);
  CHECK(shell(kTrainer + " --config " + typo.string() + " --validate 2> /dev/null") == 2);
}

TEST_CASE("runs: a run killed at any point and resumed ends bit for bit as an uninterrupted one") {
  const fs::path config = write_config("resume.json", kResumeConfig);
  const fs::path reference_out = kWork / "resume_reference";
  fs::remove_all(reference_out);
  REQUIRE(shell(kTrainer + " --config " + config.string() + " --out " + reference_out.string() + " > /dev/null") == 0);
  const fs::path reference = only_run_dir(reference_out);
  const std::vector<std::string> reference_lines = metric_lines(reference);
  const std::string reference_weights = final_weights(reference);
  REQUIRE(reference_lines.size() > 10);

  // Mid-epoch (step 4 of 7 per epoch), just after a checkpoint (6), at the
  // phase boundary (14), inside phase 2, during a checkpoint write (9), and
  // from a checkpoint taken at the phase boundary (every 7 steps: 14, killed
  // at 16). Checkpoint cadence does not change the results, so every run is
  // compared with the same reference.
  for (const std::string fault : {"kill_at_step:4", "kill_at_step:6", "kill_at_step:14", "kill_at_step:20",
                                  "kill_in_checkpoint:9", "kill_at_step:16"}) {
    CAPTURE(fault);
    const fs::path out = kWork / ("resume_" + fault.substr(fault.find(':') + 1) + fault.substr(0, 7));
    fs::remove_all(out);
    const std::string cadence = fault == "kill_at_step:16" ? " --set train.checkpoint.every=7" : "";
    CHECK(shell("GRADIENS_TRAIN_FAULT=" + fault + " " + kTrainer + " --config " + config.string() + cadence +
                " --out " + out.string() + " > /dev/null 2>&1") == 128 + 9);
    const fs::path run = only_run_dir(out);
    // Killed where intended: the checkpoint being written is left incomplete.
    if (fault == "kill_in_checkpoint:9") CHECK(fs::exists(run / "checkpoints" / "step-000000009.tmp"));
    CHECK(metric_lines(run).size() < reference_lines.size());
    std::string resume_log = (kWork / "resume_log").string();
    if (fault == "kill_at_step:16") CHECK(fs::exists(run / "checkpoints" / "step-000000014"));
    if (fault == "kill_at_step:20") {
      // Hand-edit the newest checkpoint (step 18): resume passes over it to step 15's.
      std::ofstream(run / "checkpoints" / "step-000000018" / "trainer.json", std::ios::app) << " ";
    }
    CHECK(shell(kTrainer + " --resume " + run.string() + " > " + resume_log) == 0);
    if (fault == "kill_at_step:20") {
      const std::string log = slurp(resume_log);
      CHECK(log.find("passed over a checkpoint: ") != std::string::npos);
      CHECK(log.find("step-000000018: trainer.json") != std::string::npos);
      CHECK(log.find("resumed from " + (run / "checkpoints" / "step-000000015").string()) != std::string::npos);
    }
    CHECK(metric_lines(run) == reference_lines);
    CHECK(final_weights(run) == reference_weights);
    // The CSV has one header, and as many rows as the JSONL.
    const std::string csv = slurp(run / "metrics.csv");
    CHECK(csv.find("step,epoch,phase,time") == 0);
    CHECK(csv.find("step,epoch,phase,time", 1) == std::string::npos);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == static_cast<long>(reference_lines.size()) + 1);
  }
}

TEST_CASE("runs: run directory, summary, plots and resume rules") {
  const fs::path config = write_config("plots.json", with_plots(kResumeConfig));
  const fs::path out = kWork / "plots_run";
  const fs::path run = run_fresh(kTrainer, config, out);
  CHECK(run.filename().string().rfind("resume-", 0) == 0);
  CHECK(run.filename().string().size() == std::string("resume-").size() + 8);
  CHECK(fs::exists(run / "overrides.txt"));
  for (const char* file : {"config.input.json", "config.resolved.json", "run.json", "metrics.jsonl", "metrics.csv",
                           "summary.json", "plots/loss.png", "plots/loss.svg", "plots/lr.png", "plots/val_accuracy.svg"}) {
    CAPTURE(file);
    REQUIRE(fs::exists(run / file));
    CHECK(fs::file_size(run / file) > 0);
  }
  CHECK(slurp(run / "plots/loss.svg").find("<svg") != std::string::npos);
  const json summary = json::parse(slurp(run / "summary.json"));
  CHECK(summary["status"] == "completed");
  CHECK(summary["steps"] == 33);  // 2 epochs of 7 steps, then 19
  CHECK(summary["final_metrics"].contains("val/accuracy"));
  // The same config again is refused; a results-changing --set on resume too.
  CHECK(shell(kTrainer + " --config " + config.string() + " --out " + out.string() + " > /dev/null 2>&1") == 2);
  const fs::path stderr_file = kWork / "resume_rules_stderr";
  CHECK(shell(kTrainer + " --resume " + run.string() + " --set seed=5 > /dev/null 2> " + stderr_file.string()) == 2);
  CHECK(slurp(stderr_file) == "gradiens-train: --set seed=5: seed changes the run's results, so it cannot change on "
                              "--resume (keys that may: epochs, steps, logging, evaluation and checkpoint cadence, "
                              "output)\n");
  CHECK(shell(kTrainer + " --resume " + kWork.string() + " > /dev/null 2> " + stderr_file.string()) == 2);
  CHECK(slurp(stderr_file) == "gradiens-train: --resume " + kWork.string() + ": not a gradiens-train run directory (it "
                              "has no config.resolved.json and run.json)\n");
  // Longer training is allowed: the resumed run adds the steps.
  CHECK(shell(kTrainer + " --resume " + run.string() + " --set train.phases.1.steps=25 > /dev/null") == 0);
  CHECK(json::parse(slurp(run / "summary.json"))["steps"] == 39);
}

TEST_CASE("runs: SIGTERM finishes the step, writes a checkpoint and says how to resume") {
  // Long enough to be killed while it trains: 100 epochs of 7 steps.
  std::string text = kResumeConfig;
  text.replace(text.find("\"steps\": 19"), 11, "\"steps\": 686");
  const fs::path config = write_config("signal.json", text);
  const fs::path reference_out = kWork / "signal_reference", out = kWork / "signal_run";
  fs::remove_all(reference_out);
  fs::remove_all(out);
  REQUIRE(shell(kTrainer + " --config " + config.string() + " --out " + reference_out.string() + " > /dev/null") == 0);
  // Start, wait for the first metrics (up to a minute on a loaded machine: a signal
  // that arrives before the handler is installed kills it without a checkpoint),
  // then SIGTERM; the exit status goes to a file.
  const fs::path status = kWork / "signal_status", stderr_file = kWork / "signal_stderr";
  const std::string script =
      "(" + kTrainer + " --config " + config.string() + " --out " + out.string() + " > /dev/null 2> " +
      stderr_file.string() + " & pid=$!; for i in $(seq 3000); do ls " + out.string() +
      "/*/metrics.jsonl > /dev/null 2>&1 && break; sleep 0.02; done; kill -TERM $pid; wait $pid; echo $? > " +
      status.string() + ")";
  shell(script);
  const std::string code = slurp(status);
  const fs::path run = only_run_dir(out);
  if (code.rfind("0", 0) == 0) {
    MESSAGE("the run ended before the signal arrived; nothing to check");
    return;
  }
  CHECK(code == "143\n");  // 128 + SIGTERM
  CHECK(slurp(stderr_file).find("resume with:\n  gradiens-train --resume " + run.string()) != std::string::npos);
  CHECK(shell(kTrainer + " --resume " + run.string() + " > /dev/null") == 0);
  CHECK(metric_lines(run) == metric_lines(only_run_dir(reference_out)));
  CHECK(final_weights(run) == final_weights(only_run_dir(reference_out)));
}

TEST_CASE("runs: a non-finite loss or parameter stops the run with an error naming the step") {
  const fs::path out = kWork / "nonfinite_run", stderr_file = kWork / "nonfinite_stderr";
  auto run = [&](const std::string& optimizer, bool clip) {
    std::string text = kResumeConfig;
    const std::string adam = R"({"type": "Adam", "lr": 0.02})", clipping = R"("grad_clip": {"max_norm": 5.0},)";
    text.replace(text.find(adam), adam.size(), optimizer);
    if (!clip) text.erase(text.find(clipping), clipping.size());
    const fs::path config = write_config("nonfinite.json", text);
    fs::remove_all(out);
    CHECK(shell(kTrainer + " --config " + config.string() + " --out " + out.string() + " > /dev/null 2> " +
                stderr_file.string()) == 2);
    return slurp(stderr_file);
  };
  // Adam's step is about lr per element: 1e39 is infinite in float32, so the
  // first step leaves the weights infinite, which the second loss shows.
  CHECK(run(R"({"type": "Adam", "lr": 1e39})", true) ==
        "gradiens-train: step 1 (phase 1): the optimizer step left 0.weight NaN or infinite (a non-finite gradient, or "
        "an update too large for float32); lower the learning rate or clip gradients (train.grad_clip)\n");
  // SGD with lr 1e38 keeps the weights finite (about 1e37), but the second loss overflows.
  CHECK(run(R"({"type": "SGD", "lr": 1e38})", false) ==
        "gradiens-train: step 2 (phase 1, epoch 1): the training loss (train/loss, cross_entropy) is inf; lower the "
        "learning rate or check the data\n");
}

TEST_CASE("runs: early stopping ends the run after `patience` evaluations without improvement") {
  std::string text = kResumeConfig;
  // No improvement can reach min_delta 2 on an accuracy: the first evaluation
  // (step 5) sets the best, the next two (10, 15) use up the patience.
  text.insert(text.find("\"phases\": ["),
              R"("early_stopping": {"monitor": "val/accuracy", "mode": "max", "patience": 2, "min_delta": 2}, )");
  const fs::path config = write_config("early.json", text);
  const fs::path out = kWork / "early_run";
  fs::remove_all(out);
  REQUIRE(shell(kTrainer + " --config " + config.string() + " --out " + out.string() + " > /dev/null") == 0);
  const fs::path run = only_run_dir(out);
  const json summary = json::parse(slurp(run / "summary.json"));
  CHECK(summary["status"] == "early stopping on val/accuracy");
  CHECK(summary["steps"] == 15);
}
