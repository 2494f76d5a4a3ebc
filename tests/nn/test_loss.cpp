// nn::functional losses against PyTorch 1.13: the value of every option
// combination, gradients, gradcheck and gradgradcheck of each, the error
// messages, and finite values and gradients for logits of +-1e4 (float32) and
// +-1e300 (float64).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gradiens.h"
#include "nn/functional/loss.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace F = gradiens::nn::functional;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::shape_value_mismatch;
using gd::testing::tensor_of;

namespace {

constexpr double NAN_ = std::numeric_limits<double>::quiet_NaN();
constexpr double INF = std::numeric_limits<double>::infinity();

Tensor T(const std::vector<double>& values, const std::vector<int64_t>& shape, gd::ScalarType dtype = gd::kFloat64) {
  return tensor_of(values, shape, dtype);
}
Tensor L(const std::vector<double>& values, const std::vector<int64_t>& shape) { return tensor_of(values, shape, gd::kInt64); }

// The tensors of the reference script (torch.float64 / torch.long, same literals):
//   X = [[0.2,-1.3,0.7,2.1],[1.5,0.3,-0.8,0.0],[-0.4,0.9,1.1,-2.0]]  Y = [1,0,3]  YI = [1,-100,3]
//   W = [0.5,1.0,2.0,1.5]  P = [[0.1,0.2,0.3,0.4],[0.7,0.1,0.1,0.1],[0.25,0.25,0.25,0.25]] ...
Tensor X() { return T({0.2, -1.3, 0.7, 2.1, 1.5, 0.3, -0.8, 0.0, -0.4, 0.9, 1.1, -2.0}, {3, 4}); }
Tensor Y() { return L({1, 0, 3}, {3}); }
Tensor YI() { return L({1, -100, 3}, {3}); }
Tensor W() { return T({0.5, 1.0, 2.0, 1.5}, {4}); }
Tensor P() { return T({0.1, 0.2, 0.3, 0.4, 0.7, 0.1, 0.1, 0.1, 0.25, 0.25, 0.25, 0.25}, {3, 4}); }
Tensor X3() { return T({0.3, -0.6, 1.2, 0.1, -0.7, 0.8, 0.0, 0.5, -1.1, 0.4, 0.9, -0.2}, {2, 3, 2}); }
Tensor Y3() { return L({0, 2, 1, -100}, {2, 2}); }
Tensor P3() { return T({0.2, 0.5, 0.3, 0.25, 0.5, 0.25, 1.0, 0.1, 0.0, 0.6, 0.0, 0.3}, {2, 3, 2}); }
Tensor X4() { return T({0.3, -0.6, 1.2, 0.1, -0.7, 0.8, 0.0, 0.5, -1.1, 0.4, 0.9, -0.2}, {1, 3, 2, 2}); }
Tensor Y4() { return L({2, 0, 1, -100}, {1, 2, 2}); }
Tensor X5() { return T({0.4, -0.3, 1.0, 0.2, -0.5, 0.6}, {1, 3, 1, 1, 2}); }
Tensor Y5() { return L({2, 1}, {1, 1, 1, 2}); }
Tensor XU() { return T({0.5, -0.2, 1.0, 0.1}, {4}); }
Tensor YU() { return L({2}, {1}).reshape({}); }
Tensor PU() { return T({0.1, 0.6, 0.2, 0.1}, {4}); }
Tensor W3() { return T({0.5, 2.0, 1.5}, {3}); }
Tensor PB() { return T({0.1, 0.8, 0.35, 0.6, 0.02, 0.9}, {2, 3}); }
Tensor TB() { return T({0.0, 1.0, 0.3, 0.5, 1.0, 0.0}, {2, 3}); }
Tensor WB() { return T({0.5, 2.0, 1.5}, {3}); }
Tensor PW() { return T({3.0, 0.5, 1.2}, {3}); }
Tensor XB() { return T({0.4, -1.7, 2.2, 0.0, 3.1, -0.6}, {2, 3}); }
Tensor R() { return T({0.3, -1.2, 2.5, 0.8, 0.05, -0.4}, {2, 3}); }
Tensor RT() { return T({0.1, 0.4, 0.7, -0.6, 0.0, 1.4}, {2, 3}); }
Tensor RB() { return T({0.5, -0.3, 0.2}, {3}); }
Tensor KI() { return T({-1.2, -0.8, -1.5, -0.3, -2.0, -1.9}, {2, 3}); }
Tensor KT() { return T({0.2, 0.5, 0.3, 0.0, 0.7, 0.3}, {2, 3}); }
Tensor KL() { return T({-1.6, -0.7, -1.2, -0.1, -2.5, -3.0}, {2, 3}); }

// One loss with one set of options, as a function of its input (the
// differentiable argument), and PyTorch's result.
struct LossCase {
  std::string name;
  Tensor input;
  std::function<Tensor(const Tensor&)> loss;
  std::vector<double> want;
  std::vector<int64_t> shape;
};

// Each row: F.<loss>(the same tensors, the same options) in PyTorch 1.13,
// float64, printed with repr; the name spells the options.
const std::vector<LossCase>& cases() {
  static const std::vector<LossCase> table = {
    {"cross_entropy Y ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {3.7573519119313823, 0.4852513002896062, 3.8356845584660806}, {3}},
    {"cross_entropy Y ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {2.692762590229023}, {}},
    {"cross_entropy Y ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {8.07828777068707}, {}},
    {"cross_entropy Y ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kNone)); }, {3.4123519119313825, 0.7352513002896063, 3.455684558466081}, {3}},
    {"cross_entropy Y ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kMean)); }, {2.53442925689569}, {}},
    {"cross_entropy Y ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kSum)); }, {7.60328777068707}, {}},
    {"cross_entropy Y weight ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kNone)); }, {3.7573519119313823, 0.2426256501448031, 5.753526837699121}, {3}},
    {"cross_entropy Y weight ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kMean)); }, {3.2511681332584352}, {}},
    {"cross_entropy Y weight ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kSum)); }, {9.753504399775306}, {}},
    {"cross_entropy Y weight ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kNone)); }, {3.4527195075279513, 0.717913345188244, 5.066742609775817}, {3}},
    {"cross_entropy Y weight ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kMean)); }, {3.079125154164004}, {}},
    {"cross_entropy Y weight ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kSum)); }, {9.237375462492011}, {}},
    {"cross_entropy Y ignored -100 ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {3.7573519119313823, 0.0, 3.8356845584660806}, {3}},
    {"cross_entropy Y ignored -100 ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {3.7965182351987314}, {}},
    {"cross_entropy Y ignored -100 ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {7.593036470397463}, {}},
    {"cross_entropy Y ignored -100 ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kNone)); }, {3.4123519119313825, 0.0, 3.455684558466081}, {3}},
    {"cross_entropy Y ignored -100 ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kMean)); }, {3.4340182351987316}, {}},
    {"cross_entropy Y ignored -100 ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kSum)); }, {6.868036470397463}, {}},
    {"cross_entropy Y ignored -100 weight ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kNone)); }, {3.7573519119313823, 0.0, 5.753526837699121}, {3}},
    {"cross_entropy Y ignored -100 weight ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kMean)); }, {3.8043514998522014}, {}},
    {"cross_entropy Y ignored -100 weight ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kSum)); }, {9.510878749630503}, {}},
    {"cross_entropy Y ignored -100 weight ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kNone)); }, {3.4527195075279513, 0.0, 5.066742609775817}, {3}},
    {"cross_entropy Y ignored -100 weight ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kMean)); }, {3.4077848469215075}, {}},
    {"cross_entropy Y ignored -100 weight ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, YI(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kSum)); }, {8.51946211730377}, {}},
    {"cross_entropy Y ignore_index=3 ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().ignore_index(3).reduction(gd::kNone)); }, {3.7573519119313823, 0.4852513002896062, 0.0}, {3}},
    {"cross_entropy Y ignore_index=3 ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().ignore_index(3).reduction(gd::kMean)); }, {2.121301606110494}, {}},
    {"cross_entropy Y ignore_index=3 ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().ignore_index(3).reduction(gd::kSum)); }, {4.242603212220988}, {}},
    {"cross_entropy Y ignore_index=3 ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().ignore_index(3).label_smoothing(0.2).reduction(gd::kNone)); }, {3.4123519119313825, 0.7352513002896063, 0.0}, {3}},
    {"cross_entropy Y ignore_index=3 ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().ignore_index(3).label_smoothing(0.2).reduction(gd::kMean)); }, {2.0738016061104942}, {}},
    {"cross_entropy Y ignore_index=3 ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().ignore_index(3).label_smoothing(0.2).reduction(gd::kSum)); }, {4.1476032122209885}, {}},
    {"cross_entropy Y ignore_index=3 weight ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).ignore_index(3).reduction(gd::kNone)); }, {3.7573519119313823, 0.2426256501448031, 0.0}, {3}},
    {"cross_entropy Y ignore_index=3 weight ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).ignore_index(3).reduction(gd::kMean)); }, {2.6666517080507903}, {}},
    {"cross_entropy Y ignore_index=3 weight ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).ignore_index(3).reduction(gd::kSum)); }, {3.9999775620761855}, {}},
    {"cross_entropy Y ignore_index=3 weight ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).ignore_index(3).label_smoothing(0.2).reduction(gd::kNone)); }, {3.4527195075279513, 0.717913345188244, 0.0}, {3}},
    {"cross_entropy Y ignore_index=3 weight ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).ignore_index(3).label_smoothing(0.2).reduction(gd::kMean)); }, {2.780421901810797}, {}},
    {"cross_entropy Y ignore_index=3 weight ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(W()).ignore_index(3).label_smoothing(0.2).reduction(gd::kSum)); }, {4.170632852716196}, {}},
    {"cross_entropy P ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {1.647351911931382, 0.9852513002896063, 1.9356845584660807}, {3}},
    {"cross_entropy P ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {1.522762590229023}, {}},
    {"cross_entropy P ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {4.568287770687069}, {}},
    {"cross_entropy P ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kNone)); }, {1.724351911931382, 1.135251300289606, 1.9356845584660807}, {3}},
    {"cross_entropy P ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kMean)); }, {1.5984292568956897}, {}},
    {"cross_entropy P ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().label_smoothing(0.2).reduction(gd::kSum)); }, {4.795287770687069}, {}},
    {"cross_entropy P weight ls=0.0 none", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kNone)); }, {2.133160272300504, 1.1932010402316848, 2.3196056980826008}, {3}},
    {"cross_entropy P weight ls=0.0 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kMean)); }, {1.8819890035382631}, {}},
    {"cross_entropy P weight ls=0.0 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().weight(W()).reduction(gd::kSum)); }, {5.64596701061479}, {}},
    {"cross_entropy P weight ls=0.2 none", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kNone)); }, {2.1533661958232484, 1.4783736572577495, 2.3196056980826008}, {3}},
    {"cross_entropy P weight ls=0.2 mean", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kMean)); }, {1.9837818503878664}, {}},
    {"cross_entropy P weight ls=0.2 sum", X(), [](const Tensor& x) { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2).reduction(gd::kSum)); }, {5.951345551163599}, {}},
    {"cross_entropy (2,3,2) none", X3(), [](const Tensor& x) { return F::cross_entropy(x, Y3(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {1.3422072900359523, 0.5557123323460856, 2.4330186279603225, 0.0}, {2, 2}},
    {"cross_entropy (2,3,2) mean", X3(), [](const Tensor& x) { return F::cross_entropy(x, Y3(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {1.4436460834474534}, {}},
    {"cross_entropy (2,3,2) sum", X3(), [](const Tensor& x) { return F::cross_entropy(x, Y3(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {4.33093825034236}, {}},
    {"cross_entropy (2,3,2) weight ls=0.1 none", X3(), [](const Tensor& x) { return F::cross_entropy(x, Y3(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kNone)); }, {0.7729542525209722, 0.8943066263133604, 4.58550268072329, 0.0}, {2, 2}},
    {"cross_entropy (2,3,2) weight ls=0.1 mean", X3(), [](const Tensor& x) { return F::cross_entropy(x, Y3(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kMean)); }, {1.5631908898894058}, {}},
    {"cross_entropy (2,3,2) weight ls=0.1 sum", X3(), [](const Tensor& x) { return F::cross_entropy(x, Y3(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kSum)); }, {6.252763559557623}, {}},
    {"cross_entropy (1,3,2,2) none", X4(), [](const Tensor& x) { return F::cross_entropy(x, Y4(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {1.8790106967477105, 2.050718171513068, 1.913935808163665, 0.0}, {1, 2, 2}},
    {"cross_entropy (1,3,2,2) mean", X4(), [](const Tensor& x) { return F::cross_entropy(x, Y4(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {1.9478882254748144}, {}},
    {"cross_entropy (1,3,2,2) sum", X4(), [](const Tensor& x) { return F::cross_entropy(x, Y4(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {5.843664676424443}, {}},
    {"cross_entropy (1,3,2,2) weight ls=0.1 none", X4(), [](const Tensor& x) { return F::cross_entropy(x, Y4(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kNone)); }, {2.7371992001757706, 1.052918933382623, 3.635275895783086, 0.0}, {1, 2, 2}},
    {"cross_entropy (1,3,2,2) weight ls=0.1 mean", X4(), [](const Tensor& x) { return F::cross_entropy(x, Y4(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kMean)); }, {1.8563485073353698}, {}},
    {"cross_entropy (1,3,2,2) weight ls=0.1 sum", X4(), [](const Tensor& x) { return F::cross_entropy(x, Y4(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kSum)); }, {7.425394029341479}, {}},
    {"cross_entropy (1,3,1,1,2) none", X5(), [](const Tensor& x) { return F::cross_entropy(x, Y5(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {2.072076005279133, 1.1308714408244889}, {1, 1, 1, 2}},
    {"cross_entropy (1,3,1,1,2) mean", X5(), [](const Tensor& x) { return F::cross_entropy(x, Y5(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {1.601473723051811}, {}},
    {"cross_entropy (1,3,1,1,2) sum", X5(), [](const Tensor& x) { return F::cross_entropy(x, Y5(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {3.202947446103622}, {}},
    {"cross_entropy (1,3,1,1,2) weight ls=0.1 none", X5(), [](const Tensor& x) { return F::cross_entropy(x, Y5(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kNone)); }, {2.9585794078307144, 2.174684785594012}, {1, 1, 1, 2}},
    {"cross_entropy (1,3,1,1,2) weight ls=0.1 mean", X5(), [](const Tensor& x) { return F::cross_entropy(x, Y5(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kMean)); }, {1.4666469124070647}, {}},
    {"cross_entropy (1,3,1,1,2) weight ls=0.1 sum", X5(), [](const Tensor& x) { return F::cross_entropy(x, Y5(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kSum)); }, {5.1332641934247265}, {}},
    {"cross_entropy unbatched none", XU(), [](const Tensor& x) { return F::cross_entropy(x, YU(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {0.8391049030250295}, {}},
    {"cross_entropy unbatched PU none", XU(), [](const Tensor& x) { return F::cross_entropy(x, PU(), F::CrossEntropyFuncOptions().reduction(gd::kNone)); }, {1.6991049030250296}, {}},
    {"cross_entropy unbatched mean", XU(), [](const Tensor& x) { return F::cross_entropy(x, YU(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {0.8391049030250295}, {}},
    {"cross_entropy unbatched PU mean", XU(), [](const Tensor& x) { return F::cross_entropy(x, PU(), F::CrossEntropyFuncOptions().reduction(gd::kMean)); }, {1.6991049030250296}, {}},
    {"cross_entropy unbatched sum", XU(), [](const Tensor& x) { return F::cross_entropy(x, YU(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {0.8391049030250295}, {}},
    {"cross_entropy unbatched PU sum", XU(), [](const Tensor& x) { return F::cross_entropy(x, PU(), F::CrossEntropyFuncOptions().reduction(gd::kSum)); }, {1.6991049030250296}, {}},
    {"cross_entropy unbatched weight ls=0.1 none", XU(), [](const Tensor& x) { return F::cross_entropy(x, YU(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.1).reduction(gd::kNone)); }, {1.6852769383231818}, {}},
    {"cross_entropy unbatched PU weight ls=0.1 none", XU(), [](const Tensor& x) { return F::cross_entropy(x, PU(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.1).reduction(gd::kNone)); }, {1.8731214081451606}, {}},
    {"cross_entropy unbatched weight ls=0.1 mean", XU(), [](const Tensor& x) { return F::cross_entropy(x, YU(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.1).reduction(gd::kMean)); }, {0.8426384691615909}, {}},
    {"cross_entropy unbatched PU weight ls=0.1 mean", XU(), [](const Tensor& x) { return F::cross_entropy(x, PU(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.1).reduction(gd::kMean)); }, {1.8731214081451606}, {}},
    {"cross_entropy unbatched weight ls=0.1 sum", XU(), [](const Tensor& x) { return F::cross_entropy(x, YU(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.1).reduction(gd::kSum)); }, {1.6852769383231818}, {}},
    {"cross_entropy unbatched PU weight ls=0.1 sum", XU(), [](const Tensor& x) { return F::cross_entropy(x, PU(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.1).reduction(gd::kSum)); }, {1.8731214081451606}, {}},
    {"cross_entropy (2,3,2) P3 weight ls=0.1 none", X3(), [](const Tensor& x) { return F::cross_entropy(x, P3(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kNone)); }, {2.1095414855017114, 1.3367537141465564, 0.8059275329768548, 1.890348732922307}, {2, 2}},
    {"cross_entropy (2,3,2) P3 weight ls=0.1 mean", X3(), [](const Tensor& x) { return F::cross_entropy(x, P3(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kMean)); }, {1.535642866386857}, {}},
    {"cross_entropy (2,3,2) P3 weight ls=0.1 sum", X3(), [](const Tensor& x) { return F::cross_entropy(x, P3(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kSum)); }, {6.142571465547428}, {}},
    {"nll_loss Y none", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().reduction(gd::kNone)); }, {1.3, -1.5, 2.0}, {3}},
    {"nll_loss Y mean", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().reduction(gd::kMean)); }, {0.6}, {}},
    {"nll_loss Y sum", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().reduction(gd::kSum)); }, {1.8}, {}},
    {"nll_loss Y weight none", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kNone)); }, {1.3, -0.75, 3.0}, {3}},
    {"nll_loss Y weight mean", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kMean)); }, {1.1833333333333333}, {}},
    {"nll_loss Y weight sum", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kSum)); }, {3.55}, {}},
    {"nll_loss Y ignored -100 none", X(), [](const Tensor& x) { return F::nll_loss(x, YI(), F::NLLLossFuncOptions().reduction(gd::kNone)); }, {1.3, 0.0, 2.0}, {3}},
    {"nll_loss Y ignored -100 mean", X(), [](const Tensor& x) { return F::nll_loss(x, YI(), F::NLLLossFuncOptions().reduction(gd::kMean)); }, {1.65}, {}},
    {"nll_loss Y ignored -100 sum", X(), [](const Tensor& x) { return F::nll_loss(x, YI(), F::NLLLossFuncOptions().reduction(gd::kSum)); }, {3.3}, {}},
    {"nll_loss Y ignored -100 weight none", X(), [](const Tensor& x) { return F::nll_loss(x, YI(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kNone)); }, {1.3, 0.0, 3.0}, {3}},
    {"nll_loss Y ignored -100 weight mean", X(), [](const Tensor& x) { return F::nll_loss(x, YI(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kMean)); }, {1.72}, {}},
    {"nll_loss Y ignored -100 weight sum", X(), [](const Tensor& x) { return F::nll_loss(x, YI(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kSum)); }, {4.3}, {}},
    {"nll_loss Y ignore_index=3 none", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().ignore_index(3).reduction(gd::kNone)); }, {1.3, -1.5, 0.0}, {3}},
    {"nll_loss Y ignore_index=3 mean", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().ignore_index(3).reduction(gd::kMean)); }, {-0.09999999999999998}, {}},
    {"nll_loss Y ignore_index=3 sum", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().ignore_index(3).reduction(gd::kSum)); }, {-0.19999999999999996}, {}},
    {"nll_loss Y ignore_index=3 weight none", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().weight(W()).ignore_index(3).reduction(gd::kNone)); }, {1.3, -0.75, 0.0}, {3}},
    {"nll_loss Y ignore_index=3 weight mean", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().weight(W()).ignore_index(3).reduction(gd::kMean)); }, {0.3666666666666667}, {}},
    {"nll_loss Y ignore_index=3 weight sum", X(), [](const Tensor& x) { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().weight(W()).ignore_index(3).reduction(gd::kSum)); }, {0.55}, {}},
    {"nll_loss (2,3,2) weight none", X3(), [](const Tensor& x) { return F::nll_loss(x, Y3(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kNone)); }, {-0.15, -1.2000000000000002, 2.2, 0.0}, {2, 2}},
    {"nll_loss (2,3,2) weight mean", X3(), [](const Tensor& x) { return F::nll_loss(x, Y3(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kMean)); }, {0.2125}, {}},
    {"nll_loss (2,3,2) weight sum", X3(), [](const Tensor& x) { return F::nll_loss(x, Y3(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kSum)); }, {0.85}, {}},
    {"nll_loss (1,3,2,2) weight none", X4(), [](const Tensor& x) { return F::nll_loss(x, Y4(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kNone)); }, {1.6500000000000001, 0.3, -0.0, 0.0}, {1, 2, 2}},
    {"nll_loss (1,3,2,2) weight mean", X4(), [](const Tensor& x) { return F::nll_loss(x, Y4(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kMean)); }, {0.48750000000000004}, {}},
    {"nll_loss (1,3,2,2) weight sum", X4(), [](const Tensor& x) { return F::nll_loss(x, Y4(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kSum)); }, {1.9500000000000002}, {}},
    {"nll_loss (1,3,1,1,2) weight none", X5(), [](const Tensor& x) { return F::nll_loss(x, Y5(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kNone)); }, {0.75, -0.4}, {1, 1, 1, 2}},
    {"nll_loss (1,3,1,1,2) weight mean", X5(), [](const Tensor& x) { return F::nll_loss(x, Y5(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kMean)); }, {0.09999999999999999}, {}},
    {"nll_loss (1,3,1,1,2) weight sum", X5(), [](const Tensor& x) { return F::nll_loss(x, Y5(), F::NLLLossFuncOptions().weight(W3()).reduction(gd::kSum)); }, {0.35}, {}},
    {"nll_loss unbatched weight none", XU(), [](const Tensor& x) { return F::nll_loss(x, YU(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kNone)); }, {-2.0}, {}},
    {"nll_loss unbatched weight mean", XU(), [](const Tensor& x) { return F::nll_loss(x, YU(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kMean)); }, {-1.0}, {}},
    {"nll_loss unbatched weight sum", XU(), [](const Tensor& x) { return F::nll_loss(x, YU(), F::NLLLossFuncOptions().weight(W()).reduction(gd::kSum)); }, {-2.0}, {}},
    {"binary_cross_entropy none", PB(), [](const Tensor& x) { return F::binary_cross_entropy(x, TB(), F::BinaryCrossEntropyFuncOptions().reduction(gd::kNone)); }, {0.10536051565782628, 0.2231435513142097, 0.6164946786143213, 0.7135581778200728, 3.912023005428146, 2.302585092994046}, {2, 3}},
    {"binary_cross_entropy mean", PB(), [](const Tensor& x) { return F::binary_cross_entropy(x, TB(), F::BinaryCrossEntropyFuncOptions().reduction(gd::kMean)); }, {1.3121941703047701}, {}},
    {"binary_cross_entropy sum", PB(), [](const Tensor& x) { return F::binary_cross_entropy(x, TB(), F::BinaryCrossEntropyFuncOptions().reduction(gd::kSum)); }, {7.873165021828621}, {}},
    {"binary_cross_entropy weight none", PB(), [](const Tensor& x) { return F::binary_cross_entropy(x, TB(), F::BinaryCrossEntropyFuncOptions().weight(WB()).reduction(gd::kNone)); }, {0.05268025782891314, 0.4462871026284194, 0.9247420179214819, 0.3567790889100364, 7.824046010856292, 3.453877639491069}, {2, 3}},
    {"binary_cross_entropy weight mean", PB(), [](const Tensor& x) { return F::binary_cross_entropy(x, TB(), F::BinaryCrossEntropyFuncOptions().weight(WB()).reduction(gd::kMean)); }, {2.176402019606035}, {}},
    {"binary_cross_entropy weight sum", PB(), [](const Tensor& x) { return F::binary_cross_entropy(x, TB(), F::BinaryCrossEntropyFuncOptions().weight(WB()).reduction(gd::kSum)); }, {13.05841211763621}, {}},
    {"binary_cross_entropy_with_logits none", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(gd::kNone)); }, {0.9130152523999525, 1.8677860293862658, 1.645083319768696, 0.6931471805599453, 0.04406396793857386, 0.4374879504858857}, {2, 3}},
    {"binary_cross_entropy_with_logits mean", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(gd::kMean)); }, {0.9334306167565533}, {}},
    {"binary_cross_entropy_with_logits sum", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(gd::kSum)); }, {5.600583700539319}, {}},
    {"binary_cross_entropy_with_logits pos_weight none", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(PW()).reduction(gd::kNone)); }, {0.9130152523999525, 0.9338930146931329, 1.6513883189548177, 1.3862943611198906, 0.02203198396928693, 0.4374879504858856}, {2, 3}},
    {"binary_cross_entropy_with_logits pos_weight mean", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(PW()).reduction(gd::kMean)); }, {0.890685146937161}, {}},
    {"binary_cross_entropy_with_logits pos_weight sum", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(PW()).reduction(gd::kSum)); }, {5.344110881622966}, {}},
    {"binary_cross_entropy_with_logits weight none", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().weight(WB()).reduction(gd::kNone)); }, {0.45650762619997626, 3.7355720587725316, 2.467624979653044, 0.34657359027997264, 0.08812793587714772, 0.6562319257288285}, {2, 3}},
    {"binary_cross_entropy_with_logits weight mean", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().weight(WB()).reduction(gd::kMean)); }, {1.2917730194185835}, {}},
    {"binary_cross_entropy_with_logits weight sum", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().weight(WB()).reduction(gd::kSum)); }, {7.7506381165115}, {}},
    {"binary_cross_entropy_with_logits weight pos_weight none", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().weight(WB()).pos_weight(PW()).reduction(gd::kNone)); }, {0.45650762619997626, 1.8677860293862658, 2.4770824784322265, 0.6931471805599453, 0.04406396793857386, 0.6562319257288285}, {2, 3}},
    {"binary_cross_entropy_with_logits weight pos_weight mean", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().weight(WB()).pos_weight(PW()).reduction(gd::kMean)); }, {1.0324698680409694}, {}},
    {"binary_cross_entropy_with_logits weight pos_weight sum", XB(), [](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, TB(), F::BinaryCrossEntropyWithLogitsFuncOptions().weight(WB()).pos_weight(PW()).reduction(gd::kSum)); }, {6.194819208245816}, {}},
    {"mse_loss none", R(), [](const Tensor& x) { return F::mse_loss(x, RT(), gd::kNone); }, {0.039999999999999994, 2.5600000000000005, 3.24, 1.9599999999999997, 0.0025000000000000005, 3.2399999999999993}, {2, 3}},
    {"mse_loss broadcast target none", R(), [](const Tensor& x) { return F::mse_loss(x, RB(), gd::kNone); }, {0.04000000000000001, 0.8099999999999998, 5.289999999999999, 0.09000000000000002, 0.12249999999999998, 0.3600000000000001}, {2, 3}},
    {"l1_loss none", R(), [](const Tensor& x) { return F::l1_loss(x, RT(), gd::kNone); }, {0.19999999999999998, 1.6, 1.8, 1.4, 0.05, 1.7999999999999998}, {2, 3}},
    {"l1_loss broadcast target none", R(), [](const Tensor& x) { return F::l1_loss(x, RB(), gd::kNone); }, {0.2, 0.8999999999999999, 2.3, 0.30000000000000004, 0.35, 0.6000000000000001}, {2, 3}},
    {"huber_loss delta=1.0 none", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kNone).delta(1.0)); }, {0.019999999999999997, 1.1, 1.3, 0.8999999999999999, 0.0012500000000000002, 1.2999999999999998}, {2, 3}},
    {"huber_loss delta=0.5 none", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kNone).delta(0.5)); }, {0.019999999999999997, 0.675, 0.775, 0.575, 0.0012500000000000002, 0.7749999999999999}, {2, 3}},
    {"huber_loss delta=2.0 none", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kNone).delta(2.0)); }, {0.019999999999999997, 1.2800000000000002, 1.62, 0.9799999999999999, 0.0012500000000000002, 1.6199999999999997}, {2, 3}},
    {"smooth_l1_loss beta=1.0 none", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kNone).beta(1.0)); }, {0.019999999999999997, 1.1, 1.3, 0.8999999999999999, 0.0012500000000000002, 1.2999999999999998}, {2, 3}},
    {"smooth_l1_loss beta=0.5 none", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kNone).beta(0.5)); }, {0.039999999999999994, 1.35, 1.55, 1.15, 0.0025000000000000005, 1.5499999999999998}, {2, 3}},
    {"smooth_l1_loss beta=2.0 none", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kNone).beta(2.0)); }, {0.009999999999999998, 0.6400000000000001, 0.81, 0.48999999999999994, 0.0006250000000000001, 0.8099999999999998}, {2, 3}},
    {"smooth_l1_loss beta=0.0 none", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kNone).beta(0.0)); }, {0.19999999999999998, 1.6, 1.8, 1.4, 0.05, 1.7999999999999998}, {2, 3}},
    {"mse_loss mean", R(), [](const Tensor& x) { return F::mse_loss(x, RT(), gd::kMean); }, {1.8404166666666664}, {}},
    {"mse_loss broadcast target mean", R(), [](const Tensor& x) { return F::mse_loss(x, RB(), gd::kMean); }, {1.1187499999999997}, {}},
    {"l1_loss mean", R(), [](const Tensor& x) { return F::l1_loss(x, RT(), gd::kMean); }, {1.1416666666666666}, {}},
    {"l1_loss broadcast target mean", R(), [](const Tensor& x) { return F::l1_loss(x, RB(), gd::kMean); }, {0.7749999999999999}, {}},
    {"huber_loss delta=1.0 mean", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kMean).delta(1.0)); }, {0.7702083333333333}, {}},
    {"huber_loss delta=0.5 mean", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kMean).delta(0.5)); }, {0.47020833333333334}, {}},
    {"huber_loss delta=2.0 mean", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kMean).delta(2.0)); }, {0.9202083333333332}, {}},
    {"smooth_l1_loss beta=1.0 mean", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kMean).beta(1.0)); }, {0.7702083333333333}, {}},
    {"smooth_l1_loss beta=0.5 mean", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kMean).beta(0.5)); }, {0.9404166666666667}, {}},
    {"smooth_l1_loss beta=2.0 mean", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kMean).beta(2.0)); }, {0.4601041666666666}, {}},
    {"smooth_l1_loss beta=0.0 mean", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kMean).beta(0.0)); }, {1.1416666666666666}, {}},
    {"mse_loss sum", R(), [](const Tensor& x) { return F::mse_loss(x, RT(), gd::kSum); }, {11.042499999999999}, {}},
    {"mse_loss broadcast target sum", R(), [](const Tensor& x) { return F::mse_loss(x, RB(), gd::kSum); }, {6.712499999999999}, {}},
    {"l1_loss sum", R(), [](const Tensor& x) { return F::l1_loss(x, RT(), gd::kSum); }, {6.85}, {}},
    {"l1_loss broadcast target sum", R(), [](const Tensor& x) { return F::l1_loss(x, RB(), gd::kSum); }, {4.6499999999999995}, {}},
    {"huber_loss delta=1.0 sum", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kSum).delta(1.0)); }, {4.62125}, {}},
    {"huber_loss delta=0.5 sum", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kSum).delta(0.5)); }, {2.82125}, {}},
    {"huber_loss delta=2.0 sum", R(), [](const Tensor& x) { return F::huber_loss(x, RT(), F::HuberLossFuncOptions(gd::kSum).delta(2.0)); }, {5.521249999999999}, {}},
    {"smooth_l1_loss beta=1.0 sum", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kSum).beta(1.0)); }, {4.62125}, {}},
    {"smooth_l1_loss beta=0.5 sum", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kSum).beta(0.5)); }, {5.6425}, {}},
    {"smooth_l1_loss beta=2.0 sum", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kSum).beta(2.0)); }, {2.7606249999999997}, {}},
    {"smooth_l1_loss beta=0.0 sum", R(), [](const Tensor& x) { return F::smooth_l1_loss(x, RT(), F::SmoothL1LossFuncOptions(gd::kSum).beta(0.0)); }, {6.85}, {}},
    {"kl_div none", KI(), [](const Tensor& x) { return F::kl_div(x, KT(), gd::kNone); }, {-0.0818875824868201, 0.05342640972002738, 0.08880815870221914, 0.0, 1.150327539242887, 0.20880815870221914}, {2, 3}},
    {"kl_div log_target none", KI(), [](const Tensor& x) { return F::kl_div(x, KL(), F::KLDivFuncOptions(gd::kNone).log_target(true)); }, {-0.08075860719786218, 0.049658530379140996, 0.09035826357366065, 0.1809674836071919, -0.0410424993119494, -0.05476577520465034}, {2, 3}},
    {"kl_div mean", KI(), [](const Tensor& x) { return F::kl_div(x, KT(), gd::kMean); }, {0.23658044731342212}, {}},
    {"kl_div log_target mean", KI(), [](const Tensor& x) { return F::kl_div(x, KL(), F::KLDivFuncOptions(gd::kMean).log_target(true)); }, {0.024069565974255275}, {}},
    {"kl_div sum", KI(), [](const Tensor& x) { return F::kl_div(x, KT(), gd::kSum); }, {1.4194826838805328}, {}},
    {"kl_div log_target sum", KI(), [](const Tensor& x) { return F::kl_div(x, KL(), F::KLDivFuncOptions(gd::kSum).log_target(true)); }, {0.14441739584553165}, {}},
    {"kl_div batchmean", KI(), [](const Tensor& x) { return F::kl_div(x, KT(), gd::kBatchMean); }, {0.7097413419402664}, {}},
    {"kl_div log_target batchmean", KI(), [](const Tensor& x) { return F::kl_div(x, KL(), F::KLDivFuncOptions(gd::kBatchMean).log_target(true)); }, {0.07220869792276582}, {}},

  };
  return table;
}

}  // namespace

