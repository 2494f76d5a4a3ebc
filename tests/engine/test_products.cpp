// Tests of the products beyond matmul (engine/ops/products.cpp) and einsum
// (engine/ops/einsum.cpp): values against PyTorch 1.13 and closed forms, the
// contraction going through GEMM, and errors; the sweep's rows for gradcheck and
// gradgradcheck are in op_rows/products.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/allocator.h"
#include "engine/dims.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

using Shape = std::vector<int64_t>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// start, start + 1, ... laid out in `shape` (float64). The PyTorch literals come
// from torch.arange(start, start + n, dtype=torch.float64).reshape(shape).
Tensor ar(const Shape& shape, double start = 0, gd::ScalarType dtype = gd::kFloat64) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i);
  return gd::testing::tensor_of(v, shape, dtype);
}

// sin(0.7 i + 0.5 + phase) laid out in `shape`: smooth, sign-changing, no two rows
// alike; the PyTorch literals come from the same formula (math.sin in Python).
Tensor wv(const Shape& shape, double phase = 0, gd::ScalarType dtype = gd::kFloat64) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + 0.5 + phase);
  return gd::testing::tensor_of(v, shape, dtype);
}

Tensor sc(double value) { return gd::scalar_tensor(value, gd::kFloat64); }

std::string shape_mismatch(const Tensor& t, const Shape& shape) {
  return t.sizes() == gd::IntArrayRef(shape) ? "" : "shape " + gd::shape_to_string(t.sizes());
}

int64_t allocations() { return gd::cpu_allocator::stats().num_allocs; }

struct ValueCase {
  const char* name;
  std::function<Tensor()> fn;
  Shape shape;
  std::vector<double> values;
};

}  // namespace

using namespace gd;

