// The data sets a config may name for its splits: Fashion-MNIST and MNIST
// (IDX files), CSV files, tensors in a .safetensors file, and synthetic sets
// (Gaussian blobs, a smooth regression, variable-length sequences).
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "data/datasets/csv.h"
#include "data/datasets/mnist.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/io/safetensors.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"

namespace gradiens::train {

namespace {

std::string file_path(const json& config, const std::string& key, const DataContext& context) {
  std::filesystem::path path = text(config, key);
  if (path.is_relative() && !context.base_dir.empty()) path = std::filesystem::path(context.base_dir) / path;
  return path.string();
}

void add_limit(ObjectSpec& spec) {
  spec.add("limit", OrNull(Integer(1)), "use only the first `limit` samples; null: all").default_(nullptr);
}

// The first `limit` samples, if a limit is given.
SplitData limited(SplitData data, const json& config) {
  if (!has(config, "limit")) return data;
  const int64_t limit = std::min(integer(config, "limit"), data.size());
  if (!data.sequences.empty()) data.sequences.resize(static_cast<size_t>(limit));
  else data.inputs = data.inputs.narrow(0, 0, limit);
  data.targets = data.targets.narrow(0, 0, limit);
  return data;
}

int64_t class_count(const Tensor& targets) {
  if (!is_integral(targets.scalar_type(), false) || targets.numel() == 0) return 0;
  return targets.max().item<int64_t>() + 1;
}

void add_mnist(Builders& b, const std::string& name, const std::string& default_root, double mean, double std) {
  ObjectSpec spec(name, fmt::format("{}: 28x28 grayscale images [1, 28, 28] in [0, 1] and 10 classes", name));
  spec.add("root", String(), "folder of the four IDX files (gzipped or not)").default_(default_root);
  spec.add("split", Enum({"train", "test"}), "the 60,000 training or the 10,000 test images").default_("train");
  spec.add("normalize", Bool(), fmt::format("subtract the training set's mean {} and divide by its std {}", mean, std))
      .default_(true);
  add_limit(spec);
  b.add(b.datasets, kDataset, std::move(spec),
        DatasetFactory([name, mean, std](const json& config, const std::string&, const DataContext& context) {
          const bool train = text(config, "split") == "train";
          const std::string root = file_path(config, "root", context);
          std::unique_ptr<data::datasets::MNIST> set =
              name == "MNIST" ? std::make_unique<data::datasets::MNIST>(root, train)
                              : std::make_unique<data::datasets::FashionMNIST>(root, train);
          SplitData data;
          data.inputs = flag(config, "normalize") ? (set->images() - mean) / std : set->images();
          data.targets = set->targets();
          data.num_classes = 10;
          return limited(std::move(data), config);
        }));
}

void add_files(Builders& b) {
  ObjectSpec csv("CSVDataset", "rows of a CSV file: one column is the target, the others the features");
  csv.add("path", String(), "the CSV file (relative to the config file's folder)").require();
  csv.add("target", AnyOf({String(), Integer(0)}), "the target column, by name or index").require();
  csv.add("header", Bool(), "the first row names the columns").default_(true);
  csv.add("task", Enum({"regression", "classification"}), "float targets, or integer class indices").default_("regression");
  csv.add("delimiter", String(), "the field separator (one character)").default_(",");
  add_limit(csv);
  csv.check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
    if (text(config, "delimiter").size() != 1)
      diagnostics.error(join_path(path, "delimiter"), "must be a single character");
  };
  b.add(b.datasets, kDataset, std::move(csv),
        DatasetFactory([](const json& config, const std::string&, const DataContext& context) {
          data::datasets::CSVOptions options;
          options.header(flag(config, "header")).delimiter(text(config, "delimiter")[0]);
          if (config["target"].is_string()) options.target_column(text(config, "target"));
          else options.target_column(integer(config, "target"));
          const bool classes = text(config, "task") == "classification";
          if (classes) options.target_dtype(kInt64);
          data::datasets::CSVDataset set(file_path(config, "path", context), options);
          SplitData data;
          data.inputs = set.features();
          data.targets = set.targets();
          data.num_classes = classes ? class_count(data.targets) : 0;
          return limited(std::move(data), config);
        }));

