// The drop-in header: a libtorch program's `#include <torch/torch.h>` compiles
// against gradiens. It maps libtorch's namespaces (torch, at, c10,
// torch::nn::functional) and spellings (TORCH_CHECK, TORCH_MODULE, c10::str,
// c10::optional, torch::Dtype, ...) onto gradiens and holds no second
// implementation. What it cannot map is listed in the README (section
// "libtorch compatibility").
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "gradiens.h"

// Each libtorch namespace sees all of gradiens through a using-directive, so a
// qualified name (torch::nn::Linear, at::Tensor, c10::Device) finds gradiens'
// declaration, while the namespaces stay open for a program's own additions
// (`namespace torch { namespace test { ... } }`). A name declared below in the
// libtorch namespace itself wins over gradiens' (qualified lookup looks there
// first): that is where a libtorch spelling differs from gradiens'.
namespace torch {
using namespace ::gradiens;
}
namespace at {
using namespace ::gradiens;
}
namespace c10 {
using namespace ::gradiens;
}
namespace caffe2 {
using namespace ::gradiens;
}

namespace c10 {

template <class T>
using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
using std::nullopt_t;
using std::string_view;

namespace detail {
// Streams one argument of c10::str: a module (or its holder, or a pointer to
// one) in libtorch's format (pretty_print, children indented below), anything
// else with its operator<<.
template <class T>
void stream_argument(std::ostream& out, const T& value) {
  if constexpr (std::is_base_of_v<::gradiens::nn::Module, T>) {
    value.pretty_print_recursive(out);
  } else if constexpr (requires { typename T::ContainedType; value.ptr(); }) {
    value.ptr()->pretty_print_recursive(out);
  } else if constexpr (requires { requires std::is_base_of_v<::gradiens::nn::Module, typename T::element_type>; }) {
    value->pretty_print_recursive(out);
  } else {
    out << value;
  }
}
}  // namespace detail

// c10::str: the arguments streamed into one string, as libtorch's messages
// build them (modules print in libtorch's format, see detail::stream_argument).
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (detail::stream_argument(out, args), ...);
  return out.str();
}

// c10::irange(end) and irange(begin, end): the integers of [begin, end), for range-for.
template <class Integer>
class integer_range {
 public:
  class iterator {
   public:
    using value_type = Integer;
    using difference_type = std::ptrdiff_t;
    explicit iterator(Integer value) : value_(value) {}
    Integer operator*() const { return value_; }
    iterator& operator++() {
      ++value_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++value_;
      return before;
    }
    bool operator==(const iterator& other) const { return value_ == other.value_; }
    bool operator!=(const iterator& other) const { return value_ != other.value_; }

   private:
    Integer value_;
  };
  integer_range(Integer begin, Integer end) : begin_(begin), end_(end < begin ? begin : end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  Integer begin_, end_;
};

template <class Integer1, class Integer2>
  requires std::is_integral_v<Integer1> && std::is_integral_v<Integer2>
integer_range<Integer2> irange(Integer1 begin, Integer2 end) {
  return integer_range<Integer2>(static_cast<Integer2>(begin), end);
}
template <class Integer>
  requires std::is_integral_v<Integer>
integer_range<Integer> irange(Integer end) {
  return integer_range<Integer>(Integer(0), end);
}

// c10::Join(", ", items): the items streamed with the delimiter between them.
template <class Container>
std::string Join(const std::string& delimiter, const Container& items) {
  std::ostringstream out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out << delimiter;
    out << item;
    first = false;
  }
  return out.str();
}

}  // namespace c10

namespace caffe2 {
// libtorch's other name for a dtype: TypeMeta::Make<float>() is kFloat.
class TypeMeta {
 public:
  constexpr TypeMeta(::gradiens::ScalarType type = ::gradiens::get_default_dtype()) : type_(type) {}
  template <class T>
  static TypeMeta Make() {
    return TypeMeta(::gradiens::scalar_type_of<T>());
  }
  constexpr ::gradiens::ScalarType toScalarType() const { return type_; }
  constexpr operator ::gradiens::ScalarType() const { return type_; }
  size_t itemsize() const { return ::gradiens::element_size(type_); }
  friend constexpr bool operator==(TypeMeta a, TypeMeta b) { return a.type_ == b.type_; }

 private:
  ::gradiens::ScalarType type_;
};
}  // namespace caffe2

namespace c10 {
using caffe2::TypeMeta;
inline ::gradiens::ScalarType typeMetaToScalarType(TypeMeta meta) { return meta.toScalarType(); }
inline TypeMeta scalarTypeToTypeMeta(::gradiens::ScalarType type) { return TypeMeta(type); }
}  // namespace c10

namespace torch {
// libtorch names a dtype torch::Dtype.
using Dtype = ::gradiens::ScalarType;
using c10::scalarTypeToTypeMeta;
using c10::typeMetaToScalarType;
using std::make_unique;
// libtorch's default-dtype functions take and give a TypeMeta.
inline caffe2::TypeMeta get_default_dtype() { return caffe2::TypeMeta(::gradiens::get_default_dtype()); }
inline void set_default_dtype(caffe2::TypeMeta dtype) { ::gradiens::set_default_dtype_unchecked(dtype.toScalarType()); }
using c10::irange;
using c10::nullopt;
using c10::optional;
using c10::str;
}  // namespace torch

