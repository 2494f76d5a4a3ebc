// The dataset interfaces: Example (a data/target pair), map-style Dataset
// (get(index), size()) and IterableDataset (a stream with no random access).
#pragma once

#include <cstddef>
#include <optional>
#include <utility>

#include "engine/tensor.h"

namespace gradiens::data {

namespace example {
// The target type of an Example that has none (libtorch's example::NoTarget).
using NoTarget = void;
}  // namespace example

// One sample: its input and its target, as in libtorch's torch::data::Example.
template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Data data;
  Target target;
};

// A sample without a target; it converts to and from its data.
template <class Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;
  Example() = default;
  Example(Data value) : data(std::move(value)) {}
  operator Data&() { return data; }
  operator const Data&() const { return data; }
  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

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
