// Names, printing and promotion rules of ScalarType, the printing of sizes, and the internal-error thrower.
#include "kernels/scalar_type.h"

#include <fmt/format.h>

#include <atomic>
#include <ostream>
#include <string>

#include "kernels/small_vector.h"

namespace gradiens {

namespace detail {
void throw_internal_error(const char* condition, const char* file, int line,
                          const std::string& message) {
  throw Error(fmt::format("gradiens internal error (this is a bug, please report it): "
                          "{} at {}:{}: {}",
                          condition, file, line, message));
}
}  // namespace detail

namespace {
std::atomic<ScalarType> default_dtype{ScalarType::Float32};
}  // namespace

ScalarType get_default_dtype() { return default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(ScalarType dtype) {
  if (!is_floating_point(dtype))
    throw Error(fmt::format("only floating-point types are supported as the default type, got {}", c10_type_name(dtype)));
  default_dtype.store(dtype, std::memory_order_relaxed);
}

void set_default_dtype_unchecked(ScalarType dtype) { default_dtype.store(dtype, std::memory_order_relaxed); }

std::string_view dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return "uint8";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int64: return "int64";
    case ScalarType::Float16: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
    case ScalarType::Bool: return "bool";
    case ScalarType::Int8: return "int8";
    case ScalarType::Int16: return "int16";
  }
  return "unknown";
}

std::string_view legacy_tensor_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return "ByteTensor";
    case ScalarType::Int32: return "IntTensor";
    case ScalarType::Int64: return "LongTensor";
    case ScalarType::Float16: return "HalfTensor";
    case ScalarType::BFloat16: return "BFloat16Tensor";
    case ScalarType::Float32: return "FloatTensor";
    case ScalarType::Float64: return "DoubleTensor";
    case ScalarType::Bool: return "BoolTensor";
    case ScalarType::Int8: return "CharTensor";
    case ScalarType::Int16: return "ShortTensor";
  }
  return "UnknownTensor";
}

std::string c10_type_name(ScalarType t) {
  const std::string_view legacy = legacy_tensor_type_name(t);  // "FloatTensor"
  return std::string(legacy.substr(0, legacy.size() - std::string_view("Tensor").size()));
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << c10_type_name(t); }

std::ostream& operator<<(std::ostream& out, IntArrayRef values) {
  out << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out << ']';
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == kBool) return b;
  if (b == kBool) return a;
  bool fa = is_floating_point(a), fb = is_floating_point(b);
  if (fa && fb) {
    // float16 + bfloat16 promotes to float32, as in PyTorch.
    if ((a == kFloat16 && b == kBFloat16) || (a == kBFloat16 && b == kFloat16)) return kFloat32;
    auto rank = [](ScalarType t) { return t == kFloat64 ? 3 : t == kFloat32 ? 2 : 1; };
    return rank(a) >= rank(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  // uint8 and int8 hold values the other cannot: the smallest type holding both is int16.
  if ((a == kUInt8 && b == kInt8) || (a == kInt8 && b == kUInt8)) return kInt16;
  auto rank = [](ScalarType t) { return t == kInt64 ? 4 : t == kInt32 ? 3 : t == kInt16 ? 2 : 1; };
  return rank(a) >= rank(b) ? a : b;
}

void throw_unsupported_dtype(std::string_view op, ScalarType t) {
  throw Error(fmt::format("{}: not implemented for dtype {}", op, dtype_name(t)));
}

}  // namespace gradiens
