// Tests of nn::utils::clip_grad_norm_, clip_grad_value_, parameters_to_vector
// and vector_to_parameters against PyTorch 1.13 literals.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "nn/utils/clip_grad.h"
#include "nn/utils/convert_parameters.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The fixture of every PyTorch reference below: a [2, 3] and a [2] parameter
// with these gradients, and a [3] parameter without one (which is skipped).
struct Params {
  Tensor a, b, c;
  explicit Params(gd::ScalarType dtype = gd::kFloat64) {
    a = gd::zeros({2, 3}, gd::TensorOptions().dtype(dtype)).requires_grad_();
    b = gd::zeros({2}, gd::TensorOptions().dtype(dtype)).requires_grad_();
    c = gd::zeros({3}, gd::TensorOptions().dtype(dtype)).requires_grad_();
    a.set_grad(tensor_of({0.5, -1.5, 2.0, 3.0, -0.25, 1.0}, {2, 3}, dtype));
    b.set_grad(tensor_of({-4.0, 0.75}, {2}, dtype));
  }
  std::vector<Tensor> all() const { return {a, b, c}; }
  std::vector<double> grads() const {
    std::vector<double> out = values_of(a.grad());
    for (double v : values_of(b.grad())) out.push_back(v);
    return out;
  }
};

struct NormCase {
  double norm_type;
  double total_norm;
  std::vector<double> clipped;  // a's then b's gradient after clipping to max_norm 1
};

// PyTorch: a, b, c as in Params; n = clip_grad_norm_([a, b, c], 1.0, p);
// n.item(), a.grad.flatten().tolist() + b.grad.tolist().
const std::vector<NormCase> kFloat64Cases = {
    {2.0, 5.755432216610669,
     {0.08687443345827688, -0.2606233003748306, 0.3474977338331075, 0.5212466007496612, -0.04343721672913844,
      0.17374886691655375, -0.694995467666215, 0.1303116501874153}},
    {1.0, 13.0,
     {0.03846153550295881, -0.11538460650887644, 0.15384614201183525, 0.23076921301775288, -0.019230767751479406,
      0.07692307100591762, -0.3076922840236705, 0.05769230325443822}},
    {kInf, 4.0,
     {0.12499996875000781, -0.37499990625002344, 0.49999987500003124, 0.7499998125000469, -0.062499984375003904,
      0.24999993750001562, -0.9999997500000625, 0.18749995312501172}},
    {3.0, 4.701727145527407,
     {0.10634387708605247, -0.3190316312581574, 0.4253755083442099, 0.6380632625163148, -0.05317193854302624,
      0.21268775417210495, -0.8507510166884198, 0.1595158156290787}},
    {0.5, 89.19180728004169,
     {0.005605895985762678, -0.01681768795728803, 0.02242358394305071, 0.03363537591457606, -0.002802947992881339,
      0.011211791971525355, -0.04484716788610142, 0.008408843978644016}},
    // The -inf "norm" is the smallest magnitude; 0.25 < 1, so nothing is scaled.
    {-kInf, 0.25, {0.5, -1.5, 2.0, 3.0, -0.25, 1.0, -4.0, 0.75}},
};

// The same in float32 (the norm is computed in float32, then the coefficient).
const std::vector<NormCase> kFloat32Cases = {
    {2.0, 5.755431652069092,
     {0.08687444031238556, -0.26062333583831787, 0.34749776124954224, 0.5212466716766357, -0.04343722015619278,
      0.17374888062477112, -0.6949955224990845, 0.13031166791915894}},
    {1.0, 13.0,
     {0.038461536169052124, -0.11538460850715637, 0.1538461446762085, 0.23076921701431274, -0.019230768084526062,
      0.07692307233810425, -0.307692289352417, 0.057692304253578186}},
    {kInf, 4.0,
     {0.12499997019767761, -0.37499991059303284, 0.49999988079071045, 0.7499998211860657, -0.062499985098838806,
      0.24999994039535522, -0.9999997615814209, 0.18749995529651642}},
    {3.0, 4.701727390289307,
     {0.10634387284517288, -0.31903162598609924, 0.42537549138069153, 0.6380632519721985, -0.05317193642258644,
      0.21268774569034576, -0.8507509827613831, 0.15951581299304962}},
    {0.5, 89.19180297851562,
     {0.005605896469205618, -0.016817688941955566, 0.02242358587682247, 0.03363537788391113, -0.002802948234602809,
      0.011211792938411236, -0.04484717175364494, 0.008408844470977783}},
};

std::string nonfinite_message(const std::string& order) {
  return "The total norm of order " + order +
         " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
         "scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`";
}

}  // namespace

TEST_CASE("clip_grad_norm_ matches PyTorch for each norm type (float64)") {
  for (const NormCase& c : kFloat64Cases) {
    CAPTURE(c.norm_type);
    Params p;
    Tensor total = gd::nn::utils::clip_grad_norm_(p.all(), 1.0, c.norm_type);
    CHECK(total.dim() == 0);
    CHECK(total.dtype() == gd::kFloat64);
    CHECK(value_mismatch(values_of(total), {c.total_norm}, 1e-14) == "");
    CHECK(value_mismatch(p.grads(), c.clipped, 1e-14) == "");
    CHECK(!p.c.grad().defined());
  }
}

