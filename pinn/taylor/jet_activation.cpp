// The jet-activation op (pinn/taylor/jet_activation.h): its forward and
// backward formulas, once as fused kernels (kernels/jet.h, on the CPU or a
// GPU) and once as differentiable ops.
#include "pinn/taylor/jet_activation.h"

#include <bit>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/autograd/function.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "kernels/error.h"
#include "kernels/jet.h"
#include "kernels/scalar_type.h"

namespace gradiens::pinn {

namespace {

// The highest derivative of the activation the forward formulas use; the
// backward formulas use one more.
int forward_order(const JetBlocks& blocks) {
  if (!blocks.pure_dims.empty()) return blocks.pure_order;
  return blocks.laplacian ? 2 : 1;
}

double weight(const JetBlocks& blocks, int64_t coordinate) {
  return blocks.laplacian_weights.empty() ? 1.0 : blocks.laplacian_weights[coordinate];
}

// For each coordinate, its index in pure_dims, or -1.
std::vector<int64_t> pure_index(const JetBlocks& blocks) {
  std::vector<int64_t> index(static_cast<size_t>(blocks.coordinates), -1);
  for (size_t p = 0; p < blocks.pure_dims.size(); ++p) index[blocks.pure_dims[p]] = static_cast<int64_t>(p);
  return index;
}

// ---- differentiable formulas -------------------------------------------------
// The same formulas as kernels/cpu/taylor.cpp, one tensor per block.

// s[k] = the k-th derivative of the activation at z, k = 0..highest (<= 5),
// each a differentiable function of z.
std::vector<Tensor> derivatives(JetActivation activation, const Tensor& z, int highest) {
  std::vector<Tensor> s(6);
  switch (activation) {
    case JetActivation::Tanh: {
      const Tensor t = tanh(z), t2 = t * t;
      s[0] = t;
      s[1] = (1 - t) * (1 + t);
      s[2] = -2 * t * s[1];
      s[3] = s[1] * (6 * t2 - 2);
      s[4] = s[1] * t * (16 - 24 * t2);
      s[5] = s[1] * ((120 * t2 - 120) * t2 + 16);
      break;
    }
    case JetActivation::Sigmoid:
    case JetActivation::Silu: {
      const Tensor sigma = sigmoid(z), q = sigma * (1 - sigma), one_minus_2sigma = 1 - 2 * sigma;
      const std::vector<Tensor> g{sigma, q, q * one_minus_2sigma, q * (1 - 6 * q),
                                  q * one_minus_2sigma * (1 - 12 * q), q * ((120 * q - 30) * q + 1)};
      if (activation == JetActivation::Sigmoid) {
        s = g;
      } else {
        s[0] = z * sigma;
        for (int k = 1; k <= 5; ++k) s[k] = z * g[k] + static_cast<double>(k) * g[k - 1];
      }
      break;
    }
    case JetActivation::Relu: {
      const Tensor positive = (z > 0).to(z.scalar_type());
      s[0] = relu(z);
      s[1] = positive;
      for (int k = 2; k <= 5; ++k) s[k] = zeros_like(z);
      break;
    }
    case JetActivation::Sin: {
      const Tensor sine = sin(z), cosine = cos(z);
      s = {sine, cosine, -sine, -cosine, sine, cosine};
      break;
    }
  }
  s.resize(static_cast<size_t>(highest) + 1);
  return s;
}

Tensor pre_activation(const Tensor& jet, const Tensor& bias) {
  return bias.defined() ? jet.select(0, 0) + bias : jet.select(0, 0);
}

Tensor composite_forward(JetActivation activation, const JetBlocks& blocks, const Tensor& jet, const Tensor& bias) {
  const std::vector<Tensor> s = derivatives(activation, pre_activation(jet, bias), forward_order(blocks));
  const std::vector<int64_t> pure = pure_index(blocks);
  std::vector<Tensor> out(static_cast<size_t>(blocks.count()));
  out[0] = s[0];
  Tensor weighted_squares;
  for (int64_t i = 0; i < blocks.coordinates; ++i) {
    const Tensor h1 = jet.select(0, 1 + i);
    out[1 + i] = s[1] * h1;
    if (blocks.laplacian) {
      const Tensor term = weight(blocks, i) * h1 * h1;
      weighted_squares = weighted_squares.defined() ? weighted_squares + term : term;
    }
    if (pure[i] < 0) continue;
    const int64_t b2 = blocks.pure_block(pure[i], 2);
    const Tensor h1h1 = h1 * h1, h2 = jet.select(0, b2);
    out[b2] = s[1] * h2 + s[2] * h1h1;
    if (blocks.pure_order < 3) continue;
    const Tensor h3 = jet.select(0, b2 + 1);
    out[b2 + 1] = s[1] * h3 + 3 * s[2] * h1 * h2 + s[3] * h1h1 * h1;
    if (blocks.pure_order < 4) continue;
    const Tensor h4 = jet.select(0, b2 + 2);
    out[b2 + 2] = s[1] * h4 + s[2] * (4 * h1 * h3 + 3 * h2 * h2) + 6 * s[3] * h1h1 * h2 + s[4] * h1h1 * h1h1;
  }
  if (blocks.laplacian) {
    const int64_t lb = blocks.laplacian_block();
    out[lb] = s[1] * jet.select(0, lb);
    if (weighted_squares.defined()) out[lb] = out[lb] + s[2] * weighted_squares;
  }
  return stack(out, 0);
}

// {d<grad, out>/d jet, d<grad, out>/d bias} by differentiable ops.
GradList composite_backward(JetActivation activation, const JetBlocks& blocks, const Tensor& jet, const Tensor& bias,
                            const Tensor& grad) {
  const std::vector<Tensor> s = derivatives(activation, pre_activation(jet, bias), forward_order(blocks) + 1);
  const std::vector<int64_t> pure = pure_index(blocks);
  const auto in = [&](int64_t block) { return jet.select(0, block); };
  const auto g = [&](int64_t block) { return grad.select(0, block); };
  std::vector<Tensor> out(static_cast<size_t>(blocks.count()));
  Tensor grad_z = g(0) * s[1];
  const int64_t lb = blocks.laplacian_block();
  Tensor weighted_squares = zeros_like(grad_z);
  for (int64_t i = 0; i < blocks.coordinates; ++i) {
    const Tensor h1 = in(1 + i), g1 = g(1 + i);
    Tensor grad_h1 = g1 * s[1];
    grad_z = grad_z + g1 * s[2] * h1;
    if (blocks.laplacian) {
      const Tensor weighted_h1 = weight(blocks, i) * h1;
      weighted_squares = weighted_squares + weighted_h1 * h1;
      grad_h1 = grad_h1 + 2 * g(lb) * s[2] * weighted_h1;
    }
    if (pure[i] >= 0) {
      const int64_t b2 = blocks.pure_block(pure[i], 2);
      const Tensor h1h1 = h1 * h1, h2 = in(b2), g2 = g(b2);
      grad_z = grad_z + g2 * (s[2] * h2 + s[3] * h1h1);  // y2 = s' h2 + s'' h1^2
      grad_h1 = grad_h1 + 2 * g2 * s[2] * h1;
      Tensor grad_h2 = g2 * s[1];
      if (blocks.pure_order >= 3) {  // y3 = s' h3 + 3 s'' h1 h2 + s''' h1^3
        const Tensor h3 = in(b2 + 1), g3 = g(b2 + 1);
        grad_z = grad_z + g3 * (s[2] * h3 + 3 * s[3] * h1 * h2 + s[4] * h1h1 * h1);
        grad_h1 = grad_h1 + 3 * g3 * (s[2] * h2 + s[3] * h1h1);
        grad_h2 = grad_h2 + 3 * g3 * s[2] * h1;
        Tensor grad_h3 = g3 * s[1];
        if (blocks.pure_order >= 4) {  // y4 = s' h4 + s''(4 h1 h3 + 3 h2^2) + 6 s''' h1^2 h2 + s'''' h1^4
          const Tensor h4 = in(b2 + 2), g4 = g(b2 + 2);
          grad_z = grad_z + g4 * (s[2] * h4 + s[3] * (4 * h1 * h3 + 3 * h2 * h2) + 6 * s[4] * h1h1 * h2 +
                                  s[5] * h1h1 * h1h1);
          grad_h1 = grad_h1 + g4 * (4 * s[2] * h3 + 12 * s[3] * h1 * h2 + 4 * s[4] * h1h1 * h1);
          grad_h2 = grad_h2 + 6 * g4 * (s[2] * h2 + s[3] * h1h1);
          grad_h3 = grad_h3 + 4 * g4 * s[2] * h1;
          out[b2 + 2] = g4 * s[1];
        }
        out[b2 + 1] = grad_h3;
      }
      out[b2] = grad_h2;
    }
    out[1 + i] = grad_h1;
  }
  if (blocks.laplacian) {  // L' = s' L + s'' sum_i c_i G_i^2
    grad_z = grad_z + g(lb) * (s[2] * in(lb) + s[3] * weighted_squares);
    out[lb] = g(lb) * s[1];
  }
  out[0] = grad_z;
  return {stack(out, 0), bias.defined() ? grad_z.sum({0}) : Tensor()};
}

// ---- the fused kernels -------------------------------------------------------

// The fused kernels take float32/float64 on the CPU, and on a cuda device up
// to kMaxJetCoordinates coordinates (their plan travels as kernel arguments).
bool fused_kernel_applies(const JetBlocks& blocks, const Tensor& jet, const Tensor& bias) {
  const ScalarType dtype = jet.scalar_type();
  if (dtype != kFloat64 && dtype != kFloat32) return false;
  if (bias.defined() && (bias.device() != jet.device() || bias.scalar_type() != dtype)) return false;
  if (jet.is_cpu()) return true;
  return jet.is_cuda() && blocks.coordinates <= kernels::kMaxCudaJetCoordinates;
}

const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

Tensor fused_forward(JetActivation activation, const JetBlocks& blocks, const Tensor& jet, const Tensor& bias) {
  const Tensor in = jet.contiguous(), b = bias.defined() ? bias.contiguous() : Tensor();
  Tensor out = empty(in.sizes(), in.options());
  kernels::jet_activation_forward(in.scalar_type(), activation, blocks.layout(in.size(1), in.size(2)), in.data_ptr(),
                                  data_or_null(b), out.data_ptr(), cuda_seam::device_of(in));
  return out;
}

GradList fused_backward(JetActivation activation, const JetBlocks& blocks, const Tensor& jet, const Tensor& bias,
                        const Tensor& grad) {
  const Tensor in = jet.contiguous(), b = bias.defined() ? bias.contiguous() : Tensor(), g = grad.contiguous();
  Tensor grad_jet = empty(in.sizes(), in.options());
  kernels::jet_activation_backward(in.scalar_type(), activation, blocks.layout(in.size(1), in.size(2)), in.data_ptr(),
                                   data_or_null(b), g.data_ptr(), grad_jet.data_ptr(), cuda_seam::device_of(in));
  // Block 0 is the gradient of z = jet[0] + bias.
  return {grad_jet, bias.defined() ? grad_jet.select(0, 0).sum({0}) : Tensor()};
}

// ---- the op --------------------------------------------------------------------

struct JetActivationOp {
  static constexpr std::string_view name = "JetActivationBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& jet, const Tensor& bias, const JetActivation& activation,
                        const JetBlocks& blocks) {
    ctx.save_for_backward(jet, bias);
    if (ctx.is_recording()) {
      ctx.ints = {static_cast<int64_t>(activation)};
      append_blocks(ctx.ints, blocks);
    }
    if (fused_kernel_applies(blocks, jet, bias)) return fused_forward(activation, blocks, jet, bias);
    return composite_forward(activation, blocks, jet, bias);
  }
  // Grad mode on (create_graph): differentiable ops, so the gradient can be
  // differentiated again; off: one fused pass.
  static GradList backward(Ctx& ctx, const Tensor& grad) {
    auto [jet, bias] = ctx.saved<2>();
    const auto activation = static_cast<JetActivation>(ctx.ints[0]);
    size_t position = 1;
    const JetBlocks blocks = read_blocks(ctx.ints, position);
    GradList grads = !GradMode::is_enabled() && fused_kernel_applies(blocks, jet, bias)
                         ? fused_backward(activation, blocks, jet, bias, grad)
                         : composite_backward(activation, blocks, jet, bias, grad);
    if (!ctx.needs_input_grad(0)) grads[0] = Tensor();
    if (!ctx.needs_input_grad(1)) grads[1] = Tensor();
    return grads;
  }
};

void check_arguments(const JetBlocks& blocks, const Tensor& jet, const Tensor& bias, const char* op) {
  GD_CHECK(jet.defined() && jet.dim() == 3 && jet.size(0) == blocks.count(),
           fmt::format("pinn::{}: the jet must be [{}, N, w] (its blocks), got [{}]", op, blocks.count(),
                       jet.defined() ? fmt::format("{}", fmt::join(jet.sizes(), ", ")) : "undefined"));
  GD_CHECK(jet.is_floating_point(), fmt::format("pinn::{}: the jet must be floating point", op));
  GD_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == jet.size(2) && bias.dtype() == jet.dtype()),
           fmt::format("pinn::{}: bias must be [{}] of the jet's dtype", op, jet.size(2)));
  GD_CHECK(blocks.laplacian_weights.empty() || static_cast<int64_t>(blocks.laplacian_weights.size()) == blocks.coordinates,
           fmt::format("pinn::{}: {} Laplacian weights for {} coordinates", op, blocks.laplacian_weights.size(),
                       blocks.coordinates));
  GD_CHECK(blocks.pure_dims.empty() || (blocks.pure_order >= 2 && blocks.pure_order <= 4),
           fmt::format("pinn::{}: pure_order must be 2..4, got {}", op, blocks.pure_order));
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(blocks.coordinates, 0)), false);
  for (int64_t dim : blocks.pure_dims) {
    GD_CHECK(dim >= 0 && dim < blocks.coordinates && !seen[dim],
             fmt::format("pinn::{}: pure_dims must be distinct coordinates in [0, {}), got [{}]", op,
                         blocks.coordinates, fmt::join(blocks.pure_dims, ", ")));
    seen[dim] = true;
  }
}

}  // namespace

