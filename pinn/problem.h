// A PINN problem: a domain, its loss terms (the PDE and the conditions),
// trainable PDE parameters (inverse problems), an optional output transform
// (hard constraints), the loss weights and the differentiation engine.
//   Problem problem(domain);
//   problem.add(std::make_shared<OperatorCondition>("pde", PointSpec::interior(10000), needs, residual));
//   problem.add(std::make_shared<DirichletBC>("bc", PointSpec::boundary(200), zero));
//   problem.sample(generator);
//   auto losses = problem.losses(net);  // losses.total.backward()
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pinn/conditions.h"
#include "pinn/weighting.h"

namespace gradiens::pinn {

// Causal training of a time-dependent term (Wang, Sankaran and Perdikaris,
// 2022): its points are split by time into `chunks` equal slices with mean
// squared residuals L_0 .. L_{M-1}, and the term's loss is
//   (1/M) sum_i w_i L_i,  w_i = exp(-epsilon sum_{k<i} L_k)  (w_0 = 1),
// the weights held constant (no gradient), so later times count only once
// the earlier ones are fitted. chunks = 0 turns it off.
struct CausalOptions {
  int64_t chunks = 0;
  double epsilon = 1.0;
};

struct Losses {
  std::vector<std::string> names;  // one per term, in the order added
  std::vector<Tensor> values;      // unweighted mean squared residuals, scalars
  Tensor total;                    // sum_i weight_i values_i
};

class Problem {
 public:
  explicit Problem(GeometryPtr domain);

  const Geometry& domain() const { return *domain_; }
  const GeometryPtr& domain_ptr() const { return domain_; }
  // Adds a term (names are unique); its weight starts at `weight`.
  Problem& add(TermPtr term, double weight = 1.0);
  const std::vector<TermPtr>& terms() const { return terms_; }
  Term& term(const std::string& name) const;
  bool has_term(const std::string& name) const;

  // A trainable scalar PDE coefficient (inverse problems), float64 by default,
  // that residual functions read and the optimizer updates beside the network.
  Tensor add_parameter(const std::string& name, double initial, ScalarType dtype = kFloat64);
  const std::vector<std::pair<std::string, Tensor>>& parameters() const { return parameters_; }
  std::vector<Tensor> parameter_tensors() const;

  void set_engine(Engine engine) { engine_ = engine; }
  Engine engine() const { return engine_; }
  void set_output_transform(OutputTransform transform) { transform_ = std::move(transform); }
  const OutputTransform& output_transform() const { return transform_; }
  // The weights of the terms, in the order added (and how they adapt).
  LossWeights& weights() { return weights_; }
  const LossWeights& weights() const { return weights_; }
  void set_weighting(WeightingOptions options);
  // Causal training of the term `name` (the last coordinate is time).
  void set_causal(const std::string& name, CausalOptions options);
  // While held, the causal weights w_i keep the values the first losses()
  // call computes: every evaluation of one L-BFGS step (its line search
  // included) then sees the same objective. Releasing forgets them.
  void hold_causal_weights(bool hold);

  // Draws the points of every term.
  void sample(Generator& generator);
  // Draws fresh points for one term.
  void resample(const std::string& term, Generator& generator);

  // The solution of `net` at `x` with this problem's engine and transform
  // (and probes on its Linear layers, for per-sample Jacobians).
  Solution solve(const nn::AnyModule& net, const Tensor& x, const DerivativeNeeds& needs,
                 std::vector<JetProbe>* probes = nullptr) const;
  // Every term's loss at its points, and the weighted total.
  Losses losses(const nn::AnyModule& net) const;
  // Per-point factors f [N] (float64) with the weighted loss of term `index`
  // equal to sum_n f_n sum_c r_nc^2 for its residual r [N, k]: weight / (N k),
  // or under causal training each slice's share (held as losses() holds it).
  Tensor point_weights(size_t index, const Tensor& r) const;
  // The engine each term ran on in the last losses() call.
  const std::vector<Engine>& last_engines() const { return last_engines_; }

  // |r| (the L2 norm of each point's residual row) of an operator condition at
  // arbitrary points, float64 [N], evaluated in chunks without keeping a graph.
  Tensor residual_magnitude(const nn::AnyModule& net, const std::string& term, const Tensor& points,
                            int64_t chunk = 8192) const;

  // What a checkpoint keeps: every term's drawn points, the weights and the
  // PDE parameters' values; loading restores them exactly.
  std::map<std::string, Tensor> state_dict() const;
  void load_state_dict(const std::map<std::string, Tensor>& state);

 private:
  GeometryPtr domain_;
  std::vector<TermPtr> terms_;
  std::vector<std::pair<std::string, Tensor>> parameters_;
  Engine engine_ = Engine::kAuto;
  OutputTransform transform_;
  LossWeights weights_{{}, {}};
  std::string causal_term_;
  CausalOptions causal_;
  bool hold_causal_ = false;
  mutable Tensor held_causal_weights_;  // [chunks], while held
  mutable std::vector<Engine> last_engines_;
};

}  // namespace gradiens::pinn
