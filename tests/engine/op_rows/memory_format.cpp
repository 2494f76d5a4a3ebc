// The op sweep's rows for the channels_last paths (tests/engine/test_memory_format.cpp):
// conv2d, the pools, batch_norm and clone on NHWC inputs.
#include <vector>

#include "engine/convolution.h"
#include "engine/memory_format.h"
#include "engine/nn_ops.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::kContiguous;
using gd::testing::kTransposed;
using V = std::vector<Tensor>;

namespace {

Tensor cl(const Tensor& t) { return t.contiguous(gd::channels_last); }

// The NHWC paths in the gradcheck/gradgradcheck sweep: each function moves its
// input to channels_last first (a differentiable copy). The names avoid "conv2d"
// and "pool2d", which test_convolution.cpp counts as its own rows.
const gd::testing::OpRegistrar memory_format_rows({
    {"channels_last conv", [](const V& x) { return V{gd::conv2d(cl(x[0]), x[1], x[2], 1, 1)}; },
     {{{1, 2, 4, 4}}, {{3, 2, 2, 2}}, {{3}}}, kContiguous | kTransposed, {}},
    {"channels_last max pool", [](const V& x) { return V{gd::max_pool2d(cl(x[0]), 2, 1, 1)}; }, {{{1, 2, 4, 4}}},
     kContiguous | kTransposed, {}},
    {"channels_last avg pool", [](const V& x) { return V{gd::avg_pool2d(cl(x[0]), 3, 2, 1)}; }, {{{1, 2, 5, 5}}},
     kContiguous | kTransposed, {}},
    {"channels_last adaptive avg pool", [](const V& x) { return V{gd::adaptive_avg_pool2d(cl(x[0]), {2, 3})}; },
     {{{2, 2, 5, 4}}}, kContiguous | kTransposed, {}},
    {"channels_last batch_norm", [](const V& x) { return V{gd::batch_norm(cl(x[0]), {}, {}, x[1], x[2], true)}; },
     {{{2, 3, 2, 2}}, {{3}, 0.5, 1.5}, {{3}}}, kContiguous | kTransposed, {}},
    {"clone (channels_last)", [](const V& x) { return V{x[0].clone(gd::channels_last)}; }, {{{2, 3, 2, 2}}},
     kContiguous | kTransposed | gd::testing::kBroadcast, {}},
});

}  // namespace
