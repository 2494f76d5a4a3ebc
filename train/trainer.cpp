// The training loop of gradiens-train: phases over one batch stream, metrics,
// evaluation, early stopping, checkpoints, exact resume and signals.
#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "data/dataloader.h"
#include "data/samplers.h"
#include "data/tensor_dataset.h"
#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/io/safetensors.h"
#include "kernels/error.h"
#include "nn/utils/clip_grad.h"
#include "optim/levenberg_marquardt.h"
#include "pinn/least_squares.h"
#include "train/config/run_spec.h"
#include "train/pinn/field_plots.h"
#include "train/run/checkpoint.h"
#include "train/run/files.h"
#include "train/run/metrics_log.h"
#include "train/run/plots.h"
#include "train/run/progress.h"
#include "train/run/signals.h"

// Note [Exact resume]
// A run killed at any point and resumed from its newest checkpoint ends with
// the same weights and metrics.jsonl lines as a run never interrupted. That
// holds because everything that decides what comes next is in the checkpoint:
// the weights, the phase's optimizer and scheduler state, the default
// generator (dropout), the DataLoader's position (the batches come from one
// stream across phases and epochs, so a checkpoint mid-epoch resumes mid-
// epoch), the counters, the metric accumulators since the last log line, the
// early-stopping and plateau state, and the checkpointer's best-K list.
// Checkpoints are taken only after an optimizer step and its hooks (logging,
// evaluation, epoch end), never between them, and metrics.jsonl is cut back
// to the checkpoint's step on resume.
//
// For the resume tests, GRADIENS_TRAIN_FAULT kills the process with SIGKILL:
// "kill_at_step:N" after step N's hooks, "kill_in_checkpoint:N" after the
// first file of step N's checkpoint is written.

namespace gradiens::train {

namespace {

using Clock = std::chrono::steady_clock;
using IndexLoader = data::DataLoader<data::TensorDataset>;

// Correct predictions among the top k, per sample: an output [B, C] against
// class indices, or one logit per sample (positive means class 1).
Tensor correct_in_top_k(const Tensor& output, const Tensor& targets, int64_t k) {
  if (output.dim() == 1 || output.size(-1) == 1) {
    Tensor predicted = output.reshape({-1}).gt(0).to(kInt64);
    return predicted.eq(targets.reshape({-1}).to(kInt64));
  }
  if (k == 1) return output.argmax(-1).eq(targets);
  k = std::min<int64_t>(k, output.size(-1));
  // topk has no CUDA kernel yet: the top-k test runs on the host.
  Tensor top = std::get<1>(topk(output.cpu(), k, -1));
  return top.eq(targets.cpu().unsqueeze(-1)).any(-1);
}

Tensor predicted_class(const Tensor& output) {
  if (output.dim() == 1 || output.size(-1) == 1) return output.reshape({-1}).gt(0).to(kInt64);
  return output.argmax(-1);
}

// Everything about the loop that a checkpoint keeps (besides the weights,
// optimizer, scheduler and loader).
struct LoopState {
  int64_t step = 0, phase = 0, phase_step = 0, epoch = 0, batch_in_epoch = 0;
  double loss_sum = 0;
  int64_t loss_count = 0, seen = 0;
  std::map<std::string, double> correct;  // per train accuracy metric
  std::map<std::string, double> term_sum;  // a PINN's loss terms, summed since the last log line
  double grad_norm = 0;
  double early_best = 0;
  int64_t early_wait = 0;
  bool early_started = false, stopped_early = false;
  std::map<std::string, double> last;  // the newest value of each metric key
  double time_offset = 0;              // seconds run before this process

