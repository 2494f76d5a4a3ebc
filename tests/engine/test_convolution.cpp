// Tests of conv2d and the 2-D pooling ops (engine/ops/convolution.cpp): values and
// gradients against PyTorch 1.13 in float32 (oneDNN) and float64 (im2col + GEMM),
// PyTorch's errors; the sweep's rows for gradcheck and gradgradcheck are in op_rows/convolution.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "engine/convolution.h"
#include "engine/dims.h"
#include "gradiens.h"
#include "kernels/cpu/conv.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

using Shape = std::vector<int64_t>;
using V = std::vector<Tensor>;

// f(i / scale + shift) for i = 0, 1, ... laid out in `shape`; the PyTorch literals come
// from f(torch.arange(n, dtype=torch.float64).reshape(shape) / scale + shift).
Tensor arange_of(const Shape& shape, double (*f)(double), double scale, double shift,
                 gd::ScalarType dtype = gd::kFloat64) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<double>(i) / scale + shift);
  return tensor_of(v, shape, dtype);
}
double sine(double x) { return std::sin(x); }
double cosine(double x) { return std::cos(x); }

// x = sin(arange(50) / 10 - 2) as [1, 2, 5, 5]; w = cos(arange(54) / 7 - 1) as [3, 2, 3, 3].
Tensor conv_input(gd::ScalarType dtype) { return arange_of({1, 2, 5, 5}, sine, 10, -2, dtype); }
Tensor conv_weight(gd::ScalarType dtype) { return arange_of({3, 2, 3, 3}, cosine, 7, -1, dtype); }
Tensor conv_bias(gd::ScalarType dtype) { return tensor_of({0.5, -1.0, 0.25}, {3}, dtype); }

// Literals are rounded to 8 decimals; float32 carries its own rounding on top.
double tolerance(gd::ScalarType dtype) { return dtype == gd::kFloat32 ? 2e-5 : 1e-7; }

// The pooling input: (arange(25) * 7 % 11) - 0.5 * arange(25) % 3 as [1, 5, 5]
// (Python precedence: the % 3 applies to 0.5 * arange); values repeat, so ties occur.
Tensor pool_input(gd::ScalarType dtype) {
  std::vector<double> v(25);
  for (int i = 0; i < 25; ++i) v[static_cast<size_t>(i)] = (i * 7 % 11) - std::fmod(0.5 * i, 3.0);
  return tensor_of(v, {1, 5, 5}, dtype);
}

}  // namespace

TEST_CASE("conv2d values match PyTorch in float32 and float64") {
  // Each literal from python3: F.conv2d(x, w, b, ...).flatten() with x, w, b as above.
  struct Case {
    const char* what;
    bool with_bias;
    Shape stride, padding, dilation;
    Shape out_shape;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"plain", true, {1, 1}, {0, 0}, {1, 1}, {1, 3, 3, 3},
       {-2.25883946, -1.76101645, -1.24060211, 0.40337565, 0.96068917, 1.51339964, 3.08924776, 3.56960201,
        4.01928582, -3.49911293, -4.02859724, -4.52782082, -5.79585361, -6.12790301, -6.4087161, -6.91840208,
        -6.97171928, -6.96536905, 7.21640806, 7.610038, 7.93012887, 8.42104263, 8.42277572, 8.34284914,
        7.62512099, 7.23453291, 6.77415769}},
      {"stride 2, padding 1, no bias", false, {2}, {1}, {1}, {1, 3, 3, 3},
       {-2.72601802, -3.49024341, -1.82525279, -0.6932398, 0.46068917, 1.23660878, 1.71114278, 3.03533325,
        2.16964371, 0.65844623, 0.06481723, -0.60575171, -2.69208439, -5.12790301, -3.97218601, -2.69291004,
        -3.84341553, -2.26481949, 1.6174416, 3.38111551, 2.84511141, 5.22569996, 8.17277572, 5.45106226,
        2.82270746, 3.43553661, 1.64346264}},
      {"dilation 2", true, {1, 1}, {0, 0}, {2, 2}, {1, 3, 1, 1}, {1.3194845, -5.65246534, 7.2635217}},
      {"stride (2, 1), padding (1, 0)", true, {2, 1}, {1, 0}, {1, 1}, {1, 3, 3, 3},
       {-3.17456538, -2.99024341, -2.77104808, 0.40337565, 0.96068917, 1.51339964, 3.40235825, 3.53533325,
        3.6379802, -0.60059066, -0.93518277, -1.27042252, -5.79585361, -6.12790301, -6.4087161, -5.05584114,
        -4.84341553, -4.59258779, 3.25210989, 3.63111551, 3.97633814, 8.42104263, 8.42277572, 8.34284914,
        4.17615664, 3.68553661, 3.16058984}},
  };
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    for (const Case& c : cases) {
      CAPTURE(c.what);
      CAPTURE(gd::dtype_name(dtype));
      Tensor out = gd::conv2d(conv_input(dtype), conv_weight(dtype), c.with_bias ? conv_bias(dtype) : Tensor(),
                              c.stride, c.padding, c.dilation);
      CHECK(out.dtype() == dtype);
      CHECK(value_mismatch(out, tensor_of(c.want, c.out_shape), tolerance(dtype), tolerance(dtype)) == "");
    }
  }
}

