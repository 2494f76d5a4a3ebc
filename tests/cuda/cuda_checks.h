// The checks the CUDA tests share: a GPU result against the CPU's, element by
// element or bit for bit.
#pragma once

#include <string>

#include "gradiens.h"

namespace gradiens::testing {

// Same dtype and shape, every element within atol + rtol * |cpu| (equal values,
// infinities included, always pass), NaN in the same places; a failure names
// the element that misses by the most.
void check_matches(const Tensor& cpu, const Tensor& gpu, const std::string& what, double rtol, double atol);

// GPU against CPU normwise, what a backward-stable factorization promises
// (element-wise agreement is not): gpu on cuda:0, same dtype and shape, and
// max |gpu - cpu| <= tol * max(1, max |cpu|) (a NaN on either side fails).
void check_close_normwise(const Tensor& cpu, const Tensor& gpu, const std::string& what, double tol);

// Same dtype, shape and bytes: the deterministic paths and pure data movement.
void check_same_bits(const Tensor& cpu, const Tensor& gpu, const std::string& what);

// max |t| (0 for an empty tensor), as a scale for atol.
double largest_magnitude(const Tensor& t);

}  // namespace gradiens::testing
