// The Taylor-mode forward pass through an MLP (pinn/taylor.h): the request's
// checks, the network as a list of steps, and the outputs read off its jet.
#include "pinn/taylor.h"

#include <algorithm>
#include <numbers>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/functions.h"
#include "kernels/error.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "pinn/fourier.h"
#include "pinn/taylor/jet_mlp.h"

namespace gradiens::pinn {

namespace {

std::optional<JetActivation> activation_of(const nn::Module& m) {
  if (dynamic_cast<const nn::TanhImpl*>(&m)) return JetActivation::Tanh;
  if (dynamic_cast<const nn::SigmoidImpl*>(&m)) return JetActivation::Sigmoid;
  if (dynamic_cast<const nn::SiLUImpl*>(&m)) return JetActivation::Silu;
  if (dynamic_cast<const nn::ReLUImpl*>(&m)) return JetActivation::Relu;
  return std::nullopt;
}

bool supported_layer(const nn::Module& m) {
  return dynamic_cast<const nn::LinearImpl*>(&m) || dynamic_cast<const nn::IdentityImpl*>(&m) ||
         dynamic_cast<const FourierFeaturesImpl*>(&m) || dynamic_cast<const PeriodicEmbeddingImpl*>(&m) ||
         activation_of(m).has_value();
}

// A Linear's weight [out, in] must take the `width` features the layers
// before it give.
void add_linear(std::vector<JetMlpStep>& steps, int64_t& width, const Tensor& weight, const Tensor& bias,
                const nn::Module& layer) {
  GD_CHECK(weight.dim() == 2 && weight.size(1) == width,
           fmt::format("pinn::taylor_forward: a {} layer ({}) takes {} input features, but its input has {}",
                       layer.name(), layer.extra_repr(), weight.dim() == 2 ? weight.size(1) : -1, width));
  steps.push_back({true, weight, bias, JetActivation::Tanh});
  width = weight.size(0);
}

// The network as a list of Linear and activation steps; `width` is the
// number of features reaching the current layer.
void flatten(const nn::Module& net, std::vector<JetMlpStep>& steps, int64_t& width) {
  if (auto* sequential = dynamic_cast<const nn::SequentialImpl*>(&net)) {
    for (const nn::AnyModule& layer : *sequential) flatten(*layer.ptr(), steps, width);
    return;
  }
  if (auto* linear = dynamic_cast<const nn::LinearImpl*>(&net)) return add_linear(steps, width, linear->weight, linear->bias, net);
  if (auto activation = activation_of(net)) {
    steps.push_back({false, Tensor(), Tensor(), *activation});
    return;
  }
  if (dynamic_cast<const nn::IdentityImpl*>(&net)) return;
  if (auto* fourier = dynamic_cast<const FourierFeaturesImpl*>(&net)) {
    // [sin(2 pi x B), cos(2 pi x B)] is the linear map 2 pi [B, B] followed by
    // sin, with cos z = sin(z + pi/2) as a bias of pi/2 on the second half.
    const Tensor& frequencies = fourier->frequencies;  // [in_features, k]
    const int64_t k = frequencies.size(1);
    const Tensor weight = (cat({frequencies, frequencies}, 1) * (2 * std::numbers::pi)).t().contiguous();
    const auto options = frequencies.options().requires_grad(false);
    const Tensor phase = cat({zeros({k}, options), full({k}, std::numbers::pi / 2, options)}, 0);
    add_linear(steps, width, weight, phase, net);
    steps.push_back({false, Tensor(), Tensor(), JetActivation::Sin});
    return;
  }
  if (auto* periodic = dynamic_cast<const PeriodicEmbeddingImpl*>(&net)) {
    // cos(w x_j) = sin(w x_j + pi/2) and sin(w x_j): a linear map with phases
    // followed by sin on those columns; the other coordinates pass through
    // (weight e_j, phase 0, masked out of the sin).
    const int64_t out = periodic->out_features(), in = periodic->in_features();
    GD_CHECK(in == width, fmt::format("pinn::taylor_forward: a PeriodicEmbedding ({}) takes {} input features, but its "
                                      "input has {}", periodic->extra_repr(), in, width));
    std::vector<double> weight(static_cast<size_t>(out * in), 0.0), phase(static_cast<size_t>(out), 0.0),
        mask(static_cast<size_t>(out), 0.0);
    int64_t column = 0;
    for (int64_t j = 0; j < in; ++j) {
      const double period = periodic->periods[static_cast<size_t>(j)];
      if (period == 0) {
        weight[static_cast<size_t>(column++ * in + j)] = 1;
        continue;
      }
      for (int64_t k = 1; k <= periodic->harmonics; ++k)
        for (const double shift : {std::numbers::pi / 2, 0.0}) {  // cos, then sin
          weight[static_cast<size_t>(column * in + j)] = 2 * std::numbers::pi * static_cast<double>(k) / period;
          phase[static_cast<size_t>(column)] = shift;
          mask[static_cast<size_t>(column++)] = 1;
        }
    }
    const auto options = TensorOptions().dtype(kFloat64);
    auto as_tensor = [&](const std::vector<double>& v) {
      return from_blob(const_cast<double*>(v.data()), {static_cast<int64_t>(v.size())}, options).clone();
    };
    add_linear(steps, width, as_tensor(weight).reshape({out, in}), as_tensor(phase), net);
    steps.push_back({false, Tensor(), Tensor(), JetActivation::Sin, as_tensor(mask)});
    return;
  }
  throw Error(fmt::format("pinn::taylor_forward: a {} layer is not Linear, FourierFeatures or an elementwise "
                          "activation (the Taylor engine takes MLPs; use the nested operators of pinn/operators.h)",
                          net.name()));
}

JetBlocks checked_blocks(const TaylorRequest& request, int64_t d) {
  const std::string where = "pinn::taylor_forward";
  GD_CHECK(request.laplacian_weights.empty() || request.laplacian,
           where + ": laplacian_weights are given but laplacian is false (set laplacian = true to carry it)");
  GD_CHECK(request.laplacian_weights.empty() || static_cast<int64_t>(request.laplacian_weights.size()) == d,
           fmt::format("{}: laplacian_weights has {} values but x has {} coordinates (give one per coordinate, or "
                       "none for the plain Laplacian)", where, request.laplacian_weights.size(), d));
  GD_CHECK(request.pure_order >= 2 && request.pure_order <= 4,
           fmt::format("{}: pure_order must be 2, 3 or 4, got {} (first derivatives are in gradient)", where,
                       request.pure_order));
  for (size_t p = 0; p < request.pure_dims.size(); ++p) {
    const int64_t dim = request.pure_dims[p];
    GD_CHECK(dim >= 0 && dim < d, fmt::format("{}: pure dim {} is out of range for x with {} coordinates", where,
                                              dim, d));
    GD_CHECK(std::find(request.pure_dims.begin(), request.pure_dims.begin() + p, dim) == request.pure_dims.begin() + p,
             fmt::format("{}: pure dim {} is listed twice in pure_dims [{}]", where, dim,
                         fmt::join(request.pure_dims, ", ")));
  }
  return {d, request.laplacian, request.laplacian_weights, request.pure_dims, request.pure_order};
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

TaylorOutputs taylor_forward(const nn::Module& net, const Tensor& x, const TaylorRequest& request,
                             std::vector<JetProbe>* probes) {
  GD_CHECK(x.defined() && x.dim() == 2,
           fmt::format("pinn::taylor_forward: x must be [N, d], got {}",
                       x.defined() ? fmt::format("[{}]", fmt::join(x.sizes(), ", ")) : "an undefined tensor"));
  GD_CHECK(x.is_floating_point(), "pinn::taylor_forward: x must be floating point");
  const int64_t d = x.size(1);
  const JetBlocks blocks = checked_blocks(request, d);
  std::vector<JetMlpStep> steps;
  int64_t width = d;
  flatten(net, steps, width);
  for (JetMlpStep& step : steps)  // an embedding's constant weights take the points' dtype and device
    for (Tensor* t : {&step.weight, &step.bias, &step.mask})
      if (t->defined() && !t->requires_grad() && (t->scalar_type() != x.scalar_type() || t->device() != x.device()))
        *t = t->to(x.device(), x.scalar_type());
  const Tensor jet = probes                               ? jet_mlp_probed(x, steps, blocks, *probes)
                     : jet_mlp_fused_applies(x, steps) ? jet_mlp(x, steps, blocks)
                                                       : jet_mlp_layered(x, steps, blocks);

  TaylorOutputs out;
  out.value = jet.select(0, 0);
  out.gradient = jet.narrow(0, 1, d).permute({1, 2, 0});
  if (blocks.laplacian) out.laplacian = jet.select(0, blocks.laplacian_block());
  out.pure_dims_ = blocks.pure_dims;
  out.pure_order_ = blocks.pure_order;
  for (size_t p = 0; p < blocks.pure_dims.size(); ++p)
    for (int order = 2; order <= blocks.pure_order; ++order)
      out.pure_.push_back(jet.select(0, blocks.pure_block(static_cast<int64_t>(p), order)));
  return out;
}

Tensor TaylorOutputs::pure(int64_t dim, int order) const {
  GD_CHECK(gradient.defined(), "pinn::TaylorOutputs::pure: these outputs are empty (make them by taylor_forward)");
  const int64_t d = gradient.size(2);
  GD_CHECK(dim >= 0 && dim < d, fmt::format("pinn::TaylorOutputs::pure: dim {} is out of range for x with {} "
                                            "coordinates", dim, d));
  GD_CHECK(order >= 0 && order <= 4, fmt::format("pinn::TaylorOutputs::pure: order must be 0..4, got {}", order));
  if (order == 0) return value;
  if (order == 1) return gradient.select(2, dim);
  const auto found = std::find(pure_dims_.begin(), pure_dims_.end(), dim);
  GD_CHECK(found != pure_dims_.end() && order <= pure_order_,
           fmt::format("pinn::TaylorOutputs::pure: d^{0}u/dx_{1}^{0} was not carried; request it with "
                       "TaylorRequest::pure_dims containing {1} and pure_order >= {0}", order, dim));
  const int64_t index = found - pure_dims_.begin();
  return pure_[static_cast<size_t>(index * (pure_order_ - 1) + (order - 2))];
}

}  // namespace gradiens::pinn
