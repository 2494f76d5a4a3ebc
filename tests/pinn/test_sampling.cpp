// The unit-cube samplers: counts and ranges, the sequences' first values
// against their closed forms, and low discrepancy (cell counts and moments).
#include <doctest/doctest.h>

#include <cmath>

#include "engine/functions.h"
#include "pinn/sampling.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;

TEST_CASE("sampling: counts, shapes and ranges of every sampler") {
  gd::Generator generator(3);
  for (const std::string& name : gp::sampler_names()) {
    CAPTURE(name);
    const gp::Sampler sampler = gp::parse_sampler(name);
    CHECK(gp::sampler_name(sampler) == name);
    gd::Tensor points = gp::sample_unit_cube(100, 3, sampler, generator);
    CHECK(points.dim() == 2);
    CHECK(points.size(1) == 3);
    CHECK(points.size(0) == (sampler == gp::Sampler::kUniform ? 125 : 100));  // the grid: ceil(100^(1/3))^3
    CHECK(points.min().item<double>() >= 0.0);
    CHECK(points.max().item<double>() < 1.0);
  }
  CHECK_THROWS_WITH(gp::parse_sampler("sobol"),
                    "unknown sampler \"sobol\" (one of uniform, pseudo, LHS, Halton, Hammersley, Sobol)");
  CHECK_THROWS_WITH(gp::sample_unit_cube(0, 2, gp::Sampler::kSobol, generator),
                    "sampling: the number of points must be at least 1, got 0");
}

TEST_CASE("sampling: the sequences' first points are their closed forms") {
  // Radical inverses: base 2 of 1, 2, 3 = 0.5, 0.25, 0.75; base 3 of 1, 2, 3 = 1/3, 2/3, 1/9.
  CHECK(gp::radical_inverse(1, 2) == 0.5);
  CHECK(gp::radical_inverse(2, 2) == 0.25);
  CHECK(gp::radical_inverse(3, 2) == 0.75);
  CHECK(gp::radical_inverse(3, 3) == doctest::Approx(1.0 / 9).epsilon(1e-15));
  gd::Generator generator(0);
  gd::Tensor halton = gp::sample_unit_cube(3, 2, gp::Sampler::kHalton, generator);
  CHECK(halton[0][0].item<double>() == 0.5);
  CHECK(halton[1][0].item<double>() == 0.25);
  CHECK(halton[1][1].item<double>() == doctest::Approx(2.0 / 3).epsilon(1e-15));
  // Hammersley: (i / (n + 1), radical_inverse_2(i)) for i = 1..n.
  gd::Tensor hammersley = gp::sample_unit_cube(3, 2, gp::Sampler::kHammersley, generator);
  CHECK(hammersley[0][0].item<double>() == 0.25);
  CHECK(hammersley[2][0].item<double>() == 0.75);
  CHECK(hammersley[2][1].item<double>() == 0.75);
  // Sobol (Boost, Joe-Kuo directions) after the skipped origin: (0.5, 0.5), (0.75, 0.25), (0.25, 0.75).
  gd::Tensor sobol = gp::sample_unit_cube(3, 2, gp::Sampler::kSobol, generator);
  CHECK(sobol[0][0].item<double>() == 0.5);
  CHECK(sobol[0][1].item<double>() == 0.5);
  CHECK(sobol[1][0].item<double>() == 0.75);
  CHECK(sobol[1][1].item<double>() == 0.25);
  CHECK(sobol[2][0].item<double>() == 0.25);
  CHECK(sobol[2][1].item<double>() == 0.75);
  // The uniform grid: cell centres.
  gd::Tensor grid = gp::sample_unit_cube(4, 2, gp::Sampler::kUniform, generator);
  const double expected[4][2] = {{0.25, 0.25}, {0.25, 0.75}, {0.75, 0.25}, {0.75, 0.75}};
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j) CHECK(grid[i][j].item<double>() == expected[i][j]);
}

TEST_CASE("sampling: LHS has one point in each stratum of every axis") {
  gd::Generator generator(8);
  const int64_t n = 50;
  gd::Tensor points = gp::sample_unit_cube(n, 4, gp::Sampler::kLHS, generator);
  for (int64_t j = 0; j < 4; ++j) {
    gd::Tensor strata = (points.select(1, j) * static_cast<double>(n)).to(gd::kInt64);
    CHECK(gd::equal(std::get<0>(strata.sort()), gd::arange(n)));
  }
}

TEST_CASE("sampling: low-discrepancy sequences fill the square evenly") {
  // The largest deviation of the count in an 8x8 grid of cells from n/64,
  // against pseudo-random points: the sequences stay within a few points, a
  // pseudo-random set of 4096 points deviates by about sqrt(64) * 3 = 24.
  gd::Generator generator(1);
  auto worst_cell = [](const gd::Tensor& points) {
    gd::Tensor cells = (points * 8.0).to(gd::kInt64);
    gd::Tensor index = cells.select(1, 0) * 8 + cells.select(1, 1);
    gd::Tensor counts = gd::zeros({64}, gd::kInt64).scatter_add(0, index, gd::ones_like(index));
    return (counts.to(gd::kFloat64) - 64.0).abs().max().item<double>();
  };
  CHECK(worst_cell(gp::sample_unit_cube(4096, 2, gp::Sampler::kSobol, generator)) <= 1.0);
  CHECK(worst_cell(gp::sample_unit_cube(4096, 2, gp::Sampler::kHalton, generator)) <= 3.0);
  CHECK(worst_cell(gp::sample_unit_cube(4096, 2, gp::Sampler::kHammersley, generator)) <= 3.0);
  CHECK(worst_cell(gp::sample_unit_cube(4096, 2, gp::Sampler::kPseudo, generator)) > 5.0);
  // The mean of each coordinate of 4096 Sobol points in 5 dimensions is 1/2 to 1e-3.
  gd::Tensor sobol = gp::sample_unit_cube(4096, 5, gp::Sampler::kSobol, generator);
  CHECK((sobol.mean({0}) - 0.5).abs().max().item<double>() < 1e-3);
}
