// Tests of optim::LBFGS against PyTorch 1.13's torch.optim.LBFGS: Rosenbrock
// trajectories, flattening of several tensors, the early stops, state_dict, errors.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "optim/lbfgs.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace optim = gradiens::optim;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

// The references below come from PyTorch 1.13 (float64 unless said), with
//   def rosen(x): return (100 * (x[1:] - x[:-1].square()).square() + (1 - x[:-1]).square()).sum()
//   def quad(x): return (torch.tensor([1., 10., 100.]) * (x - 1).square()).sum()
//   x = torch.tensor(x0, requires_grad=True); opt = torch.optim.LBFGS([x], **options)
//   def closure(): opt.zero_grad(); l = f(x); l.backward(); return l
//   for each step: l = opt.step(closure)
//     -> l.item(), x.tolist(), opt.state[x]['n_iter'], opt.state[x]['func_evals']
// X10 = [-1.2, 1.0] * 5. The runs here stay within 5e-12 of PyTorch's. For
// Rosenbrock the difference is only PyTorch's fused multiply-add in add_ and
// OpenBLAS's order of summation in dot: with both replaced by plain loops,
// lbfgs.py reproduces these trajectories bit for bit. (Beyond the step kept,
// the 2-D fixed-step run with lr 1 amplifies them towards 1e-10.)
Tensor rosenbrock(const Tensor& x) {
  int64_t n = x.numel();
  Tensor head = x.slice(0, 0, n - 1);
  Tensor tail = x.slice(0, 1, n);
  return (100 * (tail - head.square()).square() + (1 - head).square()).sum();
}

Tensor quadratic(const Tensor& x) { return (tensor_of({1.0, 10.0, 100.0}, {3}, x.dtype()) * (x - 1).square()).sum(); }

Tensor smooth_abs_8(const Tensor& x) { return ((x - 0.3).square() + 1e-8).sqrt().sum(); }
Tensor smooth_abs_20(const Tensor& x) { return ((x - 0.3).square() + 1e-20).sqrt().sum(); }
Tensor wave(const Tensor& x) { return (0.1 * x.square() + (3 * x).sin()).sum(); }
Tensor linear(const Tensor& x) { return -x.sum(); }

using Objective = std::function<Tensor(const Tensor&)>;

const std::vector<double> kX10 = {-1.2, 1.0, -1.2, 1.0, -1.2, 1.0, -1.2, 1.0, -1.2, 1.0};

const optim::LBFGSParamState& lbfgs_state(const optim::LBFGS& opt, const Tensor& param) {
  const optim::OptimizerParamState* state = opt.state(param);
  REQUIRE(state != nullptr);
  return static_cast<const optim::LBFGSParamState&>(*state);
}

std::function<Tensor()> closure_for(optim::LBFGS& opt, const Objective& f, const Tensor& x) {
  return [&opt, f, x] {
    opt.zero_grad();
    Tensor loss = f(x);
    loss.backward();
    return loss;
  };
}

struct Step {
  double loss;            // what step() returned
  std::vector<double> x;  // the parameters after the step
  int64_t n_iter, func_evals;
};

struct TrajectoryCase {
  const char* name;
  Objective f;
  std::vector<double> x0;
  optim::LBFGSOptions options;
  std::vector<Step> steps;
};

void check_trajectory(const TrajectoryCase& c, gd::ScalarType dtype = gd::kFloat64, double tol = 1e-10) {
  std::string name = c.name;
  CAPTURE(name);
  Tensor x = tensor_of(c.x0, {}, dtype).requires_grad_();
  optim::LBFGS opt({x}, c.options);
  auto closure = closure_for(opt, c.f, x);
  for (size_t k = 0; k < c.steps.size(); ++k) {
    CAPTURE(k);
    Tensor loss = opt.step(closure);
    CHECK(value_mismatch({loss.item<double>()}, {c.steps[k].loss}, tol, tol) == "");
    CHECK(value_mismatch(values_of(x), c.steps[k].x, tol, tol) == "");
    CHECK(lbfgs_state(opt, x).n_iter() == c.steps[k].n_iter);
    CHECK(lbfgs_state(opt, x).func_evals() == c.steps[k].func_evals);
  }
}

