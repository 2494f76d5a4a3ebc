// Tests for autograd::checkpoint (same gradients, replayed randomness, less
// peak memory, errors) and for the messages of anomaly mode.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/allocator.h"
#include "engine/autograd/checkpoint.h"
#include "engine/autograd/node.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::autograd::checkpoint;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

// A deep tanh MLP h <- tanh(h W_l + b_l), run either plainly or in checkpointed
// segments of `segment` layers whose parameters are captured by the lambda.
struct DeepMlp {
  std::vector<Tensor> weights, biases;
  DeepMlp(int64_t depth, int64_t width, uint64_t seed) {
    for (int64_t l = 0; l < depth; ++l) {
      const double scale = 1.5 / static_cast<double>(width);
      weights.push_back(sample({width, width}, -scale * 2, scale * 2, seed + 2 * l).requires_grad_());
      biases.push_back(sample({width}, -0.1, 0.1, seed + 2 * l + 1).requires_grad_());
    }
  }
  Tensor layers(Tensor h, size_t first, size_t last) const {
    for (size_t l = first; l < last; ++l) h = gd::tanh(gd::matmul(h, weights[l]) + biases[l]);
    return h;
  }
  Tensor forward(const Tensor& x, size_t segment = 0) const {
    if (segment == 0) return layers(x, 0, weights.size());
    Tensor h = x;
    for (size_t first = 0; first < weights.size(); first += segment) {
      const size_t last = std::min(first + segment, weights.size());
      h = checkpoint([this, first, last](const Tensor& in) { return layers(in, first, last); }, h);
    }
    return h;
  }
  std::vector<Tensor> parameters() const {
    std::vector<Tensor> all = weights;
    all.insert(all.end(), biases.begin(), biases.end());
    return all;
  }
  void zero_grad() const {
    for (const Tensor& p : parameters()) p.set_grad(Tensor());
  }
};

std::string same(const Tensor& got, const Tensor& want) { return value_mismatch(got, want, 1e-13, 1e-15); }

}  // namespace

TEST_CASE("checkpoint: the same gradients as without it, for inputs and captured parameters") {
  DeepMlp mlp(6, 5, 100);
  Tensor x = sample({4, 5}, -1, 1, 7).requires_grad_();
  mlp.forward(x).square().sum().backward();
  const Tensor x_grad = x.grad();
  std::vector<Tensor> want;
  for (const Tensor& p : mlp.parameters()) want.push_back(p.grad());
  for (size_t segment : {1, 2, 4, 6}) {
    CAPTURE(segment);
    mlp.zero_grad();
    x.set_grad(Tensor());
    Tensor y = mlp.forward(x, segment);
    CHECK(y.grad_fn()->name() == "CheckpointFunctionBackward");
    CHECK(same(y, mlp.forward(x).detach()) == "");
    y.square().sum().backward();
    CHECK(same(x.grad(), x_grad) == "");
    for (size_t i = 0; i < want.size(); ++i) CHECK(same(mlp.parameters()[i].grad(), want[i]) == "");
  }
  // autograd::grad reaches the captured parameters too, and leaves .grad alone.
  mlp.zero_grad();
  std::vector<Tensor> wrt = {x, mlp.weights[0], mlp.biases[5]};
  std::vector<Tensor> got = gd::autograd::grad({mlp.forward(x, 2).square().sum()}, wrt);
  std::vector<Tensor> ref = gd::autograd::grad({mlp.forward(x).square().sum()}, wrt);
  for (size_t i = 0; i < got.size(); ++i) CHECK(same(got[i], ref[i]) == "");
  CHECK_FALSE(mlp.weights[0].grad().defined());
  // A tensor hook on a captured parameter runs once, as without checkpoint.
  int calls = 0;
  mlp.weights[0].register_hook([&](const Tensor& g) {
    ++calls;
    return g * 2.0;
  });
  mlp.forward(x).square().sum().backward();
  const Tensor hooked = mlp.weights[0].grad();
  CHECK(calls == 1);
  mlp.zero_grad();
  mlp.forward(x, 2).square().sum().backward();
  CHECK(calls == 2);
  CHECK(same(mlp.weights[0].grad(), hooked) == "");
}

