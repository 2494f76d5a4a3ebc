// The libtorch nn breadth against PyTorch 1.13 (Debian's /usr/bin/python3,
// float64): activations, the margin/embedding/Poisson losses, the functional
// normalizations, distances and dropouts. Each table row is named by the
// python that produced its values (x the row's input, the other names the
// tensors below); every row also passes gradcheck and gradgradcheck.
// Printing (PyTorch's repr and libtorch's pretty_print), error messages, and
// the statistics of the random ones (rrelu, the dropouts, gumbel_softmax).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace nn = gradiens::nn;
namespace F = gradiens::nn::functional;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::shape_value_mismatch;
using gd::testing::tensor_of;

namespace {

Tensor T(const std::vector<double>& values, const std::vector<int64_t>& shape) { return tensor_of(values, shape); }
Tensor L(const std::vector<double>& values, const std::vector<int64_t>& shape) {
  return tensor_of(values, shape, gd::kInt64);
}

// The reference script's tensors (torch.float64 unless integer; same literals):
Tensor A() { return T({0.3, -1.3, 0.7, 2.1, 1.5, 0.35, -0.8, -0.05, -0.4, 0.9, 1.15, -2.2}, {3, 4}); }
Tensor B() { return T({0.6, 0.2, -0.9, 1.1, -0.7, 1.4, 0.25, 0.8, 1.2, -0.3, 0.45, -1.6}, {3, 4}); }
Tensor C() { return T({-0.5, 0.95, 0.1, -1.2, 0.4, -0.6, 1.3, 0.75, -1.1, 0.55, -0.2, 0.65}, {3, 4}); }
Tensor A4() {
  return T({0.3, -1.3, 0.7, 2.1, 1.5, 0.35, -0.8, -0.05, -0.4, 0.9, 1.15, -2.2, 0.6, 0.2, -0.9, 1.1}, {1, 4, 2, 2});
}
Tensor W() { return T({0.5, 1.0, 2.0, 1.5}, {4}); }
Tensor TPM() { return T({1, -1, 1, 1, -1, -1, 1, -1, 1, 1, -1, -1}, {3, 4}); }
Tensor MLT() { return T({1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0}, {3, 4}); }
Tensor CNT() { return T({0, 1, 2, 3, 4, 0, 1, 5, 2, 2, 0, 1}, {3, 4}); }
Tensor POS() { return A().abs() + 0.1; }
Tensor Y3() { return L({1, 0, 3}, {3}); }
Tensor ML() { return L({3, 0, -1, 1, 1, 2, 3, -1, 0, -1, 2, 2}, {3, 4}); }
Tensor ML1() { return L({2, 1, -1, 0}, {4}); }
Tensor T3() { return T({1, -1, 1}, {3}); }
Tensor T3b() { return T({1, -1, -1}, {3}); }
Tensor R1() { return T({0.3, -0.8, 1.2, 0.05, -0.4}, {5}); }
Tensor R2() { return T({0.5, -0.1, 0.2, 0.6, -0.9}, {5}); }
Tensor RY() { return T({1, -1, 1, -1, 1}, {5}); }
const std::vector<double> kN3 = {0.3, -1.3, 0.7,  2.1, 1.5,  0.35, -0.8, -0.05, -0.4, 0.9,  1.15, -2.2,
                                 0.6, 0.2,  -0.9, 1.1, -0.7, 1.4,  0.25, 0.8,   1.2,  -0.3, 0.45, -1.6};
Tensor N3() { return T(kN3, {4, 3, 2}); }
Tensor G3() { return T(kN3, {2, 4, 3}); }
Tensor L3() {
  std::vector<double> v = kN3;
  v.insert(v.end(), {0.5, -0.2, 1.0, 0.1, -0.6, 0.8});
  return T(v, {2, 5, 3});
}
Tensor CW() { return T({0.5, 2.0, 1.5}, {3}); }
Tensor CB() { return T({0.1, -0.2, 0.3}, {3}); }
Tensor RM() { return T({0.2, -0.1, 0.4}, {3}); }
Tensor RV() { return T({1.5, 0.6, 2.0}, {3}); }
Tensor GW() { return T({0.5, 2.0, 1.5, -1.0}, {4}); }
Tensor GB() { return T({0.1, -0.2, 0.3, 0.0}, {4}); }

Tensor cosine_distance(const Tensor& a, const Tensor& b) { return 1 - F::cosine_similarity(a, b); }

struct Case {
  std::string python;
  Tensor input;
  std::function<Tensor(const Tensor&)> fn;
  std::vector<double> want;
  std::vector<int64_t> shape;
};

// Each row: the python expression, evaluated by PyTorch 1.13 in float64.
const std::vector<Case>& cases() {
  static const std::vector<Case> table = {
    {"F.elu(x, 0.7)", A(), [](const Tensor& x) { return F::elu(x, 0.7); }, {0.3, -0.5092277448761912, 0.7, 2.1, 1.5, 0.35, -0.38546972511794486, -0.034139402849500185, -0.23077596777505247, 0.9, 1.15, -0.6224377891463663}, {3, 4}},
    {"F.selu(x)", A(), [](const Tensor& x) { return F::selu(x); }, {0.31521029620664415, -1.2789613751543256, 0.7354906911488363, 2.206472073446509, 1.5760514810332207, 0.3677453455744181, -0.9681343852092549, -0.0857435166380419, -0.579610109755336, 0.9456308886199324, 1.2083061354588025, -1.56329638116675}, {3, 4}},
    {"F.celu(x, 0.6)", A(), [](const Tensor& x) { return F::celu(x, F::CELUFuncOptions().alpha(0.6)); }, {0.3, -0.5312646936043873, 0.7, 2.1, 1.5, 0.35, -0.44184171713056397, -0.04797335122240602, -0.29194972858044477, 0.9, 1.15, -0.5846630800760956}, {3, 4}},
    {"F.glu(x, 1)", A(), [](const Tensor& x) { return F::glu(x, 1); }, {0.20045633165044985, -1.1581741324457033, 0.46503827830858135, 0.17062591123052637, -0.3038043667796444, 0.08977544020771662}, {3, 2}},
    {"F.glu(x[:2], 0)", A(), [](const Tensor& x) { return F::glu(x.narrow(0, 0, 2), 0); }, {0.24527234285809307, -0.7626028525925292, 0.21701786321067126, 1.0237554673831581}, {1, 4}},
    {"F.gelu(x)", A(), [](const Tensor& x) { return F::gelu(x); }, {0.1853734266566858, -0.1258406299612934, 0.5306254434438489, 2.0624847168180853, 1.399789198096713, 0.22289072791146666, -0.16948431886671733, -0.02400305970808138, -0.13783130335587032, 0.7343458871879165, 1.0061672740172771, -0.030587584529696902}, {3, 4}},
    {"F.gelu(x, approximate='tanh')", A(), [](const Tensor& x) { return F::gelu(x, F::GELUFuncOptions().approximate("tanh")); }, {0.18537092354275922, -0.1260709876826906, 0.5305701347051167, 2.062669004961112, 1.3995715769802328, 0.22288619605225668, -0.16956830856355187, -0.024003061761377995, -0.13783883057264382, 0.7342284887097207, 1.0059662615625302, -0.030321472961988553}, {3, 4}},
    {"F.silu(x)", A(), [](const Tensor& x) { return F::silu(x); }, {0.1723327550434977, -0.2784145220446738, 0.46773144051771626, 1.870896675489213, 1.2263617142904655, 0.2053161526210655, -0.24802041509791004, -0.024375130175789482, -0.1605249359550192, 0.6398545523625035, 0.8734375544914776, -0.21945107606330733}, {3, 4}},
    {"F.mish(x)", A(), [](const Tensor& x) { return F::mish(x); }, {0.20800137234811503, -0.3073824647494959, 0.561148377643852, 2.0505990865628005, 1.4033782663958028, 0.24783837389686472, -0.28396326278162165, -0.029198286428552614, -0.18891648239351463, 0.7612059289525154, 1.0242521300858094, -0.23033609787797713}, {3, 4}},
    {"F.hardshrink(x)", A(), [](const Tensor& x) { return F::hardshrink(x); }, {0.0, -1.3, 0.7, 2.1, 1.5, 0.0, -0.8, 0.0, 0.0, 0.9, 1.15, -2.2}, {3, 4}},
    {"F.hardshrink(x, 0.75)", A(), [](const Tensor& x) { return F::hardshrink(x, 0.75); }, {0.0, -1.3, 0.0, 2.1, 1.5, 0.0, -0.8, 0.0, 0.0, 0.9, 1.15, -2.2}, {3, 4}},
    {"F.softshrink(x)", A(), [](const Tensor& x) { return F::softshrink(x); }, {0.0, -0.8, 0.19999999999999996, 1.6, 1.0, 0.0, -0.30000000000000004, 0.0, 0.0, 0.4, 0.6499999999999999, -1.7000000000000002}, {3, 4}},
    {"F.softshrink(x, 1.2)", A(), [](const Tensor& x) { return F::softshrink(x, 1.2); }, {0.0, -0.10000000000000009, 0.0, 0.9000000000000001, 0.30000000000000004, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0000000000000002}, {3, 4}},
    {"F.hardtanh(x)", A(), [](const Tensor& x) { return F::hardtanh(x); }, {0.3, -1.0, 0.7, 1.0, 1.0, 0.35, -0.8, -0.05, -0.4, 0.9, 1.0, -1.0}, {3, 4}},
    {"F.hardtanh(x, -0.5, 1.2)", A(), [](const Tensor& x) { return F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.5).max_val(1.2)); }, {0.3, -0.5, 0.7, 1.2, 1.2, 0.35, -0.5, -0.05, -0.4, 0.9, 1.15, -0.5}, {3, 4}},
    {"F.relu(x)", A(), [](const Tensor& x) { return F::relu(x); }, {0.3, 0.0, 0.7, 2.1, 1.5, 0.35, 0.0, 0.0, 0.0, 0.9, 1.15, 0.0}, {3, 4}},
    {"F.relu6(x * 3)", A(), [](const Tensor& x) { return F::relu6(x * 3); }, {0.8999999999999999, 0.0, 2.0999999999999996, 6.0, 4.5, 1.0499999999999998, 0.0, 0.0, 0.0, 2.7, 3.4499999999999997, 0.0}, {3, 4}},
    {"F.leaky_relu(x, 0.2)", A(), [](const Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)); }, {0.3, -0.26, 0.7, 2.1, 1.5, 0.35, -0.16000000000000003, -0.010000000000000002, -0.08000000000000002, 0.9, 1.15, -0.44000000000000006}, {3, 4}},
    {"F.rrelu(x, 0.1, 0.3, training=False)", A(), [](const Tensor& x) { return F::rrelu(x, F::RReLUFuncOptions().lower(0.1).upper(0.3)); }, {0.3, -0.26, 0.7, 2.1, 1.5, 0.35, -0.16000000000000003, -0.010000000000000002, -0.08000000000000002, 0.9, 1.15, -0.44000000000000006}, {3, 4}},
    {"F.logsigmoid(x)", A(), [](const Tensor& x) { return F::logsigmoid(x); }, {-0.5543552444685271, -1.5410084538329922, -0.4031860488854579, -0.11551952317975496, -0.2014132779827524, -0.533382155418777, -1.1711006659477778, -0.7184596480132863, -0.9130152523999526, -0.3411538747320878, -0.27508058318639844, -2.305083319768696}, {3, 4}},
    {"F.softmax(x, 1)", A(), [](const Tensor& x) { return F::softmax(x, 1); }, {0.11437239313513775, 0.023091387928700132, 0.17062356080733534, 0.6919126581288267, 0.6138194374169835, 0.1943578036457816, 0.06154082705000867, 0.13028193188722606, 0.10475519731380993, 0.38437789641935916, 0.4935509886154251, 0.017315917651405707}, {3, 4}},
    {"F.softmax(x, 0)", A(), [](const Tensor& x) { return F::softmax(x, F::SoftmaxFuncOptions(0)); }, {0.20761092402443032, 0.06565128926709536, 0.35823774098806616, 0.8849144691624496, 0.6892925421984827, 0.3418449388421145, 0.07993364451787893, 0.1030785166419691, 0.10309653377708697, 0.5925037718907902, 0.561828614494055, 0.012007014195581152}, {3, 4}},
    {"F.softmin(x, 1)", A(), [](const Tensor& x) { return F::softmin(x, 1); }, {0.14730466291002997, 0.729604771657971, 0.09874126842311565, 0.02434929700888352, 0.05306772428699669, 0.1675981105765644, 0.5293071645003073, 0.25002700063613137, 0.13272409027314327, 0.03617153430094789, 0.028170419238472404, 0.8029339561874363}, {3, 4}},
    {"F.log_softmax(x, 0)", A(), [](const Tensor& x) { return F::log_softmax(x, 0); }, {-1.5720895085332438, -2.723398039932709, -1.0265584320133816, -0.12226428365881899, -0.37208950853324385, -1.0733980399327088, -2.5265584320133816, -2.272264283658819, -2.2720895085332438, -0.5233980399327088, -0.5765584320133817, -4.422264283658819}, {3, 4}},
    {"F.prelu(x, W)", A(), [](const Tensor& x) { return F::prelu(x, W()); }, {0.3, -1.3, 0.7, 2.1, 1.5, 0.35, -1.6, -0.07500000000000001, -0.2, 0.9, 1.15, -3.3000000000000003}, {3, 4}},
    {"F.prelu(x, torch.tensor([0.3]))", A(), [](const Tensor& x) { return F::prelu(x, T({0.3}, {1})); }, {0.3, -0.39, 0.7, 2.1, 1.5, 0.35, -0.24, -0.015, -0.12, 0.9, 1.15, -0.66}, {3, 4}},
    {"F.softplus(x, 2, 1)", A(), [](const Tensor& x) { return F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(1)); }, {0.5187439752429428, 0.03582234598383491, 0.7, 2.1, 1.5, 0.551593024442729, 0.0919503704441694, 0.32219833003678544, 0.18555033297388884, 0.9, 1.15, 0.006101292303848047}, {3, 4}},
    {"F.softsign(x)", A(), [](const Tensor& x) { return F::softsign(x); }, {0.23076923076923075, -0.5652173913043479, 0.4117647058823529, 0.6774193548387097, 0.6, 0.25925925925925924, -0.4444444444444445, -0.047619047619047616, -0.28571428571428575, 0.4736842105263158, 0.5348837209302325, -0.6875}, {3, 4}},
    {"F.tanhshrink(x)", A(), [](const Tensor& x) { return F::tanhshrink(x); }, {0.008687387548409087, -0.4382768406866937, 0.09563222288283646, 1.1295480633865462, 0.5948517463551336, 0.013624455663667767, -0.13596322973215103, -4.162504212002621e-05, -0.020051037744775124, 0.18370212980097556, 0.33224592202971226, -1.2242568699685488}, {3, 4}},
    {"F.threshold(x, 0.1, 20)", A(), [](const Tensor& x) { return F::threshold(x, F::ThresholdFuncOptions(0.1, 20)); }, {0.3, 20.0, 0.7, 2.1, 1.5, 0.35, 20.0, 20.0, 20.0, 0.9, 1.15, 20.0}, {3, 4}},
    {"F.hardsigmoid(x * 3)", A(), [](const Tensor& x) { return F::hardsigmoid(x * 3); }, {0.65, 0.0, 0.85, 1.0, 1.0, 0.6749999999999999, 0.09999999999999994, 0.47500000000000003, 0.3, 0.9500000000000001, 1.0, 0.0}, {3, 4}},
    {"F.hardswish(x * 3)", A(), [](const Tensor& x) { return F::hardswish(x * 3); }, {0.585, -0.0, 1.7849999999999995, 6.300000000000001, 4.5, 0.7087499999999999, -0.23999999999999988, -0.07125000000000002, -0.36000000000000004, 2.5650000000000004, 3.4499999999999997, -0.0}, {3, 4}},
    {"F.prelu(x, W)", A4(), [](const Tensor& x) { return F::prelu(x, W()); }, {0.3, -0.65, 0.7, 2.1, 1.5, 0.35, -0.8, -0.05, -0.8, 0.9, 1.15, -4.4, 0.6, 0.2, -1.35, 1.1}, {1, 4, 2, 2}},
    {"torch.nn.Softmax2d()(x)", A4(), [](const Tensor& x) { return nn::Softmax2d()(x); }, {0.16216493998349055, 0.05072619005745022, 0.3340751066139636, 0.6675869762778753, 0.5384065615137434, 0.26413024833883436, 0.07454223204037748, 0.0777633066722838, 0.08052872598601735, 0.45780455004334925, 0.5239340605716064, 0.009058193283403128, 0.21889977251674864, 0.22733901156036612, 0.06744860077405253, 0.2455915237664377}, {1, 4, 2, 2}},
    {"F.local_response_norm(x, 3)", A4(), [](const Tensor& x) { return F::local_response_norm(x, 3); }, {0.29998245119770184, -1.299941096863882, 0.6999802256517285, 2.099768373559658, 1.4999062568354151, 0.34997705488005626, -0.799950953508345, -0.04998843749527043, -0.3999723022377398, 0.899978119370634, 1.1499202970701192, -2.199667171254181, 0.5999922001182981, 0.19999575010536186, -0.8999520217341395, 1.099833654352829}, {1, 4, 2, 2}},
    {"F.hinge_embedding_loss(x, TPM, reduction='none')", A(), [](const Tensor& x) { return F::hinge_embedding_loss(x, TPM(), F::HingeEmbeddingLossFuncOptions().reduction(gd::kNone)); }, {0.3, 2.3, 0.7, 2.1, 0.0, 0.65, -0.8, 1.05, -0.4, 0.9, 0.0, 3.2}, {3, 4}},
    {"F.multi_margin_loss(x, Y3, reduction='none')", A(), [](const Tensor& x) { return F::multi_margin_loss(x, Y3(), F::MultiMarginLossFuncOptions().reduction(gd::kNone)); }, {2.5, 0.0, 2.8125}, {3}},
    {"F.cosine_embedding_loss(x, B, T3, reduction='none')", A(), [](const Tensor& x) { return F::cosine_embedding_loss(x, B(), T3(), F::CosineEmbeddingLossFuncOptions().reduction(gd::kNone)); }, {0.6020540689713243, 0.0, 0.4058587310875653}, {3}},
    {"F.multilabel_margin_loss(x, ML, reduction='none')", A(), [](const Tensor& x) { return F::multilabel_margin_loss(x, ML(), F::MultilabelMarginLossFuncOptions(gd::kNone)); }, {0.35, 1.9999999999999998, 1.2125}, {3}},
    {"F.soft_margin_loss(x, TPM, reduction='none')", A(), [](const Tensor& x) { return F::soft_margin_loss(x, TPM(), F::SoftMarginLossFuncOptions(gd::kNone)); }, {0.554355244468527, 0.24100845383299216, 0.40318604888545784, 0.11551952317975493, 1.7014132779827524, 0.883382155418777, 1.1711006659477778, 0.6684596480132863, 0.9130152523999526, 0.3411538747320879, 1.4250805831863982, 0.10508331976869593}, {3, 4}},
    {"F.multilabel_soft_margin_loss(x, MLT, reduction='none')", A(), [](const Tensor& x) { return F::multilabel_soft_margin_loss(x, MLT(), F::MultilabelSoftMarginLossFuncOptions().reduction(gd::kNone)); }, {0.5035173175916831, 1.0185889368406484, 0.6960832575217838}, {3}},
    {"F.triplet_margin_loss(x, B, C, reduction='none')", A(), [](const Tensor& x) { return F::triplet_margin_loss(x, B(), C(), F::TripletMarginLossFuncOptions().reduction(gd::kNone)); }, {0.0, 1.1107388121599802, 0.0}, {3}},
    {"F.margin_ranking_loss(x, R2, RY, reduction='none')", R1(), [](const Tensor& x) { return F::margin_ranking_loss(x, R2(), RY(), F::MarginRankingLossFuncOptions().reduction(gd::kNone)); }, {0.2, 0.0, 0.0, 0.0, 0.0}, {5}},
    {"F.poisson_nll_loss(x, CNT, reduction='none')", A(), [](const Tensor& x) { return F::poisson_nll_loss(x, CNT(), F::PoissonNLLLossFuncOptions().reduction(gd::kNone)); }, {1.3498588075760032, 1.5725317930340126, 0.6137527074704767, 1.866169912567651, -1.5183109296619355, 1.4190675485932573, 1.2493289641172216, 1.201229424500714, 1.4703200460356394, 0.6596031111569498, 3.158192909689767, 2.310803158362334}, {3, 4}},
    {"F.hinge_embedding_loss(x, TPM, reduction='mean')", A(), [](const Tensor& x) { return F::hinge_embedding_loss(x, TPM(), F::HingeEmbeddingLossFuncOptions().reduction(gd::kMean)); }, {0.8333333333333334}, {}},
    {"F.multi_margin_loss(x, Y3, reduction='mean')", A(), [](const Tensor& x) { return F::multi_margin_loss(x, Y3(), F::MultiMarginLossFuncOptions().reduction(gd::kMean)); }, {1.7708333333333333}, {}},
    {"F.cosine_embedding_loss(x, B, T3, reduction='mean')", A(), [](const Tensor& x) { return F::cosine_embedding_loss(x, B(), T3(), F::CosineEmbeddingLossFuncOptions().reduction(gd::kMean)); }, {0.3359709333529632}, {}},
    {"F.multilabel_margin_loss(x, ML, reduction='mean')", A(), [](const Tensor& x) { return F::multilabel_margin_loss(x, ML(), F::MultilabelMarginLossFuncOptions(gd::kMean)); }, {1.1874999999999998}, {}},
    {"F.soft_margin_loss(x, TPM, reduction='mean')", A(), [](const Tensor& x) { return F::soft_margin_loss(x, TPM(), F::SoftMarginLossFuncOptions(gd::kMean)); }, {0.7102298373180383}, {}},
    {"F.multilabel_soft_margin_loss(x, MLT, reduction='mean')", A(), [](const Tensor& x) { return F::multilabel_soft_margin_loss(x, MLT(), F::MultilabelSoftMarginLossFuncOptions().reduction(gd::kMean)); }, {0.7393965039847051}, {}},
    {"F.triplet_margin_loss(x, B, C, reduction='mean')", A(), [](const Tensor& x) { return F::triplet_margin_loss(x, B(), C(), F::TripletMarginLossFuncOptions().reduction(gd::kMean)); }, {0.3702462707199934}, {}},
    {"F.margin_ranking_loss(x, R2, RY, reduction='mean')", R1(), [](const Tensor& x) { return F::margin_ranking_loss(x, R2(), RY(), F::MarginRankingLossFuncOptions().reduction(gd::kMean)); }, {0.04}, {}},
    {"F.poisson_nll_loss(x, CNT, reduction='mean')", A(), [](const Tensor& x) { return F::poisson_nll_loss(x, CNT(), F::PoissonNLLLossFuncOptions().reduction(gd::kMean)); }, {1.2793789544535075}, {}},
    {"F.hinge_embedding_loss(x, TPM, reduction='sum')", A(), [](const Tensor& x) { return F::hinge_embedding_loss(x, TPM(), F::HingeEmbeddingLossFuncOptions().reduction(gd::kSum)); }, {10.0}, {}},
    {"F.multi_margin_loss(x, Y3, reduction='sum')", A(), [](const Tensor& x) { return F::multi_margin_loss(x, Y3(), F::MultiMarginLossFuncOptions().reduction(gd::kSum)); }, {5.3125}, {}},
    {"F.cosine_embedding_loss(x, B, T3, reduction='sum')", A(), [](const Tensor& x) { return F::cosine_embedding_loss(x, B(), T3(), F::CosineEmbeddingLossFuncOptions().reduction(gd::kSum)); }, {1.0079128000588895}, {}},
    {"F.multilabel_margin_loss(x, ML, reduction='sum')", A(), [](const Tensor& x) { return F::multilabel_margin_loss(x, ML(), F::MultilabelMarginLossFuncOptions(gd::kSum)); }, {3.5624999999999996}, {}},
    {"F.soft_margin_loss(x, TPM, reduction='sum')", A(), [](const Tensor& x) { return F::soft_margin_loss(x, TPM(), F::SoftMarginLossFuncOptions(gd::kSum)); }, {8.52275804781646}, {}},
    {"F.multilabel_soft_margin_loss(x, MLT, reduction='sum')", A(), [](const Tensor& x) { return F::multilabel_soft_margin_loss(x, MLT(), F::MultilabelSoftMarginLossFuncOptions().reduction(gd::kSum)); }, {2.2181895119541153}, {}},
    {"F.triplet_margin_loss(x, B, C, reduction='sum')", A(), [](const Tensor& x) { return F::triplet_margin_loss(x, B(), C(), F::TripletMarginLossFuncOptions().reduction(gd::kSum)); }, {1.1107388121599802}, {}},
    {"F.margin_ranking_loss(x, R2, RY, reduction='sum')", R1(), [](const Tensor& x) { return F::margin_ranking_loss(x, R2(), RY(), F::MarginRankingLossFuncOptions().reduction(gd::kSum)); }, {0.2}, {}},
    {"F.poisson_nll_loss(x, CNT, reduction='sum')", A(), [](const Tensor& x) { return F::poisson_nll_loss(x, CNT(), F::PoissonNLLLossFuncOptions().reduction(gd::kSum)); }, {15.35254745344209}, {}},
    {"F.hinge_embedding_loss(x, TPM, margin=0.5)", A(), [](const Tensor& x) { return F::hinge_embedding_loss(x, TPM(), F::HingeEmbeddingLossFuncOptions().margin(0.5)); }, {0.6666666666666666}, {}},
    {"F.multi_margin_loss(x, Y3, p=2, margin=0.7, weight=W)", A(), [](const Tensor& x) { return F::multi_margin_loss(x, Y3(), F::MultiMarginLossFuncOptions().p(2).margin(0.7).weight(W())); }, {7.085729166666668}, {}},
    {"F.multi_margin_loss(x[1], Y3[1], reduction='none')", A(), [](const Tensor& x) { return F::multi_margin_loss(x.select(0, 1), Y3().select(0, 1), F::MultiMarginLossFuncOptions().reduction(gd::kNone)); }, {0.0}, {}},
    {"F.cosine_embedding_loss(x, B, T3b, margin=0.2)", A(), [](const Tensor& x) { return F::cosine_embedding_loss(x, B(), T3b(), F::CosineEmbeddingLossFuncOptions().margin(0.2)); }, {0.33206511262791966}, {}},
    {"F.cosine_embedding_loss(x[0], B[0], T3b[1])", A(), [](const Tensor& x) { return F::cosine_embedding_loss(x.select(0, 0), B().select(0, 0), T3b().select(0, 1)); }, {0.39794593102867565}, {}},
    {"F.multilabel_margin_loss(x[0], ML1, reduction='none')", A(), [](const Tensor& x) { return F::multilabel_margin_loss(x.select(0, 0), ML1(), gd::kNone); }, {2.5}, {}},
    {"F.multilabel_soft_margin_loss(x, MLT, weight=W)", A(), [](const Tensor& x) { return F::multilabel_soft_margin_loss(x, MLT(), F::MultilabelSoftMarginLossFuncOptions().weight(W())); }, {0.952688725324279}, {}},
    {"F.triplet_margin_loss(x, B, C, margin=0.5, p=1, swap=True)", A(), [](const Tensor& x) { return F::triplet_margin_loss(x, B(), C(), F::TripletMarginLossFuncOptions().margin(0.5).p(1).swap(true)); }, {0.48333266666666636}, {}},
    {"F.triplet_margin_loss(x, C, B, margin=2.0, swap=True, reduction='none')", A(), [](const Tensor& x) { return F::triplet_margin_loss(x, C(), B(), F::TripletMarginLossFuncOptions().margin(2.0).swap(true).reduction(gd::kNone)); }, {3.6883500805988403, 2.1633180061905675, 3.046959121349835}, {3}},
    {"F.triplet_margin_with_distance_loss(x, B, C, reduction='none')", A(), [](const Tensor& x) { return F::triplet_margin_with_distance_loss(x, B(), C(), F::TripletMarginWithDistanceLossFuncOptions().reduction(gd::kNone)); }, {0.0, 1.1107388121599802, 0.0}, {3}},
    {"F.triplet_margin_with_distance_loss(x, B, C, distance_function=lambda a, b: 1 - F.cosine_similarity(a, b), margin=0.9, swap=True)", A(), [](const Tensor& x) { return F::triplet_margin_with_distance_loss(x, B(), C(), F::TripletMarginWithDistanceLossFuncOptions().distance_function(cosine_distance).margin(0.9).swap(true)); }, {0.4020739231933818}, {}},
    {"F.margin_ranking_loss(x, R2, RY, margin=0.3)", R1(), [](const Tensor& x) { return F::margin_ranking_loss(x, R2(), RY(), F::MarginRankingLossFuncOptions().margin(0.3)); }, {0.1}, {}},
    {"F.poisson_nll_loss(x, CNT, full=True, reduction='none')", A(), [](const Tensor& x) { return F::poisson_nll_loss(x, CNT(), F::PoissonNLLLossFuncOptions().full(true).reduction(gd::kNone)); }, {1.3498588075760032, 1.5725317930340126, 1.2655591920750127, 3.6302514561107078, 1.6389522285822449, 1.4190675485932573, 1.2493289641172216, 5.972076476092939, 2.122126530640175, 1.3114095957614857, 3.158192909689767, 2.310803158362334}, {3, 4}},
    {"F.poisson_nll_loss(x, CNT, log_input=False, eps=1e-3)", POS(), [](const Tensor& x) { return F::poisson_nll_loss(x, CNT(), F::PoissonNLLLossFuncOptions().log_input(false).eps(1e-3)); }, {1.5759113357555343}, {}},
    {"F.batch_norm(x, None, None, CW, CB, training=True)", N3(), [](const Tensor& x) { return F::batch_norm(x, {}, {}, F::BatchNormFuncOptions().weight(CW()).bias(CB()).training(true)); }, {0.3259705089566044, -0.8792055388119524, 0.1207116576621014, 3.1140204625083823, 1.967251295492964, 0.6506236630006662, -0.5025880238842784, 0.0623382485072326, -2.231173831859976, 0.5483272012115702, 1.5665385377779166, -2.26885500035182, 0.5519410179132087, 0.2506470059710696, -3.3002126907336478, 0.975942744761039, -0.551514610144475, 1.8527619361458074, 0.288308757463837, 0.7025880238842784, 1.1897505165357731, -2.0173660600852417, 0.7651130223478226, -1.581918844268882}, {4, 3, 2}},
    {"F.batch_norm(x, RM, RV, CW, CB, training=False, eps=1e-3)", N3(), [](const Tensor& x) { return F::batch_norm(x, RM(), RV(), F::BatchNormFuncOptions().weight(CW()).bias(CB()).eps(1e-3)); }, {0.1408112275703978, -0.5121684135559671, 1.863871940718994, 5.475647836977235, 1.4664346167455888, 0.24698024469338226, -0.3081122757039781, -0.0020280689259945172, -0.973951977769623, 2.379839925898743, 1.095296329599265, -2.4570272759441196, 0.2632449102815912, 0.1, -2.2638719407189942, 2.895807911078492, -0.8664346167455889, 1.3603951061323534, 0.1204056137851989, 0.3448673654223869, 3.1537919036683655, -0.7159679851797486, 0.35301975530661767, -1.8207902122647073}, {4, 3, 2}},
    {"F.instance_norm(x)", N3(), [](const Tensor& x) { return F::instance_norm(x); }, {0.9999921875915515, -0.9999921875915515, -0.9999897960745494, 0.9999897960745496, 0.9999848774696971, -0.9999848774696976, -0.9999644463406282, 0.9999644463406283, -0.999988165890546, 0.999988165890546, 0.9999982178706583, -0.9999982178706585, 0.999875023432618, -0.9998750234326184, -0.9999950000374997, 0.9999950000374999, -0.9999954648834589, 0.9999954648834589, -0.9999338908537274, 0.9999338908537273, 0.9999911112296278, -0.9999911112296278, 0.9999952409619918, -0.9999952409619919}, {4, 3, 2}},
    {"F.instance_norm(x, weight=CW, bias=CB, eps=1e-3)", N3(), [](const Tensor& x) { return F::instance_norm(x, F::InstanceNormFuncOptions().weight(CW()).bias(CB()).eps(1e-3)); }, {0.5996098321684391, -0.39960983216843915, -2.197962302068985, 1.797962302068985, 1.7977367018417238, -1.1977367018417238, -0.39823164786452897, 0.598231647864529, -2.1976373293583116, 1.7976373293583114, 1.7997327513229868, -1.199732751322987, 0.5938647983247948, -0.3938647983247949, -2.1990007493755463, 1.7990007493755464, -1.1993201903117876, 1.7993201903117877, -0.3967266423893328, 0.5967266423893328, 1.7982245890863868, -2.1982245890863865, 1.799286648396228, -1.199286648396228}, {4, 3, 2}},
    {"F.instance_norm(x, RM, RV, use_input_stats=False)", N3(), [](const Tensor& x) { return F::instance_norm(x, F::InstanceNormFuncOptions().running_mean(RM()).running_var(RV()).use_input_stats(false)); }, {0.08164938592860643, -1.2247407889290967, 1.0327869524665678, 2.8401641192830613, 0.777815514768846, -0.03535525067131121, -0.8164938592860644, -0.2041234648215161, -0.38729510717496296, 1.2909836905832097, 0.5303287600696677, -1.8384730349081817, 0.32659754371442573, 3.5137876973186315e-18, -1.0327869524665678, 1.5491804286998518, -0.777815514768846, 0.7071050134262236, 0.040824692964303216, 0.4898963155716387, 1.6782787977581726, -0.2581967381166419, 0.03535525067131118, -1.4142100268524473}, {4, 3, 2}},
    {"F.group_norm(x, 2, GW, GB)", G3(), [](const Tensor& x) { return F::group_norm(x, F::GroupNormFuncOptions(2).weight(GW()).bias(GB())); }, {-0.04447331004387931, -0.7941726486499555, 0.1429515246076397, 2.595753783551826, 1.4712047756427113, -0.6841808228497577, -0.4628923316828755, 0.5468181073091657, 0.0756199024462131, -1.0171897755771675, -1.2415698731309543, 1.7651234340897906, 0.2851378460826154, 0.05127951418878545, -0.591830898519247, 1.7098430437996115, -2.499606930289328, 2.411418039481101, 0.4938789246778748, 1.4078795695878554, 2.0726073113405685, 0.4800811468214039, -0.35082853036948763, 1.920324587285616}, {2, 4, 3}},
    {"F.group_norm(x, 4, eps=1e-3)", G3(), [](const Tensor& x) { return F::group_norm(x, F::GroupNormFuncOptions(4).eps(1e-3)); }, {0.4626003764990347, -1.387801129497104, 0.9252007529980694, 1.0778002340656438, 0.2522511186111081, -1.3300513526767517, -1.2444255091306893, 1.1903200522119637, 0.05410545691872561, 0.6233474133288666, 0.7873862063101471, -1.410733619639014, 0.9973787635125179, 0.3674553339256645, -1.3648340974381825, 0.5388506717613031, -1.4010117465793874, 0.8621610748180847, -1.279669717213328, 0.12796697172133292, 1.151702745491995, 0.21632764158759618, 1.1013043571732168, -1.3176319987608132}, {2, 4, 3}},
    {"F.group_norm(x, 1)", G3(), [](const Tensor& x) { return F::group_norm(x, 1); }, {0.09621552790265946, -1.2721830911573857, 0.4383151826676706, 1.6356639743452102, 1.122514492197693, 0.13897798474828585, -0.8445585227011215, -0.20312167001672538, -0.5024588679361102, 0.6093650100501764, 0.8231772942783082, -2.041907314378661, 0.44384788855301044, -0.009443572096872561, -1.255995088884051, 1.0104622143653643, -1.0293493585591094, 1.3504308098527766, 0.04721786048436281, 0.670493618877952, 1.123785079527835, -0.5760578979092263, 0.27386359080930434, -2.0492551450213465}, {2, 4, 3}},
    {"F.layer_norm(x, [3, 2], eps=1e-3)", N3(), [](const Tensor& x) { return F::layer_norm(x, F::LayerNormFuncOptions({3, 2}).eps(1e-3)); }, {-0.288821093991253, -1.7875683925404577, 0.08586573064604815, 1.3972696168766023, 0.8352393799206506, -0.24198524091159038, -0.5083922099922359, 0.16447983264454696, -0.1495271205859517, 1.0167844199844718, 1.2410751008633993, -1.7644200229142304, 0.3700253491422082, -0.09737509187952843, -1.3827263046893044, 0.9542759004193792, -1.1490260841784359, 1.3048262311856815, 0.12917415902178964, 0.7381380515530833, 1.181020882484933, -0.479789733509504, 0.3506155744877146, -1.9191589340380162}, {4, 3, 2}},
    {"F.local_response_norm(x, 3)", L3(), [](const Tensor& x) { return F::local_response_norm(x, 3); }, {0.2999662544290784, -1.299871964713308, 0.6999892814414824, 2.09973019044866, 1.4998521732484436, 0.3499932407772935, -0.7998828200278474, -0.04999553171590939, -0.39994878265213746, 0.8999592771498217, 1.1499607578123265, -2.199680504140799, 0.5999824505988723, 0.19999318777071468, -0.8998728959455248, 1.0999650075487282, -0.6999802256517285, 1.3998810117996074, 0.24999148471339333, 0.7999733510356991, 1.1998212310757408, -0.2999969812854384, 0.44999007213053893, -1.5998000291622112, 0.499995625044661, -0.19999698755293746, 0.9998950128608496, 0.09999935000492911, -0.5999940000699991, 0.7999672015688547}, {2, 5, 3}},
    {"F.local_response_norm(x, 2, alpha=0.5, beta=0.6, k=2.0)", L3(), [](const Tensor& x) { return F::local_response_norm(x, F::LocalResponseNormFuncOptions(2).alpha(0.5).beta(0.6).k(2.0)); }, {0.19660209281279714, -0.7645133629734745, 0.44564539242380635, 1.0600083387267247, 0.7782599069223862, 0.22091565770952748, -0.3935135351458129, -0.028425501293309768, -0.25846343949683925, 0.5373031901519661, 0.692061246851022, -1.084657601527547, 0.3647250930665609, 0.12006899956547988, -0.4309222446645376, 0.6669187105819925, -0.44564539242380635, 0.8098571623329034, 0.1509586134757407, 0.4875773417391677, 0.640139063332686, -0.1956963677863837, 0.2795783049492909, -0.8276509727548585, 0.32174097143412794, -0.12960764425680524, 0.5290068483985735, 0.06472140944803152, -0.38443212614334066, 0.47193236421659024}, {2, 5, 3}},
    {"F.local_response_norm(x, 4, alpha=0.3)", L3(), [](const Tensor& x) { return F::local_response_norm(x, F::LocalResponseNormFuncOptions(4).alpha(0.3)); }, {0.24121311197925124, -1.0705705425522012, 0.6768130741654477, 1.6444262361132367, 1.235139632417126, 0.3355235712450561, -0.6066070564788002, -0.038955477883492205, -0.307346845061395, 0.6753531952511755, 0.9606311054805853, -1.6693057298148117, 0.5453674218103407, 0.1859015363584912, -0.6861726296255258, 1.0273111035558309, -0.6585682600837581, 1.1807154368708104, 0.23240656813474153, 0.7448416963364088, 0.9095568474191051, -0.275381782012224, 0.4181184545618751, -1.1676400781705292, 0.48870383988517524, -0.18707209195440316, 0.7675317062257143, 0.09807540775296593, -0.580437676633262, 0.6514718765773186}, {2, 5, 3}},
    {"F.normalize(x)", A(), [](const Tensor& x) { return F::normalize(x); }, {0.11607348488012051, -0.5029851011471889, 0.27083813138694784, 0.8125143941608436, 0.86386842558136, 0.20156929930231732, -0.4607298269767254, -0.028795614186045336, -0.14977492168046147, 0.3369935737810383, 0.43060289983132666, -0.823762069242538}, {3, 4}},
    {"F.normalize(x, p=1.5, dim=0)", A(), [](const Tensor& x) { return F::normalize(x, F::NormalizeFuncOptions().p(1.5).dim(0)); }, {0.17448784507653697, -0.6977508890959124, 0.3765678217290093, 0.614501019966994, 0.8724392253826849, 0.18785600860274565, -0.43036322483315353, -0.014630976665880811, -0.23265046010204934, 0.4830583078356317, 0.6186471356976582, -0.6437629732987556}, {3, 4}},
    {"F.cosine_similarity(x, B)", A(), [](const Tensor& x) { return F::cosine_similarity(x, B()); }, {0.3979459310287875, -0.2594888976711579, 0.5941412689125455}, {3}},
    {"F.cosine_similarity(x, B, dim=0)", A(), [](const Tensor& x) { return F::cosine_similarity(x, B(), F::CosineSimilarityFuncOptions().dim(0)); }, {-0.5642168123635734, -0.017085555355484325, -0.19246035455585425, 0.9064205061585642}, {4}},
    {"F.pairwise_distance(x, B)", A(), [](const Tensor& x) { return F::pairwise_distance(x, B()); }, {2.4289918896538127, 2.787023232770764, 2.202271418332445}, {3}},
    {"F.pairwise_distance(x, B, p=1, keepdim=True)", A(), [](const Tensor& x) { return F::pairwise_distance(x, B(), F::PairwiseDistanceFuncOptions().p(1).keepdim(true)); }, {4.4, 5.149998, 4.1}, {3, 1}},
    {"F.pairwise_distance(x, B[0], p=3)", A(), [](const Tensor& x) { return F::pairwise_distance(x, B().select(0, 0), F::PairwiseDistanceFuncOptions().p(3)); }, {2.040667766462714, 1.3111949471977802, 3.580322250974922}, {3}},

  };
  return table;
}

}  // namespace

