// The gradiens-train command: reading, overriding and validating a config,
// --print-config / --print-schema / --list / --validate, the run directory,
// and starting or resuming a run.
#include "train/cli.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"
#include "train/config/run_spec.h"
#include "train/config/schema.h"
#include "train/config/validate.h"
#include "train/experiment.h"
#include "train/run/files.h"
#include "train/trainer.h"

namespace gradiens::train {

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string config, resume, out, progress, list_kind;
  std::vector<std::string> sets, unsets;
  bool print_config = false, print_schema = false, validate = false, list = false;
};

// The resolved config without its resume-safe keys: what decides a run's results.
json semantic_part(const json& value, const ValueType& type, const SpecRegistry& registry) {
  if (type.kind == ValueType::Kind::kAnyOf) {
    for (const TypePtr& alternative : type.alternatives) {
      Diagnostics scratch;
      resolve_value(value, *alternative, "", registry, scratch);
      if (scratch.empty()) return semantic_part(value, *alternative, registry);
    }
    return value;
  }
  const ObjectSpec* spec = nullptr;
  if (type.kind == ValueType::Kind::kObject) spec = type.object.get();
  if (type.kind == ValueType::Kind::kTyped && value.is_object() && value.contains("type"))
    spec = registry.find(type.category, value["type"].get<std::string>());
  if (type.kind == ValueType::Kind::kArray && value.is_array()) {
    json items = json::array();
    for (const json& item : value) items.push_back(semantic_part(item, *type.items, registry));
    return items;
  }
  if (spec == nullptr || !value.is_object()) return value;
  json result = json::object();
  for (const auto& [key, item] : value.items()) {
    const Field* field = spec->find(key);
    if (field == nullptr) result[key] = item;  // "type"
    else if (!field->resume_safe && key != "name" && key != "$schema") result[key] = semantic_part(item, *field->type, registry);
  }
  return result;
}

std::string config_hash(const json& resolved) {
  const auto& registry = builtin().specs;
  return sha256_hex(semantic_part(resolved, *Object(std::shared_ptr<const ObjectSpec>(&run_spec(), [](const ObjectSpec*) {})),
                                  registry).dump());
}

json resolve(const json& input, const std::string& source) {
  Diagnostics diagnostics;
  json resolved = resolve_object(input, run_spec(), "", builtin().specs, diagnostics);
  diagnostics.throw_if_any(source + " is not a valid gradiens-train config");
  return resolved;
}

// Reads a config file and applies --set / --unset; every problem at once.
json read_config(const std::string& path, const Options& options, const std::vector<std::string>& sets) {
  Diagnostics diagnostics;
  std::string text;
  try {
    text = read_file(path);
  } catch (const Error& e) {
    throw Error(fmt::format("--config: {}", e.what()));
  }
  json input = parse_config_text(text, path, diagnostics);
  diagnostics.throw_if_any(path + " is not a valid gradiens-train config");
  if (!input.is_object()) throw Error(path + ": a config is a JSON object ({...})");
  for (const std::string& set : sets) apply_set(input, set, run_spec(), builtin().specs, diagnostics);
  for (const std::string& unset : options.unsets) apply_unset(input, unset, diagnostics);
  diagnostics.throw_if_any("the overrides do not apply to " + path);
  return input;
}