TEST_CASE("clip_grad_norm_ matches PyTorch for each norm type (float32)") {
  for (const NormCase& c : kFloat32Cases) {
    CAPTURE(c.norm_type);
    Params p(gd::kFloat32);
    Tensor total = gd::nn::utils::clip_grad_norm_(p.all(), 1.0, c.norm_type);
    CHECK(total.dtype() == gd::kFloat32);
    // Within a few float32 ulps: the order of float32 summation may differ.
    CHECK(value_mismatch(values_of(total), {c.total_norm}, 5e-7) == "");
    CHECK(value_mismatch(p.grads(), c.clipped, 5e-7) == "");
    CHECK(p.a.grad().dtype() == gd::kFloat32);
  }
}

TEST_CASE("clip_grad_norm_ leaves gradients below max_norm unchanged") {
  Params p;
  // PyTorch: clip_grad_norm_([a, b, c], 100.0) -> 5.755432216610669, grads unchanged.
  Tensor total = gd::nn::utils::clip_grad_norm_(p.all(), 100.0);
  CHECK(value_mismatch(values_of(total), {5.755432216610669}, 1e-14) == "");
  CHECK(p.grads() == std::vector<double>{0.5, -1.5, 2.0, 3.0, -0.25, 1.0, -4.0, 0.75});
}

TEST_CASE("clip_grad_norm_ takes a single tensor") {
  Params p;
  // PyTorch: clip_grad_norm_(a, 1.0).
  Tensor total = gd::nn::utils::clip_grad_norm_(p.a, 1.0);
  CHECK(value_mismatch(values_of(total), {4.0697051490249265}, 1e-14) == "");
  CHECK(value_mismatch(values_of(p.a.grad()),
                       {0.12285899317811841, -0.3685769795343552, 0.49143597271247363, 0.7371539590687104,
                        -0.061429496589059204, 0.24571798635623682},
                       1e-14) == "");
  CHECK(values_of(p.b.grad()) == std::vector<double>{-4.0, 0.75});
}

TEST_CASE("clip_grad_norm_ with no gradients returns a float32 zero") {
  Params p;
  Tensor total = gd::nn::utils::clip_grad_norm_(std::vector<Tensor>{p.c}, 1.0);
  CHECK(total.dim() == 0);
  CHECK(total.dtype() == gd::kFloat32);
  CHECK(total.item<double>() == 0.0);
  CHECK(gd::nn::utils::clip_grad_norm_(std::vector<Tensor>{}, 1.0).item<double>() == 0.0);
}

TEST_CASE("clip_grad_norm_ promotes mixed float32/float64 gradients") {
  Tensor a = gd::ones({2}, gd::TensorOptions().dtype(gd::kFloat32)).requires_grad_();
  Tensor b = gd::ones({2}, gd::TensorOptions().dtype(gd::kFloat64)).requires_grad_();
  a.set_grad(tensor_of({3, 4}, {2}, gd::kFloat32));
  b.set_grad(tensor_of({1, 2}, {2}));
  // PyTorch: the total is float64 sqrt(30); a's coefficient is rounded to float32.
  Tensor total = gd::nn::utils::clip_grad_norm_({a, b}, 1.0);
  CHECK(total.dtype() == gd::kFloat64);
  CHECK(value_mismatch(values_of(total), {5.477225575051661}, 1e-15) == "");
  CHECK(value_mismatch(values_of(a.grad()), {0.5477224588394165, 0.7302966117858887}, 0, 0) == "");
  CHECK(value_mismatch(values_of(b.grad()), {0.18257415250172812, 0.36514830500345624}, 1e-15) == "");
}

TEST_CASE("clip_grad_norm_ with a non-finite norm") {
  {
    // PyTorch: b.grad[0] = inf; clip_grad_norm_([a, b], 1.0) -> inf, grads scaled by 0 (inf * 0 = nan).
    Params p;
    p.b.grad().index_put_({0}, kInf);
    Tensor total = gd::nn::utils::clip_grad_norm_({p.a, p.b}, 1.0);
    CHECK(std::isinf(total.item<double>()));
    CHECK(value_mismatch(p.grads(), {0.0, -0.0, 0.0, 0.0, -0.0, 0.0, kNaN, 0.0}, 0, 0) == "");
  }
  // PyTorch's RuntimeError texts, with norm_type written as Python writes a float.
  const std::vector<std::pair<double, std::string>> orders = {{2.0, "2.0"}, {kInf, "inf"}, {0.5, "0.5"}};
  for (const auto& [norm_type, text] : orders) {
    Params p;
    p.b.grad().index_put_({0}, kNaN);
    CHECK(error_of([&] { gd::nn::utils::clip_grad_norm_({p.a, p.b}, 1.0, norm_type, true); }) ==
          nonfinite_message(text));
    // The error comes before any gradient is touched.
    CHECK(values_of(p.a.grad()) == std::vector<double>{0.5, -1.5, 2.0, 3.0, -0.25, 1.0});
  }
}

