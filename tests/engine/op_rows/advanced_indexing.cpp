// The op sweep's rows for advanced indexing (tests/engine/test_advanced_indexing.cpp):
// index() with tensors and masks, index_put_, masked_select/masked_fill_, scatter,
// index_select and index_add, each with its integer indices fixed in the function.
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/row_builders.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::indexing::Ellipsis;
using gd::indexing::None;
using gd::indexing::Slice;
using gd::testing::inplace_row;
using gd::testing::kZeroDim;
using namespace gd::testing::rows;

namespace {

// A 0-dim int64 index on x's device (Note [Sweep indices on the input's device]).
Tensor scalar_index_for(const Tensor& x, int64_t v) { return gd::scalar_tensor(v, gd::kInt64).to(x.device()); }

const gd::testing::OpRegistrar advanced_indexing_rows({
    unary_row("index (tensor, repeated)", {3, 2},
              [](const Tensor& x) { return x.index({indices_for(x, {0, 2, 0, -1})}); }),
    unary_row("index (mixed: slice, tensor, None, mask)", {2, 3, 4, 2},
              [](const Tensor& x) {
                return x.index({Slice(), indices_for(x, {2, 0, -1}), None, mask_for(x, {1, 0, 1, 1})});
              }),
    unary_row("index (separated tensors)", {2, 3, 2},
              [](const Tensor& x) { return x.index({indices_for(x, {1, 0, 1}), Slice(), indices_for(x, {0, 0, 1})}); }),
    unary_row("index (2-D mask)", {2, 3},
              [](const Tensor& x) { return x.index({mask_for(x, {1, 0, 1, 1, 1, 0}, {2, 3})}); }),
    unary_row("index (bool)", {2, 3}, [](const Tensor& x) { return x.index({Ellipsis, true}); },
              kWithDims | kZeroDim),
    unary_row("masked_select", {2, 3},
              [](const Tensor& x) { return x.masked_select(mask_for(x, {1, 0, 1, 0, 1, 1}, {2, 3})); }),
    unary_row("masked_select (broadcast mask)", {2, 3},
              [](const Tensor& x) { return x.masked_select(mask_for(x, {0, 1, 1})); }),
    binary_row("index_put_", {3, 2}, {2, 2},
               [](const Tensor& x, const Tensor& v) { return x.clone().index_put_({indices_for(x, {2, 0})}, v); }),
    inplace_row("index_put_ (slice, mask, broadcast values)",
                [](Tensor& y, const V& x) { y.index_put_({Slice(1, None), mask_for(y, {0, 1, 1, 0})}, x[1]); },
                {{{3, 4}}, {{2}}}, kWithDims),
    inplace_row("index_put_ accumulate (repeated)",
                [](Tensor& y, const V& x) { y.index_put_({indices_for(y, {1, 0, 1, -1})}, x[1], true); },
                {{{3, 2}}, {{4, 2}}}, kWithDims),
    inplace_row("index_put_ scalar", [](Tensor& y, const V&) { y.index_put_({Slice(), indices_for(y, {2, 0})}, 0.5); },
                {{{2, 3}}}, kWithDims),
    inplace_row("masked_fill_",
                [](Tensor& y, const V&) { y.masked_fill_(mask_for(y, {1, 0, 0, 1, 1, 0}, {2, 3}), 0.5); }, {{{2, 3}}},
                gd::testing::kAllVariants & ~kZeroDim),
    binary_row("scatter", {3, 4}, {2, 4},
               [](const Tensor& x, const Tensor& src) {
                 return x.scatter(1, indices_for(x, {3, 0, 1, 2, 1, 0}, {2, 3}), src);
               }),
    unary_row("scatter value", {3, 4},
              [](const Tensor& x) { return x.scatter(0, indices_for(x, {2, 0, 1, 1}, {1, 4}), 0.25); }),
    unary_row("index_select", {3, 4}, [](const Tensor& x) { return x.index_select(0, indices_for(x, {2, 0, 2})); }),
    unary_row("index_select dim 1", {3, 4}, [](const Tensor& x) { return x.index_select(-1, indices_for(x, {1, 3})); }),
    unary_row("index_select (0-dim index)", {3, 4},
              [](const Tensor& x) { return x.index_select(1, scalar_index_for(x, 2)); }),
    binary_row("index_add", {3, 4}, {3, 3},
               [](const Tensor& x, const Tensor& src) { return x.index_add(1, indices_for(x, {2, 0, 2}), src, 2.5); }),
    binary_row("index_add dim 0", {3, 4}, {2, 4},
               [](const Tensor& x, const Tensor& src) { return x.index_add(0, indices_for(x, {1, 1}), src); }),
});

}  // namespace