TEST_CASE("every loss and option combination matches PyTorch") {
  for (const LossCase& c : cases()) {
    CAPTURE(c.name);
    CHECK(shape_value_mismatch(c.loss(c.input), c.want, c.shape, 1e-12, 1e-14) == "");
  }
}

TEST_CASE("every loss and option combination passes gradcheck and gradgradcheck") {
  for (const LossCase& c : cases()) {
    CAPTURE(c.name);
    Tensor x = c.input.detach().requires_grad_();
    auto fn = [&c](const std::vector<Tensor>& in) { return std::vector<Tensor>{c.loss(in[0])}; };
    gd::autograd::GradcheckOptions with_forward_ad;
    with_forward_ad.check_forward_ad = true;
    CHECK(error_of([&] { gd::autograd::gradcheck(fn, {x}, with_forward_ad); }) == "");
    CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, {x}); }) == "");
  }
}

TEST_CASE("strided inputs, uint8 targets and a 0-dim kl_div give the same values") {
  // Rows of the table above: cross_entropy Y mean, nll_loss Y weight none, binary_cross_entropy_with_logits mean.
  Tensor x_strided = X().t().contiguous().t();
  CHECK(!x_strided.is_contiguous());
  CHECK(shape_value_mismatch(F::cross_entropy(x_strided, Y()), {2.692762590229023}, {}, 1e-12, 1e-14) == "");
  CHECK(shape_value_mismatch(F::cross_entropy(X(), Y().to(gd::kUInt8)), {2.692762590229023}, {}, 1e-12, 1e-14) == "");
  Tensor y_strided = L({1, 0, 3, 0, 0, 0}, {2, 3}).select(0, 0);
  CHECK(shape_value_mismatch(F::nll_loss(x_strided, y_strided, F::NLLLossFuncOptions().weight(W()).reduction(gd::kNone)),
                             {1.3, -0.75, 3.0}, {3}, 1e-12, 1e-14) == "");
  // kl_div of 0-dim tensors: batchmean has no batch to divide by; 0.5 log 0.5 - 0.5 * 0.3 (closed form).
  Tensor kl = F::kl_div(gd::testing::scalar_of(0.3), gd::testing::scalar_of(0.5), gd::kBatchMean);
  CHECK(shape_value_mismatch(kl, {0.5 * std::log(0.5) - 0.15}, {}, 1e-15, 0) == "");
}

