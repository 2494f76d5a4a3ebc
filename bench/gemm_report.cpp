// print_gemm_report: achieved GFLOP/s of kernels/cpu/gemm on the shapes the benchmarks
// use, one JSON line per product and backend.
#include "bench/gemm_report.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cpu/gemm.h"

namespace {

namespace gemm = gradiens::kernels::cpu;
using Float32Backend = gemm::testing::Float32Backend;

// One reported product: C[m, n] = op(A)[m, k] * op(B)[k, n]. The label writes it the
// way BENCHMARKS.md does, (m x k) . (k x n) as "m x k x n".
struct ReportedGemm {
  bool is_float32;
  int64_t m, k, n;
  bool trans_a, trans_b;
  Float32Backend backend;  // Auto: the backend the library picks
  const char* what;
};

struct Timing {
  double median_s, min_s;
};

template <class T>
Timing time_gemm(const ReportedGemm& g) {
  const int64_t lda = g.trans_a ? g.m : g.k, ldb = g.trans_b ? g.k : g.n;
  std::vector<T> a(static_cast<size_t>(g.m * g.k)), b(static_cast<size_t>(g.k * g.n)),
      c(static_cast<size_t>(g.m * g.n));
  uint32_t state = 12345;  // values in [-1, 1): no denormals, no overflow
  const auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<T>(static_cast<double>(state >> 8) / (1 << 23) - 1.0);
  };
  std::generate(a.begin(), a.end(), next);
  std::generate(b.begin(), b.end(), next);
  const auto run = [&] {
    gemm::gemm(g.trans_a, g.trans_b, g.m, g.n, g.k, T(1), a.data(), lda, b.data(), ldb, T(0),
               c.data(), g.n);
  };
  // Warm up (creates the oneDNN primitive, wakes threads), then size each sample to
  // about 20 ms so that microsecond products are not timer noise.
  run();
  const auto warm_start = std::chrono::steady_clock::now();
  run();
  const double one_call =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
  const int calls_per_sample = std::clamp(static_cast<int>(0.02 / std::max(one_call, 1e-9)), 1, 100000);
  constexpr int kSamples = 9;
  std::vector<double> samples;
  for (int sample = 0; sample < kSamples; ++sample) {
    const auto start = std::chrono::steady_clock::now();
    for (int call = 0; call < calls_per_sample; ++call) run();
    samples.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
        calls_per_sample);
  }
  std::sort(samples.begin(), samples.end());
  return {samples[kSamples / 2], samples.front()};
}

void report(const ReportedGemm& g, int threads) {
  gemm::testing::gemm_force_backend(g.backend);
  const Timing timing = g.is_float32 ? time_gemm<float>(g) : time_gemm<double>(g);
  const char* backend = gemm::gemm_backend_name(g.is_float32, g.m, g.n, g.k);
  const int threads_used = gemm::gemm_threads_for(g.is_float32, g.m, g.n, g.k);
  gemm::testing::gemm_force_backend(Float32Backend::Auto);
  const double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  const std::string label = std::string(g.is_float32 ? "f32 " : "f64 ") + std::to_string(g.m) +
                            "x" + std::to_string(g.k) + "x" + std::to_string(g.n) +
                            (g.trans_a || g.trans_b
                                 ? std::string(" ") + (g.trans_a ? "T" : "N") + (g.trans_b ? "T" : "N")
                                 : "");
  std::printf(
      "{\"gemm\": \"%s\", \"backend\": \"%s\", \"chosen\": %s, \"threads\": %d, "
      "\"threads_used\": %d, \"median_ms\": %.6g, \"min_ms\": %.6g, \"gflops\": %.4g, "
      "\"what\": \"%s\"}\n",
      label.c_str(), backend, g.backend == Float32Backend::Auto ? "true" : "false", threads,
      threads_used, timing.median_s * 1e3, timing.min_s * 1e3,
      flops / timing.median_s * 1e-9, g.what);
  std::fflush(stdout);
}

}  // namespace

void print_gemm_report(int threads) {
  const int saved_threads = gemm::gemm_threads();
  gemm::set_gemm_threads(threads);
  constexpr auto kAuto = Float32Backend::Auto, kOneDnn = Float32Backend::OneDnn,
                 kOpenBlas = Float32Backend::OpenBlas;
  const ReportedGemm reported[] = {
      {true, 1024, 1024, 1024, false, false, kOneDnn, "large square"},
      {true, 1024, 1024, 1024, false, false, kOpenBlas, "large square"},
      {true, 1024, 1024, 1024, false, false, kAuto, "large square"},
      {false, 1024, 1024, 1024, false, false, kAuto, "large square"},
      {false, 10000, 20, 20, false, false, kAuto, "PINN hidden layer, N_f=10000"},
      {true, 10000, 20, 20, false, false, kOneDnn, "PINN hidden layer, N_f=10000"},
      {true, 10000, 20, 20, false, false, kOpenBlas, "PINN hidden layer, N_f=10000"},
      {true, 10000, 20, 20, false, false, kAuto, "PINN hidden layer, N_f=10000"},
      {false, 10000, 2, 20, false, false, kAuto, "PINN input layer"},
      {true, 128, 784, 512, false, true, kAuto, "MLP layer 1 forward, x W^T"},
      {true, 512, 128, 784, true, false, kAuto, "MLP layer 1 weight gradient, dY^T x"},
      {true, 128, 512, 256, false, true, kAuto, "MLP layer 2 forward"},
      {true, 128, 256, 10, false, true, kAuto, "MLP layer 3 forward"},
      {true, 64, 32, 512, false, true, kAuto, "LSTM input projection"},
      {true, 1, 1, 1, false, false, kAuto, "call overhead"},
  };
  for (const ReportedGemm& g : reported) report(g, threads);
  gemm::set_gemm_threads(saved_threads);
}