  json to_json() const {
    json last_json = json::object();
    for (const auto& [key, value] : last) last_json[key] = double_to_json(value);
    json correct_json = json::object();
    for (const auto& [key, value] : correct) correct_json[key] = value;
    json term_json = json::object();
    for (const auto& [key, value] : term_sum) term_json[key] = double_to_json(value);
    return {{"step", step}, {"phase", phase}, {"phase_step", phase_step}, {"epoch", epoch},
            {"batch_in_epoch", batch_in_epoch}, {"loss_sum", double_to_json(loss_sum)}, {"loss_count", loss_count},
            {"seen", seen}, {"correct", correct_json}, {"term_sum", term_json}, {"grad_norm", double_to_json(grad_norm)},
            {"early_best", double_to_json(early_best)}, {"early_wait", early_wait}, {"early_started", early_started},
            {"stopped_early", stopped_early}, {"last", last_json}, {"time_offset", time_offset}};
  }
  void from_json(const json& j) {
    step = j.at("step");
    phase = j.at("phase");
    phase_step = j.at("phase_step");
    epoch = j.at("epoch");
    batch_in_epoch = j.at("batch_in_epoch");
    loss_sum = double_from_json(j.at("loss_sum"), "trainer.json");
    loss_count = j.at("loss_count");
    seen = j.at("seen");
    correct.clear();
    for (const auto& [key, value] : j.at("correct").items()) correct[key] = value.get<double>();
    term_sum.clear();
    for (const auto& [key, value] : j.at("term_sum").items()) term_sum[key] = double_from_json(value, "trainer.json");
    grad_norm = double_from_json(j.at("grad_norm"), "trainer.json");
    early_best = double_from_json(j.at("early_best"), "trainer.json");
    early_wait = j.at("early_wait");
    early_started = j.at("early_started");
    stopped_early = j.at("stopped_early");
    last.clear();
    for (const auto& [key, value] : j.at("last").items()) last[key] = double_from_json(value, "trainer.json");
    time_offset = j.at("time_offset");
  }
};

data::DataLoaderOptions<> loader_options(const Experiment& experiment) {
  const json& loader = experiment.config["data"]["loader"];
  const auto seed = static_cast<uint64_t>(experiment.config["seed"].get<int64_t>());
  data::DataLoaderOptions<> options;
  options.batch_size(integer(loader, "batch_size")).drop_last(flag(loader, "drop_last"))
      .num_workers(integer(loader, "num_workers")).seed(seed);
  const std::string sampler = text(loader, "sampler");
  const auto n = static_cast<size_t>(experiment.train.size());
  if (sampler == "default") {
    options.shuffle(flag(loader, "shuffle"));
  } else if (sampler == "sequential") {
    options.sampler(std::make_shared<data::SequentialSampler>(n));
  } else if (sampler == "random" || sampler == "random_with_replacement") {
    options.sampler(std::make_shared<data::RandomSampler>(n, sampler != "random", std::nullopt, Generator(seed)));
  } else {  // class_balanced: each class drawn equally often on average
    const Tensor targets = experiment.train.targets.to(kInt64).contiguous();
    const int64_t classes = std::max<int64_t>(experiment.train.num_classes, 1);
    Tensor counts = zeros({classes}, kInt64).scatter_add(0, targets, ones_like(targets));
    Tensor weights = (1.0 / counts.to(kFloat64)).index_select(0, targets).contiguous();
    std::vector<double> w(weights.cpu_data_ptr<double>(), weights.cpu_data_ptr<double>() + weights.numel());
    options.sampler(std::make_shared<data::WeightedRandomSampler>(w, static_cast<int64_t>(n), true, Generator(seed)));
  }
  return options;
}

class Trainer {
 public:
  Trainer(Experiment& experiment, const TrainerOptions& options)
      : experiment_(experiment),
        options_(options),
        train_config_(experiment.config["train"]),
        metrics_config_(experiment.config["metrics"]),
        checkpoints_(options.run_dir / "checkpoints", checkpoint_policy()),
        log_(options.run_dir, experiment.metric_keys),
        progress_(parse_progress_mode(options.progress), stdout, integer(train_config_, "log_every")) {
    parse_fault();
    if (!experiment.pinn)
      loader_ = std::make_unique<IndexLoader>(
          std::make_shared<data::TensorDataset>(arange(experiment.train.size()), arange(experiment.train.size())),
          loader_options(experiment));
    for (const std::string& name : metric_list("train")) {
      if (const int64_t k = accuracy_top_k(name); k > 0) train_top_k_.emplace_back(name, k);
      logs_grad_norm_ = logs_grad_norm_ || name == "grad_norm";
    }
  }