namespace {
// d(sum of f's outputs)/d inputs, for the gradient rows below.
std::vector<Tensor> grads_of(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs) {
  for (Tensor& t : inputs) t = t.detach().requires_grad_();
  return gd::autograd::grad({f(inputs).sum()}, inputs);
}
std::string mismatch(const Tensor& t, const std::vector<double>& values, double rtol = 1e-12) {
  return shape_value_mismatch(t, values, t.sizes().vec(), rtol, 1e-14);
}
}  // namespace

TEST_CASE("gradients match PyTorch") {
  // torch.autograd.grad(F.<loss>(...), inputs) in PyTorch 1.13, float64.
  auto ce = grads_of([](auto v) {
    return F::cross_entropy(v[0], YI(), F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2));
  }, {X()});
  CHECK(mismatch(ce[0], {0.03394341569395093, -0.33019489861873974, 0.03245044416183473, 0.26380103876295413, 0.0, 0.0,
                         0.0, 0.0, 0.052012969278096184, 0.2075439815212929, 0.23792284663285387,
                         -0.49747979743224285}) == "");
  auto prob = grads_of([](auto v) {
    return F::cross_entropy(v[0], v[1], F::CrossEntropyFuncOptions().weight(W()).label_smoothing(0.2));
  }, {X(), P()});
  CHECK(mismatch(prob[0], {0.027508108038468888, -0.05902762464478016, -0.11225783629508969, 0.14377735290140098,
                           0.08094427242493456, 0.011668024552908635, -0.06835830506220739, -0.024253991915635854,
                           0.0028828802285173673, 0.08013217063311269, 0.03299055074199269,
                           -0.11600560160362273}) == "");
  CHECK(mismatch(prob[1], {0.30098025492418423, 1.0019605098483686, 0.9372543530300703, 0.14294076477255274,
                           0.06470017337194749, 0.44940034674389495, 1.4854673601544566, 0.7941005201158425,
                           0.29809127446214406, 0.24951588225762145, 0.3923650978485762, 1.5342738233864324}) == "");
  // The ignored position (last) gets no gradient from either term.
  auto spatial = grads_of([](auto v) {
    return F::cross_entropy(v[0], Y4(), F::CrossEntropyFuncOptions().weight(W3()).label_smoothing(0.1).reduction(gd::kSum));
  }, {X4()});
  CHECK(mismatch(spatial[0], {0.902103857718586, -0.3916252182277253, 0.9301117674281081, 0.0, 0.2713301204089731,
                              0.23764141255490465, -1.5815024823540222, 0.0, -1.1734339781275591, 0.15398380567282066,
                              0.6513907149259143, 0.0}) == "");
  auto nll = grads_of([](auto v) { return F::nll_loss(v[0], Y(), F::NLLLossFuncOptions().weight(W()).ignore_index(3)); },
                      {X()});
  CHECK(mismatch(nll[0], {0.0, -0.6666666666666666, 0.0, 0.0, -0.3333333333333333, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}) ==
        "");
  auto bce = grads_of([](auto v) {
    return F::binary_cross_entropy(v[0], v[1], F::BinaryCrossEntropyFuncOptions().weight(WB()));
  }, {PB(), TB()});
  CHECK(mismatch(bce[0], {0.09259259259259257, -0.4166666666666667, 0.05494505494505494, 0.03472222222222222,
                          -16.666666666666668, 2.5000000000000004}) == "");
  CHECK(mismatch(bce[1], {0.18310204811135158, -0.46209812037329695, 0.1547598021015559, -0.03378875900901369,
                          1.2972734327035422, -0.5493061443340549}) == "");
  auto logits = grads_of([](auto v) {
    return F::binary_cross_entropy_with_logits(
        v[0], v[1], F::BinaryCrossEntropyWithLogitsFuncOptions().weight(WB()).pos_weight(PW()));
  }, {XB(), TB()});
  CHECK(mismatch(logits[0], {0.04989063834270433, -0.14092245581941087, 0.14856612038328337, -0.041666666666666664,
                             -0.007184542490181023, 0.08858592344355114}) == "");
  CHECK(mismatch(logits[1], {0.05216920873332542, 0.255368995102289, -0.5447458340115653, 0.1155245300933242,
                             -1.0406773279897623, 0.20187439752429426}) == "");
  auto huber = grads_of([](auto v) { return F::huber_loss(v[0], RT(), F::HuberLossFuncOptions(gd::kSum).delta(0.5)); },
                        {R()});
  CHECK(mismatch(huber[0], {0.19999999999999998, -0.5, 0.5, 0.5, 0.05, -0.5}) == "");
  auto smooth = grads_of([](auto v) { return F::smooth_l1_loss(v[0], RT(), F::SmoothL1LossFuncOptions(gd::kSum).beta(0.5)); },
                         {R()});
  CHECK(mismatch(smooth[0], {0.39999999999999997, -1.0, 1.0, 1.0, 0.1, -1.0}) == "");
  // The target's gradient is NaN where the target is 0, as PyTorch's xlogy gives.
  auto kl = grads_of([](auto v) { return F::kl_div(v[0], v[1], gd::kBatchMean); }, {KI(), KT()});
  CHECK(mismatch(kl[0], {-0.1, -0.25, -0.15, -0.0, -0.35, -0.15}) == "");
  CHECK(mismatch(kl[1], {0.29528104378294984, 0.5534264097200274, 0.6480135978370319, NAN_, 1.3216625280306338,
                         0.8480135978370319}) == "");
  auto kl_log = grads_of([](auto v) { return F::kl_div(v[0], v[1], F::KLDivFuncOptions(gd::kBatchMean).log_target(true)); },
                         {KI(), KL()});
  CHECK(mismatch(kl_log[0], {-0.10094825899732769, -0.24829265189570476, -0.15059710595610107, -0.45241870901797976,
                             -0.0410424993119494, -0.024893534183931972}) == "");
  CHECK(mismatch(kl_log[1], {0.0605689553983966, 0.2731219170852753, 0.1957762377429314, 0.5429024508215757,
                             0.0205212496559747, -0.0024893534183931983}) == "");
  // A broadcast target's gradient is summed back to its shape.
  auto mse = grads_of([](auto v) { return F::mse_loss(v[0], v[1]); }, {R(), RB()});
  CHECK(mismatch(mse[0], {-0.06666666666666667, -0.29999999999999993, 0.7666666666666666, 0.1, 0.11666666666666665,
                          -0.2}) == "");
  CHECK(mismatch(mse[1], {-0.03333333333333334, 0.1833333333333333, -0.5666666666666667}) == "");
}