  ObjectSpec tensors("TensorFile", "two tensors of a .safetensors file: the inputs [N, ...] and the targets [N, ...]");
  tensors.add("path", String(), "the .safetensors file (relative to the config file's folder)").require();
  tensors.add("inputs", String(), "the inputs' tensor name").default_("inputs");
  tensors.add("targets", String(), "the targets' tensor name").default_("targets");
  add_limit(tensors);
  b.add(b.datasets, kDataset, std::move(tensors),
        DatasetFactory([](const json& config, const std::string& path, const DataContext& context) {
          const std::string file = file_path(config, "path", context);
          auto tensors = load(file);
          SplitData data;
          for (const auto& [key, target] : {std::pair{"inputs", &data.inputs}, std::pair{"targets", &data.targets}}) {
            auto it = tensors.find(text(config, key));
            if (it == tensors.end())
              throw Error(fmt::format("{}: {} has no tensor \"{}\"", join_path(path, key), file, text(config, key)));
            *target = it->second;
          }
          if (data.inputs.dim() == 0 || data.targets.dim() == 0 || data.inputs.size(0) != data.targets.size(0))
            throw Error(fmt::format("{}: the inputs and targets of {} must have the same first size", path, file));
          data.num_classes = class_count(data.targets);
          return limited(std::move(data), config);
        }));
}

void add_seed(ObjectSpec& spec) {
  spec.add("seed", OrNull(Integer(0)), "the data's own seed; null: derived from the run's seed and the split").default_(nullptr);
}

uint64_t data_seed(const json& config, const DataContext& context) {
  return has(config, "seed") ? static_cast<uint64_t>(integer(config, "seed")) : context.seed;
}

void add_synthetic(Builders& b) {
  ObjectSpec blobs("SyntheticClassification", "Gaussian blobs: one random center per class, samples scattered around it");
  blobs.add("size", Integer(1), "samples").default_(1000);
  blobs.add("features", Integer(1), "features per sample").default_(2);
  blobs.add("classes", Integer(2), "classes").default_(2);
  blobs.add("spread", Number(0), "the samples' standard deviation around their center (centers are N(0, 1))").default_(0.3);
  add_seed(blobs);
  b.add(b.datasets, kDataset, std::move(blobs), DatasetFactory([](const json& config, const std::string&, const DataContext& context) {
          // The centers depend on the explicit seed only, so every split shares them.
          Generator centers_generator(has(config, "seed") ? static_cast<uint64_t>(integer(config, "seed")) : 0);
          Generator generator(data_seed(config, context));
          const int64_t n = integer(config, "size"), features = integer(config, "features"), classes = integer(config, "classes");
          Tensor centers = randn({classes, features}, centers_generator);
          SplitData data;
          data.targets = randint(0, classes, {n}, generator);
          data.inputs = centers.index_select(0, data.targets) + randn({n, features}, generator) * number(config, "spread");
          data.num_classes = classes;
          return data;
        }));

  ObjectSpec regression("SyntheticRegression", "x ~ U(-1, 1)^F, y = mean_i sin(pi x_i) + noise");
  regression.add("size", Integer(1), "samples").default_(1000);
  regression.add("features", Integer(1), "features per sample").default_(2);
  regression.add("noise", Number(0), "the standard deviation of the added noise").default_(0.0);
  add_seed(regression);
  b.add(b.datasets, kDataset, std::move(regression),
        DatasetFactory([](const json& config, const std::string&, const DataContext& context) {
          Generator generator(data_seed(config, context));
          const int64_t n = integer(config, "size"), features = integer(config, "features");
          SplitData data;
          data.inputs = rand({n, features}, generator) * 2 - 1;
          data.targets = sin(data.inputs * M_PI).mean({1}) + randn({n}, generator) * number(config, "noise");
          return data;
        }));

  ObjectSpec sequences("SyntheticSequences",
                       "sequences of N(0, 1) numbers of random lengths; the class is whether their sum is positive");
  sequences.add("size", Integer(1), "sequences").default_(1000);
  sequences.add("min_length", Integer(1), "shortest length").default_(5);
  sequences.add("max_length", Integer(1), "longest length").default_(40);
  add_seed(sequences);
  sequences.check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
    if (integer(config, "min_length") > integer(config, "max_length"))
      diagnostics.error(path, fmt::format("min_length ({}) is greater than max_length ({})", integer(config, "min_length"),
                                          integer(config, "max_length")));
  };
  b.add(b.datasets, kDataset, std::move(sequences),
        DatasetFactory([](const json& config, const std::string&, const DataContext& context) {
          Generator generator(data_seed(config, context));
          const int64_t n = integer(config, "size");
          Tensor lengths = randint(integer(config, "min_length"), integer(config, "max_length") + 1, {n}, generator);
          SplitData data;
          std::vector<int64_t> labels;
          for (int64_t i = 0; i < n; ++i) {
            Tensor sequence = randn({lengths[i].item<int64_t>(), 1}, generator);
            labels.push_back(sequence.sum().item<double>() > 0 ? 1 : 0);
            data.sequences.push_back(sequence);
          }
          data.targets = tensor(labels);
          data.num_classes = 2;
          return data;
        }));
}

}  // namespace

void register_datasets(Builders& b) {
  add_mnist(b, "FashionMNIST", data::datasets::FashionMNIST::kDefaultRoot, 0.2860, 0.3530);
  add_mnist(b, "MNIST", "/usr/share/datasets/mnist", 0.1307, 0.3081);
  add_files(b);
  add_synthetic(b);
}

}  // namespace gradiens::train
