// What the rows files of the op sweep (tests/engine/op_rows/*.cpp) share: row
// builders for one- and two-input ops, and the index tensors a row's function
// builds, made on its input's device.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/engine/op_registry.h"

namespace gradiens::testing::rows {

using V = std::vector<Tensor>;

// Every layout but 0-dim inputs (an op that indexes, reduces or repeats along a dim).
constexpr unsigned kWithDims = kContiguous | kTransposed | kBroadcast;

// f of one input of `shape`, sampled in [lo, hi].
inline OpInfo unary_row(std::string name, std::vector<int64_t> shape, std::function<Tensor(const Tensor&)> f,
                        unsigned variants = kWithDims, double lo = -1.0, double hi = 1.0) {
  return {std::move(name), [f](const V& x) { return V{f(x[0])}; }, {InputSpec{std::move(shape), lo, hi}}, variants,
          {}};
}

// f of two inputs of shapes a and b, both sampled in [lo, hi].
inline OpInfo binary_row(std::string name, std::vector<int64_t> a, std::vector<int64_t> b,
                         std::function<Tensor(const Tensor&, const Tensor&)> f, unsigned variants = kWithDims,
                         double lo = -1.0, double hi = 1.0) {
  return {std::move(name),
          [f](const V& x) { return V{f(x[0], x[1])}; },
          {InputSpec{std::move(a), lo, hi}, InputSpec{std::move(b), lo, hi}},
          variants,
          {}};
}

// Note [Sweep indices on the input's device]: the integer indices, masks and
// other constant tensors a row's function builds are made on the device of the
// tensor they go with, so the CUDA sweep (tests/cuda/test_cuda_op_sweep.cpp)
// compares the op on the GPU instead of counting the row as one that builds CPU
// tensors. On the CPU they are tensor_of's tensors themselves (to() on the same
// device is a no-op), so the rows compute there what they always did.
inline Tensor tensor_for(const Tensor& input, const std::vector<double>& values, const std::vector<int64_t>& sizes = {},
                         ScalarType dtype = kFloat64) {
  return tensor_of(values, sizes, dtype).to(input.device());
}
inline Tensor indices_for(const Tensor& input, const std::vector<double>& values,
                          const std::vector<int64_t>& sizes = {}, ScalarType dtype = kInt64) {
  return tensor_for(input, values, sizes, dtype);
}
inline Tensor mask_for(const Tensor& input, const std::vector<double>& values, const std::vector<int64_t>& sizes = {}) {
  return tensor_for(input, values, sizes, kBool);
}

}  // namespace gradiens::testing::rows
