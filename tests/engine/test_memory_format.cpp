// Memory formats: channels_last strides, is_contiguous(format), suggest_memory_format,
// contiguous/clone/*_like layouts and errors against PyTorch 1.13, and conv2d, the
// pools and batch_norm on channels_last inputs against their NCHW results (values,
// gradients, layouts, the kernel that ran) plus gradcheck of the NHWC paths (their
// rows in the op sweep are in op_rows/memory_format.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/convolution.h"
#include "engine/dims.h"
#include "engine/memory_format.h"
#include "engine/nn_ops.h"
#include "gradiens.h"
#include "kernels/cpu/conv.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::IntArrayRef;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::value_mismatch;
using gd::testing::values_of;
namespace conv_testing = gd::kernels::cpu::testing;
using gd::kernels::cpu::Layout;

namespace {

using Shape = std::vector<int64_t>;
using V = std::vector<Tensor>;
using Fn = std::function<Tensor(const V&)>;

// A tensor with the given geometry over fresh storage (values irrelevant).
Tensor strided(const Shape& sizes, const Shape& strides) {
  return gd::empty({400}).as_strided(sizes, strides);
}

// Channels-last and not (also) row-major: what an NHWC result must look like when
// its shape is not ambiguous (C > 1 and H * W > 1).
bool nhwc_only(const Tensor& t) { return t.is_contiguous(gd::channels_last) && !t.is_contiguous(); }

// f's output and the gradients of <f(leaves), seed> for leaves copied from `inputs`
// in their own layouts (clone keeps them).
struct Result {
  Tensor out;
  V grads;
};
Result run(const Fn& f, const V& inputs, const Tensor& seed) {
  V leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.defined() ? t.detach().clone().requires_grad_() : Tensor());
  Tensor out = f(leaves);
  out.backward(seed.to(out.dtype()));
  Result r{out.detach(), {}};
  for (const Tensor& leaf : leaves) r.grads.push_back(leaf.defined() ? leaf.grad() : Tensor());
  return r;
}

Tensor cl(const Tensor& t) { return t.contiguous(gd::channels_last); }

// gradcheck of the reverse-mode Jacobian and of the forward-mode one.
gd::autograd::GradcheckOptions with_forward_ad() {
  gd::autograd::GradcheckOptions options;
  options.check_forward_ad = true;
  return options;
}

}  // namespace

// ---- strides, is_contiguous, suggest_memory_format ----

TEST_CASE("channels_last strides match PyTorch") {
  // python3: torch.empty(sizes, memory_format=...).stride()
  struct Case {
    Shape sizes;
    gd::MemoryFormat format;
    Shape want;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4, 5}, gd::channels_last, {60, 1, 15, 3}},
      {{1, 3, 1, 1}, gd::channels_last, {3, 1, 3, 3}},
      {{2, 3, 1, 5}, gd::channels_last, {15, 1, 15, 3}},
      {{4, 2, 3, 1}, gd::channels_last, {6, 1, 2, 2}},
      {{2, 0, 4, 5}, gd::channels_last, {0, 1, 0, 0}},
      {{1, 2, 3, 4, 5}, gd::channels_last_3d, {120, 1, 40, 10, 2}},
      {{2, 3, 4, 5}, gd::contiguous_format, {60, 20, 5, 1}},
      {{2, 0, 4, 5}, gd::contiguous_format, {20, 20, 5, 1}},
  };
  for (const Case& c : cases) {
    CAPTURE(gd::shape_to_string(c.sizes));
    CHECK(gd::contiguous_strides(c.sizes, c.format) == IntArrayRef(c.want));
    const Tensor t = gd::empty(c.sizes, gd::TensorOptions().memory_format(c.format));
    CHECK(t.strides() == IntArrayRef(c.want));
    // PyTorch calls every 0-element tensor contiguous; TensorImpl's row-major flag does not (yet).
    if (t.numel() > 0) CHECK(t.is_contiguous(c.format));
  }
  CHECK(gd::zeros({2, 3, 4, 5}, gd::memory_format(gd::channels_last)).strides() == IntArrayRef{60, 1, 15, 3});
  CHECK(gd::full({2, 3, 4, 5}, 1.5, gd::memory_format(gd::channels_last)).strides() == IntArrayRef{60, 1, 15, 3});
}

