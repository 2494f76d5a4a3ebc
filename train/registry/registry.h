// The registries of gradiens-train: for each name a config may use ("Linear",
// "Adam", "StepLR", "cross_entropy", "FashionMNIST", ...) its spec and the
// function that builds it from the resolved JSON. builtin() holds them all.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/modules/container.h"
#include "optim/optimizer.h"
#include "optim/schedulers/base.h"
#include "optim/schedulers/plateau.h"
#include "train/config/spec.h"
#include "train/pinn/context.h"

namespace gradiens::train {

// What a layer's builder knows of its input, and updates to its output: the
// per-sample shape (no batch dimension) and dtype, and whether the input is a
// packed batch of variable-length sequences (only a recurrent layer takes one).
struct LayerContext {
  std::vector<int64_t> sample_shape;
  ScalarType sample_dtype = kFloat32;
  ScalarType dtype = kFloat32;  // the model's parameters
  bool sequences = false;
};
class Builders;
// Builds one layer from its resolved config. Sizes derived from the input
// (in_features, in_channels, num_features, ...) are written back into `config`
// when absent, and a given value that disagrees is an error naming both.
// The caller moves `context` to the layer's output shape (by a dry forward
// pass) unless the builder has done so (`context_updated`).
using LayerFactory =
    std::function<nn::AnyModule(json& config, const std::string& path, LayerContext& context, bool& context_updated,
                                const Builders& builders)>;

// A loss: (model output, target) -> scalar. Shapes are matched by the caller
// (an output [B, 1] against a target [B] is squeezed).
using LossFunction = std::function<Tensor(const Tensor& output, const Tensor& target)>;
using LossFactory = std::function<LossFunction(const json& config, ScalarType dtype)>;

using OptimizerFactory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor> params, const json& config)>;

// What a scheduler's "auto" lengths follow from.
struct SchedulerContext {
  int64_t steps_per_epoch = 1;  // optimizer steps in an epoch
  int64_t total_steps = 1;      // optimizer steps in the phase
  int64_t total_epochs = 1;     // epochs in the phase (rounded up)
};
// A built scheduler: either a chainable LRScheduler or ReduceLROnPlateau,
// stepped every optimizer step ("interval": "step") or every epoch ("epoch");
// ReduceLROnPlateau steps with the metric `monitor` at each evaluation.
struct BuiltScheduler {
  std::shared_ptr<optim::LRScheduler> scheduler;
  std::shared_ptr<optim::ReduceLROnPlateau> plateau;
  std::string interval = "epoch";
  std::string monitor;
  nlohmann::json state_dict() const;
  void load_state_dict(const nlohmann::json& state);
};
// `config` is resolved; "auto" values are replaced by the numbers they become.
using SchedulerFactory =
    std::function<BuiltScheduler(optim::Optimizer& optimizer, json& config, const SchedulerContext& context,
                                 const Builders& builders)>;

// One split of a data set, whole in memory: inputs [N, ...] (or N variable-
// length sequences [L_i, F]) and targets [N] (class indices, int64) or [N, ...]
// (regression values).
struct SplitData {
  Tensor inputs;
  std::vector<Tensor> sequences;  // when the samples are sequences
  Tensor targets;
  int64_t num_classes = 0;        // 0 for regression targets
  int64_t size() const;
};
// What a dataset's builder needs besides its config: the seed of a synthetic
// split (each split its own) and the folder relative file paths start from
// (the config file's).
struct DataContext {
  uint64_t seed = 0;
  std::string base_dir;
};
using DatasetFactory = std::function<SplitData(const json& config, const std::string& path, const DataContext& context)>;

// Parameter initialization: fills `tensor` in place.
using InitFactory = std::function<void(Tensor tensor, const json& config)>;

// The pieces of a "pinn" section (train/pinn/): domains, the PDE and the
// conditions (loss terms), and reference solutions.
using GeometryFactory = std::function<pinn::GeometryPtr(const json& config, const std::string& path, const Builders& builders)>;
using TermFactory = std::function<pinn::TermPtr(const json& config, const std::string& path, const PinnContext& context)>;
using ReferenceFactory =
    std::function<PinnReference(const json& config, const std::string& path, const PinnContext& context)>;

class Builders {
 public:
  SpecRegistry specs;
  std::map<std::string, LayerFactory> layers;
  std::map<std::string, LossFactory> losses;
  std::map<std::string, OptimizerFactory> optimizers;
  std::map<std::string, SchedulerFactory> schedulers;
  std::map<std::string, DatasetFactory> datasets;
  std::map<std::string, InitFactory> inits;
  std::map<std::string, GeometryFactory> geometries;
  std::map<std::string, TermFactory> pdes, conditions;
  std::map<std::string, ReferenceFactory> references;

  // Registers `spec` under `category` with its builder.
  template <class Factory>
  void add(std::map<std::string, Factory>& factories, const std::string& category, ObjectSpec spec, Factory build) {
    const std::string name = spec.type_name;
    specs.add(category, std::move(spec));
    factories.emplace(name, std::move(build));
  }

  // Builds a typed layer config (dispatching on "type"), moving `context` to its output.
  nn::AnyModule build_layer(json& config, const std::string& path, LayerContext& context) const;
};

// The category names, as specs and error messages use them.
inline constexpr const char* kLayer = "layer";
inline constexpr const char* kLoss = "loss";
inline constexpr const char* kOptimizer = "optimizer";
inline constexpr const char* kScheduler = "scheduler";
inline constexpr const char* kDataset = "dataset";
inline constexpr const char* kInit = "init";
inline constexpr const char* kGeometry = "geometry";
inline constexpr const char* kPde = "pde";
inline constexpr const char* kCondition = "condition";
inline constexpr const char* kReference = "reference";

// Every built-in type, registered once.
const Builders& builtin();

// The registration functions builtin() calls, one per file of train/registry/.
void register_layers(Builders& builders);
void register_losses(Builders& builders);
void register_optimizers(Builders& builders);
void register_schedulers(Builders& builders);
void register_datasets(Builders& builders);
void register_inits(Builders& builders);
void register_pinn(Builders& builders);  // train/pinn/registry.cpp

// Reads a resolved value: numbers, integers, strings and booleans of the spec.
double number(const json& config, const std::string& key);
int64_t integer(const json& config, const std::string& key);
std::string text(const json& config, const std::string& key);
bool flag(const json& config, const std::string& key);
bool has(const json& config, const std::string& key);  // present and not null

}  // namespace gradiens::train
