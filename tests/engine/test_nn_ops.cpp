// layer_norm, batch_norm, dropout and embedding: values, gradients and running
// statistics against PyTorch 1.13 literals, dropout's mask statistics, errors,
// the determinism switch (their rows in the gradcheck/gradgradcheck sweep are in
// op_rows/nn_ops.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/dims.h"
#include "engine/nn_ops.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;
using gd::testing::with_seed;

namespace {

std::string mismatch(const Tensor& t, const std::vector<double>& values, const std::vector<int64_t>& shape,
                     double rtol = 1e-12, double atol = 1e-14) {
  if (t.sizes().vec() != shape)
    return "shape " + gd::shape_to_string(t.sizes()) + " != " + gd::shape_to_string(shape);
  return value_mismatch(values_of(t), values, rtol, atol);
}

Tensor T(const std::vector<double>& values, const std::vector<int64_t>& shape = {},
         gd::ScalarType dtype = gd::kFloat64) {
  return tensor_of(values, shape, dtype);
}
Tensor I64(const std::vector<double>& values, const std::vector<int64_t>& shape = {}) {
  return tensor_of(values, shape, gd::kInt64);
}
// 1, 2, 3, ... shaped like t: the upstream gradient of the PyTorch references.
Tensor upstream(const Tensor& t) {
  return gd::arange(1, t.numel() + 1, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape(t.sizes());
}

// torch.tensor([0.3,-1.2,2.,0.7,1.1,-0.4,2.5,0.,-3.,1.,0.25,-0.75], dtype=torch.float64)
const std::vector<double> kTwelve = {0.3, -1.2, 2., 0.7, 1.1, -0.4, 2.5, 0., -3., 1., 0.25, -0.75};

}  // namespace

// ---- layer_norm ----

TEST_CASE("layer_norm matches PyTorch") {
  // The literals are torch.nn.functional.layer_norm of the same inputs.
  Tensor x = T({1.5, -2, 3, 0.5, 4, -1}, {2, 3}), x3 = T(kTwelve, {2, 2, 3});
  Tensor w = T({0.5, -1, 2}), b = T({0.1, 0.2, -0.3});
  CHECK(mismatch(gd::layer_norm(x, {3}, w, b),
                 {0.2591112755692392, 1.5524458423385323, 1.7684465824001083, -0.05911127556923909,
                  -1.1524458423385326, -2.368446582400108},
                 {2, 3}) == "");
  CHECK(mismatch(gd::layer_norm(x3, {2, 3}),
                 {-0.11342022418447202, -1.5716802494133975, 1.5392744710749768, 0.2754491158765747,
                  0.6643184559376216, -0.7939415692913039, 1.4907093348522868, 3.310039653153322e-17,
                  -1.788851201822744, 0.5962837339409147, 0.1490709334852287, -0.447212800455686},
                 {2, 2, 3}) == "");
  CHECK(mismatch(gd::layer_norm(x3, {3}, {}, {}, 0.1),
                 {-0.049568159709661025, -1.1648517531770328, 1.2144199128866937, 0.32925230393425897,
                  0.8936848249644176, -1.2229371288986763, 1.1744404390294072, 0.07340252743933798,
                  -1.2478429664687452, 1.0635890745287926, 0.10635890745287924, -1.1699479819816718},
                 {2, 2, 3}) == "");
  // A non-contiguous input normalizes its logical rows.
  CHECK(mismatch(gd::layer_norm(T({1.5, 0.5, -2, 4, 3, -1}, {3, 2}).t(), {3}, w, b),
                 {0.2591112755692392, 1.5524458423385323, 1.7684465824001083, -0.05911127556923909,
                  -1.1524458423385326, -2.368446582400108},
                 {2, 3}) == "");
  Tensor y32 = gd::layer_norm(T(kTwelve, {2, 2, 3}, gd::kFloat32), {2, 3});
  CHECK(y32.dtype() == gd::kFloat32);
  CHECK(mismatch(y32,
                 {-0.11342018097639084, -1.5716803073883057, 1.5392745733261108, 0.27544915676116943,
                  0.6643185615539551, -0.7939415574073792, 1.4907093048095703, -8.885320035290079e-09,
                  -1.788851261138916, 0.5962837338447571, 0.14907091856002808, -0.447212815284729},
                 {2, 2, 3}, 1e-5, 1e-6) == "");
}

TEST_CASE("layer_norm gradients match PyTorch") {
  Tensor x = T({1.5, -2, 3, 0.5, 4, -1}, {2, 3}).requires_grad_();
  Tensor w = T({0.5, -1, 2}).requires_grad_(), b = T({0.1, 0.2, -0.3}).requires_grad_();
  Tensor y = gd::layer_norm(x, {3}, w, b);
  auto g = gd::autograd::grad({y}, {x, w, b}, {upstream(y)});
  CHECK(mismatch(g[0],
                 {-0.936540006108657, 0.28095786897698216, 0.6555821371316745, -1.4803367975045063,
                  0.4440920122246137, 1.0362447852798917},
                 {2, 3}, 1e-11) == "");
  CHECK(mismatch(g[1], {-0.9546676534154345, 4.057337527015598, -3.1026698736001626}, {3}, 1e-11) == "");
  CHECK(mismatch(g[2], {5, 7, 9}, {3}) == "");
}

TEST_CASE("layer_norm derivatives of every order: third order by finite differences") {
  // The gradient of sum(y^3) is checked by gradgradcheck: third derivatives of layer_norm.
  auto gradient = [](const std::vector<Tensor>& in) {
    Tensor y = gd::layer_norm(in[0], {3}, in[1], {});
    return gd::autograd::grad({(y * y * y).sum()}, {in[0]}, {}, std::nullopt, true);
  };
  Tensor x = gd::testing::sample({2, 3}, -1, 1, 11).requires_grad_();
  Tensor w = gd::testing::sample({3}, 0.5, 1.5, 12).requires_grad_();
  CHECK(gd::autograd::gradgradcheck(gradient, {x, w}));
}

TEST_CASE("layer_norm errors carry PyTorch's messages") {
  Tensor x = gd::zeros({2, 4}, gd::kFloat64);
  CHECK(error_of([&] { gd::layer_norm(x, {3}); }) ==
        "Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[2, 4]");
  CHECK(error_of([&] { gd::layer_norm(x, {2, 4, 5}); }) ==
        "Given normalized_shape=[2, 4, 5], expected input with shape [*, 2, 4, 5], but got input of size[2, 4]");
  CHECK(error_of([&] { gd::layer_norm(x, {4}, gd::ones({3}, gd::kFloat64)); }) ==
        "Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and "
        "normalized_shape = [4]");
  CHECK(error_of([&] { gd::layer_norm(x, {4}, {}, gd::ones({3}, gd::kFloat64)); }) ==
        "Expected bias to be of same shape as normalized_shape, but got bias of shape [3] and normalized_shape = [4]");
  CHECK(error_of([&] { gd::layer_norm(x, {}); }) ==
        "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got "
        "normalized_shape = []");
  CHECK(error_of([&] { gd::layer_norm(gd::zeros({2, 4}, gd::kInt64), {4}); }) ==
        "\"LayerNormKernelImpl\" not implemented for 'Long'");
}

// ---- batch_norm ----

TEST_CASE("batch_norm in training matches PyTorch, running statistics included") {
  // Each case: F.batch_norm(x, running_mean, running_var, weight, bias, training=True, momentum)
  // in PyTorch, then the running statistics it left.
  SUBCASE("(N, C) with affine, then evaluation with the updated statistics") {
    Tensor x = T({1., 2., -1., 0.5, -3., 2., 4., 0., 1.5, -2., 1., 0.}, {4, 3}).requires_grad_();
    Tensor w = T({1.5, -0.5, 2.}).requires_grad_(), b = T({0., 1., -1.}).requires_grad_();
    Tensor rm = T({0.1, -0.2, 0.3}), rv = T({1., 2., 0.5});
    const uint32_t version = rm._version();
    Tensor y = gd::batch_norm(x, rm, rv, w, b, true, 0.1);
    CHECK(mismatch(y,
                   {0.08793146056974588, 0.46547827977706324, -3.7255309912090344, -0.26379438170923775,
                    1.8017825803344052, 1.3062185310230294, 2.1982865142436476, 1.0, 0.4675936106510188,
                    -2.022423593104156, 0.7327391398885317, -2.048281150465013},
                   {4, 3}) == "");
    CHECK(mismatch(rm, {0.17750000000000002, -0.18000000000000002, 0.3325}, {3}) == "");
    CHECK(mismatch(rv, {1.50625, 2.2666666666666666, 0.6395833333333334}, {3}) == "");
    CHECK(rm._version() > version);
    CHECK((!rm.requires_grad() && rm.is_leaf() && !rv.requires_grad() && rv.is_leaf()));
    auto g = gd::autograd::grad({y}, {x, w, b}, {upstream(y)});
    CHECK(mismatch(g[0],
                   {-3.1256462325110466, 1.2026738705016078, -5.750583521079369, -1.1748365708363706,
                    0.4008912901672026, -4.0364477138049555, 2.0523362268321175, -0.4008912901672026,
                    1.548237427586717, 2.2481465765152993, -1.2026738705016078, 8.238793807297606},
                   {4, 3}, 1e-11, 1e-13) == "");
    CHECK(mismatch(g[1], {-3.86898426506882, 0.0, 3.14484345139504}, {3}, 1e-11, 1e-13) == "");
    CHECK(mismatch(g[2], {22, 26, 30}, {3}) == "");

    // Evaluation uses (and leaves alone) the statistics the training step updated.
    const uint32_t eval_version = rm._version();
    Tensor ye = gd::batch_norm(x, rm, rv, w, b, false);
    CHECK(rm._version() == eval_version);
    CHECK(mismatch(ye,
                   {1.0052572039999934, 0.2760114281028252, -4.332308870530132, 0.39415859974467826,
                    1.9365356755734098, 3.170075078130578, 4.671848829531884, 0.940221127091059, 1.919677753353793,
                    -2.6613344215318975, 0.6081162775969421, -1.831514220976562},
                   {4, 3}) == "");
    auto ge = gd::autograd::grad({ye}, {x, w}, {upstream(ye)});
    CHECK(mismatch(ge[0],
                   {1.2221972085106303, -0.6642096989882338, 7.50238394866071, 4.888788834042521,
                    -1.6605242474705846, 15.00476789732142, 8.555380459574412, -2.656838795952935,
                    22.50715184598213, 12.221972085106302, -3.6531533444352857, 30.00953579464284},
                   {4, 3}) == "");
    CHECK(mismatch(ge[1], {5.780992796255277, 3.1085013912649346, 15.661226492829233}, {3}) == "");
  }
  SUBCASE("(N, C, L), momentum 0.3, no affine") {
    Tensor rm = gd::zeros({3}, gd::kFloat64), rv = gd::ones({3}, gd::kFloat64);
    CHECK(mismatch(gd::batch_norm(T(kTwelve, {2, 3, 2}), rm, rv, {}, {}, true, 0.3),
                   {-0.07484790919879666, -1.1975665471807464, 0.9629453869776482, 0.27701168666480286,
                    1.4905092084247533, -0.6387896607534657, 1.5718060931747295, -0.2993916367951866,
                    -1.6752611526871415, 0.43530407904469026, 0.28390651589042915, -1.1356260635617166},
                   {2, 3, 2}) == "");
    CHECK(mismatch(rm, {0.12, 0.05250000000000001, 0.015000000000000005}, {3}) == "");
    CHECK(mismatch(rv, {1.4140000000000001, 2.1367499999999997, 0.8985}, {3}) == "");
  }
  SUBCASE("(N, C, H, W) with affine, then evaluation with eps 1e-3") {
    std::vector<double> v = kTwelve;
    v.insert(v.end(), {1.25, -0.5, 0.6, 3.});
    Tensor x = T(v, {2, 2, 2, 2}), w = T({2., 0.5}), b = T({-1., 1.});
    Tensor rm = T({0.5, -0.5}), rv = T({2., 3.});
    CHECK(mismatch(gd::batch_norm(x, rm, rv, w, b, true),
                   {-0.461724915980302, -2.545370402508165, 1.8997399687512764, 0.09391388042712812,
                    1.0646919803912975, 0.4436489686348416, 1.644332124697323, 0.6092604384365632,
                    -5.045744986341601, 0.5106429777327008, -0.5311797655312308, -1.9202767565498062,
                    1.1267962815669432, 0.4022461011844112, 0.8576776431391455, 1.851346461949475},
                   {2, 2, 2, 2}) == "");
    CHECK(mismatch(rm, {0.44125000000000003, -0.355625}, {2}) == "");
    CHECK(mismatch(rv, {2.0369107142857144, 2.8666741071428574}, {2}) == "");
    CHECK(mismatch(gd::batch_norm(x, rm, rv, w, b, false, 0.1, 1e-3),
                   {-1.1978909237792896, -3.29938745948856, 1.1838051500245501, -0.637491847590151,
                    1.4297883238170133, 0.9868978226745351, 1.843152791549993, 1.1050019563125293,
                    -5.821183302339684, -0.21719254044829683, -1.267940808302932, -2.668938498775779,
                    1.4740773739312611, 0.9573717892650365, 1.2821581567695206, 1.9907829585974857},
                   {2, 2, 2, 2}) == "");
    // float32 without running statistics (track_running_stats=False).
    Tensor y32 = gd::batch_norm(x.to(gd::kFloat32), {}, {}, {}, {}, true);
    CHECK(y32.dtype() == gd::kFloat32);
    CHECK(mismatch(y32,
                   {0.26913756132125854, -0.7726852297782898, 1.449869990348816, 0.5469569563865662,
                    0.12938398122787476, -1.1127020120620728, 1.2886641025543213, -0.7814790606498718,
                    -2.0228724479675293, 0.7553215026855469, 0.2344101220369339, -0.46013838052749634,
                    0.2535925507545471, -1.1955077648162842, -0.2846446633338928, 1.7026927471160889},
                   {2, 2, 2, 2}, 1e-5, 1e-6) == "");
  }
}

TEST_CASE("batch_norm on an empty batch returns it without touching the statistics") {
  Tensor rm = gd::zeros({3}, gd::kFloat64);
  Tensor y = gd::batch_norm(gd::zeros({0, 3}, gd::kFloat64), rm, gd::ones({3}, gd::kFloat64), {}, {}, true);
  CHECK(y.sizes().vec() == std::vector<int64_t>{0, 3});
  CHECK(mismatch(rm, {0, 0, 0}, {3}) == "");
}

TEST_CASE("batch_norm errors carry PyTorch's messages") {
  Tensor x = gd::zeros({4, 3}, gd::kFloat64), rm = gd::zeros({3}, gd::kFloat64), rv = gd::ones({3}, gd::kFloat64);
  Tensor four = gd::ones({4}, gd::kFloat64);
  CHECK(error_of([&] { gd::batch_norm(gd::zeros({1, 3}, gd::kFloat64), rm, rv, {}, {}, true); }) ==
        "Expected more than 1 value per channel when training, got input size [1, 3]");
  CHECK(error_of([&] { gd::batch_norm(x, four, rv, {}, {}, true); }) == "running_mean should contain 3 elements not 4");
  CHECK(error_of([&] { gd::batch_norm(x, rm, four, {}, {}, true); }) == "running_var should contain 3 elements not 4");
  CHECK(error_of([&] { gd::batch_norm(x, rm, rv, four, {}, true); }) == "weight should contain 3 elements not 4");
  CHECK(error_of([&] { gd::batch_norm(x, rm, rv, {}, four, true); }) == "bias should contain 3 elements not 4");
  CHECK(error_of([&] { gd::batch_norm(x, {}, {}, {}, {}, false); }) ==
        "running_mean must be defined in evaluation mode");
  CHECK(error_of([&] { gd::batch_norm(x, rm, {}, {}, {}, false); }) ==
        "running_var must be defined in evaluation mode");
  CHECK(error_of([&] { gd::batch_norm(gd::zeros({4, 3}, gd::kInt64), rm, rv, {}, {}, true); }) ==
        "\"batch_norm\" not implemented for 'Long'");
  CHECK(error_of([&] { gd::batch_norm(gd::zeros({3}, gd::kFloat64), rm, rv, {}, {}, false); }) ==
        "batch_norm: expected input of shape (N, C, ...) with at least 2 dims, but got input of size [3]");
  // One value per channel is fine out of training, and in training with spatial dims.
  CHECK(error_of([&] { gd::batch_norm(gd::zeros({1, 3}, gd::kFloat64), rm, rv, {}, {}, false); }) == "");
  CHECK(error_of([&] { gd::batch_norm(gd::zeros({1, 3, 2}, gd::kFloat64), rm, rv, {}, {}, true); }) == "");
}

// ---- dropout ----

TEST_CASE("dropout zeroes a fraction p and scales the rest by exactly 1 / (1 - p)") {
  const int64_t n = 200000;
  Tensor x = gd::testing::sample({n}, 0.5, 2.0, 3);
  for (double p : {0.1, 0.3, 0.5, 0.9}) {
    CAPTURE(p);
    Tensor y = with_seed(17, [&] { return gd::dropout(x, p); });
    std::vector<double> xs = values_of(x), ys = values_of(y);
    int64_t zeroed = 0, wrong = 0;
    const double scale = 1.0 / (1.0 - p);
    for (int64_t i = 0; i < n; ++i) {
      if (ys[i] == 0) ++zeroed;
      else if (ys[i] != xs[i] * scale) ++wrong;
    }
    CHECK(wrong == 0);
    // The zeroed count is Binomial(n, p): within 5 standard deviations.
    const double sigma = std::sqrt(n * p * (1 - p));
    CHECK(std::abs(static_cast<double>(zeroed) - n * p) < 5 * sigma);
  }
  // float32: the scale is 1.0f / float(1 - p), as in PyTorch's float mask
  // (for p = 0.45 that is one ulp below the float nearest 1 / (1 - p)).
  Tensor x32 = x.to(gd::kFloat32);
  for (double p : {0.45, 0.3}) {
    CAPTURE(p);
    Tensor y32 = with_seed(17, [&] { return gd::dropout(x32, p); });
    CHECK(y32.dtype() == gd::kFloat32);
    const float* xp = x32.data_ptr<float>();
    const float* yp = y32.data_ptr<float>();
    const float scale32 = 1.0f / static_cast<float>(1.0 - p);
    int64_t zeroed = 0, wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (yp[i] == 0) ++zeroed;
      else if (yp[i] != xp[i] * scale32) ++wrong;
    }
    CHECK(wrong == 0);
    CHECK(std::abs(static_cast<double>(zeroed) - n * p) < 5 * std::sqrt(n * p * (1 - p)));
  }
}