TEST_CASE("conv2d with groups, and unbatched input") {
  // python3: x4 = sin(arange(64) / 9) [1, 4, 4, 4], w4 = cos(arange(36) / 5) [2, 2, 3, 3],
  // F.conv2d(x4, w4, groups=2).
  const std::vector<double> want = {-2.2470625,  -1.13835149, 2.21662736, 3.2985756,
                                    -1.66414868, -0.62122977, 2.5017348,  3.49797964};
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    CAPTURE(gd::dtype_name(dtype));
    Tensor x = arange_of({1, 4, 4, 4}, sine, 9, 0, dtype), w = arange_of({2, 2, 3, 3}, cosine, 5, 0, dtype);
    CHECK(value_mismatch(gd::conv2d(x, w, {}, 1, 0, 1, 2), tensor_of(want, {1, 2, 2, 2}), tolerance(dtype),
                         tolerance(dtype)) == "");
    CHECK(value_mismatch(gd::conv2d(x.squeeze(0), w, {}, 1, 0, 1, 2), tensor_of(want, {2, 2, 2}),
                         tolerance(dtype), tolerance(dtype)) == "");
  }
}

TEST_CASE("conv2d gradients match PyTorch") {
  // python3: y = F.conv2d(x, w, b, stride=2, padding=1); y.backward(cos(arange(27) / 5)
  // reshaped [1, 3, 3, 3]); the literals are x.grad, w.grad, b.grad.
  const std::vector<double> want_x = {
      1.03085891, 2.08771484, 1.11521716, 2.21051361, 1.15511521, 1.66565022, 3.28249494, 1.70610192, 3.29866031,
      1.67853671, 1.14896247, 2.19035025, 1.09700423, 2.04819197, 1.00131188, 1.58405355, 2.94106784, 1.42641916,
      2.58156607, 1.21191795, 0.86570039, 1.52783329, 0.69557616, 1.17037795, 0.4977215,  0.01146959, 0.29096433,
      0.28121581, 0.8077358,  0.53975084, 0.67488897, 1.70371666, 1.05637964, 2.40890643, 1.39575579, 0.77676771,
      1.72535484, 0.98281731, 2.08961984, 1.14968508, 1.67948757, 3.50689441, 1.89626347, 3.85591931, 2.03744133,
      1.27071853, 2.55702926, 1.34109245, 2.64153955, 1.35800124};
  const std::vector<double> want_w = {
      -1.25053958, -2.19714418, -1.63756066, -2.72630293, -4.26136517, -2.92713187, -2.20292306, -3.4182206,
      -2.35872517, 1.26646585,  2.32348021,  1.84639862,  2.51453449,  4.140265,    3.01490197,  2.76524841,
      4.34130538,  3.06753379,  2.30343629,  3.26708692,  2.10917004,  1.87024437,  2.3924971,   1.36347216,
      1.47947671,  1.85290976,  1.06915351,  -3.25423547, -4.70801393, -3.08183729, -3.26973168, -4.56536229,
      -2.84313121, -2.3802227,  -3.15872554, -1.87897744, 0.20384848,  0.7125662,   0.67914496,  1.87645605,
      3.17420447,  2.30756441,  1.53064265,  2.57625065,  1.87289733,  0.21227238,  -0.18413896, -0.44599884,
      -1.02875472, -2.06574525, -1.72297124, -1.68366524, -2.90596727, -2.21371857};
  const std::vector<double> want_b = {5.46659758, -6.72344032, -2.41143813};
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    CAPTURE(gd::dtype_name(dtype));
    Tensor x = conv_input(dtype).requires_grad_(), w = conv_weight(dtype).requires_grad_();
    Tensor b = conv_bias(dtype).requires_grad_();
    Tensor y = gd::conv2d(x, w, b, 2, 1);
    y.backward(arange_of({1, 3, 3, 3}, cosine, 5, 0, dtype));
    const double tol = tolerance(dtype);
    CHECK(value_mismatch(values_of(x.grad()), want_x, tol, tol) == "");
    CHECK(value_mismatch(values_of(w.grad()), want_w, tol, tol) == "");
    CHECK(value_mismatch(values_of(b.grad()), want_b, tol, tol) == "");
  }
}

