// Building an Experiment from a resolved config: data, model, loss, phases.
#include "train/experiment.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/cuda.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"
#include "optim/lbfgs.h"
#include "pinn/least_squares.h"
#include "train/config/validate.h"

namespace gradiens::train {

namespace rnn = nn::utils::rnn;

Model::Model(nn::AnyModule net, std::shared_ptr<SequenceEncoderImpl> encoder)
    : net_(std::make_shared<nn::AnyModule>(std::move(net))), encoder_(std::move(encoder)) {}

Tensor Model::forward(const Batch& batch) const {
  if (!encoder_) return net_->forward(batch.inputs);
  Tensor x = encoder_->forward_packed(*batch.packed);
  if (net_->ptr().get() == encoder_.get()) return x;
  auto sequential = std::static_pointer_cast<nn::SequentialImpl>(net_->ptr());
  bool first = true;
  for (const nn::AnyModule& layer : *sequential) {
    if (!first) x = layer.forward(x);
    first = false;
  }
  return x;
}

std::vector<Tensor> Model::parameters() const {
  std::vector<Tensor> params = net_->ptr()->parameters();
  params.insert(params.end(), extra_.begin(), extra_.end());
  return params;
}

int64_t Experiment::total_steps() const {
  int64_t total = 0;
  for (const PhasePlan& phase : phases) total += phase.steps;
  return total;
}

Tensor match_target_shape(const Tensor& output, const Tensor& targets) {
  if (output.dim() == targets.dim() + 1 && output.size(-1) == 1 && is_floating_point(targets.scalar_type()))
    return output.squeeze(-1);
  return output;
}

namespace {

// indices reordered by decreasing sequence length (ties keep their order).
// A batch in this order packs with enforce_sorted, so the recurrent layers run
// it without permuting rows on the device.
Tensor by_decreasing_length(const SplitData& split, const Tensor& indices) {
  const Tensor order = indices.to(kInt64).contiguous();
  const int64_t* index = order.cpu_data_ptr<int64_t>();
  std::vector<int64_t> sorted(index, index + order.numel());
  std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t a, int64_t b) {
    return split.sequences[static_cast<size_t>(a)].size(0) > split.sequences[static_cast<size_t>(b)].size(0);
  });
  return tensor(sorted, TensorOptions().dtype(kInt64));
}

}  // namespace

Batch make_batch(const SplitData& split, const Tensor& indices_in, ScalarType dtype, const Device& device) {
  const bool sorted_on_host = !split.sequences.empty() && device.is_cuda();
  const Tensor indices = sorted_on_host ? by_decreasing_length(split, indices_in) : indices_in;
  Batch batch;
  batch.size = indices.numel();
  batch.targets = split.targets.index_select(0, indices);
  if (is_floating_point(batch.targets.scalar_type())) batch.targets = batch.targets.to(dtype);
  batch.targets = batch.targets.to(device);
  if (split.sequences.empty()) {
    batch.inputs = split.inputs.index_select(0, indices);
    if (is_floating_point(batch.inputs.scalar_type())) batch.inputs = batch.inputs.to(dtype);
    batch.inputs = batch.inputs.to(device);
    return batch;
  }
  std::vector<Tensor> sequences;
  std::vector<int64_t> lengths;
  const Tensor order = indices.to(kInt64).contiguous();
  const int64_t* index = order.cpu_data_ptr<int64_t>();
  for (int64_t i = 0; i < batch.size; ++i) {
    const Tensor& sequence = split.sequences[static_cast<size_t>(index[i])];
    sequences.push_back(sequence.to(dtype));
    lengths.push_back(sequence.size(0));
  }
  // Packed on the host, then moved (batch_sizes stay on the host, as PyTorch keeps them).
  batch.packed = rnn::pack_padded_sequence(rnn::pad_sequence(sequences, /*batch_first=*/true), lengths,
                                           /*batch_first=*/true, /*enforce_sorted=*/sorted_on_host)
                     .to(device);
  return batch;
}

std::unique_ptr<optim::Optimizer> build_optimizer(const PhasePlan& phase, const std::vector<Tensor>& params) {
  return builtin().optimizers.at(text(phase.optimizer, "type"))(params, phase.optimizer);
}

namespace {

// Builds a scheduler config for a phase of `steps` optimizer steps, replacing
// its "auto" lengths in `config` by the numbers they become.
BuiltScheduler build_scheduler_config(json& config, optim::Optimizer& optimizer, int64_t steps, int64_t steps_per_epoch) {
  SchedulerContext context;
  context.steps_per_epoch = steps_per_epoch;
  context.total_steps = steps;
  context.total_epochs = (steps + steps_per_epoch - 1) / steps_per_epoch;
  return builtin().schedulers.at(text(config, "type"))(optimizer, config, context, builtin());
}

}  // namespace