TEST_CASE("dropout draws its mask from the default generator") {
  Tensor x = gd::ones({1000}, gd::kFloat64);
  Tensor a = with_seed(5, [&] { return gd::dropout(x, 0.5); });
  Tensor b = with_seed(5, [&] { return gd::dropout(x, 0.5); });
  Tensor c = with_seed(6, [&] { return gd::dropout(x, 0.5); });
  CHECK(gd::equal(a, b));
  CHECK(!gd::equal(a, c));
  // Consecutive calls advance the stream.
  Tensor pair = with_seed(5, [&] { return gd::stack({gd::dropout(x, 0.5), gd::dropout(x, 0.5)}); });
  CHECK(gd::equal(pair[0], a));
  CHECK(!gd::equal(pair[1], a));
}

TEST_CASE("dropout out of training, with p = 0 and with p = 1") {
  Tensor x = gd::testing::sample({3, 4}, -1, 1, 4).requires_grad_();
  CHECK(gd::dropout(x, 0.5, false).is_same(x));
  CHECK(gd::dropout(x, 0.0).is_same(x));
  Tensor y = gd::dropout(x, 1.0);
  CHECK(mismatch(y, std::vector<double>(12, 0.0), {3, 4}) == "");
  CHECK(mismatch(gd::autograd::grad({y.sum()}, {x})[0], std::vector<double>(12, 0.0), {3, 4}) == "");
}

