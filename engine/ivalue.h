// IValue: a value of one of the kinds libtorch code stores in an IValue (none,
// a tensor, a number, a bool, a string, or a list of tensors, integers or
// doubles), for custom autograd functions' saved_data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "engine/tensor.h"

namespace gradiens {

class IValue {
 public:
  IValue() = default;
  IValue(Tensor value) : value_(std::move(value)) {}
  IValue(double value) : value_(value) {}
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  IValue(I value) : value_(static_cast<int64_t>(value)) {}
  IValue(bool value) : value_(value) {}
  IValue(std::string value) : value_(std::move(value)) {}
  IValue(const char* value) : value_(std::string(value)) {}
  IValue(std::vector<Tensor> value) : value_(std::move(value)) {}
  IValue(std::vector<int64_t> value) : value_(std::move(value)) {}
  IValue(std::vector<double> value) : value_(std::move(value)) {}
  IValue(Scalar value) {
    if (value.is_floating_point()) value_ = value.to<double>();
    else if (value.is_boolean()) value_ = value.to<bool>();
    else value_ = value.to<int64_t>();
  }

  bool isNone() const { return std::holds_alternative<std::monostate>(value_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(value_); }
  bool isDouble() const { return std::holds_alternative<double>(value_); }
  bool isInt() const { return std::holds_alternative<int64_t>(value_); }
  bool isBool() const { return std::holds_alternative<bool>(value_); }
  bool isString() const { return std::holds_alternative<std::string>(value_); }
  bool isTensorList() const { return std::holds_alternative<std::vector<Tensor>>(value_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(value_); }
  bool isDoubleList() const { return std::holds_alternative<std::vector<double>>(value_); }
  bool isScalar() const { return isDouble() || isInt() || isBool(); }

  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  // Each to*() throws "Expected Double but got Int" when the value is of another kind.
  double toDouble() const { return get<double>("Double"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  bool toBool() const { return get<bool>("Bool"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  const std::vector<Tensor>& toTensorVector() const { return get<std::vector<Tensor>>("TensorList"); }
  const std::vector<int64_t>& toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  const std::vector<double>& toDoubleVector() const { return get<std::vector<double>>("DoubleList"); }
  Scalar toScalar() const;
  // libtorch's name of the kind held: "None", "Tensor", "Double", "Int", ...
  std::string_view tagKind() const;

 private:
  template <class T>
  const T& get(std::string_view wanted) const {
    if (const T* held = std::get_if<T>(&value_)) return *held;
    throw_wrong_kind(wanted);
  }
  [[noreturn]] void throw_wrong_kind(std::string_view wanted) const;

  std::variant<std::monostate, Tensor, double, int64_t, bool, std::string, std::vector<Tensor>, std::vector<int64_t>,
               std::vector<double>>
      value_;
};

}  // namespace gradiens
