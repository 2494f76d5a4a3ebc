// Elementwise ops (engine/ops/unary.cpp, binary.cpp, compare.cpp): values
// against PyTorch, type promotion, broadcasting, non-contiguous inputs,
// in-place forms, and the multi-threaded path of large tensors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include <fmt/format.h>

#include "engine/dims.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Scalar;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::value_mismatch;
using gd::testing::tensor_of;
using gd::testing::values_of;

namespace {

using Unary = std::function<Tensor(const Tensor&)>;

const std::map<std::string, Unary>& unary_ops() {
  static const std::map<std::string, Unary> ops = {
      {"neg", [](const Tensor& t) { return gd::neg(t); }},
      {"exp", [](const Tensor& t) { return gd::exp(t); }},
      {"log", [](const Tensor& t) { return gd::log(t); }},
      {"log1p", [](const Tensor& t) { return gd::log1p(t); }},
      {"expm1", [](const Tensor& t) { return gd::expm1(t); }},
      {"sqrt", [](const Tensor& t) { return gd::sqrt(t); }},
      {"rsqrt", [](const Tensor& t) { return gd::rsqrt(t); }},
      {"abs", [](const Tensor& t) { return gd::abs(t); }},
      {"sign", [](const Tensor& t) { return gd::sign(t); }},
      {"reciprocal", [](const Tensor& t) { return gd::reciprocal(t); }},
      {"square", [](const Tensor& t) { return gd::square(t); }},
      {"sin", [](const Tensor& t) { return gd::sin(t); }},
      {"cos", [](const Tensor& t) { return gd::cos(t); }},
      {"tan", [](const Tensor& t) { return gd::tan(t); }},
      {"tanh", [](const Tensor& t) { return gd::tanh(t); }},
      {"sigmoid", [](const Tensor& t) { return gd::sigmoid(t); }},
      {"relu", [](const Tensor& t) { return gd::relu(t); }},
      {"gelu", [](const Tensor& t) { return gd::gelu(t); }},
      {"gelu_tanh", [](const Tensor& t) { return gd::gelu(t, "tanh"); }},
      {"silu", [](const Tensor& t) { return gd::silu(t); }},
      {"softplus", [](const Tensor& t) { return gd::softplus(t); }},
      {"softplus_b2_t1.5", [](const Tensor& t) { return gd::softplus(t, 2, 1.5); }},
      {"erf", [](const Tensor& t) { return gd::erf(t); }},
  };
  return ops;
}

// Inputs of the unary tables: X anywhere, P positive, T inside tan's branch,
// L above -1, R without zero.
const std::vector<double> X = {-2.5, -1.3, -0.4, 0.0, 0.3, 0.9, 1.7, 3.1};
const std::vector<double> P = {0.05, 0.3, 0.9, 1.7, 3.1, 12.0};
const std::vector<double> T = {-1.4, -0.7, 0.0, 0.2, 0.9, 1.3};
const std::vector<double> L = {-0.9, -0.3, 0.0, 0.4, 2.5, 10.0};
const std::vector<double> R = {-2.5, -1.3, -0.4, 0.3, 0.9, 1.7};

struct UnaryCase {
  const char* op;
  const std::vector<double>& input;
  std::vector<double> expected;
};

// PyTorch 1.13: getattr(torch, op)(torch.tensor(input, dtype=torch.float64)).tolist()
// (gelu/silu/softplus from torch.nn.functional; gelu_tanh is approximate='tanh';
// softplus_b2_t1.5 is beta=2, threshold=1.5).
const UnaryCase kUnary64[] = {
    {"neg", X, {2.5, 1.3, 0.4, -0.0, -0.3, -0.9, -1.7, -3.1}},
    {"exp", X, {0.0820849986238988, 0.2725317930340126, 0.6703200460356392, 1.0, 1.3498588075760032, 2.45960311115695, 5.473947391727199, 22.197951281441636}},
    {"log", P, {-2.995732273553991, -1.2039728043259361, -0.10536051565782628, 0.5306282510621704, 1.1314021114911006, 2.4849066497880004}},
    {"log1p", L, {-2.302585092994046, -0.35667494393873234, 0.0, 0.33647223662121295, 1.252762968495368, 2.3978952727983707}},
    {"expm1", X, {-0.9179150013761012, -0.7274682069659875, -0.32967995396436073, 0.0, 0.3498588075760031, 1.4596031111569496, 4.4739473917272, 21.197951281441636}},
    {"sqrt", P, {0.22360679774997896, 0.5477225575051661, 0.9486832980505138, 1.3038404810405297, 1.760681686165901, 3.4641016151377544}},
    {"rsqrt", P, {4.47213595499958, 1.8257418583505538, 1.0540925533894598, 0.7669649888473704, 0.5679618342470648, 0.2886751345948129}},
    {"abs", X, {2.5, 1.3, 0.4, 0.0, 0.3, 0.9, 1.7, 3.1}},
    {"sign", X, {-1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0}},
    {"reciprocal", R, {-0.4, -0.7692307692307692, -2.5, 3.3333333333333335, 1.1111111111111112, 0.5882352941176471}},
    {"square", X, {6.25, 1.6900000000000002, 0.16000000000000003, 0.0, 0.09, 0.81, 2.8899999999999997, 9.610000000000001}},
    {"sin", X, {-0.5984721441039564, -0.963558185417193, -0.3894183423086505, 0.0, 0.29552020666133955, 0.7833269096274834, 0.9916648104524686, 0.04158066243329049}},
    {"cos", X, {-0.8011436155469337, 0.26749882862458735, 0.9210609940028851, 1.0, 0.955336489125606, 0.6216099682706644, -0.12884449429552464, -0.9991351502732795}},
    {"tan", T, {-5.797883715482887, -0.8422883804630794, 0.0, 0.2027100355086725, 1.2601582175503392, 3.6021024479679786}},
    {"tanh", X, {-0.9866142981514303, -0.8617231593133063, -0.3799489622552249, 0.0, 0.2913126124515909, 0.7162978701990245, 0.935409070603099, 0.9959493592219002}},
    {"sigmoid", X, {0.07585818002124355, 0.2141650169574414, 0.401312339887548, 0.5, 0.574442516811659, 0.7109495026250039, 0.8455347349164652, 0.9568927450589139}},
    {"relu", X, {0.0, 0.0, 0.0, 0.0, 0.3, 0.9, 1.7, 3.1}},
    {"gelu", X, {-0.015524163314440398, -0.1258406299612934, -0.13783130335587032, 0.0, 0.1853734266566858, 0.7343458871879165, 1.6242387133104768, 3.097000430039023}},
    {"gelu_tanh", X, {-0.015084266089998577, -0.1260709876826906, -0.13783883057264382, 0.0, 0.18537092354275922, 0.7342284887097207, 1.624105895551156, 3.0973733897694506}},
    {"silu", X, {-0.18964545005310887, -0.2784145220446738, -0.1605249359550192, 0.0, 0.1723327550434977, 0.6398545523625035, 1.437409049357991, 2.966367509682633}},
    {"softplus", X, {0.07888973429254963, 0.2410084538329922, 0.5130152523999526, 0.6931471805599453, 0.8543552444685272, 1.2411538747320878, 1.8677860293862658, 3.144063967938574}},
    {"softplus_b2_t1.5", X, {0.003357674244559034, 0.03582234598383491, 0.18555033297388884, 0.34657359027997264, 0.5187439752429428, 0.9, 1.7, 3.1}},
    {"erf", X, {-0.999593047982555, -0.9340079449406524, -0.42839235504666845, 0.0, 0.3286267594591274, 0.7969082124228322, 0.9837904585907745, 0.9999883513426328}},
};

// The same ops in float32 (PyTorch 1.13, dtype=torch.float32), widened to double.
const UnaryCase kUnary32[] = {
    {"neg", X, {2.5, 1.2999999523162842, 0.4000000059604645, -0.0, -0.30000001192092896, -0.8999999761581421, -1.7000000476837158, -3.0999999046325684}},
    {"exp", X, {0.08208499848842621, 0.27253180742263794, 0.6703200340270996, 1.0, 1.3498587608337402, 2.4596030712127686, 5.473947525024414, 22.197948455810547}},
    {"log", P, {-2.995732307434082, -1.2039728164672852, -0.10536054521799088, 0.5306282639503479, 1.1314021348953247, 2.4849066734313965}},
    {"log1p", L, {-2.3025848865509033, -0.3566749691963196, 0.0, 0.3364722430706024, 1.2527629137039185, 2.397895336151123}},
    {"expm1", X, {-0.9179149866104126, -0.7274681925773621, -0.3296799659729004, 0.0, 0.349858820438385, 1.4596030712127686, 4.473947525024414, 21.197948455810547}},
    {"sqrt", P, {0.22360679507255554, 0.547722578048706, 0.9486832618713379, 1.3038405179977417, 1.7606816291809082, 3.464101552963257}},
    {"rsqrt", P, {4.4721360206604, 1.8257417678833008, 1.0540926456451416, 0.7669649720191956, 0.5679618716239929, 0.28867512941360474}},
    {"abs", X, {2.5, 1.2999999523162842, 0.4000000059604645, 0.0, 0.30000001192092896, 0.8999999761581421, 1.7000000476837158, 3.0999999046325684}},
    {"sign", X, {-1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0}},
    {"reciprocal", R, {-0.4000000059604645, -0.7692307829856873, -2.5, 3.3333332538604736, 1.1111111640930176, 0.5882352590560913}},
    {"square", X, {6.25, 1.6899998188018799, 0.1600000113248825, 0.0, 0.09000000357627869, 0.809999942779541, 2.890000104904175, 9.609999656677246}},
    {"sin", X, {-0.5984721183776855, -0.9635581970214844, -0.389418363571167, 0.0, 0.29552021622657776, 0.7833268642425537, 0.9916647672653198, 0.04158075898885727}},
    {"cos", X, {-0.8011435866355896, 0.2674988806247711, 0.9210609793663025, 1.0, 0.9553365111351013, 0.6216099858283997, -0.12884454429149628, -0.9991351366043091}},
    {"tan", T, {-5.797883033752441, -0.8422883749008179, 0.0, 0.20271003246307373, 1.2601581811904907, 3.6021018028259277}},
    {"tanh", X, {-0.9866142868995667, -0.8617231249809265, -0.3799489736557007, 0.0, 0.29131263494491577, 0.7162978649139404, 0.9354090690612793, 0.995949387550354}},
    {"sigmoid", X, {0.07585817575454712, 0.21416503190994263, 0.40131235122680664, 0.5, 0.5744425058364868, 0.7109494805335999, 0.8455348014831543, 0.956892728805542}},
    {"relu", X, {0.0, 0.0, 0.0, 0.0, 0.30000001192092896, 0.8999999761581421, 1.7000000476837158, 3.0999999046325684}},
    {"gelu", X, {-0.015524178743362427, -0.1258406937122345, -0.13783134520053864, 0.0, 0.1853734254837036, 0.7343459129333496, 1.6242388486862183, 3.0970001220703125}},
    {"gelu_tanh", X, {-0.015084296464920044, -0.1260710209608078, -0.13783882558345795, 0.0, 0.18537093698978424, 0.7342284917831421, 1.6241059303283691, 3.0973732471466064}},
    {"silu", X, {-0.189645454287529, -0.2784145474433899, -0.16052494943141937, 0.0, 0.172332763671875, 0.6398544907569885, 1.4374091625213623, 2.966367483139038}},
    {"softplus", X, {0.07888973504304886, 0.241008460521698, 0.5130152702331543, 0.6931471824645996, 0.8543552756309509, 1.2411538362503052, 1.8677860498428345, 3.144063949584961}},
    {"softplus_b2_t1.5", X, {0.003357674228027463, 0.03582235053181648, 0.18555033206939697, 0.3465735912322998, 0.5187439918518066, 0.8999999761581421, 1.7000000476837158, 3.0999999046325684}},
    {"erf", X, {-0.9995930194854736, -0.9340079426765442, -0.42839235067367554, 0.0, 0.3286267817020416, 0.7969081997871399, 0.9837904572486877, 0.9999883770942688}},
};

// Binary inputs: a and b anywhere (a[4] == b[4] to exercise ties), pa positive, r without zero.
const std::vector<double> A = {-2.5, -1.3, -0.4, 0.0, 0.3, 0.9, 1.7, 3.1};
const std::vector<double> B = {0.7, -2.0, 1.5, -0.3, 0.3, 2.2, -1.1, 0.5};
const std::vector<double> PA = {0.05, 0.3, 0.9, 1.7, 3.1, 12.0, 0.5, 2.0};
const std::vector<double> RA = {-2.5, -1.3, -0.4, 0.3, 0.9, 1.7, 2.0, -0.1};

using BinaryFn = std::function<Tensor(const Tensor& a, const Tensor& b, const Tensor& pa, const Tensor& r)>;
struct BinaryCase {
  const char* expression;
  BinaryFn fn;
  std::vector<double> expected;
};

// PyTorch 1.13, float64: the expression evaluated on torch tensors a, b, pa, r.
const BinaryCase kBinary[] = {
    {"a + b", [](auto& a, auto& b, auto&, auto&) { return a + b; }, {-1.8, -3.3, 1.1, -0.3, 0.6, 3.1, 0.5999999999999999, 3.6}},
    {"a - b", [](auto& a, auto& b, auto&, auto&) { return a - b; }, {-3.2, 0.7, -1.9, 0.3, 0.0, -1.3000000000000003, 2.8, 2.6}},
    {"a * b", [](auto& a, auto& b, auto&, auto&) { return a * b; }, {-1.75, 2.6, -0.6000000000000001, -0.0, 0.09, 1.9800000000000002, -1.87, 1.55}},
    {"a / b", [](auto& a, auto& b, auto&, auto&) { return a / b; }, {-3.5714285714285716, 0.65, -0.26666666666666666, -0.0, 1.0, 0.40909090909090906, -1.5454545454545452, 6.2}},
    {"add(a, b, 2.5)", [](auto& a, auto& b, auto&, auto&) { return gd::add(a, b, 2.5); }, {-0.7500000000000001, -6.3, 3.35, -0.75, 1.05, 6.4, -1.0500000000000003, 4.35}},
    {"sub(a, b, -0.5)", [](auto& a, auto& b, auto&, auto&) { return gd::sub(a, b, -0.5); }, {-2.15, -2.3, 0.35, -0.15, 0.44999999999999996, 2.0, 1.15, 3.35}},
    {"maximum(a, b)", [](auto& a, auto& b, auto&, auto&) { return gd::maximum(a, b); }, {0.7, -1.3, 1.5, 0.0, 0.3, 2.2, 1.7, 3.1}},
    {"minimum(a, b)", [](auto& a, auto& b, auto&, auto&) { return gd::minimum(a, b); }, {-2.5, -2.0, -0.4, -0.3, 0.3, 0.9, -1.1, 0.5}},
    {"pow(pa, b)", [](auto&, auto& b, auto& pa, auto&) { return gd::pow(pa, b); }, {0.12282280261157906, 11.111111111111112, 0.8538149682454624, 0.8528356053580864, 1.4041338466721258, 236.7002634504806, 2.1435469250725863, 1.4142135623730951}},
    {"pow(a, 2)", [](auto& a, auto&, auto&, auto&) { return gd::pow(a, 2); }, {6.25, 1.6900000000000002, 0.16000000000000003, 0.0, 0.09, 0.81, 2.8899999999999997, 9.610000000000001}},
    {"pow(a, 3)", [](auto& a, auto&, auto&, auto&) { return gd::pow(a, 3); }, {-15.625, -2.1970000000000005, -0.06400000000000002, 0.0, 0.027, 0.7290000000000001, 4.912999999999999, 29.791000000000004}},
    {"pow(pa, 0.5)", [](auto&, auto&, auto& pa, auto&) { return gd::pow(pa, 0.5); }, {0.22360679774997896, 0.5477225575051661, 0.9486832980505138, 1.3038404810405297, 1.760681686165901, 3.4641016151377544, 0.7071067811865476, 1.4142135623730951}},
    {"pow(pa, -1.5)", [](auto&, auto&, auto& pa, auto&) { return gd::pow(pa, -1.5); }, {89.44271909999158, 6.0858061945018465, 1.1712139482105108, 0.4511558757925709, 0.183213494918408, 0.024056261216234408, 2.8284271247461903, 0.35355339059327373}},
    {"pow(2, a)", [](auto& a, auto&, auto&, auto&) { return gd::pow(2, a); }, {0.17677669529663687, 0.40612619817811774, 0.757858283255199, 1.0, 1.2311444133449163, 1.8660659830736148, 3.249009585424942, 8.574187700290345}},
    {"pow(0.5, a)", [](auto& a, auto&, auto&, auto&) { return gd::pow(0.5, a); }, {5.656854249492381, 2.4622888266898326, 1.3195079107728942, 1.0, 0.8122523963562356, 0.5358867312681466, 0.3077861033362291, 0.11662912394210093}},
    {"a + 1.5", [](auto& a, auto&, auto&, auto&) { return a + 1.5; }, {-1.0, 0.19999999999999996, 1.1, 1.5, 1.8, 2.4, 3.2, 4.6}},
    {"a - 1.5", [](auto& a, auto&, auto&, auto&) { return a - 1.5; }, {-4.0, -2.8, -1.9, -1.5, -1.2, -0.6, 0.19999999999999996, 1.6}},
    {"1.5 - a", [](auto& a, auto&, auto&, auto&) { return 1.5 - a; }, {4.0, 2.8, 1.9, 1.5, 1.2, 0.6, -0.19999999999999996, -1.6}},
    {"a * -2", [](auto& a, auto&, auto&, auto&) { return a * -2; }, {5.0, 2.6, 0.8, -0.0, -0.6, -1.8, -3.4, -6.2}},
    {"a / 4", [](auto& a, auto&, auto&, auto&) { return a / 4; }, {-0.625, -0.325, -0.1, 0.0, 0.075, 0.225, 0.425, 0.775}},
    {"4 / r", [](auto&, auto&, auto&, auto& r) { return 4 / r; }, {-1.6, -3.0769230769230766, -10.0, 13.333333333333334, 4.444444444444445, 2.3529411764705883, 2.0, -40.0}},
    {"add(a, 2, 0.5)", [](auto& a, auto&, auto&, auto&) { return gd::add(a, 2, 0.5); }, {-1.5, -0.30000000000000004, 0.6, 1.0, 1.3, 1.9, 2.7, 4.1}},
    {"clamp(a, -1, 1)", [](auto& a, auto&, auto&, auto&) { return gd::clamp(a, -1, 1); }, {-1.0, -1.0, -0.4, 0.0, 0.3, 0.9, 1.0, 1.0}},
    {"clamp_min(a, 0.3)", [](auto& a, auto&, auto&, auto&) { return gd::clamp_min(a, 0.3); }, {0.3, 0.3, 0.3, 0.3, 0.3, 0.9, 1.7, 3.1}},
    {"clamp_max(a, 0.3)", [](auto& a, auto&, auto&, auto&) { return gd::clamp_max(a, 0.3); }, {-2.5, -1.3, -0.4, 0.0, 0.3, 0.3, 0.3, 0.3}},
    {"clamp(a, 1, -1)", [](auto& a, auto&, auto&, auto&) { return gd::clamp(a, 1, -1); }, {-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0}},
    {"where(a > 0, a, b)", [](auto& a, auto& b, auto&, auto&) { return gd::where(a > 0, a, b); }, {0.7, -2.0, 1.5, -0.3, 0.3, 0.9, 1.7, 3.1}},
    {"where(a > 0, 1.5, b)", [](auto& a, auto& b, auto&, auto&) { return gd::where(a > 0, 1.5, b); }, {0.7, -2.0, 1.5, -0.3, 1.5, 1.5, 1.5, 1.5}},
    {"where(a > 0, a, -1.0)", [](auto& a, auto&, auto&, auto&) { return gd::where(a > 0, a, -1.0); }, {-1.0, -1.0, -1.0, -1.0, 0.3, 0.9, 1.7, 3.1}},
    {"a.where(a > 0, b)", [](auto& a, auto& b, auto&, auto&) { return a.where(a > 0, b); }, {0.7, -2.0, 1.5, -0.3, 0.3, 0.9, 1.7, 3.1}},
    // b * (1 - tanh(a)^2) and b * sigmoid(a) * (1 - sigmoid(a)) in PyTorch.
    // torch.ops.aten.threshold_backward(b, a, t): ReLU's backward (a <= t drops b, ties included).
    {"threshold_backward(b, a, 0.3)", [](auto& a, auto& b, auto&, auto&) { return gd::threshold_backward(b, a, 0.3); }, {0.0, 0.0, 0.0, 0.0, 0.0, 2.2, -1.1, 0.5}},
    {"threshold_backward(b, a, 0)", [](auto& a, auto& b, auto&, auto&) { return gd::threshold_backward(b, a, 0); }, {0.0, 0.0, 0.0, 0.0, 0.3, 2.2, -1.1, 0.5}},
    {"tanh_backward(b, tanh(a))", [](auto& a, auto& b, auto&, auto&) { return gd::tanh_backward(b, gd::tanh(a)); }, {0.018614558678212365, -0.5148663934061881, 1.2834581791217665, -0.3, 0.27454108854798875, 1.0712181945263515, -0.13751085769679128, 0.004042436932743199}},
    {"sigmoid_backward(b, sigmoid(a))", [](auto& a, auto& b, auto&, auto&) { return gd::sigmoid_backward(b, gd::sigmoid(a)); }, {0.049072601581575705, -0.3365967249381205, 0.3603911186122937, -0.075, 0.07333749350722375, 0.45210067615297966, -0.14366632166282892, 0.02062450975626517}},
};

struct CompareCase {
  const char* expression;
  std::function<Tensor(const Tensor& a, const Tensor& b)> fn;
  std::vector<double> expected;
};

// PyTorch 1.13 on the float64 a and b above.
const CompareCase kCompare[] = {
    {"a == b", [](auto& a, auto& b) { return a == b; }, {0, 0, 0, 0, 1, 0, 0, 0}},
    {"a != b", [](auto& a, auto& b) { return a != b; }, {1, 1, 1, 1, 0, 1, 1, 1}},
    {"a < b", [](auto& a, auto& b) { return a < b; }, {1, 0, 1, 0, 0, 1, 0, 0}},
    {"a <= b", [](auto& a, auto& b) { return a <= b; }, {1, 0, 1, 0, 1, 1, 0, 0}},
    {"a > b", [](auto& a, auto& b) { return a > b; }, {0, 1, 0, 1, 0, 0, 1, 1}},
    {"a >= b", [](auto& a, auto& b) { return a >= b; }, {0, 1, 0, 1, 1, 0, 1, 1}},
    {"a == 0.3", [](auto& a, auto&) { return a == 0.3; }, {0, 0, 0, 0, 1, 0, 0, 0}},
    {"a != 0.3", [](auto& a, auto&) { return a != 0.3; }, {1, 1, 1, 1, 0, 1, 1, 1}},
    {"a < 0.3", [](auto& a, auto&) { return a < 0.3; }, {1, 1, 1, 1, 0, 0, 0, 0}},
    {"a <= 0.3", [](auto& a, auto&) { return a <= 0.3; }, {1, 1, 1, 1, 1, 0, 0, 0}},
    {"a > 0.3", [](auto& a, auto&) { return a > 0.3; }, {0, 0, 0, 0, 0, 1, 1, 1}},
    {"a >= 0.3", [](auto& a, auto&) { return a >= 0.3; }, {0, 0, 0, 0, 1, 1, 1, 1}},
    {"a.eq(b)", [](auto& a, auto& b) { return a.eq(b); }, {0, 0, 0, 0, 1, 0, 0, 0}},
    {"a.ge(0.3)", [](auto& a, auto&) { return a.ge(0.3); }, {0, 0, 0, 0, 1, 1, 1, 1}},
    {"logical_and(a, b)", [](auto& a, auto& b) { return gd::logical_and(a, b); }, {1, 1, 1, 0, 1, 1, 1, 1}},
    {"logical_or(a, b)", [](auto& a, auto& b) { return gd::logical_or(a, b); }, {1, 1, 1, 1, 1, 1, 1, 1}},
    {"logical_xor(a, b)", [](auto& a, auto& b) { return gd::logical_xor(a, b); }, {0, 0, 0, 1, 0, 0, 0, 0}},
    {"logical_not(a)", [](auto& a, auto&) { return gd::logical_not(a); }, {0, 0, 0, 1, 0, 0, 0, 0}},
    {"(a > 0) & (b > 0)", [](auto& a, auto& b) { return (a > 0) & (b > 0); }, {0, 0, 0, 0, 1, 1, 0, 1}},
    {"(a > 0) | (b > 0)", [](auto& a, auto& b) { return (a > 0) | (b > 0); }, {1, 0, 1, 0, 1, 1, 1, 1}},
    {"(a > 0) ^ (b > 0)", [](auto& a, auto& b) { return (a > 0) ^ (b > 0); }, {1, 0, 1, 0, 0, 0, 1, 0}},
    {"~(a > 0)", [](auto& a, auto&) { return ~(a > 0); }, {1, 1, 1, 1, 0, 0, 0, 0}},
};

Tensor filled(std::vector<int64_t> sizes, gd::ScalarType dtype) { return gd::ones(sizes, gd::TensorOptions().dtype(dtype)); }

}  // namespace