TEST_CASE("is_contiguous(format) and suggest_memory_format match PyTorch") {
  // python3: t = torch.randn(300).as_strided(sizes, strides); t.is_contiguous(),
  // t.is_contiguous(memory_format=torch.channels_last); suggest_memory_format (not
  // bound in Python) read from F.conv2d(t, torch.randn(2, C, 1, 1)).stride(), which
  // is channels_last exactly when the input suggests it.
  using gd::MemoryFormat;
  struct Case {
    const char* what;
    Shape sizes, strides;
    bool contiguous, channels_last;
    MemoryFormat suggested;
  };
  const std::vector<Case> cases = {
      {"channels_last", {2, 3, 4, 5}, {60, 1, 15, 3}, false, true, MemoryFormat::ChannelsLast},
      {"contiguous", {2, 3, 4, 5}, {60, 20, 5, 1}, true, false, MemoryFormat::Contiguous},
      {"N111", {2, 1, 1, 1}, {1, 1, 1, 1}, true, true, MemoryFormat::Contiguous},
      {"NC11 channels_last", {2, 3, 1, 1}, {3, 1, 3, 3}, true, true, MemoryFormat::ChannelsLast},
      {"N1HW channels_last", {2, 1, 4, 5}, {20, 1, 5, 1}, true, true, MemoryFormat::ChannelsLast},
      {"N1HW contiguous", {2, 1, 4, 5}, {20, 20, 5, 1}, true, true, MemoryFormat::Contiguous},
      {"H and W transposed", {2, 3, 5, 4}, {60, 20, 1, 5}, false, false, MemoryFormat::Contiguous},
      {"channels_last sliced on H", {2, 3, 4, 5}, {120, 1, 30, 3}, false, false, MemoryFormat::ChannelsLast},
      {"expanded", {2, 3, 4, 5}, {0, 1, 0, 0}, false, false, MemoryFormat::Contiguous},
      {"3-d", {3, 4, 5}, {20, 5, 1}, true, false, MemoryFormat::Contiguous},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.what));
    const Tensor t = strided(c.sizes, c.strides);
    CHECK(t.is_contiguous(gd::contiguous_format) == c.contiguous);
    CHECK(t.is_contiguous(gd::preserve_format) == c.contiguous);  // PyTorch answers Preserve as Contiguous
    CHECK(t.is_contiguous(gd::channels_last) == c.channels_last);
    CHECK_FALSE(t.is_contiguous(gd::channels_last_3d));
    CHECK(t.suggest_memory_format() == c.suggested);
  }
  // python3: torch.empty(1, 2, 3, 4, 5, memory_format=torch.channels_last_3d).is_contiguous(...) -> False, True
  const Tensor t5 = gd::empty({1, 2, 3, 4, 5}, gd::memory_format(gd::channels_last_3d));
  CHECK_FALSE(t5.is_contiguous());
  CHECK_FALSE(t5.is_contiguous(gd::channels_last));
  CHECK(t5.suggest_memory_format() == MemoryFormat::ChannelsLast3d);
}

TEST_CASE("non-overlapping-and-dense and inferred dense strides match PyTorch") {
  // python3: torch.empty_like(t).stride() for t = randn(300).as_strided(sizes, strides)
  struct Case {
    Shape sizes, strides;
    bool dense;
    Shape inferred;
  };
  const std::vector<Case> cases = {
      {{4, 6}, {6, 1}, true, {6, 1}},
      {{6, 4}, {1, 6}, true, {1, 6}},
      {{3, 4}, {1, 12}, false, {1, 3}},                      // a.t()[::2] for a [4, 6]
      {{4, 3}, {6, 2}, false, {3, 1}},                       // a[:, ::2]
      {{6, 4, 5}, {5, 0, 1}, false, {20, 5, 1}},             // expanded
      {{2, 2, 5, 3}, {60, 10, 1, 20}, false, {30, 5, 1, 10}},  // NHWC view, sliced
      {{2, 3, 4, 5}, {120, 1, 30, 3}, false, {60, 1, 15, 3}},  // channels_last sliced on H
      {{3}, {2}, false, {1}},
      {{}, {}, true, {}},
  };
  for (const Case& c : cases) {
    CAPTURE(gd::shape_to_string(c.sizes));
    CHECK(gd::is_non_overlapping_and_dense(c.sizes, c.strides) == c.dense);
    CHECK(gd::infer_dense_strides(c.sizes, c.strides) == IntArrayRef(c.inferred));
    CHECK(gd::empty_like(strided(c.sizes, c.strides)).strides() == IntArrayRef(c.inferred));
  }
}

// ---- contiguous, clone, *_like ----

TEST_CASE("contiguous(format) returns the tensor itself or a copy in that format") {
  const Tensor x = sample({2, 3, 4, 5}, -1, 1, 1);
  CHECK(x.contiguous().is_same(x));
  CHECK(x.contiguous(gd::preserve_format).is_same(x));
  const Tensor y = x.contiguous(gd::channels_last);
  CHECK(y.strides() == IntArrayRef{60, 1, 15, 3});
  CHECK(value_mismatch(y, x, 0, 0) == "");
  CHECK(y.contiguous(gd::channels_last).is_same(y));
  const Tensor z = y.contiguous();
  CHECK(z.strides() == IntArrayRef{60, 20, 5, 1});
  CHECK(value_mismatch(z, x, 0, 0) == "");
  // Differentiable: the gradient passes through in the layout it arrives in.
  Tensor leaf = x.clone().requires_grad_();
  const Tensor w = sample({2, 3, 4, 5}, -1, 1, 2);
  (leaf.contiguous(gd::channels_last) * w).sum().backward();
  CHECK(value_mismatch(leaf.grad(), w, 0, 0) == "");
}