TEST_CASE("activations, losses, normalizations and distances match PyTorch") {
  for (const Case& c : cases()) {
    CAPTURE(c.python);
    CHECK(shape_value_mismatch(c.fn(c.input), c.want, c.shape, 1e-12, 1e-14) == "");
  }
}

TEST_CASE("activations, losses, normalizations and distances pass gradcheck and gradgradcheck") {
  for (const Case& c : cases()) {
    CAPTURE(c.python);
    Tensor x = c.input.detach().requires_grad_();
    auto fn = [&c](const std::vector<Tensor>& in) { return std::vector<Tensor>{c.fn(in[0])}; };
    CHECK(error_of([&] { gd::autograd::gradcheck(fn, {x}); }) == "");
    CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, {x}); }) == "");
  }
}

namespace {
std::string mismatch(const Tensor& t, const std::vector<double>& values, const std::vector<int64_t>& shape) {
  return shape_value_mismatch(t, values, shape, 1e-12, 1e-14);
}
template <class M>
std::string libtorch_print(const M& module) {
  std::ostringstream out;
  module->pretty_print(out);
  return out.str();
}
}  // namespace

TEST_CASE("normalization modules and running statistics match PyTorch") {
  // m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True, momentum=0.3); m(N3), then m.eval(); m(N3).
  nn::InstanceNorm1d in(nn::InstanceNormOptions(3).affine(true).track_running_stats(true).momentum(0.3));
  in->to(gd::kFloat64);
  CHECK(in->named_buffers().keys() == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  CHECK(mismatch(in(N3()), {0.9999921875915515, -0.9999921875915515, -0.9999897960745494, 0.9999897960745496,
                            0.9999848774696971, -0.9999848774696976, -0.9999644463406282, 0.9999644463406283,
                            -0.999988165890546, 0.999988165890546, 0.9999982178706583, -0.9999982178706585,
                            0.999875023432618, -0.9998750234326184, -0.9999950000374997, 0.9999950000374999,
                            -0.9999954648834589, 0.9999954648834589, -0.9999338908537274, 0.9999338908537273,
                            0.9999911112296278, -0.9999911112296278, 0.9999952409619918, -0.9999952409619919},
                 {4, 3, 2}) == "");
  CHECK(mismatch(in->running_mean, {6.938893903907228e-18, 0.165, 0.01312499999999999}, {3}) == "");
  CHECK(mismatch(in->running_var, {0.8344374999999999, 1.0712499999999998, 1.4934062499999998}, {3}) == "");
  in->eval();
  CHECK(mismatch(in(N3()), {0.3284140630357945, -1.423127606488443, 0.516899768328727, 1.8695346761048353,
                            1.216701442859052, 0.27566291622573724, -0.8757708347621188, -0.05473567717263243,
                            -0.5458848020667866, 0.7101333265824569, 0.93029841301413, -1.8109877297872647,
                            0.656828126071589, 0.2189427086905297, -1.028968697701111, 0.9033668848361867,
                            -0.5835461733090282, 1.1348720057605026, 0.2736783858631621, 0.8757708347621188,
                            0.9999836639630514, -0.44926802293992163, 0.35749235332428636, -1.3200111071959701},
                 {4, 3, 2}) == "");
  // b = nn.BatchNorm3d(2); b(N3.reshape(2, 2, 1, 3, 2)).
  nn::BatchNorm3d bn(2);
  bn->to(gd::kFloat64);
  CHECK(mismatch(bn(N3().reshape({2, 2, 1, 3, 2})),
                 {-0.14872816893913035, -1.7804886510141604, 0.2592119515796271, 1.6870023733952786,
                  1.0750921926171422, -0.09773565387428566, -0.7278889510525917, 3.7551854399899125e-17,
                  -0.33968151049120937, 0.9219926713332828, 1.1646223216841465, -2.0866149930174296,
                  0.15722692144993777, -0.2507131990688197, -1.3725485304954028, 0.6671520720983848,
                  -1.168578470236024, 0.9731071624874528, 0.2911555804210367, 0.8249408111929373, 1.2131482517543193,
                  -0.2426296503508638, 0.4852593007017278, -1.5043038321753561},
                 {2, 2, 1, 3, 2}) == "");
  CHECK(mismatch(bn->running_mean, {0.044583333333333336, -0.0050000000000000044}, {2}) == "");
  CHECK(mismatch(bn->running_var, {1.0048844696969697, 1.015818181818182}, {2}) == "");
  // rm, rv = RM.clone(), RV.clone(); F.instance_norm(N3, rm, rv, momentum=0.2) / F.batch_norm(N3, rm, rv, training=True, momentum=0.2).
  Tensor rm = RM(), rv = RV();
  F::instance_norm(N3(), F::InstanceNormFuncOptions().running_mean(rm).running_var(rv).momentum(0.2));
  CHECK(mismatch(rm, {0.16000000000000003, 0.029999999999999975, 0.3287500000000001}, {3}) == "");
  CHECK(mismatch(rv, {1.289625, 0.7275, 2.1289375}, {3}) == "");
  rm = RM(), rv = RV();
  F::batch_norm(N3(), rm, rv, F::BatchNormFuncOptions().training(true).momentum(0.2));
  CHECK(mismatch(rm, {0.16000000000000003, 0.03, 0.32875000000000004}, {3}) == "");
  CHECK(mismatch(rv, {1.300714285714286, 0.68, 1.9923482142857145}, {3}) == "");
  // GroupNorm's module equals its functional form with the module's parameters.
  nn::GroupNorm gn(2, 4);
  gn->to(gd::kFloat64);
  CHECK(gn->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(gd::testing::value_mismatch(gn(G3()), F::group_norm(G3(), 2)) == "");
  CHECK(nn::GroupNorm(nn::GroupNormOptions(2, 4).affine(false))->named_parameters().is_empty());
}

TEST_CASE("activation and loss modules call their functional forms") {
  const Tensor x = A();
  auto same = [](const Tensor& a, const Tensor& b) { return gd::testing::value_mismatch(a, b, 0, 0); };
  CHECK(same(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(1.2))(x),
             F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.5).max_val(1.2))) == "");
  CHECK(same(nn::CELU(nn::CELUOptions().alpha(0.6))(x), F::celu(x, F::CELUFuncOptions().alpha(0.6))) == "");
  CHECK(same(nn::GLU(1)(x), F::glu(x, 1)) == "");
  CHECK(same(nn::Threshold(0.1, 20)(x), F::threshold(x, F::ThresholdFuncOptions(0.1, 20))) == "");
  CHECK(same(nn::Softmin(1)(x), F::softmin(x, 1)) == "");
  CHECK(same(nn::Mish()(x), F::mish(x)) == "");
  CHECK(same(nn::LogSigmoid()(x), F::logsigmoid(x)) == "");
  CHECK(same(nn::ReLU6()(x * 3), F::relu6(x * 3)) == "");
  CHECK(same(nn::Softplus(nn::SoftplusOptions().beta(2))(x), F::softplus(x, F::SoftplusFuncOptions().beta(2))) == "");
  nn::PReLU prelu(nn::PReLUOptions().num_parameters(4).init(0.375));
  prelu->to(gd::kFloat64);
  CHECK(same(prelu->weight, T({0.375, 0.375, 0.375, 0.375}, {4})) == "");
  CHECK(same(prelu(x), F::prelu(x, prelu->weight)) == "");
  // RReLU in evaluation is leaky_relu with the mean slope.
  nn::RReLU rrelu(nn::RReLUOptions().lower(0.1).upper(0.3));
  rrelu->eval();
  CHECK(same(rrelu(x), F::leaky_relu(x, 0.2)) == "");
  CHECK(same(nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.2))(x, B(), T3b()),
             F::cosine_embedding_loss(x, B(), T3b(), F::CosineEmbeddingLossFuncOptions().margin(0.2))) == "");
  CHECK(same(nn::TripletMarginLoss()(x, B(), C()), F::triplet_margin_loss(x, B(), C())) == "");
  CHECK(same(nn::MultiMarginLoss(nn::MultiMarginLossOptions().weight(W()))(x, Y3()),
             F::multi_margin_loss(x, Y3(), F::MultiMarginLossFuncOptions().weight(W()))) == "");
  CHECK(nn::MultiLabelSoftMarginLoss(nn::MultiLabelSoftMarginLossOptions().weight(W()))->named_buffers().keys() ==
        std::vector<std::string>{"weight"});
  CHECK(same(nn::CosineSimilarity()(x, B()), F::cosine_similarity(x, B())) == "");
  CHECK(same(nn::PairwiseDistance(nn::PairwiseDistanceOptions().p(1))(x, B()),
             F::pairwise_distance(x, B(), F::PairwiseDistanceFuncOptions().p(1))) == "");
  // In-place forms write into their input and return it.
  Tensor y = x.clone();
  Tensor out = F::hardtanh(y, F::HardtanhFuncOptions().inplace(true));
  CHECK(out.data_ptr<double>() == y.data_ptr<double>());
  CHECK(same(y, F::hardtanh(x)) == "");
  y = x.clone();
  nn::ReLU(true)(y);
  CHECK(same(y, gd::relu(x)) == "");
  y = x.clone();
  F::selu(y, true);
  CHECK(same(y, F::selu(x)) == "");
}

