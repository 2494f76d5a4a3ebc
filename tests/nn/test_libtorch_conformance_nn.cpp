// The libtorch spellings of the nn layer that PyTorch's C++ API tests reach:
// AnyModule/Sequential calling modules whose forward has default arguments or
// overloads, the ATen-spelled losses (torch::mse_loss, ...), Module's messages
// and names, and options and printing of a few modules. Values from PyTorch 1.13.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace nn = gd::nn;
namespace F = gd::nn::functional;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::value_mismatch;

namespace {

// forward(x, scale = 2, shift = 1) with its defaults declared for AnyModule.
struct AffineImpl : nn::Module {
  Tensor forward(const Tensor& x, double scale = 2.0, double shift = 1.0) { return x * scale + shift; }
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(2.0)}, {2, nn::AnyValue(1.0)})
};

struct CountImpl : nn::Module {
  explicit CountImpl(int value) : value(value) {}
  int forward(int x) { return x + value; }
  int value;
};

// A float64 tensor of these values (gd::tensor makes float32 of doubles, as libtorch).
Tensor f64(const gd::TensorDataContainer& values) { return gd::tensor(values, gd::kFloat64); }

std::string printed(const nn::Module& module) {
  std::ostringstream s;
  module.pretty_print(s);
  return s.str();
}

struct Capture : gd::WarningHandler {
  void process(const gd::SourceLocation&, const std::string& msg, bool) override { messages.push_back(msg); }
  std::vector<std::string> messages;
};

}  // namespace

TEST_CASE("AnyModule fills in the declared default arguments of forward") {
  nn::AnyModule affine(std::make_shared<AffineImpl>());
  const Tensor x = f64({1.0, -2.0});
  CHECK(value_mismatch(affine.forward(x), f64({3.0, -3.0})) == "");
  CHECK(value_mismatch(affine.forward(x, 3.0), f64({4.0, -5.0})) == "");
  CHECK(value_mismatch(affine.forward(x, 3.0, 0.0), f64({3.0, -6.0})) == "");
  CHECK(error_of([&] { affine.forward(); }) ==
        "Affine's forward() method expects at least 1 argument(s) and at most 3 argument(s), but received 0.");
  nn::AnyModule count(std::make_shared<CountImpl>(1));
  CHECK(error_of([&] { count.forward<int>(1, 2); }) ==
        "Count's forward() method expects 1 argument(s), but received 2.");
}

TEST_CASE("Sequential calls RNN modules (overloaded forward with a default state) and default-argument layers") {
  gd::manual_seed(0);
  nn::Sequential rnn(nn::Identity(), nn::RNN(2, 3));
  const Tensor x = gd::ones({2, 3, 2});
  auto [out, h] = rnn->forward<std::tuple<Tensor, Tensor>>(x);
  CHECK(out.sizes().vec() == std::vector<int64_t>{2, 3, 3});
  CHECK(h.sizes().vec() == std::vector<int64_t>{1, 3, 3});
  nn::Sequential lstm(nn::Identity(), nn::LSTM(2, 3));
  auto [lstm_out, state] = lstm->forward<std::tuple<Tensor, std::tuple<Tensor, Tensor>>>(x);
  CHECK(lstm_out.sizes().vec() == std::vector<int64_t>{2, 3, 3});
  CHECK(std::get<1>(state).sizes().vec() == std::vector<int64_t>{1, 3, 3});
  nn::Sequential cell(nn::Identity(), nn::GRUCell(2, 3));
  CHECK(cell->forward<Tensor>(gd::ones({4, 2})).sizes().vec() == std::vector<int64_t>{4, 3});
  // MaxUnpool1d's output_size defaults; values from PyTorch 1.13.
  nn::Sequential unpool(nn::MaxUnpool1d(3));
  Tensor y = unpool->forward(gd::tensor({{{2.0f, 4.0f, 5.0f}}}), gd::tensor({{{1L, 3L, 4L}}}));
  CHECK(value_mismatch(y, gd::tensor({{{0.0f, 2.0f, 0.0f, 4.0f, 5.0f, 0.0f, 0.0f, 0.0f, 0.0f}}})) == "");
}