TEST_CASE("binary_cross_entropy at 0 and 1: clamped logs and PyTorch's gradients") {
  // F.binary_cross_entropy(x, y, reduction='none') and its gradients in PyTorch 1.13, float64,
  // x = [0, 1, 0, 1, 0.3], y = [0, 1, 1, 0, 0.6]: the input's gradient is
  // (x - y) / max(x (1 - x), 1e-12f), the target's -logit(x).
  auto g = grads_of([](auto v) { return F::binary_cross_entropy(v[0], v[1], F::BinaryCrossEntropyFuncOptions().reduction(gd::kNone)); },
                    {T({0, 1, 0, 1, 0.3}, {5}), T({0, 1, 1, 0, 0.6}, {5})});
  Tensor loss = F::binary_cross_entropy(T({0, 1, 0, 1, 0.3}, {5}), T({0, 1, 1, 0, 0.6}, {5}),
                                        F::BinaryCrossEntropyFuncOptions().reduction(gd::kNone));
  CHECK(mismatch(loss, {0.0, -0.0, 100.0, 100.0, 0.8650536601710546}) == "");
  CHECK(mismatch(g[0], {0.0, 0.0, -1000000003995.8029, 1000000003995.8029, -1.4285714285714286}) == "");
  CHECK(mismatch(g[1], {INF, -INF, INF, -INF, 0.8472978603872037}) == "");
}