TEST_CASE("F::one_hot") {
  CHECK(gd::testing::value_mismatch(F::one_hot(L({2, 0, 1}, {3})), L({0, 0, 1, 1, 0, 0, 0, 1, 0}, {3, 3})) == "");
  CHECK(F::one_hot(L({1, 0}, {2}), 4).sizes() == gd::IntArrayRef({2, 4}));
  CHECK(F::one_hot(L({1, 0}, {2}), 4).dtype() == gd::kInt64);
  CHECK(error_of([] { F::one_hot(L({3}, {1}), 3); }) == "Class values must be smaller than num_classes.");
  CHECK(error_of([] { F::one_hot(L({-1}, {1}), 3); }) == "Class values must be non-negative.");
  CHECK(error_of([] { F::one_hot(T({1}, {1})); }) == "one_hot is only applicable to index tensor.");
}

TEST_CASE("modules print as PyTorch's repr and libtorch's pretty_print") {
  // print(module) in PyTorch 1.13 for the same arguments.
  const std::vector<std::pair<std::string, std::string>> repr = {
    {nn::InstanceNorm2d(4)->repr(), "InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)"},
    {nn::GroupNorm(nn::GroupNormOptions(2, 4).eps(2e-5).affine(false))->repr(), "GroupNorm(2, 4, eps=2e-05, affine=False)"},
    {nn::LocalResponseNorm(2)->repr(), "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"},
    {nn::Dropout2d(nn::Dropout2dOptions(0.25).inplace(true))->repr(), "Dropout2d(p=0.25, inplace=True)"},
    {nn::AlphaDropout()->repr(), "AlphaDropout(p=0.5, inplace=False)"},
    {nn::Hardtanh()->repr(), "Hardtanh(min_val=-1.0, max_val=1.0)"},
    {nn::RReLU()->repr(), "RReLU(lower=0.125, upper=0.3333333333333333)"},
    {nn::Threshold(0.1, 20.0)->repr(), "Threshold(threshold=0.1, value=20.0)"},
    {nn::CELU(nn::CELUOptions().alpha(0.5).inplace(true))->repr(), "CELU(alpha=0.5, inplace=True)"},
    {nn::GLU()->repr(), "GLU(dim=-1)"},
    {nn::Hardshrink()->repr(), "Hardshrink(0.5)"},
    {nn::PReLU(nn::PReLUOptions().num_parameters(3))->repr(), "PReLU(num_parameters=3)"},
    {nn::Softmax2d()->repr(), "Softmax2d()"},
    {nn::Softmin(1)->repr(), "Softmin(dim=1)"},
    {nn::Mish()->repr(), "Mish()"},
    {nn::MultiMarginLoss()->repr(), "MultiMarginLoss()"},
    {nn::ReLU6(true)->repr(), "ReLU6(inplace=True)"},
    {nn::SELU()->repr(), "SELU()"},
    {nn::BatchNorm3d(4)->repr(), "BatchNorm3d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"},
  };
  for (const auto& [got, want] : repr) CHECK(got == want);
  // libtorch 1.9's pretty_print (torch/csrc/api/src/nn/modules/*.cpp).
  const std::vector<std::pair<std::string, std::string>> libtorch = {
    {libtorch_print(nn::Hardtanh()), "torch::nn::Hardtanh(min_val=-1, max_val=1)"},
    {libtorch_print(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).inplace(true))),
     "torch::nn::Hardtanh(min_val=-0.5, max_val=1, inplace=true)"},
    {libtorch_print(nn::ELU(nn::ELUOptions().alpha(42.42).inplace(true))), "torch::nn::ELU(alpha=42.42, inplace=true)"},
    {libtorch_print(nn::SELU()), "torch::nn::SELU()"},
    {libtorch_print(nn::SELU(true)), "torch::nn::SELU(inplace=true)"},
    {libtorch_print(nn::GLU(3)), "torch::nn::GLU(dim=3)"},
    {libtorch_print(nn::Hardshrink(42.42)), "torch::nn::Hardshrink(42.42)"},
    {libtorch_print(nn::Softshrink()), "torch::nn::Softshrink(0.5)"},
    {libtorch_print(nn::LeakyReLU()), "torch::nn::LeakyReLU(negative_slope=0.01)"},
    {libtorch_print(nn::LogSigmoid()), "torch::nn::LogSigmoid()"},
    {libtorch_print(nn::Softmax(42)), "torch::nn::Softmax(dim=42)"},
    {libtorch_print(nn::Softmin(42)), "torch::nn::Softmin(dim=42)"},
    {libtorch_print(nn::LogSoftmax(42)), "torch::nn::LogSoftmax(dim=42)"},
    {libtorch_print(nn::Softmax2d()), "torch::nn::Softmax2d()"},
    {libtorch_print(nn::PReLU(nn::PReLUOptions().num_parameters(42))), "torch::nn::PReLU(num_parameters=42)"},
    {libtorch_print(nn::ReLU()), "torch::nn::ReLU()"},
    {libtorch_print(nn::ReLU6(true)), "torch::nn::ReLU6(inplace=true)"},
    {libtorch_print(nn::RReLU()), "torch::nn::RReLU(lower=0.125, upper=0.333333)"},
    {libtorch_print(nn::CELU(nn::CELUOptions().alpha(2))), "torch::nn::CELU(alpha=2)"},
    {libtorch_print(nn::GELU()), "torch::nn::GELU()"},
    {libtorch_print(nn::Sigmoid()), "torch::nn::Sigmoid()"},
    {libtorch_print(nn::Softplus(nn::SoftplusOptions().beta(0.24).threshold(42.42))),
     "torch::nn::Softplus(beta=0.24, threshold=42.42)"},
    {libtorch_print(nn::Threshold(24.24, 42.42)), "torch::nn::Threshold(threshold=24.24, value=42.42)"},
    {libtorch_print(nn::Tanhshrink()), "torch::nn::Tanhshrink()"},
    {libtorch_print(nn::BatchNorm3d(nn::BatchNormOptions(4).eps(0.5).affine(false))),
     "torch::nn::BatchNorm3d(4, eps=0.5, momentum=0.1, affine=false, track_running_stats=true)"},
    {libtorch_print(nn::InstanceNorm1d(nn::InstanceNormOptions(4).eps(0.5).track_running_stats(true))),
     "torch::nn::InstanceNorm1d(4, eps=0.5, momentum=0.1, affine=false, track_running_stats=true)"},
    {libtorch_print(nn::LayerNorm(nn::LayerNormOptions({2, 2}).eps(2e-5).elementwise_affine(false))),
     "torch::nn::LayerNorm([2, 2], eps=2e-05, elementwise_affine=false)"},
    {libtorch_print(nn::GroupNorm(nn::GroupNormOptions(2, 2).eps(2e-5).affine(false))),
     "torch::nn::GroupNorm(2, 2, eps=2e-05, affine=false)"},
    {libtorch_print(nn::LocalResponseNorm(2)), "torch::nn::LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1)"},
    {libtorch_print(nn::Dropout()), "torch::nn::Dropout(p=0.5, inplace=false)"},
    {libtorch_print(nn::Dropout3d(nn::Dropout3dOptions(0.42).inplace(true))), "torch::nn::Dropout3d(p=0.42, inplace=true)"},
    {libtorch_print(nn::FeatureAlphaDropout()), "torch::nn::FeatureAlphaDropout(p=0.5, inplace=false)"},
    {libtorch_print(nn::CosineSimilarity()), "torch::nn::CosineSimilarity(dim=1, eps=1e-08)"},
    {libtorch_print(nn::PairwiseDistance()), "torch::nn::PairwiseDistance(p=2, eps=1e-06, keepdim=false)"},
    {libtorch_print(nn::L1Loss()), "torch::nn::L1Loss()"},
    {libtorch_print(nn::HingeEmbeddingLoss(nn::HingeEmbeddingLossOptions().margin(4))),
     "torch::nn::HingeEmbeddingLoss(margin=4)"},
    {libtorch_print(nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.25))),
     "torch::nn::CosineEmbeddingLoss(margin=0.25)"},
    {libtorch_print(nn::MultiMarginLoss()),
     "torch::nn::MultiMarginLoss(p=1, margin=1, weight=[ Tensor (undefined) ], reduction=kMean)"},
    {libtorch_print(nn::TripletMarginLoss(nn::TripletMarginLossOptions().margin(3).p(2).eps(1e-06).swap(false))),
     "torch::nn::TripletMarginLoss(margin=3, p=2, eps=1e-06, swap=false)"},
    {libtorch_print(nn::TripletMarginWithDistanceLoss()), "torch::nn::TripletMarginWithDistanceLoss(margin=1, swap=false)"},
    {libtorch_print(nn::PoissonNLLLoss()), "torch::nn::PoissonNLLLoss()"},
  };
  for (const auto& [got, want] : libtorch) CHECK(got == want);
}