TEST_CASE("clone keeps dense layouts with Preserve, as PyTorch") {
  // python3: a = torch.randn(4, 6); a.t().clone().stride() etc.
  const Tensor a = sample({4, 6}, -1, 1, 3);
  struct Case {
    const char* what;
    Tensor t;
    Shape preserved;
  };
  const std::vector<Case> cases = {
      {"transposed", a.t(), {1, 6}},
      {"transposed, sliced", a.t().slice(0, 0, {}, 2), {1, 3}},
      {"sliced", a.slice(1, 0, {}, 2), {3, 1}},
      {"expanded", sample({6, 1, 5}, -1, 1, 4).expand({6, 4, 5}), {20, 5, 1}},
      {"channels_last", cl(sample({2, 3, 4, 5}, -1, 1, 5)), {60, 1, 15, 3}},
      {"NHWC view, sliced", sample({2, 3, 4, 5}, -1, 1, 6).permute({0, 2, 3, 1}).slice(1, 0, {}, 2), {30, 5, 1, 10}},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.what));
    const Tensor copy = c.t.clone();
    CHECK(copy.strides() == IntArrayRef(c.preserved));
    CHECK(value_mismatch(copy, c.t, 0, 0) == "");
    CHECK(copy.storage() != c.t.storage());
    const Tensor rows = c.t.clone(gd::contiguous_format);
    CHECK(rows.is_contiguous());
    CHECK(value_mismatch(rows, c.t, 0, 0) == "");
  }
  const Tensor x = sample({2, 3, 4, 5}, -1, 1, 7);
  CHECK(x.clone(gd::channels_last).strides() == IntArrayRef{60, 1, 15, 3});
  CHECK(value_mismatch(x.clone(gd::channels_last), x, 0, 0) == "");
  // Copies that keep the layout: to(copy=true) and reshape's copy, which PyTorch makes row-major.
  CHECK(cl(x).to(gd::kFloat64, true).strides() == IntArrayRef{60, 1, 15, 3});
  CHECK(a.t().reshape({24}).strides() == IntArrayRef{1});
}

TEST_CASE("the *_like factories follow Preserve unless told a format") {
  // python3: torch.zeros_like(a.t()).stride() -> (1, 6); torch.rand_like(x_cl).stride()
  // -> (60, 1, 15, 3); memory_format=torch.contiguous_format -> row-major.
  const Tensor t = sample({4, 6}, -1, 1, 8).t();
  const Tensor x = cl(sample({2, 3, 4, 5}, -1, 1, 9));
  using Like = std::function<Tensor(const Tensor&, const gd::TensorOptions&)>;
  const std::vector<std::pair<const char*, Like>> factories = {
      {"empty_like", [](const Tensor& s, const gd::TensorOptions& o) { return gd::empty_like(s, o); }},
      {"zeros_like", [](const Tensor& s, const gd::TensorOptions& o) { return gd::zeros_like(s, o); }},
      {"ones_like", [](const Tensor& s, const gd::TensorOptions& o) { return gd::ones_like(s, o); }},
      {"full_like", [](const Tensor& s, const gd::TensorOptions& o) { return gd::full_like(s, 2.5, o); }},
      {"rand_like", [](const Tensor& s, const gd::TensorOptions& o) { return gd::rand_like(s, o); }},
      {"randn_like", [](const Tensor& s, const gd::TensorOptions& o) { return gd::randn_like(s, o); }},
  };
  for (const auto& [name, like] : factories) {
    INFO(std::string(name));
    CHECK(like(t, {}).strides() == IntArrayRef{1, 6});
    CHECK(like(x, {}).strides() == IntArrayRef{60, 1, 15, 3});
    CHECK(like(x, gd::kFloat32).strides() == IntArrayRef{60, 1, 15, 3});
    CHECK(like(x, gd::memory_format(gd::contiguous_format)).strides() == IntArrayRef{60, 20, 5, 1});
    CHECK(like(gd::ones({2, 3, 4, 5}), gd::memory_format(gd::channels_last)).strides() == IntArrayRef{60, 1, 15, 3});
    CHECK(like(x, gd::requires_grad()).requires_grad());
  }
  CHECK(value_mismatch(gd::full_like(x, 2.5), gd::full({2, 3, 4, 5}, 2.5, gd::kFloat64), 0, 0) == "");
  CHECK(gd::zeros_like(x)._version() == 0);
  // The random values land in logical order, so they do not depend on the layout.
  gd::manual_seed(11);
  const Tensor r_cl = gd::randn_like(x);
  gd::manual_seed(11);
  const Tensor r_rows = gd::randn_like(x, gd::memory_format(gd::contiguous_format));
  CHECK(value_mismatch(r_cl, r_rows, 0, 0) == "");
}

