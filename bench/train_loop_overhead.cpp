// train_loop_overhead: what gradiens-train adds to a training epoch. Both
// sides train the MLP of configs/fashion_mnist_mlp.json for one epoch on
// Fashion-MNIST (batch 128, shuffled, Adam, cosine lr per step, the loss read
// every step) and save the weights and optimizer state at the end; the
// trainer also logs metrics, checks the gradients for non-finite values and
// writes its checkpoint atomically with a manifest. Data loading and model
// building are outside the timings on both sides.
#include "bench/train_loop_overhead.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "data/dataloader.h"
#include "data/tensor_dataset.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "nn/functional/loss.h"
#include "optim/adam.h"
#include "optim/schedulers/cosine.h"
#include "train/config/run_spec.h"
#include "train/config/validate.h"
#include "train/experiment.h"
#include "train/run/files.h"
#include "train/trainer.h"

namespace gt = gradiens::train;
namespace gd = gradiens;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

gt::json epoch_config(int threads) {
  gt::json config = gt::json::parse(gt::read_file(std::string(GRADIENS_SOURCE_DIR) + "/configs/fashion_mnist_mlp.json"));
  config["threads"] = threads;
  config["data"].erase("val");
  config["data"].erase("test");
  config["metrics"] = {{"train", {"loss", "lr"}}};
  config["train"]["epochs"] = 1;
  config["train"]["checkpoint"] = {{"every", 1}, {"unit", "epochs"}, {"keep_last", 1}};
  config["output"] = {{"plots", false}, {"progress", "none"}};
  gt::Diagnostics diagnostics;
  gt::json resolved = gt::resolve_object(config, gt::run_spec(), "", gt::builtin().specs, diagnostics);
  diagnostics.throw_if_any("train_loop_overhead's config");
  return resolved;
}

double trainer_epoch(const gt::json& config, const std::filesystem::path& dir) {
  gt::Experiment experiment = gt::build_experiment(config, std::string(GRADIENS_SOURCE_DIR) + "/configs");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  gt::TrainerOptions options;
  options.run_dir = dir;
  options.progress = "none";
  const auto start = std::chrono::steady_clock::now();
  gt::train_experiment(experiment, options);
  return seconds_since(start);
}

// The loop a user writes with the library: the same model, optimizer,
// schedule and shuffled batches, and the config's end-of-epoch checkpoint
// (the weights and the optimizer's state).
double hand_epoch(const gt::json& config, const std::filesystem::path& dir) {
  gt::Experiment experiment = gt::build_experiment(config, std::string(GRADIENS_SOURCE_DIR) + "/configs");
  auto dataset = std::make_shared<gd::data::TensorDataset>(experiment.train.inputs, experiment.train.targets);
  gd::data::DataLoader loader(dataset, gd::data::DataLoaderOptions().batch_size(128).shuffle(true).seed(0));
  auto& model = experiment.model.module();
  gd::optim::Adam optimizer(model.parameters(), gd::optim::AdamOptions(1e-3));
  gd::optim::CosineAnnealingLR scheduler(optimizer, static_cast<int64_t>(loader.size()));
  gt::Batch batch;
  const auto start = std::chrono::steady_clock::now();
  double loss_sum = 0;
  for (auto& example : loader) {
    batch.inputs = example.data;
    optimizer.zero_grad();
    gd::Tensor loss = gd::nn::functional::cross_entropy(experiment.model.forward(batch), example.target);
    loss.backward();
    optimizer.step();
    scheduler.step();
    loss_sum += loss.item<double>();
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  model.save((dir / "model.safetensors").string());
  gt::write_file_atomic(dir / "optimizer.json", optimizer.state_dict().dump());
  const double seconds = seconds_since(start);
  if (!(loss_sum > 0)) std::fprintf(stderr, "train_loop_overhead: unexpected loss sum %g\n", loss_sum);
  return seconds;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

void train_loop_overhead(int threads, int repeat, const char* version) {
  const gt::json config = epoch_config(threads);
  const auto dir = std::filesystem::temp_directory_path() / "gradiens_train_loop_overhead";
  std::vector<double> trainer, hand;
  for (int i = 0; i < repeat; ++i) {
    hand.push_back(hand_epoch(config, dir));
    trainer.push_back(trainer_epoch(config, dir));
  }
  std::filesystem::remove_all(dir);
  const double t = median(trainer) * 1e3, h = median(hand) * 1e3;
  std::printf("{\"workload\": \"train_loop_overhead\", \"impl\": \"gradiens %s\", \"threads\": %d, \"median_ms\": %.1f, "
              "\"min_ms\": %.1f, \"max_ms\": %.1f, \"hand_median_ms\": %.1f, \"hand_min_ms\": %.1f, \"ratio\": %.4f, "
              "\"what\": \"one epoch of configs/fashion_mnist_mlp.json (469 steps) through the trainer vs by hand\"}\n",
              version, threads, t, *std::min_element(trainer.begin(), trainer.end()) * 1e3,
              *std::max_element(trainer.begin(), trainer.end()) * 1e3, h,
              *std::min_element(hand.begin(), hand.end()) * 1e3, t / h);
  std::fflush(stdout);
}
