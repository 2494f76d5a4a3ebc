// The spec of a whole run config: the top-level sections (model, data, loss,
// optimizer, scheduler, metrics, train, output) and the rules between them.
#include "train/config/run_spec.h"

#include <algorithm>

#include <fmt/format.h>

#include "train/config/validate.h"
#include "train/pinn/pinn_run.h"
#include "train/registry/registry.h"

namespace gradiens::train {

namespace {

std::shared_ptr<ObjectSpec> section(const std::string& description) {
  auto spec = std::make_shared<ObjectSpec>();
  spec->description = description;
  return spec;
}

TypePtr MinMax() { return Enum({"min", "max"}); }

std::shared_ptr<ObjectSpec> loader_spec() {
  auto loader = section("how the DataLoader batches the splits");
  loader->add("batch_size", Integer(1), "training samples per batch").default_(64);
  loader->add("eval_batch_size", OrNull(Integer(1)), "samples per batch when evaluating; null: 1000").default_(nullptr)
      .safe_on_resume();
  loader->add("shuffle", Bool(), "reshuffle the training set every epoch (a RandomSampler)").default_(true);
  loader->add("sampler", Enum({"default", "sequential", "random", "random_with_replacement", "class_balanced"}),
              "the training sampler; default: random when shuffle is on, else sequential").default_("default");
  loader->add("drop_last", Bool(), "drop the last incomplete training batch").default_(false);
  loader->add("num_workers", Integer(0, 256), "DataLoader worker threads (the order does not depend on it)").default_(0)
      .safe_on_resume();
  loader->check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
    if (text(config, "sampler") != "default" && flag(config, "shuffle"))
      diagnostics.error(path, fmt::format("sampler \"{}\" and shuffle cannot both be given (PyTorch: sampler option is "
                                          "mutually exclusive with shuffle); set \"shuffle\": false",
                                          text(config, "sampler")));
  };
  return loader;
}

std::shared_ptr<ObjectSpec> data_spec() {
  auto data = section("the data: a training split, optional validation and test splits, and the loader");
  data->add("train", Typed(kDataset), "the training split").require();
  data->add("val", Typed(kDataset), "the validation split, evaluated every train.eval_every");
  data->add("test", Typed(kDataset), "the test split, evaluated at the end");
  data->add("loader", Object(loader_spec()), "loader options").default_(json::object());
  return data;
}

void check_metric_names(const json& names, const std::string& path, bool train, Diagnostics& diagnostics) {
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name = names[i].get<std::string>();
    const bool common = name == "loss" || name == "accuracy" || name == "confusion_matrix" || accuracy_top_k(name) > 0 ||
                        name == "rel_l2" || name == "max_abs_error";
    const bool train_only = name == "lr" || name == "grad_norm";
    if (common || (train && train_only)) continue;
    if (train_only) {
      diagnostics.error(join_path(path, i), fmt::format("\"{}\" is a training metric; only train lists it", name));
      continue;
    }
    std::vector<std::string> known = metric_names();
    auto close = suggest(name, known);
    diagnostics.error(join_path(path, i), fmt::format("unknown metric \"{}\"{}", name,
                                                      close ? fmt::format("; did you mean \"{}\"?", *close)
                                                            : " (loss, accuracy, topK_accuracy, confusion_matrix, lr, "
                                                              "grad_norm, rel_l2, max_abs_error)"));
  }
}

std::shared_ptr<ObjectSpec> metrics_spec() {
  auto metrics = section("the metrics logged per split, named <split>/<name> (train/loss, val/accuracy)");
  metrics->add("train", Array(String()), "training metrics: loss, accuracy, topK_accuracy, lr, grad_norm")
      .default_(json::array({"loss", "lr"})).safe_on_resume();
  metrics->add("val", Array(String()), "validation metrics: loss, accuracy, topK_accuracy, confusion_matrix; for a "
               "PINN, loss (mean squared error against the reference), rel_l2 and max_abs_error")
      .default_(json::array({"loss"})).safe_on_resume();
  metrics->add("test", Array(String()), "test metrics, as val").default_(json::array({"loss"})).safe_on_resume();
  metrics->check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
    check_metric_names(config["train"], join_path(path, "train"), true, diagnostics);
    check_metric_names(config["val"], join_path(path, "val"), false, diagnostics);
    check_metric_names(config["test"], join_path(path, "test"), false, diagnostics);
  };
  return metrics;
}

