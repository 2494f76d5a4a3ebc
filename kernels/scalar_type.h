// ScalarType (the dtype of a buffer), its C++ types, names and PyTorch's type
// promotion, plus the one dtype dispatch every op goes through.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/error.h"
#include "kernels/reduced_float.h"

namespace gradiens {

enum class ScalarType : int8_t {
  // New dtypes are appended: the numeric values are stored in checkpoints.
  UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64, Bool, Int8, Int16,
  // libtorch's names for the same dtypes (at::ScalarType::Float, ...).
  Byte = UInt8, Char = Int8, Short = Int16, Int = Int32, Long = Int64, Half = Float16, Float = Float32,
  Double = Float64
};

constexpr ScalarType kUInt8 = ScalarType::UInt8, kByte = ScalarType::UInt8;
constexpr ScalarType kInt8 = ScalarType::Int8, kChar = ScalarType::Int8;
constexpr ScalarType kInt16 = ScalarType::Int16, kShort = ScalarType::Int16;
constexpr ScalarType kInt32 = ScalarType::Int32, kInt = ScalarType::Int32;
constexpr ScalarType kInt64 = ScalarType::Int64, kLong = ScalarType::Int64;
constexpr ScalarType kFloat16 = ScalarType::Float16, kHalf = ScalarType::Float16;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat32 = ScalarType::Float32, kFloat = ScalarType::Float32;
constexpr ScalarType kFloat64 = ScalarType::Float64, kDouble = ScalarType::Float64;
constexpr ScalarType kBool = ScalarType::Bool;

constexpr size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return 1;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Float16: return 2;
    case ScalarType::BFloat16: return 2;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
    case ScalarType::Bool: return 1;
    case ScalarType::Int8: return 1;
    case ScalarType::Int16: return 2;
  }
  return 0;
}

constexpr bool is_floating_point(ScalarType t) {
  return t == kFloat32 || t == kFloat64 || t == kFloat16 || t == kBFloat16;
}
// float16 and bfloat16: stored in 16 bits, computed in float32.
constexpr bool is_reduced_floating_point(ScalarType t) { return t == kFloat16 || t == kBFloat16; }
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return t == kUInt8 || t == kInt8 || t == kInt16 || t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}
// Whether the dtype holds negative values (c10's isSignedType): all but bool and uint8.
constexpr bool is_signed(ScalarType t) { return t != kBool && t != kUInt8; }

// "float32", "int64", ... as PyTorch prints them after "torch.".
std::string_view dtype_name(ScalarType t);
// "FloatTensor", "DoubleTensor", ... as PyTorch's error messages name tensors.
std::string_view legacy_tensor_type_name(ScalarType t);
// "Float", "Double", "Long", ... as c10 prints a ScalarType (libtorch's messages
// and its operator<< for a dtype).
std::string c10_type_name(ScalarType t);
// Prints c10_type_name ("Float"), as libtorch's operator<< for a dtype.
std::ostream& operator<<(std::ostream& out, ScalarType t);

// The dtype of floating tensors made without one (factories, tensor({1.5}),
// integer division), float32 until set_default_dtype changes it for the whole
// process, as torch.set_default_dtype. Only floating dtypes are accepted.
ScalarType get_default_dtype();
void set_default_dtype(ScalarType dtype);
// libtorch's C++ set_default_dtype(TypeMeta), which takes any dtype (an integer
// one too: factories then make integer tensors by default).
void set_default_dtype_unchecked(ScalarType dtype);

// PyTorch's promotion lattice for two dtypes of the same priority class:
// bool < uint8, int8 < int16 < int32 < int64 < floating (uint8 with int8 gives
// int16); between two floating types the wider.
ScalarType promote_types(ScalarType a, ScalarType b);

// C++ type of each dtype.
template <ScalarType> struct CppType;
template <> struct CppType<ScalarType::UInt8> { using type = uint8_t; };
template <> struct CppType<ScalarType::Int8> { using type = int8_t; };
template <> struct CppType<ScalarType::Int16> { using type = int16_t; };
template <> struct CppType<ScalarType::Int32> { using type = int32_t; };
template <> struct CppType<ScalarType::Int64> { using type = int64_t; };
template <> struct CppType<ScalarType::Float32> { using type = float; };
template <> struct CppType<ScalarType::Float64> { using type = double; };
template <> struct CppType<ScalarType::Bool> { using type = bool; };
template <> struct CppType<ScalarType::Float16> { using type = Half; };
template <> struct CppType<ScalarType::BFloat16> { using type = BFloat16; };