TEST_CASE("Sequential::at and extend from a vector of modules") {
  nn::Sequential seq;
  std::vector<std::shared_ptr<CountImpl>> modules{std::make_shared<CountImpl>(1), std::make_shared<CountImpl>(2)};
  seq->extend(modules);
  CHECK(seq->size() == 2);
  CHECK(&seq->at<CountImpl>(1) == modules[1].get());
  CHECK(error_of([&] { seq->at<CountImpl>(5); }) == "Index out of range");
  CHECK(seq->forward<int>(1) == 4);
}

TEST_CASE("ATen-spelled losses and layers match PyTorch 1.13") {
  const Tensor p = f64({0.2, 0.7, 0.9}), t = f64({0.0, 1.0, 1.0});
  // values from PyTorch 1.13
  CHECK(value_mismatch(gd::mse_loss(p, t, 0), f64({0.04, 0.09, 0.01})) == "");
  CHECK(gd::mse_loss(p, t, 2).item<double>() == doctest::Approx(0.14));
  CHECK(gd::binary_cross_entropy(p, t, f64({1.0, 2.0, 0.5}), 2).item<double>() ==
        doctest::Approx(0.98917370));
  CHECK(gd::binary_cross_entropy(p, t).item<double>() ==
        doctest::Approx(F::binary_cross_entropy(p, t).item<double>()));
  // As ATen's: an input [N, 1] goes with a target [N].
  CHECK(gd::binary_cross_entropy(p.unsqueeze(1), t).item<double>() ==
        doctest::Approx(F::binary_cross_entropy(p, t).item<double>()));
  CHECK(gd::binary_cross_entropy(p.unsqueeze(1), t, Tensor(), 0).sizes().vec() == std::vector<int64_t>{3, 1});
  CHECK(error_of([&] { gd::mse_loss(p, t, 7); }) == "7 is not a valid value for reduction");
  const Tensor x = f64({-2.0, -0.5, 0.0, 0.7, 3.0});
  const Tensor elu_expected = f64({-1.89636168, -0.66359765, 0.0, 1.4, 6.0});
  CHECK(value_mismatch(gd::elu(x, 1.5, 2.0, 0.5), elu_expected, 1e-7, 1e-8) == "");
  const Tensor g = gd::tensor({{0.5f, -1.0f, 2.0f, 0.0f}, {1.5f, 0.25f, -0.5f, 1.0f}}).reshape({2, 4, 1});
  Tensor gn = gd::group_norm(g, 2, gd::tensor({1.0f, 2.0f, 3.0f, 4.0f}), gd::tensor({0.0f, 0.5f, 0.0f, -0.5f}), 1e-5);
  CHECK(value_mismatch(gn.reshape({2, 4}), gd::tensor({{1.0f, -1.5f, 3.0f, -4.5f}, {1.0f, -1.5f, -3.0f, 3.5f}}),
                       1e-4, 1e-4) == "");
  Tensor d = gd::pairwise_distance(gd::tensor({{1.0f, 2.0f}, {3.0f, 4.0f}}), gd::tensor({{0.0f, 0.0f}, {1.0f, 1.0f}}),
                                   3.0, 1e-6, true);
  CHECK(value_mismatch(d, gd::tensor({{2.0801f}, {3.2711f}}), 1e-4, 1e-4) == "");
  const Tensor weight = gd::arange(12, gd::kFloat64).reshape({4, 3});
  auto bag = gd::embedding_bag(weight, gd::tensor({0L, 1L, 3L}), gd::tensor({0L, 2L}), false, 0);
  CHECK(value_mismatch(std::get<0>(bag), f64({{3.0, 5.0, 7.0}, {9.0, 10.0, 11.0}})) == "");
}