TEST_CASE("weights, probability targets and targets are differentiable too") {
  // PyTorch refuses gradients for nll/cross_entropy/bce weights; here they are
  // exact, checked against finite differences with every option on.
  using V = std::vector<Tensor>;
  auto check = [](const char* name, gd::autograd::TensorFunction fn, V inputs) {
    std::string loss_name = name;
    CAPTURE(loss_name);
    for (Tensor& t : inputs) t = t.detach().requires_grad_();
    CHECK(error_of([&] { gd::autograd::gradcheck(fn, inputs); }) == "");
    CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, inputs); }) == "");
  };
  check("cross_entropy (input, weight)", [](const V& v) {
    return V{F::cross_entropy(v[0], YI(), F::CrossEntropyFuncOptions().weight(v[1]).label_smoothing(0.2))};
  }, {X(), W()});
  check("cross_entropy (input, probabilities, weight)", [](const V& v) {
    return V{F::cross_entropy(v[0], v[1], F::CrossEntropyFuncOptions().weight(v[2]).label_smoothing(0.2).reduction(gd::kNone))};
  }, {X3(), P3(), W3()});
  check("nll_loss (input, weight) spatial", [](const V& v) {
    return V{F::nll_loss(v[0], Y4(), F::NLLLossFuncOptions().weight(v[1]))};
  }, {X4(), W3()});
  check("binary_cross_entropy (input, target, weight)", [](const V& v) {
    return V{F::binary_cross_entropy(v[0], v[1], F::BinaryCrossEntropyFuncOptions().weight(v[2]).reduction(gd::kSum))};
  }, {PB(), T({0.2, 0.9, 0.3, 0.5, 0.7, 0.1}, {2, 3}), WB()});
  check("binary_cross_entropy_with_logits (input, target, weight, pos_weight)", [](const V& v) {
    return V{F::binary_cross_entropy_with_logits(
        v[0], v[1], F::BinaryCrossEntropyWithLogitsFuncOptions().weight(v[2]).pos_weight(v[3]))};
  }, {XB(), TB(), WB(), PW()});
  check("mse_loss (input, broadcast target)", [](const V& v) { return V{F::mse_loss(v[0], v[1])}; }, {R(), RB()});
  check("huber_loss (input, target)", [](const V& v) { return V{F::huber_loss(v[0], v[1])}; }, {R(), RT()});
  check("kl_div (input, positive target)", [](const V& v) { return V{F::kl_div(v[0], v[1], gd::kBatchMean)}; },
        {KI(), T({0.2, 0.5, 0.3, 0.1, 0.6, 0.3}, {2, 3})});
  check("kl_div log_target (input, target)", [](const V& v) {
    return V{F::kl_div(v[0], v[1], F::KLDivFuncOptions(gd::kSum).log_target(true))};
  }, {KI(), KL()});
}