TEST_CASE("dropout's gradient is its mask times 1 / (1 - p)") {
  Tensor x = gd::testing::sample({50}, 0.5, 2.0, 5).requires_grad_();
  Tensor y = with_seed(9, [&] { return gd::dropout(x, 0.4); });
  Tensor g = gd::autograd::grad({y}, {x}, {upstream(y)})[0];
  std::vector<double> ys = values_of(y), gs = values_of(g);
  int64_t wrong = 0;
  for (size_t i = 0; i < ys.size(); ++i) wrong += gs[i] != (ys[i] == 0 ? 0.0 : (i + 1) * (1.0 / 0.6));
  CHECK(wrong == 0);
}

TEST_CASE("dropout errors") {
  Tensor x = gd::ones({3}, gd::kFloat64);
  CHECK(error_of([&] { gd::dropout(x, 1.5); }) == "dropout probability has to be between 0 and 1, but got 1.5");
  CHECK(error_of([&] { gd::dropout(x, -0.1); }) == "dropout probability has to be between 0 and 1, but got -0.1");
  CHECK(error_of([&] { gd::dropout(x, -0.1, false); }) ==
        "dropout probability has to be between 0 and 1, but got -0.1");
  CHECK(error_of([&] { gd::dropout(x, std::numeric_limits<double>::quiet_NaN()); }) != "");
  CHECK(error_of([&] { gd::dropout(gd::ones({3}, gd::kInt64), 0.5); }) ==
        "result type Float can't be cast to the desired output type Long");
}