TEST_CASE("conv2d float32 (oneDNN) agrees with float64 (im2col) on odd geometries, forward and backward") {
  // The float64 path is checked by gradcheck in the sweep; here it is the reference.
  struct Case {
    Shape input, weight, stride, padding, dilation;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {{2, 4, 9, 7}, {6, 2, 3, 2}, {2, 3}, {1, 2}, {2, 1}, 2},
      {{3, 3, 8, 8}, {3, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 3},
      {{2, 1, 12, 12}, {5, 1, 5, 5}, {3, 3}, {0, 0}, {1, 1}, 1},
      {{1, 2, 6, 6}, {4, 2, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1},
      // Enough channels that every pass reorders into oneDNN's blocked layouts (Note
      // [Convolution layouts]), with channel counts that are not multiples of a block.
      {{2, 16, 9, 9}, {20, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{3, 12, 11, 10}, {5, 12, 3, 2}, {2, 1}, {1, 0}, {1, 2}, 1},
  };
  // Without an input gradient the weight and bias gradients take their own path.
  for (bool input_grad : {true, false}) {
    for (const Case& c : cases) {
      CAPTURE(input_grad);
      Tensor x64 = gd::testing::sample(c.input, -1, 1, 1).requires_grad_(input_grad);
      Tensor w64 = gd::testing::sample(c.weight, -1, 1, 2).requires_grad_();
      Tensor b64 = gd::testing::sample({c.weight[0]}, -1, 1, 3).requires_grad_();
      Tensor x32 = x64.detach().to(gd::kFloat32).requires_grad_(input_grad);
      Tensor w32 = w64.detach().to(gd::kFloat32).requires_grad_();
      Tensor b32 = b64.detach().to(gd::kFloat32).requires_grad_();
      Tensor y64 = gd::conv2d(x64, w64, b64, c.stride, c.padding, c.dilation, c.groups);
      Tensor y32 = gd::conv2d(x32, w32, b32, c.stride, c.padding, c.dilation, c.groups);
      CHECK(value_mismatch(y32, y64, 1e-5, 1e-5) == "");
      Tensor gy = gd::testing::sample(y64.sizes(), -1, 1, 4);
      y64.backward(gy);
      y32.backward(gy.to(gd::kFloat32));
      if (input_grad) CHECK(value_mismatch(x32.grad(), x64.grad(), 1e-5, 1e-5) == "");
      CHECK(value_mismatch(w32.grad(), w64.grad(), 1e-5, 1e-4) == "");
      CHECK(value_mismatch(b32.grad(), b64.grad(), 1e-5, 1e-5) == "");
    }
  }
  CHECK(gd::kernels::cpu::testing::conv_onednn_cache_size() > 0);
}

TEST_CASE("conv2d on a grey first layer runs the direct kernels and matches the definition") {
  // Note [Narrow convolutions]: NCHW, stride 1, at most 12 taps, rows of >= 16
  // outputs. The reference is the definition, summed in double.
  struct Case {
    Shape input, weight;
    int64_t pad_h, pad_w;
  };
  const std::vector<Case> cases = {
      {{2, 1, 16, 17}, {5, 1, 3, 3}, 1, 1},   // a partial last vector in float32 and float64
      {{3, 1, 20, 32}, {9, 1, 3, 3}, 0, 0},   // rows a whole number of vectors; 8 + 1 channels
      {{2, 1, 18, 18}, {12, 1, 3, 3}, 2, 2},  // padding wider than the kernel's reach
      {{2, 2, 9, 21}, {4, 2, 2, 3}, 1, 0},    // two channels, 12 taps, asymmetric kernel
  };
  for (gd::ScalarType dtype : {gd::kFloat64, gd::kFloat32}) {
    const double tol = dtype == gd::kFloat32 ? 2e-5 : 1e-12;
    for (const Case& c : cases) {
      CAPTURE(gd::dtype_name(dtype));
      CAPTURE(gd::shape_to_string(c.input));
      const Tensor x = gd::testing::sample(c.input, -1, 1, 11, dtype);
      Tensor w = gd::testing::sample(c.weight, -1, 1, 12, dtype).requires_grad_();
      Tensor b = gd::testing::sample({c.weight[0]}, -1, 1, 13, dtype).requires_grad_();
      Tensor y = gd::conv2d(x, w, b, {1, 1}, {c.pad_h, c.pad_w});
      CHECK(gd::kernels::cpu::testing::last_conv_run(gd::kernels::cpu::testing::ConvKernel::Forward).backend ==
            "direct");
      const Tensor gy = gd::testing::sample(y.sizes(), -1, 1, 14, dtype);
      y.backward(gy);
      CHECK(gd::kernels::cpu::testing::last_conv_run(gd::kernels::cpu::testing::ConvKernel::BackwardWeight).backend ==
            "direct");
      const int64_t batch = c.input[0], channels = c.input[1], height = c.input[2], width = c.input[3];
      const int64_t outs = c.weight[0], kh_n = c.weight[2], kw_n = c.weight[3];
      const int64_t oh_n = y.size(2), ow_n = y.size(3);
      const std::vector<double> xv = values_of(x), wv = values_of(w), bv = values_of(b), gv = values_of(gy);
      std::vector<double> want_y(static_cast<size_t>(y.numel())), want_w(wv.size(), 0.0), want_b(bv.size(), 0.0);
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t o = 0; o < outs; ++o)
          for (int64_t oh = 0; oh < oh_n; ++oh)
            for (int64_t ow = 0; ow < ow_n; ++ow) {
              const size_t at = static_cast<size_t>(((n * outs + o) * oh_n + oh) * ow_n + ow);
              double sum = bv[static_cast<size_t>(o)];
              for (int64_t ci = 0; ci < channels; ++ci)
                for (int64_t kh = 0; kh < kh_n; ++kh)
                  for (int64_t kw = 0; kw < kw_n; ++kw) {
                    const int64_t h = oh + kh - c.pad_h, col = ow + kw - c.pad_w;
                    if (h < 0 || h >= height || col < 0 || col >= width) continue;
                    const double xi = xv[static_cast<size_t>(((n * channels + ci) * height + h) * width + col)];
                    const size_t wi = static_cast<size_t>(((o * channels + ci) * kh_n + kh) * kw_n + kw);
                    sum += xi * wv[wi];
                    want_w[wi] += gv[at] * xi;
                  }
              want_y[at] = sum;
              want_b[static_cast<size_t>(o)] += gv[at];
            }
      CHECK(value_mismatch(y, tensor_of(want_y, y.sizes().vec(), dtype), tol, tol) == "");
      CHECK(value_mismatch(w.grad(), tensor_of(want_w, c.weight, dtype), tol, tol) == "");
      CHECK(value_mismatch(b.grad(), tensor_of(want_b, {outs}, dtype), tol, tol) == "");
    }
  }
  // The direct path's gradients are the adjoint of its forward.
  const Tensor x = gd::testing::sample({1, 1, 4, 18}, -1, 1, 15);
  const V inputs = {gd::testing::sample({3, 1, 3, 3}, -1, 1, 16).requires_grad_(),
                    gd::testing::sample({3}, -1, 1, 17).requires_grad_()};
  const std::function<V(const V&)> fn = [&](const V& v) { return V{gd::conv2d(x, v[0], v[1], {1, 1}, {1, 1})}; };
  CHECK(gd::autograd::gradcheck(fn, inputs));
}

TEST_CASE("conv2d on an empty batch: empty output, zero weight and bias gradients") {
  // PyTorch: conv2d of a [0, 3, 5, 5] input gives [0, 2, 3, 3], and its backward
  // zero gradients for weight and bias (nothing was summed). oneDNN does not take an
  // empty batch, so this is the path where the bias gradient is summed by the op.
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    CAPTURE(gd::dtype_name(dtype));
    Tensor x = gd::zeros({0, 3, 5, 5}, dtype).requires_grad_();
    Tensor w = gd::ones({2, 3, 3, 3}, dtype).requires_grad_(), b = gd::ones({2}, dtype).requires_grad_();
    Tensor y = gd::conv2d(x, w, b);
    CHECK(y.sizes() == Shape{0, 2, 3, 3});
    y.sum().backward();
    CHECK(value_mismatch(w.grad(), gd::zeros({2, 3, 3, 3}, dtype), 0, 0) == "");
    CHECK(value_mismatch(b.grad(), gd::zeros({2}, dtype), 0, 0) == "");
    CHECK(x.grad().sizes() == Shape{0, 3, 5, 5});
  }
}

TEST_CASE("max_pool2d values and indices match PyTorch") {
  // python3: F.max_pool2d(p, ..., return_indices=True) with p the pool input above.
  struct Case {
    const char* what;
    Shape kernel, stride, padding, dilation;
    bool ceil_mode;
    std::vector<double> want;
    std::vector<double> want_indices;
  };
  const std::vector<Case> cases = {
      {"kernel 2", {2}, {}, {0}, {1}, false, {9.0, 8.5, 4.5, 7.0}, {6, 3, 15, 12}},
      {"kernel 3, stride 2, padding 1, ceil", {3}, {2}, {1}, {1}, true,
       {9.0, 9.0, 8.5, 9.0, 9.0, 9.0, 7.0, 6.5, 5.0}, {6, 6, 3, 6, 6, 14, 20, 17, 18}},
      {"kernel 2, stride 1, dilation 2", {2}, {1}, {0}, {2}, false,
       {7.0, 8.5, 9.0, 6.5, 9.0, 6.5, 7.0, 4.5, 9.0}, {12, 3, 14, 17, 6, 9, 12, 23, 14}},
  };
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    for (const Case& c : cases) {
      CAPTURE(c.what);
      auto [out, indices] = gd::max_pool2d_with_indices(pool_input(dtype), c.kernel, c.stride, c.padding,
                                                        c.dilation, c.ceil_mode);
      CHECK(indices.dtype() == gd::kInt64);
      CHECK(value_mismatch(values_of(out), c.want) == "");
      CHECK(value_mismatch(values_of(indices), c.want_indices) == "");
    }
  }
}