TEST_CASE("views of a channels_last tensor follow the view rules") {
  // python3: x = torch.empty(2, 3, 4, 5, memory_format=torch.channels_last); x.view(2, 3, 20).stride() -> (60, 1, 3);
  // x.view(2, 3, 2, 10).stride() -> (60, 1, 30, 3); x.view(2, 60), x.view(-1), x.view(6, 20) raise.
  const Tensor x = cl(sample({2, 3, 4, 5}, -1, 1, 10));
  CHECK(x.view({2, 3, 20}).strides() == IntArrayRef{60, 1, 3});
  CHECK(x.flatten(2).strides() == IntArrayRef{60, 1, 3});
  CHECK(x.view({2, 3, 2, 10}).strides() == IntArrayRef{60, 1, 30, 3});
  CHECK(x.permute({0, 2, 3, 1}).is_contiguous());
  const std::string view_error =
      "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
      "contiguous subspaces). Use .reshape(...) instead.";
  for (const Shape& shape : {Shape{2, 60}, Shape{-1}, Shape{6, 20}}) {
    CAPTURE(gd::shape_to_string(shape));
    CHECK(error_of([&] { x.view(shape); }) == view_error);
    const Tensor r = x.reshape(shape);
    CHECK(r.is_contiguous());
    CHECK(value_mismatch(r, x.contiguous().view(shape), 0, 0) == "");
  }
}

TEST_CASE("memory format errors use PyTorch's messages") {
  const Tensor m = gd::ones({2, 3});
  const std::string rank4 = "required rank 4 tensor to use channels_last format";
  CHECK(error_of([] { gd::empty({2, 3}, gd::memory_format(gd::channels_last)); }) == rank4);
  CHECK(error_of([&] { m.contiguous(gd::channels_last); }) == rank4);
  CHECK(error_of([&] { m.clone(gd::channels_last); }) == rank4);
  CHECK(error_of([&] { gd::empty_like(m, gd::memory_format(gd::channels_last)); }) == rank4);
  CHECK(error_of([] { gd::empty({2, 3, 4, 5}, gd::memory_format(gd::channels_last_3d)); }) ==
        "required rank 5 tensor to use channels_last_3d format");
  CHECK(error_of([] { gd::empty({2, 3}, gd::memory_format(gd::preserve_format)); }) ==
        "unsupported memory format Preserve");
  CHECK(error_of([&] { m.t().contiguous(gd::preserve_format); }) ==
        "preserve memory format is unsupported by the contiguous operator");
  CHECK_FALSE(m.is_contiguous(gd::channels_last));  // a question, not an error
}

// ---- conv2d ----

