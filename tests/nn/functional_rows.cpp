// The nn sweep's table (tests/nn/functional_rows.h): libtorch's functionals and
// a few modules, with the inputs each is checked on.
#include "tests/nn/functional_rows.h"

#include <utility>

#include "tests/engine/op_rows/row_builders.h"

namespace gradiens::testing {

namespace gd = gradiens;
namespace nn = gradiens::nn;
namespace F = gradiens::nn::functional;
using V = std::vector<Tensor>;

namespace {

using rows::indices_for;
using rows::tensor_for;

NnRow row(std::string name, std::vector<InputSpec> inputs, std::function<Tensor(const V&)> fn, uint64_t seed = 0,
          bool twice = true) {
  return {std::move(name), std::move(inputs), [fn = std::move(fn)](const V& x) { return V{fn(x)}; }, seed, twice};
}

}  // namespace

const std::vector<NnRow>& nn_functional_rows() {
  static const std::vector<NnRow> rows = {
      // ---- activations
      row("elu", {{{3, 4}, -2, 2}}, [](const V& x) { return F::elu(x[0], F::ELUFuncOptions().alpha(0.7)); }),
      row("selu", {{{3, 4}, -2, 2}}, [](const V& x) { return F::selu(x[0]); }),
      row("celu", {{{3, 4}, -2, 2}}, [](const V& x) { return F::celu(x[0], F::CELUFuncOptions().alpha(0.6)); }),
      row("glu", {{{3, 4}}}, [](const V& x) { return F::glu(x[0], 1); }),
      row("gelu", {{{3, 4}, -2, 2}}, [](const V& x) { return F::gelu(x[0]); }),
      row("gelu tanh", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::gelu(x[0], F::GELUFuncOptions().approximate("tanh")); }),
      row("silu", {{{3, 4}, -2, 2}}, [](const V& x) { return F::silu(x[0]); }),
      row("mish", {{{3, 4}, -2, 2}}, [](const V& x) { return F::mish(x[0]); }),
      row("hardshrink", {{{3, 4}, -2, 2}}, [](const V& x) { return F::hardshrink(x[0], 0.75); }),
      row("softshrink", {{{3, 4}, -2, 2}}, [](const V& x) { return F::softshrink(x[0], 0.6); }),
      row("hardtanh", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::hardtanh(x[0], F::HardtanhFuncOptions().min_val(-0.5).max_val(1.2)); }),
      row("relu", {{{3, 4}, -2, 2}}, [](const V& x) { return F::relu(x[0]); }),
      row("relu6", {{{3, 4}, -3, 9}}, [](const V& x) { return F::relu6(x[0]); }),
      row("leaky_relu", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::leaky_relu(x[0], F::LeakyReLUFuncOptions().negative_slope(0.2)); }),
      row("rrelu (eval)", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::rrelu(x[0], F::RReLUFuncOptions().lower(0.1).upper(0.3)); }),
      row("rrelu (training)", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::rrelu(x[0], F::RReLUFuncOptions().lower(0.1).upper(0.3).training(true)); }, 31),
      row("logsigmoid", {{{3, 4}, -3, 3}}, [](const V& x) { return F::logsigmoid(x[0]); }),
      row("softmax", {{{3, 4}, -2, 2}}, [](const V& x) { return F::softmax(x[0], F::SoftmaxFuncOptions(1)); }),
      row("softmin", {{{3, 4}, -2, 2}}, [](const V& x) { return F::softmin(x[0], F::SoftminFuncOptions(0)); }),
      row("log_softmax", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::log_softmax(x[0], F::LogSoftmaxFuncOptions(1)); }),
      row("prelu", {{{3, 4}, -2, 2}, {{4}, 0.1, 0.9}}, [](const V& x) { return F::prelu(x[0], x[1]); }),
      row("softplus", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::softplus(x[0], F::SoftplusFuncOptions().beta(2).threshold(1)); }),
      row("softsign", {{{3, 4}, -2, 2}}, [](const V& x) { return F::softsign(x[0]); }),
      row("tanhshrink", {{{3, 4}, -2, 2}}, [](const V& x) { return F::tanhshrink(x[0]); }),
      row("threshold", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::threshold(x[0], F::ThresholdFuncOptions(0.1, 20)); }),
      row("hardsigmoid", {{{3, 4}, -4, 4}}, [](const V& x) { return F::hardsigmoid(x[0]); }),
      row("hardswish", {{{3, 4}, -4, 4}}, [](const V& x) { return F::hardswish(x[0]); }),
      row("gumbel_softmax", {{{3, 4}, -2, 2}},
          [](const V& x) { return F::gumbel_softmax(x[0], F::GumbelSoftmaxFuncOptions().tau(0.7)); }, 37),
      row("Softmax2d", {{{2, 3, 2, 2}, -2, 2}}, [](const V& x) { return nn::Softmax2d()(x[0]); }),
      // ---- normalization
      row("batch_norm (training, affine)", {{{4, 3, 2}}, {{3}, 0.5, 1.5}, {{3}}},
          [](const V& x) {
            return F::batch_norm(x[0], Tensor(), Tensor(),
                                 F::BatchNormFuncOptions().weight(x[1]).bias(x[2]).training(true));
          }),
      row("batch_norm (eval, running stats)", {{{4, 3, 2}}, {{3}, -0.2, 0.4}, {{3}, 0.5, 2.0}},
          [](const V& x) { return F::batch_norm(x[0], x[1], x[2], F::BatchNormFuncOptions().eps(1e-3)); }),
      row("instance_norm", {{{2, 3, 4}}, {{3}, 0.5, 1.5}, {{3}}},
          [](const V& x) { return F::instance_norm(x[0], F::InstanceNormFuncOptions().weight(x[1]).bias(x[2])); }),
      row("group_norm", {{{2, 4, 3}}, {{4}, 0.5, 1.5}, {{4}}},
          [](const V& x) { return F::group_norm(x[0], F::GroupNormFuncOptions(2).weight(x[1]).bias(x[2])); }),
      row("layer_norm", {{{4, 3, 2}}, {{3, 2}, 0.5, 1.5}, {{3, 2}}},
          [](const V& x) {
            return F::layer_norm(x[0], F::LayerNormFuncOptions({3, 2}).weight(x[1]).bias(x[2]).eps(1e-3));
          }),
      row("local_response_norm", {{{2, 5, 3}}},
          [](const V& x) {
            return F::local_response_norm(x[0], F::LocalResponseNormFuncOptions(2).alpha(0.5).beta(0.6).k(2.0));
          }),
      row("normalize", {{{3, 4}}}, [](const V& x) { return F::normalize(x[0], F::NormalizeFuncOptions().p(1.5)); }),
      // ---- distances
      row("cosine_similarity", {{{3, 4}}, {{3, 4}}}, [](const V& x) { return F::cosine_similarity(x[0], x[1]); }),
      row("pairwise_distance", {{{3, 4}}, {{3, 4}}},
          [](const V& x) { return F::pairwise_distance(x[0], x[1], F::PairwiseDistanceFuncOptions().p(3)); }),
      row("pdist", {{{4, 3}}}, [](const V& x) { return F::pdist(x[0]); }),
      // ---- losses
      row("cross_entropy (class weights, label smoothing)", {{{3, 4}, -2, 2}},
          [](const V& x) {
            return F::cross_entropy(
                x[0], indices_for(x[0], {1, 0, 3}, {3}),
                F::CrossEntropyFuncOptions().weight(tensor_for(x[0], {0.5, 1, 2, 1.5}, {4})).label_smoothing(0.1));
          }),
      row("cross_entropy (probabilities)", {{{3, 4}, -2, 2}, {{3, 4}, 0.1, 0.9}},
          [](const V& x) { return F::cross_entropy(x[0], x[1]); }),
      row("nll_loss (ignore_index)", {{{3, 4}, -3, -0.1}},
          [](const V& x) {
            return F::nll_loss(x[0], indices_for(x[0], {1, 2, 3}, {3}), F::NLLLossFuncOptions().ignore_index(2));
          }),
      row("binary_cross_entropy", {{{3, 4}, 0.05, 0.95}, {{3, 4}, 0, 1}},
          [](const V& x) { return F::binary_cross_entropy(x[0], x[1]); }),
      row("binary_cross_entropy_with_logits (pos_weight)", {{{3, 4}, -2, 2}, {{3, 4}, 0, 1}},
          [](const V& x) {
            return F::binary_cross_entropy_with_logits(
                x[0], x[1],
                F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(tensor_for(x[0], {0.5, 1, 2, 1.5}, {4})));
          }),
      row("mse_loss", {{{3, 4}}, {{3, 4}}}, [](const V& x) { return F::mse_loss(x[0], x[1]); }),
      row("l1_loss", {{{3, 4}}, {{3, 4}}}, [](const V& x) { return F::l1_loss(x[0], x[1]); }),
      row("huber_loss", {{{3, 4}, -2, 2}, {{3, 4}}},
          [](const V& x) { return F::huber_loss(x[0], x[1], F::HuberLossFuncOptions().delta(0.5)); }),
      row("smooth_l1_loss", {{{3, 4}, -2, 2}, {{3, 4}}},
          [](const V& x) { return F::smooth_l1_loss(x[0], x[1], F::SmoothL1LossFuncOptions().beta(0.5)); }),
      row("kl_div", {{{3, 4}, -3, -0.1}, {{3, 4}, 0.1, 0.9}},
          [](const V& x) { return F::kl_div(x[0], x[1], F::KLDivFuncOptions().reduction(gd::kBatchMean)); }),
      row("hinge_embedding_loss", {{{3, 4}, -2, 2}},
          [](const V& x) {
            return F::hinge_embedding_loss(x[0], tensor_for(x[0], {1, -1, 1, 1, -1, -1, 1, -1, 1, 1, -1, -1}, {3, 4}),
                                           F::HingeEmbeddingLossFuncOptions().margin(0.5));
          }),
      row("multi_margin_loss", {{{3, 4}, -2, 2}},
          [](const V& x) {
            return F::multi_margin_loss(
                x[0], indices_for(x[0], {1, 0, 3}, {3}),
                F::MultiMarginLossFuncOptions().p(2).margin(0.7).weight(tensor_for(x[0], {0.5, 1, 2, 1.5}, {4})));
          }),
      row("cosine_embedding_loss", {{{3, 4}}, {{3, 4}}},
          [](const V& x) {
            return F::cosine_embedding_loss(x[0], x[1], tensor_for(x[0], {1, -1, -1}, {3}),
                                            F::CosineEmbeddingLossFuncOptions().margin(0.2));
          }),
      row("multilabel_margin_loss", {{{3, 4}, -2, 2}},
          [](const V& x) {
            return F::multilabel_margin_loss(x[0], indices_for(x[0], {3, 0, -1, 1, 1, 2, 3, -1, 0, -1, 2, 2}, {3, 4}));
          }),
      row("soft_margin_loss", {{{3, 4}, -2, 2}},
          [](const V& x) {
            return F::soft_margin_loss(x[0], tensor_for(x[0], {1, -1, 1, 1, -1, -1, 1, -1, 1, 1, -1, -1}, {3, 4}));
          }),
      row("multilabel_soft_margin_loss", {{{3, 4}, -2, 2}},
          [](const V& x) {
            return F::multilabel_soft_margin_loss(x[0], tensor_for(x[0], {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0}, {3, 4}));
          }),
      row("triplet_margin_loss (swap)", {{{3, 4}}, {{3, 4}}, {{3, 4}}},
          [](const V& x) {
            return F::triplet_margin_loss(x[0], x[1], x[2],
                                          F::TripletMarginLossFuncOptions().margin(2.0).swap(true));
          }),
      row("triplet_margin_with_distance_loss", {{{3, 4}}, {{3, 4}}, {{3, 4}}},
          [](const V& x) { return F::triplet_margin_with_distance_loss(x[0], x[1], x[2]); }),
      row("margin_ranking_loss", {{{5}}, {{5}}},
          [](const V& x) {
            return F::margin_ranking_loss(x[0], x[1], tensor_for(x[0], {1, -1, 1, -1, 1}, {5}),
                                          F::MarginRankingLossFuncOptions().margin(0.3));
          }),
      row("poisson_nll_loss (full)", {{{3, 4}, -1, 1}},
          [](const V& x) {
            return F::poisson_nll_loss(x[0], tensor_for(x[0], {0, 1, 2, 3, 4, 0, 1, 5, 2, 2, 0, 1}, {3, 4}),
                                       F::PoissonNLLLossFuncOptions().full(true));
          }),
      row("ctc_loss", {{{6, 2, 4}, -2, 2}},
          [](const V& x) {
            Tensor log_probs = F::log_softmax(x[0], F::LogSoftmaxFuncOptions(2));
            return F::ctc_loss(log_probs, indices_for(x[0], {1, 2, 2, 3, 1, 0}, {2, 3}), indices_for(x[0], {6, 5}, {2}),
                               indices_for(x[0], {3, 2}, {2}));
          }),
      // ---- linear, convolution, pooling
      row("linear", {{{3, 4}}, {{2, 4}}, {{2}}}, [](const V& x) { return F::linear(x[0], x[1], x[2]); }),
      row("bilinear", {{{3, 2}}, {{3, 4}}, {{5, 2, 4}}, {{5}}},
          [](const V& x) { return F::bilinear(x[0], x[1], x[2], x[3]); }),
      row("conv1d (stride, padding, dilation)", {{{2, 3, 9}}, {{4, 3, 3}}, {{4}}},
          [](const V& x) {
            return F::conv1d(x[0], x[1], F::Conv1dFuncOptions().bias(x[2]).stride(2).padding(1).dilation(2));
          }),
      row("conv1d (groups)", {{{2, 4, 7}}, {{4, 2, 3}}},
          [](const V& x) { return F::conv1d(x[0], x[1], F::Conv1dFuncOptions().groups(2)); }),
      row("conv2d (padding same)", {{{1, 2, 5, 5}}, {{3, 2, 3, 3}}, {{3}}},
          [](const V& x) { return F::conv2d(x[0], x[1], F::Conv2dFuncOptions().bias(x[2]).padding(gd::kSame)); }),
      row("conv3d", {{{1, 2, 4, 4, 4}}, {{2, 2, 2, 2, 2}}},
          [](const V& x) { return F::conv3d(x[0], x[1], F::Conv3dFuncOptions().stride(2)); }),
      row("conv_transpose1d", {{{2, 3, 5}}, {{3, 2, 3}}, {{2}}},
          [](const V& x) {
            return F::conv_transpose1d(x[0], x[1],
                                       F::ConvTranspose1dFuncOptions().bias(x[2]).stride(2).output_padding(1));
          }),
      row("conv_transpose2d (groups)", {{{1, 4, 3, 3}}, {{4, 1, 2, 2}}},
          [](const V& x) { return F::conv_transpose2d(x[0], x[1], F::ConvTranspose2dFuncOptions().groups(2)); }),
      row("conv_transpose3d", {{{1, 2, 2, 2, 2}}, {{2, 1, 2, 2, 2}}},
          [](const V& x) { return F::conv_transpose3d(x[0], x[1], F::ConvTranspose3dFuncOptions().stride(2)); }),
      row("max_pool1d", {{{2, 3, 8}}},
          [](const V& x) { return F::max_pool1d(x[0], F::MaxPool1dFuncOptions(3).stride(2).padding(1)); }),
      row("max_pool2d (ceil_mode, dilation)", {{{1, 2, 7, 7}}},
          [](const V& x) {
            return F::max_pool2d(x[0], F::MaxPool2dFuncOptions(2).stride(2).dilation(2).ceil_mode(true));
          }),
      row("max_pool3d", {{{1, 2, 4, 4, 4}}}, [](const V& x) {
        return F::max_pool3d(x[0], F::MaxPool3dFuncOptions(2));
      }),
      row("avg_pool1d (count_include_pad off)", {{{2, 3, 8}}},
          [](const V& x) {
            return F::avg_pool1d(x[0], F::AvgPool1dFuncOptions(3).stride(2).padding(1).count_include_pad(false));
          }),
      row("avg_pool2d (divisor_override)", {{{1, 2, 6, 6}}},
          [](const V& x) { return F::avg_pool2d(x[0], F::AvgPool2dFuncOptions(3).stride(2).divisor_override(4)); }),
      row("avg_pool3d", {{{1, 2, 4, 4, 4}}}, [](const V& x) {
        return F::avg_pool3d(x[0], F::AvgPool3dFuncOptions(2));
      }),
      row("adaptive_max_pool1d", {{{2, 3, 7}}},
          [](const V& x) { return F::adaptive_max_pool1d(x[0], F::AdaptiveMaxPool1dFuncOptions(3)); }),
      row("adaptive_max_pool2d", {{{1, 2, 5, 7}}},
          [](const V& x) { return F::adaptive_max_pool2d(x[0], F::AdaptiveMaxPool2dFuncOptions({2, 3})); }),
      row("adaptive_max_pool3d", {{{1, 2, 3, 4, 5}}},
          [](const V& x) { return F::adaptive_max_pool3d(x[0], F::AdaptiveMaxPool3dFuncOptions({2, 2, 3})); }),
      row("adaptive_avg_pool1d", {{{2, 3, 7}}},
          [](const V& x) { return F::adaptive_avg_pool1d(x[0], F::AdaptiveAvgPool1dFuncOptions(3)); }),
      row("adaptive_avg_pool2d", {{{1, 2, 5, 7}}},
          [](const V& x) { return F::adaptive_avg_pool2d(x[0], F::AdaptiveAvgPool2dFuncOptions({2, 3})); }),
      row("adaptive_avg_pool3d", {{{1, 2, 3, 4, 5}}},
          [](const V& x) { return F::adaptive_avg_pool3d(x[0], F::AdaptiveAvgPool3dFuncOptions({2, 2, 3})); }),
      row("fractional_max_pool2d", {{{1, 2, 7, 7}}},
          [](const V& x) {
            const auto options = F::FractionalMaxPool2dFuncOptions(2).output_size(nn::ExpandingArray<2>({4, 4}));
            return F::fractional_max_pool2d(x[0], options);
          },
          43),
      row("fractional_max_pool3d", {{{1, 2, 5, 5, 5}}},
          [](const V& x) {
            const auto options = F::FractionalMaxPool3dFuncOptions(2).output_size(nn::ExpandingArray<3>({3, 3, 3}));
            return F::fractional_max_pool3d(x[0], options);
          },
          47),
      row("lp_pool1d", {{{2, 3, 8}, 0.1, 1}},
          [](const V& x) { return F::lp_pool1d(x[0], F::LPPool1dFuncOptions(2, 3).stride(2)); }),
      row("lp_pool2d", {{{1, 2, 6, 6}, 0.1, 1}},
          [](const V& x) { return F::lp_pool2d(x[0], F::LPPool2dFuncOptions(1.5, 2)); }),
      row("max_unpool2d", {{{1, 2, 6, 6}}},
          [](const V& x) {
            auto [pooled, indices] = F::max_pool2d_with_indices(x[0], F::MaxPool2dFuncOptions(2));
            return F::max_unpool2d(pooled, indices, F::MaxUnpool2dFuncOptions(2));
          }),
      row("max_unpool1d", {{{2, 3, 8}}},
          [](const V& x) {
            auto [pooled, indices] = F::max_pool1d_with_indices(x[0], F::MaxPool1dFuncOptions(2));
            return F::max_unpool1d(pooled, indices, F::MaxUnpool1dFuncOptions(2));
          }),
      // ---- shape, sampling, embedding
      row("interpolate nearest", {{{1, 2, 3, 4}}},
          [](const V& x) {
            const auto options = F::InterpolateFuncOptions().size(std::vector<int64_t>{5, 7}).mode(gd::kNearest);
            return F::interpolate(x[0], options);
          }),
      row("interpolate bilinear (align_corners)", {{{1, 2, 3, 4}}},
          [](const V& x) {
            return F::interpolate(
                x[0],
                F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 1.5}).mode(gd::kBilinear).align_corners(
                    true));
          }),
      row("interpolate linear", {{{2, 3, 5}}},
          [](const V& x) {
            return F::interpolate(x[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(gd::kLinear));
          }),
      row("interpolate bicubic", {{{1, 1, 4, 4}}},
          [](const V& x) {
            const auto options = F::InterpolateFuncOptions().size(std::vector<int64_t>{6, 5}).mode(gd::kBicubic);
            return F::interpolate(x[0], options);
          }),
      row("interpolate trilinear", {{{1, 1, 2, 3, 3}}},
          [](const V& x) {
            return F::interpolate(
                x[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{3, 4, 5}).mode(gd::kTrilinear));
          }),
      row("grid_sample (bilinear, border)", {{{1, 2, 4, 5}}, {{1, 3, 3, 2}, -1.1, 1.1}},
          [](const V& x) {
            return F::grid_sample(x[0], x[1], F::GridSampleFuncOptions().padding_mode(gd::kBorder));
          }),
      row("grid_sample (nearest)", {{{1, 2, 4, 5}}, {{1, 3, 3, 2}, -0.9, 0.9}},
          [](const V& x) { return F::grid_sample(x[0], x[1], F::GridSampleFuncOptions().mode(gd::kNearest)); }),
      row("affine_grid", {{{2, 2, 3}}}, [](const V& x) { return F::affine_grid(x[0], {2, 1, 3, 4}); }),
      row("pad reflect", {{{1, 2, 4, 5}}},
          [](const V& x) { return F::pad(x[0], F::PadFuncOptions({1, 2, 2, 1}).mode(gd::kReflect)); }),
      row("pad replicate", {{{1, 2, 4, 5}}},
          [](const V& x) { return F::pad(x[0], F::PadFuncOptions({2, 1, 1, 3}).mode(gd::kReplicate)); }),
      row("pad circular", {{{1, 2, 4}}},
          [](const V& x) { return F::pad(x[0], F::PadFuncOptions({1, 2}).mode(gd::kCircular)); }),
      row("pad constant", {{{2, 3}}},
          [](const V& x) { return F::pad(x[0], F::PadFuncOptions({1, 1, 2, 0}).value(0.5)); }),
      row("unfold", {{{1, 2, 4, 5}}},
          [](const V& x) { return F::unfold(x[0], F::UnfoldFuncOptions({2, 3}).padding(1).stride(2)); }),
      row("fold", {{{1, 8, 6}}},
          [](const V& x) { return F::fold(x[0], F::FoldFuncOptions({3, 4}, {2, 2}).stride(1)); }),
      row("pixel_shuffle", {{{1, 8, 2, 3}}},
          [](const V& x) { return F::pixel_shuffle(x[0], F::PixelShuffleFuncOptions(2)); }),
      row("pixel_unshuffle", {{{1, 2, 4, 6}}},
          [](const V& x) { return F::pixel_unshuffle(x[0], F::PixelUnshuffleFuncOptions(2)); }),
      row("embedding (max_norm off)", {{{5, 3}}},
          [](const V& x) { return F::embedding(indices_for(x[0], {4, 0, 2, 4, 1}, {5}), x[0]); }),
      row("embedding_bag (mean)", {{{6, 3}}},
          [](const V& x) {
            return F::embedding_bag(indices_for(x[0], {1, 2, 4, 5, 4, 3, 2, 0}, {8}), x[0],
                                    F::EmbeddingBagFuncOptions().offsets(indices_for(x[0], {0, 3, 3, 6}, {4})).mode(
                                        gd::kMean));
          }),
      row("embedding_bag (max, per row)", {{{6, 3}}},
          [](const V& x) {
            return F::embedding_bag(indices_for(x[0], {1, 2, 4, 5, 0, 3}, {2, 3}), x[0],
                                    F::EmbeddingBagFuncOptions().mode(gd::kMax));
          }),
      row("embedding_bag (sum, per_sample_weights)", {{{6, 3}}, {{5}}},
          [](const V& x) {
            return F::embedding_bag(
                indices_for(x[0], {1, 2, 4, 5, 4}, {5}), x[0],
                F::EmbeddingBagFuncOptions().offsets(indices_for(x[0], {0, 2}, {2})).mode(gd::kSum).per_sample_weights(x[1]));
          }),
      row("one_hot as float", {{{3}}},
          [](const V& x) { return F::one_hot(indices_for(x[0], {2, 0, 3}, {3}), 4).to(gd::kFloat64) * x[0].unsqueeze(1); }),
      // ---- random
      row("dropout", {{{4, 5}}}, [](const V& x) { return F::dropout(x[0], F::DropoutFuncOptions().p(0.4)); }, 21),
      row("dropout2d", {{{2, 4, 3, 3}}},
          [](const V& x) { return F::dropout2d(x[0], F::Dropout2dFuncOptions().p(0.5)); }, 22),
      row("dropout3d", {{{2, 4, 2, 2, 2}}},
          [](const V& x) { return F::dropout3d(x[0], F::Dropout3dFuncOptions().p(0.5)); }, 23),
      row("alpha_dropout", {{{4, 5}}},
          [](const V& x) { return F::alpha_dropout(x[0], F::AlphaDropoutFuncOptions().p(0.3).training(true)); }, 24),
      row("feature_alpha_dropout", {{{2, 4, 3}}},
          [](const V& x) {
            return F::feature_alpha_dropout(x[0], F::FeatureAlphaDropoutFuncOptions().p(0.3).training(true));
          },
          25),
      // ---- recurrent cells and attention
      row("lstm_cell", {{{3, 4}}, {{3, 5}}, {{3, 5}}, {{20, 4}}, {{20, 5}}, {{20}}, {{20}}},
          [](const V& x) {
            auto [h, c] = F::lstm_cell(x[0], x[1], x[2], x[3], x[4], x[5], x[6]);
            return h + c;
          }),
      row("gru_cell", {{{3, 4}}, {{3, 5}}, {{15, 4}}, {{15, 5}}, {{15}}, {{15}}},
          [](const V& x) { return F::gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }),
      row("rnn_tanh_cell", {{{3, 4}}, {{3, 5}}, {{5, 4}}, {{5, 5}}, {{5}}, {{5}}},
          [](const V& x) { return F::rnn_tanh_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }),
  };
  return rows;
}

std::vector<Tensor> nn_row_inputs(const NnRow& row, const Device& device) {
  std::vector<Tensor> inputs;
  uint64_t seed = std::hash<std::string>{}(row.name) % 100000;
  for (const InputSpec& spec : row.inputs)
    inputs.push_back(sample(spec.shape, spec.lo, spec.hi, seed++).to(device).detach().requires_grad_());
  return inputs;
}

std::vector<Tensor> call_nn_row(const NnRow& row, const std::vector<Tensor>& inputs) {
  if (row.seed != 0) manual_seed(row.seed);
  return row.fn(inputs);
}

}  // namespace gradiens::testing