TEST_CASE("max_pool2d 2x2: ties, NaN and odd sizes against the definition, and its backward") {
  // Values from a small set make ties common; NaNs sit in some windows. The
  // definition: the first maximum in row-major window order, unless the window
  // holds a NaN, where the last NaN wins (PyTorch's rule).
  // Rows of 4 and of 35 outputs: a partial vector, and whole vectors and a tail.
  for (auto [dtype, h, w] : {std::tuple{gd::kFloat32, 9, 8}, std::tuple{gd::kFloat64, 9, 8},
                             std::tuple{gd::kFloat32, 5, 71}, std::tuple{gd::kFloat64, 5, 71}}) {
    CAPTURE(gd::dtype_name(dtype));
    CAPTURE(w);
    const int64_t planes = 6, oh = h / 2, ow = w / 2;
    std::vector<double> data(static_cast<size_t>(planes * h * w));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>((i * 7919) % 5) - 2.0;
    for (size_t i : {3u, 17u, 18u, 100u, 101u, 400u, 1500u, 1571u}) data[i % data.size()] = NAN;
    const Tensor x = tensor_of(data, {2, 3, h, w}).to(dtype).requires_grad_();
    auto [out, indices] = gd::max_pool2d_with_indices(x, 2);
    const std::vector<double> got = values_of(out), got_indices = values_of(indices);
    std::vector<double> want, want_indices;
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double best = 0;
          int64_t at = -1;
          for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 2; ++b) {
              const int64_t k = (2 * i + a) * w + 2 * j + b;
              const double v = data[static_cast<size_t>(p * h * w + k)];
              if (at < 0 || std::isnan(v) || (!std::isnan(best) && v > best)) best = v, at = k;
            }
          want.push_back(best);
          want_indices.push_back(static_cast<double>(at));
        }
    CHECK(got_indices == want_indices);
    bool same = got.size() == want.size();
    for (size_t i = 0; same && i < got.size(); ++i)
      same = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i];
    CHECK(same);
    // The backward puts each output's gradient at its argmax and zeros elsewhere.
    const Tensor seed = gd::testing::sample(out.sizes(), -1, 1, 7, dtype);
    out.backward(seed);
    std::vector<double> want_grad(data.size(), 0.0);
    const std::vector<double> seeds = values_of(seed);
    for (int64_t q = 0; q < planes * oh * ow; ++q)
      want_grad[static_cast<size_t>(q / (oh * ow) * h * w + static_cast<int64_t>(want_indices[q]))] += seeds[q];
    CHECK(value_mismatch(values_of(x.grad()), want_grad) == "");
    // max_pool2d returns no indices and keeps int32 ones for float32 on the CPU
    // (Note [int32 pooling indices]): the same values and gradient, and a double
    // backward (d/dseed of sum(grad_x * v)) that gathers v at the same argmax.
    const Tensor x2 = x.detach().requires_grad_();
    const Tensor out2 = gd::max_pool2d(x2, 2);
    const std::vector<double> got2 = values_of(out2);
    bool same2 = got2.size() == want.size();
    for (size_t i = 0; same2 && i < got2.size(); ++i)
      same2 = (std::isnan(got2[i]) && std::isnan(want[i])) || got2[i] == want[i];
    CHECK(same2);
    CHECK(out2.grad_fn()->name() == "MaxPool2DWithIndicesBackward0");
    const Tensor seed2 = seed.detach().requires_grad_();
    const Tensor gx = gd::autograd::grad({out2}, {x2}, {seed2}, true, true)[0];
    CHECK(value_mismatch(values_of(gx), want_grad) == "");
    const Tensor v = gd::testing::sample(x.sizes(), -1, 1, 8, dtype);
    const Tensor gg = gd::autograd::grad({(gx * v).sum()}, {seed2})[0];
    const std::vector<double> vs = values_of(v);
    std::vector<double> want_gg;
    for (int64_t q = 0; q < planes * oh * ow; ++q)
      want_gg.push_back(vs[static_cast<size_t>(q / (oh * ow) * h * w + static_cast<int64_t>(want_indices[q]))]);
    CHECK(value_mismatch(values_of(gg), want_gg) == "");
  }
}

