// The op sweep's rows for layer_norm, batch_norm, embedding and dropout
// (tests/engine/test_nn_ops.cpp).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/nn_ops.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/row_builders.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::InputSpec;
using gd::testing::OpInfo;
using gd::testing::with_seed;
using namespace gd::testing::rows;

namespace {

OpInfo row(std::string name, std::vector<InputSpec> inputs, std::function<Tensor(const V&)> f,
           unsigned variants = kWithDims) {
  return {std::move(name), [f](const V& x) { return V{f(x)}; }, std::move(inputs), variants, {}};
}

// Fresh running statistics for each call, so the training rows run the update
// too; on the input's device, as the indices of Note [Sweep indices on the input's device].
Tensor batch_norm_training(const V& x, int64_t channels) {
  const gd::TensorOptions options = gd::TensorOptions().dtype(gd::kFloat64).device(x[0].device());
  Tensor rm = gd::zeros({channels}, options), rv = gd::ones({channels}, options);
  return gd::batch_norm(x[0], rm, rv, x.size() > 1 ? x[1] : Tensor(), x.size() > 2 ? x[2] : Tensor(), true);
}

const gd::testing::OpRegistrar nn_ops_rows({
    row("layer_norm (weight, bias)", {{{2, 3}}, {{3}, 0.5, 1.5}, {{3}}},
        [](const V& x) { return gd::layer_norm(x[0], {3}, x[1], x[2]); }),
    row("layer_norm (two dims, no affine)", {{{2, 2, 3}}}, [](const V& x) { return gd::layer_norm(x[0], {2, 3}); }),
    row("batch_norm training (N, C), affine", {{{4, 3}}, {{3}, 0.5, 1.5}, {{3}}},
        [](const V& x) { return batch_norm_training(x, 3); }),
    row("batch_norm training (N, C, L)", {{{2, 3, 2}}}, [](const V& x) { return batch_norm_training(x, 3); }),
    row("batch_norm eval (N, C, L), running stats and affine",
        {{{2, 3, 2}}, {{3}}, {{3}, 0.5, 2.0}, {{3}, 0.5, 1.5}, {{3}}},
        [](const V& x) { return gd::batch_norm(x[0], x[1], x[2], x[3], x[4], false); }),
    row("embedding", {{{4, 3}}},
        [](const V& x) { return gd::embedding(x[0], indices_for(x[0], {2, 0, 2, 3, 1, 2}, {2, 3})); }),
    // padding_idx is left out: it withholds a true derivative on purpose, so
    // finite differences disagree by design (its test is in test_nn_ops.cpp).
    row("embedding (int32 indices, 3-D)", {{{4, 3}}},
        [](const V& x) { return gd::embedding(x[0], indices_for(x[0], {3, 0, 2, 2}, {2, 1, 2}, gd::kInt32)); }),
    row("dropout (reseeded each call)", {{{3, 4}}},
        [](const V& x) { return with_seed(21, [&] { return gd::dropout(x[0], 0.4); }); },
        gd::testing::kAllVariants),
});

}  // namespace
