// gradiens-bench: the BENCHMARKS.md workloads, each timed the way the PyTorch and
// libtorch peers time it, printed as one JSON line per workload.
//   gradiens-bench [--threads N] [--only a,b] [--repeat K]
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "bench/gemm_report.h"
#include "bench/lstm_packed.h"
#include "bench/train_loop_overhead.h"
#include "engine/cuda.h"
#include "engine/convolution.h"
#include "engine/generator.h"
#include "gradiens.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "nn/functional/phm.h"
#include "optim/adam.h"
#include "optim/sgd.h"

#ifndef GRADIENS_VERSION
#define GRADIENS_VERSION "unknown"
#endif

namespace gd = gradiens;

namespace {

struct Timing {
  double median_ms, min_ms, max_ms;
};

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// The peers' protocol: `warmup` untimed calls, then `repeat` timed ones; the median
// is the upper middle of the sorted times, as the libtorch peer takes it.
Timing time_calls(const std::function<void()>& fn, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// ", \"device\": ..." for a run on a GPU (its name and peak memory), else empty.
std::string device_fields = "";

// This machine's float32 GEMM speed at the current thread count: a large square
// product (1024^3) through the library's GEMM, best of several, in GFLOP/s. A
// workload's FLOPs over it give the time no implementation can beat on this CPU
// (the "floor"), which the float32 workloads print beside their own time.
double peak_f32_gflops() {
  static double peak = [] {
    const int64_t n = 1024;
    std::vector<float> a(static_cast<size_t>(n * n), 0.5f), b(a.size(), 0.25f), c(a.size());
    const Timing t = time_calls(
        [&] { gd::kernels::cpu::gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n); },
        2, 7);
    return 2.0 * static_cast<double>(n * n * n) / (t.min_ms * 1e6);
  }();
  return peak;
}

// ", "gflops": ..., "floor_ms": ..., "of_floor": ..." for a workload of `flops` float32
// FLOPs (on the CPU; only gflops on a GPU).
std::string floor_report(double flops, const Timing& t) {
  if (!device_fields.empty()) {  // on a GPU: the CPU's floor says nothing
    char gflops[48];
    std::snprintf(gflops, sizeof(gflops), ", \"gflops\": %.1f", flops / (t.median_ms * 1e6));
    return gflops;
  }
  const double floor_ms = flops / (peak_f32_gflops() * 1e6);
  char extra[160];
  std::snprintf(extra, sizeof(extra), ", \"gflops\": %.1f, \"floor_ms\": %.3f, \"of_floor\": %.2f",
                flops / (t.median_ms * 1e6), floor_ms, t.median_ms / floor_ms);
  return extra;
}

void print_line(const std::string& workload, int threads, const Timing& t, const std::string& what,
                const std::string& extra = "") {
  std::string device = device_fields;
  if (!device.empty())
    device += ", \"max_memory_allocated_mb\": " + std::to_string(gd::cuda::max_memory_allocated() / 1048576.0);
  std::printf(
      "{\"workload\": \"%s\", \"impl\": \"gradiens %s\", \"threads\": %d, \"median_ms\": %.3f, \"min_ms\": %.3f, "
      "\"max_ms\": %.3f, \"what\": \"%s\"%s%s, \"peak_rss_mb\": %.1f}\n",
      workload.c_str(), GRADIENS_VERSION, threads, t.median_ms, t.min_ms, t.max_ms, what.c_str(), extra.c_str(),
      device.c_str(), peak_rss_mb());
  std::fflush(stdout);
}

struct Options {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int repeat = 0;  // 0: each workload's own count
  gd::Device device = gd::Device(gd::kCPU);
  // Waits for the device, so that a timed call includes the work it queued.
  void sync() const {
    if (device.is_cuda()) gd::cuda::synchronize();
  }
};

// 5000 x (x = x * 1.0001 + 0.0001) on one float64 element that requires grad, then
// backward: the per-op cost of recording and replaying the tape.
void op_overhead_5000(const Options& options) {
  gd::Tensor x0 = gd::ones({1}, gd::TensorOptions().dtype(gd::kFloat64).device(options.device)).requires_grad_();
  Timing t = time_calls(
      [&] {
        gd::Tensor x = x0;
        for (int i = 0; i < 5000; ++i) x = x * 1.0001 + 0.0001;
        x.sum().backward();
        options.sync();
      },
      2, options.repeat > 0 ? options.repeat : 10);
  print_line("op_overhead_5000", options.threads, t, "5000 x (mul, add) + backward");
}

// C = A B through the op layer (gd::mm on fresh operands, output allocated per call),
// so the figure includes what a model pays on top of the kernel. One sample is as
// many calls as fit in ~20 ms; times are per call.
void gemm_through_mm(const Options& options, gd::ScalarType dtype, int64_t m, int64_t k, int64_t n,
                     const std::string& what) {
  gd::manual_seed(0);
  gd::Tensor a = gd::randn({m, k}, gd::TensorOptions().dtype(dtype));
  gd::Tensor b = gd::randn({k, n}, gd::TensorOptions().dtype(dtype));
  auto call = [&] { gd::Tensor c = gd::mm(a, b); };
  call();
  auto start = std::chrono::steady_clock::now();
  call();
  double one_call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int calls = std::clamp(static_cast<int>(0.02 / std::max(one_call_s, 1e-9)), 1, 100000);
  Timing sample = time_calls(
      [&] {
        for (int i = 0; i < calls; ++i) call();
      },
      0, options.repeat > 0 ? options.repeat : 9);
  Timing per_call{sample.median_ms / calls, sample.min_ms / calls, sample.max_ms / calls};
  double gflops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) /
                  (per_call.median_ms * 1e-3) * 1e-9;
  std::string name = std::string("gemm_") + (dtype == gd::kFloat32 ? "f32_" : "f64_") + std::to_string(m) + "x" +
                     std::to_string(k) + "x" + std::to_string(n);
  char extra[160];
  std::snprintf(extra, sizeof(extra), ", \"gflops\": %.1f, \"backend\": \"%s\", \"gemm_threads_used\": %d", gflops,
                gd::kernels::cpu::gemm_backend_name(dtype == gd::kFloat32, m, n, k),
                gd::kernels::cpu::gemm_threads_for(dtype == gd::kFloat32, m, n, k));
  print_line(name, options.threads, per_call, what, extra);
}