TEST_CASE("max_pool2d routes the gradient to the argmax and propagates NaN") {
  Tensor x = pool_input(gd::kFloat64).unsqueeze(0).requires_grad_();
  Tensor y = gd::max_pool2d(x, 2);
  y.sum().backward();
  // Indices 6, 3, 15, 12 (from the case above) each get 1.
  std::vector<double> want(25, 0.0);
  for (int i : {6, 3, 15, 12}) want[static_cast<size_t>(i)] = 1;
  CHECK(value_mismatch(values_of(x.grad()), want) == "");
  Tensor with_nan = tensor_of({1, NAN, 3, 2}, {1, 2, 2});
  auto [out, indices] = gd::max_pool2d_with_indices(with_nan, 2);
  CHECK(std::isnan(values_of(out)[0]));
  CHECK(values_of(indices)[0] == 1);
  // python3: F.max_pool2d(tensor([[[1., nan], [nan, 2.]]]), 2, return_indices=True) -> nan at index 2:
  // the last NaN wins.
  auto [out2, indices2] = gd::max_pool2d_with_indices(tensor_of({1, NAN, NAN, 2}, {1, 2, 2}), 2);
  CHECK(std::isnan(values_of(out2)[0]));
  CHECK(values_of(indices2)[0] == 2);
}

