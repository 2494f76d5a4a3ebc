// MNIST and Fashion-MNIST: the IDX files are checked against each other and
// converted once to float32, so get() is a view.
#include "data/datasets/mnist.h"

#include <array>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/datasets/idx.h"
#include "engine/functions.h"

namespace gradiens::data::datasets {

namespace {

namespace fs = std::filesystem;

// root/file, root/file.gz, then torchvision's root/<name>/raw/file[.gz].
std::string find_file(const std::string& root, const std::string& dataset, const std::string& file,
                      const std::string& missing_hint) {
  const std::array<fs::path, 2> dirs = {fs::path(root), fs::path(root) / dataset / "raw"};
  for (const fs::path& dir : dirs) {
    for (const char* suffix : {"", ".gz"}) {
      fs::path candidate = dir / (file + suffix);
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec)) return candidate.string();
    }
  }
  throw Error(fmt::format("{}: cannot find {} or {}.gz in {} (nor in {}){}", dataset, file, file, root,
                          dirs[1].string(), missing_hint));
}

// The uint8 IDX array at `path`, which must have `dims` dimensions.
Tensor read_bytes_array(const std::string& path, int64_t dims, std::string_view what) {
  Tensor t = read_idx(path);
  if (t.dtype() != kUInt8 || t.dim() != dims)
    throw Error(fmt::format("{}: expected {} (an unsigned-byte IDX file with {} dimensions, magic 0x0000080{}), got "
                            "{} data of shape [{}]",
                            path, what, dims, dims, dtype_name(t.dtype()), fmt::join(t.sizes(), ", ")));
  return t;
}

}  // namespace

MNIST::MNIST(const std::string& root, bool train)
    : MNIST(root, train, "MNIST",
            {"0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
             "8 - eight", "9 - nine"},
            " (download the four files from the MNIST page, yann.lecun.com/exdb/mnist, or torchvision's mirror, "
            "ossci-datasets.s3.amazonaws.com/mnist)") {}

MNIST::MNIST(const std::string& root, bool train, std::string name, std::vector<std::string> classes,
             const std::string& missing_hint)
    : train_(train), classes_(std::move(classes)) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string images_path = find_file(root, name, prefix + "-images-idx3-ubyte", missing_hint);
  const std::string labels_path = find_file(root, name, prefix + "-labels-idx1-ubyte", missing_hint);
  Tensor images = read_bytes_array(images_path, 3, "images");
  Tensor labels = read_bytes_array(labels_path, 1, "labels");
  const int64_t n = images.size(0);
  if (labels.size(0) != n)
    throw Error(fmt::format("{}: {} holds {} images but {} holds {} labels", name, images_path, n, labels_path,
                            labels.size(0)));

  // ToTensor's img.float().div(255), through a table of the 256 results.
  std::array<float, 256> scaled;
  for (int v = 0; v < 256; ++v) scaled[v] = static_cast<float>(v) / 255.0f;
  images_ = empty({n, 1, images.size(1), images.size(2)}, TensorOptions().dtype(kFloat32));
  const uint8_t* pixels = images.cpu_data_ptr<uint8_t>();
  float* out = images_.cpu_data_ptr<float>();
  for (int64_t i = 0, count = images.numel(); i < count; ++i) out[i] = scaled[pixels[i]];

  targets_ = empty({n}, TensorOptions().dtype(kInt64));
  const uint8_t* label = labels.cpu_data_ptr<uint8_t>();
  int64_t* target = targets_.cpu_data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (label[i] >= classes_.size())
      throw Error(fmt::format("{}: {}: label {} of sample {} is not a class index in [0, {})", name, labels_path,
                              label[i], i, classes_.size()));
    target[i] = label[i];
  }
}

Example<Tensor, Tensor> MNIST::get(size_t index) {
  if (index >= size())
    throw Error(fmt::format("index {} is out of bounds for dimension 0 with size {}", index, size()));
  const auto i = static_cast<int64_t>(index);
  return {images_.select(0, i), targets_.select(0, i)};
}

MNIST::BatchType MNIST::get_batch(ArrayRef<size_t> indices) {
  BatchType batch;
  batch.reserve(indices.size());
  for (const size_t index : indices) batch.push_back(get(index));
  return batch;
}

size_t MNIST::size() const { return static_cast<size_t>(targets_.size(0)); }

FashionMNIST::FashionMNIST(const std::string& root, bool train)
    : MNIST(root, train, "FashionMNIST",
            {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
             "Ankle boot"},
            " (on Debian and Ubuntu, the dataset-fashion-mnist package installs them in "
            "/usr/share/datasets/fashion-mnist)") {}

}  // namespace gradiens::data::datasets