TEST_CASE("checkpoint: inputs passed explicitly, several outputs, nesting") {
  Tensor x = sample({3, 4}, -1, 1, 21).requires_grad_();
  Tensor w = sample({4, 4}, -1, 1, 22).requires_grad_();
  Tensor c = sample({3, 4}, -1, 1, 23);  // an input that does not require grad
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor h = gd::tanh(gd::matmul(in[0], in[1]));
    return std::vector<Tensor>{h * in[2], gd::sigmoid(h).sum(), h.exp()};
  };
  auto loss = [](const std::vector<Tensor>& out) { return (out[0] * out[0]).sum() + out[1]; };  // out[2] unused
  std::vector<Tensor> ref = gd::autograd::grad({loss(fn({x, w, c}))}, {x, w});
  std::vector<Tensor> out = checkpoint(fn, {x, w, c});
  REQUIRE(out.size() == 3);
  CHECK(out[1].output_nr() == 1);
  std::vector<Tensor> got = gd::autograd::grad({loss(out)}, {x, w});
  CHECK(same(got[0], ref[0]) == "");
  CHECK(same(got[1], ref[1]) == "");
  // A checkpoint inside a checkpoint.
  auto nested = [&](const std::vector<Tensor>& in) {
    return checkpoint([&](const std::vector<Tensor>& inner) { return fn(inner); }, in);
  };
  got = gd::autograd::grad({loss(checkpoint(nested, {x, w, c}))}, {x, w});
  CHECK(same(got[0], ref[0]) == "");
  CHECK(same(got[1], ref[1]) == "");
  // float64 finite differences through a checkpoint.
  CHECK(gd::autograd::gradcheck([&](const std::vector<Tensor>& in) { return checkpoint(fn, {in[0], in[1], c}); },
                                {x, w}));
}

TEST_CASE("checkpoint: randomness replays identically and the stream continues as without recompute") {
  Tensor x = sample({8, 6}, -1, 1, 31).requires_grad_();
  auto dropout = [](const Tensor& h) { return gd::tanh(h) * (gd::rand_like(h) > 0.5).to(gd::kFloat64) * 2.0; };
  gd::manual_seed(5);
  Tensor ref = gd::autograd::grad({dropout(x).sum()}, {x})[0];
  const gd::GeneratorState after_plain = gd::default_generator().get_state();
  gd::manual_seed(5);
  Tensor y = checkpoint(dropout, x);
  CHECK(gd::default_generator().get_state() == after_plain);
  Tensor got = gd::autograd::grad({y.sum()}, {x})[0];
  CHECK(same(got, ref) == "");
  CHECK(gd::default_generator().get_state() == after_plain);  // the replay put the generator back
  // Without preserve_rng_state the replay draws a fresh mask: the gradient no
  // longer matches the forward's mask.
  gd::manual_seed(5);
  Tensor loose = checkpoint(dropout, x, /*preserve_rng_state=*/false);
  CHECK_FALSE(gd::equal(gd::autograd::grad({loose.sum()}, {x})[0], ref));
}

TEST_CASE("checkpoint: lower peak memory on a deep tanh MLP") {
  // Depth 16, width 64, batch 512, float64: one activation is 256 KiB, the
  // weights 32 KiB each. The peak of forward + backward is a deterministic
  // count of the allocator. Without checkpoints every layer keeps its tanh
  // output (16 activations); with segments of 4 layers only the 3 inner
  // segment outputs are kept, plus the 4 layers of the segment being
  // recomputed and the gradient temporaries.
  DeepMlp mlp(16, 64, 300);
  Tensor x = sample({512, 64}, -1, 1, 8).requires_grad_();
  auto peak_of = [&](size_t segment) {
    mlp.zero_grad();
    x.set_grad(Tensor());
    const int64_t base = gd::cpu_allocator::stats().allocated_bytes;
    gd::cpu_allocator::reset_peak_stats();
    mlp.forward(x, segment).sum().backward();
    return gd::cpu_allocator::stats().peak_allocated_bytes - base;
  };
  const int64_t plain = peak_of(0), every_4 = peak_of(4), every_2 = peak_of(2);
  INFO("peak bytes of forward+backward: plain ", plain, ", checkpoint every 4 layers ", every_4,
       ", every 2 layers ", every_2);
  CHECK(every_4 < plain * 65 / 100);
  CHECK(every_2 < plain * 75 / 100);
}

