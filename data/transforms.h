// libtorch's transforms (torch::data::transforms), applied to a dataset's
// batches by dataset.map(transform): BatchTransform (a whole batch), Transform
// (each example), their Lambda forms, TensorTransform / TensorLambda (the
// data tensor of each Example), Normalize, and the collations Stack and
// Collate that turn a vector of examples into one batch.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "data/array_ref.h"
#include "data/dataset.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"

namespace gradiens::data::transforms {

// Turns a batch of type InputBatch into one of type OutputBatch.
template <class InputBatch, class OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

// Turns each example of a batch (a vector) into another, one at a time.
template <class Input, class Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;

  virtual OutputType apply(InputType input) = 0;

  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output_batch;
    output_batch.reserve(input_batch.size());
    for (auto& input : input_batch) output_batch.push_back(apply(std::move(input)));
    return output_batch;
  }
};

// A BatchTransform given as a function.
template <class Input, class Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using typename BatchTransform<Input, Output>::InputBatchType;
  using typename BatchTransform<Input, Output>::OutputBatchType;
  using FunctionType = std::function<OutputBatchType(InputBatchType)>;

  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  OutputBatchType apply_batch(InputBatchType input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

// A Transform given as a function of one example.
template <class Input, class Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using typename Transform<Input, Output>::InputType;
  using typename Transform<Input, Output>::OutputType;
  using FunctionType = std::function<Output(Input)>;

  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  OutputType apply(InputType input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// A transform that reduces a batch of T (by default a vector of them) to one T.
template <class T, class BatchType = std::vector<T>>
using Collation = BatchTransform<BatchType, T>;

// A Collation given as a function.
template <class T, class BatchType = std::vector<T>>
using Collate = BatchLambda<BatchType, T>;

// Stacks the examples' tensors along a new first dimension:
// Stack<Example<>> stacks data and targets, Stack<TensorExample> the data.
template <class T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& example : examples) {
      data.push_back(std::move(example.data));
      targets.push_back(std::move(example.target));
    }
    return {stack(data), stack(targets)};
  }
};

template <>
struct Stack<TensorExample> : Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& example : examples) data.push_back(std::move(example.data));
    return stack(data);
  }
};

// Transforms the data tensor of each Example<Tensor, Target>, keeping its target.
template <class Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  using typename Transform<E, E>::InputType;
  using typename Transform<E, E>::OutputType;

  virtual Tensor operator()(Tensor input) = 0;

  OutputType apply(InputType input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

// A TensorTransform given as a function of the data tensor.
template <class Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;

  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// (data - mean) / stddev per channel: mean and stddev hold one value for every
// channel (the first dimension of [C, H, W] data) or one for all of them.
template <class Target = Tensor>
struct Normalize : TensorTransform<Target> {
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(channel_moments(mean)), stddev(channel_moments(stddev)) {}

  Tensor operator()(Tensor input) override {
    // gradiens does not mix float32 and float64 in one op: float data gets moments of its own dtype.
    if (is_floating_point(input.scalar_type()) && input.scalar_type() != mean.scalar_type())
      return input.sub(mean.to(input.scalar_type())).div(stddev.to(input.scalar_type()));
    return input.sub(mean).div(stddev);
  }

  Tensor mean, stddev;

 private:
  // [C] values as float32 [C, 1, 1], broadcasting over each channel's pixels.
  static Tensor channel_moments(ArrayRef<double> values) {
    return tensor(values.vec(), kFloat32).unsqueeze(1).unsqueeze(2);
  }
};

}  // namespace gradiens::data::transforms
