// An Experiment: everything a resolved config builds before training starts —
// the data splits, the model (sizes derived from the data), the loss, and each
// phase's optimizer and scheduler configs with their "auto" values filled in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nn/utils/rnn.h"
#include "train/registry/registry.h"
#include "train/pinn/pinn_run.h"
#include "train/registry/sequence_encoder.h"

namespace gradiens::train {

// One batch: inputs [B, ...] or a packed batch of sequences, and targets.
struct Batch {
  Tensor inputs;
  std::optional<nn::utils::rnn::PackedSequence> packed;
  Tensor targets;
  int64_t size = 0;
};

// The network: its root module (whose state_dict names the weights) and a
// forward over a Batch. With sequence data its first layer is a SequenceEncoder.
class Model {
 public:
  Model() = default;
  Model(nn::AnyModule net, std::shared_ptr<SequenceEncoderImpl> encoder);
  Tensor forward(const Batch& batch) const;
  nn::Module& module() const { return *net_->ptr(); }
  const nn::AnyModule& net() const { return *net_; }
  // The network's parameters, then the extra ones (a PINN's PDE coefficients).
  std::vector<Tensor> parameters() const;
  void set_extra_parameters(std::vector<Tensor> extra) { extra_ = std::move(extra); }

 private:
  std::shared_ptr<nn::AnyModule> net_;
  std::shared_ptr<SequenceEncoderImpl> encoder_;
  std::vector<Tensor> extra_;
};

struct PhasePlan {
  std::string name;
  json optimizer;  // resolved optimizer config
  json scheduler;  // resolved scheduler config, or null
  int64_t steps = 0;
};

struct Experiment {
  json config;  // resolved, with derived values filled in
  ScalarType dtype = kFloat32;
  Device device = Device(kCPU);  // where the model and its batches live
  SplitData train, val, test;  // val/test undefined (size 0) when not configured
  bool has_val = false, has_test = false;
  Model model;
  LossFunction loss;
  std::shared_ptr<PinnRun> pinn;  // a PINN run (config "pinn"): no data splits, no loss function
  int64_t batches_per_epoch = 0, steps_per_epoch = 0;
  std::vector<PhasePlan> phases;
  // Every scalar metric logged ("train/loss", "val/accuracy", ...), in CSV order.
  std::vector<std::string> metric_keys;

  int64_t total_steps() const;
};

// Builds everything from a resolved config; `base_dir` is the config file's
// folder (relative data paths start there). Errors name their JSON paths.
Experiment build_experiment(json config, const std::string& base_dir);

// Gathers the samples at `indices` of a split into a batch in `dtype` on `device`.
// Sequences are packed on the host; for a cuda device they come in decreasing
// length order (their targets alike), so the device never permutes rows.
Batch make_batch(const SplitData& split, const Tensor& indices, ScalarType dtype, const Device& device);

// An output [B, 1] against targets [B] is compared as [B] (BCE, MSE on one output).
Tensor match_target_shape(const Tensor& output, const Tensor& targets);

// Builds the optimizer and scheduler of a phase over `params`.
std::unique_ptr<optim::Optimizer> build_optimizer(const PhasePlan& phase, const std::vector<Tensor>& params);
BuiltScheduler build_scheduler(const PhasePlan& phase, optim::Optimizer& optimizer, int64_t steps_per_epoch);

}  // namespace gradiens::train
