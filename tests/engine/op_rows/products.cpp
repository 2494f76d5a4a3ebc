// The op sweep's rows for the products beyond matmul and einsum
// (tests/engine/test_products.cpp): outer, addr, inner, vdot, kron, tensordot,
// cross, cdist (each p, the GEMM path, batches), cartesian_prod and einsum.
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/row_builders.h"

namespace gd = gradiens;
using namespace gd;

namespace {

using Shape = std::vector<int64_t>;
using gd::testing::InputSpec;
using gd::testing::OpInfo;
using namespace gd::testing::rows;
constexpr double kInf = std::numeric_limits<double>::infinity();

OpInfo binary(std::string name, std::function<Tensor(const Tensor&, const Tensor&)> f, InputSpec a, InputSpec b,
              unsigned variants = kWithDims) {
  return {std::move(name), [f](const V& x) { return V{f(x[0], x[1])}; }, {std::move(a), std::move(b)}, variants, {}};
}

OpInfo with_einsum(std::string equation, std::vector<InputSpec> inputs) {
  return {"einsum '" + equation + "'", [equation](const V& x) { return V{einsum(equation, x)}; }, std::move(inputs),
          kWithDims, {}};
}

// cdist's operands come from disjoint ranges: no difference is 0, so |.| has no kink.
InputSpec near(Shape shape) { return {std::move(shape), -1.0, -0.1}; }
InputSpec far(Shape shape) { return {std::move(shape), 0.1, 1.0}; }
InputSpec in_unit(Shape shape) { return {std::move(shape), -1.0, 1.0}; }

const gd::testing::OpRegistrar products_rows({
    binary("outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, in_unit({3}), in_unit({2})),
    {"addr", [](const V& x) { return V{addr(x[0], x[1], x[2], 0.5, 2)}; },
     {in_unit({2, 3}), in_unit({2}), in_unit({3})}, kWithDims, {}},
    {"addr (broadcast input)", [](const V& x) { return V{addr(x[0], x[1], x[2])}; },
     {in_unit({3}), in_unit({2}), in_unit({3})}, kWithDims, {}},
    binary("inner", [](const Tensor& a, const Tensor& b) { return inner(a, b); }, in_unit({2, 3}), in_unit({4, 3}),
           gd::testing::kAllVariants),
    binary("inner (3-D, 1-D)", [](const Tensor& a, const Tensor& b) { return inner(a, b); }, in_unit({2, 2, 3}),
           in_unit({3})),
    binary("vdot", [](const Tensor& a, const Tensor& b) { return vdot(a, b); }, in_unit({3}), in_unit({3})),
    binary("kron", [](const Tensor& a, const Tensor& b) { return kron(a, b); }, in_unit({2, 2}), in_unit({2, 3}),
           gd::testing::kAllVariants),
    binary("kron (different ranks)", [](const Tensor& a, const Tensor& b) { return kron(a, b); }, in_unit({2, 1, 2}),
           in_unit({3, 2})),
    binary("tensordot dims=1", [](const Tensor& a, const Tensor& b) { return tensordot(a, b, 1); }, in_unit({2, 3}),
           in_unit({3, 2})),
    binary("tensordot ([2,1],[0,1])", [](const Tensor& a, const Tensor& b) { return tensordot(a, b, {2, 1}, {0, 1}); },
           in_unit({2, 3, 2}), in_unit({2, 3, 2})),
    binary("tensordot dims=0", [](const Tensor& a, const Tensor& b) { return tensordot(a, b, 0); }, in_unit({2}),
           in_unit({3}), gd::testing::kAllVariants),
    binary("cross dim 1", [](const Tensor& a, const Tensor& b) { return cross(a, b, 1); }, in_unit({2, 3}),
           in_unit({2, 3})),
    binary("cross (default dim)", [](const Tensor& a, const Tensor& b) { return a.cross(b); }, in_unit({3, 2}),
           in_unit({3, 2})),
    binary("cdist", [](const Tensor& a, const Tensor& b) { return cdist(a, b); }, near({3, 2}), far({4, 2})),
    binary("cdist (GEMM path)", [](const Tensor& a, const Tensor& b) { return cdist(a, b); }, near({26, 2}),
           far({2, 2})),
    binary("cdist p=1", [](const Tensor& a, const Tensor& b) { return cdist(a, b, 1); }, near({3, 2}), far({2, 2})),
    binary("cdist p=inf", [](const Tensor& a, const Tensor& b) { return cdist(a, b, kInf); }, near({3, 2}),
           far({2, 2})),
    binary("cdist p=3", [](const Tensor& a, const Tensor& b) { return cdist(a, b, 3); }, near({3, 2}), far({2, 2})),
    binary("cdist p=0.5", [](const Tensor& a, const Tensor& b) { return cdist(a, b, 0.5); }, near({3, 2}), far({2, 2})),
    binary("cdist (batched)", [](const Tensor& a, const Tensor& b) { return cdist(a, b); }, near({2, 2, 2}),
           far({2, 3, 2})),
    binary("cartesian_prod", [](const Tensor& a, const Tensor& b) { return cartesian_prod({a, b}); }, in_unit({2}),
           in_unit({3})),
    with_einsum("bij,bjk->bik", {in_unit({2, 2, 3}), in_unit({2, 3, 2})}),
    with_einsum("ii", {in_unit({3, 3})}),
    with_einsum("ii->i", {in_unit({3, 3})}),
    with_einsum("ij->ji", {in_unit({2, 3})}),
    with_einsum("ij->", {in_unit({2, 3})}),
    with_einsum("i,j->ij", {in_unit({3}), in_unit({2})}),
    with_einsum("...ij,...jk->...ik", {in_unit({2, 2, 3}), in_unit({3, 2})}),
    with_einsum("ij,jk,kl->il", {in_unit({2, 3}), in_unit({3, 2}), in_unit({2, 2})}),
    with_einsum("bn,anm,bm->ba", {in_unit({2, 3}), in_unit({2, 3, 2}), in_unit({2, 2})}),
    with_einsum("iij->j", {in_unit({2, 2, 3})}),
    with_einsum("ijk,jkl->il", {in_unit({2, 3, 2}), in_unit({3, 2, 2})}),
});

}  // namespace