TEST_CASE("conv2d on channels_last runs NHWC and matches the NCHW path") {
  struct Case {
    Shape input, weight, stride, padding, dilation;
    int64_t groups;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {{2, 4, 9, 7}, {6, 2, 3, 2}, {2, 3}, {1, 2}, {2, 1}, 2, true},
      {{1, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, false},
      {{3, 5, 5, 5}, {2, 5, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, true},
  };
  // Which operands are channels_last: input, weight or both (output NHWC in each, as PyTorch).
  const std::vector<std::pair<bool, bool>> layouts = {{true, false}, {false, true}, {true, true}};
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    const double tol = dtype == gd::kFloat32 ? 2e-5 : 1e-12;
    for (const Case& c : cases) {
      const Tensor x = sample(c.input, -1, 1, 20, dtype), w = sample(c.weight, -1, 1, 21, dtype);
      const Tensor b = c.bias ? sample({c.weight[0]}, -1, 1, 22, dtype) : Tensor();
      const Fn conv = [&](const V& v) {
        return gd::conv2d(v[0], v[1], v[2], c.stride, c.padding, c.dilation, c.groups);
      };
      const Tensor probe = conv({x, w, b});
      const Tensor seed = sample(probe.sizes(), -1, 1, 23);
      const Result want = run(conv, {x, w, b}, seed);
      CHECK(want.out.is_contiguous());
      for (auto [input_cl, weight_cl] : layouts) {
        INFO(gd::dtype_name(dtype), " input ", gd::shape_to_string(c.input), " weight ", gd::shape_to_string(c.weight),
             " input_cl ", input_cl, " weight_cl ", weight_cl);
        const Tensor xi = input_cl ? cl(x) : x, wi = weight_cl ? cl(w) : w;
        // NHWC when either operand suggests channels_last; a depthwise weight [O, 1, KH, KW]
        // is dense in both layouts at once and suggests contiguous (as in PyTorch).
        const bool nhwc = xi.suggest_memory_format() == gd::MemoryFormat::ChannelsLast ||
                          wi.suggest_memory_format() == gd::MemoryFormat::ChannelsLast;
        const Result got = run(conv, {xi, wi, b}, seed);
        CHECK((nhwc ? nhwc_only(got.out) : got.out.is_contiguous()));
        CHECK(value_mismatch(got.out, want.out, tol, tol) == "");
        // The input gradient has the output's layout; the weight gradient has the weight's.
        CHECK((nhwc ? nhwc_only(got.grads[0]) : got.grads[0].is_contiguous()));
        CHECK(got.grads[1].strides() == wi.strides());
        for (size_t i = 0; i < 3; ++i)
          if (want.grads[i].defined()) CHECK(value_mismatch(got.grads[i], want.grads[i], tol, tol) == "");
        // The kernels ran on NHWC buffers: oneDNN for float32, im2col + GEMM for float64.
        for (auto kernel : {conv_testing::ConvKernel::Forward, conv_testing::ConvKernel::BackwardInput,
                            conv_testing::ConvKernel::BackwardWeight}) {
          const conv_testing::ConvRun ran = conv_testing::last_conv_run(kernel);
          CHECK(ran.backend == (dtype == gd::kFloat32 ? "onednn" : "gemm"));
          CHECK(ran.layout == (nhwc ? Layout::NHWC : Layout::NCHW));
          CHECK(ran.weight_layout == (wi.is_contiguous() ? Layout::NCHW : Layout::NHWC));
        }
      }
      // A channels_last seed changes nothing on the NCHW path but its gradient's values.
      const Result nchw = run(conv, {x, w, b}, cl(seed));
      CHECK(nchw.out.is_contiguous());
      CHECK(nchw.grads[0].is_contiguous());
      CHECK(conv_testing::last_conv_run(conv_testing::ConvKernel::Forward).layout == Layout::NCHW);
      CHECK(value_mismatch(nchw.grads[0], want.grads[0], tol, tol) == "");
    }
  }
}

TEST_CASE("float32 NHWC convolution uses a fast oneDNN kernel, cached apart from NCHW") {
  const Tensor x = sample({2, 16, 10, 10}, -1, 1, 30, gd::kFloat32);
  const Tensor w = sample({16, 16, 3, 3}, -1, 1, 31, gd::kFloat32);
  const int before = conv_testing::conv_onednn_cache_size();
  const Tensor nchw = gd::conv2d(x, w, {}, 1, 1);
  const Tensor nhwc = gd::conv2d(cl(x), w, {}, 1, 1);
  const int after = conv_testing::conv_onednn_cache_size();
  // Two primitives for one geometry (unless the cache wrapped around in between).
  CHECK((after == before + 2 || after <= 2));
  const conv_testing::ConvRun ran = conv_testing::last_conv_run(conv_testing::ConvKernel::Forward);
  CHECK(ran.backend == "onednn");
  CHECK(ran.layout == Layout::NHWC);
  // oneDNN's reference code ("ref:any") is what plain NHWC weights would get, hundreds of times slower.
  CHECK(ran.implementation.rfind("ref", 0) == std::string::npos);
  CHECK(value_mismatch(nhwc, nchw, 1e-5, 1e-5) == "");
  Tensor leaf = cl(x).requires_grad_();
  Tensor wl = w.clone().requires_grad_();
  gd::conv2d(leaf, wl, {}, 1, 1).sum().backward();
  for (auto kernel : {conv_testing::ConvKernel::BackwardInput, conv_testing::ConvKernel::BackwardWeight}) {
    const conv_testing::ConvRun back = conv_testing::last_conv_run(kernel);
    CHECK(back.backend == "onednn");
    CHECK(back.layout == Layout::NHWC);
    CHECK(back.implementation.rfind("ref", 0) == std::string::npos);
  }
}

TEST_CASE("conv2d NHWC path passes gradcheck (both modes) and gradgradcheck in float64") {
  const std::function<V(const V&)> fn = [](const V& v) {
    return V{gd::conv2d(v[0], v[1], v[2], {2, 1}, {1, 1}, {1, 2}, 2)};
  };
  const V inputs = {cl(sample({1, 4, 5, 5}, -1, 1, 40)).requires_grad_(),
                    sample({4, 2, 2, 2}, -1, 1, 41).requires_grad_(), sample({4}, -1, 1, 42).requires_grad_()};
  CHECK(nhwc_only(gd::max_pool2d(inputs[0], 2, 1)));
  CHECK(gd::autograd::gradcheck(fn, inputs, with_forward_ad()));
  CHECK(gd::autograd::gradgradcheck(fn, inputs));
  const V weight_cl = {sample({1, 4, 5, 5}, -1, 1, 43).requires_grad_(),
                       cl(sample({4, 2, 2, 2}, -1, 1, 44)).requires_grad_(), sample({4}, -1, 1, 45).requires_grad_()};
  CHECK(gd::autograd::gradcheck(fn, weight_cl));
}

// ---- pooling and batch_norm ----

TEST_CASE("pooling on channels_last runs NHWC and matches the NCHW path") {
  struct Case {
    const char* what;
    Fn f;
    double tol;  // the max and average loops give bitwise the NCHW values; adaptive goes through matmul
  };
  const std::vector<Case> cases = {
      {"max_pool2d 2", [](const V& v) { return gd::max_pool2d(v[0], 2); }, 0},
      {"max_pool2d 3, stride 2, pad 1, ceil", [](const V& v) { return gd::max_pool2d(v[0], 3, 2, 1, 1, true); }, 0},
      {"max_pool2d dilation 2", [](const V& v) { return gd::max_pool2d(v[0], 2, 1, 0, 2); }, 0},
      {"avg_pool2d 3, stride 2, pad 1", [](const V& v) { return gd::avg_pool2d(v[0], 3, 2, 1); }, 0},
      {"avg_pool2d ceil, exclude pad", [](const V& v) { return gd::avg_pool2d(v[0], 2, 2, 1, true, false); }, 0},
      {"avg_pool2d {3, 2}", [](const V& v) { return gd::avg_pool2d(v[0], {3, 2}, {1, 2}); }, 0},
      {"adaptive_avg_pool2d {2, 3}", [](const V& v) { return gd::adaptive_avg_pool2d(v[0], {2, 3}); }, 1e-12},
      {"adaptive_avg_pool2d {4, 4}", [](const V& v) { return gd::adaptive_avg_pool2d(v[0], {4, 4}); }, 1e-12},
  };
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    const Tensor x = sample({2, 3, 7, 6}, -1, 1, 50, dtype);
    for (const Case& c : cases) {
      INFO(std::string(c.what), " ", gd::dtype_name(dtype));
      const double tol = dtype == gd::kFloat32 && c.tol > 0 ? 1e-6 : c.tol;
      const Tensor seed = sample(c.f({x}).sizes(), -1, 1, 51);
      const Result want = run(c.f, {x}, seed);
      CHECK(want.out.is_contiguous());
      for (const Tensor& s : {seed, cl(seed)}) {
        const Result got = run(c.f, {cl(x)}, s);
        CHECK(nhwc_only(got.out));
        CHECK(nhwc_only(got.grads[0]));
        CHECK(value_mismatch(got.out, want.out, tol, tol) == "");
        CHECK(value_mismatch(got.grads[0], want.grads[0], tol, tol) == "");
      }
    }
  }
}

