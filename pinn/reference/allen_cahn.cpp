// The Allen-Cahn reference (see allen_cahn.h): the ETDRK4 solver of Cox and Matthews
// (2002) with Kassam and Trefethen's (2005) contour-integral coefficients, on FFTW's
// real transforms, and the read-out in t (quintic Hermite) and x (Fourier series).
#include "pinn/reference/allen_cahn.h"

#include <fftw3.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <numbers>
#include <numeric>

#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/reference/common.h"

namespace gradiens::pinn {

// Note [Allen-Cahn accuracy]
// The largest |difference| over the AC.mat x grid from a run with 16384 modes and
// 4000 steps (the default is 4096 modes and 1000 steps; 512 is AC.mat's resolution):
//   t          1e-4    5e-4    1e-3    2e-3    5e-3    0.01     0.1      1
//   default    7e-5    3e-6    3e-7    1e-9    1e-10   1.5e-11  2.5e-12  1e-11
//   512 modes  1.4e-3  1.1e-3  1e-3    8e-4    5e-4    2e-4     7e-8     1.4e-6
// Until t ~ 2e-3 the error is the kink at x = +-1, which no finite number of modes
// holds (Note [Allen-Cahn initial spectrum]); it lies next to x = +-1. After that it
// is the time step's (fourth order; 2000 steps leave 6e-12) and the interfaces',
// which are about sqrt(2 nu / r) = 6e-3 wide: 512 modes do not resolve them.
// Interpolating between snapshots adds under 1e-11 (Note [Allen-Cahn snapshots]).
// tests/pinn/test_reference.cpp checks that doubling the modes and halving the step
// changes the grid (t > 0) by less than 1e-9 and the t = 1 row by less than 1e-10
// (measured: 1.1e-10 and 8e-12).

namespace {

using Complex = std::complex<double>;
constexpr double kPi = std::numbers::pi;
constexpr int64_t kMaxModes = int64_t{1} << 22;

// ---- FFTW ----

// FFTW's planner is not thread-safe (its execute is): every plan is made under this lock.
std::mutex& fftw_planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The real transforms of one size n between physical values u_j = u(-1 + 2 j / n) and
// the coefficients c_0 .. c_{n/2} of u(x) = sum_k c_k exp(i pi k (x + 1)).
class RealFourierTransform {
 public:
  explicit RealFourierTransform(int64_t n)
      : n_(n),
        physical_(fftw_alloc_real(static_cast<size_t>(n))),
        spectrum_(fftw_alloc_complex(static_cast<size_t>(n / 2 + 1))) {
    GD_CHECK(physical_ != nullptr && spectrum_ != nullptr,
             fmt::format("AllenCahnReference: out of memory for {} modes", n));
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    const int size = static_cast<int>(n);
    forward_ = fftw_plan_dft_r2c_1d(size, physical_.get(), spectrum_.get(), FFTW_ESTIMATE);
    backward_ = fftw_plan_dft_c2r_1d(size, spectrum_.get(), physical_.get(), FFTW_ESTIMATE);
    GD_INTERNAL_ASSERT(forward_ != nullptr && backward_ != nullptr, "FFTW could not plan a real transform");
  }
  ~RealFourierTransform() {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    fftw_destroy_plan(forward_);
    fftw_destroy_plan(backward_);
  }
  RealFourierTransform(const RealFourierTransform&) = delete;
  RealFourierTransform& operator=(const RealFourierTransform&) = delete;

  // The physical values, read or written in place between the transforms.
  double* physical() { return physical_.get(); }
  // physical() <- the values of the coefficients c (n/2 + 1 of them).
  void to_physical(const Complex* c) {
    std::copy(c, c + n_ / 2 + 1, reinterpret_cast<Complex*>(spectrum_.get()));  // c2r overwrites its input
    fftw_execute(backward_);
  }
  // c <- the coefficients of physical() (which FFTW leaves alone: r2c keeps its input).
  void to_spectrum(Complex* c) {
    fftw_execute(forward_);
    const double scale = 1.0 / static_cast<double>(n_);
    const Complex* out = reinterpret_cast<const Complex*>(spectrum_.get());
    for (int64_t k = 0; k <= n_ / 2; ++k) c[k] = out[k] * scale;
  }