  RunResult run() {
    start_ = Clock::now();
    if (options_.resume) restore();
    else begin_phase(/*restoring=*/false);
    RunResult result;
    std::optional<IndexLoader::Iterator> batches;
    bool done = complete();
    if (done) {  // resumed after its end: nothing to train or evaluate again
      result.stop_reason = "already complete";
      result.steps = state_.step;
      result.final_metrics = state_.last;
      result.seconds = state_.time_offset;
      if (auto best = checkpoints_.best()) result.best_checkpoint = best->string();
      return result;
    }
    while (!done) {
      if (state_.phase >= static_cast<int64_t>(experiment_.phases.size()) || state_.stopped_early) break;
      if (!batches && loader_) {
        batches = loader_->begin();
        advance_ = false;
      }
      const bool epoch_end = experiment_.pinn ? pinn_step() : train_step(*batches);
      ++state_.step;
      ++state_.phase_step;
      after_step(epoch_end);
      if (epoch_end) batches.reset();
      const bool phase_done = state_.phase_step >= experiment_.phases[state_.phase].steps;
      const bool run_done = state_.stopped_early ||
                            (phase_done && state_.phase + 1 == static_cast<int64_t>(experiment_.phases.size()));
      if (StopSignalGuard::stop_requested() && !run_done) {
        save_checkpoint();
        result.interrupted = true;
        result.signal = StopSignalGuard::signal_number();
        break;
      }
      if (checkpoint_due(epoch_end) && !run_done) save_checkpoint();
      if (fault_kind_ == "kill_at_step" && state_.step == fault_step_) std::raise(SIGKILL);
      if (phase_done && !run_done) {
        ++state_.phase;
        state_.phase_step = 0;
        begin_phase(/*restoring=*/false);
      }
      done = run_done;
    }
    progress_.finish();
    if (!result.interrupted) finish(result);
    result.steps = state_.step;
    result.final_metrics = state_.last;
    result.seconds = elapsed();
    if (auto best = checkpoints_.best()) result.best_checkpoint = best->string();
    draw();
    return result;
  }

 private:
  CheckpointPolicy checkpoint_policy() const {
    CheckpointPolicy policy;
    const json& checkpoint = train_config_["checkpoint"];
    policy.keep_last = integer(checkpoint, "keep_last");
    if (has(checkpoint, "keep_best")) {
      policy.keep_best = integer(checkpoint["keep_best"], "k");
      policy.monitor = text(checkpoint["keep_best"], "monitor");
      policy.maximize = text(checkpoint["keep_best"], "mode") == "max";
    }
    return policy;
  }

  void parse_fault() {
    const char* fault = std::getenv("GRADIENS_TRAIN_FAULT");
    if (fault == nullptr) return;
    const std::string text = fault;
    const size_t colon = text.find(':');
    if (colon == std::string::npos) return;
    fault_kind_ = text.substr(0, colon);
    fault_step_ = std::stoll(text.substr(colon + 1));
  }

  // Every phase has run its steps, or early stopping ended the run.
  bool complete() const {
    const auto phases = static_cast<int64_t>(experiment_.phases.size());
    return state_.stopped_early || state_.phase >= phases ||
           (state_.phase == phases - 1 && state_.phase_step >= experiment_.phases.back().steps);
  }

  double elapsed() const { return state_.time_offset + std::chrono::duration<double>(Clock::now() - start_).count(); }

  void begin_phase(bool restoring) {
    if (state_.phase >= static_cast<int64_t>(experiment_.phases.size())) return;
    const PhasePlan& phase = experiment_.phases[state_.phase];
    optimizer_ = build_optimizer(phase, experiment_.model.parameters());
    scheduler_ = BuiltScheduler();
    if (!phase.scheduler.is_null()) scheduler_ = build_scheduler(phase, *optimizer_, experiment_.steps_per_epoch);
    is_lbfgs_ = text(phase.optimizer, "type") == "LBFGS";
    is_least_squares_ = text(phase.optimizer, "type") == "LevenbergMarquardt";
    if (!restoring && state_.step > 0)
      progress_.message(fmt::format("step {}: phase {}/{} ({}) begins", state_.step, state_.phase + 1,
                                    experiment_.phases.size(), phase.name));
  }

  double current_lr() const { return optimizer_->param_groups()[0].options().get_lr(); }

  // One optimizer step over `accumulate` batches (fewer at the end of an
  // epoch). Returns whether the epoch ended with it.
  bool train_step(IndexLoader::Iterator& batches) {
    const int64_t accumulate = integer(train_config_, "accumulate");
    const int64_t remaining = experiment_.batches_per_epoch - state_.batch_in_epoch;
    const int64_t group = std::min(accumulate, remaining);
    experiment_.model.module().train();
    lr_ = current_lr();
    double step_loss = 0;
    if (is_lbfgs_) {
      Batch batch = next_batch(batches);
      auto closure = [&]() {
        optimizer_->zero_grad();
        Tensor loss = experiment_.loss(match_target_shape(experiment_.model.forward(batch), batch.targets), batch.targets);
        loss.backward();
        return loss;
      };
      Tensor loss = optimizer_->step(closure);
      step_loss = loss.item<double>();
      check_loss(step_loss);
    } else {
      optimizer_->zero_grad();
      for (int64_t micro = 0; micro < group; ++micro) {
        Batch batch = next_batch(batches);
        Tensor output = match_target_shape(experiment_.model.forward(batch), batch.targets);
        Tensor loss = experiment_.loss(output, batch.targets);
        const double value = loss.item<double>();
        check_loss(value);
        step_loss += value / static_cast<double>(group);
        (group == 1 ? loss : loss / static_cast<double>(group)).backward();
        count_train_accuracy(output.detach(), batch.targets);
      }
      clip_and_check_gradients();
      optimizer_->step();
    }
    state_.loss_sum += step_loss;
    ++state_.loss_count;
    if (scheduler_.scheduler && scheduler_.interval == "step") scheduler_.scheduler->step();
    return state_.batch_in_epoch == experiment_.batches_per_epoch;
  }

