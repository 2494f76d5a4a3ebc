// The random-fill entry points of kernels/random.h on a cuda device against the
// same calls on the CPU: uniform, integer and raw-bit fills bit for bit, normals
// to an ulp or two, the same Philox block counts; and the engine's host-drawn
// samplers (randint, randperm, multinomial, 16-bit uniform) giving a cuda tensor
// the CPU's numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/ops/cuda_seam.h"
#include "gradiens.h"
#include "kernels/random.h"
#include "tests/cuda/cuda_checks.h"

namespace gd = gradiens;
namespace kn = gradiens::kernels;
using gd::Tensor;

namespace {

const gd::Device kGpu("cuda:0");

gd::TensorOptions on(gd::ScalarType dt, const gd::Device& device) {
  return gd::TensorOptions().dtype(dt).device(device);
}

}  // namespace

TEST_CASE("cuda: the random-fill entry points give the CPU's numbers on the device") {
  const kn::PhiloxState state{0x1234'5678'9abc'def0ull, (uint64_t{1} << 32) - 3};  // the counter carries past 2^32
  for (int64_t n : {0, 1, 3, 4, 5, 1023, 100001}) {
    INFO("n = " << n);
    for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
      INFO(gd::c10_type_name(dt));
      Tensor cpu = gd::empty({n}, on(dt, gd::Device(gd::kCPU))), gpu = gd::empty({n}, on(dt, kGpu));
      const uint64_t blocks = dt == gd::kFloat64 ? kn::philox_blocks_for_64bit_draws(n)
                                                 : kn::philox_blocks_for_32bit_draws(n);
      CHECK(kn::fill_uniform(dt, cpu.data_ptr(), n, state, -2, 3, gd::cuda_seam::device_of(cpu)) == blocks);
      CHECK(kn::fill_uniform(dt, gpu.data_ptr(), n, state, -2, 3, gd::cuda_seam::device_of(gpu)) == blocks);
      gd::testing::check_same_bits(cpu, gpu, "fill_uniform");
      CHECK(kn::fill_normal(dt, cpu.data_ptr(), n, state, 1, 2, gd::cuda_seam::device_of(cpu)) == blocks);
      CHECK(kn::fill_normal(dt, gpu.data_ptr(), n, state, 1, 2, gd::cuda_seam::device_of(gpu)) == blocks);
      const double ulps = dt == gd::kFloat64 ? 1e-14 : 5e-6;
      gd::testing::check_matches(cpu, gpu, "fill_normal", ulps, ulps * std::max(1.0, gd::testing::largest_magnitude(cpu)));
    }
    Tensor cpu = gd::empty({n}, on(gd::kInt64, gd::Device(gd::kCPU))), gpu = gd::empty({n}, on(gd::kInt64, kGpu));
    CHECK(kn::fill_randint(static_cast<int64_t*>(cpu.data_ptr()), n, state, -7, 1000003,
                           gd::cuda_seam::device_of(cpu)) == kn::philox_blocks_for_64bit_draws(n));
    CHECK(kn::fill_randint(static_cast<int64_t*>(gpu.data_ptr()), n, state, -7, 1000003,
                           gd::cuda_seam::device_of(gpu)) == kn::philox_blocks_for_64bit_draws(n));
    gd::testing::check_same_bits(cpu, gpu, "fill_randint");
    Tensor bits_cpu = gd::empty({n}, on(gd::kInt32, gd::Device(gd::kCPU))), bits_gpu = gd::empty({n}, on(gd::kInt32, kGpu));
    CHECK(kn::fill_random_bits(static_cast<uint32_t*>(bits_cpu.data_ptr()), n, state,
                               gd::cuda_seam::device_of(bits_cpu)) == kn::philox_blocks_for_32bit_draws(n));
    CHECK(kn::fill_random_bits(static_cast<uint32_t*>(bits_gpu.data_ptr()), n, state,
                               gd::cuda_seam::device_of(bits_gpu)) == kn::philox_blocks_for_32bit_draws(n));
    gd::testing::check_same_bits(bits_cpu, bits_gpu, "fill_random_bits");
  }
}

TEST_CASE("cuda: randint, randperm, multinomial, random_ and 16-bit uniform_ give a cuda tensor the CPU's numbers") {
  auto draw = [](const gd::Device& device) {
    gd::manual_seed(41);
    std::vector<Tensor> out;
    out.push_back(gd::randint(-5, 1000, {33, 7}, gd::TensorOptions().device(device)));
    out.push_back(gd::randint(0, 9, {13}, on(gd::kInt32, device)));
    out.push_back(gd::randint(0, 100, {0}, gd::TensorOptions().device(device)));
    out.push_back(gd::randperm(1000, gd::TensorOptions().device(device)));
    out.push_back(gd::randperm(1, gd::TensorOptions().device(device)));
    out.push_back(gd::empty({20}, on(gd::kInt64, device)).random_(0, 50));
    Tensor weights = gd::linspace(0, 1, 40, on(gd::kFloat64, device)).reshape({4, 10});
    out.push_back(gd::multinomial(weights, 6, true));
    out.push_back(gd::multinomial(weights, 6, false));
    out.push_back(gd::multinomial(weights.select(0, 2), 1, false));
    out.push_back(gd::empty({9}, on(gd::kFloat32, device)).uniform_(2, 2));
    out.push_back(gd::rand({17}, on(gd::kFloat16, device)));
    out.push_back(gd::rand({5}, on(gd::kFloat64, device)));  // the stream moved on as on the CPU
    return out;
  };
  std::vector<Tensor> cpu = draw(gd::Device(gd::kCPU)), gpu;
  const uint64_t offset_cpu = gd::default_generator().offset();
  gpu = draw(kGpu);
  CHECK(gd::default_generator().offset() == offset_cpu);
  REQUIRE(gpu.size() == cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    INFO("draw " << i);
    CHECK(gpu[i].is_cuda());
    gd::testing::check_same_bits(cpu[i], gpu[i], fmt::format("draw {}", i));
  }
}

TEST_CASE("cuda: normal with tensor parameters draws on the tensors' device") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    INFO(gd::c10_type_name(dt));
    Tensor mean = gd::linspace(-1, 1, 30, on(dt, gd::Device(gd::kCPU))).reshape({3, 10});
    Tensor std = gd::linspace(0, 2, 10, on(dt, gd::Device(gd::kCPU)));
    gd::manual_seed(8);
    Tensor a_cpu = gd::normal(mean, std), b_cpu = gd::normal(mean, 0.5), c_cpu = gd::normal(0.5, std);
    const uint64_t offset_cpu = gd::default_generator().offset();
    gd::manual_seed(8);
    Tensor a_gpu = gd::normal(mean.to(kGpu), std.to(kGpu)), b_gpu = gd::normal(mean.to(kGpu), 0.5),
           c_gpu = gd::normal(0.5, std.to(kGpu));
    CHECK(gd::default_generator().offset() == offset_cpu);
    const double tol = dt == gd::kFloat64 ? 1e-14 : 5e-6;
    gd::testing::check_matches(a_cpu, a_gpu, "normal(tensor, tensor)", tol, tol * 4);
    gd::testing::check_matches(b_cpu, b_gpu, "normal(tensor, double)", tol, tol * 4);
    gd::testing::check_matches(c_cpu, c_gpu, "normal(double, tensor)", tol, tol * 4);
  }
}