void append_blocks(DimVector& ints, const JetBlocks& blocks) {
  ints.push_back(blocks.coordinates);
  ints.push_back(blocks.laplacian ? 1 : 0);
  ints.push_back(blocks.pure_order);
  ints.push_back(static_cast<int64_t>(blocks.pure_dims.size()));
  for (int64_t dim : blocks.pure_dims) ints.push_back(dim);
  ints.push_back(static_cast<int64_t>(blocks.laplacian_weights.size()));
  for (double c : blocks.laplacian_weights) ints.push_back(std::bit_cast<int64_t>(c));
}

JetBlocks read_blocks(const DimVector& ints, size_t& position) {
  JetBlocks blocks;
  blocks.coordinates = ints[position++];
  blocks.laplacian = ints[position++] != 0;
  blocks.pure_order = static_cast<int>(ints[position++]);
  for (int64_t p = ints[position++]; p > 0; --p) blocks.pure_dims.push_back(ints[position++]);
  for (int64_t i = ints[position++]; i > 0; --i) blocks.laplacian_weights.push_back(std::bit_cast<double>(ints[position++]));
  return blocks;
}

Tensor jet_activation(JetActivation activation, const JetBlocks& blocks, const Tensor& jet, const Tensor& bias) {
  check_arguments(blocks, jet, bias, "jet_activation");
  return apply<JetActivationOp>(jet, bias, activation, blocks);
}

Tensor jet_activation_composite(JetActivation activation, const JetBlocks& blocks, const Tensor& jet,
                                const Tensor& bias) {
  check_arguments(blocks, jet, bias, "jet_activation_composite");
  return composite_forward(activation, blocks, jet, bias);
}

}  // namespace gradiens::pinn