TEST_CASE("avg_pool2d and adaptive_avg_pool2d match PyTorch") {
  // python3: F.avg_pool2d(p, ...), F.adaptive_avg_pool2d(p, (2, 3)).
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    CAPTURE(gd::dtype_name(dtype));
    const Tensor p = pool_input(dtype);
    const double tol = tolerance(dtype);
    CHECK(value_mismatch(gd::avg_pool2d(p, 3, 2, 1),
                         tensor_of({1.66666667, 3.38888889, 2.11111111, 1.38888889, 3.55555556, 2.61111111,
                                    1.55555556, 1.83333333, 1.44444444},
                                   {1, 3, 3}),
                         tol, tol) == "");
    CHECK(value_mismatch(gd::avg_pool2d(p, 3, 2, 1, false, false),
                         tensor_of({3.75, 5.08333333, 4.75, 2.08333333, 3.55555556, 3.91666667, 3.5, 2.75, 3.25},
                                   {1, 3, 3}),
                         tol, tol) == "");
    CHECK(value_mismatch(gd::avg_pool2d(p, 2, 2, 1, true),
                         tensor_of({0.0, 2.125, 3.125, 0.375, 4.5, 4.5, 2.875, 1.75, 3.25}, {1, 3, 3}), tol, tol) ==
          "");
    CHECK(value_mismatch(gd::adaptive_avg_pool2d(p, {2, 3}),
                         tensor_of({2.41666667, 4.16666667, 5.08333333, 2.25, 2.61111111, 4.08333333}, {1, 2, 3}),
                         tol, tol) == "");
  }
}

TEST_CASE("conv2d and pooling errors use PyTorch's messages") {
  const Tensor x = gd::ones({1, 2, 5, 5});
  CHECK(error_of([&] { gd::conv2d(x, gd::ones({4, 3, 3, 3})); }) ==
        "Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, 5, 5] to have 3 channels, but got 2 "
        "channels instead");
  CHECK(error_of([&] { gd::conv2d(gd::ones({1, 3, 2, 2}), gd::ones({4, 3, 3, 3})); }) ==
        "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater "
        "than actual input size");
  CHECK(error_of([&] { gd::conv2d(gd::ones({1, 4, 5, 5}), gd::ones({6, 2, 3, 3}), gd::ones({5}), 1, 0, 1, 2); }) ==
        "Given weight of size [6, 2, 3, 3], expected bias to be 1-dimensional with 6 elements, but got bias of "
        "size [5] instead");
  CHECK(error_of([&] { gd::conv2d(gd::ones({1, 4, 5, 5}), gd::ones({6, 2, 3, 3}), {}, 1, 0, 1, 4); }) ==
        "Given groups=4, expected weight to be divisible by 4 at dimension 0, but got weight of size "
        "[[6, 2, 3, 3]] instead");
  CHECK(error_of([&] { gd::conv2d(gd::ones({5, 5}), gd::ones({4, 3, 3, 3})); }) ==
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5, 5]");
  CHECK(error_of([&] { gd::conv2d(x, gd::ones({4, 2, 3, 3}), {}, 0); }) == "non-positive stride is not supported");
  CHECK(error_of([&] { gd::conv2d(x, gd::ones({4, 2, 3, 3}), {}, 1, -1); }) ==
        "negative padding is not supported");
  CHECK(error_of([&] { gd::conv2d(x, gd::ones({4, 2, 3, 3}, gd::kFloat64)); }) ==
        "expected scalar type Float but found Double");
  CHECK(error_of([&] { gd::max_pool2d(gd::ones({1, 2, 2}), 3); }) ==
        "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small");
  CHECK(error_of([&] { gd::avg_pool2d(gd::ones({1, 2, 2}), 3); }) ==
        "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small");
  CHECK(error_of([&] { gd::max_pool2d(gd::ones({1, 5, 5}), 2, {}, 2); }) ==
        "pad should be at most half of kernel size, but got pad=2 and kernel_size=2");
  CHECK(error_of([&] { gd::max_pool2d(gd::ones({5, 5}), 2); }) ==
        "non-empty 3D or 4D (batch mode) tensor expected for input");
  CHECK(error_of([&] { gd::adaptive_avg_pool2d(gd::ones({5, 5}), 2); }) ==
        "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]");
}