// ---- embedding ----

TEST_CASE("embedding matches PyTorch, padding_idx included") {
  // F.embedding(idx, W) and F.embedding(idx, W, padding_idx=2) with
  // W = [[0.1,0.2],[1.,-1.],[2.5,3.],[-0.5,0.25]], idx = [[2,0,2],[3,1,2]].
  Tensor w = T({0.1, 0.2, 1., -1., 2.5, 3., -0.5, 0.25}, {4, 2}).requires_grad_();
  const std::vector<double> rows = {2.5, 3.0, 0.1, 0.2, 2.5, 3.0, -0.5, 0.25, 1.0, -1.0, 2.5, 3.0};
  for (gd::ScalarType index_type : {gd::kInt64, gd::kInt32}) {
    Tensor idx = tensor_of({2, 0, 2, 3, 1, 2}, {2, 3}, index_type);
    Tensor y = gd::embedding(w, idx);
    CHECK(mismatch(y, rows, {2, 3, 2}) == "");
    CHECK(mismatch(gd::autograd::grad({y}, {w}, {upstream(y)})[0], {3, 4, 9, 10, 17, 20, 7, 8}, {4, 2}) == "");
    Tensor yp = gd::embedding(w, idx, 2);
    CHECK(mismatch(yp, rows, {2, 3, 2}) == "");
    CHECK(mismatch(gd::autograd::grad({yp}, {w}, {upstream(yp)})[0], {3, 4, 9, 10, 0, 0, 7, 8}, {4, 2}) == "");
  }
  // A 0-dim index picks one row; a transposed weight picks its logical rows.
  CHECK(mismatch(gd::embedding(w, I64({3}, {1}).reshape({})), {-0.5, 0.25}, {2}) == "");
  Tensor wt = T({0.1, 1., 2.5, -0.5, 0.2, -1., 3., 0.25}, {2, 4}).t();
  CHECK(mismatch(gd::embedding(wt, I64({1, 3})), {1., -1., -0.5, 0.25}, {2, 2}) == "");
  CHECK(mismatch(gd::embedding(w, I64({}, {0})), {}, {0, 2}) == "");
}