void gemm(const Options& options) {
  gemm_through_mm(options, gd::kFloat32, 1024, 1024, 1024, "gd::mm, large square");
  gemm_through_mm(options, gd::kFloat64, 1024, 1024, 1024, "gd::mm, large square");
  gemm_through_mm(options, gd::kFloat64, 10000, 20, 20, "gd::mm, PINN hidden layer, N_f=10000");
  gemm_through_mm(options, gd::kFloat32, 10000, 20, 20, "gd::mm, PINN hidden layer, N_f=10000");
}

// einsum('bij,bjk->bik') against bmm on the same float32 operands: einsum's
// parsing, views and pairwise-contraction bookkeeping around the one batched GEMM
// should cost little (target: within 1.1x of bmm). Calls alternate between the two
// so that both see the same machine state; times are per call.
void einsum_bmm(const Options& options) {
  const int64_t batch = 64, n = 128;
  gd::manual_seed(0);
  gd::Tensor a = gd::randn({batch, n, n}, gd::TensorOptions().dtype(gd::kFloat32));
  gd::Tensor b = gd::randn({batch, n, n}, gd::TensorOptions().dtype(gd::kFloat32));
  auto einsum_call = [&] { gd::Tensor c = gd::einsum("bij,bjk->bik", {a, b}); };
  auto bmm_call = [&] { gd::Tensor c = gd::bmm(a, b); };
  const int repeat = options.repeat > 0 ? options.repeat : 21;
  for (int i = 0; i < 3; ++i) {
    einsum_call();
    bmm_call();
  }
  std::vector<double> einsum_ms, bmm_ms;
  auto time_one = [](const std::function<void()>& fn) {
    auto start = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  for (int i = 0; i < repeat; ++i) {
    einsum_ms.push_back(time_one(einsum_call));
    bmm_ms.push_back(time_one(bmm_call));
  }
  std::sort(einsum_ms.begin(), einsum_ms.end());
  std::sort(bmm_ms.begin(), bmm_ms.end());
  Timing t{einsum_ms[einsum_ms.size() / 2], einsum_ms.front(), einsum_ms.back()};
  double bmm_median = bmm_ms[bmm_ms.size() / 2];
  // The ratio of the minima too: on a loaded machine it is the steadier figure.
  char extra[200];
  std::snprintf(extra, sizeof(extra),
                ", \"bmm_median_ms\": %.3f, \"bmm_min_ms\": %.3f, \"ratio\": %.3f, \"ratio_of_min\": %.3f",
                bmm_median, bmm_ms.front(), t.median_ms / bmm_median, t.min_ms / bmm_ms.front());
  print_line("einsum_bmm", options.threads, t, "einsum('bij,bjk->bik') vs bmm, float32 [64, 128, 128]", extra);
}

// The convolutional front of BENCHMARKS.md's cnn_f32_20steps: input [128, 1, 28, 28],
// conv 1->32 k3, relu, max_pool 2, conv 32->64 k3, then backward of the sum (weights
// and biases require grad, the input does not), float32. The PyTorch peer times the
// same function of torch.nn.functional at the same thread count.
void conv2d_workload(const Options& options) {
  gd::manual_seed(0);
  const auto f32 = gd::TensorOptions().dtype(gd::kFloat32);
  gd::Tensor x = gd::randn({128, 1, 28, 28}, f32);
  gd::Tensor w1 = (gd::randn({32, 1, 3, 3}, f32) * 0.3).requires_grad_();
  gd::Tensor b1 = gd::zeros({32}, f32).requires_grad_();
  gd::Tensor w2 = (gd::randn({64, 32, 3, 3}, f32) * 0.06).requires_grad_();
  gd::Tensor b2 = gd::zeros({64}, f32).requires_grad_();
  Timing t = time_calls(
      [&] {
        for (gd::Tensor* p : {&w1, &b1, &w2, &b2}) *p = p->detach().requires_grad_();
        gd::Tensor h = gd::max_pool2d(gd::relu(gd::conv2d(x, w1, b1)), 2);
        gd::conv2d(h, w2, b2).sum().backward();
      },
      3, options.repeat > 0 ? options.repeat : 21);
  print_line("conv2d", options.threads, t,
             "conv 1->32 k3, relu, maxpool 2, conv 32->64 k3 on [128, 1, 28, 28] f32, forward + backward");
}

// conv2d's workload in channels_last: input and weights NHWC/OHWI, as after PyTorch's
// model.to(memory_format=torch.channels_last), so conv, pool and their backward run on
// NHWC data (relu, as PyTorch's, keeps its input's layout).
void conv2d_nhwc_workload(const Options& options) {
  gd::manual_seed(0);
  const auto f32 = gd::TensorOptions().dtype(gd::kFloat32);
  const gd::Tensor x = gd::randn({128, 1, 28, 28}, f32).contiguous(gd::channels_last);
  gd::Tensor w1 = (gd::randn({32, 1, 3, 3}, f32) * 0.3).contiguous(gd::channels_last).requires_grad_();
  gd::Tensor b1 = gd::zeros({32}, f32).requires_grad_();
  gd::Tensor w2 = (gd::randn({64, 32, 3, 3}, f32) * 0.06).contiguous(gd::channels_last).requires_grad_();
  gd::Tensor b2 = gd::zeros({64}, f32).requires_grad_();
  Timing t = time_calls(
      [&] {
        for (gd::Tensor* p : {&w1, &b1, &w2, &b2}) *p = p->detach().requires_grad_();
        gd::Tensor h = gd::max_pool2d(gd::relu(gd::conv2d(x, w1, b1)), 2);
        gd::conv2d(h, w2, b2).sum().backward();
      },
      3, options.repeat > 0 ? options.repeat : 21);
  print_line("conv2d_nhwc", options.threads, t,
             "conv2d's workload with channels_last input and weights (NHWC throughout), forward + backward");
}

// BENCHMARKS.md's phm_linear_f32: the PHM layer y = x W^T + b, W = sum_i kron(A_i, S_i),
// n = 4, 512 -> 512, batch 256, float32, then backward of y.square().mean(). As in the
// peer, A, S and b require grad (their gradients accumulate over calls) and x does
// not. The timed line is the path phm_linear picks; both forced paths are timed too,
// alternating with it, and gflops counts the two 2 * 256 * 512 * 512 GEMMs every
// path does (forward, and the weight gradient).
void phm_linear_f32(const Options& options) {
  namespace F = gd::nn::functional;
  const int64_t n = 4, d = 512, batch = 256;
  gd::manual_seed(0);
  const auto f32 = gd::TensorOptions().dtype(gd::kFloat32);
  gd::Tensor A = gd::randn({n, n, n}, f32).to(options.device).requires_grad_();
  gd::Tensor S = gd::randn({n, d / n, d / n}, f32).to(options.device).requires_grad_();
  gd::Tensor b = gd::zeros({d}, f32).to(options.device).requires_grad_();
  const gd::Tensor x = gd::randn({batch, d}, f32).to(options.device);
  auto step = [&](F::PHMPath path) {
    F::phm_linear(x, A, S, b, path).square().mean().backward();
    options.sync();
  };
  const int repeat = options.repeat > 0 ? options.repeat : 20;
  const F::PHMPath paths[] = {F::PHMPath::Auto, F::PHMPath::BuildWeight, F::PHMPath::Structured};
  std::vector<double> ms[3];
  for (int i = 0; i < 3; ++i)
    for (F::PHMPath path : paths) step(path);
  for (int i = 0; i < repeat; ++i)
    for (int p = 0; p < 3; ++p) {
      auto start = std::chrono::steady_clock::now();
      step(paths[p]);
      ms[p].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  Timing t[3];
  for (int p = 0; p < 3; ++p) {
    std::sort(ms[p].begin(), ms[p].end());
    t[p] = {ms[p][ms[p].size() / 2], ms[p].front(), ms[p].back()};
  }
  const double gemm_flops = 2 * 2.0 * batch * d * d;
  const bool builds = F::phm_choose_path(batch, n, d, d, true) == F::PHMPath::BuildWeight;
  char extra[400];
  std::snprintf(extra, sizeof(extra),
                ", \"path\": \"%s\", \"build_weight_median_ms\": %.3f, \"build_weight_min_ms\": "
                "%.3f, \"structured_median_ms\": %.3f, \"structured_min_ms\": %.3f",
                builds ? "build_weight" : "structured", t[1].median_ms, t[1].min_ms, t[2].median_ms, t[2].min_ms);
  print_line("phm_linear_f32", options.threads, t[0], "fwd+bwd, n=4, 512x512, batch 256",
             extra + floor_report(gemm_flops, t[0]));
}

// An MLP as the peers build it: Linear layers of the given widths, the activation
// between them (tanh or ReLU), float32 parameters (PyTorch's default init).
gd::nn::Sequential mlp(const std::vector<int64_t>& widths, bool tanh) {
  gd::nn::Sequential net;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    net->push_back(gd::nn::Linear(widths[i], widths[i + 1]));
    if (i + 2 < widths.size()) {
      if (tanh) net->push_back(gd::nn::Tanh());
      else net->push_back(gd::nn::ReLU());
    }
  }
  return net;
}

// The PINN workloads' network: `in` -> 8 hidden layers of `width` -> 1.
std::vector<int64_t> pinn_widths(int64_t in, int64_t width) {
  std::vector<int64_t> widths{in};
  for (int i = 0; i < 8; ++i) widths.push_back(width);
  widths.push_back(1);
  return widths;
}

// That network with tanh, float64, its weights drawn after manual_seed(0).
gd::nn::Sequential pinn_mlp(const std::vector<int64_t>& widths) {
  gd::manual_seed(0);
  gd::nn::Sequential net = mlp(widths, /*tanh=*/true);
  net->to(gd::kFloat64);
  return net;
}

// The GEMMs of one Taylor-mode training step of an MLP (pinn/taylor.h): per
// Linear, the jet's product [K*N, in] x W^T, the weight gradient dY^T X and,
// except for the first layer (whose input, the seed jet, needs no gradient),
// the input gradient dY W. Their FLOPs give the step's GFLOP/s, and timing
// them alone through the library's GEMM gives the floor a step cannot beat.
struct JetGemms {
  std::vector<std::array<int64_t, 3>> forward, weight_grad, input_grad;  // {m, k, n}

  JetGemms(const std::vector<int64_t>& widths, int64_t rows) {
    for (size_t i = 0; i + 1 < widths.size(); ++i) {
      forward.push_back({rows, widths[i], widths[i + 1]});
      weight_grad.push_back({widths[i + 1], rows, widths[i]});
      if (i > 0) input_grad.push_back({rows, widths[i + 1], widths[i]});
    }
  }
  double flops() const {
    double total = 0;
    for (const auto* list : {&forward, &weight_grad, &input_grad})
      for (const auto& [m, k, n] : *list) total += 2.0 * static_cast<double>(m) * static_cast<double>(k) * n;
    return total;
  }
  // Median time of all of them, in the layouts the engine uses (W^T and dY^T transposed).
  double floor_ms() const {
    int64_t largest = 0;
    for (const auto* list : {&forward, &weight_grad, &input_grad})
      for (const auto& [m, k, n] : *list) largest = std::max({largest, m * k, k * n, m * n});
    std::vector<double> a(static_cast<size_t>(largest), 0.5), b(static_cast<size_t>(largest), 0.25),
        c(static_cast<size_t>(largest));
    auto run = [&] {
      for (const auto& [m, k, n] : forward)
        gd::kernels::cpu::gemm(false, true, m, n, k, 1.0, a.data(), k, b.data(), k, 0.0, c.data(), n);
      for (const auto& [m, k, n] : weight_grad)
        gd::kernels::cpu::gemm(true, false, m, n, k, 1.0, a.data(), m, b.data(), n, 0.0, c.data(), n);
      for (const auto& [m, k, n] : input_grad)
        gd::kernels::cpu::gemm(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0, c.data(), n);
    };
    return time_calls(run, 2, 9).median_ms;
  }
  std::string report(const Timing& t) const {
    char extra[160];
    if (!device_fields.empty()) {  // on a GPU: the CPU's GEMM floor says nothing
      std::snprintf(extra, sizeof(extra), ", \"gemm_gflop\": %.3f, \"gflops\": %.1f", flops() * 1e-9,
                    flops() / (t.median_ms * 1e6));
      return extra;
    }
    std::snprintf(extra, sizeof(extra), ", \"gemm_gflop\": %.3f, \"gflops\": %.1f, \"gemm_floor_ms\": %.3f",
                  flops() * 1e-9, flops() / (t.median_ms * 1e6), floor_ms());
    return extra;
  }
};

// BENCHMARKS.md's pinn_burgers_f64 and pinn_burgers_taylor_f64: one Adam step
// of the Burgers PINN, float64, MLP 2-20x8-1 tanh, N_f = 10000 collocation and
// N_u = 100 boundary points, residual + data MSE, backward. Nested: forward,
// u_x and u_t by autograd::grad(create_graph), u_xx by a second grad, line for
// line the peers' step (pow(2) included). Taylor: u, u_x, u_t and u_xx from
// one pass of the Taylor-mode engine (pinn/taylor.h).
void pinn_burgers(const Options& options, bool taylor) {
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  const std::vector<int64_t> widths = pinn_widths(2, 20);
  gd::nn::Sequential net = pinn_mlp(widths);
  net->to(options.device);
  gd::optim::Adam opt(net->parameters(), gd::optim::AdamOptions(1e-3));
  const double nu = 0.01 / std::numbers::pi;
  gd::Tensor xf = (gd::rand({10000, 1}, f64) * 2 - 1).to(options.device).requires_grad_();
  gd::Tensor tf = gd::rand({10000, 1}, f64).to(options.device).requires_grad_();
  gd::Tensor xu = (gd::rand({100, 2}, f64) * 2 - 1).to(options.device);
  gd::Tensor uu = -gd::sin(xu.narrow(1, 0, 1) * std::numbers::pi);
  const gd::Tensor xf_points = xf.detach(), tf_points = tf.detach();  // Taylor mode needs no grad in x
  const gd::pinn::TaylorRequest request{.laplacian = false, .pure_dims = {0}, .pure_order = 2};
  Timing t = time_calls(
      [&] {
        opt.zero_grad();
        gd::Tensor u, u_x, u_t, u_xx;
        if (taylor) {
          const gd::pinn::TaylorOutputs jet = gd::pinn::taylor_forward(*net, gd::cat({xf_points, tf_points}, 1), request);
          u = jet.value, u_x = jet.pure(0, 1), u_t = jet.pure(1, 1), u_xx = jet.pure(0, 2);
        } else {
          u = net->forward(gd::cat({xf, tf}, 1));
          std::vector<gd::Tensor> g = gd::autograd::grad({u}, {xf, tf}, {gd::ones_like(u)}, true, true);
          u_x = g[0];
          u_t = g[1];
          u_xx = gd::autograd::grad({u_x}, {xf}, {gd::ones_like(u_x)}, true, true)[0];
        }
        gd::Tensor f = u_t + u * u_x - nu * u_xx;
        gd::Tensor loss = (net->forward(xu) - uu).pow(2).mean() + f.pow(2).mean();
        loss.backward();
        opt.step();
        options.sync();
      },
      2, options.repeat > 0 ? options.repeat : 10);
  if (taylor)
    print_line("pinn_burgers_taylor_f64", options.threads, t, "one Adam step, N_f=10000, u_x u_t u_xx by Taylor mode",
               JetGemms(widths, 4 * 10000).report(t));
  else
    print_line("pinn_burgers_f64", options.threads, t, "one Adam step, N_f=10000");
}

// BENCHMARKS.md's pinn_poisson5d_f64 and pinn_poisson5d_taylor_f64: MLP
// 5-64x8-1 tanh, float64, 8192 points of [0,1]^5, loss mean((lap u + f)^2)
// with f = (pi^2/4) sum_i sin(pi x_i / 2), backward, one Adam step. The
// Laplacian by nested grads (one second grad per coordinate, as the peers),
// or from the Taylor-mode engine (pinn/taylor.h) in one forward pass.
void pinn_poisson5d(const Options& options, bool taylor) {
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  const std::vector<int64_t> widths = pinn_widths(5, 64);
  gd::nn::Sequential net = pinn_mlp(widths);
  net->to(options.device);
  gd::optim::Adam opt(net->parameters(), gd::optim::AdamOptions(1e-3));
  gd::Tensor x = gd::rand({8192, 5}, f64).to(options.device).requires_grad_();
  gd::Tensor f = (std::numbers::pi * std::numbers::pi / 4) * gd::sin(x.detach() * (std::numbers::pi / 2)).sum({1}, true);
  const gd::Tensor x_points = x.detach();  // Taylor mode needs no grad in x
  Timing t = time_calls(
      [&] {
        opt.zero_grad();
        gd::Tensor lap = taylor ? gd::pinn::taylor_forward(*net, x_points).laplacian
                                : gd::pinn::laplacian(net->forward(x), x);
        ((lap + f).pow(2)).mean().backward();
        opt.step();
        options.sync();
      },
      2, options.repeat > 0 ? options.repeat : 10);
  if (taylor)
    print_line("pinn_poisson5d_taylor_f64", options.threads, t, "one Adam step, 8192 points, Laplacian by Taylor mode",
               JetGemms(widths, 7 * 8192).report(t));
  else
    print_line("pinn_poisson5d_f64", options.threads, t, "one Adam step, 8192 points, full 5-D Laplacian");
}

// BENCHMARKS.md's mlp_f32_50steps: MLP 784-512-256-10 ReLU, float32, batch 128,
// cross-entropy, Adam; one call is 50 training steps on fixed random data. gflops
// counts the GEMMs: forward, the weight gradients, and the input gradients of every
// layer but the first (the data needs none).
void mlp_f32_50steps(const Options& options) {
  gd::manual_seed(0);
  const std::vector<int64_t> widths{784, 512, 256, 10};
  gd::nn::Sequential net = mlp(widths, /*tanh=*/false);
  net->to(options.device);
  gd::optim::Adam opt(net->parameters(), gd::optim::AdamOptions(1e-3));
  const int64_t steps = 50, batch = 128;
  gd::Tensor xs = gd::randn({steps, batch, 784}).to(options.device);
  gd::Tensor ys = gd::randint(0, 10, {steps, batch}).to(options.device);
  Timing t = time_calls(
      [&] {
        for (int64_t i = 0; i < steps; ++i) {
          opt.zero_grad();
          gd::Tensor loss = gd::nn::functional::cross_entropy(net->forward(xs[i]), ys[i]);
          loss.backward();
          opt.step();
        }
        options.sync();
      },
      1, options.repeat > 0 ? options.repeat : 5);
  double macs = 0, later_macs = 0;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    macs += static_cast<double>(widths[i] * widths[i + 1]);
    if (i > 0) later_macs += static_cast<double>(widths[i] * widths[i + 1]);
  }
  const double flops = static_cast<double>(steps) * 2.0 * static_cast<double>(batch) * (2 * macs + later_macs);
  print_line("mlp_f32_50steps", options.threads, t, "50 steps, batch 128", floor_report(flops, t));
}