  // One optimizer step of a PINN: the weighted terms at the current points.
  // An epoch is a step.
  bool pinn_step() {
    PinnRun& run = *experiment_.pinn;
    experiment_.model.module().train();
    lr_ = current_lr();
    const nn::AnyModule& net = experiment_.model.net();
    const std::vector<Tensor> params = experiment_.model.parameters();
    pinn::Losses losses;
    double step_loss = 0;
    // One objective for a whole L-BFGS or Levenberg-Marquardt step, line
    // search and rejected attempts included; released however the step ends.
    struct HeldCausalWeights {
      pinn::Problem& problem;
      explicit HeldCausalWeights(pinn::Problem& p) : problem(p) { problem.hold_causal_weights(true); }
      ~HeldCausalWeights() { problem.hold_causal_weights(false); }
    };
    if (is_lbfgs_) {
      auto closure = [&]() {
        optimizer_->zero_grad();
        losses = run.losses(net, /*step=*/0, params);  // the weights stay as they are inside a closure
        losses.total.backward();
        return losses.total;
      };
      HeldCausalWeights held(run.problem);
      step_loss = optimizer_->step(closure).item<double>();
      check_loss(step_loss);
    } else if (is_least_squares_) {
      auto closure = [&](bool jacobian) {
        pinn::WeightedResiduals found = pinn::weighted_residuals(run.problem, net, params, jacobian);
        if (jacobian) {  // the step's loss is the one before it: log the terms there
          losses.names = found.names;
          losses.values = found.values;
        }
        return optim::LeastSquares{found.residuals, found.jacobian};
      };
      HeldCausalWeights held(run.problem);
      step_loss = static_cast<optim::LevenbergMarquardt&>(*optimizer_).step(closure).item<double>();
      check_loss(step_loss);
    } else {
      optimizer_->zero_grad();
      losses = run.losses(net, state_.step + 1, params);
      step_loss = losses.total.item<double>();
      check_loss(step_loss);
      losses.total.backward();
      clip_and_check_gradients();
      optimizer_->step();
    }
    state_.loss_sum += step_loss;
    ++state_.loss_count;
    for (size_t i = 0; i < losses.names.size(); ++i) state_.term_sum[losses.names[i]] += losses.values[i].item<double>();
    if (scheduler_.scheduler && scheduler_.interval == "step") scheduler_.scheduler->step();
    state_.batch_in_epoch = 1;
    return true;
  }

  Batch next_batch(IndexLoader::Iterator& batches) {
    // Advance lazily, just before the next batch is used: the loader's state
    // (what a checkpoint records) then counts exactly the batches consumed.
    if (advance_) ++batches;
    advance_ = true;
    const data::Example<>& indices = *batches;
    Batch batch = make_batch(experiment_.train, indices.data, experiment_.dtype, experiment_.device);
    ++state_.batch_in_epoch;
    return batch;
  }

  // Note [Non-finite gradients]: a gradient is checked directly only where
  // its norm is computed anyway (clipping by norm, the grad_norm metric): a
  // separate pass over every gradient costs a few percent of a step. A
  // non-finite gradient (or an overflowing update) makes the optimizer's step
  // write NaN or infinity into its parameter, which the next loss shows; the
  // parameters are then scanned to tell that case (naming the step and the
  // parameter) from a non-finite loss of finite parameters. A parameter whose
  // NaN does not reach the loss is caught by the scan before each checkpoint.
  void check_loss(double value) const {
    if (std::isfinite(value) || !flag(train_config_, "stop_on_nonfinite")) return;
    check_parameters();
    throw Error(fmt::format("step {} (phase {}, epoch {}): the training loss (train/loss, {}) is {}; lower the learning "
                            "rate or check the data", state_.step + 1, state_.phase + 1, state_.epoch + 1,
                            experiment_.pinn ? "the PINN's terms" : text(experiment_.config["loss"], "type"), value));
  }