TEST_CASE("an ignored target sends nothing back, even through a -inf log-probability") {
  // Closed form: the ignored row adds 0 and gets a zero gradient (PyTorch's kernel skips it).
  Tensor logp = T({-INF, -0.5, -1.5, -0.25}, {2, 2}).requires_grad_();
  Tensor loss = F::nll_loss(logp, L({-100, 1}, {2}));
  CHECK(loss.item<double>() == 0.25);
  loss.backward();
  CHECK(mismatch(logp.grad(), {0, 0, 0, -1}) == "");
}

TEST_CASE("cross_entropy and binary_cross_entropy_with_logits stay finite at extreme logits") {
  // PyTorch 1.13 in float32 with big = 1e4 and in float64 with big = 1e300:
  //   XS = [[big,-big,0,big/2],[-big,big,big,-big],[0,0,-big,big]], YS = [1,2,0], WS = [0.5,1,2,1.5],
  //   PS = [[.1,.2,.3,.4],[.7,.1,.1,.1],[0,.5,0,.5]]; XL = [big,-big,0,big,-big,big/2], TL = [0,1,.5,1,0,.3]
  struct Extreme {
    gd::ScalarType dtype;
    double big, rtol;
    std::vector<double> ce, ce_grad, ce_options, ce_options_grad, ce_prob, ce_prob_grad, ce_none, ce_none_grad;
    std::vector<double> bcel_none, bcel_none_grad, bcel_options, bcel_options_grad;
  };
  const std::vector<Extreme> table = {
      {gd::kFloat32, 1e4, 1e-6,
       {10000.2314453125},
       {0.3333333432674408, -0.3333333432674408, 0.0, 0.0, 0.0, 0.1666666716337204, -0.1666666716337204, 0.0,
        -0.3333333432674408, 0.0, 0.0, 0.3333333432674408},
       {20188.833984375},
       {1.0124999284744263, -0.9249999523162842, -0.05000000074505806, -0.03750000149011612, -0.012500000186264515,
        0.9375, -0.8874999284744263, -0.03750000149011612, 0.0, 0.0, 0.0, 0.0},
       {9587.6953125},
       {0.45750001072883606, -0.06833333522081375, -0.1966666877269745, -0.19249999523162842, -0.10916666686534882,
        0.10249999910593033, 0.06416666507720947, -0.057499997317790985, -0.004166666883975267, -0.15833333134651184,
        -0.01666666753590107, 0.17916665971279144},
       {20000.0, 0.6931471824645996, 10000.0},
       {1.0, -1.0, 0.0, 0.0, 0.0, 0.5, -0.5, 0.0, -1.0, 0.0, 0.0, 1.0},
       {10000.0, 10000.0, 0.6931471824645996, 0.0, 0.0, 3500.0},
       {1.0, -1.0, 0.0, 0.0, 0.0, 0.699999988079071},
       {14500.4619140625},
       {0.3333333432674408, -1.0, -0.1666666716337204, 0.0, 0.0, 0.23333336412906647}},
      {gd::kFloat64, 1e300, 1e-13,
       {1e+300},
       {0.3333333333333333, -0.3333333333333333, 0.0, 0.0, 0.0, 0.16666666666666666, -0.16666666666666666, 0.0,
        -0.3333333333333333, 0.0, 0.0, 0.3333333333333333},
       {2.01875e+300},
       {1.0125000000000002, -0.925, -0.05, -0.037500000000000006, -0.0125, 0.9375000000000001, -0.8875,
        -0.037500000000000006, 0.0, 0.0, 0.0, 0.0},
       {9.587500000000001e+299},
       {0.4575, -0.06833333333333333, -0.19666666666666668, -0.19250000000000003, -0.10916666666666666,
        0.10250000000000001, 0.06416666666666666, -0.05750000000000001, -0.004166666666666667, -0.15833333333333333,
        -0.016666666666666666, 0.17916666666666667},
       {2e+300, 0.6931471805599453, 1e+300},
       {1.0, -1.0, 0.0, 0.0, 0.0, 0.5, -0.5, 0.0, -1.0, 0.0, 0.0, 1.0},
       {1e+300, 1e+300, 0.6931471805599453, 0.0, 0.0, 3.5e+299},
       {1.0, -1.0, 0.0, 0.0, 0.0, 0.7},
       {1.45e+300},
       {0.3333333333333333, -1.0, -0.16666666666666666, 0.0, 0.0, 0.2333333333333333}},
  };
  for (const Extreme& e : table) {
    CAPTURE(e.big);
    const double b = e.big;
    Tensor xs = T({b, -b, 0, b / 2, -b, b, b, -b, 0, 0, -b, b}, {3, 4}, e.dtype);
    Tensor ys = L({1, 2, 0}, {3});
    Tensor ws = T({0.5, 1, 2, 1.5}, {4}, e.dtype);
    Tensor ps = T({0.1, 0.2, 0.3, 0.4, 0.7, 0.1, 0.1, 0.1, 0, 0.5, 0, 0.5}, {3, 4}, e.dtype);
    Tensor xl = T({b, -b, 0, b, -b, b / 2}, {6}, e.dtype);
    Tensor tl = T({0, 1, 0.5, 1, 0, 0.3}, {6}, e.dtype);
    using Loss = std::function<Tensor(const Tensor&)>;
    auto check = [&](const char* name, const Tensor& input, const Loss& f, const std::vector<double>& value,
                     const std::vector<double>& grad) {
      std::string loss_name = name;
    CAPTURE(loss_name);
      Tensor x = input.detach().requires_grad_();
      Tensor loss = f(x);
      CHECK(loss.dtype() == e.dtype);
      Tensor g = gd::autograd::grad({loss.sum()}, {x})[0];
      CHECK(loss.isfinite().all().item<bool>());
      CHECK(g.isfinite().all().item<bool>());
      CHECK(mismatch(loss, value, e.rtol) == "");
      CHECK(shape_value_mismatch(g, grad, g.sizes().vec(), e.rtol, 1e-7) == "");
    };
    check("cross_entropy", xs, [&](const Tensor& x) { return F::cross_entropy(x, ys); }, e.ce, e.ce_grad);
    check("cross_entropy weight label_smoothing ignore_index sum", xs, [&](const Tensor& x) {
      return F::cross_entropy(
          x, ys, F::CrossEntropyFuncOptions().weight(ws).label_smoothing(0.1).ignore_index(0).reduction(gd::kSum));
    }, e.ce_options, e.ce_options_grad);
    check("cross_entropy probabilities weight label_smoothing", xs, [&](const Tensor& x) {
      return F::cross_entropy(x, ps, F::CrossEntropyFuncOptions().weight(ws).label_smoothing(0.1));
    }, e.ce_prob, e.ce_prob_grad);
    check("cross_entropy none", xs, [&](const Tensor& x) { return F::cross_entropy(x, ys, F::CrossEntropyFuncOptions().reduction(gd::kNone)); },
          e.ce_none, e.ce_none_grad);
    check("binary_cross_entropy_with_logits none", xl, [&](const Tensor& x) {
      return F::binary_cross_entropy_with_logits(x, tl, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(gd::kNone));
    }, e.bcel_none, e.bcel_none_grad);
    check("binary_cross_entropy_with_logits pos_weight weight", xl, [&](const Tensor& x) {
      return F::binary_cross_entropy_with_logits(x, tl, F::BinaryCrossEntropyWithLogitsFuncOptions()
                                                            .weight(gd::full({6}, 2.0, e.dtype))
                                                            .pos_weight(gd::full({1}, 3.0, e.dtype)));
    }, e.bcel_options, e.bcel_options_grad);
  }
}