const std::vector<TrajectoryCase>& rosenbrock_cases() {
  static const std::vector<TrajectoryCase> cases = {
      {"2-D, fixed step lr 1",  // options: {}
       rosenbrock,
       {-1.2, 1.0},
       optim::LBFGSOptions(1),
       {
           {24.199999999999996, {-0.3929095248880504, 0.14696808489351595}, 20, 20},
       }},
      {"2-D, fixed step lr 0.1",  // options: lr=0.1
       rosenbrock,
       {-1.2, 1.0},
       optim::LBFGSOptions(0.1),
       {
           {24.199999999999996, {-1.044719587805136, 1.0623773907218077}, 20, 20},
           {4.265336005782761, {-1.005598065296723, 1.0268988811473778}, 40, 40},
           {4.0469829156153185, {-0.5499521730324247, 0.2825686431134047}, 60, 60},
           {2.4418682068948008, {-0.3693892958817383, 0.0970275043524671}, 80, 80},
       }},
      {"2-D, strong_wolfe max_iter 5",  // options: max_iter=5, line_search_fn='strong_wolfe'
       rosenbrock,
       {-1.2, 1.0},
       optim::LBFGSOptions(1).max_iter(5).line_search_fn("strong_wolfe"),
       {
           {24.199999999999996, {-1.0276177663827242, 1.0584120782656612}, 4, 6},
           {4.111816451757751, {-0.7745797354515831, 0.5476256792320806}, 9, 12},
           {3.423165462292753, {-0.2560895768966468, 0.03726198161622369}, 13, 19},
           {1.6579626408971875, {0.34184236067537654, 0.09925827373850052}, 18, 27},
           {0.4641401774955063, {0.7460759093292195, 0.5450068956869687}, 23, 34},
       }},
      {"2-D, strong_wolfe defaults",  // options: line_search_fn='strong_wolfe'
       rosenbrock,
       {-1.2, 1.0},
       optim::LBFGSOptions(1).line_search_fn("strong_wolfe"),
       {
           {24.199999999999996, {0.38062264334648777, 0.12491013187293636}, 19, 25},
           {0.4234823024380289, {0.9999814210791366, 0.9999619651810989}, 35, 44},
           {4.221457511263308e-10, {0.9999814210791366, 0.9999619651810989}, 36, 45},
       }},
      {"10-D, strong_wolfe max_iter 8 history 3",  // options: max_iter=8, history_size=3, line_search_fn='strong_wolfe'
       rosenbrock,
       kX10,
       optim::LBFGSOptions(1).max_iter(8).history_size(3).line_search_fn("strong_wolfe"),
       {
           {2057.0000000000005,
            {-0.45788998761142585, 0.21280701861455512, 0.06334966922087516, 0.013494315090301233, 0.01007580521943733,
             0.0061802125986928635, 0.010864151341658003, 0.006805731934127247, 0.014583699070126868,
             -0.0005351194468008816},
            8,
            9},
           {9.592590744578274,
            {-0.20030160391490845, 0.020304908177743112, -0.0015274418266668466, 0.0012325443247031324,
             0.017689974251020965, 0.01782290000318075, 0.013543087170107795, 0.016090078174514324, 0.00315660013053027,
             -0.004069728798421298},
            16,
            20},
           {9.412637417968616,
            {0.34114899290268413, 0.08994387443747279, 0.01255353178893721, 0.010629399129969488, 0.008695484519640403,
             0.00873809778083366, 0.010056007263463994, 0.00868462554159421, 0.01136595993811132,
             0.0010546716331703385},
            23,
            30},
           {8.249458018120086,
            {0.8705431250475799, 0.7521170440032593, 0.575176414620761, 0.30406820670543583, 0.06259456426066239,
             0.019211397761794008, 0.013082711202553242, 0.018876374301196656, -0.0010133383549945322,
             -0.0043492971983773035},
            31,
            41},
       }},
      {"10-D, fixed step lr 0.1 max_iter 10 history 5",  // options: lr=0.1, max_iter=10, history_size=5
       rosenbrock,
       kX10,
       optim::LBFGSOptions(0.1).max_iter(10).history_size(5),
       {
           {2057.0000000000005,
            {-0.9576514569837646, 0.6919269312099414, -0.8109097660332267, 0.6417270207415938, -0.8277875339257015,
             0.6487345103769001, -0.8157435517653051, 0.6208358385273466, -0.9221184156428432, 0.8428842313252572},
            10,
            10},
           {667.2421231941943,
            {-0.7653604669723459, 0.5003019241633583, -0.3881317540012955, 0.3335919516215077, -0.4856256006900864,
             0.36921095480549027, -0.4615322937559922, 0.35984161541021925, -0.4412518547933787, 0.23827549067195256},
            20,
            20},
           {165.8738500823861,
            {-0.7314220745824088, 0.5264802485571641, 0.10685616910713339, 0.1417425152601966, -0.19998345063814005,
             0.17008368197066975, -0.19935566607478852, 0.19221472247908297, -0.11797742489049667,
             0.0008390983554159951},
            30,
            30},
           {31.321663273738096,
            {-0.8003296716146223, 0.6461474375239612, 0.3857371794848707, 0.18051316192192057, -0.02006546747092913,
             0.06663636641328687, -0.04574666009207374, 0.06978937269756862, -0.03787341873533502,
             -0.004704107575252649},
            40,
            40},
       }},
  };
  return cases;
}

}  // namespace

TEST_CASE("LBFGS follows PyTorch's Rosenbrock trajectories (float64)") {
  for (const auto& c : rosenbrock_cases()) check_trajectory(c);
}

