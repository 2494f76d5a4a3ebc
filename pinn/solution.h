// The network's solution at a batch of points, with the derivatives a PDE or
// condition asks for. Two engines compute them: nested reverse mode
// (pinn/operators.h) for any network, and the Taylor-mode engine
// (pinn/taylor.h) for MLPs, which carries every declared derivative through
// one forward pass. Engine::kAuto picks Taylor mode when the network and the
// declared derivatives allow it. An output transform (hard constraints) maps
// the network's output y at x to the solution u = transform(x, y); in Taylor
// mode the chain rule carries the network's jet through it, with the
// transform's own partial derivatives taken by autograd (it is elementwise
// and cheap next to the network):
//   u_i  = T_xi + sum_j T_yj y_j,i
//   u_ii = T_xixi + 2 sum_j T_xiyj y_j,i + sum_jk T_yjyk y_j,i y_k,i + sum_j T_yj y_j,ii.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/modules/container.h"
#include "pinn/taylor/jet_mlp.h"

namespace gradiens::pinn {

enum class Engine { kAuto, kNested, kTaylor };
Engine parse_engine(const std::string& name);  // "auto", "nested", "taylor"
std::string engine_name(Engine engine);

// What a residual reads: partial derivatives as multi-indices of coordinates
// ({0}: u_x0, {0, 0}: u_x0x0, {0, 1}: u_x0x1), and the Laplacian, weighted by
// coordinate (sum_i c_i d2u/dx_i^2; no weights: every c_i = 1).
struct DerivativeNeeds {
  std::vector<std::vector<int64_t>> partials;
  bool laplacian = false;
  std::vector<double> laplacian_weights;

  // The union of two needs; their Laplacian weights must agree.
  DerivativeNeeds merged(const DerivativeNeeds& other) const;
};

// u = transform(x, y): x [N, d] the points, y [N, m] the network's output.
using OutputTransform = std::function<Tensor(const Tensor& x, const Tensor& y)>;

class Solution {
 public:
  // Evaluates `net` at `x` [N, d] (float64 or float32). The engine is
  // resolved here: Taylor mode needs an MLP (taylor_supported), pure
  // derivatives of order <= 4 (<= 2 under an output transform) and no mixed
  // ones; kTaylor where that fails is an Error saying why. `probes`, when
  // given, asks Taylor mode to put a probe on every Linear layer
  // (pinn/taylor/jet_mlp.h) and is an Error where the engine is not Taylor.
  Solution(const nn::AnyModule& net, const Tensor& x, const DerivativeNeeds& needs, Engine engine = Engine::kAuto,
           const OutputTransform& transform = {}, std::vector<JetProbe>* probes = nullptr);

  // The points (with Engine::kNested, a leaf that requires grad).
  const Tensor& x() const { return x_; }
  int64_t size() const { return x_.size(0); }
  Engine engine() const { return engine_; }
  // The solution [N, m], and its column `component` [N, 1].
  const Tensor& output() const { return output_; }
  Tensor u(int64_t component = 0) const;
  // d^k u / dx_{dims[0]} ... dx_{dims[k-1]} [N, 1]; {} is u itself. In Taylor
  // mode only the declared derivatives (and every first one) are available.
  Tensor d(const std::vector<int64_t>& dims, int64_t component = 0);
  // du/dx_dim [N, 1]; the whole gradient [N, d].
  Tensor d(int64_t dim, int64_t component = 0) { return d(std::vector<int64_t>{dim}, component); }
  Tensor gradient(int64_t component = 0);
  // The (weighted) Laplacian of the needs [N, 1].
  Tensor laplacian(int64_t component = 0);

 private:
  Tensor check_component(int64_t component) const;
  // Taylor mode under an output transform: u and its declared derivatives
  // from the network's jet by the chain rule.
  void transform_jet(const OutputTransform& transform, const Tensor& y, const Tensor& gradient, const Tensor& laplacian,
                     const std::map<int64_t, Tensor>& second);
  std::string describe(const std::vector<int64_t>& dims) const;
  DerivativeNeeds needs_;
  Engine engine_ = Engine::kNested;
  Tensor x_, output_;
  std::map<std::pair<int64_t, std::vector<int64_t>>, Tensor> partials_;  // (component, sorted dims) -> [N, 1]
  std::map<int64_t, Tensor> gradients_, laplacians_;
};

// Whether Taylor mode can serve `needs` for `net` with `transform`; when not,
// `why` (if given) says why.
bool taylor_can_serve(const nn::AnyModule& net, const DerivativeNeeds& needs, bool has_transform,
                      std::string* why = nullptr);

}  // namespace gradiens::pinn
