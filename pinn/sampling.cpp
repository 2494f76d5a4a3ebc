// The unit-cube samplers: grid, pseudo-random, LHS, Halton, Hammersley, Sobol.
#include "pinn/sampling.h"

#include <cmath>

#include <boost/random/sobol.hpp>
#include <fmt/format.h>

#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/enum_names.h"

namespace gradiens::pinn {

namespace {

// The first primes, one Halton base per dimension.
const std::vector<uint64_t>& primes() {
  static const std::vector<uint64_t> list = [] {
    std::vector<uint64_t> p;
    for (uint64_t candidate = 2; p.size() < 1000; ++candidate) {
      bool prime = true;
      for (uint64_t q : p) {
        if (q * q > candidate) break;
        if (candidate % q == 0) {
          prime = false;
          break;
        }
      }
      if (prime) p.push_back(candidate);
    }
    return p;
  }();
  return list;
}

Tensor grid(int64_t n, int64_t d) {
  const auto k = static_cast<int64_t>(std::ceil(std::pow(static_cast<double>(n), 1.0 / static_cast<double>(d)) - 1e-9));
  int64_t total = 1;
  for (int64_t i = 0; i < d; ++i) total *= k;
  Tensor points = empty({total, d}, kFloat64);
  double* out = points.cpu_data_ptr<double>();
  for (int64_t row = 0; row < total; ++row) {
    int64_t rest = row;
    for (int64_t j = d - 1; j >= 0; --j) {
      out[row * d + j] = (static_cast<double>(rest % k) + 0.5) / static_cast<double>(k);
      rest /= k;
    }
  }
  return points;
}

// Latin hypercube: in each dimension, one point in each of the n strata, in
// a random order, at a random place within its stratum.
Tensor latin_hypercube(int64_t n, int64_t d, Generator& generator) {
  Tensor jitter = rand({n, d}, generator, TensorOptions().dtype(kFloat64));
  Tensor points = empty({n, d}, kFloat64);
  double* out = points.cpu_data_ptr<double>();
  const double* u = jitter.cpu_data_ptr<double>();
  for (int64_t j = 0; j < d; ++j) {
    Tensor order = randperm(n, generator);
    const int64_t* stratum = order.cpu_data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      out[i * d + j] = (static_cast<double>(stratum[i]) + u[i * d + j]) / static_cast<double>(n);
  }
  return points;
}

Tensor halton(int64_t n, int64_t d, bool hammersley) {
  Tensor points = empty({n, d}, kFloat64);
  double* out = points.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    const auto index = static_cast<uint64_t>(i + 1);  // index 0 is the origin
    for (int64_t j = 0; j < d; ++j) {
      if (hammersley && j == 0) out[i * d] = static_cast<double>(i + 1) / static_cast<double>(n + 1);
      else out[i * d + j] = radical_inverse(index, primes()[static_cast<size_t>(hammersley ? j - 1 : j)]);
    }
  }
  return points;
}

Tensor sobol(int64_t n, int64_t d) {
  // Boost's engine skips the origin; its integers are 64-bit fractions.
  boost::random::sobol engine(static_cast<std::size_t>(d));
  Tensor points = empty({n, d}, kFloat64);
  double* out = points.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n * d; ++i) out[i] = std::ldexp(static_cast<double>(engine()), -64);
  return points;
}

}  // namespace

double radical_inverse(uint64_t index, uint64_t base) {
  double result = 0, scale = 1.0 / static_cast<double>(base);
  for (; index > 0; index /= base, scale /= static_cast<double>(base)) result += static_cast<double>(index % base) * scale;
  return result;
}

const std::vector<std::string>& sampler_names() {
  static const std::vector<std::string> names = {"uniform", "pseudo", "LHS", "Halton", "Hammersley", "Sobol"};
  return names;
}

Sampler parse_sampler(std::string_view name) { return parse_enum_name<Sampler>(name, sampler_names(), "sampler"); }

std::string_view sampler_name(Sampler sampler) { return enum_name(sampler, sampler_names()); }

Tensor sample_unit_cube(int64_t n, int64_t d, Sampler sampler, Generator& generator) {
  GD_CHECK(n >= 1, fmt::format("sampling: the number of points must be at least 1, got {}", n));
  GD_CHECK(d >= 1 && d <= 1000, fmt::format("sampling: the dimension must be 1 to 1000, got {}", d));
  switch (sampler) {
    case Sampler::kUniform: return grid(n, d);
    case Sampler::kPseudo: return rand({n, d}, generator, TensorOptions().dtype(kFloat64));
    case Sampler::kLHS: return latin_hypercube(n, d, generator);
    case Sampler::kHalton: return halton(n, d, false);
    case Sampler::kHammersley: return halton(n, d, true);
    case Sampler::kSobol:
      GD_CHECK(d <= 3667, "sampling: Sobol supports at most 3667 dimensions");
      return sobol(n, d);
  }
  return Tensor();
}

}  // namespace gradiens::pinn