TEST_CASE("LBFGS strong_wolfe takes PyTorch's branches") {
  // The script above with these objectives; the name lists the branches of
  // _strong_wolfe and _cubic_interpolate the run reaches (PyTorch's lbfgs.py
  // instrumented), together all of them. The last case's arithmetic is exact:
  // the slope never changes, so the cubic has no minimum and each step is
  // the largest allowed, ten times the last, until 25 evaluations.
  const std::vector<TrajectoryCase> cases = {
      // f = sum(sqrt((x - 0.3)^2 + 1e-8)), x0 = [2.0, 0.25, -3.0], lr=0.1, max_iter=10, line_search_fn='strong_wolfe';
      // sensitivity 5e-16
      {"Armijo fails, Wolfe at once, slope turns, extrapolation, cubic from the left, cubic from the right, cubic "
       "without minimum, zoom: no decrease, zoom: Wolfe, zoom: high becomes low",
       smooth_abs_8,
       {2.0, 0.25, -3.0},
       optim::LBFGSOptions(0.1).max_iter(10).line_search_fn("strong_wolfe"),
       {
           {5.0500001044562275, {1.0924458726699173, 0.4632122686886915, 0.61251117994638}, 5, 12},
           {1.2681693742489442, {0.3137412103109615, 0.1770428121905063, 0.3917086528841315}, 8, 25},
           {0.22840751005375612, {0.2996355803068057, 0.2951504374465738, 0.3001177720781723}, 13, 38},
       }},
      // f = sum(sqrt((x - 0.3)^2 + 1e-20)), x0 = [1.0], max_iter=10, line_search_fn='strong_wolfe'; sensitivity 6e-17
      {"Armijo fails, slope turns, cubic from the left, bracket below 1e-9, moved off the boundary, near the boundary, "
       "zoom: Armijo fails, zoom: no decrease, zoom: Wolfe",
       smooth_abs_20,
       {1.0},
       optim::LBFGSOptions(1).max_iter(10).line_search_fn("strong_wolfe"),
       {
           {0.7, {0.299999999946009}, 1, 21},
           {1.1364429481371858e-10, {0.299999999946009}, 2, 32},
           {1.1364429481371858e-10, {0.299999999946009}, 3, 43},
       }},
      // f = sum(0.1 x^2 + sin(3 x)), x0 = [0.5, -1.0, 2.0], lr=100, history_size=1, max_iter=10,
      // line_search_fn='strong_wolfe'; sensitivity 1e-12
      {"Armijo fails, cubic from the left, moved off the boundary, near the boundary, zoom: Armijo fails, zoom: Wolfe",
       wave,
       {0.5, -1.0, 2.0},
       optim::LBFGSOptions(100).max_iter(10).history_size(1).line_search_fn("strong_wolfe"),
       {
           {1.1019594803452613, {-0.2569755640519404, -0.16270533390767028, 1.3147464087175038}, 3, 14},
           {-1.702853664910999, {-0.5094657399389094, -0.5114933836260176, 1.5355822683619857}, 6, 26},
           {-2.70494761332587, {-0.5122140243696091, -0.5122140242788807, 1.5365898657031412}, 9, 31},
       }},
      // f = rosen, x0 = [-1.2, 1.0], lr=0.001, history_size=1, max_iter=10, line_search_fn='strong_wolfe'; sensitivity
      // 1e-13
      {"no decrease, Wolfe at once, extrapolation, cubic from the left, cubic without minimum, zoom: Wolfe",
       rosenbrock,
       {-1.2, 1.0},
       optim::LBFGSOptions(0.001).max_iter(10).history_size(1).line_search_fn("strong_wolfe"),
       {
           {24.199999999999996, {-1.03300329968722, 1.0709349567374673}, 3, 12},
           {4.134576315805055, {-1.0120301721242457, 1.0434495136056798}, 6, 26},
           {4.085300277240905, {-0.5704020441446912, 0.2886285257664134}, 9, 41},
       }},
      // f = sum(-x), x0 = [0.0], lr=2**-20, max_iter=1, line_search_fn='strong_wolfe'; sensitivity 7e+02
      {"extrapolation, 25 extrapolations, cubic from the left",
       linear,
       {0.0},
       optim::LBFGSOptions(9.5367431640625e-07).max_iter(1).line_search_fn("strong_wolfe"),
       {
           {-0.0, {9.536743164062499e+18}, 1, 27},
       }},
  };
  for (const auto& c : cases) check_trajectory(c);
}