BuiltScheduler build_scheduler(const PhasePlan& phase, optim::Optimizer& optimizer, int64_t steps_per_epoch) {
  json config = phase.scheduler;
  return build_scheduler_config(config, optimizer, phase.steps, steps_per_epoch);
}

namespace {

SplitData build_split(const json& config, const std::string& split, uint64_t seed, const std::string& base_dir) {
  const std::string path = "data." + split;
  DataContext context;
  context.seed = seed;
  context.base_dir = base_dir;
  SplitData data = builtin().datasets.at(text(config, "type"))(config, path, context);
  if (data.size() == 0) throw Error(fmt::format("{}: the split has no samples", path));
  return data;
}

std::vector<int64_t> sample_shape(const SplitData& data) {
  if (!data.sequences.empty()) return {data.sequences[0].size(-1)};
  return std::vector<int64_t>(data.inputs.sizes().begin() + 1, data.inputs.sizes().end());
}

void check_split_matches(const SplitData& train, const SplitData& other, const std::string& split) {
  if (train.sequences.empty() != other.sequences.empty() || sample_shape(train) != sample_shape(other))
    throw Error(fmt::format("data.{}: its samples do not have the shape of data.train's ({} against {})", split,
                            json(sample_shape(other)).dump(), json(sample_shape(train)).dump()));
}

void apply_init(nn::Module& module, const json& init) {
  NoGradGuard no_grad;
  for (const auto& item : module.named_parameters()) {
    const std::string& name = item.key();
    const Tensor& parameter = item.value();
    const bool is_bias = name == "bias" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0) ||
                         name.find("bias_") != std::string::npos;
    const char* key = is_bias ? "bias" : parameter.dim() >= 2 ? "weight" : nullptr;
    if (key == nullptr || !has(init, key)) continue;
    builtin().inits.at(text(init[key], "type"))(parameter, init[key]);
  }
}

void check_monitor(const json& config, const std::string& path, const std::vector<std::string>& keys) {
  const std::string monitor = text(config, "monitor");
  if (std::find(keys.begin(), keys.end(), monitor) != keys.end() && monitor.rfind("test/", 0) != 0) return;
  std::string logged;
  for (const std::string& key : keys)
    if (key.rfind("test/", 0) != 0) logged += (logged.empty() ? "" : ", ") + key;
  auto close = suggest(monitor, keys);
  throw Error(fmt::format("{}: \"{}\" is not a logged metric{} (logged: {})", join_path(path, "monitor"), monitor,
                          close ? fmt::format("; did you mean \"{}\"?", *close) : "", logged));
}

}  // namespace