TEST_CASE("ATen-spelled elu passes gradcheck and gradgradcheck") {
  Tensor x = f64({-2.0, -0.5, 0.3, 0.7, 3.0}).requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{gd::elu(in[0], 1.5, 2.0, 0.5)}; };
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, {x}); }) == "");
  CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, {x}); }) == "");
}

TEST_CASE("embedding with scale_grad_by_freq divides each row's gradient by its count") {
  Tensor w = f64({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}).requires_grad_();
  Tensor y = gd::embedding(w, gd::tensor({{0L, 2L}, {2L, 2L}}), -1, true, false);
  y.sum().backward();
  // values from PyTorch 1.13
  CHECK(value_mismatch(y, f64({{{1.0, 2.0}, {5.0, 6.0}}, {{5.0, 6.0}, {5.0, 6.0}}})) == "");
  CHECK(value_mismatch(w.grad(), f64({{1.0, 1.0}, {0.0, 0.0}, {1.0, 1.0}})) == "");
  nn::Embedding table(nn::EmbeddingOptions(3, 2).scale_grad_by_freq(true));
  table(gd::tensor({1L, 1L})).sum().backward();
  CHECK(value_mismatch(table->weight.grad()[1], gd::tensor({1.0f, 1.0f})) == "");
  CHECK(printed(*nn::Embedding(nn::EmbeddingOptions(10, 2).scale_grad_by_freq(true).sparse(true))) ==
        "torch::nn::Embedding(num_embeddings=10, embedding_dim=2, scale_grad_by_freq=true, sparse=true)");
  CHECK(error_of([&] { gd::embedding(w, gd::tensor({0L}), -1, false, true); }) ==
        "embedding: sparse gradients are not supported");
}

TEST_CASE("Module's name, registration messages and warnings are libtorch's") {
  nn::Module plain;
  CHECK(error_of([&] { plain.register_parameter("a.b", gd::ones({1})); }) ==
        "Parameter name must not contain a dot (got 'a.b')");
  CHECK(error_of([&] { plain.register_buffer("a.b", gd::ones({1})); }) ==
        "Buffer name must not contain a dot (got 'a.b')");
  CHECK(error_of([&] { plain.unregister_module("linear"); }) == "No Module with name `linear` is registered");
  CHECK(error_of([&] { plain.replace_module("linear", nn::Linear(3, 4)); }) == "Submodule 'linear' is not defined");
  Capture capture;
  gd::WarningHandler* previous = gd::Warning::get_warning_handler();
  gd::Warning::set_warning_handler(&capture);
  plain.register_parameter("undefined", Tensor());
  plain.register_parameter("quiet", Tensor(), false);
  gd::Warning::set_warning_handler(previous);
  REQUIRE(capture.messages.size() == 1);
  CHECK(capture.messages[0].find("Ignoring the `requires_grad=true` function parameter") != std::string::npos);
  CHECK(CountImpl(1).name() == "Count");
  CHECK(printed(CountImpl(1)) == "Count");
  CHECK(nn::Linear(1, 1)->name() == "Linear");
}

TEST_CASE("replace_module takes a holder; a clone copies the plain fields of submodules") {
  struct Inner : nn::Cloneable<Inner> {
    Inner() { reset(); }
    void reset() override { weight = register_parameter("weight", gd::ones({2})); }
    Tensor weight;
    int value = 0;
  };
  struct Outer : nn::Cloneable<Outer> {
    Outer() { reset(); }
    void reset() override {
      inner = register_module("inner", std::make_shared<Inner>());
      head = register_module("head", nn::Linear(2, 2));
    }
    std::shared_ptr<Inner> inner;
    nn::Linear head{nullptr};
  };
  auto outer = std::make_shared<Outer>();
  outer->inner->value = 123;
  outer->head = outer->replace_module("head", nn::Linear(2, 5));
  CHECK(outer->named_parameters()["head.weight"].size(0) == 5);
  auto copy = std::dynamic_pointer_cast<Outer>(outer->clone());
  CHECK(copy->inner->value == 123);
  CHECK(copy->inner->weight.impl() == copy->inner->named_parameters()["weight"].impl());
  CHECK(copy->inner->weight.impl() != outer->inner->weight.impl());
}