// Exactly one of "epochs" and "steps".
void check_length(const json& config, const std::string& path, Diagnostics& diagnostics) {
  const bool epochs = has(config, "epochs"), steps = has(config, "steps");
  if (epochs && steps) diagnostics.error(path, "\"epochs\" and \"steps\" cannot both be given");
  if (!epochs && !steps) diagnostics.error(path, "give the length of training: \"epochs\" or \"steps\"");
}

std::shared_ptr<ObjectSpec> phase_spec() {
  auto phase = section("one phase of training with its own optimizer (Adam, then L-BFGS)");
  phase->add("name", String(), "shown in the progress line");
  phase->add("optimizer", Typed(kOptimizer), "the phase's optimizer").require();
  phase->add("scheduler", Typed(kScheduler), "the phase's learning-rate scheduler");
  phase->add("epochs", Integer(1), "epochs in this phase").safe_on_resume();
  phase->add("steps", Integer(1), "optimizer steps in this phase").safe_on_resume();
  phase->check = check_length;
  return phase;
}

std::shared_ptr<ObjectSpec> cadence_spec(const std::string& what, const std::string& unit) {
  auto cadence = section(what);
  cadence->add("every", Integer(1), "the interval").default_(1).safe_on_resume();
  cadence->add("unit", Enum({"steps", "epochs"}), "what the interval counts").default_(unit).safe_on_resume();
  return cadence;
}

std::shared_ptr<ObjectSpec> train_spec() {
  auto train = section("the training loop");
  train->add("epochs", Integer(1), "epochs (or give steps, or phases)").safe_on_resume();
  train->add("steps", Integer(1), "optimizer steps (or give epochs, or phases)").safe_on_resume();
  train->add("phases", Array(Object(phase_spec()), 1), "phases, each with its own optimizer, scheduler and length");
  auto clip = section("gradient clipping before each optimizer step");
  clip->add("max_norm", PositiveNumber(), "clip the total gradient norm to this (clip_grad_norm_)");
  clip->add("norm_type", PositiveNumber(), "the p of the norm").default_(2.0);
  clip->add("value", PositiveNumber(), "clip each gradient element to [-value, value] (clip_grad_value_)");
  clip->check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
    if (has(config, "max_norm") == has(config, "value"))
      diagnostics.error(path, "give exactly one of \"max_norm\" and \"value\"");
  };
  train->add("grad_clip", Object(clip), "gradient clipping");
  train->add("accumulate", Integer(1), "batches whose gradients are summed into one optimizer step").default_(1);
  train->add("eval_every", Object(cadence_spec("how often the validation split is evaluated", "epochs")),
             "evaluation cadence").default_(json::object());
  train->add("log_every", Integer(1), "log the training metrics every this many optimizer steps").default_(50)
      .safe_on_resume();
  auto early = section("stop when a monitored metric stops improving");
  early->add("monitor", String(), "a logged metric, e.g. val/loss").require();
  early->add("mode", MinMax(), "whether lower or higher is better").default_("min");
  early->add("patience", Integer(1), "evaluations without improvement before stopping").default_(5);
  early->add("min_delta", Number(0), "the least change that counts as an improvement").default_(0.0);
  train->add("early_stopping", Object(early), "early stopping");
  train->add("stop_on_nonfinite", Bool(), "stop with an error when the loss or a gradient is not finite").default_(true);
  auto checkpoint = cadence_spec("checkpoints: cadence and what is kept", "epochs");
  checkpoint->add("keep_last", Integer(0), "the newest checkpoints kept (0: all)").default_(3).safe_on_resume();
  auto best = section("also keep the best checkpoints by a monitored metric");
  best->add("k", Integer(1), "how many").default_(1);
  best->add("monitor", String(), "a logged metric, e.g. val/accuracy").require();
  best->add("mode", MinMax(), "whether lower or higher is better").default_("min");
  checkpoint->add("keep_best", Object(best), "best-K retention");
  train->add("checkpoint", Object(checkpoint), "checkpoints").default_(json::object());
  return train;
}