TEST_CASE("bad shapes, targets and options are errors in PyTorch's words") {
  // Messages from PyTorch 1.13 for the same calls (libtorch 1.9's where only libtorch checks).
  const Tensor x = A();
  const std::vector<std::pair<std::function<void()>, std::string>> cases = {
    {[&] { F::glu(x, F::GLUFuncOptions(0)); }, "Halving dimension must be even, but dimension 0 is size 3"},
    {[] { F::glu(gd::testing::scalar_of(1)); }, "glu does not support scalars because halving size must be even"},
    {[&] { F::prelu(x.narrow(1, 0, 3), W()); },
     "Mismatch of parameter numbers and input channel size. Found parameter numbers = 4 and channel size = 3."},
    {[] { F::prelu(gd::testing::scalar_of(1), W()); }, "Not allow zero-dim input tensor."},
    {[&] { F::prelu(x, W().reshape({4, 1})); }, "prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = 2"},
    {[&] { F::celu(x, F::CELUFuncOptions().alpha(0)); }, "ZeroDivisionError: alpha cannot be 0 for CELU"},
    {[&] { F::rrelu(x, F::RReLUFuncOptions().lower(0.5).upper(0.1).training(true)); },
     "Lower bound should be less than or equal to the upper bound"},
    {[&] { nn::Softmax2d()(x); }, "Softmax2d requires a 3D or 4D tensor as input"},
    {[] { nn::Hardtanh(nn::HardtanhOptions().min_val(1).max_val(0)); }, "max_val must be greater than min_val"},
    {[] { F::elu(L({1, 2}, {2})); }, "\"elu_cpu\" not implemented for 'Long'"},
    {[] { F::mish(L({1, 2}, {2})); }, "\"mish_cpu\" not implemented for 'Long'"},
    {[] { F::logsigmoid(L({1, 2}, {2})); }, "\"log_sigmoid_cpu\" not implemented for 'Long'"},
    {[] { F::hardswish(L({1, 2}, {2})); }, "\"hardswish_cpu\" not implemented for 'Long'"},
    {[&] { F::softshrink(x, -1); }, "lambda must be greater or equal to 0, but found to be -1."},
    {[&] { F::multi_margin_loss(x, L({0, 1}, {2})); }, "inconsistent target size, got: [2]"},
    {[&] { F::multi_margin_loss(x, L({0, 4, 1}, {3})); }, "target out of range"},
    {[&] { F::multi_margin_loss(x, Y3(), F::MultiMarginLossFuncOptions().p(3)); }, "only p == 1 and p == 2 supported"},
    {[&] { F::multi_margin_loss(x, Y3().to(gd::kFloat64)); }, "expected scalar type Long but found Double"},
    {[&] { F::multi_margin_loss(N3(), Y3()); },
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [4, 3, 2]"},
    {[] { nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(3)); }, "only p == 1 and p == 2 supported"},
    {[&] { F::cosine_embedding_loss(N3(), N3(), T3()); },
     "1D target tensor expects 2D input tensors, but found inputs with sizes [4, 3, 2] and [4, 3, 2]."},
    {[&] { F::cosine_embedding_loss(x, x, T3().reshape({3, 1})); },
     "0D or 1D target tensor expected, multi-target not supported"},
    {[&] { F::multilabel_margin_loss(x, ML().narrow(0, 0, 1)); }, "inconsistent size [1, 4] for argument #2 'target'"},
    {[&] { F::multilabel_margin_loss(x, ML() + 1); }, "argument #2 'target' is out of range"},
    {[&] { F::multilabel_margin_loss(x, ML().to(gd::kInt32)); }, "expected scalar type Long but found Int"},
    {[&] { F::margin_ranking_loss(R1(), R2(), RY().reshape({5, 1})); },
     "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: [5], input2: [5], "
     "target: [5, 1] "},
    {[&] { F::triplet_margin_loss(x, x, W()); }, "All inputs should have same dimension but got 2D, 2D and 1D inputs."},
    {[&] { F::group_norm(G3(), 3); },
     "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 4, 3] and "
     "num_groups=3"},
    {[] { nn::GroupNorm(3, 4); }, "num_channels must be divisible by num_groups"},
    {[&] { F::local_response_norm(x, 2); }, "Expected 3D or higher dimensionality input (got 2 dimensions)"},
    {[] { F::instance_norm(T({1, 2, 3, 4}, {2, 2, 1})); },
     "Expected more than 1 spatial element when training, got input size [2, 2, 1]"},
    {[&] { nn::InstanceNorm1d(3)(x); },
     "InstanceNorm1d returns 0-filled tensor to 2D tensor.This is because InstanceNorm1d reshapes inputs to(1, N * C, "
     "...) from (N, C,...) and this makesvariances 0."},
    {[] { nn::InstanceNorm1d(3)(A4()); }, "expected 3D input (got 4D input)"},
    {[] { nn::InstanceNorm2d(3)(N3()); }, "expected 4D input (got 3D input)"},
    {[] { nn::BatchNorm3d(3)(N3()); }, "expected 5D input (got 3D input)"},
    {[&] { F::dropout2d(R1(), F::Dropout2dFuncOptions().p(0.5)); },
     "Feature dropout requires at least 2 dimensions in the input"},
    {[] { nn::Dropout2d(1.5); }, "dropout probability has to be between 0 and 1, but got 1.5"},
    {[&] { F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(-0.1)); },
     "dropout probability has to be between 0 and 1, but got -0.1"},
  };
  for (const auto& [call, want] : cases) CHECK(error_of(call) == want);
}

