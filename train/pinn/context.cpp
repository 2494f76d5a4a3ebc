// Expressions, coefficients and coordinates of a "pinn" section (train/pinn/context.h).
#include "train/pinn/context.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/expression.h"
#include "train/config/validate.h"

namespace gradiens::train {

pinn::PointFunction PinnContext::expression(const json& config, const std::string& key, const std::string& path) const {
  const json& value = config.at(key);
  const std::string text = value.is_string() ? value.get<std::string>() : fmt::format("{}", value.get<double>());
  try {
    auto parsed = std::make_shared<pinn::Expression>(text, names);
    return [parsed](const Tensor& x) { return parsed->evaluate(x); };
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", join_path(path, key), e.what()));
  }
}

Coefficient PinnContext::coefficient(const json& config, const std::string& key, const std::string& path) const {
  const json& value = config.at(key);
  if (value.is_number()) return value.get<double>();
  const std::string text = value.get<std::string>();
  if (auto it = parameters.find(text); it != parameters.end()) return it->second;
  try {
    return pinn::Expression(text, {}).evaluate(std::vector<double>{});
  } catch (const Error& e) {
    std::vector<std::string> known;
    for (const auto& [name, tensor] : parameters) known.push_back(name);
    throw Error(fmt::format("{}: \"{}\" is neither a number, an expression of constants, nor a trainable parameter "
                            "(parameters: {}): {}", join_path(path, key), text,
                            known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")), e.what()));
  }
}

int64_t PinnContext::coordinate(const json& config, const std::string& key, const std::string& path) const {
  const json& value = config.at(key);
  if (value.is_number_integer()) {
    const int64_t index = value.get<int64_t>();
    if (index < 0 || index >= dims())
      throw Error(fmt::format("{}: coordinate {} is out of range (the domain has {}: {})", join_path(path, key), index,
                              dims(), fmt::join(names, ", ")));
    return index;
  }
  const std::string name = value.get<std::string>();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    throw Error(fmt::format("{}: unknown coordinate \"{}\" (coordinates: {})", join_path(path, key), name,
                            fmt::join(names, ", ")));
  return it - names.begin();
}

Tensor scale(const Coefficient& c, const Tensor& t) {
  if (const double* number = std::get_if<double>(&c)) return *number == 1.0 ? t : t * *number;
  return std::get<Tensor>(c).to(t.scalar_type()) * t;
}

double value_of(const Coefficient& c) {
  if (const double* number = std::get_if<double>(&c)) return *number;
  return std::get<Tensor>(c).item<double>();
}

}  // namespace gradiens::train