// BENCHMARKS.md's cnn_f32_20steps: Conv(1,32,3)-ReLU-MaxPool2-Conv(32,64,3)-ReLU-
// MaxPool2-Flatten-Linear(1600,128)-ReLU-Linear(128,10), float32, batch 128, SGD
// (lr 0.01, momentum 0.9), cross-entropy; one call is 20 steps on fixed random data.
// gflops counts the convolutions and GEMMs: forward, weight gradients, and input
// gradients of every layer but the first.
void cnn_f32_20steps(const Options& options) {
  gd::manual_seed(0);
  gd::nn::Sequential net(gd::nn::Conv2d(1, 32, 3), gd::nn::ReLU(), gd::nn::MaxPool2d(2), gd::nn::Conv2d(32, 64, 3),
                         gd::nn::ReLU(), gd::nn::MaxPool2d(2), gd::nn::Flatten(), gd::nn::Linear(1600, 128),
                         gd::nn::ReLU(), gd::nn::Linear(128, 10));
  net->to(options.device);
  gd::optim::SGD opt(net->parameters(), gd::optim::SGDOptions(0.01).momentum(0.9));
  const int64_t steps = 20, batch = 128;
  gd::Tensor xs = gd::randn({steps, batch, 1, 28, 28}).to(options.device);
  gd::Tensor ys = gd::randint(0, 10, {steps, batch}).to(options.device);
  Timing t = time_calls(
      [&] {
        for (int64_t i = 0; i < steps; ++i) {
          opt.zero_grad();
          gd::nn::functional::cross_entropy(net->forward(xs[i]), ys[i]).backward();
          opt.step();
        }
        options.sync();
      },
      1, options.repeat > 0 ? options.repeat : 3);
  // Multiply-adds per example: conv1 26x26x32 outputs of 1x3x3, conv2 11x11x64 of 32x3x3,
  // then the two Linear layers.
  const double conv1 = 26.0 * 26 * 32 * 9, conv2 = 11.0 * 11 * 64 * 32 * 9, fc1 = 1600.0 * 128, fc2 = 128.0 * 10;
  const double macs = conv1 + conv2 + fc1 + fc2, later_macs = conv2 + fc1 + fc2;
  const double flops = static_cast<double>(steps) * 2.0 * static_cast<double>(batch) * (2 * macs + later_macs);
  print_line("cnn_f32_20steps", options.threads, t, "20 steps, batch 128", floor_report(flops, t));
}

