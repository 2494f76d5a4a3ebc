// nn::utils::parametrize and parametrizations (weight_norm, spectral_norm):
// values and gradients against PyTorch 1.13, state_dict keys and round trips,
// removal, errors, gradcheck, training across forwards and earlier graphs.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "gradiens.h"
#include "nn/utils/parametrizations.h"
#include "nn/utils/parametrize.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace nn = gradiens::nn;
namespace P = gradiens::nn::utils::parametrize;
namespace PZ = gradiens::nn::utils::parametrizations;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::shape_value_mismatch;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

// The reference script (PyTorch 1.13, float64) builds the same modules from these
// numbers. Its weight_norm is 1.13's register_parametrization with a _WeightNorm
// module as torch.nn.utils.parametrizations.weight_norm of PyTorch 2.x:
//   forward(g, v) = torch._weight_norm(v, g, dim);
//   right_inverse(w) = (torch.norm_except_dim(w, 2, dim), w); registered with unsafe=True.
//   W = [[0.5, -1.2, 0.3], [0.8, 0.1, -0.7]]; b = [0.1, -0.2]
//   X = [[1, 2, -1], [0.5, -0.3, 0.2], [-1.5, 0.4, 0.9], [0, 1.1, -0.6]]
//   Cube: weight = arange(1, 25).sin().reshape(2, 3, 4); forward(x) = (weight * x).sum((1, 2));
//         its input Xc = arange(12).cos().reshape(3, 4)
//   spectral: Ws = [[0.9, -0.4, 0.3, 0.2], [0.1, 0.8, -0.5, 0.6], [-0.7, 0.2, 0.4, -0.3]];
//             bs = [0.05, -0.1, 0.2]; Xs = [[1, -0.5, 0.25, 2], [-1.5, 0.5, 1, -0.2]]
namespace {

Tensor W() { return tensor_of({0.5, -1.2, 0.3, 0.8, 0.1, -0.7}, {2, 3}); }
Tensor B() { return tensor_of({0.1, -0.2}); }
Tensor X() { return tensor_of({1, 2, -1, 0.5, -0.3, 0.2, -1.5, 0.4, 0.9, 0.0, 1.1, -0.6}, {4, 3}); }
Tensor Ws() { return tensor_of({0.9, -0.4, 0.3, 0.2, 0.1, 0.8, -0.5, 0.6, -0.7, 0.2, 0.4, -0.3}, {3, 4}); }
Tensor Bs() { return tensor_of({0.05, -0.1, 0.2}); }
Tensor Xs() { return tensor_of({1.0, -0.5, 0.25, 2.0, -1.5, 0.5, 1.0, -0.2}, {2, 4}); }
Tensor Xc() { return gd::arange(0, 12, 1, gd::kFloat64).cos().reshape({3, 4}); }

nn::Linear linear_with(const Tensor& weight, const Tensor& bias) {
  nn::Linear lin(weight.size(1), weight.size(0));
  lin->to(gd::kFloat64);
  gd::NoGradGuard no_grad;
  lin->weight.copy_(weight);
  lin->bias.copy_(bias);
  return lin;
}

// A module with a 3-D weight, to see which dimension a parametrization works along.
class CubeImpl : public nn::Module {
 public:
  CubeImpl() : Module("Cube") {
    weight = register_parameter("weight", gd::arange(1, 25, 1, gd::kFloat64).sin().reshape({2, 3, 4}));
  }
  Tensor forward(const Tensor& x) { return (weight * x).sum({1, 2}); }
  Tensor weight;
};
GRADIENS_MODULE(Cube);

std::vector<std::string> keys_of(const gd::OrderedDict<std::string, Tensor>& d) { return d.keys(); }

void set_(Tensor t, const Tensor& value) {
  gd::NoGradGuard no_grad;
  t.copy_(value);
}

PZ::SpectralNormParametrization& spectral_of(nn::Module& m, const std::string& name = "weight") {
  return dynamic_cast<PZ::SpectralNormParametrization&>(*P::parametrizations_of(m, name)[0]);
}

// weight = triu(X) + triu(X, 1)^T, as the Symmetric example of PyTorch's docs.
class Symmetric : public P::Parametrization {
 public:
  Symmetric() : Parametrization("Symmetric") {}
  Tensor forward(const Tensor& x) override { return x.triu() + x.triu(1).t(); }
  std::optional<P::Originals> right_inverse(const Tensor& a) override { return a.triu(); }
};

// Scales by a constant; no right_inverse.
class Scale : public P::Parametrization {
 public:
  explicit Scale(double factor) : Parametrization("Scale"), factor(factor) {}
  Tensor forward(const Tensor& x) override { return x * factor; }
  double factor;
};

// Changes the shape: refused unless unsafe.
class Transpose : public P::Parametrization {
 public:
  Transpose() : Parametrization("Transpose") {}
  Tensor forward(const Tensor& x) override { return x.t(); }
};

}  // namespace