TEST_CASE("losses reject bad shapes, dtypes and options with PyTorch's messages") {
  Tensor x = X(), x3 = X3(), x4 = X4(), x5 = X5();
  struct Case {
    std::function<Tensor()> f;
    std::string message;
  };
  // Messages as PyTorch 1.13 raises them for the same calls (libtorch prints sizes as [2, 3]).
  const std::vector<Case> table = {
      {[&] { return F::cross_entropy(x, L({0, 1, 2, 3}, {4})); }, "Expected input batch_size (3) to match target batch_size (4)."},
      {[&] { return F::cross_entropy(x, L({0, 5, 2}, {3})); }, "Target 5 is out of bounds."},
      {[&] { return F::cross_entropy(x, L({0, -1, 2}, {3})); }, "Target -1 is out of bounds."},
      {[&] { return F::cross_entropy(x, L({0, 4, 2}, {3}), F::CrossEntropyFuncOptions().label_smoothing(0.1)); },
       "Target 4 is out of bounds."},
      {[&] { return F::nll_loss(x, L({7, 7, 9}, {3}), F::NLLLossFuncOptions().ignore_index(7)); }, "Target 9 is out of bounds."},
      {[&] { return F::cross_entropy(x, T({0, 1, 2}, {3})); }, "expected scalar type Long but found Double"},
      {[&] { return F::cross_entropy(x, T({0, 1, 2}, {3}, gd::kInt32)); }, "expected scalar type Long but found Int"},
      {[&] { return F::cross_entropy(x, T({0, 1, 1}, {3}, gd::kBool)); }, "expected scalar type Long but found Bool"},
      {[&] { return F::cross_entropy(x, gd::zeros({3, 4}, gd::kInt64)); },
       "Expected floating point type for target with class probabilities, got Long"},
      {[&] { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().ignore_index(1)); },
       "ignore_index is not supported for floating point target"},
      {[&] { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().label_smoothing(1.5)); },
       "label_smoothing must be between 0.0 and 1.0. Got: 1.5"},
      {[&] { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().label_smoothing(1.5)); },
       "label_smoothing must be between 0.0 and 1.0. Got: 1.5"},
      {[&] { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().label_smoothing(-0.5)); },
       "label_smoothing must be between 0.0 and 1.0. Got: -0.5"},
      {[&] { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(gd::ones({4 - 1}, gd::kFloat64))); },
       "weight tensor should be defined either for all 4 classes or no classes but got weight tensor of shape: [3]"},
      {[&] { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(gd::ones({1, 4}, gd::kFloat64))); },
       "weight tensor should be defined either for all 4 classes or no classes but got weight tensor of shape: [1, 4]"},
      {[&] { return F::cross_entropy(x, P(), F::CrossEntropyFuncOptions().weight(gd::ones({3}, gd::kFloat64))); },
       "cross_entropy: weight tensor should be defined either for all 4 classes or no classes but got weight tensor "
       "of shape: [3]"},
      {[&] { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().weight(gd::ones({4}, gd::kFloat32))); },
       "expected scalar type Double but found Float"},
      {[&] { return F::cross_entropy(x4, Y4(), F::CrossEntropyFuncOptions().weight(gd::ones({2}, gd::kFloat64))); },
       "weight tensor should be defined either for all or no classes"},
      {[&] { return F::cross_entropy(x, L({0, 0, 0, 0, 0, 0}, {3, 2})); },
       "0D or 1D target tensor expected, multi-target not supported"},
      {[&] { return F::cross_entropy(XU(), L({1}, {1})); }, "size mismatch (got input: [4], target: [1])"},
      {[&] { return F::cross_entropy(x, L({1}, {1}).reshape({})); }, "Expected input batch_size (3) to match target batch_size (0)."},
      {[&] { return F::cross_entropy(x4, L({0, 0, 0, 0}, {1, 4})); },
       "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"},
      {[&] { return F::cross_entropy(x4, L({0, 0, 0, 0}, {1, 1, 4})); },
       "size mismatch (got input: [1, 3, 2, 2] , target: [1, 1, 4]"},
      {[&] { return F::cross_entropy(x4, L({0, 0, 0, 0, 0, 0, 0, 0}, {2, 2, 2})); },
       "Expected input batch_size (1) to match target batch_size (2)."},
      {[&] { return F::cross_entropy(x4, L({0, 0, 3, 0}, {1, 2, 2})); }, "Target 3 is out of bounds."},
      {[&] { return F::cross_entropy(x3, L({0, 0, 0, 0, 0, 0}, {2, 3})); },
       "Expected target size [2, 2], got [2, 3]"},
      {[&] { return F::cross_entropy(x3, L({0, 0, 0, 0}, {2, 2, 1})); }, "Expected target size [2, 2], got [2, 2, 1]"},
      {[&] { return F::cross_entropy(x5, L({0, 0}, {1, 2})); }, "Expected target size [1, 1, 1, 2], got [1, 2]"},
      {[&] { return F::nll_loss(x3, L({0, 0}, {2})); }, "Expected target size [2, 2], got [2]"},
      {[&] { return F::nll_loss(gd::testing::scalar_of(1.0), L({0}, {1}).reshape({})); }, "Expected 1 or more dimensions (got 0)"},
      {[&] { return F::nll_loss(gd::zeros({3, 4}, gd::kInt64), Y()); }, "\"nll_loss_out_frame\" not implemented for 'Long'"},
      {[&] { return F::binary_cross_entropy(PB(), TB().reshape({6})); },
       "Using a target size ([6]) that is different to the input size ([2, 3]) is deprecated. Please ensure they have "
       "the same size."},
      {[&] { return F::binary_cross_entropy(T({0.5, 1.5}, {2}), T({0, 1}, {2})); },
       "all elements of input should be between 0 and 1"},
      {[&] { return F::binary_cross_entropy(T({0.5, -0.5}, {2}), T({0, 1}, {2})); },
       "all elements of input should be between 0 and 1"},
      {[&] { return F::binary_cross_entropy(T({0.5, NAN_}, {2}), T({0, 1}, {2})); },
       "all elements of input should be between 0 and 1"},
      {[&] { return F::binary_cross_entropy(T({0.5, 0.5}, {2}, gd::kFloat32), T({0, 1}, {2})); },
       "Found dtype Double but expected Float"},
      {[&] { return F::binary_cross_entropy(T({0.5, 0.5}, {2}), L({0, 1}, {2})); }, "Found dtype Long but expected Double"},
      {[&] { return F::binary_cross_entropy(L({0, 1}, {2}), L({0, 1}, {2})); },
       "\"binary_cross_entropy\" not implemented for 'Long'"},
      {[&] { return F::binary_cross_entropy_with_logits(XB(), TB().reshape({6})); },
       "Target size ([6]) must be the same as input size ([2, 3])"},
      {[&] { return F::binary_cross_entropy_with_logits(T({0.5, 0.5}, {2}, gd::kFloat32), L({0, 1}, {2})); },
       "result type Float can't be cast to the desired output type Long"},
      {[&] { return F::mse_loss(L({0, 1}, {2}), L({0, 1}, {2})); }, "\"mse_cpu\" not implemented for 'Long'"},
      {[&] { return F::huber_loss(R(), RT(), F::HuberLossFuncOptions().delta(0)); },
       "huber_loss does not support non-positive values for delta."},
      {[&] { return F::huber_loss(R(), RT(), F::HuberLossFuncOptions().delta(-1)); },
       "huber_loss does not support non-positive values for delta."},
      {[&] { return F::huber_loss(L({0, 1}, {2}), L({0, 1}, {2})); }, "\"huber_cpu\" not implemented for 'Long'"},
      {[&] { return F::smooth_l1_loss(R(), RT(), F::SmoothL1LossFuncOptions().beta(-1)); },
       "smooth_l1_loss does not support negative values for beta."},
      {[&] { return F::smooth_l1_loss(L({0, 1}, {2}), L({0, 1}, {2})); }, "\"smooth_l1_cpu\" not implemented for 'Long'"},
      {[&] { return F::kl_div(R(), L({0, 1, 0, 1, 0, 1}, {2, 3})); }, "kl_div: Integral inputs not supported."},
      {[&] { return F::mse_loss(R(), RT(), gd::kBatchMean); }, "batchmean is not a valid value for reduction"},
      {[&] { return F::cross_entropy(x, Y(), F::CrossEntropyFuncOptions().reduction(gd::kBatchMean)); },
       "batchmean is not a valid value for reduction"},
      {[&] { return F::nll_loss(x, Y(), F::NLLLossFuncOptions().reduction("avg")); },
       "avg is not a valid value for reduction"},
  };
  for (const Case& c : table) {
    CAPTURE(c.message);
    CHECK(error_of(c.f) == c.message);
  }
}