TEST_CASE("rrelu in training: a slope in [lower, upper] per negative element, which is also its gradient") {
  gd::manual_seed(7);
  Tensor x = gd::testing::sample({64, 32}, -2, 2, 3).requires_grad_();
  Tensor y = F::rrelu(x, F::RReLUFuncOptions().lower(0.1).upper(0.3).training(true));
  Tensor slope = (y / x).detach();
  Tensor negative = x.detach() <= 0;
  CHECK(gd::equal(slope.masked_select(negative.logical_not()), gd::ones({(~negative).sum().item<int64_t>()}, gd::kFloat64)));
  Tensor drawn = slope.masked_select(negative);
  CHECK(drawn.min().item<double>() >= 0.1);
  CHECK(drawn.max().item<double>() <= 0.3);
  CHECK(std::abs(drawn.mean().item<double>() - 0.2) < 0.01);  // ~1000 draws of U(0.1, 0.3): sd of the mean 0.002
  Tensor grad = gd::autograd::grad({y.sum()}, {x})[0];
  CHECK(gd::testing::value_mismatch(grad, slope, 1e-12, 0) == "");
}

TEST_CASE("dropout2d and dropout3d zero whole channels and scale the rest by 1 / (1 - p)") {
  gd::manual_seed(11);
  const double p = 0.3;
  Tensor x = gd::ones({50, 40, 3, 2}, gd::kFloat64);
  Tensor y = F::dropout2d(x, F::Dropout2dFuncOptions().p(p));
  // Each channel holds one value: 0 or 1 / (1 - p).
  Tensor per_channel = y.amax({2, 3});
  CHECK(gd::equal(y.amin({2, 3}), per_channel));
  Tensor kept = per_channel != 0;
  CHECK(gd::testing::value_mismatch(per_channel.masked_select(kept),
                                    gd::full({kept.sum().item<int64_t>()}, 1 / (1 - p), gd::kFloat64)) == "");
  const double dropped = 1 - kept.to(gd::kFloat64).mean().item<double>();
  CHECK(std::abs(dropped - p) < 0.05);  // 2000 channels: sd 0.01
  // Dropout3d: one draw per (sample, channel) of a 5-D input.
  Tensor z = nn::Dropout3d(p)(gd::ones({20, 30, 2, 2, 2}, gd::kFloat64));
  CHECK(gd::equal(z.amin({2, 3, 4}), z.amax({2, 3, 4})));
  // Evaluation mode and p = 0 are the identity; in place writes into the input.
  nn::Dropout2d module(p);
  module->eval();
  CHECK(module(x).is_same(x));
  CHECK(F::dropout2d(x, F::Dropout2dFuncOptions().p(0)).is_same(x));
  Tensor h = gd::ones({8, 16, 2, 2}, gd::kFloat64);
  Tensor out = F::dropout2d(h, F::Dropout2dFuncOptions().p(0.5).inplace(true));
  CHECK(out.is_same(h));
  CHECK(gd::equal(h.amin({2, 3}), h.amax({2, 3})));
  // The gradient is the mask.
  Tensor leaf = gd::testing::sample({4, 6, 3}, -1, 1, 5).requires_grad_();
  Tensor dropped_out = F::dropout2d(leaf, F::Dropout2dFuncOptions().p(0.5));
  Tensor grad = gd::autograd::grad({dropped_out.sum()}, {leaf})[0];
  CHECK(gd::testing::value_mismatch(grad * leaf.detach(), dropped_out.detach(), 1e-12, 1e-15) == "");
}

