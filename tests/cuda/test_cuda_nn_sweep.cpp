// The nn functional sweep on CUDA: libtorch's functionals (torch::nn::functional)
// and modules, each run on the GPU and on the CPU from the same float64 inputs;
// outputs and the gradients of every input must agree to 1e-12. The CPU values
// are checked against PyTorch in tests/nn; this file checks that each
// functional, a composite of engine ops, runs on the device unchanged. Random
// ones are reseeded before each run: Philox gives both devices the same draws.
// A functional whose kernels are not on CUDA yet must say so with a
// gradiens::Error naming CUDA; the sweep lists those.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/cuda.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/nn/functional_rows.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::NnRow;
using V = std::vector<Tensor>;

namespace {

const gd::Device kGpu("cuda:0");

struct Run {
  V outputs, grads;
};

Run run(const NnRow& r, const V& inputs) {
  Run out;
  out.outputs = gd::testing::call_nn_row(r, inputs);
  V roots, seeds;
  for (const Tensor& y : out.outputs)
    if (y.defined() && y.requires_grad()) {
      roots.push_back(y);
      seeds.push_back(gd::ones_like(y));
    }
  if (!roots.empty()) out.grads = gd::autograd::grad(roots, inputs, seeds, std::nullopt, false, /*allow_unused=*/true);
  return out;
}

bool not_on_cuda_yet(const gd::Error& e) {
  const std::string what = e.what();
  return what.find("CUDA error") == std::string::npos && what.find("CUDA") != std::string::npos;
}

}  // namespace

TEST_CASE("cuda: the nn functionals run on the GPU and match the CPU, values and gradients") {
  int compared = 0;
  std::vector<std::string> not_yet;
  for (const NnRow& r : gd::testing::nn_functional_rows()) {
    INFO(r.name);
    const V cpu_inputs = gd::testing::nn_row_inputs(r, gd::Device(gd::kCPU));
    const V gpu_inputs = gd::testing::nn_row_inputs(r, kGpu);
    const Run cpu = run(r, cpu_inputs);
    Run gpu;
    try {
      gpu = run(r, gpu_inputs);
    } catch (const gd::Error& e) {
      if (!not_on_cuda_yet(e)) throw;
      not_yet.push_back(r.name);
      continue;
    }
    REQUIRE(gpu.outputs.size() == cpu.outputs.size());
    for (size_t o = 0; o < cpu.outputs.size(); ++o) {
      CHECK(gpu.outputs[o].device() == kGpu);
      CHECK(gpu.outputs[o].sizes() == cpu.outputs[o].sizes());
      CHECK(gd::testing::value_mismatch(gpu.outputs[o].cpu(), cpu.outputs[o], 1e-12, 1e-12) == "");
    }
    REQUIRE(gpu.grads.size() == cpu.grads.size());
    for (size_t g = 0; g < cpu.grads.size(); ++g) {
      INFO("gradient of input " << g);
      REQUIRE(gpu.grads[g].defined() == cpu.grads[g].defined());
      if (cpu.grads[g].defined())
        CHECK(gd::testing::value_mismatch(gpu.grads[g].cpu(), cpu.grads[g], 1e-12, 1e-12) == "");
    }
    ++compared;
  }
  std::string list;
  for (const std::string& name : not_yet) list += (list.empty() ? "" : ", ") + name;
  MESSAGE(fmt::format("{} of {} nn functionals run on CUDA and match the CPU; not yet on CUDA: {}", compared,
                      gd::testing::nn_functional_rows().size(), list.empty() ? "none" : list));
  CHECK(compared + static_cast<int>(not_yet.size()) == static_cast<int>(gd::testing::nn_functional_rows().size()));
  CHECK(not_yet.empty());
}