TEST_CASE("Hardtanh::reset, cell and ConvTranspose printing, unbatched fold, smooth_l1_loss beta") {
  nn::Hardtanh hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.5));
  hardtanh->options.min_val(0.5);
  CHECK(error_of([&] { hardtanh->reset(); }) == "max_val must be greater than min_val");
  CHECK(printed(*nn::RNNCell(20, 10)) == "torch::nn::RNNCell(20, 10)");
  CHECK(printed(*nn::RNNCell(nn::RNNCellOptions(20, 10).bias(false).nonlinearity(gd::kReLU))) ==
        "torch::nn::RNNCell(20, 10, bias=false, nonlinearity=kReLU)");
  CHECK(printed(*nn::LSTMCell(nn::LSTMCellOptions(20, 10).bias(false))) == "torch::nn::LSTMCell(20, 10, bias=false)");
  nn::ConvTranspose2d circular(nn::ConvTranspose2dOptions(2, 2, 3).padding_mode(gd::kCircular));
  CHECK(printed(*circular) == "torch::nn::ConvTranspose2d(2, 2, kernel_size=[3, 3], stride=[1, 1], "
                              "padding_mode=kCircular)");
  CHECK(error_of([&] { circular(gd::zeros({1, 2, 4, 4})); }) ==
        "Only \"zeros\" padding mode is supported for ConvTranspose2d");
  // values from PyTorch 1.13: F.fold(torch.arange(8.).reshape(4, 2), (2, 3), (2, 2))
  Tensor folded = F::fold(gd::arange(8.0f).reshape({4, 2}), F::FoldFuncOptions({2, 3}, {2, 2}));
  CHECK(value_mismatch(folded, gd::tensor({{{0.0f, 3.0f, 3.0f}, {4.0f, 11.0f, 7.0f}}})) == "");
  CHECK(error_of([&] { F::fold(gd::zeros({1, 4, 2, 2}), F::FoldFuncOptions({2, 3}, {2, 2})); }) ==
        "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got 4D)");
  Tensor loss = F::smooth_l1_loss(gd::tensor({0.1f, 1.5f, 10.0f}), gd::tensor({0.0f, 1.0f, 5.0f}), gd::kMean, 0.5);
  CHECK(loss.item<float>() == doctest::Approx(1.67f));  // values from PyTorch 1.13
  std::vector<nn::TripletMarginWithDistanceLossOptions::reduction_t> reductions{gd::kSum, gd::kNone};
  CHECK(reductions.size() == 2);
  Tensor kept = f64({1.0, 2.0});
  CHECK(value_mismatch(F::detail::alpha_dropout(kept, 0.5, false, false), kept) == "");
  nn::GRU gru(2, 3);
  gru->flatten_parameters();
  CHECK(gru->parameters().size() == 4);
}

