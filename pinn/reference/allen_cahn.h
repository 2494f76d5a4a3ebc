// The Allen-Cahn reference solution: u_t = nu u_xx + r (u - u^3) on x in [-1, 1]
// periodic, t in [0, t_end], u(0, x) = x^2 cos(pi x) (the problem of Raissi et al.'s
// AC.mat, nu = 1e-4, r = 5), by a Fourier pseudo-spectral ETDRK4 solver in float64.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::pinn {

// See Note [Allen-Cahn accuracy] in allen_cahn.cpp for what these defaults buy.
struct AllenCahnOptions {
  double diffusion = 1e-4;  // nu >= 0
  double reaction = 5.0;    // r
  int64_t modes = 4096;     // grid points on [-1, 1), even: the modes -modes/2 .. modes/2
  int64_t steps = 1000;     // equal ETDRK4 steps over [0, t_end]
  double t_end = 1.0;
};

// Solves once, in the constructor (about 0.2 s with the defaults), and keeps
// snapshots of the spectra of u, u_t and u_tt (145 of them, 14 MB, by default).
// u(t, x) is then read off by quintic Hermite interpolation in t between the
// snapshots and the Fourier series in x: about 20 us a point, shared by the points
// at one time (the 102912 points of the AC.mat grid take 0.04 s). The snapshots lie
// closer together early on, where the kink at x = +-1 (the periodic extension of
// x^2 cos(pi x) has u_x jumping from -2 to 2) leaves a sqrt(t) layer. At t = 0 the
// initial condition is returned exactly.
class AllenCahnReference {
 public:
  explicit AllenCahnReference(const AllenCahnOptions& options = {});

  // u(t, x) for t in [0, t_end] and any finite x (the solution is 2-periodic in x).
  double operator()(double t, double x) const;
  // u at every (t[i], x[j]): a float64 tensor [t.size(), x.size()].
  Tensor on_grid(const std::vector<double>& t, const std::vector<double>& x) const;
  // u at each row (x, t) of a floating-point [N, 2] tensor: float64 [N, 1], the shape
  // of a network's output on those points.
  Tensor on_points(const Tensor& points) const;

  const AllenCahnOptions& options() const { return options_; }
  // The times the solver kept, from 0 to t_end; u between them is interpolated.
  const std::vector<double>& snapshot_times() const { return snapshot_times_; }

  // x^2 cos(pi x).
  static double initial_condition(double x);

 private:
  // Writes u(t, x[i * x_stride]) to out[i * out_stride] for i < count.
  void evaluate(double t, const double* x, int64_t x_stride, int64_t count, double* out, int64_t out_stride) const;

  AllenCahnOptions options_;
  std::vector<double> snapshot_times_;
  // For snapshot s and field f (0: u, 1: u_t, 2: u_tt), the coefficients of modes
  // 0 .. modes/2 at [(3 s + f) * (modes/2 + 1)], scaled so that u(x) = sum over k of
  // c_k exp(i pi k (x + 1)) with c_{-k} = conj(c_k).
  std::vector<std::complex<double>> spectra_;
};

// The grid of Raissi et al.'s AC.mat: x at 512 points -1 + 2 j / 512 (the periodic
// grid on [-1, 1)), t at 201 points i / 200 in [0, 1].
std::vector<double> allen_cahn_reference_x();
std::vector<double> allen_cahn_reference_t();

}  // namespace gradiens::pinn
