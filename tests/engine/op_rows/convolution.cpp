// The op sweep's rows for conv2d and the 2-D pools (tests/engine/test_convolution.cpp):
// strides, padding, dilation, groups, ceil mode, unbatched inputs.
#include <vector>

#include "engine/convolution.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::kBroadcast;
using gd::testing::kContiguous;
using gd::testing::kTransposed;
using V = std::vector<Tensor>;

namespace {

constexpr unsigned kConvVariants = kContiguous | kTransposed | kBroadcast;

const gd::testing::OpRegistrar convolution_rows({
    {"conv2d", [](const V& x) { return V{gd::conv2d(x[0], x[1], x[2])}; },
     {{{2, 2, 5, 5}}, {{3, 2, 3, 3}}, {{3}}}, kConvVariants, {}},
    {"conv2d (stride, padding, dilation)",
     [](const V& x) { return V{gd::conv2d(x[0], x[1], {}, {2, 1}, {1, 2}, {1, 2})}; },
     {{{1, 2, 5, 5}}, {{2, 2, 2, 3}}}, kConvVariants, {}},
    {"conv2d (groups, unbatched)", [](const V& x) { return V{gd::conv2d(x[0], x[1], x[2], 1, 1, 1, 2)}; },
     {{{4, 4, 4}}, {{4, 2, 2, 2}}, {{4}}}, kContiguous | kTransposed, {}},
    {"max_pool2d", [](const V& x) { return V{gd::max_pool2d(x[0], 2, 1, 1)}; }, {{{1, 2, 4, 4}}}, kConvVariants, {}},
    {"max_pool2d (ceil, dilation)", [](const V& x) { return V{gd::max_pool2d(x[0], 2, 2, 0, 2, true)}; },
     {{{2, 5, 5}}}, kConvVariants, {}},
    {"avg_pool2d", [](const V& x) { return V{gd::avg_pool2d(x[0], 3, 2, 1)}; }, {{{1, 2, 5, 5}}}, kConvVariants, {}},
    {"avg_pool2d (ceil, exclude pad)", [](const V& x) { return V{gd::avg_pool2d(x[0], 2, 2, 1, true, false)}; },
     {{{2, 5, 4}}}, kConvVariants, {}},
    {"adaptive_avg_pool2d", [](const V& x) { return V{gd::adaptive_avg_pool2d(x[0], {2, 3})}; }, {{{2, 5, 7}}},
     kConvVariants, {}},
});

}  // namespace