namespace at {
using c10::irange;
using c10::nullopt;
using c10::optional;
namespace native {
using ::gradiens::is_nonzero;
}  // namespace native
using torch::set_default_dtype;
}  // namespace at

namespace torch::detail {
// libtorch keeps tensor()'s data argument here.
using namespace ::gradiens::detail;
using ::gradiens::TensorDataContainer;
}  // namespace torch::detail

namespace at {
// libtorch's legacy (backend, dtype) pair; here the TensorOptions it stands for.
inline ::gradiens::TensorOptions getDeprecatedTypeProperties(::gradiens::Backend backend,
                                                            ::gradiens::ScalarType dtype) {
  return ::gradiens::backend_options(backend, dtype);
}
}  // namespace at

// libtorch's other spelling of warn-always mode.
namespace c10::WarningUtils {
using WarnAlways = ::gradiens::Warning::WarnAlways;
inline void set_warnAlways(bool setting) { ::gradiens::Warning::set_warnAlways(setting); }
inline bool get_warnAlways() { return ::gradiens::Warning::get_warnAlways(); }
}  // namespace c10::WarningUtils

namespace c10::detail {
// The message of a failed TORCH_CHECK: the caller's words, or libtorch's
// default sentence naming the condition when it gave none.
template <class... Args>
std::string check_message(const char* condition, const Args&... args) {
  if constexpr (sizeof...(Args) == 0)
    return str("Expected ", condition, " to be true, but got false.");
  else
    return str(args...);
}
}  // namespace c10::detail

// TORCH_CHECK(condition, message parts...): a user error, thrown as
// gradiens::Error (c10::Error) with the parts streamed together.
#define TORCH_CHECK(condition, ...)                                                       \
  do {                                                                                    \
    if (!(condition))                                                                     \
      throw ::gradiens::Error(::c10::detail::check_message(#condition, ##__VA_ARGS__));   \
  } while (false)
#define TORCH_CHECK_INDEX TORCH_CHECK
#define TORCH_CHECK_VALUE TORCH_CHECK
#define TORCH_CHECK_TYPE TORCH_CHECK
#define TORCH_INTERNAL_ASSERT(condition, ...) \
  GD_INTERNAL_ASSERT(condition, ::c10::str("", ##__VA_ARGS__))
#define AT_ERROR(...) throw ::gradiens::Error(::c10::str(__VA_ARGS__))
#define AT_ASSERT(condition) GD_INTERNAL_ASSERT(condition, "")

// TORCH_WARN(message parts...): a warning to the current handler (gradiens::Warning).
#define TORCH_WARN(...) \
  ::gradiens::Warning::warn({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, ::c10::str(__VA_ARGS__), false)
// TORCH_WARN_ONCE: once per call site, or every time in warn-always mode
// (c10::Warning::WarnAlways).
#define TORCH_WARN_ONCE(...)                            \
  do {                                                  \
    if (::gradiens::Warning::get_warnAlways()) {        \
      TORCH_WARN(__VA_ARGS__);                          \
      break;                                            \
    }                                                   \
    static const bool torch_warn_once_done = [&] {      \
      TORCH_WARN(__VA_ARGS__);                          \
      return true;                                      \
    }();                                                \
    (void)torch_warn_once_done;                         \
  } while (false)

// TORCH_MODULE(Name): the holder `Name` of the module class `NameImpl`.
#define TORCH_MODULE(Name) GRADIENS_MODULE(Name)
#define FORWARD_HAS_DEFAULT_ARGS(...) GRADIENS_FORWARD_HAS_DEFAULT_ARGS(__VA_ARGS__)
#define TORCH_MODULE_IMPL(Name, ImplType)                              \
  class Name : public ::gradiens::nn::ModuleHolder<ImplType> {        \
   public:                                                            \
    using ::gradiens::nn::ModuleHolder<ImplType>::ModuleHolder;       \
  }

// The scalar types libtorch's AT_FORALL_* macros enumerate, as (C++ type, name)
// pairs gradiens has.
#define AT_FORALL_SCALAR_TYPES(_) \
  _(uint8_t, Byte)                \
  _(int, Int)                     \
  _(int64_t, Long)                \
  _(float, Float)                 \
  _(double, Double)
#define AT_FORALL_SCALAR_TYPES_AND(SCALARTYPE, _) \
  AT_FORALL_SCALAR_TYPES(_)                       \
  _(::gradiens::CppType<::gradiens::ScalarType::SCALARTYPE>::type, SCALARTYPE)
#define AT_FORALL_SCALAR_TYPES_AND2(SCALARTYPE1, SCALARTYPE2, _) \
  AT_FORALL_SCALAR_TYPES_AND(SCALARTYPE1, _)                     \
  _(::gradiens::CppType<::gradiens::ScalarType::SCALARTYPE2>::type, SCALARTYPE2)
#define AT_FORALL_SCALAR_TYPES_AND3(SCALARTYPE1, SCALARTYPE2, SCALARTYPE3, _) \
  AT_FORALL_SCALAR_TYPES_AND2(SCALARTYPE1, SCALARTYPE2, _)                    \
  _(::gradiens::CppType<::gradiens::ScalarType::SCALARTYPE3>::type, SCALARTYPE3)