TEST_CASE("LBFGS stops early where PyTorch does") {
  // Same script, 3 steps; the name lists the stop each step reaches (PyTorch's
  // lbfgs.py instrumented at each break): the gradient's max below
  // tolerance_grad, after or before (optimal at the start) an iteration; the
  // loss change, the directional derivative or the step's max below
  // tolerance_change; max_eval; max_iter.
  const std::vector<TrajectoryCase> cases = {
      // quadratic, x0 = [0, 0, 0], tolerance_grad=0.0001, line_search_fn='strong_wolfe': sensitivity 0e+00
      {"tolerance_grad, optimal at the start, optimal at the start",
       quadratic,
       {0.0, 0.0, 0.0},
       optim::LBFGSOptions(1).tolerance_grad(0.0001).line_search_fn("strong_wolfe"),
       {
           {111.0, {1.000000175537114, 0.9999994911457937, 1.0000000475539206}, 14, 15},
           {2.8462768475864886e-12, {1.000000175537114, 0.9999994911457937, 1.0000000475539206}, 14, 16},
           {2.8462768475864886e-12, {1.000000175537114, 0.9999994911457937, 1.0000000475539206}, 14, 17},
       }},
      // quadratic, x0 = [0, 0, 0], lr=0.5, tolerance_grad=0.001: sensitivity 3e-16
      {"max_iter, tolerance_grad, optimal at the start",
       quadratic,
       {0.0, 0.0, 0.0},
       optim::LBFGSOptions(0.5).tolerance_grad(0.001),
       {
           {111.0, {0.9923695874407649, 1.004257003410048, 0.9995039241664367}, 20, 20},
           {0.0002640530994202825, {0.999948965244906, 1.000034637619326, 0.9999959494009589}, 27, 28},
           {1.6242928212457283e-08, {0.999948965244906, 1.000034637619326, 0.9999959494009589}, 27, 29},
       }},
      // quadratic, x0 = [0, 0, 0], tolerance_change=0.01: sensitivity 2e-16
      {"loss change, directional derivative, directional derivative",
       quadratic,
       {0.0, 0.0, 0.0},
       optim::LBFGSOptions(1).tolerance_change(0.01),
       {
           {111.0, {1.0078883333011344, 1.0038330178622075, 0.9995231111068449}, 11, 12},
           {0.00023188836323127131, {1.0078883333011344, 1.0038330178622075, 0.9995231111068449}, 12, 13},
           {0.00023188836323127131, {1.0078883333011344, 1.0038330178622075, 0.9995231111068449}, 13, 14},
       }},
      // rosenbrock, x0 = X10, lr=0.1, tolerance_change=0.0001, line_search_fn='strong_wolfe': sensitivity 2e-16
      {"loss change, directional derivative, directional derivative",
       rosenbrock,
       kX10,
       optim::LBFGSOptions(0.1).tolerance_change(0.0001).line_search_fn("strong_wolfe"),
       {
           {2057.0000000000005,
            {-0.5361889671117541, 0.3012861217145906, 0.10205311366433246, 0.020618333566663594, 0.010483265105631556,
             0.01018785325685046, 0.010153270890654617, 0.010214677333774992, 0.010127793299720736,
             0.00018430887373141415},
            13,
            24},
           {9.604553108400081,
            {-0.5361889671117541, 0.3012861217145906, 0.10205311366433246, 0.020618333566663594, 0.010483265105631556,
             0.01018785325685046, 0.010153270890654617, 0.010214677333774992, 0.010127793299720736,
             0.00018430887373141415},
            14,
            25},
           {9.604553108400081,
            {-0.5361889671117541, 0.3012861217145906, 0.10205311366433246, 0.020618333566663594, 0.010483265105631556,
             0.01018785325685046, 0.010153270890654617, 0.010214677333774992, 0.010127793299720736,
             0.00018430887373141415},
            15,
            26},
       }},
      // rosenbrock, x0 = [-1.2, 1], lr=0.1, tolerance_change=0.01: sensitivity 0e+00
      {"step length, step length, step length",
       rosenbrock,
       {-1.2, 1.0},
       optim::LBFGSOptions(0.1).tolerance_change(0.01),
       {
           {24.199999999999996, {-1.1208360338970624, 1.0326372109383015}, 2, 3},
           {9.499260654115307, {-1.1128546149688603, 1.0363447882087733}, 3, 5},
           {8.548620112437053, {-1.1055651417532057, 1.0398185126407882}, 4, 7},
       }},
      // rosenbrock, x0 = X10, lr=0.1, tolerance_change=0.001, line_search_fn='strong_wolfe': sensitivity 1e-15
      {"step length, step length, directional derivative",
       rosenbrock,
       kX10,
       optim::LBFGSOptions(0.1).tolerance_change(0.001).line_search_fn("strong_wolfe"),
       {
           {2057.0000000000005,
            {-0.53543052490432, 0.3037081544600049, 0.10841084325130809, 0.02196574956934971, 0.018741985680165732,
             0.005344209490968705, 0.017853612726403366, 0.004140390074282492, 0.010422152150339613,
             -0.002941887664318304},
            10,
            19},
           {9.628055775046395,
            {-0.535601010638267, 0.3035071319138547, 0.10784959661005768, 0.02178915621857023, 0.017925281194856767,
             0.005774347724694987, 0.017070055618799176, 0.004706692363175786, 0.010482297459393794,
             -0.002554365363986451},
            11,
            21},
           {9.623668743563199,
            {-0.536242514564035, 0.3019588040268007, 0.10211593716405, 0.020390378030237133, 0.010498688160905783,
             0.010055771593379913, 0.01022090982556402, 0.009952816011896778, 0.009895275268406695,
             0.0005699725160058671},
            13,
            24},
       }},
      // quadratic, x0 = [1.001] * 3, tolerance_change=0.1: sensitivity 0e+00
      {"directional derivative, directional derivative, directional derivative",
       quadratic,
       {1.001, 1.001, 1.001},
       optim::LBFGSOptions(1).tolerance_change(0.1),
       {
           {0.00011099999999997554, {1.001, 1.001, 1.001}, 1, 1},
           {0.00011099999999997554, {1.001, 1.001, 1.001}, 2, 2},
           {0.00011099999999997554, {1.001, 1.001, 1.001}, 3, 3},
       }},
      // rosenbrock, x0 = X10, max_iter=6, max_eval=5, history_size=2, line_search_fn='strong_wolfe': sensitivity 3e-16
      {"max_eval, max_eval, max_eval",
       rosenbrock,
       kX10,
       optim::LBFGSOptions(1).max_iter(6).max_eval(5).history_size(2).line_search_fn("strong_wolfe"),
       {
           {2057.0000000000005,
            {-0.5606144031142571, 0.3286115192828315, -0.15890245612018333, 0.11397215530694108, -0.20006873615217635,
             0.13298973212813306, -0.16488244082815884, 0.06793309187933791, -0.5987169025083005, 0.612812366807608},
            4,
            5},
           {71.69153523695061,
            {-0.46635145629324304, 0.22585348068921812, 0.06714242546738562, 0.018778325043633574, 0.009158235676564394,
             0.009476119713581274, 0.008909859303595937, 0.010538184357233676, 0.012741588762702434,
             -0.0020377616904840926},
            8,
            10},
           {9.586512982177855,
            {-0.457450526865304, 0.22188692840212468, 0.06082594991490034, 0.012095542241792859, 0.010976269180551251,
             0.010248371641406044, 0.011016630521043463, 0.009891739002617375, 0.00949454138189738,
             0.0003153817040672849},
            12,
            15},
       }},
      // rosenbrock, x0 = [-1.2, 1], max_iter=1: sensitivity 4e-16
      {"max_iter, max_iter, max_iter",
       rosenbrock,
       {-1.2, 1.0},
       optim::LBFGSOptions(1).max_iter(1),
       {
           {24.199999999999996, {-0.4898550724637681, 1.289855072463768}, 1, 1},
           {112.44805608969924, {-0.8216710990752794, 1.0682753957715367}, 2, 2},
           {18.773762591899434, {-1.3655416389879744, 0.9379760551938527}, 3, 3},
       }},
  };
  for (const auto& c : cases) check_trajectory(c);
}