TEST_CASE("Bilinear and F::bilinear match PyTorch 1.13 and pass gradcheck") {
  const Tensor x1 = f64({{1.0, 2.0, 3.0}, {7.0, 6.0, 5.0}}), x2 = f64({{7.0, 4.0}, {8.0, 9.0}});
  const Tensor w = f64({{{2.0, 3.0}, {9.0, 7.0}, {8.0, 6.0}}, {{1.0, -1.0}, {0.5, 2.0}, {-3.0, 1.0}}});
  const Tensor b = f64({1.0, -2.0});
  // values from PyTorch 1.13
  CHECK(value_mismatch(F::bilinear(x1, x2, w, b), f64({{449.0, -27.0}, {1702.0, 48.0}})) == "");
  CHECK(error_of([&] { F::bilinear(x1, x2.slice(0, 0, 1), w, b); }) ==
        "bilinear(): input batch dimensions do not match at dim 0: got 2 and 1");
  CHECK(error_of([&] { F::bilinear(x1, x2, w.slice(1, 0, 2), b); }) ==
        "bilinear(): input1 size does not match weight size: got 3 but expected 2");
  CHECK(error_of([&] { F::bilinear(x1, x2, w, b.slice(0, 0, 1)); }) ==
        "bilinear(): bias size does not match weight size: got 1 but expected 2");
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{F::bilinear(in[0], in[1], in[2], in[3])}; };
  std::vector<Tensor> leaves{x1 / 3, x2 / 5, w / 4, b};
  for (Tensor& t : leaves) t = t.detach().requires_grad_();
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, leaves); }) == "");
  CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, leaves); }) == "");
  nn::Bilinear layer(5, 3, 2);
  CHECK(layer(gd::randn({4, 5}), gd::randn({4, 3})).sizes().vec() == std::vector<int64_t>{4, 2});
  CHECK(printed(*nn::Bilinear(nn::BilinearOptions(3, 2, 4).bias(false))) ==
        "torch::nn::Bilinear(in1_features=3, in2_features=2, out_features=4, bias=false)");
}

TEST_CASE("pdist, cosine_similarity and remainder match PyTorch 1.13") {
  const Tensor x = f64({{1.0, -1.0}, {1.0, 3.0}, {3.0, 3.0}, {0.5, 0.25}});
  // values from PyTorch 1.13
  CHECK(value_mismatch(F::pdist(x, 1.5),
                       f64({4.0, 4.8945216295, 1.4528026284, 2.0, 2.8903578232, 4.1692899656}), 1e-9,
                       1e-9) == "");
  CHECK(F::pdist(gd::zeros({1, 3})).numel() == 0);
  CHECK(error_of([&] { F::pdist(gd::zeros({3})); }) == "pdist only supports 2D tensors, got: 1D");
  CHECK(error_of([&] { F::pdist(x, -1.0); }) == "pdist only supports non-negative p values");
  Tensor leaf = (x / 2).detach().requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{F::pdist(in[0], 3.0)}; };
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, {leaf}); }) == "");
  CHECK(value_mismatch(gd::cosine_similarity(gd::tensor({{1.0f, 2.0f}, {3.0f, -1.0f}}),
                                             gd::tensor({{2.0f, 1.0f}, {1.0f, 1.0f}})),
                       gd::tensor({0.8f, 0.4472136f}), 1e-6, 1e-6) == "");
  CHECK(value_mismatch(gd::tensor({5L, -5L, 7L}) % 3, gd::tensor({2L, 1L, 1L})) == "");
  CHECK(value_mismatch(gd::tensor({5L, -5L, 7L}) % -3, gd::tensor({-1L, -2L, -2L})) == "");
  CHECK(value_mismatch(f64({5.5, -5.5}) % 2, f64({1.5, 0.5})) == "");
}