  void check_parameters() const {
    if (!flag(train_config_, "stop_on_nonfinite") || state_.step == 0) return;
    if (auto name = first_nonfinite_parameter(experiment_.model.module()))
      throw Error(fmt::format("step {} (phase {}): the optimizer step left {} NaN or infinite (a non-finite gradient, "
                              "or an update too large for {}); lower the learning rate or clip gradients "
                              "(train.grad_clip)", state_.step, state_.phase + 1, *name, dtype_name(experiment_.dtype)));
  }

  void count_train_accuracy(const Tensor& output, const Tensor& targets) {
    state_.seen += targets.size(0);
    for (const auto& [name, k] : train_top_k_) state_.correct[name] += correct_in_top_k(output, targets, k).sum().item<double>();
  }

  void clip_and_check_gradients() {
    std::vector<Tensor> params = experiment_.model.parameters();
    const bool check = flag(train_config_, "stop_on_nonfinite");
    const json* clip = has(train_config_, "grad_clip") ? &train_config_["grad_clip"] : nullptr;
    if (clip && has(*clip, "max_norm")) {
      state_.grad_norm = nn::utils::clip_grad_norm_(params, number(*clip, "max_norm"), number(*clip, "norm_type")).item<double>();
    } else if (logs_grad_norm_) {
      std::vector<Tensor> grads;
      for (const Tensor& p : params)
        if (p.grad().defined()) grads.push_back(p.grad());
      state_.grad_norm = nn::utils::get_total_norm(grads).item<double>();
    }
    if (check && !std::isfinite(state_.grad_norm)) {
      for (const auto& item : experiment_.model.module().named_parameters()) {
        const Tensor& grad = item.value().grad();
        if (grad.defined() && !grad.isfinite().all().item<bool>())
          throw Error(fmt::format("step {} (phase {}, epoch {}): the gradient of {} is not finite; lower the learning "
                                  "rate or clip gradients (train.grad_clip)", state_.step + 1, state_.phase + 1,
                                  state_.epoch + 1, item.key()));
      }
    }
    if (clip && has(*clip, "value")) nn::utils::clip_grad_value_(params, number(*clip, "value"));
  }

  bool cadence_due(const json& cadence, bool epoch_end) const {
    const int64_t every = integer(cadence, "every");
    if (text(cadence, "unit") == "steps") return state_.step % every == 0;
    return epoch_end && state_.epoch % every == 0;
  }

  bool checkpoint_due(bool epoch_end) const { return cadence_due(train_config_["checkpoint"], epoch_end); }

  void after_step(bool epoch_end) {
    const int64_t log_every = integer(train_config_, "log_every");
    const bool last_step = state_.phase + 1 == static_cast<int64_t>(experiment_.phases.size()) &&
                           state_.phase_step >= experiment_.phases[state_.phase].steps;
    if (epoch_end) {
      ++state_.epoch;
      state_.batch_in_epoch = 0;
    }
    if (experiment_.pinn) {
      const std::string changed = experiment_.pinn->after_step(state_.step, experiment_.model.net());
      if (!changed.empty()) progress_.message(changed);
    }
    if (state_.step % log_every == 0 || last_step) log_train();
    if (epoch_end && scheduler_.scheduler && scheduler_.interval == "epoch") scheduler_.scheduler->step();
    if (experiment_.has_val && (cadence_due(train_config_["eval_every"], epoch_end) || last_step)) {
      MetricRecord record = make_record();
      const auto values = experiment_.pinn ? experiment_.pinn->evaluate(experiment_.model.net(), metric_list("val"))
                                           : evaluate(experiment_, experiment_.val, metric_list("val"));
      for (const auto& [name, value] : values) record.values["val/" + name] = value;
      append(record);
    }
    ProgressState progress;
    const PhasePlan& phase = experiment_.phases[state_.phase];
    progress.phase = fmt::format("{}/{} {}", state_.phase + 1, experiment_.phases.size(), phase.name);
    progress.epoch = state_.batch_in_epoch == 0 ? state_.epoch : state_.epoch + 1;  // the epoch under way
    progress.epochs = experiment_.pinn ? 0  // a PINN counts steps
                                       : (experiment_.total_steps() + experiment_.steps_per_epoch - 1) / experiment_.steps_per_epoch;
    progress.step = state_.step;
    progress.total_steps = experiment_.total_steps();
    // The mean training loss since the last log line (that line's, right after one).
    progress.loss = state_.loss_count > 0 ? state_.loss_sum / static_cast<double>(state_.loss_count) : last_loss_;
    if (auto it = state_.last.find("val/accuracy"); it != state_.last.end())
      progress.last_val = fmt::format("val/accuracy {:.4f}", it->second);
    else if (auto l2 = state_.last.find("val/rel_l2"); l2 != state_.last.end())
      progress.last_val = fmt::format("val/rel_l2 {:.3e}", l2->second);
    else if (auto loss = state_.last.find("val/loss"); loss != state_.last.end())
      progress.last_val = fmt::format("val/loss {:.4g}", loss->second);
    progress_.update(progress);
  }

