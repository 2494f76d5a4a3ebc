// IValue's kind names and its wrong-kind error.
#include "engine/ivalue.h"

#include <fmt/format.h>

namespace gradiens {

std::string_view IValue::tagKind() const {
  static constexpr std::string_view names[] = {"None",   "Tensor",     "Double",  "Int",       "Bool",
                                               "String", "TensorList", "IntList", "DoubleList"};
  return names[value_.index()];
}

Scalar IValue::toScalar() const {
  if (isDouble()) return toDouble();
  if (isInt()) return toInt();
  if (isBool()) return toBool();
  throw_wrong_kind("Scalar");
}

void IValue::throw_wrong_kind(std::string_view wanted) const {
  throw Error(fmt::format("Expected {} but got {}", wanted, tagKind()));
}

}  // namespace gradiens
