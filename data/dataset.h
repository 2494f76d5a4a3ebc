// The dataset interfaces: Example (a data/target pair), map-style Dataset
// (get(index), size()) and IterableDataset (a stream with no random access).
#pragma once

#include <cstddef>
#include <optional>

#include "engine/tensor.h"

namespace gradiens::data {

// One sample: its input and its target, as in libtorch's torch::data::Example.
template <class Data = Tensor, class Target = Tensor>
struct Example {
  Data data;
  Target target;
};

// A map-style dataset: sample `index` of `size()` samples, in any order. get()
// may be called from DataLoader worker threads at the same time, so it must
// not mutate shared state without its own locking.
template <class ExampleT = Example<>>
class Dataset {
 public:
  using ExampleType = ExampleT;
  virtual ~Dataset() = default;
  virtual ExampleT get(size_t index) = 0;
  virtual size_t size() const = 0;
};

// A stream of samples: next() returns std::nullopt at the end; reset() starts
// it again (the DataLoader calls it at the start of each epoch).
template <class ExampleT = Example<>>
class IterableDataset {
 public:
  using ExampleType = ExampleT;
  virtual ~IterableDataset() = default;
  virtual std::optional<ExampleT> next() = 0;
  virtual void reset() {}
};

}  // namespace gradiens::data
