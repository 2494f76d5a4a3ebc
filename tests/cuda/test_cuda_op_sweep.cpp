// The op sweep on CUDA: every differentiable op of the engine's table
// (tests/engine/op_registry.cpp and the rows of tests/engine/op_rows/), in
// each input layout, run on the GPU and on the CPU from the same float64
// inputs; values and gradients must agree to 1e-12. An op whose kernels are
// not on CUDA yet must say so with a gradiens::Error; the sweep counts those
// and prints the coverage. A second pass gives each op empty inputs: where the
// CPU computes a result the GPU must give the same one, and where the CPU
// refuses the GPU must refuse too. A third runs gradcheck and gradgradcheck of
// every op and layout on the GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/cuda.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::OpInfo;
using gd::testing::Run;
using gd::testing::Variant;

namespace {

const gd::Device kGpu("cuda:0");

// A copy of x on the GPU with x's strides (a transposed leaf stays transposed).
Tensor same_layout_on_gpu(const Tensor& x) {
  Tensor y = gd::empty_strided(x.sizes(), x.strides(), x.options().device(kGpu));
  {
    gd::NoGradGuard no_grad;
    y.copy_(x.detach());
  }
  return y.requires_grad_(x.requires_grad());
}

// An error that says the op has no CUDA kernel yet (as opposed to a failing one).
bool not_on_cuda_yet(const gd::Error& e) {
  const std::string what = e.what();
  return what.find("CUDA error") == std::string::npos && what.find("CUDA") != std::string::npos;
}

// The row's function makes CPU tensors of its own (indices, masks), which a
// cuda input cannot meet: the row does not apply on CUDA as written (rows make
// theirs on the input's device where they can: Note [Sweep indices on the
// input's device] in tests/engine/op_rows/row_builders.h).
bool builds_cpu_tensors(const gd::Error& e) {
  return std::string(e.what()).starts_with("Expected all tensors to be on the same device");
}

// The largest distance between GPU and CPU values in units of the CPU value's
// ulp (the float64 spacing at its magnitude; values below 1e-300 count as
// 1e-300), NaN and infinity pairs equal; for the sweep's report.
struct UlpRecord {
  double ulps = 0;
  std::string where;
  void add(const Tensor& gpu, const Tensor& cpu, const std::string& label) {
    const std::vector<double> g = gd::testing::values_of(gpu), c = gd::testing::values_of(cpu);
    for (size_t i = 0; i < g.size() && i < c.size(); ++i) {
      if (std::isnan(c[i]) || std::isinf(c[i]) || g[i] == c[i]) continue;
      const double ulp = std::nextafter(std::max(std::abs(c[i]), 1e-300), INFINITY) - std::max(std::abs(c[i]), 1e-300);
      const double distance = std::abs(g[i] - c[i]) / ulp;
      if (distance > ulps) {
        ulps = distance;
        where = label;
      }
    }
  }
};

}  // namespace

TEST_CASE("cuda: the op sweep gives empty inputs the CPU's results or the CPU's refusal") {
  int compared = 0, refused = 0, not_yet = 0;
  for (const OpInfo& op : gd::testing::differentiable_ops()) {
    auto inputs = gd::testing::emptied_inputs(op);
    if (!inputs) continue;
    INFO(op.name << " (empty)");
    Run cpu;
    std::string cpu_error;
    try {
      cpu = gd::testing::run_with_gradients(op.fn, *inputs);
    } catch (const gd::Error& e) {
      cpu_error = e.what();
    }
    std::vector<Tensor> gpu_inputs;
    for (const Tensor& x : *inputs) gpu_inputs.push_back(same_layout_on_gpu(x));
    Run gpu;
    std::string gpu_error;
    try {
      gpu = gd::testing::run_with_gradients(op.fn, gpu_inputs);
    } catch (const gd::Error& e) {
      gpu_error = e.what();
      if (cpu_error.empty() && (builds_cpu_tensors(e) || not_on_cuda_yet(e))) {
        ++not_yet;
        continue;
      }
    }
    if (!cpu_error.empty()) {
      CHECK_MESSAGE(!gpu_error.empty(), "the CPU refused: " << cpu_error);
      ++refused;
      continue;
    }
    REQUIRE_MESSAGE(gpu_error.empty(), gpu_error);
    REQUIRE(gpu.outputs.size() == cpu.outputs.size());
    for (size_t o = 0; o < cpu.outputs.size(); ++o) {
      if (!cpu.outputs[o].defined()) continue;
      CHECK(gpu.outputs[o].sizes() == cpu.outputs[o].sizes());
      CHECK(gd::testing::value_mismatch(gpu.outputs[o].cpu(), cpu.outputs[o], 1e-12, 1e-12) == "");
    }
    REQUIRE(gpu.grads.size() == cpu.grads.size());
    for (size_t g = 0; g < cpu.grads.size(); ++g)
      if (cpu.grads[g].defined() && gpu.grads[g].defined())
        CHECK(gd::testing::value_mismatch(gpu.grads[g].cpu(), cpu.grads[g], 1e-12, 1e-12) == "");
    ++compared;
  }
  MESSAGE(fmt::format("empty inputs: {} ops compared with the CPU, {} refused on both devices, {} not on CUDA yet",
                      compared, refused, not_yet));
  CHECK(compared >= 20);
}