std::shared_ptr<ObjectSpec> output_spec() {
  auto output = section("where and how the run is reported");
  output->add("dir", String(), "the folder that holds run directories").default_("runs").safe_on_resume();
  output->add("plots", Bool(), "draw PNG and SVG plots with gnuplot").default_(true).safe_on_resume();
  output->add("progress", Enum({"auto", "bar", "lines", "none"}),
              "auto: an updating line on a terminal, plain lines otherwise").default_("auto").safe_on_resume();
  return output;
}

ObjectSpec make_run_spec() {
  ObjectSpec run;
  run.description = "a gradiens-train run";
  run.add("$schema", String(), "the schema file, for editors");
  run.add("version", Integer(1, 1), "the config format's version: 1").require();
  run.add("name", String(), "the run's name, the start of its directory's name").default_("run");
  run.add("seed", Integer(0), "seeds the weights, the shuffling, dropout and synthetic data").default_(0);
  run.add("device", Enum({"cpu", "cuda"}), "where the run computes").default_("cpu");
  run.add("dtype", Enum({"float32", "float64"}), "the parameters' and inputs' dtype").default_("float32");
  run.add("threads", Integer(1, 1024), "compute threads").default_(1);
  run.add("model", Typed(kLayer), "the network, usually a Sequential").require();
  auto init = section("initialization of every weight (2 or more dimensions) and bias; absent: PyTorch's defaults");
  init->add("weight", Typed(kInit), "for weights");
  init->add("bias", Typed(kInit), "for biases");
  run.add("init", Object(init), "parameter initialization");
  run.add("data", Object(data_spec()), "the data (or give pinn)");
  run.add("loss", Typed(kLoss), "the training loss (with data)");
  run.add("pinn", Object(pinn_section_spec()), "a physics-informed network's problem, instead of data and loss");
  run.add("optimizer", Typed(kOptimizer), "the optimizer (or give train.phases)");
  run.add("scheduler", Typed(kScheduler), "the learning-rate scheduler");
  run.add("metrics", Object(metrics_spec()), "logged metrics").default_(json::object());
  run.add("train", Object(train_spec()), "the training loop").require();
  run.add("output", Object(output_spec()), "outputs").default_(json::object());
  run.check = [](const json& config, const std::string&, Diagnostics& diagnostics) {
    if (has(config, "pinn")) {
      for (const char* key : {"data", "loss"})
        if (has(config, key))
          diagnostics.error(key, "cannot be given with pinn (the PINN's terms are the loss, its points the data)");
    } else {
      if (!has(config, "data")) diagnostics.error("data", "missing (required unless pinn is given)");
      if (!has(config, "loss")) diagnostics.error("loss", "missing (required unless pinn is given)");
    }
    const json& train = config["train"];
    if (has(train, "phases")) {
      for (const char* key : {"optimizer", "scheduler"})
        if (has(config, key))
          diagnostics.error(key, "cannot be given with train.phases (each phase has its own)");
      for (const char* key : {"epochs", "steps"})
        if (has(train, key))
          diagnostics.error(join_path("train", key), "cannot be given with train.phases (each phase has its own)");
    } else {
      if (!has(config, "optimizer")) diagnostics.error("optimizer", "missing (required unless train.phases is given)");
      check_length(train, "train", diagnostics);
    }
  };
  return run;
}

}  // namespace

std::vector<std::string> metric_names() {
  return {"loss", "accuracy", "top5_accuracy", "confusion_matrix", "lr", "grad_norm", "rel_l2", "max_abs_error"};
}

int64_t accuracy_top_k(const std::string& metric) {
  if (metric == "accuracy") return 1;
  const std::string prefix = "top", suffix = "_accuracy";
  if (metric.size() <= prefix.size() + suffix.size() || metric.compare(0, prefix.size(), prefix) != 0 ||
      metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) != 0)
    return 0;
  const std::string digits = metric.substr(prefix.size(), metric.size() - prefix.size() - suffix.size());
  if (digits.size() > 9 || digits[0] == '0' ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return 0;
  return std::stoll(digits);
}

const ObjectSpec& run_spec() {
  static const ObjectSpec spec = make_run_spec();
  return spec;
}

}  // namespace gradiens::train