TEST_CASE("affine_grid and grid_sample match PyTorch 1.13") {
  const Tensor theta = f64({{{0.8, -0.3, 0.1}, {0.2, 1.1, -0.4}}});
  // values from PyTorch 1.13
  CHECK(value_mismatch(F::affine_grid(theta, {1, 1, 2, 3}, false).reshape({-1}),
                       f64({-0.2833333333333333, -1.0833333333333335, 0.25, -0.9500000000000001,
                                   0.7833333333333333, -0.8166666666666668, -0.5833333333333334, 0.01666666666666672,
                                   -0.04999999999999999, 0.15000000000000002, 0.4833333333333333,
                                   0.2833333333333333}),
                       1e-12, 1e-12) == "");
  CHECK(value_mismatch(F::affine_grid(theta, {1, 1, 2, 3}, true).reshape({-1}),
                       f64({-0.4, -1.7, 0.4, -1.5, 1.2, -1.3, -1.0, 0.5, -0.2, 0.7, 0.6, 0.9}), 1e-12,
                       1e-12) == "");
  CHECK(error_of([&] { F::affine_grid(gd::zeros({1, 2, 3}, gd::kInt32), {1, 1, 2, 2}); }) ==
        "Expected theta to have floating point type, but got int");
  CHECK(error_of([&] { F::affine_grid(theta, {1, 1}); }) ==
        "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size [1, 1]");
  const Tensor input = gd::arange(12, gd::kFloat64).reshape({1, 1, 3, 4}) * 0.5 - 1;
  const Tensor grid =
      f64({{{{-1.3, -0.9}, {0.25, 0.6}, {1.2, -0.2}}, {{0.9, 1.4}, {-0.45, 0.1}, {0.0, -1.0}}}});
  struct Case {
    const char* mode;
    const char* padding;
    bool align;
    std::vector<double> expected;  // values from PyTorch 1.13
  };
  const std::vector<Case> cases{
      {"bilinear", "zeros", true, {-0.44, 3.1375, 1.47, 2.655, 1.6125, -0.25}},
      {"bilinear", "zeros", false, {0.0, 3.8, 0.19, 0.0, 1.6, -0.125}},
      {"bilinear", "border", true, {-0.8, 3.1375, 2.1, 4.425, 1.6125, -0.25}},
      {"bilinear", "border", false, {-1.0, 3.8, 1.9, 4.5, 1.6, -0.25}},
      {"bilinear", "reflection", true, {-0.575, 3.1375, 1.95, 3.625, 1.6125, -0.25}},
      {"bilinear", "reflection", false, {-0.95, 3.8, 1.9, 4.3, 1.6, -0.25}},
      {"nearest", "zeros", true, {-1.0, 4.0, 2.5, 4.5, 1.5, 0.0}},
      {"nearest", "zeros", false, {0.0, 4.0, 0.0, 0.0, 1.5, 0.0}},
      {"nearest", "reflection", false, {-1.0, 4.0, 2.5, 4.5, 1.5, 0.0}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mode);
    CAPTURE(c.padding);
    CAPTURE(c.align);
    auto options = F::GridSampleFuncOptions().mode(c.mode).padding_mode(c.padding).align_corners(c.align);
    CHECK(value_mismatch(F::grid_sample(input, grid, options).reshape({-1}), f64(c.expected), 1e-12,
                         1e-12) == "");
  }
  CHECK(value_mismatch(F::grid_sample(input, grid, F::GridSampleFuncOptions().padding_mode(gd::kBorder)),
                       F::grid_sample(input, grid, F::GridSampleFuncOptions().padding_mode("border"))) == "");
  Tensor in_leaf = input.detach().requires_grad_(), grid_leaf = (grid * 0.9).detach().requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{F::grid_sample(in[0], in[1], F::GridSampleFuncOptions().align_corners(false))};
  };
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, {in_leaf, grid_leaf}); }) == "");
}

