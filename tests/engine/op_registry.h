// The table of differentiable ops that test_op_sweep.cpp runs gradcheck and
// gradgradcheck over, and the small tensor helpers the engine tests share.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"

namespace gradiens::testing {

// ---- helpers ----

// A float64 (or `dtype`) tensor holding `values`, shaped `sizes` (1-D when empty).
Tensor tensor_of(const std::vector<double>& values, const std::vector<int64_t>& sizes = {},
                 ScalarType dtype = kFloat64);
// The elements of `t` in row-major order, converted to double.
std::vector<double> values_of(const Tensor& t);
// Deterministic values spread over [lo, hi] (a fixed hash of seed and index).
Tensor sample(IntArrayRef sizes, double lo, double hi, uint64_t seed, ScalarType dtype = kFloat64);
// "" when each got[i] is within atol + rtol * |want[i]| of want[i] (NaN matches
// NaN, an infinity matches the same infinity), else a description of the
// first mismatch, so that CHECK(value_mismatch(...) == "") prints what went wrong.
std::string value_mismatch(const std::vector<double>& got, const std::vector<double>& want, double rtol = 1e-13,
                     double atol = 1e-14);
std::string value_mismatch(const Tensor& got, const Tensor& want, double rtol = 1e-13, double atol = 1e-14);
// value_mismatch, after checking that t has `shape` ("" when both match).
std::string shape_value_mismatch(const Tensor& t, const std::vector<double>& values, const std::vector<int64_t>& shape,
                                 double rtol = 1e-13, double atol = 1e-14);
// A 0-dim float64 tensor.
Tensor scalar_of(double value);
// Runs f with the default generator reseeded to `seed`, then puts the
// generator back, so a function that draws can be called again with the same
// draws (as gradcheck does) without disturbing anyone else's stream.
Tensor with_seed(uint64_t seed, const std::function<Tensor()>& f);
// Runs f and returns the message of the gradiens::Error it throws ("" if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---- the op table ----

// The input layouts every op is checked on. Transposed inputs are
// non-contiguous leaves; broadcast inputs are smaller leaves that the op sees
// expanded (so the engine must sum their gradient back); 0-dim inputs are scalars.
enum Variant : unsigned { kContiguous = 1, kTransposed = 2, kBroadcast = 4, kZeroDim = 8, kAllVariants = 15 };
const char* variant_name(Variant v);

struct InputSpec {
  std::vector<int64_t> shape;  // in the contiguous variant
  double lo = -1.0, hi = 1.0;  // keeps the op in its domain and away from kinks
};

struct OpInfo {
  std::string name;
  autograd::TensorFunction fn;
  std::vector<InputSpec> inputs;
  unsigned variants = kAllVariants;
  autograd::GradcheckOptions options = {};
};

// A row for an in-place op applied to a non-leaf copy of the first input
// (f(y, inputs) with y = inputs[0].clone()): exercises the history rebase of
// Note [In-place ops and autograd].
OpInfo inplace_row(std::string name, std::function<void(Tensor&, const std::vector<Tensor>&)> f,
                   std::vector<InputSpec> inputs, unsigned variants = kAllVariants);

// Every differentiable op of the engine, one row each: the table in
// op_registry.cpp plus the rows of tests/engine/op_rows/.
const std::vector<OpInfo>& differentiable_ops();

// Adds rows to the sweep from a rows file (tests/engine/op_rows/), at static initialization:
//   static OpRegistrar products_rows({{"outer", ...}, ...});
struct OpRegistrar {
  explicit OpRegistrar(std::vector<OpInfo> rows);
};

// The leaves and the function for one op in one variant, or nothing when the
// variant does not change the op's inputs (e.g. transposing 1-D inputs).
struct VariantCase {
  std::vector<Tensor> inputs;
  autograd::TensorFunction fn;
};
std::optional<VariantCase> make_variant(const OpInfo& op, Variant variant);

// The op's inputs with their leading dimension made 0 wherever it equals the
// first input's (so shapes that matched still match), or nothing when the
// first input has no dimension to empty.
std::optional<std::vector<Tensor>> emptied_inputs(const OpInfo& op);

// fn's outputs, and the gradients of every output that requires grad (seeded
// with ones) with respect to every input that requires grad (undefined where
// unused); no gradients when nothing requires grad.
struct Run {
  std::vector<Tensor> outputs, grads;
};
Run run_with_gradients(const autograd::TensorFunction& fn, const std::vector<Tensor>& inputs);

}  // namespace gradiens::testing