TEST_CASE("embedding's padding row gets no gradient at any order") {
  // Second derivative through create_graph: the padding row stays zero too.
  Tensor w = gd::testing::sample({4, 2}, -1, 1, 6).requires_grad_();
  Tensor idx = I64({1, 3, 3, 0});
  Tensor y = gd::embedding(w, idx, 3);
  Tensor g = gd::autograd::grad({(y * y).sum()}, {w}, {}, std::nullopt, true)[0];
  std::vector<double> wv = values_of(w), gv = values_of(g);
  CHECK(value_mismatch(gv, {2 * wv[0], 2 * wv[1], 2 * wv[2], 2 * wv[3], 0, 0, 0, 0}) == "");
  Tensor gg = gd::autograd::grad({g.sum()}, {w})[0];
  CHECK(mismatch(gg, {2, 2, 2, 2, 0, 0, 0, 0}, {4, 2}) == "");
}

TEST_CASE("embedding errors carry PyTorch's messages") {
  Tensor w = gd::zeros({5, 3}, gd::kFloat64);
  CHECK(error_of([&] { gd::embedding(w, I64({0, 5})); }) == "index out of range in self");
  CHECK(error_of([&] { gd::embedding(w, I64({0, -1})); }) == "index out of range in self");
  CHECK(error_of([&] { gd::embedding(w, T({0, 1})); }) ==
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
        "torch.DoubleTensor instead (while checking arguments for embedding)");
  CHECK(error_of([&] { gd::embedding(gd::zeros({5}, gd::kFloat64), I64({0, 1})); }) == "'weight' must be 2-D");
  CHECK(error_of([&] { gd::embedding(w, I64({0, 1}), 5); }) == "Padding_idx must be within num_embeddings");
  CHECK(error_of([&] { gd::embedding(w, I64({0, 1}), -2); }) == "Padding_idx must be within num_embeddings");
}

// ---- determinism ----

TEST_CASE("use_deterministic_algorithms switches alert_not_deterministic") {
  const bool before = gd::are_deterministic_algorithms_enabled();
  gd::use_deterministic_algorithms(false);
  CHECK(!gd::are_deterministic_algorithms_enabled());
  CHECK(error_of([] { gd::alert_not_deterministic("index_add_cuda_"); }) == "");
  gd::use_deterministic_algorithms(true);
  CHECK(gd::are_deterministic_algorithms_enabled());
  CHECK(error_of([] { gd::alert_not_deterministic("index_add_cuda_"); }) ==
        "index_add_cuda_ does not have a deterministic implementation, but you set "
        "'gradiens::use_deterministic_algorithms(true)'. You can turn off determinism just for this operation, if "
        "that's acceptable for your application.");
  // Every CPU op still runs under the flag.
  Tensor w = gd::testing::sample({4, 2}, -1, 1, 7).requires_grad_();
  CHECK(error_of([&] { gd::embedding(w, I64({1, 1, 2})).sum().backward(); }) == "");
  gd::use_deterministic_algorithms(before);
}