TEST_CASE("unary ops match PyTorch in float64") {
  for (const auto& c : kUnary64) {
    INFO(c.op);
    Tensor y = unary_ops().at(c.op)(tensor_of(c.input));
    CHECK(y.dtype() == gd::kFloat64);
    CHECK(value_mismatch(values_of(y), c.expected, 1e-14, 1e-15) == "");
  }
}

TEST_CASE("unary ops match PyTorch in float32") {
  for (const auto& c : kUnary32) {
    INFO(c.op);
    Tensor y = unary_ops().at(c.op)(tensor_of(c.input, {}, gd::kFloat32));
    CHECK(y.dtype() == gd::kFloat32);
    CHECK(value_mismatch(values_of(y), c.expected, 4e-7, 1e-7) == "");
  }
}

TEST_CASE("unary ops on special values follow IEEE arithmetic") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> S = {inf, -inf, nan, 0.0, -0.0, 1e308, -1e308, 800.0, -800.0, 1e-310};
  // Closed forms from the C library (the reference for the vectorized kernels).
  const std::pair<const char*, double (*)(double)> refs[] = {
      {"exp", [](double v) { return std::exp(v); }},
      {"log", [](double v) { return std::log(v); }},
      {"log1p", [](double v) { return std::log1p(v); }},
      {"expm1", [](double v) { return std::expm1(v); }},
      {"sqrt", [](double v) { return std::sqrt(v); }},
      {"tanh", [](double v) { return std::tanh(v); }},
      {"sigmoid", [](double v) { return v >= 0 ? 1 / (1 + std::exp(-v)) : std::exp(v) / (1 + std::exp(v)); }},
      {"erf", [](double v) { return std::erf(v); }},
      {"abs", [](double v) { return std::abs(v); }},
      {"neg", [](double v) { return -v; }},
      {"reciprocal", [](double v) { return 1 / v; }},
      {"relu", [](double v) { return std::isnan(v) ? v : v > 0 ? v : 0.0; }},
      {"softplus", [](double v) { return std::isnan(v) ? v : v > 20 ? v : std::max(v, 0.0) + std::log1p(std::exp(-std::abs(v))); }},
  };
  for (const auto& [op, ref] : refs) {
    INFO(op);
    std::vector<double> want;
    for (double v : S) want.push_back(ref(v));
    CHECK(value_mismatch(values_of(unary_ops().at(op)(tensor_of(S))), want, 1e-14, 0) == "");
  }
  // sign keeps NaN (the kernels' documented choice) and maps both zeros to +0.
  CHECK(value_mismatch(values_of(gd::sign(tensor_of(S))), {1, -1, nan, 0, 0, 1, -1, 1, -1, 1}, 0, 0) == "");
  CHECK(values_of(gd::isnan(tensor_of(S))) == std::vector<double>{0, 0, 1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(values_of(gd::isinf(tensor_of(S))) == std::vector<double>{1, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(values_of(gd::isfinite(tensor_of(S))) == std::vector<double>{0, 0, 0, 1, 1, 1, 1, 1, 1, 1});
  CHECK(values_of(tensor_of(S).isnan()) == values_of(gd::isnan(tensor_of(S))));
  CHECK(values_of(gd::isfinite(gd::arange(3))) == std::vector<double>{1, 1, 1});
  // maximum/minimum propagate NaN from either side, as in PyTorch.
  Tensor n = tensor_of({nan, 1.0, nan}), one = tensor_of({2.0, nan, nan});
  CHECK(value_mismatch(values_of(gd::maximum(n, one)), {nan, nan, nan}, 0, 0) == "");
  CHECK(value_mismatch(values_of(gd::minimum(one, n)), {nan, nan, nan}, 0, 0) == "");
  CHECK(value_mismatch(values_of(gd::clamp(n, 0, 0.5)), {nan, 0.5, nan}, 0, 0) == "");
}

TEST_CASE("unary ops on integer tensors") {
  Tensor i = tensor_of({-3, 0, 4}, {}, gd::kInt64);
  // abs, neg, sign and relu keep the integer dtype; float math computes in float32, as in PyTorch.
  for (auto [op, want] : std::vector<std::pair<const char*, std::vector<double>>>{
           {"abs", {3, 0, 4}}, {"neg", {3, 0, -4}}, {"sign", {-1, 0, 1}}, {"relu", {0, 0, 4}}, {"square", {9, 0, 16}}}) {
    INFO(op);
    Tensor y = unary_ops().at(op)(i);
    CHECK(y.dtype() == gd::kInt64);
    CHECK(values_of(y) == want);
  }
  Tensor e = gd::exp(i);
  CHECK(e.dtype() == gd::kFloat32);
  CHECK(value_mismatch(values_of(e), {std::exp(-3.0f), 1.0, std::exp(4.0f)}, 3e-7, 0) == "");
  CHECK(error_of([] { gd::neg(gd::ones({2}, gd::kBool)); }) ==
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
        "`~` or `logical_not()` operator instead.");
}

TEST_CASE("binary ops match PyTorch in float64") {
  Tensor a = tensor_of(A), b = tensor_of(B), pa = tensor_of(PA), r = tensor_of(RA);
  for (const auto& c : kBinary) {
    INFO(c.expression);
    Tensor y = c.fn(a, b, pa, r);
    CHECK(y.dtype() == gd::kFloat64);
    CHECK(value_mismatch(values_of(y), c.expected, 1e-14, 1e-15) == "");
  }
  // maximum/minimum and the method forms agree with the free functions.
  CHECK(value_mismatch(a.maximum(b), gd::maximum(a, b), 0, 0) == "");
  CHECK(value_mismatch(a.minimum(b), gd::minimum(a, b), 0, 0) == "");
  CHECK(value_mismatch(a.add(b, 2.5), gd::add(a, b, 2.5), 0, 0) == "");
  CHECK(value_mismatch(a.sub(1.5), a - 1.5, 0, 0) == "");
  CHECK(value_mismatch(a.mul(b), a * b, 0, 0) == "");
  CHECK(value_mismatch(a.div(b), a / b, 0, 0) == "");
  CHECK(value_mismatch(pa.pow(b), gd::pow(pa, b), 0, 0) == "");
  CHECK(value_mismatch(a.clamp(-1, 1), gd::clamp(a, -1, 1), 0, 0) == "");
}

TEST_CASE("comparisons and logical ops match PyTorch") {
  Tensor a = tensor_of(A), b = tensor_of(B);
  for (const auto& c : kCompare) {
    INFO(c.expression);
    Tensor y = c.fn(a, b);
    CHECK(y.dtype() == gd::kBool);
    CHECK(values_of(y) == c.expected);
  }
  // A float32 tensor compares with a Python-like scalar in float32: 0.1f == 0.1.
  CHECK(values_of(tensor_of({0.1}, {}, gd::kFloat32) == 0.1) == std::vector<double>{1});
  // Integer tensors against a float scalar compare as floats.
  CHECK(values_of(tensor_of({1, 2, 3}, {}, gd::kInt64) > 1.5) == std::vector<double>{0, 1, 1});
  CHECK(gd::equal(a, a.clone()));
  CHECK_FALSE(gd::equal(a, b));
  CHECK_FALSE(gd::equal(a, a.view({2, 4})));
  CHECK(gd::allclose(a, a + 1e-9, 1e-5, 1e-8));
  CHECK_FALSE(gd::allclose(a, a + 1e-3));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(gd::allclose(tensor_of({nan}), tensor_of({nan})));
  CHECK(gd::allclose(tensor_of({nan}), tensor_of({nan}), 1e-5, 1e-8, /*equal_nan=*/true));
  // PyTorch 1.13's isclose: the tolerance is applied in the tensors' dtype, integers without wrapping,
  // and the dtypes must match (python3: torch.allclose(torch.tensor([0.1]), torch.tensor([0.]), 1.1, 0.1) -> True,
  // the same in float64 with 0.1 + 1e-9 -> False, uint8 250 against 255 with atol 5 -> True).
  CHECK(gd::allclose(tensor_of({0.1}, {1}, gd::kFloat32), tensor_of({0}, {1}, gd::kFloat32), 1.1, 0.1));
  CHECK_FALSE(gd::allclose(tensor_of({0.1 + 1e-9}), tensor_of({0}), 1.1, 0.1));
  CHECK(gd::allclose(tensor_of({250}, {1}, gd::kUInt8), tensor_of({255}, {1}, gd::kUInt8), 0, 5));
  CHECK(gd::allclose(tensor_of({1}, {1}, gd::kBool), tensor_of({0}, {1}, gd::kBool), 0, 1));
  CHECK(gd::allclose(tensor_of({INFINITY}), tensor_of({INFINITY})));
  CHECK(error_of([] { gd::allclose(tensor_of({1}, {1}, gd::kFloat32), tensor_of({1})); }) ==
        "Float did not match Double");
}

TEST_CASE("type promotion follows PyTorch's table") {
  struct Row {
    gd::ScalarType a;
    int a_dims;
    gd::ScalarType b;
    int b_dims;
    gd::ScalarType result;
  };
  using namespace gd;
  // torch.result_type(torch.zeros([2] * a_dims, dtype=a), torch.zeros([2] * b_dims, dtype=b)), PyTorch 1.13.
  const Row rows[] = {
      {kBool, 1, kBool, 1, kBool}, {kBool, 1, kBool, 0, kBool}, {kBool, 0, kBool, 1, kBool}, {kBool, 0, kBool, 0, kBool},
      {kBool, 1, kUInt8, 1, kUInt8}, {kBool, 1, kUInt8, 0, kUInt8}, {kBool, 0, kUInt8, 1, kUInt8}, {kBool, 0, kUInt8, 0, kUInt8},
      {kBool, 1, kInt32, 1, kInt32}, {kBool, 1, kInt32, 0, kInt32}, {kBool, 0, kInt32, 1, kInt32}, {kBool, 0, kInt32, 0, kInt32},
      {kBool, 1, kInt64, 1, kInt64}, {kBool, 1, kInt64, 0, kInt64}, {kBool, 0, kInt64, 1, kInt64}, {kBool, 0, kInt64, 0, kInt64},
      {kBool, 1, kFloat32, 1, kFloat32}, {kBool, 1, kFloat32, 0, kFloat32}, {kBool, 0, kFloat32, 1, kFloat32}, {kBool, 0, kFloat32, 0, kFloat32},
      {kBool, 1, kFloat64, 1, kFloat64}, {kBool, 1, kFloat64, 0, kFloat64}, {kBool, 0, kFloat64, 1, kFloat64}, {kBool, 0, kFloat64, 0, kFloat64},
      {kUInt8, 1, kBool, 1, kUInt8}, {kUInt8, 1, kBool, 0, kUInt8}, {kUInt8, 0, kBool, 1, kUInt8}, {kUInt8, 0, kBool, 0, kUInt8},
      {kUInt8, 1, kUInt8, 1, kUInt8}, {kUInt8, 1, kUInt8, 0, kUInt8}, {kUInt8, 0, kUInt8, 1, kUInt8}, {kUInt8, 0, kUInt8, 0, kUInt8},
      {kUInt8, 1, kInt32, 1, kInt32}, {kUInt8, 1, kInt32, 0, kUInt8}, {kUInt8, 0, kInt32, 1, kInt32}, {kUInt8, 0, kInt32, 0, kInt32},
      {kUInt8, 1, kInt64, 1, kInt64}, {kUInt8, 1, kInt64, 0, kUInt8}, {kUInt8, 0, kInt64, 1, kInt64}, {kUInt8, 0, kInt64, 0, kInt64},
      {kUInt8, 1, kFloat32, 1, kFloat32}, {kUInt8, 1, kFloat32, 0, kFloat32}, {kUInt8, 0, kFloat32, 1, kFloat32}, {kUInt8, 0, kFloat32, 0, kFloat32},
      {kUInt8, 1, kFloat64, 1, kFloat64}, {kUInt8, 1, kFloat64, 0, kFloat64}, {kUInt8, 0, kFloat64, 1, kFloat64}, {kUInt8, 0, kFloat64, 0, kFloat64},
      {kInt32, 1, kBool, 1, kInt32}, {kInt32, 1, kBool, 0, kInt32}, {kInt32, 0, kBool, 1, kInt32}, {kInt32, 0, kBool, 0, kInt32},
      {kInt32, 1, kUInt8, 1, kInt32}, {kInt32, 1, kUInt8, 0, kInt32}, {kInt32, 0, kUInt8, 1, kUInt8}, {kInt32, 0, kUInt8, 0, kInt32},
      {kInt32, 1, kInt32, 1, kInt32}, {kInt32, 1, kInt32, 0, kInt32}, {kInt32, 0, kInt32, 1, kInt32}, {kInt32, 0, kInt32, 0, kInt32},
      {kInt32, 1, kInt64, 1, kInt64}, {kInt32, 1, kInt64, 0, kInt32}, {kInt32, 0, kInt64, 1, kInt64}, {kInt32, 0, kInt64, 0, kInt64},
      {kInt32, 1, kFloat32, 1, kFloat32}, {kInt32, 1, kFloat32, 0, kFloat32}, {kInt32, 0, kFloat32, 1, kFloat32}, {kInt32, 0, kFloat32, 0, kFloat32},
      {kInt32, 1, kFloat64, 1, kFloat64}, {kInt32, 1, kFloat64, 0, kFloat64}, {kInt32, 0, kFloat64, 1, kFloat64}, {kInt32, 0, kFloat64, 0, kFloat64},
      {kInt64, 1, kBool, 1, kInt64}, {kInt64, 1, kBool, 0, kInt64}, {kInt64, 0, kBool, 1, kInt64}, {kInt64, 0, kBool, 0, kInt64},
      {kInt64, 1, kUInt8, 1, kInt64}, {kInt64, 1, kUInt8, 0, kInt64}, {kInt64, 0, kUInt8, 1, kUInt8}, {kInt64, 0, kUInt8, 0, kInt64},
      {kInt64, 1, kInt32, 1, kInt64}, {kInt64, 1, kInt32, 0, kInt64}, {kInt64, 0, kInt32, 1, kInt32}, {kInt64, 0, kInt32, 0, kInt64},
      {kInt64, 1, kInt64, 1, kInt64}, {kInt64, 1, kInt64, 0, kInt64}, {kInt64, 0, kInt64, 1, kInt64}, {kInt64, 0, kInt64, 0, kInt64},
      {kInt64, 1, kFloat32, 1, kFloat32}, {kInt64, 1, kFloat32, 0, kFloat32}, {kInt64, 0, kFloat32, 1, kFloat32}, {kInt64, 0, kFloat32, 0, kFloat32},
      {kInt64, 1, kFloat64, 1, kFloat64}, {kInt64, 1, kFloat64, 0, kFloat64}, {kInt64, 0, kFloat64, 1, kFloat64}, {kInt64, 0, kFloat64, 0, kFloat64},
      {kFloat32, 1, kBool, 1, kFloat32}, {kFloat32, 1, kBool, 0, kFloat32}, {kFloat32, 0, kBool, 1, kFloat32}, {kFloat32, 0, kBool, 0, kFloat32},
      {kFloat32, 1, kUInt8, 1, kFloat32}, {kFloat32, 1, kUInt8, 0, kFloat32}, {kFloat32, 0, kUInt8, 1, kFloat32}, {kFloat32, 0, kUInt8, 0, kFloat32},
      {kFloat32, 1, kInt32, 1, kFloat32}, {kFloat32, 1, kInt32, 0, kFloat32}, {kFloat32, 0, kInt32, 1, kFloat32}, {kFloat32, 0, kInt32, 0, kFloat32},
      {kFloat32, 1, kInt64, 1, kFloat32}, {kFloat32, 1, kInt64, 0, kFloat32}, {kFloat32, 0, kInt64, 1, kFloat32}, {kFloat32, 0, kInt64, 0, kFloat32},
      {kFloat32, 1, kFloat32, 1, kFloat32}, {kFloat32, 1, kFloat32, 0, kFloat32}, {kFloat32, 0, kFloat32, 1, kFloat32}, {kFloat32, 0, kFloat32, 0, kFloat32},
      {kFloat32, 1, kFloat64, 1, kFloat64}, {kFloat32, 1, kFloat64, 0, kFloat32}, {kFloat32, 0, kFloat64, 1, kFloat64}, {kFloat32, 0, kFloat64, 0, kFloat64},
      {kFloat64, 1, kBool, 1, kFloat64}, {kFloat64, 1, kBool, 0, kFloat64}, {kFloat64, 0, kBool, 1, kFloat64}, {kFloat64, 0, kBool, 0, kFloat64},
      {kFloat64, 1, kUInt8, 1, kFloat64}, {kFloat64, 1, kUInt8, 0, kFloat64}, {kFloat64, 0, kUInt8, 1, kFloat64}, {kFloat64, 0, kUInt8, 0, kFloat64},
      {kFloat64, 1, kInt32, 1, kFloat64}, {kFloat64, 1, kInt32, 0, kFloat64}, {kFloat64, 0, kInt32, 1, kFloat64}, {kFloat64, 0, kInt32, 0, kFloat64},
      {kFloat64, 1, kInt64, 1, kFloat64}, {kFloat64, 1, kInt64, 0, kFloat64}, {kFloat64, 0, kInt64, 1, kFloat64}, {kFloat64, 0, kInt64, 0, kFloat64},
      {kFloat64, 1, kFloat32, 1, kFloat64}, {kFloat64, 1, kFloat32, 0, kFloat64}, {kFloat64, 0, kFloat32, 1, kFloat32}, {kFloat64, 0, kFloat32, 0, kFloat64},
      {kFloat64, 1, kFloat64, 1, kFloat64}, {kFloat64, 1, kFloat64, 0, kFloat64}, {kFloat64, 0, kFloat64, 1, kFloat64}, {kFloat64, 0, kFloat64, 0, kFloat64},
  };
  for (const Row& row : rows) {
    std::string label = std::string(dtype_name(row.a)) + (row.a_dims ? "[2]" : "[]") + " + " +
                        std::string(dtype_name(row.b)) + (row.b_dims ? "[2]" : "[]");
    INFO(label);
    Tensor a = filled(std::vector<int64_t>(static_cast<size_t>(row.a_dims), 2), row.a);
    Tensor b = filled(std::vector<int64_t>(static_cast<size_t>(row.b_dims), 2), row.b);
    bool mixed_floats = row.a_dims && row.b_dims && is_floating_point(row.a) && is_floating_point(row.b) && row.a != row.b;
    if (mixed_floats) {
      // gradiens' deliberate choice (engine/ops/elementwise.h): float32 and
      // float64 tensors with dims are not mixed silently.
      CHECK(error_of([&] { a + b; }) ==
            fmt::format("add: expected both tensors to have the same floating dtype, got {} and {}; convert one "
                        "with .to() (gradiens does not promote float32 and float64 tensors silently)",
                        dtype_name(row.a), dtype_name(row.b)));
      CHECK(error_of([&] { a * b; }).find("mul: expected both tensors to have the same floating dtype") == 0);
      continue;
    }
    Tensor sum = a + b, product = a * b;
    CHECK(sum.dtype() == row.result);
    CHECK(product.dtype() == row.result);
    CHECK(sum.dim() == std::max(row.a_dims, row.b_dims));
    // 1 + 1 is 2, or true for bool (logical or).
    CHECK(values_of(sum)[0] == (row.result == kBool ? 1.0 : 2.0));
    CHECK(values_of(product)[0] == 1.0);
    // Comparisons compute in the promoted type too, and give bool.
    CHECK((a == b).dtype() == kBool);
  }
}

TEST_CASE("type promotion with Python-like scalars") {
  using namespace gd;
  struct Row {
    ScalarType tensor;
    Scalar scalar;
    ScalarType result;
  };
  // torch.result_type(torch.zeros(2, dtype=tensor), scalar), PyTorch 1.13.
  const Row rows[] = {
      {kBool, Scalar(2), kInt64}, {kBool, Scalar(2.5), kFloat32}, {kBool, Scalar(true), kBool},
      {kUInt8, Scalar(2), kUInt8}, {kUInt8, Scalar(2.5), kFloat32}, {kUInt8, Scalar(true), kUInt8},
      {kInt32, Scalar(2), kInt32}, {kInt32, Scalar(2.5), kFloat32}, {kInt32, Scalar(true), kInt32},
      {kInt64, Scalar(2), kInt64}, {kInt64, Scalar(2.5), kFloat32}, {kInt64, Scalar(true), kInt64},
      {kFloat32, Scalar(2), kFloat32}, {kFloat32, Scalar(2.5), kFloat32}, {kFloat32, Scalar(true), kFloat32},
      {kFloat64, Scalar(2), kFloat64}, {kFloat64, Scalar(2.5), kFloat64}, {kFloat64, Scalar(true), kFloat64},
  };
  for (const Row& row : rows) {
    INFO(dtype_name(row.tensor));
    Tensor t = filled({2}, row.tensor);
    CHECK(add(t, row.scalar).dtype() == row.result);
    CHECK(mul(t, row.scalar).dtype() == row.result);
  }
  // A 0-dim float64 tensor next to float32 data does not widen it (nor does a Python float).
  CHECK((filled({2}, kFloat32) * scalar_tensor(2.0, kFloat64)).dtype() == kFloat32);
  CHECK((filled({2}, kFloat32) * 2.0).dtype() == kFloat32);
}

TEST_CASE("mixed-dtype arithmetic values") {
  using namespace gd;
  Tensor i32 = tensor_of({1, 2, 3}, {}, kInt32), i64 = tensor_of({5, -7, 9}, {}, kInt64);
  // PyTorch 1.13: torch.tensor([1,2,3], dtype=torch.int32) / 2 -> tensor([0.5, 1.0, 1.5]) (float32).
  Tensor half = i32 / 2;
  CHECK(half.dtype() == kFloat32);
  CHECK(values_of(half) == std::vector<double>{0.5, 1.0, 1.5});
  // torch.tensor([5, -7, 9]) / 2 -> tensor([2.5, -3.5, 4.5]); int / int tensors divide truly.
  CHECK(values_of(i64 / tensor_of({2, 2, 2}, {}, kInt64)) == std::vector<double>{2.5, -3.5, 4.5});
  // torch.arange(3) / torch.tensor([2., 4., 8.], dtype=torch.float64) -> float64 [0, 0.25, 0.25].
  Tensor d = arange(3) / tensor_of({2, 4, 8});
  CHECK(d.dtype() == kFloat64);
  CHECK(values_of(d) == std::vector<double>{0, 0.25, 0.25});
  // Integer arithmetic stays exact and integral.
  Tensor s = i32 + i64;
  CHECK(s.dtype() == kInt64);
  CHECK(values_of(s) == std::vector<double>{6, -5, 12});
  CHECK(values_of(i64 * 3) == std::vector<double>{15, -21, 27});
  CHECK(values_of(i64 - 1) == std::vector<double>{4, -8, 8});
  CHECK(values_of(10 - i64) == std::vector<double>{5, 17, 1});
  // torch.tensor([1, 2, 3]) * 2.5 -> float32 [2.5, 5.0, 7.5]; add(x, 2, alpha=0.5) adds 1.
  CHECK(values_of(i64 * 2.5) == std::vector<double>{12.5, -17.5, 22.5});
  CHECK(values_of(add(i64.to(kFloat64), 2, 0.5)) == std::vector<double>{6, -6, 10});
  CHECK(values_of(add(i64, 2, 3)) == std::vector<double>{11, -1, 15});
  CHECK(values_of(sub(i64, 2, 3)) == std::vector<double>{-1, -13, 3});
  CHECK(values_of(pow(i64, 2)) == std::vector<double>{25, 49, 81});
  // Bool arithmetic is logical: [True, False] + [True, True] -> [True, True]; * -> [True, False].
  Tensor p = tensor_of({1, 0}, {}, kBool), q = tensor_of({1, 1}, {}, kBool);
  CHECK((p + q).dtype() == kBool);
  CHECK(values_of(p + q) == std::vector<double>{1, 1});
  CHECK(values_of(p * q) == std::vector<double>{1, 0});
  CHECK(values_of(maximum(p, q)) == std::vector<double>{1, 1});
  CHECK(values_of(minimum(p, q)) == std::vector<double>{1, 0});
  CHECK(error_of([&] { p - q; }) ==
        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
        "operator instead.");
  // A mask multiplies a float tensor as 0/1.
  CHECK(values_of(tensor_of({1.5, 2.5}) * p) == std::vector<double>{1.5, 0});
}

TEST_CASE("broadcasting: shapes and values") {
  using namespace gd;
  struct Row {
    std::vector<int64_t> a, b, result;
  };
  const Row rows[] = {
      {{3, 1}, {1, 4}, {3, 4}},       {{2, 3, 4}, {4}, {2, 3, 4}}, {{5, 1, 3}, {1, 4, 1}, {5, 4, 3}},
      {{}, {2, 3}, {2, 3}},           {{2, 3}, {}, {2, 3}},         {{0, 3}, {1, 3}, {0, 3}},
      {{1}, {7}, {7}},                {{2, 1, 1}, {3, 1}, {2, 3, 1}}, {{1, 1}, {1, 1}, {1, 1}},
  };
  for (const Row& row : rows) {
    std::string label = shape_to_string(row.a) + " + " + shape_to_string(row.b);
    INFO(label);
    // a = 100 * index, b = index: every result element identifies its sources.
    int64_t na = 1, nb = 1;
    for (int64_t s : row.a) na *= s;
    for (int64_t s : row.b) nb *= s;
    Tensor a = arange(na, kFloat64).reshape(row.a) * 100, b = arange(nb, kFloat64).reshape(row.b);
    Tensor y = a + b;
    CHECK(y.sizes() == IntArrayRef(row.result));
    CHECK(broadcast_shapes(row.a, row.b) == DimVector(row.result));
    // Closed form: y[i] = a[broadcast index] + b[broadcast index].
    std::vector<double> va = values_of(a), vb = values_of(b), vy = values_of(y), want;
    DimVector sa = contiguous_strides(row.a), sb = contiguous_strides(row.b);
    for (int64_t lin = 0; lin < y.numel(); ++lin) {
      int64_t rem = lin, ia = 0, ib = 0;
      for (int64_t d = static_cast<int64_t>(row.result.size()) - 1; d >= 0; --d) {
        int64_t idx = rem % row.result[d];
        rem /= row.result[d];
        int64_t da = d - static_cast<int64_t>(row.result.size() - row.a.size());
        int64_t db = d - static_cast<int64_t>(row.result.size() - row.b.size());
        if (da >= 0 && row.a[da] != 1) ia += idx * sa[da];
        if (db >= 0 && row.b[db] != 1) ib += idx * sb[db];
      }
      want.push_back(va[ia] + vb[ib]);
    }
    CHECK(vy == want);
  }
  CHECK(error_of([] { ones({2, 4}) + ones({2, 3}); }) ==
        "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1");
  CHECK(error_of([] { ones({2, 3}) * ones({3, 1, 2}); }) ==
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 2");
}

TEST_CASE("non-contiguous inputs give the same values as contiguous copies") {
  using namespace gd;
  Tensor base = testing::sample({6, 8}, -2, 2, 11);
  Tensor other = testing::sample({8, 6}, -2, 2, 12);
  // Transposed, strided-slice and expanded operands, each against its contiguous copy.
  const std::pair<const char*, Tensor> layouts[] = {
      {"transposed", other.t()},
      {"sliced with step", testing::sample({6, 16}, -2, 2, 13).slice(1, 0, 16, 2)},
      {"expanded", testing::sample({1, 8}, -2, 2, 14).expand({6, 8})},
      {"offset narrow", testing::sample({9, 8}, -2, 2, 15).narrow(0, 3, 6)},
  };
  for (const auto& [name, view] : layouts) {
    INFO(name);
    CHECK_FALSE((view.is_contiguous() && view.storage_offset() == 0));
    Tensor copy = view.contiguous().clone();
    CHECK(value_mismatch(base + view, base + copy, 0, 0) == "");
    CHECK(value_mismatch(view * base, copy * base, 0, 0) == "");
    CHECK(value_mismatch(gd::maximum(view, base), gd::maximum(copy, base), 0, 0) == "");
    CHECK(value_mismatch(gd::tanh(view), gd::tanh(copy), 0, 0) == "");
    CHECK(value_mismatch(gd::exp(view), gd::exp(copy), 0, 0) == "");
    CHECK(value_mismatch(gd::relu(view), gd::relu(copy), 0, 0) == "");
    CHECK(value_mismatch(gd::clamp(view, -1, 1), gd::clamp(copy, -1, 1), 0, 0) == "");
    CHECK(value_mismatch(gd::softplus(view), gd::softplus(copy), 0, 0) == "");
    CHECK(values_of(view > base) == values_of(copy > base));
    CHECK(value_mismatch(gd::where(view > 0, view, base), gd::where(copy > 0, copy, base), 0, 0) == "");
    CHECK(value_mismatch(gd::tanh_backward(view, base), gd::tanh_backward(copy, base), 0, 0) == "");
    CHECK(value_mismatch(gd::threshold_backward(view, base, 0.1), gd::threshold_backward(copy, base, 0.1), 0, 0) == "");
    CHECK(value_mismatch(view * 2.5, copy * 2.5, 0, 0) == "");
    // Both operands non-contiguous.
    CHECK(value_mismatch(view - view.t().t(), copy - copy, 0, 0) == "");
  }
}

TEST_CASE("in-place forms equal the out-of-place ops and bump the version") {
  using namespace gd;
  Tensor a = tensor_of(A), b = tensor_of(B), pa = tensor_of(PA);
  struct Row {
    const char* name;
    std::function<void(Tensor&)> inplace;
    std::function<Tensor(const Tensor&)> reference;
    const Tensor* input;
  };
  const Row rows[] = {
      {"add_", [&](Tensor& t) { t.add_(b); }, [&](const Tensor& t) { return t + b; }, &a},
      {"add_ alpha", [&](Tensor& t) { t.add_(b, 2.5); }, [&](const Tensor& t) { return add(t, b, 2.5); }, &a},
      {"add_ scalar", [&](Tensor& t) { t.add_(1.5); }, [&](const Tensor& t) { return t + 1.5; }, &a},
      {"sub_", [&](Tensor& t) { t.sub_(b); }, [&](const Tensor& t) { return t - b; }, &a},
      {"sub_ scalar", [&](Tensor& t) { t.sub_(1.5); }, [&](const Tensor& t) { return t - 1.5; }, &a},
      {"mul_", [&](Tensor& t) { t.mul_(b); }, [&](const Tensor& t) { return t * b; }, &a},
      {"mul_ scalar", [&](Tensor& t) { t.mul_(-2); }, [&](const Tensor& t) { return t * -2; }, &a},
      {"div_", [&](Tensor& t) { t.div_(b); }, [&](const Tensor& t) { return t / b; }, &a},
      {"div_ scalar", [&](Tensor& t) { t.div_(4); }, [&](const Tensor& t) { return t / 4; }, &a},
      {"pow_", [&](Tensor& t) { t.pow_(3); }, [&](const Tensor& t) { return pow(t, 3); }, &a},
      {"clamp_", [&](Tensor& t) { t.clamp_(-1, 1); }, [&](const Tensor& t) { return clamp(t, -1, 1); }, &a},
      {"neg_", [&](Tensor& t) { t.neg_(); }, [&](const Tensor& t) { return -t; }, &a},
      {"exp_", [&](Tensor& t) { t.exp_(); }, [&](const Tensor& t) { return exp(t); }, &a},
      {"log_", [&](Tensor& t) { t.log_(); }, [&](const Tensor& t) { return log(t); }, &pa},
      {"sqrt_", [&](Tensor& t) { t.sqrt_(); }, [&](const Tensor& t) { return sqrt(t); }, &pa},
      {"abs_", [&](Tensor& t) { t.abs_(); }, [&](const Tensor& t) { return abs(t); }, &a},
      {"tanh_", [&](Tensor& t) { t.tanh_(); }, [&](const Tensor& t) { return tanh(t); }, &a},
      {"sigmoid_", [&](Tensor& t) { t.sigmoid_(); }, [&](const Tensor& t) { return sigmoid(t); }, &a},
      {"relu_", [&](Tensor& t) { t.relu_(); }, [&](const Tensor& t) { return relu(t); }, &a},
      {"square_", [&](Tensor& t) { t.square_(); }, [&](const Tensor& t) { return square(t); }, &a},
      {"fill_", [&](Tensor& t) { t.fill_(0.25); }, [&](const Tensor& t) { return full_like(t, 0.25); }, &a},
      {"zero_", [&](Tensor& t) { t.zero_(); }, [&](const Tensor& t) { return zeros_like(t); }, &a},
      {"copy_", [&](Tensor& t) { t.copy_(b); }, [&](const Tensor&) { return b; }, &a},
      {"operator+=", [&](Tensor& t) { t += b; }, [&](const Tensor& t) { return t + b; }, &a},
      {"operator-= scalar", [&](Tensor& t) { t -= 2; }, [&](const Tensor& t) { return t - 2; }, &a},
      {"operator*=", [&](Tensor& t) { t *= b; }, [&](const Tensor& t) { return t * b; }, &a},
      {"operator/= scalar", [&](Tensor& t) { t /= 8; }, [&](const Tensor& t) { return t / 8; }, &a},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    Tensor t = row.input->clone();
    void* data = t.data_ptr();
    uint32_t version = t._version();
    row.inplace(t);
    CHECK(t.data_ptr() == data);
    CHECK(t._version() == version + 1);
    CHECK(value_mismatch(t, row.reference(*row.input), 0, 0) == "");
  }
  // Into a non-contiguous view: only the viewed elements change.
  Tensor m = zeros({3, 4}, kFloat64);
  m.t().add_(arange(3, kFloat64));
  CHECK(values_of(m) == std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2});
  m.select(1, 2).mul_(10);
  CHECK(values_of(m) == std::vector<double>{0, 0, 0, 0, 1, 1, 10, 1, 2, 2, 20, 2});
  // Integer tensors accept integer in-place arithmetic, not float results.
  Tensor i = tensor_of({1, 2, 3}, {}, kInt64);
  i.add_(2).mul_(3);
  CHECK(values_of(i) == std::vector<double>{9, 12, 15});
  CHECK(error_of([&] { i.add_(0.5); }) == "add_: result type Float can't be cast to the desired output type Long");
  CHECK(error_of([&] { i.div_(2); }) == "div_: result type Float can't be cast to the desired output type Long");
  CHECK(error_of([&] { i.exp_(); }) == "exp_: result type Float can't be cast to the desired output type Long");
  CHECK(error_of([&] { i.add_(ones({3})); }) == "add_: result type Float can't be cast to the desired output type Long");
  CHECK(error_of([&] { ones({3}).add_(ones({2, 3})); }) ==
        "add_: output with shape [3] doesn't match the broadcast shape [2, 3]");
  CHECK(error_of([&] { zeros({1, 3}).copy_(ones({2, 3})); }) ==
        "output with shape [1, 3] doesn't match the broadcast shape [2, 3]");
  // A float32 tensor accumulates float64 scalars in its own dtype.
  Tensor f = ones({2}, kFloat32);
  f.add_(0.5);
  CHECK(f.dtype() == kFloat32);
  CHECK(values_of(f) == std::vector<double>{1.5, 1.5});
}

TEST_CASE("in-place ops whose operand aliases the output") {
  using namespace gd;
  // PyTorch refuses a partial overlap; gradiens reads a copy of the operand, so
  // the result is what the out-of-place op gives: [[0,1],[2,3]] + its transpose.
  Tensor a = arange(4, kFloat64).view({2, 2});
  a.add_(a.t());
  CHECK(values_of(a) == std::vector<double>{0, 3, 3, 6});
  Tensor b = arange(6, kFloat64).view({2, 3});
  b.sub_(b[0]);  // every row minus the (original) first row
  CHECK(values_of(b) == std::vector<double>{0, 0, 0, 3, 3, 3});
  Tensor c = arange(4, kFloat64);
  c.narrow(0, 1, 3).copy_(c.narrow(0, 0, 3));  // a shifted copy reads the old values
  CHECK(values_of(c) == std::vector<double>{0, 0, 1, 2});
  // Writing through an expanded tensor would update one element several times.
  const std::string overlap =
      "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
      "Please clone() the tensor before performing the operation.";
  Tensor e = zeros({1, 3}, kFloat64).expand({2, 3});
  CHECK(error_of([&] { e.add_(ones({2, 3}, kFloat64)); }) == overlap);
  CHECK(error_of([&] { e.add_(1); }) == overlap);
  CHECK(error_of([&] { e.exp_(); }) == overlap);
  CHECK(error_of([&] { e.fill_(1); }) == overlap);
  CHECK(error_of([&] { e.copy_(ones({2, 3}, kFloat64)); }) == overlap);
}

TEST_CASE("large tensors (the multi-threaded path) agree with small slices") {
  using namespace gd;
  // Above the 32768-element grain, with a ragged tail; four threads even on a
  // small machine, so the parallel split is exercised.
  int previous = get_num_threads();
  set_num_threads(4);
  const int64_t n = 3 * 32768 + 17;
  Tensor x = testing::sample({n}, -3, 3, 21), p = testing::sample({n}, 0.2, 4, 22);
  // Each piece (1000 elements) runs single-threaded.
  auto agree = [&](const char* what, const std::function<Tensor(const Tensor&, const Tensor&)>& f) {
    INFO(what);
    Tensor big = f(x, p);
    CHECK(big.numel() == n);
    for (int64_t start = 0; start < n; start += 1000) {
      int64_t len = std::min<int64_t>(1000, n - start);
      Tensor small = f(x.narrow(0, start, len), p.narrow(0, start, len));
      if (value_mismatch(big.narrow(0, start, len), small, 0, 0) != "") {
        CHECK(value_mismatch(big.narrow(0, start, len), small, 0, 0) == "");
        return;
      }
    }
  };
  for (const auto& [name, f] : unary_ops()) {
    // Positive inputs keep log, sqrt, rsqrt and reciprocal finite; tan stays inside one branch.
    bool positive = name == "log" || name == "sqrt" || name == "rsqrt" || name == "reciprocal" || name == "log1p";
    agree(name.c_str(), [&, f = f](const Tensor& a, const Tensor& b) {
      return positive ? f(b) : name == "tan" ? f(a * 0.45) : f(a);
    });
  }
  agree("a + b", [](const Tensor& a, const Tensor& b) { return a + b; });
  agree("a * b", [](const Tensor& a, const Tensor& b) { return a * b; });
  agree("a / b", [](const Tensor& a, const Tensor& b) { return a / b; });
  agree("pow(b, a)", [](const Tensor& a, const Tensor& b) { return pow(b, a); });
  agree("maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); });
  agree("clamp", [](const Tensor& a, const Tensor&) { return clamp(a, -1, 1); });
  agree("where", [](const Tensor& a, const Tensor& b) { return where(a > 0, a, b); });
  agree("a < b", [](const Tensor& a, const Tensor& b) { return a < b; });
  agree("a * 2.5", [](const Tensor& a, const Tensor&) { return a * 2.5; });
  agree("tanh_backward", [](const Tensor& a, const Tensor& b) { return tanh_backward(a, b); });
  agree("threshold_backward", [](const Tensor& a, const Tensor& b) { return threshold_backward(a, b, 0.2); });
  agree("to float32", [](const Tensor& a, const Tensor&) { return a.to(kFloat32); });
  agree("add_", [](const Tensor& a, const Tensor& b) {
    Tensor c = a.clone();
    c.add_(b, 0.5);
    return c;
  });
  agree("exp_", [](const Tensor& a, const Tensor&) {
    Tensor c = a.clone();
    c.exp_();
    return c;
  });
  // Broadcast and transposed operands over 120000 elements against the closed form.
  Tensor rows = testing::sample({400, 1}, -1, 1, 23), cols = testing::sample({300}, -1, 1, 24);
  Tensor sum = rows + cols;
  std::vector<double> vr = values_of(rows), vc = values_of(cols), vs = values_of(sum);
  bool exact = true;
  for (int64_t i = 0; i < 400 && exact; ++i)
    for (int64_t j = 0; j < 300 && exact; ++j) exact = vs[i * 300 + j] == vr[i] + vc[j];
  CHECK(exact);
  Tensor m = testing::sample({300, 400}, -1, 1, 25);
  CHECK(value_mismatch(m.t() * 3.0, m.t().contiguous() * 3.0, 0, 0) == "");
  CHECK(value_mismatch(m.t() - sum, m.t().contiguous() - sum, 0, 0) == "");
  CHECK(value_mismatch(exp(m.t()), exp(m.t().contiguous()), 0, 0) == "");
  set_num_threads(previous);
}

// scaled_product(a, b, c, s) = s * a * b * c (tanh's second derivative uses it):
// against the composite product, fused (same shapes) and through its fallback
// (broadcast shapes, integer dtype).
TEST_CASE("scaled_product equals the product of its factors") {
  using gradiens::testing::sample;
  for (gd::ScalarType dtype : {gd::kFloat64, gd::kFloat32}) {
    Tensor a = sample({37, 5}, -2, 2, 1, dtype), b = sample({37, 5}, -2, 2, 2, dtype), c = sample({37, 5}, -2, 2, 3, dtype);
    CHECK(value_mismatch(gd::scaled_product(a, b, c, -2.0), a * b * c * -2.0, 1e-6, 1e-6) == "");
    Tensor row = sample({5}, -2, 2, 4, dtype);
    CHECK(value_mismatch(gd::scaled_product(a, row, c, 0.5), a * row * c * 0.5, 1e-6, 1e-6) == "");
  }
  Tensor i = gd::arange(6).reshape({2, 3});
  CHECK(values_of(gd::scaled_product(i, i, i, 1.0)) == std::vector<double>{0, 1, 8, 27, 64, 125});
}

TEST_CASE("threshold_backward: ReLU's backward in the operands' memory order, NaN passing as in PyTorch") {
  using namespace gd;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // torch.ops.aten.threshold_backward(torch.tensor([1., 2., 3.]), torch.tensor([nan, 0., -1.]), 0) == [1, 0, 0]
  CHECK(values_of(threshold_backward(tensor_of({1.0, 2.0, 3.0}), tensor_of({nan, 0.0, -1.0}), 0)) ==
        std::vector<double>{1.0, 0.0, 0.0});
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    INFO(dtype);
    Tensor x = testing::sample({2, 3, 5, 7}, -1, 1, 31, dtype), g = testing::sample({2, 3, 5, 7}, -1, 1, 32, dtype);
    Tensor expected = where(x > 0.25, g, 0.0);
    Tensor xl = x.contiguous(MemoryFormat::ChannelsLast), gl = g.contiguous(MemoryFormat::ChannelsLast);
    Tensor out = threshold_backward(gl, xl, 0.25);
    CHECK(out.is_contiguous(MemoryFormat::ChannelsLast));
    CHECK(value_mismatch(out, expected, 0, 0) == "");
    // Mixed layouts take the general path, with the same values.
    CHECK(value_mismatch(threshold_backward(g, xl, 0.25), expected, 0, 0) == "");
    // relu's backward is threshold_backward at 0 on its output.
    Tensor leaf = xl.detach().requires_grad_();
    relu(leaf).backward(gl);
    CHECK(value_mismatch(leaf.grad(), where(x > 0, g, 0.0), 0, 0) == "");
  }
  // float16 goes through the general path.
  Tensor h = tensor_of({-1.0, 0.5, 2.0}).to(kHalf);
  CHECK(values_of(threshold_backward(h, h, 0.5).to(kFloat64)) == std::vector<double>{0.0, 0.0, 2.0});
  // Second order: d/dg of <gg, threshold_backward(g, y)> is threshold_backward(gg, y), and y gets nothing.
  Tensor gr = tensor_of({1.0, -2.0, 3.0}).requires_grad_(), y = tensor_of({0.5, -0.5, 2.0});
  Tensor gg = tensor_of({0.1, 0.2, 0.3});
  Tensor d = autograd::grad({threshold_backward(gr, y, 0)}, {gr}, {gg})[0];
  CHECK(values_of(d) == std::vector<double>{0.1, 0.0, 0.3});
}

TEST_CASE("floor, ceil, round and trunc: C's floor, ceil, nearbyint and trunc, a zero gradient, copies of integers") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x = {-2.5, -1.5, -0.5, -0.0, 0.0, 0.4999999999999999, 0.5, 1.5, 2.5,
                                 3.7, -3.7, 1e20, -1e-300, inf, -inf, nan};
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"floor", [](const Tensor& t) { return gd::floor(t); }},
      {"ceil", [](const Tensor& t) { return t.ceil(); }},
      {"round", [](const Tensor& t) { return gd::round(t); }},
      {"trunc", [](const Tensor& t) { return t.trunc(); }}};
  const std::vector<double (*)(double)> reference = {std::floor, std::ceil, std::nearbyint, std::trunc};
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (size_t k = 0; k < ops.size(); ++k) {
      INFO(ops[k].first, " ", gd::dtype_name(dt));
      Tensor input = tensor_of(x, {}, dt);
      std::vector<double> want;
      for (double v : values_of(input)) want.push_back(reference[k](v));  // of the value rounded to dt
      Tensor y = ops[k].second(input);
      CHECK(y.dtype() == dt);
      CHECK(value_mismatch(values_of(y), want, 0, 0) == "");
      // Signs survive: floor(-0.0) and round(-0.5) are -0.
      CHECK(std::signbit(values_of(ops[k].second(tensor_of({-0.0}, {}, dt)))[0]));
      // In place, on a strided view: the same values in the view's places.
      Tensor base = tensor_of(x, {}, dt).reshape({4, 4}).t();
      Tensor expected = ops[k].second(base);
      Tensor view = base.clone();
      const std::string method = ops[k].first;
      if (method == "floor") view.floor_();
      else if (method == "ceil") view.ceil_();
      else if (method == "round") view.round_();
      else view.trunc_();
      CHECK(value_mismatch(values_of(view), values_of(expected), 0, 0) == "");
    }
  }
  // Piecewise constant: the gradient is zero, as PyTorch's.
  Tensor leaf = tensor_of({0.3, -1.7, 2.5}).requires_grad_();
  for (const auto& [name, f] : ops) {
    INFO(name);
    Tensor g = gd::autograd::grad({(f(leaf) * leaf).sum()}, {leaf})[0];
    CHECK(value_mismatch(values_of(g), values_of(f(leaf.detach())), 0, 0) == "");  // d(f(x) x)/dx = f(x)
  }
  CHECK(std::string(gd::floor(leaf).grad_fn()->name()) == "FloorBackward0");
  // Integers come back as copies; bool is refused.
  Tensor ints = gd::tensor(std::vector<int64_t>{-3, 0, 7});
  Tensor floored = gd::floor(ints);
  CHECK(floored.dtype() == gd::kInt64);
  CHECK(values_of(floored) == std::vector<double>{-3, 0, 7});
  CHECK(floored.data_ptr() != ints.data_ptr());
  CHECK(error_of([] { gd::round(gd::tensor(std::vector<bool>{true})); }) == "\"round\" not implemented for 'Bool'");
}