TEST_CASE("weight_norm on Linear: keys, printing, output and gradients match PyTorch") {
  nn::Linear lin = linear_with(W(), B());
  PZ::weight_norm(*lin);
  CHECK(keys_of(lin->state_dict()) ==
        std::vector<std::string>{"bias", "parametrizations.weight.original0", "parametrizations.weight.original1"});
  CHECK(keys_of(lin->named_parameters()) ==
        std::vector<std::string>{"bias", "parametrizations.weight.original0", "parametrizations.weight.original1"});
  CHECK(lin->named_modules().keys() ==
        std::vector<std::string>{"", "parametrizations", "parametrizations.weight", "parametrizations.weight.0"});
  CHECK(P::is_parametrized(*lin));
  CHECK(P::is_parametrized(*lin, "weight"));
  CHECK_FALSE(P::is_parametrized(*lin, "bias"));
  // PyTorch's print (it swaps the class to ParametrizedLinear).
  CHECK(lin->repr() ==
        "ParametrizedLinear(\n  in_features=3, out_features=2, bias=True\n  (parametrizations): ModuleDict(\n"
        "    (weight): ParametrizationList(\n      (0): _WeightNorm()\n    )\n  )\n)");

  P::ParametrizationListImpl& list = P::parametrizations_of(*lin, "weight");
  CHECK_FALSE(list.is_tensor());
  CHECK(list.ntensors() == 2);
  Tensor g = list.original(0), v = list.original(1);
  CHECK(shape_value_mismatch(g, {1.3341664064126333, 1.0677078252031311}, {2, 1}) == "");
  CHECK(value_mismatch(v, W(), 0, 0) == "");
  // g v / |v| is the weight itself right after registration.
  CHECK(value_mismatch(lin->weight, W(), 1e-15, 1e-15) == "");
  CHECK_FALSE(lin->weight.is_leaf());

  set_(g, tensor_of({1.5, 0.75}, {2, 1}));
  Tensor x = X().requires_grad_();
  Tensor out = lin(x);
  CHECK(value_mismatch(out, tensor_of({-2.373454573686343, 0.9941469097666598, 0.8532793474408407,
                                       -0.03843894750215779, -0.9793256321540403, -1.4573664520484242,
                                       -1.5864463002406883, 0.17229286010372336},
                                      {4, 2})) == "");
  CHECK(value_mismatch(lin->weight, tensor_of({0.5621487667468961, -1.3491570401925506, 0.33728926004813764,
                                               0.5619514869490164, 0.07024393586862705, -0.4917075510803893},
                                              {2, 3})) == "");
  out.square().sum().backward();
  CHECK(value_mismatch(g.grad(), tensor_of({13.66114337510265, 8.206758160390843}, {2, 1})) == "");
  CHECK(value_mismatch(v.grad(), tensor_of({-6.830537938947748, -2.2396866149770225, 2.4254834383381545,
                                            0.12144307347850342, 1.7168803734874392, 0.38406070875935233},
                                           {2, 3})) == "");
  CHECK(value_mismatch(lin->bias.grad(), tensor_of({-8.171894317280461, -0.6587312593603978})) == "");
  CHECK(value_mismatch(x.grad(), tensor_of({-1.5511444546768272, 6.543991478879563, -2.5787405586640713,
                                            0.9161382182977441, -2.3078158836278293, 0.6134053609101451,
                                            -2.738991882234485, 2.4377858313337315, 0.7725641426960708,
                                            -1.5899972045289856, 4.304935446945795, -1.2396179980490507},
                                           {4, 3})) == "");
}