  std::vector<std::string> metric_list(const std::string& split) const {
    std::vector<std::string> names;
    for (const auto& name : metrics_config_[split]) names.push_back(name.get<std::string>());
    return names;
  }

  MetricRecord make_record() const {
    MetricRecord record;
    record.step = state_.step;
    record.epoch = state_.epoch;
    record.phase = state_.phase + 1;
    record.time = elapsed();
    return record;
  }

  void log_train() {
    MetricRecord record = make_record();
    for (const std::string& name : metric_list("train")) {
      if (name == "loss") record.values["train/loss"] = state_.loss_sum / static_cast<double>(std::max<int64_t>(state_.loss_count, 1));
      else if (name == "lr") record.values["train/lr"] = lr_;
      else if (name == "grad_norm") record.values["train/grad_norm"] = state_.grad_norm;
      else if (accuracy_top_k(name) > 0 && state_.seen > 0)
        record.values["train/" + name] = state_.correct[name] / static_cast<double>(state_.seen);
    }
    if (experiment_.pinn) {
      const double count = static_cast<double>(std::max<int64_t>(state_.loss_count, 1));
      for (const auto& [name, sum] : state_.term_sum) record.values["train/loss_" + name] = sum / count;
      const pinn::Problem& problem = experiment_.pinn->problem;
      if (problem.weights().adaptive())
        for (size_t i = 0; i < problem.terms().size(); ++i)
          record.values["train/weight_" + problem.terms()[i]->name()] = problem.weights().values()[i];
      for (const auto& [name, value] : problem.parameters()) record.values["train/param_" + name] = value.item<double>();
      state_.term_sum.clear();
    }
    last_loss_ = record.values.count("train/loss") ? record.values["train/loss"] : last_loss_;
    state_.loss_sum = 0;
    state_.loss_count = 0;
    state_.seen = 0;
    for (auto& [name, value] : state_.correct) value = 0;
    append(record);
  }

  // Writes a record and reacts to the metrics it holds (plateau, early stopping).
  void append(const MetricRecord& record) {
    log_.append(record);
    for (const auto& [key, value] : record.values) state_.last[key] = value;
    if (scheduler_.plateau)
      if (auto it = record.values.find(scheduler_.monitor); it != record.values.end()) scheduler_.plateau->step(it->second);
    if (!has(train_config_, "early_stopping")) return;
    const json& early = train_config_["early_stopping"];
    auto it = record.values.find(text(early, "monitor"));
    if (it == record.values.end()) return;
    const bool maximize = text(early, "mode") == "max";
    const double value = it->second, delta = number(early, "min_delta");
    const bool improved = !state_.early_started || (maximize ? value > state_.early_best + delta
                                                             : value < state_.early_best - delta);
    if (improved) {
      state_.early_best = value;
      state_.early_wait = 0;
      state_.early_started = true;
    } else if (++state_.early_wait >= integer(early, "patience")) {
      state_.stopped_early = true;
      progress_.message(fmt::format("step {}: early stopping, {} has not improved for {} evaluations (best {})",
                                    state_.step, text(early, "monitor"), state_.early_wait, state_.early_best));
    }
  }

