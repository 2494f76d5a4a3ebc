// What a machine without a CUDA device sees of the CUDA API: no device, clear
// errors instead of crashes, and the CPU-only paths (pinning in a DataLoader,
// the TF32 switch) still working. On a machine with a device these checks are
// skipped; tests/cuda covers it.
#include <doctest/doctest.h>

#include <string>

#include "data/dataloader.h"
#include "data/tensor_dataset.h"
#include "gradiens.h"
#include "kernels/cuda/runtime.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::testing::error_of;

TEST_CASE("cuda absent: no device, and every way to reach one is a clear error") {
  if (gd::cuda::is_available()) return;  // tests/cuda runs there
  CHECK(gd::cuda::device_count() == 0);
  const std::string no_device = gd::kernels::cuda::is_built()
                                    ? "Found no NVIDIA driver or no CUDA device on this machine: cannot use a cuda tensor"
                                    : "gradiens was built without CUDA support: cannot allocate on cuda:0";
  gd::Tensor x = gd::ones({2, 3});
  CHECK(error_of([&] { x.to(gd::Device("cuda:0")); }) == no_device);
  CHECK(error_of([&] { gd::zeros({4}, gd::TensorOptions().device(gd::Device("cuda:0"))); }) == no_device);
  CHECK_THROWS_AS(gd::cuda::synchronize(), gd::Error);
  CHECK_THROWS_AS(gd::cuda::memory_allocated(), gd::Error);
  CHECK_THROWS_AS(gd::cuda::getCurrentCUDAStream(), gd::Error);
  if (gd::kernels::cuda::is_built())
    CHECK(error_of([&] { x.pin_memory(); }) ==
          "pin_memory: page-locked memory needs a CUDA device, and none is available");
  // The CPU tensor is untouched and stays usable.
  CHECK(x.sum().item<float>() == 6.0f);
  CHECK_FALSE(x.is_pinned());
}

TEST_CASE("cuda absent: the TF32 switch and DataLoader pinning work without a device") {
  if (gd::cuda::is_available()) return;
  CHECK_FALSE(gd::cuda::allow_tf32());  // PyTorch's default
  gd::cuda::set_allow_tf32(true);
  CHECK(gd::cuda::allow_tf32());
  gd::cuda::set_allow_tf32(false);
  CHECK_FALSE(gd::cuda::allow_tf32());
  // pin_memory is a no-op without a device, as PyTorch's DataLoader (which warns).
  auto dataset = std::make_shared<gd::data::TensorDataset>(gd::arange(12, gd::kFloat64).reshape({6, 2}), gd::zeros({6}));
  auto loader = gd::data::make_data_loader(dataset, gd::data::DataLoaderOptions().batch_size(4).pin_memory(true));
  int batches = 0;
  for (auto& batch : loader) {
    CHECK_FALSE(batch.data.is_pinned());
    CHECK(batch.data.is_cpu());
    ++batches;
  }
  CHECK(batches == 2);
}