TEST_CASE("clip_grad_norm_ on gradients of a backward pass records nothing") {
  Tensor w = tensor_of({1, 2, 3}).requires_grad_();
  (w * w).sum().backward();  // grad = 2w = [2, 4, 6], norm sqrt(56)
  Tensor total = gd::nn::utils::clip_grad_norm_(w, 1.0);
  CHECK(!total.requires_grad());
  CHECK(value_mismatch(values_of(total), {std::sqrt(56.0)}, 1e-15) == "");
  CHECK(value_mismatch(values_of(w.grad().norm()), {1.0}, 1e-6) == "");
}

TEST_CASE("clip_grad_value_ clamps each gradient") {
  Params p;
  // PyTorch: clip_grad_value_([a, b, c], 1.2).
  gd::nn::utils::clip_grad_value_(p.all(), 1.2);
  CHECK(p.grads() == std::vector<double>{0.5, -1.2, 1.2, 1.2, -0.25, 1.0, -1.2, 0.75});
  CHECK(!p.c.grad().defined());
  Params q;
  gd::nn::utils::clip_grad_value_(q.b, 0.5);
  CHECK(values_of(q.b.grad()) == std::vector<double>{-0.5, 0.5});
  CHECK(values_of(q.a.grad()) == std::vector<double>{0.5, -1.5, 2.0, 3.0, -0.25, 1.0});
}

TEST_CASE("parameters_to_vector concatenates and is differentiable") {
  Tensor a = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor b = tensor_of({7, 8}, {2}).requires_grad_();
  Tensor vec = gd::nn::utils::parameters_to_vector({a, b});
  CHECK(vec.sizes() == gd::IntArrayRef{8});
  CHECK(values_of(vec) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  (vec * tensor_of({1, 2, 3, 4, 5, 6, 7, 8})).sum().backward();
  CHECK(values_of(a.grad()) == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(values_of(b.grad()) == std::vector<double>{7, 8});
}

TEST_CASE("vector_to_parameters makes the parameters views of the vector") {
  Tensor a = gd::zeros({2, 3}, gd::TensorOptions().dtype(gd::kFloat64)).requires_grad_();
  Tensor b = gd::zeros({2}, gd::TensorOptions().dtype(gd::kFloat64)).requires_grad_();
  Tensor vec = tensor_of({1, 2, 3, 4, 5, 6, 7, 8, 9});  // one element more than needed: ignored, as in PyTorch
  gd::nn::utils::vector_to_parameters(vec, {a, b});
  CHECK(a.sizes() == gd::IntArrayRef{2, 3});
  CHECK(values_of(a) == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(values_of(b) == std::vector<double>{7, 8});
  CHECK(a.requires_grad());
  CHECK(a.is_leaf());
  // PyTorch's param.data = vec[...]: the parameters alias vec.
  vec.index_put_({6}, 70.0);
  CHECK(values_of(b) == std::vector<double>{70, 8});
  // The round trip.
  CHECK(values_of(gd::nn::utils::parameters_to_vector({a, b})) == std::vector<double>{1, 2, 3, 4, 5, 6, 70, 8});
}

TEST_CASE("vector_to_parameters errors") {
  Tensor a = gd::zeros({2, 3}, gd::TensorOptions().dtype(gd::kFloat64));
  // PyTorch: vector_to_parameters(torch.arange(4.), [torch.zeros(2, 3)]).
  CHECK(error_of([&] { gd::nn::utils::vector_to_parameters(tensor_of({0, 1, 2, 3}), {a}); }) ==
        "shape '[2, 3]' is invalid for input of size 4");
  // PyTorch: parameters_to_vector([]).
  CHECK(error_of([&] { gd::nn::utils::parameters_to_vector({}); }) ==
        "torch.cat(): expected a non-empty list of Tensors");
}

TEST_CASE("get_total_norm: the norm of the tensors concatenated, without changing them") {
  // [3, 4] and [12]: 2-norm sqrt(9 + 16 + 144) = 13, inf-norm 12, 1-norm 19.
  gd::Tensor a = gd::tensor({3.0, 4.0}), b = gd::tensor({12.0});
  CHECK(gd::nn::utils::get_total_norm({a, b}).item<double>() == doctest::Approx(13.0).epsilon(1e-15));
  CHECK(gd::nn::utils::get_total_norm({a, b}, std::numeric_limits<double>::infinity()).item<double>() == 12.0);
  CHECK(gd::nn::utils::get_total_norm({a, b}, 1.0).item<double>() == doctest::Approx(19.0).epsilon(1e-15));
  CHECK(a[0].item<double>() == 3.0);
  CHECK(gd::nn::utils::get_total_norm({}).item<float>() == 0.0f);
  gd::Tensor bad = gd::tensor({1.0, std::numeric_limits<double>::infinity()});
  CHECK(std::isinf(gd::nn::utils::get_total_norm({bad}).item<double>()));
  CHECK_THROWS_AS(gd::nn::utils::get_total_norm({bad}, 2.0, true), gd::Error);
}