namespace {

// The data, model, loss, steps per epoch and metric keys of a run on data.
void build_data_run(Experiment& experiment, json& config, const std::string& base_dir) {
  const auto seed = static_cast<uint64_t>(integer(config, "seed"));
  // Data: each split its own seed, so synthetic splits differ.
  const json& data = config["data"];
  experiment.train = build_split(data["train"], "train", seed * 4 + 1, base_dir);
  if ((experiment.has_val = has(data, "val"))) {
    experiment.val = build_split(data["val"], "val", seed * 4 + 2, base_dir);
    check_split_matches(experiment.train, experiment.val, "val");
  }
  if ((experiment.has_test = has(data, "test"))) {
    experiment.test = build_split(data["test"], "test", seed * 4 + 3, base_dir);
    check_split_matches(experiment.train, experiment.test, "test");
  }

  // Model: weights drawn from the run's seed, sizes derived along the layers.
  manual_seed(seed);
  LayerContext context;
  context.dtype = experiment.dtype;
  context.sequences = !experiment.train.sequences.empty();
  context.sample_shape = sample_shape(experiment.train);
  const ScalarType input_dtype =
      context.sequences ? experiment.train.sequences[0].scalar_type() : experiment.train.inputs.scalar_type();
  context.sample_dtype = is_floating_point(input_dtype) ? experiment.dtype : input_dtype;
  nn::AnyModule net = builtin().build_layer(config["model"], "model", context);
  std::shared_ptr<SequenceEncoderImpl> encoder;
  if (!experiment.train.sequences.empty()) {
    encoder = std::dynamic_pointer_cast<SequenceEncoderImpl>(net.ptr());
    if (auto sequential = std::dynamic_pointer_cast<nn::SequentialImpl>(net.ptr()))
      encoder = std::dynamic_pointer_cast<SequenceEncoderImpl>((*sequential)[0]);
  }
  if (has(config, "init")) apply_init(*net.ptr(), config["init"]);
  if (experiment.device.is_cuda()) net.ptr()->to(experiment.device);  // weights drawn on the host from the run's seed, then moved
  experiment.model = Model(net, encoder);

  const std::string loss_type = text(config["loss"], "type");
  const int64_t classes = experiment.train.num_classes;
  const int64_t outputs = context.sample_shape.empty() ? 1 : context.sample_shape.back();
  if ((loss_type == "cross_entropy" || loss_type == "nll_loss") && classes > 0 && outputs != classes)
    throw Error(fmt::format("model: the last layer gives {} outputs, but data.train has {} classes ({} needs one "
                            "output per class)", outputs, classes, loss_type));
  experiment.loss = builtin().losses.at(loss_type)(config["loss"], experiment.dtype);

  // Batches and steps per epoch.
  const json& loader = data["loader"];
  const int64_t batch_size = integer(loader, "batch_size"), n = experiment.train.size();
  experiment.batches_per_epoch = flag(loader, "drop_last") ? n / batch_size : (n + batch_size - 1) / batch_size;
  if (experiment.batches_per_epoch == 0)
    throw Error(fmt::format("data.loader.batch_size: {} is larger than the {} training samples, and drop_last leaves "
                            "no batch", batch_size, n));
  const int64_t accumulate = integer(config["train"], "accumulate");
  experiment.steps_per_epoch = (experiment.batches_per_epoch + accumulate - 1) / accumulate;

  // Metrics, in CSV order.
  for (const char* split : {"train", "val", "test"}) {
    if ((std::string(split) == "val" && !experiment.has_val) || (std::string(split) == "test" && !experiment.has_test))
      continue;
    const json& names = config["metrics"][split];
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string name = names[i].get<std::string>();
      if (name != "loss" && name != "lr" && name != "grad_norm" && classes == 0)
        throw Error(fmt::format("metrics.{}[{}]: {} needs class targets, but data.train's targets are regression "
                                "values", split, i, name));
      if (name == "rel_l2" || name == "max_abs_error")
        throw Error(fmt::format("metrics.{}[{}]: {} scores a PINN against its reference solution; this run has data",
                                split, i, name));
      if (name != "confusion_matrix") experiment.metric_keys.push_back(std::string(split) + "/" + name);
    }
  }
}

// The problem, model and metric keys of a PINN run. A step is one full pass
// over the points: an epoch is a step.
void build_pinn_experiment(Experiment& experiment, json& config, const std::string& base_dir) {
  const auto seed = static_cast<uint64_t>(integer(config, "seed"));
  experiment.pinn = build_pinn_run(config["pinn"], experiment.dtype, seed, base_dir);
  const PinnRun& run = *experiment.pinn;
  manual_seed(seed);
  LayerContext context;
  context.dtype = experiment.dtype;
  context.sample_shape = {run.problem.domain().dim()};
  context.sample_dtype = experiment.dtype;
  nn::AnyModule net = builtin().build_layer(config["model"], "model", context);
  if (context.sample_shape.size() != 1)
    throw Error(fmt::format("model: a PINN's network must map [N, {}] points to [N, m] outputs; it gives samples of "
                            "shape {}", run.problem.domain().dim(), json(context.sample_shape).dump()));
  if (has(config, "init")) apply_init(*net.ptr(), config["init"]);
  if (experiment.device.is_cuda()) {
    if (integer(config["pinn"]["causal"], "chunks") > 0)
      throw Error("device: causal training (pinn.causal) computes on \"cpu\" only so far");
    // Weights and PDE parameters drawn on the host from the run's seed, then
    // moved; the points stay on the host and follow the network at each step.
    net.ptr()->to(experiment.device);
    NoGradGuard no_grad;
    for (const Tensor& parameter : run.problem.parameter_tensors()) parameter.set_data(parameter.to(experiment.device));
  }
  experiment.model = Model(net, nullptr);
  experiment.model.set_extra_parameters(run.problem.parameter_tensors());
  if (integer(config["train"], "accumulate") != 1)
    throw Error("train.accumulate: a PINN step already covers all of its points; accumulate must be 1");
  experiment.batches_per_epoch = 1;
  experiment.steps_per_epoch = 1;
  experiment.has_val = run.has_reference();
  for (size_t i = 0; i < config["metrics"]["train"].size(); ++i) {
    const std::string name = config["metrics"]["train"][i].get<std::string>();
    if (name != "loss" && name != "lr" && name != "grad_norm")
      throw Error(fmt::format("metrics.train[{}]: a PINN run logs loss, lr and grad_norm while training, not {}", i, name));
    experiment.metric_keys.push_back("train/" + name);
  }
  for (const pinn::TermPtr& term : run.problem.terms()) experiment.metric_keys.push_back("train/loss_" + term->name());
  if (run.problem.weights().adaptive())
    for (const pinn::TermPtr& term : run.problem.terms()) experiment.metric_keys.push_back("train/weight_" + term->name());
  for (const auto& [name, value] : run.problem.parameters()) experiment.metric_keys.push_back("train/param_" + name);
  for (const char* split : {"val", "test"}) {
    const json& names = config["metrics"][split];
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string name = names[i].get<std::string>();
      if (name != "loss" && name != "rel_l2" && name != "max_abs_error")
        throw Error(fmt::format("metrics.{}[{}]: a PINN run scores loss, rel_l2 and max_abs_error against its "
                                "reference, not {}", split, i, name));
      if (std::string(split) == "val" && experiment.has_val) experiment.metric_keys.push_back("val/" + name);
    }
  }
}

}  // namespace