TEST_CASE("conv2d double backward through the input gradient") {
  // d/dw of |d(sum conv(x, w)^2)/dx|^2 exists only when the input gradient is itself
  // differentiable in w; gradgradcheck compares it with finite differences.
  auto fn = [](const V& v) { return V{gd::conv2d(v[0], v[1], {}, 2, 1).square().sum()}; };
  V inputs = {gd::testing::sample({1, 2, 5, 5}, -1, 1, 5).requires_grad_(),
              gd::testing::sample({2, 2, 3, 3}, -1, 1, 6).requires_grad_()};
  CHECK(gd::autograd::gradgradcheck(fn, inputs));
}

TEST_CASE("the convolution rows are in the gradcheck sweep") {
  int found = 0;
  for (const auto& op : gd::testing::differentiable_ops())
    found += op.name.rfind("conv2d", 0) == 0 || op.name.find("pool2d") != std::string::npos;
  CHECK(found == 8);
}

namespace {

// One reduced-float case: the op, its inputs' shapes (the last may be a bias),
// and whether the float16/bfloat16 result is the float32 result rounded bit
// for bit (the op is one float32 kernel call and one rounding; composites that
// add a bias afterwards round twice).
struct ReducedCase {
  std::string what;
  std::function<Tensor(const V&)> fn;
  std::vector<Shape> shapes;
  bool exact;
  gd::MemoryFormat format = gd::MemoryFormat::Contiguous;
};

// Note [Reduced floats compute in float32]: the op on float16/bfloat16 inputs
// against the same op on their float32 copies, rounded. Values within two
// units in the last place of the dtype (2^-9 relative for float16, 2^-6 for
// bfloat16) where not exact; gradients (all inputs) likewise, since the CPU's
// float32 backward may fuse its passes (other summation orders). The result
// has the float32 result's strides.
void check_reduced_case(const ReducedCase& c, gd::ScalarType dtype) {
  const double rtol = dtype == gd::kFloat16 ? 1.0 / 512 : 1.0 / 64;
  V reduced, single;
  uint64_t seed = 11;
  for (const Shape& shape : c.shapes) {
    Tensor x = gd::testing::sample(shape, -1, 1, seed++, gd::kFloat32).to(dtype);
    if (x.dim() == 4) x = x.contiguous(c.format);
    reduced.push_back(x.requires_grad_());
    Tensor x32 = x.detach().to(gd::kFloat32);
    single.push_back((x32.dim() == 4 ? x32.contiguous(c.format) : x32).requires_grad_());
  }
  const Tensor y = c.fn(reduced), y32 = c.fn(single);
  CHECK(y.dtype() == dtype);
  REQUIRE(y.sizes() == y32.sizes());
  if (c.exact) CHECK(gd::equal(y, y32.to(dtype)));
  // Composites that round their terms lose to cancellation: the absolute
  // floor is rtol of the largest value.
  const auto floor_of = [&](const Tensor& t) {
    return rtol * std::max(1.0, t.numel() == 0 ? 0.0 : t.detach().abs().max().to(gd::kFloat64).item<double>());
  };
  CHECK(value_mismatch(y.to(gd::kFloat64), y32.to(dtype).to(gd::kFloat64), rtol, floor_of(y32)) == "");
  CHECK(y.strides() == y32.strides());
  const Tensor g = gd::testing::sample(y.sizes(), -1, 1, 99, gd::kFloat32).to(dtype);
  const V grads = gd::autograd::grad({y}, reduced, {g});
  const V grads32 = gd::autograd::grad({y32}, single, {g.to(gd::kFloat32)});
  for (size_t i = 0; i < grads.size(); ++i) {
    CAPTURE(i);
    CHECK(grads[i].dtype() == dtype);
    CHECK(value_mismatch(grads[i].to(gd::kFloat64), grads32[i].to(dtype).to(gd::kFloat64), rtol,
                         floor_of(grads32[i])) == "");
  }
}

}  // namespace