TEST_CASE("max_pool2d on channels_last: gradcheck and gradgradcheck through the NHWC scatter and gather") {
  // Overlapping windows (stride 1): one input may be the argmax of several outputs.
  auto fn = [](const V& v) { return V{gd::max_pool2d(v[0], 2, 1).square()}; };
  const V inputs = {cl(sample({2, 3, 4, 5}, -1, 1, 60)).requires_grad_()};
  CHECK(nhwc_only(gd::max_pool2d(inputs[0], 2, 1)));
  CHECK(gd::autograd::gradcheck(fn, inputs));
  CHECK(gd::autograd::gradgradcheck(fn, inputs));
}

TEST_CASE("max_pool2d on channels_last gives PyTorch's indices and NaN rule") {
  // python3: F.max_pool2d(x_cl, 2, return_indices=True)[1].stride() -> (27, 1, 9, 3) for x [2, 3, 6, 6].
  const Tensor x = sample({2, 3, 6, 6}, -1, 1, 60);
  auto [values, indices] = gd::max_pool2d_with_indices(cl(x), 2);
  auto [want_values, want_indices] = gd::max_pool2d_with_indices(x, 2);
  CHECK(indices.strides() == IntArrayRef{27, 1, 9, 3});
  CHECK(value_mismatch(indices, want_indices, 0, 0) == "");
  CHECK(value_mismatch(values, want_values, 0, 0) == "");
  // NaNs: the last NaN of a window wins, on both layouts.
  std::vector<double> v = values_of(x);
  for (size_t i : {0u, 1u, 7u, 40u, 41u, 77u, 100u, 150u, 151u, 200u})
    v[i] = NAN;
  const Tensor with_nan = gd::testing::tensor_of(v, {2, 3, 6, 6});
  auto [nan_values, nan_indices] = gd::max_pool2d_with_indices(cl(with_nan), 2, 1);
  auto [want_nan_values, want_nan_indices] = gd::max_pool2d_with_indices(with_nan, 2, 1);
  CHECK(value_mismatch(nan_values, want_nan_values, 0, 0) == "");
  CHECK(value_mismatch(nan_indices, want_nan_indices, 0, 0) == "");
  // Unbatched inputs have no channels_last; they stay on the NCHW loops.
  CHECK(gd::max_pool2d(x[0], 2).is_contiguous());
}

