// The op sweep's rows for the order, cumulative and shape-repeating ops
// (tests/engine/test_ordering.cpp): repeat, tile, repeat_interleave, flip, roll,
// sort, topk, kthvalue, median, quantile, cumsum, cumprod, tril and triu.
#include <tuple>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/row_builders.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::InputSpec;
using namespace gd::testing::rows;

namespace {

constexpr unsigned kAll = gd::testing::kAllVariants;

const gd::testing::OpRegistrar ordering_rows({
    unary_row("repeat (more repeats than dims)", {2, 3}, [](const Tensor& x) { return x.repeat({2, 1, 2}); }, kAll),
    unary_row("repeat", {2, 3}, [](const Tensor& x) { return x.repeat({1, 2}); }, kWithDims),
    unary_row("tile", {2, 3}, [](const Tensor& x) { return x.tile({2}); }, kAll),
    unary_row("repeat_interleave (flattened)", {2, 3}, [](const Tensor& x) { return x.repeat_interleave(2); }, kAll),
    unary_row("repeat_interleave dim", {2, 3}, [](const Tensor& x) { return x.repeat_interleave(3, -1); }, kWithDims),
    unary_row("repeat_interleave (tensor repeats)", {3, 2},
              [](const Tensor& x) { return x.repeat_interleave(indices_for(x, {2, 0, 1}, {3}), 0); }, kWithDims),
    unary_row("flip", {2, 3}, [](const Tensor& x) { return x.flip({0, 1}); }, kWithDims),
    unary_row("flip last", {2, 3}, [](const Tensor& x) { return x.flip({-1}); }, kAll),
    unary_row("roll (flattened)", {2, 3}, [](const Tensor& x) { return x.roll({2}); }, kAll),
    unary_row("roll dims", {2, 3}, [](const Tensor& x) { return x.roll({-1, 1}, {1, 0}); }, kWithDims),
    unary_row("sort", {2, 3}, [](const Tensor& x) { return std::get<0>(x.sort()); }, kAll),
    unary_row("sort descending dim 0", {3, 2}, [](const Tensor& x) { return std::get<0>(x.sort(0, true)); },
              kWithDims),
    {"sort (values, indices)", [](const V& x) {
       auto [values, indices] = x[0].sort(1);
       return V{values, indices};
     },
     {InputSpec{{2, 3}, -1.0, 1.0}}, kWithDims, {}},
    unary_row("topk", {2, 3}, [](const Tensor& x) { return std::get<0>(x.topk(2)); }, kWithDims),
    unary_row("topk smallest dim 0", {3, 2}, [](const Tensor& x) { return std::get<0>(x.topk(2, 0, false)); },
              kWithDims),
    unary_row("topk 0-dim", {2, 3}, [](const Tensor& x) { return std::get<0>(x.topk(1)); }, kAll),
    unary_row("kthvalue", {2, 3}, [](const Tensor& x) { return std::get<0>(x.kthvalue(2, 1)); }, kWithDims),
    unary_row("kthvalue keepdim dim 0", {3, 2}, [](const Tensor& x) { return std::get<0>(x.kthvalue(3, 0, true)); },
              kWithDims),
    unary_row("median", {2, 3}, [](const Tensor& x) { return x.median(); }, kAll),
    unary_row("median dim", {2, 3}, [](const Tensor& x) { return std::get<0>(x.median(1)); }, kWithDims),
    unary_row("median dim 0 keepdim", {3, 2}, [](const Tensor& x) { return std::get<0>(x.median(0, true)); },
              kWithDims),
    unary_row("quantile", {2, 3}, [](const Tensor& x) { return x.quantile(0.3); }, kAll),
    unary_row("quantile dim, q vector", {2, 3},
              [](const Tensor& x) { return x.quantile(tensor_for(x, {0.2, 0.5, 0.9}, {3}), 1, true); }, kWithDims),
    unary_row("quantile lower", {2, 3}, [](const Tensor& x) { return x.quantile(0.7, 0, false, "lower"); }, kWithDims),
    unary_row("quantile higher", {2, 3}, [](const Tensor& x) { return x.quantile(0.7, -1, false, "higher"); },
              kWithDims),
    unary_row("quantile midpoint", {2, 3},
              [](const Tensor& x) { return x.quantile(0.7, std::nullopt, false, "midpoint"); }, kAll),
    unary_row("quantile nearest", {2, 3}, [](const Tensor& x) { return x.quantile(0.5, 1, false, "nearest"); },
              kWithDims),
    unary_row("cumsum", {2, 3}, [](const Tensor& x) { return x.cumsum(-1); }, kAll),
    unary_row("cumsum dim 0", {2, 3}, [](const Tensor& x) { return x.cumsum(0); }, kWithDims),
    unary_row("cumprod", {2, 3}, [](const Tensor& x) { return x.cumprod(-1); }, kAll),
    unary_row("cumprod dim 0", {3, 2}, [](const Tensor& x) { return x.cumprod(0); }, kWithDims),
    unary_row("tril", {2, 3}, [](const Tensor& x) { return x.tril(); }, kWithDims),
    unary_row("tril (batched, offset)", {2, 3, 3}, [](const Tensor& x) { return x.tril(-1); }, kWithDims),
    unary_row("triu", {2, 3}, [](const Tensor& x) { return x.triu(1); }, kWithDims),
    unary_row("triu (batched, offset)", {2, 2, 3}, [](const Tensor& x) { return x.triu(-1); }, kWithDims),
});

}  // namespace
