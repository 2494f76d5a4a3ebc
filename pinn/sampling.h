// Point sets in the unit cube [0, 1)^d for collocation: a uniform grid,
// pseudo-random, Latin hypercube, and the low-discrepancy Halton, Hammersley
// and Sobol sequences (Boost.Random's sobol engine). Geometries map them
// into their domains.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/generator.h"
#include "engine/tensor.h"

namespace gradiens::pinn {

enum class Sampler { kUniform, kPseudo, kLHS, kHalton, kHammersley, kSobol };

// "uniform", "pseudo", "LHS", "Halton", "Hammersley", "Sobol" (DeepXDE's
// names); anything else is an Error listing them.
Sampler parse_sampler(std::string_view name);
std::string_view sampler_name(Sampler sampler);
const std::vector<std::string>& sampler_names();

// n points of [0, 1)^d as float64 [n, d]. The pseudo-random and LHS draws
// come from `generator`; the sequences are deterministic and skip their
// first point (the origin, or a degenerate corner). kUniform is the grid of
// cell centres with k = ceil(n^(1/d)) points per axis, so it has k^d >= n
// points; the others have exactly n.
Tensor sample_unit_cube(int64_t n, int64_t d, Sampler sampler, Generator& generator);

// The radical inverse of `index` in `base`: the digits of index mirrored
// about the point (Halton's coordinate).
double radical_inverse(uint64_t index, uint64_t base);

}  // namespace gradiens::pinn