TEST_CASE("empty batches and all-ignored targets give PyTorch's NaN means") {
  // PyTorch 1.13: F.nll_loss(x, [-100]*3) -> nan (with or without weight), F.nll_loss(zeros(0,5), zeros(0)) -> nan,
  // F.cross_entropy(zeros(0,5), zeros(0,5)) -> nan, F.mse_loss(ones(0), ones(0)) -> nan; sums are 0.
  Tensor ignored = L({-100, -100, -100}, {3});
  CHECK(std::isnan(F::nll_loss(X(), ignored).item<double>()));
  CHECK(std::isnan(F::nll_loss(X(), ignored, F::NLLLossFuncOptions().weight(W())).item<double>()));
  CHECK(std::isnan(F::cross_entropy(X(), ignored, F::CrossEntropyFuncOptions().label_smoothing(0.1)).item<double>()));
  CHECK(F::cross_entropy(X(), ignored, F::CrossEntropyFuncOptions().reduction(gd::kSum)).item<double>() == 0);
  CHECK(std::isnan(F::nll_loss(gd::zeros({0, 5}, gd::kFloat64), gd::zeros({0}, gd::kInt64)).item<double>()));
  CHECK(std::isnan(F::cross_entropy(gd::zeros({0, 5}, gd::kFloat64), gd::zeros({0, 5}, gd::kFloat64)).item<double>()));
  CHECK(std::isnan(F::mse_loss(gd::zeros({0}, gd::kFloat64), gd::zeros({0}, gd::kFloat64)).item<double>()));
  CHECK(F::cross_entropy(gd::zeros({2, 3, 0}, gd::kFloat64), gd::zeros({2, 0}, gd::kInt64), gd::nn::CrossEntropyLossOptions().reduction(gd::kNone)).sizes().vec() ==
        std::vector<int64_t>{2, 0});
}

TEST_CASE("options follow libtorch: defaults, chaining, reductions by constant or name") {
  F::CrossEntropyFuncOptions ce;
  CHECK(!ce.weight().defined());
  CHECK(ce.ignore_index() == -100);
  CHECK(ce.reduction() == gd::kMean);
  CHECK(ce.label_smoothing() == 0.0);
  auto chained = F::CrossEntropyFuncOptions().reduction(gd::kSum).weight(W()).ignore_index(3).label_smoothing(0.1);
  CHECK(chained.reduction() == gd::kSum);
  CHECK(chained.ignore_index() == 3);
  CHECK(chained.label_smoothing() == 0.1);
  CHECK(F::KLDivFuncOptions().reduction() == gd::kMean);
  CHECK(!F::KLDivFuncOptions().log_target());
  CHECK(F::HuberLossFuncOptions().delta() == 1.0);
  CHECK(F::SmoothL1LossFuncOptions().beta() == 1.0);
  CHECK(F::BinaryCrossEntropyWithLogitsFuncOptions().reduction("none").reduction() == gd::kNone);
  CHECK(F::MSELossFuncOptions().reduction("batchmean").reduction() == gd::kBatchMean);
  for (auto r : {gd::kNone, gd::kMean, gd::kSum, gd::kBatchMean})
    CHECK(gd::nn::reduction_from_name(gd::nn::reduction_name(r)) == r);
  // A reduction converts to the reduction-only options, as in libtorch: F::mse_loss(x, y, torch::kSum).
  CHECK(F::mse_loss(R(), RT(), gd::kSum).item<double>() == doctest::Approx(F::mse_loss(R(), RT()).item<double>() * 6));
}