TEST_CASE("products and einsum: values against PyTorch") {
  // Every expected value below was printed by PyTorch 1.13 (torch.outer, torch.addr,
  // ..., torch.einsum) on the same inputs, in float64.
  const ValueCase cases[] = {
      {"outer", [] { return outer(ar({3}), ar({2}, 1)); }, {3, 2}, {0, 0, 1, 2, 2, 4}},
      {"Tensor::outer", [] { return wv({3}).outer(wv({4}, 1)); }, {3, 4}, {0.47822457120764106, 0.3876138238607682, 0.11470223851910781, -0.21215560187000512, 0.92970431557133348, 0.75355024922380021, 0.22298972611887219, -0.4124463494903457, 0.9439295932911731, 0.76508021782943736, 0.22640166121434666, -0.41875713429339206}},
      {"addr beta 0.5 alpha 2", [] { return addr(ar({2, 3}), ar({2}), ar({3}, 1), 0.5, 2); }, {2, 3}, {0, 0.5, 1, 3.5, 6, 8.5}},
      {"addr (broadcast input)", [] { return addr(wv({3}), wv({2}, 1), wv({3}, 2)); }, {2, 3}, {1.076398501970079, 0.87381117055090918, 0.26025679194547457, 0.96328811489845134, 0.88484380092997883, 0.39024362131835988}},
      {"addr beta 0 ignores NaN input", [] { return addr(full({2, 2}, kNaN, kFloat64), ar({2}), ar({2}, 1), 0); }, {2, 2}, {0, 0, 1, 2}},
      {"inner (2-D, 3-D)", [] { return inner(wv({2, 3}), wv({2, 2, 3}, 1)); }, {2, 2, 2}, {1.4581764816457881, -1.973488189351593, 0.53443916809016656, 1.4338691250397748, 0.20560871819669238, 0.64211761994181149, -0.85394987644180287, 0.22010891734853558}},
      {"inner (3-D, 1-D)", [] { return inner(ar({2, 2, 3}), ar({3})); }, {2, 2}, {5, 14, 23, 32}},
      {"inner (1-D, 1-D)", [] { return ar({3}).inner(ar({3}, 1)); }, {}, {8}},
      {"inner (0-dim)", [] { return inner(sc(2.5), ar({2, 3})); }, {2, 3}, {0, 2.5, 5, 7.5, 10, 12.5}},
      {"vdot", [] { return vdot(wv({4}), wv({4}, 1)); }, {}, {1.2300565860682491}},
      {"Tensor::vdot", [] { return ar({3}).vdot(ar({3}, 2)); }, {}, {11}},
      {"kron (1,2) (3) [documented]", [] { return kron(ar({1, 2}, 1), ar({3}, 1)); }, {1, 6}, {1, 2, 3, 2, 4, 6}},
      {"kron (2,2) (2,3)", [] { return kron(ar({2, 2}), ar({2, 3}, 1)); }, {4, 6}, {0, 0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 2, 4, 6, 3, 6, 9, 8, 10, 12, 12, 15, 18}},
      {"kron (2,1,2) (2,2)", [] { return ar({2, 1, 2}, 1).kron(wv({2, 2})); }, {2, 2, 4}, {0.47942553860420301, 0.93203908596722629, 0.95885107720840601, 1.8640781719344526, 0.94630008768741447, 0.51550137182146449, 1.8926001753748289, 1.031002743642929, 1.438276615812609, 2.7961172579016789, 1.917702154416812, 3.7281563438689052, 2.8389002630622433, 1.5465041154643935, 3.7852003507496579, 2.062005487285858}},
      {"kron (0-dim)", [] { return kron(sc(3), ar({2}, 1)); }, {2}, {3, 6}},
      {"tensordot ([2,1],[0,1]) [documented]", [] { return tensordot(ar({4, 3, 2}), ar({2, 3, 5}), {2, 1}, {0, 1}); }, {4, 5}, {250, 265, 280, 295, 310, 700, 751, 802, 853, 904, 1150, 1237, 1324, 1411, 1498, 1600, 1723, 1846, 1969, 2092}},
      {"tensordot dims=1", [] { return tensordot(ar({2, 3}), ar({3, 4}), 1); }, {2, 4}, {20, 23, 26, 29, 56, 68, 80, 92}},
      {"tensordot dims=2", [] { return tensordot(wv({2, 3, 4}), wv({3, 4, 2}, 1), 2); }, {2, 2}, {-0.18507517790745343, -0.94215351123021029, 1.1857362804969704, 1.2325736544032422}},
      {"tensordot negative axes", [] { return tensordot(wv({3, 2}), wv({3, 4}, 1), {-2}, {0}); }, {2, 4}, {-0.50373506231818399, -0.67733221448678838, -0.53236944257445928, -0.13702500331735792, -0.094266070208595745, -0.49647662529057784, -0.66518646583713803, -0.52104871767525296}},
      {"tensordot size-1 dim broadcasts", [] { return tensordot(ar({1, 3}), ar({3, 3}), {0}, {0}); }, {3, 3}, {0, 0, 0, 9, 12, 15, 18, 24, 30}},
      {"tensordot dims=0 of 0-dim", [] { return tensordot(sc(2), ar({2, 2}), 0); }, {2, 2}, {0, 2, 4, 6}},
      {"cross (default dim: first of size 3)", [] { return cross(wv({2, 3}), wv({2, 3}, 1)); }, {2, 3}, {-0.54209049171056511, 0.82922735477206522, -0.54209049171056534, -0.54209049171056534, 0.82922735477206522, -0.54209049171056545}},
      {"cross (default dim 0)", [] { return cross(wv({3, 2}), wv({3, 2}, 1)); }, {3, 2}, {-0.82922735477206522, -0.82922735477206533, 0.28188280861066495, 0.28188280861066484, -0.82922735477206533, -0.82922735477206511}},
      {"cross dim 1 of 3x3", [] { return wv({3, 3}).cross(wv({3, 3}, 1), 1); }, {3, 3}, {-0.54209049171056511, 0.82922735477206522, -0.54209049171056534, -0.54209049171056534, 0.82922735477206522, -0.54209049171056545, -0.54209049171056545, 0.82922735477206533, -0.54209049171056545}},
      {"cross dim -2", [] { return cross(wv({3, 3}), wv({3, 3}, 1), -2); }, {3, 3}, {-0.72636563584942859, -0.72636563584942859, -0.72636563584942859, -0.73340572354756473, -0.73340572354756473, -0.73340572354756495, -0.72636563584942859, -0.72636563584942848, -0.72636563584942837}},
      {"cross (broadcast batch)", [] { return cross(wv({2, 3}), wv({1, 3}, 1), 1); }, {2, 3}, {-0.54209049171056511, 0.82922735477206522, -0.54209049171056534, 0.57413154434798597, -0.87824005233626989, 0.57413154434798608}},
      {"cdist p=2", [] { return cdist(wv({3, 2}), wv({4, 2}, 1)); }, {3, 4}, {0.53259623286604518, 1.3953847179334598, 2.3501953104638522, 1.3138312623082962, 0.29743403714213279, 1.1906832380178269, 2.3754390497744238, 1.5492349107900878, 1.9454412543336568, 0.50633808546065151, 0.7848913798001439, 0.95767683310862417}},
      {"cdist p=1", [] { return cdist(wv({3, 2}), wv({4, 2}, 1), 1); }, {3, 4}, {0.64161213014748764, 1.6147357386522989, 3.2865548359840226, 1.845600962318575, 0.34418993091476557, 1.6650725735897485, 3.3368916709214722, 1.8959377972560245, 2.7205395798748206, 0.71127707537030682, 0.96054202196141691, 1.266291548612811}},
      {"cdist p=inf", [] { return cdist(wv({3, 2}), wv({4, 2}, 1), kInf); }, {3, 4}, {0.51806944799985144, 1.3745595292620783, 1.8909633606303649, 1.0301110812018415, 0.2929950319981256, 0.95802181511631657, 1.8624660244368694, 1.4969856302850528, 1.5652988991275183, 0.39699502335723064, 0.75842024260620666, 0.87335170015842101}},
      {"cdist p=0", [] { return cdist(ar({3, 2}), ar({2, 2}, 2), 0); }, {3, 2}, {2, 2, 0, 2, 2, 0}},
      {"cdist p=3", [] { return cdist(wv({3, 2}), wv({4, 2}, 1), 3); }, {3, 4}, {0.52040076321410944, 1.3769994231405371, 2.1164064359031745, 1.1781702735241251, 0.2935151089898983, 1.0722384036948829, 2.1301606646926476, 1.5063717433759516, 1.7519158399353054, 0.45405562933154958, 0.76317554420931777, 0.89909936812822777}},
      {"cdist p=0.5", [] { return cdist(wv({3, 2}), wv({4, 2}, 1), 0.5); }, {3, 4}, {1.1475911381889161, 2.7638858547283003, 6.5355622821446762, 3.6786805166711067, 0.58913768898755736, 3.3111224525570728, 6.6511443300504887, 3.4415453297514222, 5.4099982360367456, 1.4177285190794682, 1.7435956572497711, 2.4379138165944911}},
      {"cdist (batched)", [] { return cdist(wv({2, 2, 3}), wv({2, 1, 3}, 1)); }, {2, 2, 1}, {0.88520027243610711, 1.4690339933780436, 0.96675783985809594, 2.814942730855158}},
      {"cartesian_prod", [] { return cartesian_prod({ar({2}, 1), ar({3}, 3)}); }, {6, 2}, {1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5}},
      {"cartesian_prod (3 tensors)", [] { return cartesian_prod({ar({2}), ar({1}, 5), ar({2}, 7)}); }, {4, 3}, {0, 5, 7, 0, 5, 8, 1, 5, 7, 1, 5, 8}},
      {"cartesian_prod (one tensor)", [] { return cartesian_prod({ar({3}, 1)}); }, {3}, {1, 2, 3}},
      {"einsum trace 'ii'", [] { return einsum("ii", {ar({3, 3})}); }, {}, {12}},
      {"einsum diagonal 'ii->i'", [] { return einsum("ii->i", {ar({3, 3})}); }, {3}, {0, 4, 8}},
      {"einsum transpose 'ij->ji'", [] { return einsum("ij->ji", {ar({2, 3})}); }, {3, 2}, {0, 3, 1, 4, 2, 5}},
      {"einsum sum 'ij->'", [] { return einsum("ij->", {wv({2, 3})}); }, {}, {1.9587178946291319}},
      {"einsum row sums 'ij->i'", [] { return einsum("ij->i", {ar({2, 3})}); }, {2}, {3, 12}},
      {"einsum outer 'i,j->ij'", [] { return einsum("i,j->ij", {ar({3}, 1), ar({2}, 1)}); }, {3, 2}, {1, 2, 2, 4, 3, 6}},
      {"einsum dot 'i,i->'", [] { return einsum("i,i->", {wv({4}), wv({4}, 1)}); }, {}, {1.2300565860682491}},
      {"einsum implicit dot 'i,i'", [] { return einsum("i,i", {ar({3}), ar({3}, 1)}); }, {}, {8}},
      {"einsum hadamard 'ij,ij->ij'", [] { return einsum("ij,ij->ij", {ar({2, 2}), ar({2, 2}, 1)}); }, {2, 2}, {0, 2, 6, 12}},
      {"einsum matrix product 'ij,jk->ik'", [] { return einsum("ij,jk->ik", {wv({2, 3}), wv({3, 2}, 1)}); }, {2, 2}, {-0.16575360895571822, -0.9322626508288957, 1.1698261495173701, 1.212302983658252}},
      {"einsum implicit 'ij,jk'", [] { return einsum("ij,jk", {wv({2, 3}), wv({3, 2}, 1)}); }, {2, 2}, {-0.16575360895571822, -0.9322626508288957, 1.1698261495173701, 1.212302983658252}},
      {"einsum implicit order 'ba'", [] { return einsum("ba", {ar({2, 3})}); }, {3, 2}, {0, 3, 1, 4, 2, 5}},
      {"einsum implicit order 'bA' (upper case first)", [] { return einsum("bA", {ar({2, 3})}); }, {3, 2}, {0, 3, 1, 4, 2, 5}},
      {"einsum batch with ellipsis '...ij,...jk->...ik'", [] { return einsum("...ij,...jk->...ik", {wv({2, 1, 2, 3}), wv({3, 3, 2}, 1)}); }, {2, 3, 2, 2}, {-0.16575360895571822, -0.9322626508288957, 1.1698261495173701, 1.212302983658252, 1.1710233496887865, 1.1974788374886469, -1.0031679191996039, -0.26611828133314552, -0.98246012949940587, -0.24189126598168464, -0.18619829349849262, -0.95136824929792541, -1.0154107403300709, -0.29179022696040996, -0.14457383586838279, -0.9176846647757092, -0.1581325171538579, -0.92878128210095212, 1.1628330897909942, 1.2039015059209994, 1.1704630958111157, 1.2024803753777717, -0.99560917549777039, -0.2627668174365595}},
      {"einsum implicit ellipsis '...ij,...jk'", [] { return einsum("...ij,...jk", {wv({2, 2, 3}), wv({3, 2}, 1)}); }, {2, 2, 2}, {-0.16575360895571822, -0.9322626508288957, 1.1698261495173701, 1.212302983658252, -1.0154107403300709, -0.29179022696040996, -0.14457383586838279, -0.9176846647757092}},
      {"einsum three operands 'ij,jk,kl->il'", [] { return einsum("ij,jk,kl->il", {wv({2, 3}), wv({3, 4}, 1), wv({4, 2}, 2)}); }, {2, 2}, {-0.36745404898260925, -0.45760019199433005, 0.35302885646450533, -0.082796744050687321}},
      {"einsum bilinear 'bn,anm,bm->ba'", [] { return einsum("bn,anm,bm->ba", {wv({2, 3}), wv({2, 3, 2}, 1), wv({2, 2}, 2)}); }, {2, 2}, {-0.044778884053035484, 0.63092305347299116, -2.0092214063057505, 0.95438428886763649}},
      {"einsum diagonal and sum 'iij->j'", [] { return einsum("iij->j", {ar({2, 2, 3})}); }, {3}, {9, 11, 13}},
      {"einsum diagonal kept 'jii->ij'", [] { return einsum("jii->ij", {ar({2, 3, 3})}); }, {3, 2}, {0, 9, 4, 13, 8, 17}},
      {"einsum ellipsis summed '...ij->ij'", [] { return einsum("...ij->ij", {ar({2, 2, 3})}); }, {2, 3}, {6, 8, 10, 12, 14, 16}},
      {"einsum ellipsis last 'i...->...i'", [] { return einsum("i...->...i", {ar({2, 3})}); }, {3, 2}, {0, 3, 1, 4, 2, 5}},
      {"einsum spaces ' i j -> j '", [] { return einsum(" i j -> j ", {ar({2, 3})}); }, {3}, {3, 5, 7}},
      {"einsum size-1 label broadcasts", [] { return einsum("ij,jk->ik", {ar({2, 1}), ar({4, 2}, 1)}); }, {2, 2}, {0, 0, 16, 20}},
      {"einsum outer of matrices 'ij,kl->ijkl'", [] { return einsum("ij,kl->ijkl", {ar({1, 2}), ar({2, 1}, 1)}); }, {1, 2, 2, 1}, {0, 0, 1, 2}},
      {"einsum contraction over two labels 'ijk,jkl->il'", [] { return einsum("ijk,jkl->il", {wv({2, 3, 2}), wv({3, 2, 2}, 1)}); }, {2, 2}, {-1.1689215281553222, -1.1983809321620411, 0.14742234946092325, 0.91211127896058941}},
      {"einsum label only in one operand 'ij,k->i'", [] { return einsum("ij,k->i", {ar({2, 3}), ar({2}, 1)}); }, {2}, {9, 36}},
      {"einsum 0-dim operands ',->'", [] { return einsum(",->", {sc(2), sc(3)}); }, {}, {6}},
      {"einsum of empty dims 'ij,jk->ik'", [] { return einsum("ij,jk->ik", {ar({2, 0}), ar({0, 3})}); }, {2, 3}, {0, 0, 0, 0, 0, 0}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Tensor got = c.fn();
    CHECK(shape_mismatch(got, c.shape) == "");
    CHECK(value_mismatch(values_of(got), c.values, 1e-12, 1e-14) == "");
  }
}

TEST_CASE("tensordot: dims = 0 is the outer product, shape (3, 4, 4, 5) [documented]") {
  Tensor a = wv({3, 4}), b = wv({4, 5}, 1);
  Tensor out = tensordot(a, b, 0);
  REQUIRE(shape_mismatch(out, {3, 4, 4, 5}) == "");
  std::vector<double> va = values_of(a), vb = values_of(b), want;
  for (double x : va)
    for (double y : vb) want.push_back(x * y);
  CHECK(value_mismatch(values_of(out), want, 0, 0) == "");
  CHECK(shape_mismatch(tensordot(a, b, {}, {}), {3, 4, 4, 5}) == "");
}

TEST_CASE("einsum 'bij,bjk->bik' equals bmm, for float64, float32 and strided operands") {
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    Tensor a = wv({4, 5, 6}, 0, dtype), b = wv({4, 6, 3}, 1, dtype);
    INFO(dtype_name(dtype));
    CHECK(value_mismatch(einsum("bij,bjk->bik", {a, b}), bmm(a, b), 0, 0) == "");
    Tensor at = wv({4, 6, 5}, 2, dtype).transpose(1, 2), bt = wv({3, 6, 4}, 3, dtype).permute({2, 1, 0});
    CHECK(value_mismatch(einsum("bij,bjk->bik", {at, bt}), bmm(at, bt), 0, 0) == "");
  }
}