std::string base_dir_of(const std::string& config_path) {
  fs::path parent = fs::path(config_path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

void print_list(const std::string& kind) {
  const SpecRegistry& registry = builtin().specs;
  if (kind.empty()) {
    for (const auto& [name, category] : registry.categories())
      std::printf("%-12s %s\n", category.plural.c_str(), category.description.c_str());
    std::printf("%-12s %s\n", "metrics", "loss, accuracy, topK_accuracy (top5_accuracy), confusion_matrix, lr, grad_norm, "
                "rel_l2, max_abs_error");
    return;
  }
  if (kind == "metrics") {
    std::printf("loss              the split's loss (train: the mean since the last log line)\n"
                "accuracy          the share of samples whose top class is the target\n"
                "topK_accuracy     the share whose target is among the K top classes (top5_accuracy)\n"
                "confusion_matrix  counts of (true, predicted) class, written to confusion_matrix_<split>.json\n"
                "lr                the learning rate of the first parameter group (train only)\n"
                "grad_norm         the total gradient 2-norm before clipping (train only)\n"
                "rel_l2            a PINN's relative L2 error against its reference on the evaluation points\n"
                "max_abs_error     a PINN's largest absolute error there; its loss is the mean squared error\n");
    return;
  }
  const Category* category = registry.find_category_by_plural(kind);
  if (category == nullptr) {
    std::vector<std::string> kinds = {"metrics"};
    for (const auto& [name, c] : registry.categories()) kinds.push_back(c.plural);
    auto close = suggest(kind, kinds);
    std::string all;
    for (const auto& k : kinds) all += (all.empty() ? "" : ", ") + k;
    throw Error(fmt::format("--list: unknown kind \"{}\"{} (one of {})", kind,
                            close ? fmt::format("; did you mean \"{}\"?", *close) : "", all));
  }
  for (const auto& [name, spec] : category->types) std::printf("%-28s %s\n", name.c_str(), spec.description.c_str());
}

fs::path run_directory(const json& resolved, const std::string& hash, const Options& options) {
  const std::string dir = options.out.empty() ? resolved["output"]["dir"].get<std::string>() : options.out;
  return fs::path(dir) / fmt::format("{}-{}", resolved["name"].get<std::string>(), hash.substr(0, 8));
}

// --validate of a PINN: the terms' losses at their points.
void validate_pinn(const Experiment& experiment) {
  pinn::Losses losses = experiment.pinn->problem.losses(experiment.model.net());
  int64_t n = 0;
  for (const Tensor& p : experiment.model.parameters()) n += p.numel();
  std::string terms;
  for (size_t i = 0; i < losses.names.size(); ++i)
    terms += fmt::format("{}{} {:.6g} ({} points, {})", i ? ", " : "", losses.names[i], losses.values[i].item<double>(),
                         experiment.pinn->problem.terms()[i]->points().size(0),
                         pinn::engine_name(experiment.pinn->problem.last_engines()[i]));
  std::printf("ok: %s model, %lld parameters; loss %.6g: %s\n", experiment.config["model"]["type"].get<std::string>().c_str(),
              static_cast<long long>(n), losses.total.item<double>(), terms.c_str());
}

// --validate: one forward pass of the model and the loss on one training batch.
void validate_forward(const Experiment& experiment) {
  if (experiment.pinn) return validate_pinn(experiment);
  NoGradGuard no_grad;
  const int64_t count = std::min<int64_t>(integer(experiment.config["data"]["loader"], "batch_size"), experiment.train.size());
  Batch batch = make_batch(experiment.train, arange(count), experiment.dtype, experiment.device);
  Tensor output = match_target_shape(experiment.model.forward(batch), batch.targets);
  Tensor loss = experiment.loss(output, batch.targets);
  std::printf("ok: %s model, %lld parameters, output [%s] for a batch of %lld, loss %.6g\n",
              experiment.config["model"]["type"].get<std::string>().c_str(),
              static_cast<long long>([&] {
                int64_t n = 0;
                for (const Tensor& p : experiment.model.parameters()) n += p.numel();
                return n;
              }()),
              fmt::format("{}", fmt::join(output.sizes(), ", ")).c_str(), static_cast<long long>(count),
              loss.item<double>());
}

void print_summary(const RunResult& result, const fs::path& run_dir) {
  std::printf("\n%s after %lld steps in %.1f s\n", result.stop_reason.c_str(), static_cast<long long>(result.steps),
              result.seconds);
  for (const auto& [key, value] : result.final_metrics)
    if (key.rfind("test/", 0) == 0) std::printf("  %-24s %.6g\n", key.c_str(), value);
  std::printf("run directory: %s\n  metrics: metrics.jsonl, metrics.csv\n  plots: plots/*.png, plots/*.svg\n"
              "  checkpoints: checkpoints/ (latest%s)\n  summary: summary.json\n",
              run_dir.string().c_str(), result.best_checkpoint ? ", best kept" : "");
}

int run(const Options& options) {
  if (options.print_schema) {
    std::printf("%s\n", json_schema(run_spec(), builtin().specs).dump(2).c_str());
    return 0;
  }
  if (options.list) {
    print_list(options.list_kind);
    return 0;
  }
  const bool resuming = !options.resume.empty();
  if (!resuming && options.config.empty()) throw Error("give --config FILE (or --resume RUN_DIR); --help lists the options");
  if (resuming && !options.config.empty())
    throw Error("--resume takes the run directory's own config; give --set for the keys that may change, not --config");

  json input, resolved;
  std::string source, base_dir;
  fs::path run_dir;
  if (resuming) {
    run_dir = options.resume;
    source = (run_dir / "config.resolved.json").string();
    if (!fs::exists(source) || !fs::exists(run_dir / "run.json"))
      throw Error(fmt::format("--resume {}: not a gradiens-train run directory (it has no config.resolved.json and "
                              "run.json)", run_dir.string()));
    if (!options.unsets.empty()) throw Error("--unset cannot be used with --resume");
    // Only keys that leave the results as they are may change.
    const json saved = read_config(source, options, {});
    for (const std::string& set : options.sets) {
      const size_t equals = set.find('=');
      if (equals == std::string::npos) continue;  // read_config reports it
      std::string problem;
      const Field* field = field_at(saved, parse_override_path(set.substr(0, equals)), run_spec(), builtin().specs, problem);
      if (field != nullptr && !field->resume_safe)
        throw Error(fmt::format("--set {}: {} changes the run's results, so it cannot change on --resume (keys that "
                                "may: epochs, steps, logging, evaluation and checkpoint cadence, output)",
                                set, set.substr(0, equals)));
    }
    input = read_config(source, options, options.sets);
    const json run_info = json::parse(read_file(run_dir / "run.json"));
    base_dir = run_info.at("base_dir").get<std::string>();
  } else {
    source = options.config;
    input = read_config(source, options, options.sets);
    base_dir = base_dir_of(source);
  }
  resolved = resolve(input, source);
  Experiment experiment = build_experiment(resolved, base_dir);
  if (options.print_config) {
    std::printf("%s\n", experiment.config.dump(2).c_str());
    return 0;
  }
  if (options.validate) {
    validate_forward(experiment);
    return 0;
  }
  const std::string hash = config_hash(experiment.config);
  if (!resuming) {
    run_dir = run_directory(experiment.config, hash, options);
    if (fs::exists(run_dir / "checkpoints") || fs::exists(run_dir / "metrics.jsonl"))
      throw Error(fmt::format("{} already holds this config's run; continue it with --resume {} (or delete it)",
                              run_dir.string(), run_dir.string()));
    fs::create_directories(run_dir);
    write_file_atomic(run_dir / "config.input.json", read_file(options.config));
    std::string overrides;
    for (const std::string& set : options.sets) overrides += "--set " + set + "\n";
    for (const std::string& unset : options.unsets) overrides += "--unset " + unset + "\n";
    write_file_atomic(run_dir / "overrides.txt", overrides);
    write_file_atomic(run_dir / "run.json", json{{"config_hash", hash},
                                                 {"base_dir", fs::absolute(base_dir).string()},
                                                 {"gradiens_version", "0.1.0"},
                                                 {"threads", experiment.config["threads"]}}.dump(2) + "\n");
  } else if (!options.sets.empty()) {
    std::string overrides = fs::exists(run_dir / "overrides.txt") ? read_file(run_dir / "overrides.txt") : "";
    for (const std::string& set : options.sets) overrides += "--resume --set " + set + "\n";
    write_file_atomic(run_dir / "overrides.txt", overrides);
  }
  write_file_atomic(run_dir / "config.resolved.json", experiment.config.dump(2) + "\n");
  std::printf("gradiens-train: %s, %lld steps (%lld per epoch), run directory %s\n",
              experiment.config["name"].get<std::string>().c_str(), static_cast<long long>(experiment.total_steps()),
              static_cast<long long>(experiment.steps_per_epoch), run_dir.string().c_str());
  std::fflush(stdout);

  TrainerOptions trainer_options;
  trainer_options.run_dir = run_dir;
  trainer_options.progress = options.progress.empty() ? experiment.config["output"]["progress"].get<std::string>()
                                                      : options.progress;
  trainer_options.resume = resuming;
  trainer_options.config_hash = hash;
  RunResult result = train_experiment(experiment, trainer_options);
  if (result.stop_reason == "already complete") {
    std::printf("%s is complete (%lld steps); its results are in summary.json. Resume with a longer --set "
                "train.epochs / train.steps to train on.\n", run_dir.string().c_str(), static_cast<long long>(result.steps));
    return 0;
  }

  json metrics = json::object();
  for (const auto& [key, value] : result.final_metrics) metrics[key] = std::isfinite(value) ? json(value) : json(nullptr);
  json summary = {{"status", result.interrupted ? "interrupted" : result.stop_reason},
                  {"steps", result.steps},
                  {"final_metrics", metrics},
                  {"best_checkpoint", result.best_checkpoint ? json(*result.best_checkpoint) : json(nullptr)},
                  {"wall_time_seconds", result.seconds},
                  {"config_hash", hash}};
  write_file_atomic(run_dir / "summary.json", summary.dump(2) + "\n");
  if (result.interrupted) {
    std::fprintf(stderr, "\ngradiens-train: stopped by signal %d at step %lld after writing a checkpoint; resume with:\n"
                         "  gradiens-train --resume %s\n", result.signal, static_cast<long long>(result.steps),
                 run_dir.string().c_str());
    return 128 + result.signal;
  }
  print_summary(result, run_dir);
  return 0;
}

}  // namespace

int run_cli(int argc, char** argv) {
  Options options;
  CLI::App app("gradiens-train: a whole training run from one JSON config (model, data, loss, optimizer, "
               "scheduler, metrics, checkpoints)", "gradiens-train");
  app.add_option("--config", options.config, "the run's JSON config");
  // Each occurrence takes one value; all occurrences are kept, in order.
  app.add_option("--set", options.sets, "override a key: --set optimizer.lr=0.01 (repeatable)")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--unset", options.unsets, "remove a key: --unset scheduler (repeatable)")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--out", options.out, "the folder for run directories (default: the config's output.dir)");
  app.add_option("--resume", options.resume, "continue the run in RUN_DIR from its newest complete checkpoint");
  app.add_option("--progress", options.progress, "auto, bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  app.add_flag("--print-config", options.print_config, "print the resolved config (defaults and derived values) and exit");
  app.add_flag("--print-schema", options.print_schema, "print the configs' JSON Schema (draft-07) and exit");
  app.add_flag("--validate", options.validate, "build everything, run one forward pass on one batch, and exit");
  auto* list = app.add_option("--list", options.list_kind,
                              "list what a config can name: layers, losses, optimizers, schedulers, datasets, inits, metrics")
                   ->expected(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  options.list = list->count() > 0;
  try {
    return run(options);
  } catch (const Error& e) {
    std::fprintf(stderr, "gradiens-train: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gradiens-train: %s\n", e.what());
    return 2;
  }
}

}  // namespace gradiens::train
