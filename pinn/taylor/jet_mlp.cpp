// The MLP jet (pinn/taylor/jet_mlp.h): the layered differentiable pass, and
// the fused op whose forward and backward are kernels/jet.h's
// jet_mlp_forward/backward (on the CPU or a GPU).
#include "pinn/taylor/jet_mlp.h"

#include <algorithm>
#include <string_view>

#include "engine/autograd/autograd.h"
#include "engine/autograd/function.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "kernels/error.h"
#include "kernels/jet.h"
#include "kernels/scalar_type.h"

namespace gradiens::pinn {

namespace {

// x [N, d] as a jet [K, N, d]: values x, gradient rows e_i, zeros above.
Tensor seed_jet(const Tensor& x, const JetBlocks& blocks) {
  const int64_t n = x.size(0), d = x.size(1);
  const auto constant = x.options().requires_grad(false);
  std::vector<Tensor> parts{x.unsqueeze(0), eye(d, constant).unsqueeze(1).expand({d, n, d})};
  if (const int64_t higher = blocks.count() - 1 - d; higher > 0) parts.push_back(zeros({higher, n, d}, constant));
  return cat(parts, 0);
}

// An activation's output where its mask is 1, its input jet elsewhere (where
// the input's bias is zero by construction).
Tensor masked(const JetMlpStep& step, const Tensor& activated, const Tensor& input) {
  if (!step.mask.defined()) return activated;
  const Tensor mask = step.mask.to(activated.scalar_type());
  return activated * mask + input * (1 - mask);
}

// ---- the fused op ------------------------------------------------------------

// What the op needs besides tensors: the blocks and, per step, whether it is
// a Linear and its activation. Its tensors are x and, per Linear, weight and bias.
struct JetMlpPlan {
  JetBlocks blocks;
  std::vector<std::pair<bool, JetActivation>> steps;
};

std::vector<Tensor> step_tensors(const std::vector<JetMlpStep>& steps) {
  std::vector<Tensor> tensors;
  for (const JetMlpStep& step : steps)
    if (step.linear) {
      tensors.push_back(step.weight);
      tensors.push_back(step.bias);
    }
  return tensors;
}

std::vector<JetMlpStep> steps_of(const JetMlpPlan& plan, const std::vector<Tensor>& tensors) {
  std::vector<JetMlpStep> steps;
  size_t next = 0;
  for (const auto& [linear, activation] : plan.steps) {
    JetMlpStep step{linear, Tensor(), Tensor(), activation};
    if (linear) {
      step.weight = tensors[next++];
      step.bias = tensors[next++];
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

// The buffer of t for the kernels of its device.
template <class T>
T* buffer(const Tensor& t) {
  return t.data_ptr<T>();
}

template <class T>
std::vector<kernels::JetMlpLayer<T>> kernel_layers(const std::vector<JetMlpStep>& steps) {
  std::vector<kernels::JetMlpLayer<T>> layers;
  for (const JetMlpStep& step : steps) {
    kernels::JetMlpLayer<T> layer;
    layer.linear = step.linear;
    layer.activation = step.activation;
    if (step.linear) {
      layer.out_features = step.weight.size(0);
      layer.in_features = step.weight.size(1);
      layer.weight = buffer<T>(step.weight);
      layer.bias = step.bias.defined() ? buffer<T>(step.bias) : nullptr;
    }
    layers.push_back(layer);
  }
  return layers;
}

int64_t output_width(const Tensor& x, const std::vector<JetMlpStep>& steps) {
  int64_t width = x.size(1);
  for (const JetMlpStep& step : steps)
    if (step.linear) width = step.weight.size(0);
  return width;
}

std::vector<JetMlpStep> contiguous(std::vector<JetMlpStep> steps) {
  for (JetMlpStep& step : steps) {
    if (step.weight.defined()) step.weight = step.weight.contiguous();
    if (step.bias.defined()) step.bias = step.bias.contiguous();
  }
  return steps;
}

struct JetMlpOp {
  static constexpr std::string_view name = "JetMlpBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, const std::vector<Tensor>& tensors, const JetMlpPlan& plan) {
    const Tensor xc = x.contiguous();
    const std::vector<JetMlpStep> steps = contiguous(steps_of(plan, tensors));
    Tensor out = empty({plan.blocks.count(), x.size(0), output_width(x, steps)}, x.options());
    // The activation values the backward would recompute (Note [Kept activation values] in kernels/cpu/taylor.h).
    Tensor kept;
    dispatch_floating(x.scalar_type(), "jet_mlp", [&]<class T>() {
      const auto layers = kernel_layers<T>(steps);
      const auto count = static_cast<int64_t>(layers.size());
      const kernels::JetLayout layout = plan.blocks.layout(x.size(0), 1);
      const kernels::DeviceRef device = cuda_seam::device_of(x);
      if (ctx.is_recording())
        if (const int64_t values = kernels::jet_mlp_kept_values(layout, layers.data(), count, device); values > 0)
          kept = empty({values}, x.options().requires_grad(false));
      kernels::jet_mlp_forward(layout, layers.data(), count, buffer<T>(xc), buffer<T>(out), device,
                               kept.defined() ? buffer<T>(kept) : nullptr);
    });
    if (ctx.is_recording()) {
      ctx.save_for_backward(x);
      for (const Tensor& t : tensors) ctx.save_for_backward(t);
      if (kept.defined()) ctx.extra.push_back(kept);  // the op's own buffer, written only here
      append_blocks(ctx.ints, plan.blocks);
      ctx.ints.push_back(static_cast<int64_t>(plan.steps.size()));
      for (const auto& [linear, activation] : plan.steps) {
        ctx.ints.push_back(linear ? 1 : 0);
        ctx.ints.push_back(static_cast<int64_t>(activation));
      }
    }
    return out;
  }

  static GradList backward(Ctx& ctx, const Tensor& grad) {
    JetMlpPlan plan;
    size_t position = 0;
    plan.blocks = read_blocks(ctx.ints, position);
    for (int64_t count = ctx.ints[position++]; count > 0; --count) {
      const bool linear = ctx.ints[position++] != 0;
      plan.steps.emplace_back(linear, static_cast<JetActivation>(ctx.ints[position++]));
    }
    const Tensor x = ctx.saved(0);
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < 2 * static_cast<size_t>(std::count_if(plan.steps.begin(), plan.steps.end(),
                                                                  [](const auto& s) { return s.first; }));
         ++i)
      tensors.push_back(ctx.saved(1 + i));
    const Tensor kept = ctx.extra.empty() ? Tensor() : ctx.extra.front();
    GradList grads;
    grads.resize(1 + tensors.size());
    if (GradMode::is_enabled()) {
      // create_graph: gradients as differentiable functions of the inputs, from
      // the layered pass recomputed on them.
      std::vector<Tensor> targets;
      std::vector<size_t> slots;
      for (size_t i = 0; i < grads.size(); ++i)
        if (ctx.needs_input_grad(i)) {
          targets.push_back(i == 0 ? x : tensors[i - 1]);
          slots.push_back(i);
        }
      if (targets.empty()) return grads;
      const Tensor again = jet_mlp_layered(x, steps_of(plan, tensors), plan.blocks);
      const std::vector<Tensor> found = autograd::grad({again}, targets, {grad}, /*retain_graph=*/true,
                                                       /*create_graph=*/true, /*allow_unused=*/true);
      for (size_t j = 0; j < slots.size(); ++j) grads[slots[j]] = found[j];
      return grads;
    }
    const Tensor xc = x.contiguous(), gc = grad.contiguous();
    const std::vector<JetMlpStep> steps = contiguous(steps_of(plan, tensors));
    if (ctx.needs_input_grad(0)) grads[0] = empty(x.sizes(), x.options());
    for (size_t i = 0; i < tensors.size(); ++i)
      if (ctx.needs_input_grad(1 + i)) grads[1 + i] = empty(tensors[i].sizes(), tensors[i].options());
    dispatch_floating(x.scalar_type(), "jet_mlp_backward", [&]<class T>() {
      const auto layers = kernel_layers<T>(steps);
      std::vector<T*> grad_weight(layers.size(), nullptr), grad_bias(layers.size(), nullptr);
      size_t next = 1;
      for (size_t l = 0; l < layers.size(); ++l) {
        if (!layers[l].linear) continue;
        if (grads[next].defined()) grad_weight[l] = buffer<T>(grads[next]);
        if (grads[next + 1].defined()) grad_bias[l] = buffer<T>(grads[next + 1]);
        next += 2;
      }
      kernels::jet_mlp_backward(plan.blocks.layout(x.size(0), 1), layers.data(), static_cast<int64_t>(layers.size()),
                                buffer<T>(xc), buffer<T>(gc), grads[0].defined() ? buffer<T>(grads[0]) : nullptr,
                                grad_weight.data(), grad_bias.data(), cuda_seam::device_of(x),
                                kept.defined() ? buffer<T>(kept) : nullptr);
    });
    return grads;
  }
};

}  // namespace

bool jet_mlp_fused_applies(const Tensor& x, const std::vector<JetMlpStep>& steps) {
  const ScalarType dtype = x.scalar_type();
  if (dtype != kFloat64 && dtype != kFloat32) return false;
  // On a GPU the kernels' plan travels as kernel arguments, which bounds the coordinates.
  if (!x.is_cpu() && !(x.is_cuda() && x.dim() == 2 && x.size(1) <= kernels::kMaxCudaJetCoordinates)) return false;
  for (const JetMlpStep& step : steps)
    if (step.mask.defined()) return false;
  for (const JetMlpStep& step : steps)
    for (const Tensor* t : {&step.weight, &step.bias})
      if (t->defined() && (t->device() != x.device() || t->scalar_type() != dtype)) return false;
  return true;
}

Tensor jet_mlp(const Tensor& x, const std::vector<JetMlpStep>& steps, const JetBlocks& blocks) {
  GD_INTERNAL_ASSERT(jet_mlp_fused_applies(x, steps), "jet_mlp: the fused op does not apply to these tensors");
  JetMlpPlan plan{blocks, {}};
  for (const JetMlpStep& step : steps) plan.steps.emplace_back(step.linear, step.activation);
  return apply<JetMlpOp>(x, step_tensors(steps), plan);
}

Tensor jet_mlp_layered(const Tensor& x, const std::vector<JetMlpStep>& steps, const JetBlocks& blocks) {
  // A bias still to be added to the value block: a Linear passes it on
  // (W (h + b0) + b1 = W h + (W b0 + b1)), so that the next activation's
  // fused op adds it, never a pass of its own.
  Tensor jet = seed_jet(x, blocks), pending_bias;
  for (const JetMlpStep& step : steps) {
    if (step.linear) {
      const Tensor weight_t = step.weight.t();
      jet = matmul(jet, weight_t);
      if (pending_bias.defined()) {
        pending_bias = matmul(pending_bias, weight_t);
        if (step.bias.defined()) pending_bias = pending_bias + step.bias;
      } else {
        pending_bias = step.bias;
      }
    } else {
      jet = masked(step, jet_activation(step.activation, blocks, jet, pending_bias), jet);
      pending_bias = Tensor();
    }
  }
  if (!pending_bias.defined()) return jet;
  return cat({(jet.select(0, 0) + pending_bias).unsqueeze(0), jet.narrow(0, 1, jet.size(0) - 1)}, 0);
}

Tensor jet_mlp_probed(const Tensor& x, const std::vector<JetMlpStep>& steps, const JetBlocks& blocks,
                      std::vector<JetProbe>& probes) {
  Tensor jet = seed_jet(x, blocks);
  for (const JetMlpStep& step : steps) {
    if (!step.linear) {
      jet = masked(step, jet_activation(step.activation, blocks, jet, Tensor()), jet);
      continue;
    }
    const Tensor input = jet;
    jet = matmul(jet, step.weight.t());
    Tensor probe = zeros(jet.sizes(), jet.options().requires_grad(false)).requires_grad_();
    jet = jet + probe;
    if (step.bias.defined())
      jet = cat({(jet.select(0, 0) + step.bias).unsqueeze(0), jet.narrow(0, 1, jet.size(0) - 1)}, 0);
    probes.push_back({step.weight, step.bias, input.detach(), probe});
  }
  return jet;
}

}  // namespace gradiens::pinn