TEST_CASE("einsum contracts through GEMM: no intermediate of all the labels") {
  // 'bij,bjk->bik' on contiguous operands is views around one batched GEMM: the
  // only allocation is the output (elementwise contraction would need [b,i,j,k]).
  Tensor a = wv({8, 16, 32}), b = wv({8, 32, 16}, 1);
  int64_t before = allocations();
  Tensor out = einsum("bij,bjk->bik", {a, b});
  CHECK(allocations() - before == 1);
  // Three operands: one intermediate and the output.
  Tensor x = wv({16, 32}), y = wv({32, 8}, 1), z = wv({8, 4}, 2);
  before = allocations();
  out = einsum("ij,jk,kl->il", {x, y, z});
  CHECK(allocations() - before == 2);
  // A permutation is a view, as in PyTorch.
  Tensor t = einsum("ij->ji", {x});
  CHECK(t.storage() == x.storage());
}

TEST_CASE("products and einsum on integer tensors") {
  // torch.einsum('ij,jk->ik', torch.arange(4).reshape(2,2), torch.arange(4).reshape(2,2))
  Tensor a = ar({2, 2}, 0, kInt64);
  Tensor out = einsum("ij,jk->ik", {a, a});
  CHECK(out.dtype() == kInt64);
  CHECK(value_mismatch(values_of(out), {2, 3, 6, 11}) == "");
  // torch.cross(torch.tensor([1,2,3]), torch.tensor([4,5,6])) and torch.kron of [1,2] and [3,4]
  CHECK(value_mismatch(values_of(cross(ar({3}, 1, kInt64), ar({3}, 4, kInt64))), {-3, 6, -3}) == "");
  CHECK(value_mismatch(values_of(kron(ar({2}, 1, kInt64), ar({2}, 3, kInt64))), {3, 4, 6, 8}) == "");
  // Mixed integer and floating operands promote, as torch.kron does (its multiply path).
  Tensor mixed = kron(ar({2}, 1, kInt64), ar({2}, 3));
  CHECK(mixed.dtype() == kFloat64);
  CHECK(value_mismatch(values_of(mixed), {3, 4, 6, 8}) == "");
  CHECK(tensordot(ar({2, 3}, 0, kInt64), ar({3, 4}, 0, kInt64), 1).dtype() == kInt64);
}