TEST_CASE("ctc_loss and CTCLoss match PyTorch 1.13 and pass gradcheck") {
  const Tensor log_probs = f64({{{-1.2, -0.8, -1.4}, {-0.5, -1.5, -1.6}},
                                       {{-1.0, -1.1, -1.2}, {-2.0, -0.3, -1.9}},
                                       {{-0.9, -1.3, -1.1}, {-1.1, -1.2, -1.0}},
                                       {{-1.5, -0.7, -1.2}, {-0.6, -1.6, -1.3}}})
                               .log_softmax(2);
  const Tensor targets = gd::tensor({{1L, 2L}, {2L, 0L}}), input_lengths = gd::tensor({4L, 3L}),
               target_lengths = gd::tensor({2L, 1L});
  auto none = F::CTCLossFuncOptions().reduction(gd::kNone);
  // values from PyTorch 1.13
  CHECK(value_mismatch(F::ctc_loss(log_probs, targets, input_lengths, target_lengths, none),
                       f64({1.6987849404842401, 2.1456883670027627}), 1e-12, 1e-12) == "");
  CHECK(value_mismatch(F::ctc_loss(log_probs, gd::tensor({1L, 2L, 2L}), input_lengths, target_lengths, none),
                       f64({1.6987849404842401, 2.1456883670027627}), 1e-12, 1e-12) == "");
  CHECK(F::ctc_loss(log_probs, targets, input_lengths, target_lengths).item<double>() ==
        doctest::Approx(1.4975404186224415).epsilon(1e-12));
  nn::CTCLoss sum_loss(nn::CTCLossOptions().reduction(gd::kSum));
  CHECK(sum_loss(log_probs, targets, input_lengths, target_lengths).item<double>() ==
        doctest::Approx(3.8444733074870028).epsilon(1e-12));
  const Tensor too_long = gd::tensor({{1L, 1L, 1L}, {2L, 2L, 2L}});
  const Tensor impossible = F::ctc_loss(log_probs, too_long, gd::tensor({2L, 4L}), gd::tensor({3L, 3L}), none);
  CHECK(std::isinf(impossible[0].item<double>()));
  CHECK(std::isinf(impossible[1].item<double>()));
  CHECK(value_mismatch(F::ctc_loss(log_probs, too_long, gd::tensor({2L, 4L}), gd::tensor({3L, 3L}),
                                   F::CTCLossFuncOptions().reduction(gd::kNone).zero_infinity(true)),
                       gd::zeros({2}, gd::kFloat64)) == "");
  CHECK(error_of([&] { F::ctc_loss(log_probs, targets, input_lengths.to(gd::kFloat32), target_lengths); }) ==
        "input_lengths must be integral");
  CHECK(error_of([&] { F::ctc_loss(log_probs, gd::tensor({{1L}, {2L}}), input_lengths, target_lengths); }) ==
        "Expected tensor to have size at least 2 at dimension 1, but got size 1 for argument #2 'targets' (while "
        "checking arguments for ctc_loss_cpu)");
  Tensor leaf = gd::randn({5, 2, 4}, gd::kFloat64).detach().requires_grad_();
  auto fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{F::ctc_loss(in[0].log_softmax(2), gd::tensor({{1L, 3L}, {2L, 2L}}),
                                           gd::tensor({5L, 4L}), gd::tensor({2L, 2L}))};
  };
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, {leaf}); }) == "");
  CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, {leaf}); }) == "");
  CHECK(printed(*nn::CTCLoss()) == "torch::nn::CTCLoss()");
}

TEST_CASE("CrossMapLRN2d matches PyTorch 1.13") {
  const Tensor x = gd::arange(24, gd::kFloat64).reshape({1, 4, 3, 2}) / 5;
  nn::CrossMapLRN2d odd(nn::CrossMapLRN2dOptions(3).alpha(1e-2));
  // values from PyTorch 1.13
  const std::vector<double> odd_expected{
      0.0, 0.19900579790658401, 0.39730140083536614, 0.5946560832375448, 0.7908438342002324, 0.9856443285085313,
      1.178843840327752, 1.370102953493772, 1.5590203538081546, 1.745306539223898, 1.928688669539057,
      2.108911864180938, 2.285740267656275, 2.4587296301108332, 2.627403244378285, 2.791514827795438,
      2.9508497875381554, 3.105225354503904, 3.4402218846503843, 3.6099594595287514, 3.77565387743805,
      3.9371269354417358, 4.094221747433309, 4.246802814799142};
  CHECK(value_mismatch(odd(x).reshape({-1}), f64(odd_expected), 1e-12, 1e-12) == "");
  nn::CrossMapLRN2d even(nn::CrossMapLRN2dOptions(4).alpha(1e-2).k(2));
  const std::vector<double> even_expected{
      0.0, 0.11869822181176846, 0.23723672609077717, 0.3555627838565665, 0.47362407138445833, 0.5913687590372915,
      0.7087455981698149, 0.8256733770840725, 0.9420546553634135, 1.0578153994779038, 1.172883144367462,
      1.2871871610827537, 1.4006586150252789, 1.5131755668471, 1.6246029461283777, 1.7348563026427213,
      1.8438547850817875, 1.951521335913315, 2.1037587946981042, 2.2155217574965813, 2.3262670864724018,
      2.4359319500844205, 2.544455910542658, 2.6517810349178204};
  CHECK(value_mismatch(even(x).reshape({-1}), f64(even_expected), 1e-12, 1e-12) == "");
  Tensor leaf = x.detach().requires_grad_();
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{odd(in[0])}; };
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, {leaf}); }) == "");
  CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, {leaf}); }) == "");
  CHECK(printed(*nn::CrossMapLRN2d(nn::CrossMapLRN2dOptions(3).alpha(1e-5).beta(0.1).k(10))) ==
        "torch::nn::CrossMapLRN2d(3, alpha=1e-05, beta=0.1, k=10)");
  CHECK(error_of([&] { odd(gd::zeros({2, 3})); }) == "CrossMapLRN2d: Expected input to be 4D, got 2D instead.");
}