TEST_CASE("convolutions and pooling in float16 and bfloat16 compute in float32 and round once") {
  const gd::MemoryFormat channels_last = gd::MemoryFormat::ChannelsLast;
  const std::vector<ReducedCase> cases = {
      {"conv2d", [](const V& x) { return gd::conv2d(x[0], x[1], x[2]); }, {{2, 3, 6, 5}, {4, 3, 3, 2}, {4}}, true},
      {"conv2d (stride, padding, dilation, groups)",
       [](const V& x) { return gd::conv2d(x[0], x[1], x[2], {2, 1}, {1, 2}, {1, 2}, 2); },
       {{2, 4, 7, 6}, {6, 2, 3, 2}, {6}}, true},
      {"conv2d channels_last", [](const V& x) { return gd::conv2d(x[0], x[1], x[2], 1, 1); },
       {{2, 3, 5, 5}, {4, 3, 3, 3}, {4}}, true, channels_last},
      {"conv2d unbatched, no bias", [](const V& x) { return gd::conv2d(x[0], x[1]); }, {{3, 5, 5}, {2, 3, 2, 2}},
       true},
      {"conv1d", [](const V& x) { return gd::conv1d(x[0], x[1], x[2], 2, 1); }, {{2, 3, 9}, {4, 3, 3}, {4}}, true},
      {"conv3d", [](const V& x) { return gd::conv3d(x[0], x[1], x[2], 1, {1, 0, 1}); },
       {{1, 2, 4, 5, 4}, {3, 2, 2, 3, 2}, {3}}, true},
      {"conv_transpose2d", [](const V& x) { return gd::conv_transpose2d(x[0], x[1], x[2], 2, 1, 1); },
       {{2, 3, 4, 4}, {3, 2, 3, 3}, {2}}, false},
      {"conv_transpose2d, no bias", [](const V& x) { return gd::conv_transpose2d(x[0], x[1], {}, 2, 1, 1); },
       {{2, 3, 4, 4}, {3, 2, 3, 3}}, true},
      {"conv_transpose1d", [](const V& x) { return gd::conv_transpose1d(x[0], x[1], x[2], 2); },
       {{2, 3, 5}, {3, 4, 3}, {4}}, false},
      {"conv_transpose3d", [](const V& x) { return gd::conv_transpose3d(x[0], x[1], x[2], 2, 1); },
       {{1, 2, 3, 3, 3}, {2, 3, 3, 2, 2}, {3}}, true},
      {"max_pool2d", [](const V& x) { return gd::max_pool2d(x[0], 3, 2, 1); }, {{2, 3, 7, 6}}, true},
      {"max_pool2d channels_last", [](const V& x) { return gd::max_pool2d(x[0], 2); }, {{2, 3, 6, 6}}, true,
       channels_last},
      {"avg_pool2d", [](const V& x) { return gd::avg_pool2d(x[0], 3, 2, 1); }, {{2, 3, 7, 6}}, true},
      {"avg_pool2d (ceil, exclude pad)", [](const V& x) { return gd::avg_pool2d(x[0], 2, 2, 1, true, false); },
       {{3, 5, 4}}, true},
      {"adaptive_avg_pool2d", [](const V& x) { return gd::adaptive_avg_pool2d(x[0], {2, 3}); }, {{2, 3, 5, 7}},
       false},
      {"max_pool1d", [](const V& x) { return gd::max_pool1d(x[0], 3, 2); }, {{2, 3, 9}}, true},
      {"avg_pool3d", [](const V& x) { return gd::avg_pool3d(x[0], 2); }, {{1, 2, 4, 4, 4}}, false},
  };
  for (gd::ScalarType dtype : {gd::kFloat16, gd::kBFloat16})
    for (const ReducedCase& c : cases) {
      const std::string dtype_text(gd::dtype_name(dtype));
      CAPTURE(dtype_text);
      CAPTURE(c.what);
      check_reduced_case(c, dtype);
    }
}

TEST_CASE("convolutions in float16 and bfloat16: empty batches and layouts") {
  for (gd::ScalarType dtype : {gd::kFloat16, gd::kBFloat16}) {
    const Tensor x = gd::zeros({0, 3, 5, 5}, dtype), w = gd::ones({2, 3, 3, 3}, dtype);
    const Tensor y = gd::conv2d(x, w, gd::ones({2}, dtype));
    CHECK(y.sizes() == gd::IntArrayRef(Shape{0, 2, 3, 3}));
    CHECK(y.dtype() == dtype);
    // A channels_last input gives a channels_last output, as in float32.
    const Tensor xl = gd::ones({1, 3, 5, 5}, dtype).contiguous(gd::MemoryFormat::ChannelsLast);
    CHECK(gd::conv2d(xl, w).is_contiguous(gd::MemoryFormat::ChannelsLast));
    CHECK(gd::max_pool2d(xl, 2).is_contiguous(gd::MemoryFormat::ChannelsLast));
  }
  // Integer inputs are still refused, with the float32 kernels' message.
  CHECK(error_of([] { gd::conv2d(gd::ones({1, 1, 3, 3}, gd::kInt64), gd::ones({1, 1, 2, 2}, gd::kInt64)); }) != "");
}