TEST_CASE("LBFGS flattens several tensors in parameter order") {
  // PyTorch: a = torch.tensor(X10[:6]).view(2, 3), b = torch.tensor(X10[6:]), c = torch.zeros(3), all
  // requiring grad; opt = torch.optim.LBFGS([a, b, c], max_iter=8, history_size=3,
  // line_search_fn='strong_wolfe'); closure: l = rosen(torch.cat([b, a.flatten()])); 3 steps
  // -> l.item(), a.flatten().tolist(), b.tolist(); c keeps no gradient and stays zero.
  struct Expected {
    double loss;
    std::vector<double> a, b;
  };
  const std::vector<Expected> expected = {
      {2057.0000000000005,
       {0.010075805219437324, 0.006180212598692877, 0.010864151341657994, 0.006805731934127271, 0.0145836990701269,
        -0.0005351194468009093},
       {-0.4578899876114258, 0.212807018614555, 0.06334966922087512, 0.013494315090301228}},
      {9.592590744578276,
       {0.0176899742510208, 0.017822900003180608, 0.01354308717010771, 0.016090078174514185, 0.003156600130530501,
        -0.004069728798421249},
       {-0.20030160391491036, 0.020304908177743674, -0.0015274418266665096, 0.0012325443247032909}},
      {9.412637417968616,
       {0.008695484519638834, 0.008738097780832387, 0.010056007263463288, 0.008684625541593192, 0.011365959938112857,
        0.0010546716331708771},
       {0.34114899290269546, 0.08994387443748039, 0.01255353178894279, 0.010629399129970886}},
  };
  const std::vector<double> a0(kX10.begin(), kX10.begin() + 6), b0(kX10.begin() + 6, kX10.end());
  for (bool transposed : {false, true}) {
    CAPTURE(transposed);
    // PyTorch's view(-1) rejects a non-contiguous gradient; here `a` is then a transposed leaf, taken in
    // its logical (row-major) order, so the trajectory is the same.
    Tensor a =
        transposed ? tensor_of({a0[0], a0[3], a0[1], a0[4], a0[2], a0[5]}, {3, 2}).t().detach() : tensor_of(a0, {2, 3});
    a.requires_grad_();
    CHECK(a.is_contiguous() == !transposed);
    Tensor b = tensor_of(b0).requires_grad_();
    Tensor c = gd::zeros({3}, gd::TensorOptions().dtype(gd::kFloat64)).requires_grad_();
    optim::LBFGS opt({a, b, c}, optim::LBFGSOptions(1).max_iter(8).history_size(3).line_search_fn("strong_wolfe"));
    auto closure = [&] {
      opt.zero_grad();
      Tensor loss = rosenbrock(gd::cat({b, a.flatten()}));
      loss.backward();
      return loss;
    };
    for (size_t k = 0; k < expected.size(); ++k) {
      CAPTURE(k);
      Tensor loss = opt.step(closure);
      CHECK(value_mismatch({loss.item<double>()}, {expected[k].loss}, 1e-10, 1e-10) == "");
      CHECK(value_mismatch(values_of(a), expected[k].a, 1e-10, 1e-10) == "");
      CHECK(value_mismatch(values_of(b), expected[k].b, 1e-10, 1e-10) == "");
      CHECK(values_of(c) == std::vector<double>{0, 0, 0});
      CHECK_FALSE(c.grad().defined());
    }
    // The state lives with the first parameter and spans all 13 elements.
    CHECK(opt.state(b) == nullptr);
    CHECK(lbfgs_state(opt, a).d().sizes().vec() == std::vector<int64_t>{13});
  }
}