template <class T> constexpr ScalarType scalar_type_of();
template <> constexpr ScalarType scalar_type_of<uint8_t>() { return kUInt8; }
template <> constexpr ScalarType scalar_type_of<int8_t>() { return kInt8; }
template <> constexpr ScalarType scalar_type_of<int16_t>() { return kInt16; }
template <> constexpr ScalarType scalar_type_of<int32_t>() { return kInt32; }
template <> constexpr ScalarType scalar_type_of<int64_t>() { return kInt64; }
template <> constexpr ScalarType scalar_type_of<float>() { return kFloat32; }
template <> constexpr ScalarType scalar_type_of<double>() { return kFloat64; }
template <> constexpr ScalarType scalar_type_of<bool>() { return kBool; }
template <> constexpr ScalarType scalar_type_of<Half>() { return kFloat16; }
template <> constexpr ScalarType scalar_type_of<BFloat16>() { return kBFloat16; }

[[noreturn]] void throw_unsupported_dtype(std::string_view op, ScalarType t);

// The one dtype dispatch: calls f.template operator()<T>() for the C++ type of
// `t`, or throws naming `op` when the dtype is not in the family.
//   dispatch_floating(dt, "exp", [&]<class T> { ... });
// The families:
//   dispatch_floating               float, double: kernels that exist only for
//                                   those two (BLAS, LAPACK, the vectorized math)
//   dispatch_floating_and_reduced   + Half, BFloat16
//   dispatch_numeric                float, double, int64, int32, int16, int8, uint8
//   dispatch_numeric_and_reduced    + Half, BFloat16
//   dispatch_all                    every dtype (data movement, comparisons)
// A loop over Half/BFloat16 computes in opmath_t<T> (float) and rounds once per
// stored result; an accumulator must be opmath_t<T> or wider, never T.
template <class F>
decltype(auto) dispatch_floating(ScalarType t, std::string_view op, F&& f) {
  switch (t) {
    case ScalarType::Float32: return f.template operator()<float>();
    case ScalarType::Float64: return f.template operator()<double>();
    default: throw_unsupported_dtype(op, t);
  }
}

template <class F>
decltype(auto) dispatch_floating_and_reduced(ScalarType t, std::string_view op, F&& f) {
  switch (t) {
    case ScalarType::Float16: return f.template operator()<Half>();
    case ScalarType::BFloat16: return f.template operator()<BFloat16>();
    default: return dispatch_floating(t, op, std::forward<F>(f));
  }
}

template <class F>
decltype(auto) dispatch_numeric(ScalarType t, std::string_view op, F&& f) {
  switch (t) {
    case ScalarType::Float32: return f.template operator()<float>();
    case ScalarType::Float64: return f.template operator()<double>();
    case ScalarType::Int64: return f.template operator()<int64_t>();
    case ScalarType::Int32: return f.template operator()<int32_t>();
    case ScalarType::Int16: return f.template operator()<int16_t>();
    case ScalarType::Int8: return f.template operator()<int8_t>();
    case ScalarType::UInt8: return f.template operator()<uint8_t>();
    default: throw_unsupported_dtype(op, t);
  }
}

template <class F>
decltype(auto) dispatch_numeric_and_reduced(ScalarType t, std::string_view op, F&& f) {
  switch (t) {
    case ScalarType::Float16: return f.template operator()<Half>();
    case ScalarType::BFloat16: return f.template operator()<BFloat16>();
    default: return dispatch_numeric(t, op, std::forward<F>(f));
  }
}

template <class F>
decltype(auto) dispatch_all(ScalarType t, std::string_view op, F&& f) {
  if (t == ScalarType::Bool) return f.template operator()<bool>();
  return dispatch_numeric_and_reduced(t, op, std::forward<F>(f));
}

}  // namespace gradiens