TEST_CASE("weight_norm dim handling on a 3-D weight (PyTorch's norm_except_dim)") {
  struct Row {
    std::optional<int64_t> dim;
    std::vector<int64_t> g_shape;
    std::vector<double> g, out, grad_g;
  };
  // From the reference script: g at registration; then g <- 1.5 g + 0.25, out = m(Xc),
  // out.square().sum().backward().
  const std::vector<Row> rows = {
      {0, {2, 1, 1}, {2.5078519778915065, 2.498807156054909}, {8.350208264950851, 4.495699015024435},
       {34.76063662766608, 10.110177265746552}},
      {1, {1, 3, 1}, {1.9470916694084837, 2.1799699785176503, 1.9974793290162989},
       {8.469555959955986, 4.55632132021503}, {22.140625291980257, 20.166979706949885, 13.492659315755166}},
      {2, {1, 1, 4}, {1.8969103727935896, 1.6571713622330988, 1.6164631410097692, 1.8910102521416896},
       {8.567987313849205, 4.604928897550344},
       {17.222081756867016, 11.221647617572527, 18.283084008687158, 18.2476152807716}},
      {std::nullopt, {}, {3.540248401760188}, {8.19846368652291, 4.413005282713568}, {31.18115588272957}},
      {-1, {}, {3.540248401760188}, {8.19846368652291, 4.413005282713568}, {31.18115588272957}},
      {-2, {1, 3, 1}, {1.9470916694084837, 2.1799699785176503, 1.9974793290162989},
       {8.469555959955986, 4.55632132021503}, {22.140625291980257, 20.166979706949885, 13.492659315755166}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.dim.value_or(-100));
    Cube m;
    PZ::weight_norm(*m, "weight", row.dim);
    P::ParametrizationListImpl& list = P::parametrizations_of(*m, "weight");
    Tensor g = list.original(0), v = list.original(1);
    CHECK(shape_value_mismatch(g, row.g, row.g_shape) == "");
    set_(g, g * 1.5 + 0.25);
    Tensor out = m(Xc());
    CHECK(value_mismatch(values_of(out), row.out) == "");
    out.square().sum().backward();
    CHECK(value_mismatch(values_of(g.grad()), row.grad_g) == "");
    // The weight in closed form: v scaled by g over v's norm across the other dimensions.
    Tensor norm = v.detach().norm(2);
    if (row.dim && *row.dim != -1) {
      int64_t d = *row.dim < 0 ? *row.dim + 3 : *row.dim;
      std::vector<int64_t> others;
      for (int64_t k = 0; k < 3; ++k)
        if (k != d) others.push_back(k);
      norm = v.detach().square().sum(others, /*keepdim=*/true).sqrt();
    }
    CHECK(value_mismatch(m->weight, v.detach() * g.detach() / norm) == "");
    // Gradients of v (and g) by finite differences, first and second order.
    auto wn = std::make_shared<PZ::WeightNormParametrization>(row.dim);
    auto fn = [wn](const std::vector<Tensor>& in) { return std::vector<Tensor>{wn->forward_originals(in).sin()}; };
    std::vector<Tensor> inputs{g.detach().clone().requires_grad_(), v.detach().clone().requires_grad_()};
    CHECK(gd::autograd::gradcheck(fn, inputs));
    CHECK(gd::autograd::gradgradcheck(fn, inputs));
  }
}