TEST_CASE("LBFGS in float32 follows PyTorch's float32 run") {
  // PyTorch: as the float64 table's "2-D, strong_wolfe max_iter 5" case with
  // torch.tensor(x0, dtype=torch.float32). Its dot products accumulate in float
  // (OpenBLAS sdot), ours in double, hence 1e-5; the counts are the same.
  // (With dot and add_ replaced by plain loops, lbfgs.py gives our values bit
  // for bit: the float32 rounding of its tensor scalars is reproduced.)
  const TrajectoryCase c = {"2-D, strong_wolfe max_iter 5, float32",
                            rosenbrock,
                            {-1.2, 1.0},
                            optim::LBFGSOptions(1).max_iter(5).line_search_fn("strong_wolfe"),
                            {
                                {24.20000457763672, {-1.0276178121566772, 1.058411955833435}, 4, 6},
                                {4.111817359924316, {-0.7745743989944458, 0.5476168990135193}, 9, 12},
                                {3.423151969909668, {-0.25609004497528076, 0.037261880934238434}, 13, 19},
                            }};
  check_trajectory(c, gd::kFloat32, 1e-5);
  Tensor x = tensor_of({-1.2, 1.0}, {}, gd::kFloat32).requires_grad_();
  optim::LBFGS opt({x}, c.options);
  opt.step(closure_for(opt, rosenbrock, x));
  CHECK(lbfgs_state(opt, x).d().dtype() == gd::kFloat32);
  CHECK(lbfgs_state(opt, x).prev_flat_grad().dtype() == gd::kFloat32);
}

namespace {

// PyTorch: opt.state[x] after two steps of the float64 "10-D, strong_wolfe
// max_iter 8 history 3" case (old_dirs and old_stps by their norms).
struct ReferenceState {
  int64_t func_evals = 20, n_iter = 16;
  double t = 0.439985873392439, H_diag = 0.011358307442664048, prev_loss = 9.502326449817605;
  std::vector<double> ro = {175.20648819572997, 38.21839564488033, 118.73072141209279};
  std::vector<double> al = {-0.08506439346679849, -3.095425997630147, 2.9133448019681025};
  std::vector<double> d = {0.2589805324472776,    -0.16688864727667815,   -0.040174079002467104,  0.0003272229136305204,
                           -0.002402228747146672, -0.0030830509889155843, -0.0003639910880292401, -0.003100550055444462,
                           0.002353116261757585,  0.002413730919743048};
  std::vector<double> prev_flat_grad = {
      -3.259400548171914, -3.0924056276739047, -0.5005287101050253, -1.8404264721868153, 1.645454587484033,
      1.7016432695239812, 0.5998414577652085,  1.4755250372284443,  -1.6280772637095908, -1.0272472117343308};
  std::vector<double> old_dir_norms = {1.5675062461447036, 2.56479564158034, 0.8611159564777146};
  std::vector<double> old_stp_norms = {0.04247436851842737, 0.0753556646355246, 0.05012465529059808};
};

const optim::LBFGSOptions kStateCaseOptions =
    optim::LBFGSOptions(1).max_iter(8).history_size(3).line_search_fn("strong_wolfe");

std::vector<double> norms_of(const std::deque<Tensor>& tensors) {
  std::vector<double> out;
  for (const Tensor& t : tensors) out.push_back(t.norm().item<double>());
  return out;
}

}  // namespace

TEST_CASE("LBFGS state equals PyTorch's after two steps") {
  Tensor x = tensor_of(kX10).requires_grad_();
  optim::LBFGS opt({x}, kStateCaseOptions);
  auto closure = closure_for(opt, rosenbrock, x);
  opt.step(closure);
  opt.step(closure);
  const ReferenceState want;
  const auto& state = lbfgs_state(opt, x);
  CHECK(state.func_evals() == want.func_evals);
  CHECK(state.n_iter() == want.n_iter);
  CHECK(value_mismatch({state.t(), state.H_diag(), state.prev_loss()}, {want.t, want.H_diag, want.prev_loss}, 1e-10,
                       0) == "");
  CHECK(value_mismatch(std::vector<double>(state.ro().begin(), state.ro().end()), want.ro, 1e-10, 0) == "");
  REQUIRE(state.al().has_value());
  std::vector<double> al;
  for (const auto& a : *state.al()) al.push_back(a.value_or(-1e300));
  CHECK(value_mismatch(al, want.al, 1e-10, 0) == "");
  CHECK(value_mismatch(values_of(state.d()), want.d, 1e-10, 1e-12) == "");
  CHECK(value_mismatch(values_of(state.prev_flat_grad()), want.prev_flat_grad, 1e-10, 1e-12) == "");
  CHECK(value_mismatch(norms_of(state.old_dirs()), want.old_dir_norms, 1e-10, 0) == "");
  CHECK(value_mismatch(norms_of(state.old_stps()), want.old_stp_norms, 1e-10, 0) == "");
}