// BENCHMARKS.md's lstm_packed_f32 (bench/lstm_packed.cpp), timed as the peer times it.
void lstm_packed_f32(const Options& options) {
  std::function<void()> step = make_lstm_packed_f32_step(options.device);
  Timing t = time_calls(
      [&] {
        step();
        options.sync();
      },
      2, options.repeat > 0 ? options.repeat : 10);
  print_line("lstm_packed_f32", options.threads, t, "fwd+bwd, 64 seqs len 10..100",
             floor_report(lstm_packed_f32_flops(), t));
}

struct Workload {
  const char* name;
  std::function<void(const Options&)> run;
  bool runs_on_cuda = false;  // its ops all have CUDA kernels
};

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = {
      {"pinn_burgers_f64", [](const Options& options) { pinn_burgers(options, false); }, true},
      {"pinn_burgers_taylor_f64", [](const Options& options) { pinn_burgers(options, true); }, true},
      {"pinn_poisson5d_f64", [](const Options& options) { pinn_poisson5d(options, false); }, true},
      {"pinn_poisson5d_taylor_f64", [](const Options& options) { pinn_poisson5d(options, true); }, true},
      {"mlp_f32_50steps", mlp_f32_50steps, true},
      {"op_overhead_5000", op_overhead_5000, true},
      {"cnn_f32_20steps", cnn_f32_20steps, true},
      {"lstm_packed_f32", lstm_packed_f32, true},
      {"gemm", gemm},
      {"einsum_bmm", einsum_bmm},
      {"conv2d", conv2d_workload},
      {"conv2d_nhwc", conv2d_nhwc_workload},
      {"phm_linear_f32", phm_linear_f32, true},
      {"train_loop_overhead",
       [](const Options& options) { train_loop_overhead(options.threads, options.repeat > 0 ? options.repeat : 5, GRADIENS_VERSION); }},
      // The GEMM kernels alone, per backend (bench/gemm_report.cpp).
      {"gemm_kernels", [](const Options& options) { print_gemm_report(options.threads); }},
  };
  return all;
}

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) parts.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "gradiens-bench: %s\nusage: gradiens-bench [--threads N] [--only a,b] [--repeat K] [--device cpu|cuda]\n",
               message.c_str());
  std::exit(2);
}