TEST_CASE("cuda: the op sweep runs the engine's differentiable ops on the GPU and matches the CPU") {
  int ops_on_cuda = 0, ops_total = 0, cases_compared = 0, cpu_bound_rows = 0;
  std::vector<std::string> not_yet;
  UlpRecord values, gradients;
  for (const OpInfo& op : gd::testing::differentiable_ops()) {
    ++ops_total;
    bool missing = false, cpu_bound = false;
    int compared = 0;
    for (Variant v : {gd::testing::kContiguous, gd::testing::kTransposed, gd::testing::kBroadcast,
                      gd::testing::kZeroDim}) {
      if (!(op.variants & v) || missing || cpu_bound) continue;
      auto c = gd::testing::make_variant(op, v);
      if (!c) continue;
      INFO(fmt::format("{} ({})", op.name, gd::testing::variant_name(v)));
      Run cpu = gd::testing::run_with_gradients(c->fn, c->inputs);
      std::vector<Tensor> gpu_inputs;
      for (const Tensor& x : c->inputs) gpu_inputs.push_back(same_layout_on_gpu(x));
      Run gpu;
      try {
        gpu = gd::testing::run_with_gradients(c->fn, gpu_inputs);
      } catch (const gd::Error& e) {
        if (builds_cpu_tensors(e)) {
          cpu_bound = true;
          continue;
        }
        if (!not_on_cuda_yet(e)) throw;
        missing = true;
        continue;
      }
      REQUIRE(gpu.outputs.size() == cpu.outputs.size());
      for (size_t o = 0; o < cpu.outputs.size(); ++o) {
        if (!cpu.outputs[o].defined()) continue;
        CHECK(gpu.outputs[o].device() == kGpu);
        CHECK(gd::testing::value_mismatch(gpu.outputs[o].cpu(), cpu.outputs[o], 1e-12, 1e-12) == "");
        values.add(gpu.outputs[o].cpu(), cpu.outputs[o], fmt::format("{} ({})", op.name, gd::testing::variant_name(v)));
      }
      REQUIRE(gpu.grads.size() == cpu.grads.size());
      for (size_t g = 0; g < cpu.grads.size(); ++g) {
        REQUIRE(gpu.grads[g].defined() == cpu.grads[g].defined());
        if (!cpu.grads[g].defined()) continue;
        CHECK(gd::testing::value_mismatch(gpu.grads[g].cpu(), cpu.grads[g], 1e-12, 1e-12) == "");
        gradients.add(gpu.grads[g].cpu(), cpu.grads[g], fmt::format("{} ({})", op.name, gd::testing::variant_name(v)));
      }
      ++compared;
    }
    if (missing) not_yet.push_back(op.name);
    else if (cpu_bound) ++cpu_bound_rows;
    else if (compared > 0) {
      ++ops_on_cuda;
      cases_compared += compared;
    }
  }
  std::string list;
  for (const std::string& name : not_yet) list += (list.empty() ? "" : ", ") + name;
  MESSAGE(fmt::format("{} of {} differentiable ops run on CUDA ({} layout cases compared); {} rows build CPU "
                      "tensors of their own; not yet on CUDA: {}",
                      ops_on_cuda, ops_total, cases_compared, cpu_bound_rows, list));
  MESSAGE(fmt::format("largest GPU-CPU distance, in ulps of the CPU value: values {:.3g} ({}), gradients {:.3g} ({})",
                      values.ulps, values.where, gradients.ulps, gradients.where));
  // Every op of the table runs on CUDA.
  CHECK(not_yet.empty());
  CHECK(cpu_bound_rows == 0);
}

TEST_CASE("cuda: gradcheck and gradgradcheck of every op of the sweep pass on the GPU (float64, every layout)") {
  int checked = 0;
  for (const OpInfo& op : gd::testing::differentiable_ops()) {
    for (Variant v : {gd::testing::kContiguous, gd::testing::kTransposed, gd::testing::kBroadcast,
                      gd::testing::kZeroDim}) {
      if (!(op.variants & v)) continue;
      auto c = gd::testing::make_variant(op, v);
      if (!c) continue;
      INFO(fmt::format("{} ({})", op.name, gd::testing::variant_name(v)));
      std::vector<Tensor> gpu_inputs;
      for (const Tensor& x : c->inputs) gpu_inputs.push_back(same_layout_on_gpu(x));
      try {
        CHECK(gd::autograd::gradcheck(c->fn, gpu_inputs, op.options));
        CHECK(gd::autograd::gradgradcheck(c->fn, gpu_inputs, op.options));
      } catch (const gd::Error& e) {
        FAIL_CHECK(e.what());
      }
      ++checked;
    }
  }
  MESSAGE(fmt::format("gradcheck and gradgradcheck on the GPU: {} op and layout cases", checked));
  CHECK(checked >= 1000);
}