TEST_CASE("alpha_dropout keeps zero mean and unit variance; feature_alpha_dropout drops whole channels") {
  gd::manual_seed(5);
  const double p = 0.2;
  Tensor x = gd::randn({200, 500}, gd::kFloat64);
  Tensor y = F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(p).training(true));
  CHECK(std::abs(y.mean().item<double>()) < 0.02);
  CHECK(std::abs(y.var().item<double>() - 1) < 0.03);
  // A dropped element is SELU's saturation mapped by a x + b: -alpha' a (1 - p).
  const double alpha = 1.7580993408473766, a = 1 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  const double dropped_value = -alpha * a * (1 - p);
  Tensor dropped = (y - dropped_value).abs() < 1e-12;
  CHECK(std::abs(dropped.to(gd::kFloat64).mean().item<double>() - p) < 0.01);
  Tensor kept = dropped.logical_not();
  CHECK(gd::testing::value_mismatch(y.masked_select(kept), (x * a + alpha * a * p).masked_select(kept), 1e-12, 1e-14) ==
        "");
  // Not training (the functional default) is the identity.
  CHECK(F::alpha_dropout(x).is_same(x));
  Tensor c = F::feature_alpha_dropout(gd::zeros({30, 40, 5}, gd::kFloat64),
                                      F::FeatureAlphaDropoutFuncOptions().p(p).training(true));
  CHECK(gd::equal(c.amin({2}), c.amax({2})));
  nn::AlphaDropout module(p);
  module->eval();
  CHECK(module(x).is_same(x));
}