// ||x1_i - x2_j||_p by its definition, for 2-D operands.
std::vector<double> reference_cdist(const Tensor& x1, const Tensor& x2, double p) {
  std::vector<double> a = values_of(x1), b = values_of(x2), out;
  const int64_t rows1 = x1.size(0), rows2 = x2.size(0), m = x1.size(1);
  for (int64_t i = 0; i < rows1; ++i)
    for (int64_t j = 0; j < rows2; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < m; ++k) {
        double d = std::abs(a[static_cast<size_t>(i * m + k)] - b[static_cast<size_t>(j * m + k)]);
        acc = std::isinf(p) ? std::max(acc, d) : acc + std::pow(d, p);
      }
      out.push_back(std::isinf(p) ? acc : std::pow(acc, 1 / p));
    }
  return out;
}

TEST_CASE("cdist: both p = 2 paths and general p against the definition") {
  // More than 25 rows on a side: the GEMM expansion (rounding of |x1|^2 - 2 x1.x2 + |x2|^2).
  Tensor x1 = wv({30, 3}), x2 = wv({4, 3}, 1);
  CHECK(value_mismatch(values_of(cdist(x1, x2)), reference_cdist(x1, x2, 2), 1e-12, 1e-12) == "");
  CHECK(value_mismatch(values_of(cdist(x2, x1)), reference_cdist(x2, x1, 2), 1e-12, 1e-12) == "");
  for (double p : {1.0, 1.5, 2.0, 3.0, kInf}) {
    INFO(p);
    CHECK(value_mismatch(values_of(cdist(x1.narrow(0, 0, 5), x2, p)), reference_cdist(x1.narrow(0, 0, 5), x2, p),
                         1e-12, 1e-14) == "");
  }
  // Batch dims broadcast: [2, 1, 3, 2] with [3, 4, 2] gives [2, 3, 3, 4].
  Tensor b1 = wv({2, 1, 3, 2}), b2 = wv({3, 4, 2}, 1);
  Tensor out = cdist(b1, b2, 1.5);
  REQUIRE(shape_mismatch(out, {2, 3, 3, 4}) == "");
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      CHECK(value_mismatch(values_of(out[i][j]), reference_cdist(b1[i][0], b2[j], 1.5), 1e-12, 1e-14) == "");
  // No columns: every distance is 0, on both paths.
  CHECK(value_mismatch(values_of(cdist(ar({2, 0}), ar({3, 0}))), std::vector<double>(6, 0.0)) == "");
  CHECK(value_mismatch(values_of(cdist(ar({30, 0}), ar({3, 0}))), std::vector<double>(90, 0.0)) == "");
}