 private:
  struct FftwFree {
    void operator()(void* p) const { fftw_free(p); }
  };
  int64_t n_;
  std::unique_ptr<double, FftwFree> physical_;
  std::unique_ptr<fftw_complex, FftwFree> spectrum_;
  fftw_plan forward_ = nullptr, backward_ = nullptr;
};

// ---- ETDRK4 ----

// Note [ETDRK4 coefficients]
// For u_t = L u + N(u) with L diagonal (here L_k = -nu (pi k)^2), one step of h is
//   a = E2 v + Q N(v),  b = E2 v + Q N(a),  c = E2 a + Q (2 N(b) - N(v)),
//   v <- E v + f1 N(v) + 2 f2 (N(a) + N(b)) + f3 N(c),
// with E = e^{hL}, E2 = e^{hL/2}, Q = h (e^{z/2} - 1) / z and, for z = hL,
//   f1 = h (-4 - z + e^z (4 - 3z + z^2)) / z^3,  f2 = h (2 + z + e^z (z - 2)) / z^3,
//   f3 = h (-4 - 3z - z^2 + e^z (4 - z)) / z^3.
// Near z = 0 these formulas cancel catastrophically (f1 keeps no digit for |z| < 2e-5),
// so, after Kassam and Trefethen, each is there the mean of the same formula over
// points on a circle around z: by Cauchy's integral formula the value at z, and on
// the circle nothing cancels. L is real, so the lower half of the circle mirrors the
// upper: kContourPoints points on the upper half and the real part. Their circle of
// radius 1 passes close to 0 when |z| ~ 1 and loses 4e-12 there; a circle of radius
// 3 for |z| < 2, and the formula itself for |z| >= 2 (where it loses under 1e-14),
// give all four to 2e-15 relative, against long-double Taylor series of the phi
// functions (bar the zero of f1 near z = -2.69).
struct EtdCoefficients {
  std::vector<double> e, e_half, q, f1, f2, f3;
};

EtdCoefficients etd_coefficients(const std::vector<double>& linear, double h) {
  constexpr int kContourPoints = 32;
  constexpr double kContourRadius = 3, kContourBelow = 2;
  std::vector<Complex> circle(kContourPoints);
  for (int m = 0; m < kContourPoints; ++m)
    circle[static_cast<size_t>(m)] = std::polar(kContourRadius, kPi * (m + 0.5) / kContourPoints);
  const size_t count = linear.size();
  EtdCoefficients c{std::vector<double>(count), std::vector<double>(count), std::vector<double>(count),
                    std::vector<double>(count), std::vector<double>(count), std::vector<double>(count)};
  for (size_t k = 0; k < count; ++k) {
    const double lh = h * linear[k];
    c.e[k] = std::exp(lh);
    c.e_half[k] = std::exp(lh / 2);
    // The four formulas at one z, complex (on the circle) or real.
    auto formulas = [](auto z) {
      const auto ez = std::exp(z), z3 = z * z * z;
      return std::array{(std::exp(z / 2.0) - 1.0) / z, (-4.0 - z + ez * (4.0 - 3.0 * z + z * z)) / z3,
                        (2.0 + z + ez * (z - 2.0)) / z3, (-4.0 - 3.0 * z - z * z + ez * (4.0 - z)) / z3};
    };
    std::array<double, 4> values{};
    if (std::abs(lh) < kContourBelow) {
      for (const Complex& offset : circle) {
        const std::array<Complex, 4> on_circle = formulas(lh + offset);
        for (size_t i = 0; i < 4; ++i) values[i] += on_circle[i].real() / kContourPoints;
      }
    } else {
      values = formulas(lh);
    }
    c.q[k] = h * values[0];
    c.f1[k] = h * values[1];
    c.f2[k] = h * values[2];
    c.f3[k] = h * values[3];
  }
  return c;
}

// Note [Allen-Cahn initial spectrum]
// The periodic extension of x^2 cos(pi x) is continuous but kinked at x = +-1, so its
// Fourier coefficients fall off only as 1/k^2. Sampling it on the grid would fold
// (alias) the whole tail onto the kept modes, an error of O(1/modes^2) in every mode
// that the flow carries on: 8e-8 at t = 0.5 with 2048 modes, against 5e-12 from the
// exact coefficients. So the solver starts from the exact coefficients of the
// truncated series (the Nyquist mode zero),
//   c_k = (1/2) int_{-1}^{1} x^2 cos(pi x) e^{-i pi k x} dx = (I(k + 1) + I(k - 1)) / 4,
//   I(m) = int_{-1}^{1} x^2 cos(pi m x) dx = 4 (-1)^m / (pi m)^2 (m != 0), I(0) = 2/3,
// times (-1)^k for the grid's origin at x = -1. The tail it drops decays like
// exp(-nu (pi k)^2 t): below 1e-13 by t = 0.005 with 4096 modes.
std::vector<Complex> initial_spectrum(int64_t modes) {
  const int64_t half = modes / 2;
  auto cosine_moment = [](int64_t m) {
    if (m == 0) return 2.0 / 3.0;
    const double sign = m % 2 == 0 ? 1.0 : -1.0;
    return 4.0 * sign / (kPi * kPi * static_cast<double>(m) * static_cast<double>(m));
  };
  std::vector<Complex> c(static_cast<size_t>(half + 1), 0.0);
  for (int64_t k = 0; k < half; ++k) {
    const double origin_shift = k % 2 == 0 ? 1.0 : -1.0;
    c[static_cast<size_t>(k)] = origin_shift * (cosine_moment(k + 1) + cosine_moment(std::abs(k - 1))) / 4.0;
  }
  return c;
}

// Note [Allen-Cahn snapshots]
// u between snapshots is the quintic Hermite interpolant of u, u_t, u_tt at the two
// ends, whose error is (H^6 / 46080) max |u^(6)| on an interval of length H. Away
// from t = 0 the solution's time scale is 1/r: with r = 5, H = 0.01 leaves 4e-12 and
// H = 0.02 leaves 3e-10 (measured against solver steps in between). Near t = 0 the
// kink at x = +-1 smooths like sqrt(nu t), whose sixth derivative grows like
// t^{-11/2}, so the spacing grows with t: H <= t / 8 (every step until t = 8h), and at
// most kSpacingTimesReaction / max(r, 5).
constexpr double kSpacingOverTime = 1.0 / 8.0;
constexpr double kSpacingTimesReaction = 0.04;

// u(x) = sum over |k| <= n/2 of c_k exp(i pi k (x + 1)), c_{-k} = conj(c_k), the
// Nyquist mode counted once: c_0 + 2 Re sum_{0<k<n/2} c_k w^k + Re c_{n/2} w^{n/2},
// w = exp(i pi (x + 1)). The powers of w come from a recurrence, restarted from
// sin and cos every 64 terms so that rounding cannot build up.
double fourier_series(const Complex* c, int64_t half, double x) {
  const double angle = kPi * (x + 1);
  const double step_re = std::cos(angle), step_im = std::sin(angle);
  double power_re = step_re, power_im = step_im, sum = 0;
  for (int64_t k = 1; k < half; ++k) {
    if (k % 64 == 0) {
      power_re = std::cos(static_cast<double>(k) * angle);
      power_im = std::sin(static_cast<double>(k) * angle);
    }
    sum += c[k].real() * power_re - c[k].imag() * power_im;
    const double next_re = power_re * step_re - power_im * step_im;
    power_im = power_re * step_im + power_im * step_re;
    power_re = next_re;
  }
  const double nyquist_angle = static_cast<double>(half) * angle;
  return c[0].real() + 2 * sum + c[half].real() * std::cos(nyquist_angle) - c[half].imag() * std::sin(nyquist_angle);
}

bool within_time(double t, double t_end) { return t >= 0 && t <= t_end; }

}  // namespace

// ---- the solver ----

AllenCahnReference::AllenCahnReference(const AllenCahnOptions& options) : options_(options) {
  const AllenCahnOptions& o = options_;
  GD_CHECK(o.modes >= 4 && o.modes <= kMaxModes && o.modes % 2 == 0,
           fmt::format("AllenCahnReference: modes must be even and in [4, {}], got {}", kMaxModes, o.modes));
  GD_CHECK(o.steps >= 1, fmt::format("AllenCahnReference: steps must be at least 1, got {}", o.steps));
  GD_CHECK(std::isfinite(o.diffusion) && o.diffusion >= 0,
           fmt::format("AllenCahnReference: diffusion must be finite and >= 0, got {}", o.diffusion));
  GD_CHECK(std::isfinite(o.reaction), fmt::format("AllenCahnReference: reaction must be finite, got {}", o.reaction));
  GD_CHECK(std::isfinite(o.t_end) && o.t_end > 0,
           fmt::format("AllenCahnReference: t_end must be positive and finite, got {}", o.t_end));

  const int64_t n = o.modes, half = n / 2;
  const size_t count = static_cast<size_t>(half + 1);
  const double r = o.reaction, h = o.t_end / static_cast<double>(o.steps);
  std::vector<double> linear(count);
  for (size_t k = 0; k < count; ++k) {
    const double wavenumber = kPi * static_cast<double>(k);
    linear[k] = -o.diffusion * wavenumber * wavenumber;
  }
  const EtdCoefficients etd = etd_coefficients(linear, h);

  RealFourierTransform fft(n);
  double* u = fft.physical();
  std::vector<Complex> v = initial_spectrum(n);
  std::vector<Complex> nv(count), a(count), na(count), b(count), nb(count), c(count), nc(count);
  std::vector<Complex> vt(count), vtt(count);
  std::vector<double> u_kept(static_cast<size_t>(n));
  // N(s) = r (u - u^3) at the grid points, back in coefficients.
  auto nonlinear = [&](const std::vector<Complex>& s, std::vector<Complex>& out) {
    fft.to_physical(s.data());
    for (int64_t j = 0; j < n; ++j) u[j] = r * (u[j] - u[j] * u[j] * u[j]);
    fft.to_spectrum(out.data());
  };
  // Keeps v, v_t = L v + N(v) and v_tt = L v_t + N'(u) u_t; leaves N(v) in nv.
  auto keep_snapshot = [&](double t) {
    fft.to_physical(v.data());
    std::copy(u, u + n, u_kept.begin());
    for (int64_t j = 0; j < n; ++j) u[j] = r * (u[j] - u[j] * u[j] * u[j]);
    fft.to_spectrum(nv.data());
    for (size_t k = 0; k < count; ++k) vt[k] = linear[k] * v[k] + nv[k];
    fft.to_physical(vt.data());
    for (size_t j = 0; j < u_kept.size(); ++j) u[j] *= r * (1 - 3 * u_kept[j] * u_kept[j]);
    fft.to_spectrum(vtt.data());
    for (size_t k = 0; k < count; ++k) vtt[k] += linear[k] * vt[k];
    snapshot_times_.push_back(t);
    spectra_.insert(spectra_.end(), v.begin(), v.end());
    spectra_.insert(spectra_.end(), vt.begin(), vt.end());
    spectra_.insert(spectra_.end(), vtt.begin(), vtt.end());
  };

  const double max_spacing = kSpacingTimesReaction / std::max(std::abs(r), 5.0);
  keep_snapshot(0.0);
  bool nv_is_current = true;
  for (int64_t step = 1; step <= o.steps; ++step) {
    if (!nv_is_current) nonlinear(v, nv);
    for (size_t k = 0; k < count; ++k) a[k] = etd.e_half[k] * v[k] + etd.q[k] * nv[k];
    nonlinear(a, na);
    for (size_t k = 0; k < count; ++k) b[k] = etd.e_half[k] * v[k] + etd.q[k] * na[k];
    nonlinear(b, nb);
    for (size_t k = 0; k < count; ++k) c[k] = etd.e_half[k] * a[k] + etd.q[k] * (2.0 * nb[k] - nv[k]);
    nonlinear(c, nc);
    for (size_t k = 0; k < count; ++k)
      v[k] = etd.e[k] * v[k] + etd.f1[k] * nv[k] + 2.0 * etd.f2[k] * (na[k] + nb[k]) + etd.f3[k] * nc[k];
    nv_is_current = false;
    const double t = step == o.steps ? o.t_end : static_cast<double>(step) * h;
    const double last = snapshot_times_.back();
    if (step == o.steps || t - last >= std::min(kSpacingOverTime * last, max_spacing) - h / 2) {
      keep_snapshot(t);
      nv_is_current = true;
    }
  }
}

// ---- reading it off ----

double AllenCahnReference::initial_condition(double x) { return x * x * std::cos(kPi * x); }

void AllenCahnReference::evaluate(double t, const double* x, int64_t x_stride, int64_t count, double* out,
                                  int64_t out_stride) const {
  if (t == 0) {
    for (int64_t i = 0; i < count; ++i) out[i * out_stride] = initial_condition(x[i * x_stride]);
    return;
  }
  const int64_t n = options_.modes, half = n / 2, size = half + 1;
  // The snapshots [left, left + 1] around t, and u's coefficients at t.
  const auto upper = std::upper_bound(snapshot_times_.begin(), snapshot_times_.end(), t);
  const int64_t right = std::clamp<int64_t>(upper - snapshot_times_.begin(), 1,
                                            static_cast<int64_t>(snapshot_times_.size()) - 1);
  const int64_t left = right - 1;
  const double start = snapshot_times_[static_cast<size_t>(left)], end = snapshot_times_[static_cast<size_t>(right)];
  const double spacing = end - start, s = (t - start) / spacing;
  const double s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s;
  // Quintic Hermite basis: value, first and second derivative at each end.
  const double weights[6] = {
      1 - 10 * s3 + 15 * s4 - 6 * s5,
      spacing * (s - 6 * s3 + 8 * s4 - 3 * s5),
      spacing * spacing * (0.5 * s2 - 1.5 * s3 + 1.5 * s4 - 0.5 * s5),
      10 * s3 - 15 * s4 + 6 * s5,
      spacing * (-4 * s3 + 7 * s4 - 3 * s5),
      spacing * spacing * (0.5 * s3 - s4 + 0.5 * s5),
  };
  const Complex* left_fields = spectra_.data() + 3 * left * size;
  const Complex* right_fields = spectra_.data() + 3 * right * size;
  std::vector<Complex> c(static_cast<size_t>(size));
  for (int64_t k = 0; k < size; ++k)
    c[static_cast<size_t>(k)] = weights[0] * left_fields[k] + weights[1] * left_fields[size + k] +
                                weights[2] * left_fields[2 * size + k] + weights[3] * right_fields[k] +
                                weights[4] * right_fields[size + k] + weights[5] * right_fields[2 * size + k];

  // A point on a grid node reads the inverse transform (made once, when first needed).
  std::vector<double> on_nodes;
  for (int64_t i = 0; i < count; ++i) {
    const double xi = x[i * x_stride];
    const double wrapped = xi - 2 * std::floor((xi + 1) / 2);  // in [-1, 1)
    const double node = (wrapped + 1) * static_cast<double>(half);
    if (node == std::floor(node)) {
      if (on_nodes.empty()) {
        RealFourierTransform fft(n);
        fft.to_physical(c.data());
        on_nodes.assign(fft.physical(), fft.physical() + n);
      }
      out[i * out_stride] = on_nodes[static_cast<size_t>(static_cast<int64_t>(node) % n)];
    } else {
      out[i * out_stride] = fourier_series(c.data(), half, wrapped);
    }
  }
}

double AllenCahnReference::operator()(double t, double x) const {
  GD_CHECK(within_time(t, options_.t_end) && std::isfinite(x),
           fmt::format("AllenCahnReference: needs t in [0, {}] and a finite x, got t = {}, x = {}", options_.t_end, t,
                       x));
  double u = 0;
  evaluate(t, &x, 1, 1, &u, 1);
  return u;
}

Tensor AllenCahnReference::on_grid(const std::vector<double>& t, const std::vector<double>& x) const {
  for (double ti : t)
    GD_CHECK(within_time(ti, options_.t_end),
             fmt::format("AllenCahnReference: grid times must be in [0, {}], got {}", options_.t_end, ti));
  for (double xj : x) GD_CHECK(std::isfinite(xj), fmt::format("AllenCahnReference: grid x must be finite, got {}", xj));
  const auto nt = static_cast<int64_t>(t.size()), nx = static_cast<int64_t>(x.size());
  Tensor u = empty({nt, nx}, TensorOptions().dtype(kFloat64));
  double* out = u.cpu_data_ptr<double>();
  for (int64_t i = 0; i < nt; ++i) evaluate(t[static_cast<size_t>(i)], x.data(), 1, nx, out + i * nx, 1);
  return u;
}

Tensor AllenCahnReference::on_points(const Tensor& points) const {
  const Tensor xt = reference_points(points, "AllenCahnReference");
  const int64_t count = xt.size(0);
  const double* data = xt.cpu_data_ptr<double>();
  for (int64_t i = 0; i < count; ++i) {
    const double x = data[2 * i], t = data[2 * i + 1];
    GD_CHECK(within_time(t, options_.t_end) && std::isfinite(x),
             fmt::format("AllenCahnReference: point {} (x = {}, t = {}) needs t in [0, {}] and a finite x", i, x, t,
                         options_.t_end));
  }
  Tensor u = empty({count, 1}, TensorOptions().dtype(kFloat64));
  double* out = u.cpu_data_ptr<double>();
  // Points sharing a time share its coefficients: visit them grouped by t.
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return data[2 * i + 1] < data[2 * j + 1]; });
  std::vector<double> xs, us;
  for (size_t first = 0; first < order.size();) {
    const double t = data[2 * order[first] + 1];
    size_t last = first;
    xs.clear();
    while (last < order.size() && data[2 * order[last] + 1] == t) xs.push_back(data[2 * order[last++]]);
    us.resize(xs.size());
    evaluate(t, xs.data(), 1, static_cast<int64_t>(xs.size()), us.data(), 1);
    for (size_t i = first; i < last; ++i) out[order[i]] = us[i - first];
    first = last;
  }
  return u;
}

std::vector<double> allen_cahn_reference_x() {
  std::vector<double> x(512);
  for (size_t j = 0; j < x.size(); ++j) x[j] = -1.0 + static_cast<double>(j) * (2.0 / 512.0);
  return x;
}

std::vector<double> allen_cahn_reference_t() {
  std::vector<double> t(201);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i) / 200.0;
  return t;
}

}  // namespace gradiens::pinn