Experiment build_experiment(json config, const std::string& base_dir) {
  Experiment experiment;
  if (text(config, "device") == "cuda") {
    if (!cuda::is_available())
      throw Error("device: \"cuda\" needs a CUDA device, and none is available on this machine; use \"cpu\"");
    experiment.device = Device(kCUDA, static_cast<int>(cuda::current_device()));
  }
  experiment.dtype = text(config, "dtype") == "float64" ? kFloat64 : kFloat32;
  set_num_threads(static_cast<int>(integer(config, "threads")));
  if (has(config, "pinn")) build_pinn_experiment(experiment, config, base_dir);
  else build_data_run(experiment, config, base_dir);
  const int64_t accumulate = integer(config["train"], "accumulate");

  // Phases, each with its optimizer and scheduler built once on the model's
  // parameters to check them and to fill in "auto" values.
  json& train = config["train"];
  auto plan = [&](json& phase_config, json& optimizer, json* scheduler, const std::string& path) {
    PhasePlan phase;
    phase.name = has(phase_config, "name") ? text(phase_config, "name") : text(optimizer, "type");
    phase.optimizer = optimizer;
    phase.steps = has(phase_config, "steps") ? integer(phase_config, "steps")
                                             : integer(phase_config, "epochs") * experiment.steps_per_epoch;
    if (text(optimizer, "type") == "LBFGS" && accumulate != 1)
      throw Error(fmt::format("train.accumulate: LBFGS ({}) re-evaluates the loss on one batch, so accumulate must be 1",
                              path));
    if (text(optimizer, "type") == "LevenbergMarquardt") {
      if (experiment.device.is_cuda())
        throw Error(fmt::format("{}optimizer: LevenbergMarquardt computes on \"cpu\" only so far (its damped solve has "
                                "no CUDA kernel)", path));
      std::string why;
      if (!experiment.pinn)
        throw Error(fmt::format("{}optimizer: LevenbergMarquardt fits residuals, which only PINN runs (a \"pinn\" "
                                "section) have", path));
      if (!pinn::least_squares_supported(experiment.pinn->problem, experiment.model.net(), &why))
        throw Error(fmt::format("{}optimizer: LevenbergMarquardt needs per-sample Jacobians, but {}", path, why));
    }
    auto optimizer_object = build_optimizer(phase, experiment.model.parameters());
    if (scheduler != nullptr && has(*scheduler, "type")) {
      BuiltScheduler built = build_scheduler_config(*scheduler, *optimizer_object, phase.steps, experiment.steps_per_epoch);
      phase.scheduler = *scheduler;  // with "auto" replaced
      if (built.plateau) check_monitor(*scheduler, path + "scheduler", experiment.metric_keys);
    }
    experiment.phases.push_back(phase);
  };
  if (has(train, "phases")) {
    for (size_t i = 0; i < train["phases"].size(); ++i) {
      json& phase = train["phases"][i];
      plan(phase, phase["optimizer"], phase.contains("scheduler") ? &phase["scheduler"] : nullptr,
           join_path(join_path("train.phases", i), ""));
    }
  } else {
    plan(train, config["optimizer"], config.contains("scheduler") ? &config["scheduler"] : nullptr, "");
  }
  if (has(train, "early_stopping")) check_monitor(train["early_stopping"], "train.early_stopping", experiment.metric_keys);
  if (has(train["checkpoint"], "keep_best"))
    check_monitor(train["checkpoint"]["keep_best"], "train.checkpoint.keep_best", experiment.metric_keys);
  experiment.config = std::move(config);
  return experiment;
}

}  // namespace gradiens::train