TEST_CASE("pooling NHWC paths pass gradcheck (both modes) and gradgradcheck in float64") {
  const std::vector<std::pair<const char*, std::function<V(const V&)>>> fns = {
      {"max", [](const V& v) { return V{gd::max_pool2d(v[0], 2, 1, 1)}; }},
      {"avg", [](const V& v) { return V{gd::avg_pool2d(v[0], 3, 2, 1, true, false)}; }},
      {"adaptive", [](const V& v) { return V{gd::adaptive_avg_pool2d(v[0], {2, 3})}; }},
  };
  for (const auto& [name, fn] : fns) {
    INFO(std::string(name));
    const V inputs = {cl(sample({2, 3, 4, 5}, -1, 1, 70)).requires_grad_()};
    CHECK(nhwc_only(gd::max_pool2d(inputs[0], 2, 1)));
    CHECK(gd::autograd::gradcheck(fn, inputs, with_forward_ad()));
    CHECK(gd::autograd::gradgradcheck(fn, inputs));
  }
}

TEST_CASE("batch_norm on channels_last stays channels_last and matches the NCHW path") {
  const Tensor x = sample({3, 4, 5, 2}, -2, 3, 80), weight = sample({4}, 0.5, 1.5, 81), bias = sample({4}, -1, 1, 82);
  const Tensor seed = sample({3, 4, 5, 2}, -1, 1, 83);
  for (bool training : {true, false}) {
    CAPTURE(training);
    Tensor mean_nchw = sample({4}, -1, 1, 84), var_nchw = sample({4}, 0.5, 2, 85);
    Tensor mean_nhwc = mean_nchw.clone(), var_nhwc = var_nchw.clone();
    const Result want = run([&](const V& v) { return gd::batch_norm(v[0], mean_nchw, var_nchw, v[1], v[2], training); },
                            {x, weight, bias}, seed);
    const Result got = run([&](const V& v) { return gd::batch_norm(v[0], mean_nhwc, var_nhwc, v[1], v[2], training); },
                           {cl(x), weight, bias}, seed);
    CHECK(nhwc_only(got.out));
    CHECK(nhwc_only(got.grads[0]));
    CHECK(value_mismatch(got.out, want.out, 1e-12, 1e-12) == "");
    for (size_t i = 0; i < 3; ++i) CHECK(value_mismatch(got.grads[i], want.grads[i], 1e-12, 1e-12) == "");
    CHECK(value_mismatch(mean_nhwc, mean_nchw, 1e-12, 1e-12) == "");
    CHECK(value_mismatch(var_nhwc, var_nchw, 1e-12, 1e-12) == "");
  }
  auto fn = [](const V& v) { return V{gd::batch_norm(v[0], {}, {}, v[1], v[2], true)}; };
  const V inputs = {cl(sample({2, 3, 2, 2}, -1, 1, 86)).requires_grad_(), sample({3}, 0.5, 1.5, 87).requires_grad_(),
                    sample({3}, -1, 1, 88).requires_grad_()};
  CHECK(gd::autograd::gradcheck(fn, inputs));
  CHECK(gd::autograd::gradgradcheck(fn, inputs));
}

TEST_CASE("unary math keeps a dense input's layout, as PyTorch's TensorIterator") {
  // torch: relu/tanh/exp of a channels_last [2, 3, 4, 5] tensor have strides
  // (60, 1, 15, 3); exp(y.t()) of a [3, 4] y has (1, 4); exp(y[:, ::2]) (not
  // dense) is contiguous, (2, 1). Integer inputs convert to float32 first.
  const Tensor x = cl(sample({2, 3, 4, 5}, -1, 1, 80));
  const gd::DimVector channels_last{60, 1, 15, 3};
  for (const auto& [name, f] : std::vector<std::pair<const char*, Fn>>{
           {"relu", [](const V& v) { return gd::relu(v[0]); }},
           {"tanh", [](const V& v) { return gd::tanh(v[0]); }},
           {"exp", [](const V& v) { return gd::exp(v[0]); }},
           {"sigmoid", [](const V& v) { return gd::sigmoid(v[0]); }}}) {
    INFO(name);
    const Tensor y = f({x});
    CHECK(y.strides() == channels_last);
    CHECK(value_mismatch(y, f({x.contiguous()}), 0, 0) == "");
  }
  const Tensor ints = cl(gd::arange(120, gd::kInt64).reshape({2, 3, 4, 5}));
  CHECK(value_mismatch(gd::sqrt(ints), gd::sqrt(ints.contiguous()), 0, 0) == "");
  const Tensor y = sample({3, 4}, -1, 1, 81);
  CHECK(gd::exp(y.t()).strides() == gd::DimVector{1, 4});
  CHECK(value_mismatch(gd::exp(y.t()), gd::exp(y.t().contiguous()), 0, 0) == "");
  CHECK(gd::exp(y.slice(1, 0, 4, 2)).strides() == gd::DimVector{2, 1});
  CHECK(value_mismatch(gd::exp(y.slice(1, 0, 4, 2)), gd::exp(y.slice(1, 0, 4, 2).contiguous()), 0, 0) == "");
  // ReLU on an NHWC activation and its backward stay NHWC without copies.
  const Tensor leaf = x.detach().requires_grad_();
  const Tensor r = gd::relu(leaf);
  r.backward(cl(sample({2, 3, 4, 5}, -1, 1, 82)));
  CHECK(nhwc_only(leaf.grad()));
}

