// The checks the CUDA tests share (see cuda_checks.h).
#include "tests/cuda/cuda_checks.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gradiens::testing {

void check_matches(const Tensor& cpu, const Tensor& gpu, const std::string& what, double rtol, double atol) {
  INFO(what);
  REQUIRE(gpu.defined());
  REQUIRE(gpu.device().is_cuda());
  REQUIRE(cpu.sizes() == gpu.sizes());
  REQUIRE(cpu.dtype() == gpu.dtype());
  Tensor a = cpu.detach().to(kFloat64).contiguous(), b = gpu.detach().cpu().to(kFloat64).contiguous();
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  double worst = 0;
  int64_t worst_at = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::isnan(pa[i]) || std::isnan(pb[i])) {
      CHECK_MESSAGE(std::isnan(pa[i]) == std::isnan(pb[i]), fmt::format("NaN mismatch at {}", i));
      continue;
    }
    if (pa[i] == pb[i]) continue;
    const double excess = std::abs(pa[i] - pb[i]) - (atol + rtol * std::abs(pa[i]));
    if (excess > worst || (excess > 0 && worst_at < 0)) {
      worst = excess;
      worst_at = i;
    }
  }
  CHECK_MESSAGE(worst_at < 0, fmt::format("element {}: cpu {} gpu {}", worst_at, worst_at < 0 ? 0 : pa[worst_at],
                                          worst_at < 0 ? 0 : pb[worst_at]));
}

void check_same_bits(const Tensor& cpu, const Tensor& gpu, const std::string& what) {
  INFO(what);
  REQUIRE(gpu.defined());
  REQUIRE(cpu.sizes() == gpu.sizes());
  REQUIRE(cpu.dtype() == gpu.dtype());
  Tensor a = cpu.contiguous(), b = gpu.cpu().contiguous();
  const size_t bytes = static_cast<size_t>(a.numel()) * a.element_size();
  CHECK_MESSAGE(std::memcmp(a.data_ptr(), b.data_ptr(), bytes) == 0, "the bits differ");
}

void check_close_normwise(const Tensor& cpu, const Tensor& gpu, const std::string& what, double tol) {
  INFO(what);
  REQUIRE(gpu.defined());
  CHECK(gpu.device() == Device("cuda:0"));
  CHECK(gpu.dtype() == cpu.dtype());
  REQUIRE(gpu.sizes() == cpu.sizes());
  if (cpu.numel() == 0) return;
  Tensor a = cpu.detach().to(kFloat64), b = gpu.detach().cpu().to(kFloat64);
  const double scale = std::max(1.0, a.abs().max().item<double>());
  const double error = (a - b).abs().max().item<double>();  // NaN when either holds one
  CHECK_MESSAGE(error <= tol * scale, fmt::format("max |gpu - cpu| = {:.3e}, max |cpu| = {:.3e}", error, scale));
}

double largest_magnitude(const Tensor& t) {
  return t.numel() == 0 ? 0.0 : t.detach().abs().max().to(kFloat64).item<double>();
}

}  // namespace gradiens::testing