  void save_checkpoint() {
    if (state_.step == last_checkpoint_step_) return;
    check_parameters();  // never a checkpoint of NaN weights (Note [Non-finite gradients])
    std::map<std::string, Tensor> weights;
    for (const auto& item : experiment_.model.module().state_dict()) weights[item.key()] = item.value();
    std::map<std::string, std::string> files;
    files["model.safetensors"] = save_to_bytes(weights, {{"format", "pt"}});
    const bool in_phase = state_.phase < static_cast<int64_t>(experiment_.phases.size());
    if (in_phase) {
      files["optimizer.json"] = optimizer_->state_dict().dump();
      if (scheduler_.scheduler || scheduler_.plateau) files["scheduler.json"] = scheduler_.state_dict().dump();
    }
    LoopState saved = state_;
    saved.time_offset = elapsed();
    const GeneratorState generator = default_generator().get_state();
    if (experiment_.pinn) {
      std::map<std::string, Tensor> pinn_state = experiment_.pinn->state_dict();
      files["pinn.safetensors"] = save_to_bytes(pinn_state, {{"format", "pt"}});
    }
    json trainer = {{"loop", saved.to_json()},
                    {"loader", loader_ ? loader_->state_dict() : json(nullptr)},
                    {"generator", {{"seed", generator.seed}, {"offset", generator.offset}}},
                    {"config_hash", options_.config_hash}};
    files["trainer.json"] = trainer.dump();
    std::optional<double> monitored;
    const auto& policy_monitor = checkpoint_policy().monitor;
    if (auto it = state_.last.find(policy_monitor); it != state_.last.end()) monitored = it->second;
    if (fault_kind_ == "kill_in_checkpoint" && state_.step == fault_step_)
      checkpoints_.set_after_file_hook([](const std::string&) { std::raise(SIGKILL); });
    checkpoints_.save(state_.step, files, monitored);
    last_checkpoint_step_ = state_.step;
  }

  void restore() {
    std::vector<std::string> skipped;
    std::optional<Checkpoint> checkpoint = checkpoints_.load_latest(skipped);
    for (const std::string& message : skipped) progress_.message("passed over a checkpoint: " + message);
    if (!checkpoint)
      throw Error(fmt::format("--resume: {} has no complete checkpoint to resume from", options_.run_dir.string()));
    auto file = [&](const std::string& name) -> const std::string& {
      auto it = checkpoint->files.find(name);
      if (it == checkpoint->files.end())
        throw Error(fmt::format("--resume: {} has no {}", checkpoint->dir.string(), name));
      return it->second;
    };
    const json trainer = json::parse(file("trainer.json"));
    if (trainer.at("config_hash") != options_.config_hash)
      throw Error(fmt::format("--resume: {} was written by a run with another config (hash {}, this run {})",
                              checkpoint->dir.string(), trainer.at("config_hash").get<std::string>(), options_.config_hash));
    experiment_.model.module().load_state_dict(load_from_bytes(file("model.safetensors")));
    state_.from_json(trainer.at("loop"));
    const auto phases = static_cast<int64_t>(experiment_.phases.size());
    if (state_.phase + 1 < phases && state_.phase_step >= experiment_.phases[state_.phase].steps) {
      // Saved at the end of a phase: the next one starts afresh, as it does
      // right after that checkpoint in a run never interrupted.
      ++state_.phase;
      state_.phase_step = 0;
      begin_phase(/*restoring=*/true);
    } else {
      begin_phase(/*restoring=*/true);
      if (state_.phase < phases) {
        optimizer_->load_state_dict(json::parse(file("optimizer.json")));
        if (scheduler_.scheduler || scheduler_.plateau) scheduler_.load_state_dict(json::parse(file("scheduler.json")));
      }
    }
    if (loader_) loader_->load_state_dict(trainer.at("loader"));
    if (experiment_.pinn) experiment_.pinn->load_state_dict(load_from_bytes(file("pinn.safetensors")));
    default_generator().set_state({trainer.at("generator").at("seed"), trainer.at("generator").at("offset")});
    log_.truncate_after(state_.step);
    last_checkpoint_step_ = state_.step;
    progress_.message(fmt::format("resumed from {} (step {}, epoch {}, phase {})", checkpoint->dir.string(), state_.step,
                                  state_.epoch, state_.phase + 1));
  }

  void finish(RunResult& result) {
    save_checkpoint();
    if (experiment_.has_test) {
      MetricRecord record = make_record();
      json confusion;
      for (const auto& [name, value] : evaluate(experiment_, experiment_.test, metric_list("test"), &confusion))
        record.values["test/" + name] = value;
      log_.append(record);
      for (const auto& [key, value] : record.values) state_.last[key] = value;
      if (!confusion.is_null()) write_file_atomic(options_.run_dir / "confusion_matrix_test.json", confusion.dump());
    }
    result.stop_reason = state_.stopped_early
                             ? "early stopping on " + text(train_config_["early_stopping"], "monitor")
                             : "completed";
  }

