// MNIST and Fashion-MNIST read from their four IDX files (gzipped or not), as
// torchvision.datasets.MNIST / FashionMNIST followed by ToTensor().
#pragma once

#include <string>
#include <vector>

#include "data/array_ref.h"
#include "data/dataset.h"
#include "data/datasets/base.h"
#include "engine/tensor.h"

namespace gradiens::data::datasets {

// The 60,000 training or 10,000 test images of handwritten digits. `root` holds
// train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte, each possibly with ".gz" (or torchvision's layout,
// root/MNIST/raw/...). Sample i is an image, float32 [1, 28, 28] scaled to
// [0, 1], and its class, an int64 0-dim tensor. A missing file, a malformed
// one, or images and labels that do not match throw gradiens::Error.
//
// It is also libtorch's torch::data::datasets::MNIST: MNIST(root, Mode::kTest),
// get_batch(indices), and .map(transform) for libtorch's make_data_loader
// (Note [MNIST in both data APIs]).
class MNIST : public data::Dataset<Example<Tensor, Tensor>> {
 public:
  explicit MNIST(const std::string& root, bool train = true);

  // Note [MNIST in both data APIs]
  // MNIST is a data::Dataset (get, size() -> size_t) for gradiens' DataLoader,
  // and has the members of libtorch's datasets::Dataset<MNIST> (it cannot
  // inherit both: the two size() differ in type) for libtorch's loaders and
  // MapDataset, which take any dataset of that shape.
  enum class Mode { kTrain, kTest };
  MNIST(const std::string& root, Mode mode) : MNIST(root, mode == Mode::kTrain) {}
  using BatchType = std::vector<Example<>>;
  using BatchRequestType = ArrayRef<size_t>;
  static constexpr bool is_stateful = false;
  BatchType get_batch(ArrayRef<size_t> indices);
  template <class TransformType>
  MapDataset<MNIST, TransformType> map(TransformType transform) const& {
    return MapDataset<MNIST, TransformType>(*this, std::move(transform));
  }

  // Views into images() and targets(): no copy.
  Example<Tensor, Tensor> get(size_t index) override;
  size_t size() const override;

  // The whole set, for fast paths: float32 [N, 1, H, W] in [0, 1] and int64 [N].
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }
  bool is_train() const { return train_; }
  // The class names, indexed by target.
  const std::vector<std::string>& classes() const { return classes_; }

 protected:
  // `name` names the dataset in errors and in torchvision's layout;
  // `missing_hint` ends the message for a file that is not there.
  MNIST(const std::string& root, bool train, std::string name, std::vector<std::string> classes,
        const std::string& missing_hint);

 private:
  Tensor images_, targets_;
  bool train_;
  std::vector<std::string> classes_;
};

// Zalando's Fashion-MNIST: the same format and sizes, ten kinds of clothing.
class FashionMNIST : public MNIST {
 public:
  // Where Debian's dataset-fashion-mnist package installs the files.
  static constexpr const char* kDefaultRoot = "/usr/share/datasets/fashion-mnist";

  explicit FashionMNIST(const std::string& root = kDefaultRoot, bool train = true);
};

}  // namespace gradiens::data::datasets
