// Scalar: a Python-like number (double, int64 or bool) passed to ops next to
// tensors, e.g. `x * 1.0001`; it takes part in type promotion only by category.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/reduced_float.h"
#include "kernels/scalar_type.h"

namespace gradiens {

class Scalar {
 public:
  enum class Kind : int8_t { Floating, Integral, Boolean };

  Scalar() : kind_(Kind::Integral), i_(0) {}
  Scalar(double v) : kind_(Kind::Floating), d_(v) {}
  Scalar(float v) : kind_(Kind::Floating), d_(v) {}
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}
  Scalar(bool v) : kind_(Kind::Boolean), i_(v) {}
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Scalar(I v) : kind_(Kind::Integral), i_(static_cast<int64_t>(v)) {}

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Floating; }
  bool is_integral() const { return kind_ == Kind::Integral; }
  bool is_boolean() const { return kind_ == Kind::Boolean; }

  template <class T>
  T to() const {
    return kind_ == Kind::Floating ? static_cast<T>(d_) : static_cast<T>(i_);
  }
  double to_double() const { return to<double>(); }
  int64_t to_long() const { return to<int64_t>(); }
  // libtorch's spellings.
  double toDouble() const { return to<double>(); }
  float toFloat() const { return to<float>(); }
  int64_t toLong() const { return to<int64_t>(); }
  int toInt() const { return to<int>(); }
  int16_t toShort() const { return to<int16_t>(); }
  int8_t toChar() const { return to<int8_t>(); }
  uint8_t toByte() const { return to<uint8_t>(); }
  bool toBool() const { return kind_ == Kind::Floating ? d_ != 0 : i_ != 0; }
  bool isFloatingPoint() const { return is_floating_point(); }
  bool isIntegral(bool include_bool) const { return is_integral() || (include_bool && is_boolean()); }
  bool isBoolean() const { return is_boolean(); }

  // The dtype a 0-dim tensor made from this scalar alone would have.
  ScalarType default_dtype() const {
    return kind_ == Kind::Floating ? get_default_dtype() : kind_ == Kind::Integral ? kInt64 : kBool;
  }

 private:
  Kind kind_;
  union {
    double d_;
    int64_t i_;
  };
};

}  // namespace gradiens