TEST_CASE("gumbel_softmax samples sum to 1; hard samples are one-hot with the soft gradient") {
  gd::manual_seed(2);
  Tensor logits = gd::testing::sample({6, 5}, -1, 1, 8).requires_grad_();
  Tensor soft = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5));
  CHECK(gd::testing::value_mismatch(soft.sum({1}), gd::ones({6}, gd::kFloat64), 1e-12, 1e-12) == "");
  Tensor hard = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().hard(true));
  CHECK(gd::equal(hard.sum({1}).detach(), gd::ones({6}, gd::kFloat64)));
  CHECK(gd::equal(hard.detach().max(), gd::scalar_tensor(1.0, gd::kFloat64)));
  Tensor grad = gd::autograd::grad({(hard * T({1, 2, 3, 4, 5}, {5})).sum()}, {logits})[0];
  CHECK(grad.abs().sum().item<double>() > 0);
}

namespace {
// f(arange(n) * a + b) in float64, the reference script's closed-form tensors.
Tensor wave(int64_t n, double a, double b, Tensor (*f)(const Tensor&) = gd::sin) {
  return f(gd::arange(n, gd::kFloat64) * a + b);
}
}  // namespace

TEST_CASE("multi_head_attention_forward and MultiheadAttention match PyTorch") {
  // E, H, L, S, N = 4, 2, 3, 2, 2; q = wave(L*N*E, 0.37, 0.1).reshape(L, N, E), ... as below;
  // F.multi_head_attention_forward(q, k, v, E, H, W, b, None, None, False, 0.0, OW, Ob, training=True).
  const Tensor q = wave(24, 0.37, 0.1).reshape({3, 2, 4}), k = wave(16, 0.23, 0.2, gd::cos).reshape({2, 2, 4});
  const Tensor v = wave(16, 0.51, -0.3).reshape({2, 2, 4});
  const Tensor W = wave(48, 0.19, 0.5).reshape({12, 4}) * 0.5, b = wave(12, 0.7, 0.0, gd::cos) * 0.1;
  const Tensor OW = wave(16, 0.29, 0.05, gd::cos).reshape({4, 4}) * 0.5, Ob = wave(4, 0.9, 0.0) * 0.1;
  const Tensor bk = wave(4, 0.4, 0.3).reshape({1, 1, 4}), bv = wave(4, 0.6, -0.2, gd::cos).reshape({1, 1, 4});
  auto options = [&] { return F::MultiheadAttentionForwardFuncOptions(4, 2, W, b, {}, {}, false, 0.0, OW, Ob); };
  auto [out, weights] = F::multi_head_attention_forward(q, k, v, options());
  CHECK(mismatch(out, {-1.5332806320415506, 0.05193207614826151, 1.609579776937263, 1.2768970932401693,
                       0.7782431244017136, 0.12820760732079906, -0.6410243100586915, -0.5968887918939682,
                       0.551581762661058, 0.2144728963326536, -0.3454646684818556, -0.4470967845482618,
                       1.1906364708278767, 0.007231909179854251, -1.150038413215255, -0.88245199858442,
                       -1.2092111421961023, 0.03247760697451067, 1.2699724099624259, 1.02511427019265,
                       0.7667345392301377, 0.13242561446595785, -0.6261468909103558, -0.5892245159161743},
                 {3, 2, 4}) == "");
  CHECK(mismatch(weights, {0.12504582432962302, 0.8749541756703769, 0.8039111263244842, 0.19608887367551575,
                           0.2540996422625255, 0.7459003577374745, 0.10785392306895762, 0.8921460769310423,
                           0.8979627278945957, 0.1020372721054042, 0.08898129456685497, 0.9110187054331451},
                 {2, 3, 2}) == "");
  // ... with bias_k, bias_v, add_zero_attn, attn_mask = wave(L*S, 0.8, 0.1).reshape(L, S) and
  // key_padding_mask = [[False, True], [False, False]].
  auto masked = F::multi_head_attention_forward(
      q, k, v,
      F::MultiheadAttentionForwardFuncOptions(4, 2, W, b, bk, bv, true, 0.0, OW, Ob)
          .attn_mask(wave(6, 0.8, 0.1).reshape({3, 2}))
          .key_padding_mask(gd::tensor({false, true, false, false}).reshape({2, 2})));
  CHECK(mismatch(std::get<0>(masked),
                 {0.7781774453651906, 0.1787430514455933, -0.6005970300719039, -0.6151358140885637,
                  0.7426714945964725, 0.14991420018416704, -0.5881160790953086, -0.5763386886480646,
                  0.8914496072120273, 0.15473685015221322, -0.7330424421734018, -0.6969109898764476,
                  0.984869686228812, 0.03079454979589269, -0.9254526409858348, -0.7266426860135761,
                  0.7139474804832913, 0.16481169279072858, -0.547493749608452, -0.5587919773732902,
                  0.7872916738988633, 0.14777449783346366, -0.6344451938572984, -0.6112010800710855},
                 {3, 2, 4}) == "");
  CHECK(mismatch(std::get<1>(masked),
                 {0.11038948565561904, 0.0, 0.5694822493233427, 0.3201282650210382, 0.787249305184967, 0.0,
                  0.08836650707696725, 0.1243841877380657, 0.17080445368618286, 0.0, 0.4644971645758543,
                  0.36469838173796276, 0.044441462223633627, 0.772636691330735, 0.12956752364520743,
                  0.0533543228004239, 0.6926703751752747, 0.053644139321434456, 0.07071119088518873,
                  0.18297429461810205, 0.07032886606379689, 0.511797856847567, 0.3039996336147981,
                  0.113873643473838},
                 {2, 3, 4}) == "");
  // Self-attention under a causal bool mask.
  Tensor causal = gd::tensor({false, true, true, false, false, true, false, false, false}).reshape({3, 3});
  auto self = F::multi_head_attention_forward(q, q, q, options().attn_mask(causal));
  CHECK(mismatch(std::get<1>(self),
                 {1.0, 0.0, 0.0, 0.7247193226591918, 0.2752806773408082, 0.0, 0.2236226968473553, 0.5042519818289577,
                  0.27212532132368705, 1.0, 0.0, 0.0, 0.9578380158669788, 0.04216198413302122, 0.0,
                  0.03463350357790638, 0.9360260045955923, 0.02934049182650139},
                 {2, 3, 3}) == "");
  // Differentiable in the inputs and the projections.
  auto fn = [&](const std::vector<Tensor>& in) {
    auto o = F::MultiheadAttentionForwardFuncOptions(4, 2, in[1], b, bk, bv, true, 0.0, OW, Ob)
                 .attn_mask(wave(6, 0.8, 0.1).reshape({3, 2}));
    return std::vector<Tensor>{std::get<0>(F::multi_head_attention_forward(in[0], k, v, o))};
  };
  std::vector<Tensor> leaves = {q.detach().requires_grad_(), W.detach().requires_grad_()};
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, leaves); }) == "");
  CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, leaves); }) == "");

  // The module: PyTorch's parameters, and its forward is the functional one with them.
  nn::MultiheadAttention mha(4, 2);
  mha->to(gd::kFloat64);
  CHECK(mha->named_parameters().keys() ==
        std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  {
    gd::NoGradGuard no_grad;
    mha->in_proj_weight.copy_(W);
    mha->in_proj_bias.copy_(b);
    mha->out_proj->weight.copy_(OW);
    mha->out_proj->bias.copy_(Ob);
  }
  CHECK(gd::testing::value_mismatch(std::get<0>(mha(q, k, v)), out, 1e-14, 1e-15) == "");
  nn::MultiheadAttention separate(nn::MultiheadAttentionOptions(4, 2).kdim(3).vdim(5).add_bias_kv(true).bias(false));
  CHECK(separate->named_parameters().keys() ==
        std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v", "out_proj.weight"});
  CHECK(separate->k_proj_weight.sizes() == gd::IntArrayRef({4, 3}));
  auto [sep_out, sep_weights] = separate(gd::randn({3, 2, 4}), gd::randn({5, 2, 3}), gd::randn({5, 2, 5}));
  CHECK(sep_out.sizes() == gd::IntArrayRef({3, 2, 4}));
  CHECK(sep_weights.sizes() == gd::IntArrayRef({2, 3, 6}));
  CHECK(error_of([] { nn::MultiheadAttention(5, 2); }) == "embed_dim must be divisible by num_heads");
}
