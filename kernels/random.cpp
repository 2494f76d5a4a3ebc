// The random-fill entry points (kernels/random.h): the CPU's Philox fills, or
// the CUDA twins of kernels/cuda/random.h on the device's stream.
#include "kernels/random.h"

#include <string>

#include "kernels/cpu/random.h"
#include "kernels/cuda/random.h"
#include "kernels/error.h"

namespace gradiens::kernels {

namespace {
void check_floating(ScalarType dtype, const char* fill) {
  GD_INTERNAL_ASSERT(dtype == ScalarType::Float32 || dtype == ScalarType::Float64,
                     std::string(fill) + ": a float32 or float64 buffer was expected");
}
}  // namespace

uint64_t fill_uniform(ScalarType dtype, void* out, int64_t n, PhiloxState state, double low, double high,
                      const DeviceRef& device) {
  check_floating(dtype, "fill_uniform");
  if (device.is_cuda()) return cuda::fill_uniform(dtype, out, n, state.seed, state.offset, low, high, device.stream);
  if (dtype == ScalarType::Float32)
    return cpu::fill_uniform(static_cast<float*>(out), n, state, static_cast<float>(low), static_cast<float>(high));
  return cpu::fill_uniform(static_cast<double*>(out), n, state, low, high);
}

uint64_t fill_normal(ScalarType dtype, void* out, int64_t n, PhiloxState state, double mean, double std,
                     const DeviceRef& device) {
  check_floating(dtype, "fill_normal");
  if (device.is_cuda()) return cuda::fill_normal(dtype, out, n, state.seed, state.offset, mean, std, device.stream);
  if (dtype == ScalarType::Float32)
    return cpu::fill_normal(static_cast<float*>(out), n, state, static_cast<float>(mean), static_cast<float>(std));
  return cpu::fill_normal(static_cast<double*>(out), n, state, mean, std);
}

uint64_t fill_randint(int64_t* out, int64_t n, PhiloxState state, int64_t low, int64_t high, const DeviceRef& device) {
  if (device.is_cuda()) return cuda::fill_randint(out, n, state.seed, state.offset, low, high, device.stream);
  return cpu::fill_randint(out, n, state, low, high);
}

uint64_t fill_random_bits(uint32_t* out, int64_t n, PhiloxState state, const DeviceRef& device) {
  if (device.is_cuda()) return cuda::fill_random_bits(out, n, state.seed, state.offset, device.stream);
  return cpu::fill_random_bits(out, n, state);
}

}  // namespace gradiens::kernels
