// What the builders of a config's "pinn" section share: the domain and its
// coordinate names, the trainable PDE parameters, the dtype and seed, and the
// exact or reference solution (data conditions sample it). And the built
// reference: a solution function and, when it has one, its natural grid.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "pinn/conditions.h"

namespace gradiens::train {

using json = nlohmann::json;

// u at points [N, d] (float64 [N, 1]).
using SolutionFunction = std::function<Tensor(const Tensor& points)>;

struct PinnReference {
  SolutionFunction solution;
  std::string description;        // "Cole-Hopf, 64 Gauss-Hermite nodes"
  std::vector<std::vector<double>> grid;  // per coordinate, when the reference has a natural grid
};

// A PDE coefficient: a number, or a trainable parameter (inverse problems).
using Coefficient = std::variant<double, Tensor>;

struct PinnContext {
  pinn::GeometryPtr domain;
  bool has_time = false;
  std::vector<std::string> names;             // coordinate names, time last
  std::map<std::string, Tensor> parameters;   // trainable PDE parameters by name
  ScalarType dtype = kFloat64;
  uint64_t seed = 0;
  std::string base_dir;
  SolutionFunction reference;                 // empty without a reference

  int64_t dims() const { return static_cast<int64_t>(names.size()); }
  int64_t spatial_dims() const { return dims() - (has_time ? 1 : 0); }
  // The expression at config[key] (a string, or a number) as a point function.
  pinn::PointFunction expression(const json& config, const std::string& key, const std::string& path) const;
  // A number, an expression of constants ("0.01/pi"), or a parameter's name.
  Coefficient coefficient(const json& config, const std::string& key, const std::string& path) const;
  // A coordinate given by index or by name.
  int64_t coordinate(const json& config, const std::string& key, const std::string& path) const;
};

// c * t for a coefficient and a tensor.
Tensor scale(const Coefficient& c, const Tensor& t);
// The coefficient's value now.
double value_of(const Coefficient& c);

}  // namespace gradiens::train