TEST_CASE("AdaptiveLogSoftmaxWithLoss: log_prob, forward and predict agree") {
  gd::manual_seed(0);
  nn::AdaptiveLogSoftmaxWithLoss asfm(
      nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 8}).div_value(2.0).head_bias(true));
  CHECK(asfm->head->weight.sizes().vec() == std::vector<int64_t>{6, 8});
  const Tensor x = gd::randn({6, 8});
  const Tensor log_prob = asfm->log_prob(x);
  CHECK(value_mismatch(log_prob.exp().sum({1}), gd::ones({6}), 1e-5, 1e-5) == "");
  const Tensor target = gd::tensor({0L, 3L, 4L, 7L, 8L, 9L});
  nn::ASMoutput out = asfm(x, target);
  CHECK(value_mismatch(out.output, log_prob.gather(1, target.unsqueeze(1)).squeeze(1), 1e-5, 1e-5) == "");
  CHECK(out.loss == doctest::Approx(-out.output.mean().item<double>()).epsilon(1e-5));
  CHECK(value_mismatch(asfm->predict(x), log_prob.argmax(1)) == "");
  CHECK(value_mismatch(asfm(x[1], target[1]).output, out.output[1], 1e-5, 1e-5) == "");
  CHECK(error_of([&] { asfm(x, gd::tensor({0L, 1L, 2L, 3L, 4L, 10L})); }) ==
        "Target values should be in [0, 9], but values in range [0, 10] were found. ");
  CHECK(error_of([&] { nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 4})); }) ==
        "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each value "
        "is between 1 and n_classes-1");
  std::ostringstream s;
  asfm->pretty_print_recursive(s);
  CHECK(s.str().find("(tail): torch::nn::ModuleList(") != std::string::npos);
}

TEST_CASE("optimizer options compare equal when every option does") {
  CHECK(gd::optim::AdagradOptions(1.0) == gd::optim::AdagradOptions(1.0));
  CHECK(!(gd::optim::AdagradOptions(1.0) == gd::optim::AdagradOptions(1.0).lr_decay(0.1)));
  CHECK(gd::optim::AdamOptions().betas({0.8, 0.9}) == gd::optim::AdamOptions().betas({0.8, 0.9}));
  CHECK(!(gd::optim::SGDOptions(0.1) == gd::optim::SGDOptions(0.1).momentum(0.9)));
}

TEST_CASE("PackedSequence::to(kCPU) and cpu()") {
  auto packed = nn::utils::rnn::pack_padded_sequence(gd::ones({3, 2, 1}), gd::tensor({3L, 2L}));
  CHECK(value_mismatch(packed.to(gd::kCPU).data(), packed.data()) == "");
}
