// Fashion-MNIST: an MLP and a small CNN trained on the real data set through
// the DataLoader (shuffled, worker threads), with per-epoch loss, test accuracy
// and epoch time; examples/fashion_mnist_torch.py runs the same in PyTorch.
// Recipe for both: inputs normalized with the training set's mean and std,
// Adam, the learning rate cosine-annealed to 0 over the run, stepped per batch.
// --loader-bench instead measures the DataLoader alone (samples/s, 0 and 2 workers).
// --device cuda trains on the GPU: pinned batches, copied without blocking.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "data/data.h"
#include "gradiens.h"

namespace gd = gradiens;
namespace F = gradiens::nn::functional;

namespace {

struct Options {
  std::string model = "both";  // mlp, cnn or both
  int64_t epochs = 5;
  int threads = 1;
  int64_t workers = 2;
  int64_t batch_size = 128;
  double lr = 1e-3;
  uint64_t seed = 0;
  std::string root = gd::data::datasets::FashionMNIST::kDefaultRoot;
  bool loader_bench = false;
  std::string device = "cpu";
};

// Command line (CLI11); --help lists the options and their defaults.
Options parse_options(int argc, char** argv) {
  Options options;
  CLI::App app("MLP and CNN on Fashion-MNIST through the DataLoader (Adam, lr cosine-annealed to 0 over the run)",
               "fashion_mnist");
  app.add_option("--model", options.model, "mlp, cnn or both")->check(CLI::IsMember({"mlp", "cnn", "both"}))
      ->capture_default_str();
  app.add_option("--epochs", options.epochs, "epochs")->check(CLI::Range(int64_t{1}, int64_t{1000}))
      ->capture_default_str();
  app.add_option("--threads", options.threads, "compute threads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--workers", options.workers, "DataLoader worker threads")
      ->check(CLI::Range(int64_t{0}, int64_t{256}))->capture_default_str();
  app.add_option("--batch-size", options.batch_size, "batch size")->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--lr", options.lr, "Adam's initial learning rate")->check(CLI::Range(1e-12, 1e3))
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the weights and the shuffle")->capture_default_str();
  app.add_option("--root", options.root, "folder of the IDX files (Debian's dataset-fashion-mnist by default)")
      ->capture_default_str();
  app.add_option("--device", options.device, "cpu, cuda or cuda:N")->capture_default_str();
  app.add_flag("--loader-bench", options.loader_bench,
               "time the DataLoader alone (batch B, shuffled; best of 3 epochs) with 0 and 2 workers");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return options;
}

// The training images' mean and standard deviation, as torchvision's Normalize takes them.
constexpr double kMean = 0.2860, kStd = 0.3530;

gd::Tensor normalize(const gd::Tensor& images) { return (images - kMean) / kStd; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The MLP: 784-512-256-10 with ReLU (784-256-128-10 reaches 88% only just).
// The CNN: two blocks of 3x3 conv (same padding) + ReLU + 2x2 max-pool, 32
// then 64 channels, then 3136-128-10.
gd::nn::Sequential make_model(const std::string& kind) {
  namespace nn = gd::nn;
  if (kind == "mlp")
    return nn::Sequential(nn::Flatten(), nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 256), nn::ReLU(),
                          nn::Linear(256, 10));
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Flatten(), nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
}

// Test accuracy through the whole-set tensors, 1000 images at a time.
double accuracy(gd::nn::Sequential& model, const gd::data::datasets::FashionMNIST& test, const gd::Device& device) {
  gd::NoGradGuard no_grad;
  model->eval();
  int64_t correct = 0;
  const int64_t n = test.images().size(0);
  for (int64_t start = 0; start < n; start += 1000) {
    const int64_t count = std::min<int64_t>(1000, n - start);
    gd::Tensor predicted = model->forward(normalize(test.images().narrow(0, start, count).to(device))).argmax(1);
    correct += predicted.eq(test.targets().narrow(0, start, count).to(device)).sum().item<int64_t>();
  }
  model->train();
  return static_cast<double>(correct) / static_cast<double>(n);
}

struct EpochResult {
  int64_t epoch;
  double loss, accuracy, seconds;
};

std::vector<EpochResult> train(const std::string& kind, const Options& options,
                               const std::shared_ptr<gd::data::datasets::FashionMNIST>& train_set,
                               const gd::data::datasets::FashionMNIST& test_set) {
  gd::manual_seed(options.seed);
  const gd::Device device(options.device);
  gd::nn::Sequential model = make_model(kind);
  model->to(device);
  gd::optim::Adam optimizer(model->parameters(), gd::optim::AdamOptions(options.lr));
  gd::data::DataLoader loader(train_set, gd::data::DataLoaderOptions()
                                             .batch_size(options.batch_size)
                                             .shuffle(true)
                                             .num_workers(options.workers)
                                             .pin_memory(device.is_cuda())
                                             .seed(options.seed));
  gd::optim::CosineAnnealingLR scheduler(optimizer, options.epochs * static_cast<int64_t>(loader.size()));
  std::vector<EpochResult> results;
  for (int64_t epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    double total = 0;
    int64_t count = 0;
    for (auto& batch : loader) {
      optimizer.zero_grad();
      gd::Tensor loss = F::cross_entropy(model->forward(normalize(batch.data.to(device, /*non_blocking=*/true))),
                                         batch.target.to(device, /*non_blocking=*/true));
      loss.backward();
      optimizer.step();
      scheduler.step();
      const int64_t size = batch.target.size(0);
      total += loss.item<double>() * static_cast<double>(size);
      count += size;
    }
    const double seconds = seconds_since(start);
    const double acc = accuracy(model, test_set, device);
    std::printf("%s epoch %lld: train loss %.4f, test accuracy %.2f%%, epoch time %.2f s\n", kind.c_str(),
                static_cast<long long>(epoch), total / static_cast<double>(count), 100 * acc, seconds);
    results.push_back({epoch, total / static_cast<double>(count), acc, seconds});
  }
  return results;
}

// Shuffled epochs of batches, touching each, for the DataLoader's own
// throughput: the best of 3 epochs (the first also warms the allocator's cache).
int loader_bench(const Options& options, const std::shared_ptr<gd::data::datasets::FashionMNIST>& train_set) {
  std::string json = "{\"example\": \"fashion_mnist_loader_bench\", \"batch_size\": " +
                     std::to_string(options.batch_size) + ", \"samples_per_second\": {";
  for (int64_t workers : {int64_t{0}, int64_t{2}}) {
    gd::data::DataLoader loader(train_set, gd::data::DataLoaderOptions()
                                               .batch_size(options.batch_size)
                                               .shuffle(true)
                                               .num_workers(workers)
                                               .seed(options.seed));
    double best = 0;
    for (int epoch = 0; epoch < 3; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      int64_t samples = 0;
      double checksum = 0;  // keeps the batches observably used
      for (auto& batch : loader) {
        samples += batch.target.size(0);
        checksum += batch.data.data_ptr<float>()[0];
      }
      const double rate = static_cast<double>(samples) / seconds_since(start);
      best = std::max(best, rate);
      std::printf("DataLoader, %lld workers, epoch %d: %lld samples, %.0f samples/s (checksum %.3f)\n",
                  static_cast<long long>(workers), epoch, static_cast<long long>(samples), rate, checksum);
    }
    json += (workers == 0 ? "\"" : ", \"") + std::to_string(workers) + "\": " + std::to_string(std::lround(best));
  }
  std::printf("%s}}\n", json.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines show up as they come, even in a pipe
  try {
    const gd::Device device(options.device);
    GD_CHECK(!device.is_cuda() || gd::cuda::is_available(), "--device " + options.device +
                                                                ": no CUDA device is available on this machine");
  } catch (const gd::Error& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 2;
  }
  gd::set_num_threads(options.threads);

  const auto load_start = std::chrono::steady_clock::now();
  std::shared_ptr<gd::data::datasets::FashionMNIST> train_set;
  std::unique_ptr<gd::data::datasets::FashionMNIST> test_set;
  try {
    train_set = std::make_shared<gd::data::datasets::FashionMNIST>(options.root, true);
    test_set = std::make_unique<gd::data::datasets::FashionMNIST>(options.root, false);
  } catch (const gd::Error& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 1;
  }
  std::printf("Fashion-MNIST: %zu training and %zu test images from %s (%.2f s)\n", train_set->size(),
              test_set->size(), options.root.c_str(), seconds_since(load_start));
  if (options.loader_bench) return loader_bench(options, train_set);

  std::printf("%lld epochs, batch %lld, Adam lr %g (cosine), %d threads, %lld DataLoader workers\n",
              static_cast<long long>(options.epochs), static_cast<long long>(options.batch_size), options.lr,
              options.threads, static_cast<long long>(options.workers));
  // The targets, within 5 epochs.
  struct Target {
    const char* kind;
    double accuracy;
  };
  const Target targets[] = {{"mlp", 0.88}, {"cnn", 0.90}};
  std::string json = "{\"example\": \"fashion_mnist\", \"threads\": " + std::to_string(options.threads) +
                     ", \"workers\": " + std::to_string(options.workers) +
                     ", \"batch_size\": " + std::to_string(options.batch_size) + ", \"results\": {";
  bool all_met = true, first = true;
  for (const Target& target : targets) {
    if (options.model != "both" && options.model != target.kind) continue;
    std::vector<EpochResult> results = train(target.kind, options, train_set, *test_set);
    double best = 0, seconds = 0;
    std::string epochs;
    for (const EpochResult& r : results) {
      if (r.epoch <= 5 && r.accuracy > best) best = r.accuracy;
      seconds += r.seconds;
      char entry[160];
      std::snprintf(entry, sizeof entry,
                    "%s{\"epoch\": %lld, \"loss\": %.4f, \"test_accuracy\": %.4f, \"seconds\": %.2f}",
                    epochs.empty() ? "" : ", ", static_cast<long long>(r.epoch), r.loss, r.accuracy, r.seconds);
      epochs += entry;
    }
    // Fewer than 5 epochs cannot miss a target set for 5.
    const bool met = best >= target.accuracy || options.epochs < 5;
    all_met = all_met && met;
    std::printf("%s: best test accuracy within 5 epochs %.2f%% (target %.0f%%: %s), mean epoch time %.2f s\n",
                target.kind, 100 * best, 100 * target.accuracy,
                options.epochs < 5 ? "not judged, fewer than 5 epochs" : met ? "met" : "MISSED",
                seconds / static_cast<double>(results.size()));
    json += (first ? "\"" : ", \"") + std::string(target.kind) + "\": [" + epochs + "]";
    first = false;
  }
  std::printf("%s}, \"targets_met\": %s}\n", json.c_str(), all_met ? "true" : "false");
  return all_met ? 0 : 1;
}