TEST_CASE("round with decimals scales by a power of ten in the tensor's dtype; frac is x - trunc(x)") {
  // PyTorch's round_decimals: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for d < 0.
  Tensor x = tensor_of({1.2345, -1.2355, 1234.5, -1250.0, 0.125, 2.675});
  CHECK(value_mismatch(values_of(gd::round(x, 2)),
                       {std::nearbyint(1.2345 * 100) / 100, std::nearbyint(-1.2355 * 100) / 100,
                        std::nearbyint(1234.5 * 100) / 100, -1250.0, std::nearbyint(0.125 * 100) / 100,
                        std::nearbyint(2.675 * 100) / 100},
                       0, 0) == "");
  CHECK(value_mismatch(values_of(x.round(-2)), {0, -0.0, 1200, -1200, 0, 0}, 0, 0) == "");
  CHECK(value_mismatch(values_of(gd::round(x, 0)), values_of(gd::round(x)), 0, 0) == "");
  Tensor x32 = x.to(gd::kFloat32);
  std::vector<double> want32;
  for (double v : values_of(x32)) want32.push_back(static_cast<float>(std::nearbyint(static_cast<float>(v) * 10.0f) / 10.0f));
  CHECK(value_mismatch(values_of(gd::round(x32, 1)), want32, 0, 0) == "");
  CHECK(error_of([] { gd::round(gd::tensor(std::vector<int64_t>{1}), 1); }) ==
        "\"round_decimals_cpu\" not implemented for 'Long'");
  // frac keeps x's sign and passes the gradient through.
  Tensor leaf = tensor_of({2.75, -2.75, 0.5, -0.0}).requires_grad_();
  Tensor f = gd::frac(leaf);
  CHECK(value_mismatch(values_of(f), {0.75, -0.75, 0.5, 0.0}, 0, 0) == "");
  Tensor g = gd::autograd::grad({f.sum()}, {leaf})[0];
  CHECK(value_mismatch(values_of(g), {1, 1, 1, 1}, 0, 0) == "");
  Tensor y = tensor_of({5.5, -0.25});
  y.frac_();
  CHECK(value_mismatch(values_of(y), {0.5, -0.25}, 0, 0) == "");
  CHECK(error_of([] { gd::frac(gd::tensor(std::vector<int64_t>{1})); }) == "\"frac_cpu\" not implemented for 'Long'");
}
