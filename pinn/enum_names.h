// Parsing and naming the pinn enums whose values count 0, 1, ... in the order
// of their names (Sampler, Engine, Weighting, Refinement).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/error.h"

namespace gradiens::pinn {

// The value named `text`, or an Error listing the names ("unknown <what> ...").
template <class E>
E parse_enum_name(std::string_view text, const std::vector<std::string>& names, std::string_view what) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return static_cast<E>(i);
  throw Error(fmt::format("unknown {} \"{}\" (one of {})", what, text, fmt::join(names, ", ")));
}

template <class E>
const std::string& enum_name(E value, const std::vector<std::string>& names) {
  return names.at(static_cast<size_t>(value));
}

}  // namespace gradiens::pinn