TEST_CASE("cdist: a zero distance has a finite gradient on both p = 2 paths") {
  for (int64_t rows : {3, 30}) {
    INFO(rows);
    Tensor x1 = wv({rows, 2}).requires_grad_();
    Tensor x2 = wv({2, 2}).requires_grad_();  // x2's rows are x1's first two rows
    Tensor d = cdist(x1, x2);
    CHECK(std::abs(d.select(0, 0).select(0, 0).item<double>()) < 1e-7);
    d.sum().backward();
    for (double g : values_of(x1.grad())) CHECK(std::isfinite(g));
    for (double g : values_of(x2.grad())) CHECK(std::isfinite(g));
  }
}

TEST_CASE("products and einsum: errors") {
  Tensor f2x3 = ar({2, 3}, 0, kFloat32);
  struct ErrorCase {
    const char* name;
    std::function<void()> fn;
    std::string message;  // PyTorch's text where PyTorch has one
  };
  const ErrorCase cases[] = {
      {"outer 2-D self", [] { outer(ar({2, 3}), ar({3})); }, "outer: Expected 1-D argument self, but got 2-D"},
      {"outer 2-D vec2", [] { outer(ar({3}), ar({2, 3})); }, "outer: Expected 1-D argument vec2, but got 2-D"},
      {"outer float32 with float64", [] { outer(ar({3}, 0, kFloat32), ar({3})); },
       "outer: expected both tensors to have the same floating dtype"},
      {"addr 2-D vec1", [] { addr(ar({2, 3}), ar({2, 3}), ar({3})); }, "addr: Expected 1-D argument vec1, but got 2-D"},
      {"addr input shape", [] { addr(ar({4, 3}), ar({2}), ar({3})); },
       "The expanded size of the tensor (2) must match the existing size (4) at non-singleton dimension 0.  Target "
       "sizes: [2, 3].  Tensor sizes: [4, 3]"},
      {"addr float32 with float64", [] { addr(ar({2, 3}), ar({2}, 0, kFloat32), ar({3}, 0, kFloat32)); },
       "addr: expected both tensors to have the same floating dtype"},
      {"inner last dims", [] { inner(ar({2, 3}), ar({4})); },
       "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4]"},
      {"inner float32 with float64", [&] { inner(f2x3, ar({3})); }, "inner: expected scalar type Float but found Double"},
      {"vdot 2-D", [] { vdot(ar({2, 3}), ar({3})); }, "1D tensors expected, but got 2D and 1D tensors"},
      {"vdot float32 with float64", [] { vdot(ar({3}, 0, kFloat32), ar({3})); },
       "dot : expected both vectors to have same dtype, but found Float and Double"},
      {"vdot sizes", [] { vdot(ar({3}), ar({4})); },
       "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and "
       "4 elements respectively"},
      {"kron float32 with float64", [] { kron(ar({3}, 0, kFloat32), ar({3})); },
       "kron: expected both tensors to have the same floating dtype"},
      {"tensordot list lengths", [] { tensordot(ar({2, 3}), ar({3, 2}), {1}, {0, 1}); },
       "both dimension lists should have same length"},
      {"tensordot mismatched axes", [] { tensordot(ar({2, 3}), ar({2, 3}), {1}, {0}); },
       "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 2 in dim 0"},
      {"tensordot mismatched dims=1", [] { tensordot(ar({2, 3}), ar({2, 3}), 1); },
       "contracted dimensions need to match, but first has size 3 in dim -1 and second has size 2 in dim 0"},
      {"tensordot dims < 0", [] { tensordot(ar({2, 3}), ar({2, 3}), -1); },
       "tensordot expects dims >= 0, but got dims=-1"},
      {"tensordot dims > ndim", [] { tensordot(ar({2, 3}), ar({3, 3, 3}), 3); },
       "Dimension out of range (expected to be in range of [-2, 1], but got -3)"},
      {"tensordot repeated dim", [] { tensordot(ar({3, 3}), ar({3, 3}), {0, 0}, {0, 1}); },
       "dim 0 appears multiple times in the list of dims"},
      {"tensordot axis of a 0-dim tensor", [] { tensordot(sc(2), ar({3}), {0}, {0}); },
       "imension specified as 0 but tensor has no dimensions"},
      {"tensordot float32 with float64", [&] { tensordot(f2x3, ar({3, 2}), 1); },
       "tensordot: expected scalar type Float but found Double"},
      {"cross without a dim of size 3", [] { cross(ar({2, 4}), ar({2, 4})); }, "no dimension of size 3 in input"},
      {"cross dim of size 4", [] { cross(ar({2, 4}), ar({2, 4}), 1); },
       "linalg.cross: inputs dimension 1 must have length 3. Got 4 and 4"},
      {"cross ranks", [] { cross(ar({2, 3}), ar({3}), 1); },
       "linalg.cross: inputs must have the same number of dimensions."},
      {"cross batch", [] { cross(ar({2, 3}), ar({4, 3}), 1); },
       "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"},
      {"cross dim out of range", [] { cross(ar({2, 3}), ar({2, 3}), 2); },
       "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},
      {"cross float32 with float64", [&] { cross(f2x3, ar({2, 3}), 1); },
       "cross: expected scalar type Float but found Double"},
      {"cdist 1-D x1", [] { cdist(ar({3}), ar({2, 3})); }, "cdist only supports at least 2D tensors, X1 got: 1D"},
      {"cdist 1-D x2", [] { cdist(ar({2, 3}), ar({3})); }, "cdist only supports at least 2D tensors, X2 got: 1D"},
      {"cdist columns", [] { cdist(ar({2, 3}), ar({2, 4})); },
       "X1 and X2 must have the same number of columns. X1: 3 X2: 4"},
      {"cdist p < 0", [] { cdist(ar({2, 3}), ar({2, 3}), -1); }, "cdist only supports non-negative p values"},
      {"cdist integers", [] { cdist(ar({2, 3}, 0, kInt64), ar({2, 3}, 0, kInt64)); },
       "cdist only supports floating-point dtypes, X1 got: Long"},
      {"cdist float32 with float64", [&] { cdist(f2x3, ar({2, 3})); }, "cdist: expected scalar type Float but found Double"},
      {"cdist batch", [] { cdist(ar({2, 2, 3}), ar({3, 2, 3})); },
       "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"},
      {"cartesian_prod 2-D", [] { cartesian_prod({ar({2, 3}), ar({3})}); }, "Expect a 1D vector, but got shape [2, 3]"},
      {"cartesian_prod dtypes", [] { cartesian_prod({ar({2}, 0, kFloat32), ar({3})}); },
       "meshgrid expects all tensors to have the same dtype"},
      {"cartesian_prod nothing", [] { cartesian_prod({}); }, "meshgrid expects a non-empty TensorList"},
      {"einsum no operands", [] { einsum("i", {}); }, "einsum(): must provide at least one operand"},
      {"einsum more operands", [] { einsum("ij", {ar({2, 3}), ar({3, 2})}); },
       "einsum(): more operands were provided than specified in the equation"},
      {"einsum fewer operands", [] { einsum("ij,jk", {ar({2, 3})}); },
       "einsum(): fewer operands were provided than specified in the equation"},
      {"einsum unknown letter", [] { einsum("i1,jk", {ar({2, 3}), ar({3, 2})}); },
       "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"},
      {"einsum unknown letter in output", [] { einsum("ij->i1", {ar({2, 3})}); },
       "einsum(): invalid subscript given at index 5 in the equation string, subscripts must be in [a-zA-Z]"},
      {"einsum lone dash", [] { einsum("ij-i", {ar({2, 3})}); },
       "einsum(): invalid subscript given at index 2 in the equation string, subscripts must be in [a-zA-Z]"},
      {"einsum output letter not in inputs", [] { einsum("ij->k", {ar({2, 3})}); },
       "einsum(): output subscript k does not appear in the equation for any input operand"},
      {"einsum output letter twice", [] { einsum("ij->ii", {ar({2, 3})}); },
       "einsum(): output subscript i appears more than once in the output"},
      {"einsum mismatched sizes", [] { einsum("ij,jk->ik", {ar({2, 3}), ar({4, 2})}); },
       "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"},
      {"einsum repeated letter sizes", [] { einsum("ii", {ar({2, 3})}); },
       "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"},
      {"einsum too many letters", [] { einsum("ijk", {ar({2, 3})}); },
       "einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) for "
       "operand 0 and no ellipsis was given"},
      {"einsum too few letters", [] { einsum("i", {ar({2, 3})}); },
       "einsum(): the number of subscripts in the equation (1) does not match the number of dimensions (2) for "
       "operand 0 and no ellipsis was given"},
      {"einsum too many letters with ellipsis", [] { einsum("...ijk", {ar({2, 3})}); },
       "einsum(): the number of subscripts in the equation (3) is more than the number of dimensions (2) for operand 0"},
      {"einsum lone dot", [] { einsum("i.j", {ar({2, 3})}); },
       "einsum(): found '.' for operand 0 that is not part of any ellipsis"},
      {"einsum two dots", [] { einsum("..ij", {ar({2, 3})}); },
       "einsum(): found '.' for operand 0 that is not part of any ellipsis"},
      {"einsum two ellipses", [] { einsum("...i...", {ar({2, 3})}); },
       "einsum(): found '.' for operand 0 for which an ellipsis was already found"},
      {"einsum two ellipses in output", [] { einsum("...ij->......ij", {ar({2, 3})}); },
       "einsum(): found '.' for output but an ellipsis (...) was already found"},
      {"einsum bad ellipsis in output", [] { einsum("i->..", {ar({2})}); },
       "einsum(): found '.' for output that is not part of any ellipsis (...)"},
      {"einsum ellipsis sizes", [] { einsum("...ij,...jk->...ik", {ar({2, 2, 3}), ar({3, 3, 2})}); },
       "einsum(): dimension 0 covered by ellipsis in operand 1 has size 3 which does not broadcast with previously "
       "seen ellipsis with size 2 for the respective dimension"},
      {"einsum float32 with float64", [&] { einsum("ij,jk", {f2x3, ar({3, 2})}); },
       "einsum(): expected scalar type Float but found Double for operand 1"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    std::string message = error_of(c.fn);
    CHECK_MESSAGE(message.find(c.message) != std::string::npos, message);
    CHECK(!message.empty());
  }
}

TEST_CASE("products and einsum: the sweep has their rows") {
  std::vector<std::string> names;
  for (const auto& op : gd::testing::differentiable_ops()) names.push_back(op.name);
  for (const char* name : {"outer", "addr", "inner", "vdot", "kron", "tensordot dims=0", "cross dim 1", "cdist",
                           "cdist (GEMM path)", "cartesian_prod", "einsum 'bij,bjk->bik'", "einsum 'ij,jk,kl->il'"}) {
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
}