  void draw() {
    if (!flag(experiment_.config["output"], "plots")) return;
    try {
      // A test metric is one point at the end: only the loss plot shows it.
      std::vector<std::string> keys;
      for (const std::string& key : experiment_.metric_keys)
        if (key.rfind("test/", 0) != 0 || key == "test/loss") keys.push_back(key);
      draw_plots(options_.run_dir / "plots", standard_plots(log_.read_all(), keys));
      if (experiment_.pinn) draw_field_plots(options_.run_dir / "plots", *experiment_.pinn, experiment_.model.net());
    } catch (const Error& e) {
      progress_.message(fmt::format("warning: no plots: {}", e.what()));
    }
  }

  Experiment& experiment_;
  TrainerOptions options_;
  const json& train_config_;
  const json& metrics_config_;
  std::unique_ptr<IndexLoader> loader_;  // none for a PINN
  // Installed before the metrics files exist, so that a SIGTERM sent once they
  // appear (as a supervisor, or the test of it, does) always finds the handler.
  StopSignalGuard signals_;
  CheckpointManager checkpoints_;
  MetricsLog log_;
  Progress progress_;
  LoopState state_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  BuiltScheduler scheduler_;
  std::vector<std::pair<std::string, int64_t>> train_top_k_;  // the train accuracy metrics and their k
  bool logs_grad_norm_ = false;
  bool is_lbfgs_ = false;
  bool is_least_squares_ = false;  // Levenberg-Marquardt: PINN runs only
  bool advance_ = false;
  double lr_ = 0, last_loss_ = 0;
  int64_t last_checkpoint_step_ = -1;
  Clock::time_point start_;
  std::string fault_kind_;
  int64_t fault_step_ = -1;
};

}  // namespace

std::optional<std::string> first_nonfinite_parameter(const nn::Module& module) {
  NoGradGuard no_grad;
  for (const auto& item : module.named_parameters())
    if (!item.value().isfinite().all().item<bool>()) return item.key();
  return std::nullopt;
}

std::map<std::string, double> evaluate(const Experiment& experiment, const SplitData& split,
                                       const std::vector<std::string>& metrics, json* confusion) {
  NoGradGuard no_grad;
  nn::Module& module = experiment.model.module();
  const bool training = module.is_training();
  module.eval();
  const json& loader = experiment.config["data"]["loader"];
  const int64_t chunk = has(loader, "eval_batch_size") ? integer(loader, "eval_batch_size") : 1000;
  const int64_t n = split.size();
  double loss_sum = 0;
  std::map<std::string, double> correct;
  const int64_t classes = std::max<int64_t>(split.num_classes, experiment.train.num_classes);
  Tensor matrix;
  const bool wants_confusion =
      confusion != nullptr && std::find(metrics.begin(), metrics.end(), "confusion_matrix") != metrics.end();
  if (wants_confusion) matrix = zeros({classes, classes}, kInt64);
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t count = std::min(chunk, n - start);
    Batch batch = make_batch(split, arange(start, start + count), experiment.dtype, experiment.device);
    Tensor output = match_target_shape(experiment.model.forward(batch), batch.targets);
    loss_sum += experiment.loss(output, batch.targets).item<double>() * static_cast<double>(count);
    for (const std::string& name : metrics)
      if (const int64_t k = accuracy_top_k(name); k > 0) correct[name] += correct_in_top_k(output, batch.targets, k).sum().item<double>();
    if (wants_confusion) {
      Tensor cells = (batch.targets.to(kInt64) * classes + predicted_class(output)).cpu();  // counted on the host
      matrix = matrix + zeros({classes * classes}, kInt64).scatter_add(0, cells, ones_like(cells)).reshape({classes, classes});
    }
  }
  module.train(training);
  std::map<std::string, double> values;
  for (const std::string& name : metrics) {
    if (name == "loss") values["loss"] = loss_sum / static_cast<double>(n);
    else if (accuracy_top_k(name) > 0) values[name] = correct[name] / static_cast<double>(n);
  }
  if (wants_confusion) {
    json rows = json::array();
    for (int64_t i = 0; i < classes; ++i) {
      json row = json::array();
      for (int64_t j = 0; j < classes; ++j) row.push_back(matrix[i][j].item<int64_t>());
      rows.push_back(row);
    }
    *confusion = {{"rows", "true class"}, {"columns", "predicted class"}, {"matrix", rows}};
  }
  return values;
}

RunResult train_experiment(Experiment& experiment, const TrainerOptions& options) {
  Trainer trainer(experiment, options);
  return trainer.run();
}

}  // namespace gradiens::train