TEST_CASE("a conv, batch_norm, pool stack stays channels_last end to end") {
  Tensor x = cl(sample({2, 3, 8, 8}, -1, 1, 90, gd::kFloat32)).requires_grad_();
  Tensor w = sample({8, 3, 3, 3}, -1, 1, 91, gd::kFloat32).requires_grad_();
  const Tensor h = gd::conv2d(x, w, {}, 1, 1);
  const Tensor n = gd::batch_norm(h, {}, {}, {}, {}, true);
  const Tensor p = gd::max_pool2d(n, 2);
  const Tensor y = gd::adaptive_avg_pool2d(gd::avg_pool2d(p, 2), {1, 1});
  CHECK(nhwc_only(h));
  CHECK(nhwc_only(n));
  CHECK(nhwc_only(p));
  CHECK(y.is_contiguous(gd::channels_last));
  y.sum().backward();
  CHECK(nhwc_only(x.grad()));
  CHECK(w.grad().is_contiguous());
}

TEST_CASE("elementwise results keep channels_last by PyTorch's rule, with the same values") {
  // python3 (torch 1.13): the layout of each result, "CL" channels_last only, "C" row-major.
  const Tensor a = sample({2, 3, 4, 5}, -1, 1, 40), b = cl(sample({2, 3, 4, 5}, -1, 1, 41));
  const Tensor bias = sample({3, 1, 1}, -1, 1, 42), bias4 = sample({1, 3, 1, 1}, -1, 1, 43);
  const Tensor grey = sample({2, 1, 4, 5}, -1, 1, 44);
  const Tensor ambiguous = cl(sample({2, 3, 1, 1}, -1, 1, 45)), plain_pixel = sample({2, 3, 1, 1}, -1, 1, 46);
  struct Case {
    const char* what;
    Tensor result, reference;  // the reference computed on row-major copies
    bool channels_last;
  };
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  const std::vector<Case> cases = {
      {"C + CL", a + b, ac + bc, false},
      {"CL + C", b + a, bc + ac, true},
      {"CL + CL", b * b, bc * bc, true},
      {"CL * 2", b * 2, bc * 2, true},
      {"CL + bias [3, 1, 1]", b + bias, bc + bias, true},
      {"bias [3, 1, 1] + CL", bias + b, bias + bc, true},
      {"bias [1, 3, 1, 1] - CL", bias4 - b, bias4 - bc, true},
      {"CL > 0", b > 0, bc > 0, true},
      {"where(CL > 0, CL, C)", gd::where(b > 0, b, a), gd::where(bc > 0, bc, ac), true},
      {"where(C > 0, CL, CL)", gd::where(a > 0, b, b), gd::where(ac > 0, bc, bc), false},
      {"grey [2, 1, 4, 5] + CL", grey + b, grey + bc, true},
      {"maximum(CL, C)", gd::maximum(b, a), gd::maximum(bc, ac), true},
      {"CL pow 2", b.pow(2), bc.pow(2), true},
      {"ambiguous [2, 3, 1, 1] + C", ambiguous + plain_pixel, ambiguous.contiguous() + plain_pixel, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK((c.channels_last ? nhwc_only(c.result) : c.result.is_contiguous()));
    CHECK(value_mismatch(c.result, c.reference, 0, 0) == "");
  }
  // Gradients through channels_last arithmetic stay channels_last.
  Tensor leaf = b.detach().clone().requires_grad_();
  (gd::relu(leaf) * 3 + bias).sum().backward();
  CHECK(nhwc_only(leaf.grad()));
  CHECK(value_mismatch(leaf.grad(), gd::where(bc > 0, 3.0, 0.0), 0, 0) == "");
}
