// AnyValue (a value of any type passed into or out of a type-erased module) and
// GRADIENS_FORWARD_HAS_DEFAULT_ARGS, which tells AnyModule the defaults of a
// forward's trailing arguments, as libtorch's FORWARD_HAS_DEFAULT_ARGS.
#pragma once

#include <any>
#include <typeinfo>
#include <utility>
#include <vector>

#include "kernels/error.h"
#include "engine/type_name.h"

namespace gradiens::nn {

class AnyModule;

// A value of any type passed into or out of a module of a Sequential
// (libtorch's AnyValue).
class AnyValue {
 public:
  template <class T>
    requires(!std::is_same_v<std::decay_t<T>, AnyValue>)
  explicit AnyValue(T&& value) : value_(std::forward<T>(value)) {}
  const std::type_info& type_info() const { return value_.type(); }
  template <class T>
  T* try_get() {
    return std::any_cast<T>(&value_);
  }
  template <class T>
  T get() const {
    if (const T* held = std::any_cast<T>(&value_)) return *held;
    throw Error("Attempted to cast AnyValue to " + demangled_type_name(typeid(T)) + ", but its actual type is " +
                demangled_type_name(value_.type()));
  }

 private:
  std::any value_;
};

// In a module's class: forward's arguments from the first index listed on have
// these defaults when AnyModule (or Sequential) calls forward with fewer
// arguments, e.g. GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}).
#define GRADIENS_FORWARD_HAS_DEFAULT_ARGS(...)                                                          \
  friend class ::gradiens::nn::AnyModule;                                                               \
  static std::vector<std::pair<unsigned int, ::gradiens::nn::AnyValue>> _forward_default_arguments() { \
    return {__VA_ARGS__};                                                                               \
  }

}  // namespace gradiens::nn