TEST_CASE("spectral_norm on Linear: power iteration, outputs and gradients match PyTorch") {
  gd::manual_seed(0);
  nn::Linear lin = linear_with(Ws(), Bs());
  PZ::spectral_norm(*lin);
  CHECK(keys_of(lin->state_dict()) ==
        std::vector<std::string>{"bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                 "parametrizations.weight.0._v"});
  CHECK(keys_of(lin->named_buffers()) ==
        std::vector<std::string>{"parametrizations.weight.0._u", "parametrizations.weight.0._v"});
  CHECK(lin->repr() ==
        "ParametrizedLinear(\n  in_features=4, out_features=3, bias=True\n  (parametrizations): ModuleDict(\n"
        "    (weight): ParametrizationList(\n      (0): _SpectralNorm()\n    )\n  )\n)");
  PZ::SpectralNormParametrization& sn = spectral_of(*lin);
  Tensor original = P::parametrizations_of(*lin, "weight").original();
  CHECK(value_mismatch(original, Ws(), 0, 0) == "");
  // 15 + 1 power iterations from a random start approach the largest singular
  // value 1.2697134791160791 (numpy.linalg.svd) from below; the second is 1.1797,
  // so convergence is slow (PyTorch reaches 1.26487 from its start).
  double sigma = sn.u.dot(Ws().mv(sn.v)).item<double>();
  CHECK(sigma <= 1.2697134791160791 + 1e-12);
  CHECK(sigma > 1.25);
  CHECK(value_mismatch(lin->weight, Ws() / sigma, 1e-12, 1e-12) == "");

  // From here both start at u = [1, 0, 0], v = [0.5, 0.5, 0.5, 0.5].
  set_(sn.u, tensor_of({1, 0, 0}));
  set_(sn.v, tensor_of({0.5, 0.5, 0.5, 0.5}));
  struct Step {
    std::vector<double> out, u, v;
    double sigma;
  };
  const std::vector<Step> steps = {
      {{1.4543604796812175, 0.5910345217479006, -0.9591546816416396, -1.1002381071674734, -0.42991325554415905,
        1.6355684903407999},
       {0.6804138174397718, 0.6804138174397717, -0.2721655269759086},
       {0.7765709409860642, 0.19414273524651599, -0.2184105771523305, 0.5581603638337336},
       1.1215069227507148},
      {{1.3305936369155258, 0.5301333768949411, -0.8569979225334496, -0.9988671692831925, -0.40083787025952033,
        1.5090512732914263},
       {0.5484282631000502, 0.5564054014724144, -0.6242110776375115},
       {0.8018335270952056, 0.08204808184230002, -0.2954379547760292, 0.5128815866940617},
       1.229898349169991},
      {{1.323038944524302, 0.52641598857545, -0.8507623034168841, -0.9926795164675235, -0.3990631171263439,
        1.501328698847064},
       {0.5695083895260868, 0.4872508846592561, -0.6620020918835341},
       {0.8282303297838368, 0.023922570816033457, -0.2728536799760547, 0.4888896611253232},
       1.2371970290261092},
  };
  std::vector<Tensor> outs;
  for (const Step& step : steps) {
    outs.push_back(lin(Xs()));
    CHECK(value_mismatch(values_of(outs.back()), step.out, 1e-12, 1e-14) == "");
    CHECK(value_mismatch(values_of(sn.u), step.u, 1e-12, 1e-14) == "");
    CHECK(value_mismatch(values_of(sn.v), step.v, 1e-12, 1e-14) == "");
    CHECK(sn.u.dot(Ws().mv(sn.v)).item<double>() == doctest::Approx(step.sigma).epsilon(1e-12));
  }
  outs[2].square().sum().backward(Tensor(), /*retain_graph=*/true);
  CHECK(value_mismatch(original.grad(),
                       tensor_of({-0.041448189462443885, -2.004245328866837, 0.4412175525129445, 1.8906786956599069,
                                  -2.106085946946226, -0.8614067910316375, 0.8606071305399516, -0.4857135965149162,
                                  0.3165420083515498, 2.0551636759277323, 0.3264670993258558, -0.08843271904218408},
                                 {3, 4}),
                       1e-12, 1e-14) == "");
  CHECK(value_mismatch(lin->bias.grad(), tensor_of({0.6607188561135571, 0.25470574289821224, 1.3011327908603598}),
                       1e-12, 1e-14) == "");
  // The first forward's graph still holds its own weight, u and v after two more forwards.
  lin->zero_grad();
  outs[0].square().sum().backward(Tensor(), /*retain_graph=*/true);
  CHECK(value_mismatch(original.grad(),
                       tensor_of({-1.358972268533856, -4.0017422253658435, 0.6257294636155986, 0.623322923173566,
                                  -4.691654746827718, -2.6342510592881045, 1.4362342459226949, -2.694921215039196,
                                  -3.3273107133502755, 3.0031703883795524, 1.7133530261806191, -2.0217937147316967},
                                 {3, 4}),
                       1e-12, 1e-14) == "");

  // Eval mode: the stored u and v, no iteration.
  lin->eval();
  CHECK_FALSE(sn.is_training());
  Tensor u_before = sn.u.clone();
  CHECK(value_mismatch(values_of(lin(Xs())), steps[2].out, 1e-12, 1e-14) == "");
  CHECK(value_mismatch(sn.u, u_before, 0, 0) == "");
}

TEST_CASE("spectral_norm on a 3-D weight along dim 1 and 0, and on a vector") {
  struct Row {
    int64_t dim;
    std::vector<double> out, u, v, grad_original;
  };
  // Reference: u, v set to normalize(arange(1, rows + 1)) and normalize(ones(columns)),
  // one training forward on Xc, then out.square().sum().backward().
  const std::vector<Row> rows = {
      {1,
       {2.702090413366398, 1.4544602165107468},
       {0.7450406723088475, -0.06188266561872039, -0.6641422530614224},
       {0.2135652415144336, 0.5466721546950049, 0.3771712099567974, -0.13909920580153703, -0.09479390816835465,
        0.40914891944289844, 0.5369221174052662, 0.17105159676844026},
       {1.2462427650896937, -2.459289655736118, -3.90376250867347, -1.7591341142596209, -1.699711670480857,
        1.1233505581809626, 2.913609464247729, 2.0251092656836036, 0.975768616344798, 0.9907478030389898,
        0.09483802868672164, -0.888265391872141, 2.194346830214262, -2.158279145415807, -4.52659322816482,
        -2.7331783723933096, -1.0414510532773467, 0.6739824940428998, 1.7697596445696235, 1.238427939543794,
        -0.8328711553814079, 1.2771904298060293, 2.213009023895244, 1.1141973272291736}},
      {0,
       {4.394182606708004, 2.3652664447959206},
       {-0.5318993890892504, 0.8468075577641487},
       {-0.0772593352706027, 0.29901128404159655, 0.40037230776713856, 0.1336328781430703, -0.25596800336614456,
        -0.41023308303745354, -0.18733175805091987, 0.20780152136296465, 0.41188304036155454, 0.23728119154769123,
        -0.15547589049683988, -0.4052891558323812},
       {5.675169399015654, 10.665622283314669, 5.850151227371405, -4.343921887662475, -10.54421325220164,
        -7.05020357979741, 2.9257307501929324, 10.211761721154534, 8.109146059638668, -1.4489810918659147,
        -9.674921709827645, -9.005783925961287, 6.725307733010114, -8.464749514493098, -15.87235509556379,
        -8.686990600888963, 6.485152990133464, 15.694876829842505, 10.474803292827225, -4.375756084583038,
        -15.203265497660746, -12.05296272564022, 2.178778391248444, 14.407360703174641}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.dim);
    Cube m;
    PZ::spectral_norm(*m, "weight", 1, 1e-12, row.dim);
    PZ::SpectralNormParametrization& sn = spectral_of(*m);
    int64_t h = row.dim == 1 ? 3 : 2, w = row.dim == 1 ? 8 : 12;
    CHECK(sn.u.sizes() == gd::IntArrayRef({h}));
    CHECK(sn.v.sizes() == gd::IntArrayRef({w}));
    set_(sn.u, gd::arange(1, h + 1, 1, gd::kFloat64) / gd::arange(1, h + 1, 1, gd::kFloat64).norm());
    set_(sn.v, gd::ones({w}, gd::kFloat64) / std::sqrt(static_cast<double>(w)));
    Tensor out = m(Xc());
    CHECK(value_mismatch(values_of(out), row.out, 1e-12, 1e-14) == "");
    CHECK(value_mismatch(values_of(sn.u), row.u, 1e-12, 1e-14) == "");
    CHECK(value_mismatch(values_of(sn.v), row.v, 1e-12, 1e-14) == "");
    out.square().sum().backward();
    CHECK(value_mismatch(values_of(P::parametrizations_of(*m, "weight").original().grad()), row.grad_original, 1e-12,
                         1e-13) == "");
  }

  // A vector is divided by its norm, without u and v.
  nn::Module vec;
  vec.register_parameter("weight", tensor_of({3.0, -4.0, 12.0}));
  PZ::spectral_norm(vec);
  CHECK(keys_of(vec.state_dict()) == std::vector<std::string>{"parametrizations.weight.original"});
  CHECK(value_mismatch(P::recompute(vec, "weight"), tensor_of({3.0 / 13, -4.0 / 13, 12.0 / 13})) == "");
}

TEST_CASE("weight_norm and spectral_norm: gradcheck and gradgradcheck in float64") {
  Tensor w = Ws();
  auto sn = std::make_shared<PZ::SpectralNormParametrization>(w, 1, 0);
  sn->eval();  // fixed u and v: a function of the weight alone
  auto spectral = [sn](const std::vector<Tensor>& in) { return std::vector<Tensor>{sn->forward(in[0])}; };
  CHECK(gd::autograd::gradcheck(spectral, {w.clone().requires_grad_()}));
  CHECK(gd::autograd::gradgradcheck(spectral, {w.clone().requires_grad_()}));

  // Through a whole parametrized layer: the input gradient and its derivative.
  nn::Linear lin = linear_with(W(), B());
  PZ::weight_norm(*lin);
  auto layer = [&lin](const std::vector<Tensor>& in) { return std::vector<Tensor>{lin(in[0]).tanh()}; };
  CHECK(gd::autograd::gradcheck(layer, {X().requires_grad_()}));
  CHECK(gd::autograd::gradgradcheck(layer, {X().requires_grad_()}));
}

TEST_CASE("weight_norm: two SGD steps on g, v and b match PyTorch") {
  nn::Linear lin = linear_with(W(), B());
  PZ::weight_norm(*lin);
  std::vector<Tensor> params = lin->parameters();  // collected after registration
  CHECK(params.size() == 3);
  const std::vector<double> losses = {3.6828, 2.5454744248681274};
  for (double want : losses) {
    Tensor loss = (lin(X()) - 1.0).square().mean();
    CHECK(loss.item<double>() == doctest::Approx(want).epsilon(1e-13));
    loss.backward();
    gd::NoGradGuard no_grad;
    for (Tensor& p : params) {
      p.sub_(p.grad() * 0.1);
      p.set_grad(Tensor());
    }
  }
  CHECK((lin(X()) - 1.0).square().mean().item<double>() == doctest::Approx(1.81373035787247).epsilon(1e-13));
  P::ParametrizationListImpl& list = P::parametrizations_of(*lin, "weight");
  CHECK(value_mismatch(list.original(0), tensor_of({0.9350094406461038, 0.820887501415641}, {2, 1}), 1e-12) == "");
  CHECK(value_mismatch(list.original(1),
                       tensor_of({0.6591830518989125, -1.1354939693067514, 0.26817896528966534, 0.7737781365617458,
                                  0.1528291700592699, -0.7210290491950117},
                                 {2, 3}),
                       1e-12) == "");
  CHECK(value_mismatch(lin->bias, tensor_of({0.440886387630474, -0.003870285565263573}), 1e-12, 1e-14) == "");
}

TEST_CASE("parametrized modules: state_dict round trip into a fresh parametrized module") {
  nn::Linear a = linear_with(W(), B());
  PZ::weight_norm(*a);
  set_(P::parametrizations_of(*a, "weight").original(0), tensor_of({1.5, 0.75}, {2, 1}));
  nn::Linear b(3, 2);
  b->to(gd::kFloat64);
  PZ::weight_norm(*b);
  b->load_state_dict(a->state_dict());
  CHECK(value_mismatch(b(X()), a(X()), 0, 0) == "");

  gd::manual_seed(1);
  nn::Linear c = linear_with(Ws(), Bs());
  PZ::spectral_norm(*c);
  c(Xs());
  c(Xs());
  nn::Linear d(4, 3);
  d->to(gd::kFloat64);
  PZ::spectral_norm(*d);
  d->load_state_dict(c->state_dict());
  CHECK(value_mismatch(spectral_of(*d).u, spectral_of(*c).u, 0, 0) == "");
  c->eval();
  d->eval();
  CHECK(value_mismatch(d(Xs()), c(Xs()), 0, 0) == "");
  // recompute refreshes the module's handle after loading, without a forward.
  nn::Linear e(3, 2);
  e->to(gd::kFloat64);
  PZ::weight_norm(*e);
  e->load_state_dict(a->state_dict());
  CHECK(value_mismatch(P::recompute(*e, "weight"), a->weight, 0, 0) == "");
  CHECK(e->weight.is_same(P::recompute(*e, "weight")));
}

TEST_CASE("remove_parametrizations: a plain leaf parameter again, through the module's own handle") {
  nn::Linear lin = linear_with(W(), B());
  PZ::weight_norm(*lin);
  set_(P::parametrizations_of(*lin, "weight").original(0), tensor_of({1.5, 0.75}, {2, 1}));
  CHECK(error_of([&] { P::remove_parametrizations(*lin, "weight", /*leave_parametrized=*/false); }) ==
        "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a "
        "sequence of tensors.");
  Tensor handle = lin->weight;
  P::remove_parametrizations(*lin, "weight");
  CHECK_FALSE(P::is_parametrized(*lin));
  CHECK(lin->name() == "Linear");
  CHECK(lin->named_children().is_empty());
  CHECK(keys_of(lin->state_dict()) == std::vector<std::string>{"bias", "weight"});  // as PyTorch
  CHECK(lin->named_parameters()["weight"].is_same(lin->weight));
  CHECK(lin->weight.is_same(handle));
  CHECK(lin->weight.is_leaf());
  CHECK(lin->weight.requires_grad());
  // The value PyTorch's weight had (test above).
  CHECK(value_mismatch(lin->weight, tensor_of({0.5621487667468961, -1.3491570401925506, 0.33728926004813764,
                                               0.5619514869490164, 0.07024393586862705, -0.4917075510803893},
                                              {2, 3})) == "");
  // No hook is left: an in-place change of the weight shows in the next forward,
  // and gradients land in the weight itself.
  set_(lin->weight, W());
  lin(X()).sum().backward();
  CHECK(value_mismatch(lin(X()), X().matmul(W().t()) + B()) == "");
  CHECK(value_mismatch(lin->weight.grad(), X().sum({0}).unsqueeze(0).expand({2, 3})) == "");

  // leave_parametrized = false keeps the original (spectral norm has one).
  nn::Linear sn = linear_with(Ws(), Bs());
  PZ::spectral_norm(*sn);
  sn(Xs());
  P::remove_parametrizations(*sn, "weight", /*leave_parametrized=*/false);
  CHECK(value_mismatch(sn->weight, Ws(), 0, 0) == "");
  CHECK(keys_of(sn->state_dict()) == std::vector<std::string>{"bias", "weight"});
}

TEST_CASE("parametrized weights under create_graph: second derivatives reach the originals") {
  // u = lin2(tanh(lin1(x))), loss = sum (du/dx)^2, as a PINN residual; lin1 weight-normed.
  // Reference: the same computation with the weight built by hand from leaves g and v.
  nn::Linear lin1 = linear_with(W(), B());
  nn::Linear lin2 = linear_with(tensor_of({0.7, -0.4}, {1, 2}), tensor_of({0.05}));
  PZ::weight_norm(*lin1);
  P::ParametrizationListImpl& list = P::parametrizations_of(*lin1, "weight");
  set_(list.original(0), tensor_of({1.5, 0.75}, {2, 1}));
  auto residual = [](const std::function<Tensor(const Tensor&)>& net) {
    Tensor x = X().requires_grad_();
    Tensor u = net(x);
    Tensor du = gd::autograd::grad({u}, {x}, {gd::ones_like(u)}, true, /*create_graph=*/true)[0];
    return du.square().sum();
  };
  residual([&](const Tensor& x) { return lin2(lin1(x).tanh()); }).backward();

  Tensor g = list.original(0).detach().clone().requires_grad_();
  Tensor v = list.original(1).detach().clone().requires_grad_();
  Tensor w2 = lin2->weight.detach();
  residual([&](const Tensor& x) {
    Tensor w = v * (g / v.square().sum({1}, true).sqrt());
    return (x.matmul(w.t()) + B()).tanh().matmul(w2.t()) + 0.05;
  }).backward();
  CHECK(value_mismatch(list.original(0).grad(), g.grad(), 1e-12, 1e-14) == "");
  CHECK(value_mismatch(list.original(1).grad(), v.grad(), 1e-12, 1e-14) == "");

  // After removal the weight is a leaf that double backward reaches like any other.
  P::remove_parametrizations(*lin1, "weight");
  nn::Linear plain = linear_with(lin1->weight.detach(), B());
  lin1->zero_grad();
  residual([&](const Tensor& x) { return lin2(lin1(x).tanh()); }).backward();
  residual([&](const Tensor& x) { return lin2(plain(x).tanh()); }).backward();
  REQUIRE(lin1->weight.grad().defined());
  CHECK(value_mismatch(lin1->weight.grad(), plain->weight.grad(), 0, 0) == "");

  // Cube's forward saves the weight itself (not a view of it) for backward:
  // du/dx = sum_i weight[i], so d/dweight sum (du/dx)^2 = 2 sum_i weight[i] in every slice.
  Cube cube;
  PZ::weight_norm(*cube);
  P::remove_parametrizations(*cube, "weight");
  Tensor x = Xc().requires_grad_();
  Tensor u = cube(x);
  gd::autograd::grad({u}, {x}, {gd::ones_like(u)}, true, /*create_graph=*/true)[0].square().sum().backward();
  REQUIRE(cube->weight.grad().defined());
  CHECK(value_mismatch(cube->weight.grad(), (cube->weight.detach().sum({0}, true) * 2.0).expand({2, 3, 4}), 1e-14,
                       1e-14) == "");
}

TEST_CASE("register_parametrization: a custom chain, buffers, and right_inverse") {
  nn::Linear lin = linear_with(tensor_of({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}), tensor_of({0, 0, 0}));
  P::register_parametrization(*lin, "weight", std::make_shared<Symmetric>());
  P::ParametrizationListImpl& list = P::parametrizations_of(*lin, "weight");
  CHECK(list.is_tensor());
  CHECK(value_mismatch(list.original(), tensor_of({1, 2, 3, 0, 5, 6, 0, 0, 9}, {3, 3})) == "");
  CHECK(value_mismatch(lin->weight, tensor_of({1, 2, 3, 2, 5, 6, 3, 6, 9}, {3, 3})) == "");
  P::register_parametrization(*lin, "weight", std::make_shared<Scale>(2.0));
  CHECK(list.size() == 2);
  CHECK(keys_of(lin->state_dict()) == std::vector<std::string>{"bias", "parametrizations.weight.original"});
  CHECK(list.repr() == "ParametrizationList(\n  (0): Symmetric()\n  (1): Scale()\n)");
  CHECK(value_mismatch(lin->weight, tensor_of({2, 4, 6, 4, 10, 12, 6, 12, 18}, {3, 3})) == "");
  // d/dX sum(weight * R) = 2 (triu(R) + triu(R^T, 1)) for weight = 2 (triu(X) + triu(X, 1)^T).
  Tensor r = tensor_of({1, -2, 3, 0.5, 4, -1, 2, 0.25, -3}, {3, 3});
  Tensor x = gd::eye(3, gd::kFloat64);
  (lin(x) * r.t()).sum().backward();  // lin(I) = weight^T
  CHECK(value_mismatch(list.original().grad(), (r.triu() + r.t().triu(1)) * 2.0) == "");
  // Scale has no right_inverse, so the chain cannot be assigned to.
  CHECK(error_of([&] { list.right_inverse(x); }) == "parametrization Scale does not implement right_inverse.");

  // A buffer stays a buffer, before and after.
  nn::Module holder;
  holder.register_buffer("scale", tensor_of({1, 2}));
  P::register_parametrization(holder, "scale", std::make_shared<Scale>(3.0));
  CHECK(keys_of(holder.named_buffers()) == std::vector<std::string>{"parametrizations.scale.original"});
  CHECK(holder.named_parameters().is_empty());
  CHECK(value_mismatch(P::recompute(holder, "scale"), tensor_of({3, 6})) == "");
  P::remove_parametrizations(holder, "scale");
  CHECK(keys_of(holder.named_buffers()) == std::vector<std::string>{"scale"});
  CHECK(value_mismatch(holder.buffer("scale"), tensor_of({3, 6})) == "");
}

TEST_CASE("parametrize: errors with PyTorch's messages") {
  nn::Linear lin = linear_with(W(), B());
  CHECK(error_of([&] { P::register_parametrization(*lin, "foo", std::make_shared<Scale>(1.0)); }) ==
        "Module 'Linear(in_features=3, out_features=2, bias=True)' does not have a parameter, a buffer, or a "
        "parametrized element with name 'foo'");
  CHECK(error_of([&] { P::remove_parametrizations(*lin, "weight"); }) ==
        "Module Linear(in_features=3, out_features=2, bias=True) does not have a parametrization on weight");
  CHECK(error_of([&] { P::register_parametrization(*lin, "weight", std::make_shared<Transpose>()); }) ==
        "Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag is enabled.\n"
        "unparametrized shape: torch.Size([2, 3])\nparametrized shape: torch.Size([3, 2])");
  CHECK_FALSE(P::is_parametrized(*lin));  // a refused registration changes nothing
  CHECK(keys_of(lin->state_dict()) == std::vector<std::string>{"weight", "bias"});
  CHECK(error_of([&] { PZ::spectral_norm(*lin, "foo"); }) ==
        "Module 'Linear(in_features=3, out_features=2, bias=True)' has no parameter or buffer with name 'foo'");
  CHECK(error_of([&] { PZ::spectral_norm(*lin, "weight", 1, 1e-12, 2); }) ==
        "Dimension out of range (expected to be in range of [-2, 1] but got 2)");
  CHECK(error_of([&] { PZ::spectral_norm(*lin, "weight", 0); }) ==
        "Expected n_power_iterations to be positive, but got n_power_iterations=0");
  PZ::weight_norm(*lin);
  CHECK(error_of([&] { P::register_parametrization(*lin, "weight", std::make_shared<Transpose>()); }) ==
        "Registering a parametrization may not change the shape of the tensor, unless the `unsafe` flag is "
        "enabled.\nmodule.weight.shape: torch.Size([2, 3])\nparametrization(module.weight).shape: torch.Size([3, "
        "2])");
}