int parse_positive(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  long parsed = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || parsed < 1 || parsed > 1000000)
    usage_error(flag + " expects a positive integer, got '" + value + "'");
  return static_cast<int>(parsed);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::printf("usage: gradiens-bench [--threads N] [--only a,b] [--repeat K] [--device cpu|cuda]\nworkloads:");
      for (const Workload& w : workloads()) std::printf(" %s", w.name);
      std::printf("\n");
      return 0;
    }
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg == "--threads" || arg == "--only" || arg == "--repeat" || arg == "--device") {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--threads") options.threads = parse_positive(arg, value);
    else if (arg == "--repeat") options.repeat = parse_positive(arg, value);
    else if (arg == "--only") only = split_commas(value);
    else if (arg == "--device") {
      try {
        options.device = gd::Device(value);
      } catch (const gd::Error& e) {
        usage_error(e.what());
      }
    }
    else usage_error("unknown argument '" + arg + "'");
  }
  for (const std::string& name : only) {
    bool known = std::any_of(workloads().begin(), workloads().end(),
                             [&](const Workload& w) { return name == w.name; });
    if (!known) usage_error("unknown workload '" + name + "' (see --help)");
  }

  // Both thread settings: the elementwise/reduction loops and the GEMMs.
  gd::kernels::cpu::set_num_threads(options.threads);
  gd::kernels::cpu::set_gemm_threads(options.threads);

  if (options.device.is_cuda()) {
    if (!gd::cuda::is_available()) usage_error("--device " + options.device.str() + ": no CUDA device is available");
    if (options.device.index() < 0) options.device = gd::Device(gd::kCUDA, static_cast<int>(gd::cuda::current_device()));
    device_fields = ", \"device\": \"" + options.device.str() + " (" + gd::cuda::get_device_name() + ")\"";
  }
  for (const Workload& w : workloads()) {
    if (!only.empty() && std::find(only.begin(), only.end(), w.name) == only.end()) continue;
    if (options.device.is_cuda() && !w.runs_on_cuda) {
      if (!only.empty())
        std::printf("{\"workload\": \"%s\", \"device\": \"%s\", \"skipped\": \"not all of its ops have CUDA kernels yet\"}\n",
                    w.name, options.device.str().c_str());
      continue;
    }
    if (options.device.is_cuda()) gd::cuda::reset_peak_memory_stats();
    w.run(options);
  }
  return 0;
}
