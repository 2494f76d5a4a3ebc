// The table of nn functionals that the nn sweep runs: gradcheck and
// gradgradcheck on the CPU (tests/nn/test_functional_sweep.cpp) and the GPU
// against the CPU (tests/cuda/test_cuda_nn_sweep.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gradiens::testing {

// One functional: float64 leaves of these shapes (values spread over each
// spec's range), and the outputs it makes of them. Tensors that are not
// differentiated (targets, indices, lengths) are made inside fn on the
// leaves' device, so a row runs unchanged on any device.
struct NnRow {
  std::string name;
  std::vector<InputSpec> inputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn;
  uint64_t seed = 0;  // nonzero: the default generator is seeded with it before each call
  bool twice = true;  // twice differentiable: gradgradcheck applies
};

const std::vector<NnRow>& nn_functional_rows();

// The row's float64 leaves (requires_grad) on `device`, the same values on every device.
std::vector<Tensor> nn_row_inputs(const NnRow& row, const Device& device);
// Calls the row's function, reseeding first when the row draws random numbers.
std::vector<Tensor> call_nn_row(const NnRow& row, const std::vector<Tensor>& inputs);

}  // namespace gradiens::testing
