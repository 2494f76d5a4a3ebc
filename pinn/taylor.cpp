// The Taylor-mode forward pass through an MLP (pinn/taylor.h).
#include "pinn/taylor.h"

#include <fmt/format.h>

#include "engine/functions.h"
#include "kernels/error.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"

namespace gradiens::pinn {

namespace {

// The jet of every unit: value h [N, w], first derivatives G [d, N, w] and
// Laplacian L [N, w].
struct Jet {
  Tensor h, g, l;
};

// s'(z) and s''(z) of an activation, from z and s(z).
struct Derivatives {
  Tensor first, second;
};

bool supported_layer(const nn::Module& m) {
  return dynamic_cast<const nn::LinearImpl*>(&m) || dynamic_cast<const nn::TanhImpl*>(&m) ||
         dynamic_cast<const nn::SigmoidImpl*>(&m) || dynamic_cast<const nn::SiLUImpl*>(&m) ||
         dynamic_cast<const nn::ReLUImpl*>(&m) || dynamic_cast<const nn::IdentityImpl*>(&m);
}

Jet activate(const Jet& in, const Tensor& value, const Derivatives& d) {
  return {value, d.first * in.g, d.first * in.l + d.second * (in.g * in.g).sum({0})};
}

Jet apply_layer(const nn::Module& m, const Jet& in) {
  if (auto* linear = dynamic_cast<const nn::LinearImpl*>(&m)) {
    const Tensor wt = linear->weight.t();
    Tensor h = matmul(in.h, wt);
    if (linear->bias.defined()) h = h + linear->bias;
    return {h, matmul(in.g, wt), matmul(in.l, wt)};
  }
  const Tensor& z = in.h;
  if (dynamic_cast<const nn::TanhImpl*>(&m)) {
    Tensor t = tanh(z), first = 1 - t * t;
    return activate(in, t, {first, -2 * t * first});
  }
  if (dynamic_cast<const nn::SigmoidImpl*>(&m)) {
    Tensor s = sigmoid(z), first = s * (1 - s);
    return activate(in, s, {first, first * (1 - 2 * s)});
  }
  if (dynamic_cast<const nn::SiLUImpl*>(&m)) {
    Tensor s = sigmoid(z), ds = s * (1 - s);
    return activate(in, z * s, {s + z * ds, ds * (2 + z * (1 - 2 * s))});
  }
  if (dynamic_cast<const nn::ReLUImpl*>(&m)) {
    Tensor on = (z > 0).to(z.scalar_type());
    return activate(in, relu(z), {on, zeros_like(z)});
  }
  if (dynamic_cast<const nn::IdentityImpl*>(&m)) return in;
  throw Error(fmt::format("pinn::taylor_forward: a {} layer is not an elementwise activation or Linear (the Taylor "
                          "engine takes MLPs; use the nested operators of pinn/operators.h)", m.name()));
}

Jet run(const nn::Module& net, Jet jet) {
  if (auto* sequential = dynamic_cast<const nn::SequentialImpl*>(&net)) {
    for (const nn::AnyModule& layer : *sequential) jet = run(*layer.ptr(), std::move(jet));
    return jet;
  }
  return apply_layer(net, jet);
}

}  // namespace

bool taylor_supported(const nn::Module& net) {
  if (auto* sequential = dynamic_cast<const nn::SequentialImpl*>(&net)) {
    for (const nn::AnyModule& layer : *sequential)
      if (!taylor_supported(*layer.ptr())) return false;
    return true;
  }
  return supported_layer(net);
}

TaylorOutputs taylor_forward(const nn::Module& net, const Tensor& x) {
  GD_CHECK(x.defined() && x.dim() == 2, "pinn::taylor_forward: x must be [N, d]");
  const int64_t n = x.size(0), d = x.size(1);
  // The seed: h = x, G_i = e_i for every sample, L = 0.
  Jet jet{x, eye(d, x.options().requires_grad(false)).unsqueeze(1).expand({d, n, d}),
          zeros({n, d}, x.options().requires_grad(false))};
  jet = run(net, std::move(jet));
  return {jet.h, jet.g.permute({1, 2, 0}), jet.l};
}

}  // namespace gradiens::pinn