TEST_CASE("LBFGS state_dict has PyTorch's layout and resumes a run bit for bit") {
  for (gd::ScalarType dtype : {gd::kFloat64, gd::kFloat32}) {
    CAPTURE(gd::dtype_name(dtype));
    Tensor x = tensor_of(kX10, {}, dtype).requires_grad_();
    optim::LBFGS opt({x}, kStateCaseOptions);
    auto closure = closure_for(opt, rosenbrock, x);
    opt.step(closure);
    opt.step(closure);

    nlohmann::json saved = opt.state_dict();
    // PyTorch's param_groups: [{'lr': 1, 'max_iter': 8, 'max_eval': 10, 'tolerance_grad': 1e-07,
    // 'tolerance_change': 1e-09, 'history_size': 3, 'line_search_fn': 'strong_wolfe', 'params': [0]}]
    CHECK(saved["param_groups"] == nlohmann::json::parse(R"([{"lr": 1.0, "max_iter": 8, "max_eval": 10,
        "tolerance_grad": 1e-07, "tolerance_change": 1e-09, "history_size": 3, "line_search_fn": "strong_wolfe",
        "params": [0]}])"));
    const nlohmann::json& state = saved["state"]["0"];
    for (const char* key : {"func_evals", "n_iter", "d", "t", "H_diag", "prev_flat_grad", "prev_loss", "old_dirs.0",
                            "old_dirs.1", "old_dirs.2", "old_stps.0", "old_stps.1", "old_stps.2", "ro", "al"}) {
      CAPTURE(key);
      CHECK(state.contains(key));
    }
    CHECK_FALSE(state.contains("old_dirs.3"));
    CHECK(state["ro"].size() == 3);
    CHECK(state["al"].size() == 3);
    CHECK(state["n_iter"] == 16);

    // Through text, into a fresh optimizer on a copy of the parameters.
    Tensor y = x.detach().clone().requires_grad_();
    optim::LBFGS resumed({y}, optim::LBFGSOptions(0.5));
    resumed.load_state_dict(nlohmann::json::parse(saved.dump()));
    CHECK(resumed.state_dict() == saved);
    auto resumed_closure = closure_for(resumed, rosenbrock, y);
    for (int k = 0; k < 2; ++k) {
      Tensor loss = opt.step(closure);
      Tensor resumed_loss = resumed.step(resumed_closure);
      CHECK(std::bit_cast<uint64_t>(loss.item<double>()) == std::bit_cast<uint64_t>(resumed_loss.item<double>()));
      CHECK(gd::equal(x, y));
    }
    CHECK(lbfgs_state(resumed, y).func_evals() == lbfgs_state(opt, x).func_evals());
    CHECK(resumed.state_dict() == opt.state_dict());
    if (dtype == gd::kFloat64) {
      // ...and the continued run is PyTorch's (the table's steps 3 and 4).
      const auto& table = rosenbrock_cases()[4];
      CHECK(value_mismatch(values_of(y), table.steps[3].x, 1e-10, 1e-10) == "");
    }
  }
}

TEST_CASE("LBFGS state_dict keeps non-finite numbers and rejects broken states") {
  Tensor x = tensor_of(kX10).requires_grad_();
  optim::LBFGS opt({x}, kStateCaseOptions);
  opt.step(closure_for(opt, rosenbrock, x));
  nlohmann::json saved = opt.state_dict();

  nlohmann::json infinite = saved;
  infinite["state"]["0"]["prev_loss"] = "inf";
  infinite["state"]["0"]["t"] = "-inf";
  opt.load_state_dict(infinite);
  CHECK(lbfgs_state(opt, x).prev_loss() == std::numeric_limits<double>::infinity());
  CHECK(lbfgs_state(opt, x).t() == -std::numeric_limits<double>::infinity());
  CHECK(opt.state_dict() == infinite);

  nlohmann::json missing = saved;
  missing["state"]["0"].erase("old_stps.1");
  CHECK(error_of([&] { opt.load_state_dict(missing); }) == "LBFGS state: 'old_stps.1' is missing");
  nlohmann::json bad_number = saved;
  bad_number["state"]["0"]["H_diag"] = "big";
  CHECK(error_of([&] { opt.load_state_dict(bad_number); }) ==
        "LBFGS state: 'H_diag' must be a number (or \"nan\", \"inf\", \"-inf\"), got \"big\"");
  nlohmann::json bad_search = saved;
  bad_search["param_groups"][0]["line_search_fn"] = "backtracking";
  CHECK(error_of([&] { opt.load_state_dict(bad_search); }) == "only 'strong_wolfe' is supported");
  // A failed load leaves the optimizer as it was.
  CHECK(opt.state_dict() == infinite);

  // A state for 10 elements cannot drive 2.
  Tensor small = tensor_of({-1.2, 1.0}).requires_grad_();
  optim::LBFGS other({small}, kStateCaseOptions);
  other.load_state_dict(saved);
  CHECK(error_of([&] { other.step(closure_for(other, rosenbrock, small)); }) ==
        "LBFGS: the state holds vectors of 10 elements but the parameters have 2");
}