TEST_CASE("checkpoint: errors") {
  Tensor x = sample({3}, 0.1, 1, 41).requires_grad_();
  auto square = [](const Tensor& t) { return t * t; };
  // create_graph through a checkpoint is refused.
  CHECK(error_of([&] { gd::autograd::grad({checkpoint(square, x).sum()}, {x}, {}, true, true); }) ==
        "checkpoint does not support create_graph=true: the gradient of a checkpointed segment is computed by a "
        "separate backward pass over its recomputation, which records no graph. Run the segment without "
        "checkpoint to differentiate its gradient.");
  // A second backward needs retain_graph, as for any saved tensor.
  Tensor y = checkpoint(square, x).sum();
  y.backward();
  CHECK(error_of([&] { y.backward(); }).rfind("Trying to backward through the graph a second time", 0) == 0);
  Tensor z = checkpoint(square, x).sum();
  x.set_grad(Tensor());
  z.backward(Tensor(), /*retain_graph=*/true);
  z.backward();
  CHECK(same(x.grad(), x.detach() * 4.0) == "");
  // The saved input is version-checked.
  Tensor h = x * 1.0;
  Tensor out = checkpoint(square, h).sum();
  {
    gd::NoGradGuard no_grad;
    h.mul_(2.0);
  }
  CHECK(error_of([&] { out.backward(); }).rfind("one of the variables needed for gradient computation has been "
                                                "modified by an inplace operation: [DoubleTensor [3]]",
                                                0) == 0);
  // A captured tensor with history cannot be replayed: it must be an input.
  Tensor scaled = x * 3.0;
  CHECK(error_of([&] { checkpoint([&](const Tensor& t) { return t * scaled; }, x); }) ==
        "checkpoint: the function uses a tensor that requires grad and was computed outside it (its grad_fn is "
        "MulBackward1) without receiving it in `inputs`; pass that tensor in `inputs`");
  // Under NoGradGuard a checkpoint is a plain call.
  gd::NoGradGuard no_grad;
  CHECK_FALSE(checkpoint(square, x).requires_grad());
}

TEST_CASE("anomaly mode: PyTorch's message, and where the node was created") {
  Tensor x = tensor_of({1.0, 2.0}).requires_grad_();
  Tensor c = tensor_of({std::nan(""), 1.0});
  gd::autograd::DetectAnomalyGuard anomaly;
  // python3 -c "import torch; x = torch.tensor([1., 2.], requires_grad=True); c = torch.tensor([float('nan'), 1.]);
  //   with torch.autograd.detect_anomaly(): (x * c).sum().backward()"  (and c * x: "in its 1th output.")
  Tensor left = x * c, right = c * x;
  const std::string seq_left = std::to_string(left.grad_fn()->sequence_nr());
  const std::string seq_right = std::to_string(right.grad_fn()->sequence_nr());
  CHECK(error_of([&] { left.sum().backward(); }) ==
        "Function 'MulBackward0' returned nan values in its 0th output. The node was created by: MulBackward0 "
        "(sequence number " + seq_left + ") computing DoubleTensor [2] from a leaf DoubleTensor [2] and a tensor "
        "that does not require grad");
  CHECK(error_of([&] { right.sum().backward(); }) ==
        "Function 'MulBackward0' returned nan values in its 1th output. The node was created by: MulBackward0 "
        "(sequence number " + seq_right + ") computing DoubleTensor [2] from a tensor that does not require grad "
        "and a leaf DoubleTensor [2]");
  // Inside a graph the producers are named: 0 * sqrt'(0) is NaN in SqrtBackward0,
  // whose input is the leaf; the node after it names SqrtBackward0.
  Tensor at_zero = tensor_of({0.0, 1.0}).requires_grad_();
  Tensor root = gd::sqrt(at_zero);
  Tensor scaled = root * 0.0;
  CHECK(error_of([&] { scaled.sum().backward(); }) ==
        "Function 'SqrtBackward0' returned nan values in its 0th output. The node was created by: SqrtBackward0 "
        "(sequence number " + std::to_string(root.grad_fn()->sequence_nr()) + ") computing DoubleTensor [2] from a "
        "leaf DoubleTensor [2]");
  CHECK(scaled.grad_fn()->creation_trace ==
        "MulBackward1 (sequence number " + std::to_string(scaled.grad_fn()->sequence_nr()) +
            ") computing DoubleTensor [2] from SqrtBackward0 (sequence number " +
            std::to_string(root.grad_fn()->sequence_nr()) + ")");
}