TEST_CASE("LBFGSOptions defaults, max_eval and JSON") {
  Tensor x = tensor_of({1.0, 2.0}).requires_grad_();
  // PyTorch: torch.optim.LBFGS([x]).param_groups[0] (without 'params'), and max_eval = max_iter * 5 // 4.
  optim::LBFGS defaults({x});
  CHECK(defaults.param_groups()[0].options().to_json() ==
        nlohmann::json::parse(R"({"lr": 1.0, "max_iter": 20, "max_eval": 25, "tolerance_grad": 1e-07,
            "tolerance_change": 1e-09, "history_size": 100, "line_search_fn": null})"));
  struct MaxEvalCase {
    optim::LBFGSOptions options;
    int64_t max_eval;
  };
  for (const auto& [options, max_eval] :
       std::vector<MaxEvalCase>{{optim::LBFGSOptions().max_iter(10), 12},
                                {optim::LBFGSOptions().max_iter(3), 3},
                                {optim::LBFGSOptions().max_iter(10).max_eval(4), 4}}) {
    optim::LBFGS opt({x}, options);
    const auto& group = static_cast<const optim::LBFGSOptions&>(opt.param_groups()[0].options());
    CHECK(group.max_eval() == max_eval);
    CHECK(static_cast<const optim::LBFGSOptions&>(opt.defaults()).max_eval() == max_eval);
  }
  optim::LBFGSOptions options = optim::LBFGSOptions(0.25).history_size(7).line_search_fn("strong_wolfe");
  optim::LBFGSOptions read;
  read.from_json(options.to_json());
  CHECK(read.to_json() == options.to_json());
  CHECK(read.lr() == 0.25);
  CHECK(read.line_search_fn() == std::optional<std::string>("strong_wolfe"));
  CHECK_FALSE(read.max_eval().has_value());
  read.set_lr(0.5);
  CHECK(read.get_lr() == 0.5);
  CHECK(error_of([&] { read.from_json(nlohmann::json::object()); }) == "LBFGS options: 'lr' is missing");
}

TEST_CASE("LBFGS runs the closure with grad on and records nothing") {
  Tensor x = tensor_of({-1.2, 1.0}).requires_grad_();
  optim::LBFGS opt({x}, optim::LBFGSOptions(1).max_iter(3).line_search_fn("strong_wolfe"));
  std::vector<Tensor> returned;
  int grad_off = 0;
  auto closure = [&] {
    if (!gd::GradMode::is_enabled()) ++grad_off;
    opt.zero_grad();
    Tensor loss = rosenbrock(x);
    loss.backward();
    returned.push_back(loss);
    return loss;
  };
  Tensor loss;
  {
    gd::NoGradGuard no_grad;
    loss = opt.step(closure);
    CHECK_FALSE(gd::GradMode::is_enabled());
  }
  CHECK(grad_off == 0);
  CHECK(returned.size() == 3);  // PyTorch: opt.state[x]["func_evals"] after this step
  CHECK(loss.is_same(returned.front()));
  CHECK(x.is_leaf());
  CHECK(x.requires_grad());
}

TEST_CASE("LBFGS errors") {
  Tensor x = tensor_of({1.0, 2.0}).requires_grad_();
  Tensor y = tensor_of({3.0}).requires_grad_();
  optim::LBFGS opt({x});
  CHECK(error_of([&] { opt.step(); }) == "LBFGS requires a closure function");
  CHECK(error_of([&] {
          optim::LBFGS({optim::OptimizerParamGroup({x}), optim::OptimizerParamGroup({y})});
        }) == "LBFGS doesn't support per-parameter options (parameter groups)");
  CHECK(error_of([&] { optim::LBFGS({x}, optim::LBFGSOptions().line_search_fn("wolfe")); }) ==
        "only 'strong_wolfe' is supported");
  CHECK(error_of([&] { optim::LBFGS({x}, optim::LBFGSOptions().history_size(0)); }) ==
        "LBFGS: history_size must be at least 1, got 0");
  CHECK(error_of([&] { optim::LBFGS(std::vector<Tensor>{}); }) == "optimizer got an empty parameter list");

  // Options changed after construction are checked by step.
  static_cast<optim::LBFGSOptions&>(opt.param_groups()[0].options()).line_search_fn("backtracking");
  CHECK(error_of([&] { opt.step([&] { return (x * x).sum(); }); }) == "only 'strong_wolfe' is supported");
  opt.add_param_group(optim::OptimizerParamGroup({y}));
  CHECK(error_of([&] { opt.step([&] { return (x * x).sum(); }); }) ==
        "LBFGS doesn't support per-parameter options (parameter groups)");

  Tensor single = tensor_of({1.0, 2.0}).requires_grad_();
  optim::LBFGS plain({single});
  CHECK(error_of([&] { plain.step([&] { return single * 2; }); }) ==
        "only one element tensors can be converted to Python scalars");
  CHECK(error_of([&] { plain.step([&] { return Tensor(); }); }) ==
        "LBFGS: the closure must return the loss, got an undefined tensor");

  Tensor mixed = tensor_of({1.0}, {}, gd::kFloat32).requires_grad_();
  optim::LBFGS mixed_opt({single, mixed});
  CHECK(error_of([&] { mixed_opt.step([&] { return single.sum(); }); }) ==
        "LBFGS: all parameters must have one dtype, got float64 and float32");
  Tensor integers = tensor_of({1.0, 2.0}, {}, gd::kInt64);
  optim::LBFGS integer_opt({integers});
  CHECK(error_of([&] { integer_opt.step([&] { return single.sum(); }); }) ==
        "LBFGS: parameters must be float32 or float64, got int64");
}
