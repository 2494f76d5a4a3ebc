// gradiens::tensor(data, options): a tensor from a number, a (nested) braced
// list or a std::vector, as libtorch's torch::tensor.
#pragma once

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <type_traits>
#include <vector>

#include "engine/scalar.h"
#include "engine/tensor.h"

namespace gradiens {

// The data argument of tensor(): a number (a 0-dim tensor), a braced list of
// containers (one more dimension), or a std::vector (one dimension). Lists are
// checked as they are built: every sub-list must have the first one's sizes.
//
// The dtype, unless the options give one, is inferred as libtorch's tensor()
// does: floating values give float32 (the default dtype), int and int64 values
// int64, bools bool, uint8 / int8 / int16 / Half / BFloat16 values their own
// dtype, and an empty braced list float32 (an empty vector its element type's
// dtype). As in libtorch, every element of a braced list must have the same C++
// type: tensor({1, 2.5}) is an Error ("Expected all elements of the tensor to
// have the same scalar type: Int, but got element of scalar type: Double").
template <class T>
inline constexpr bool is_half_or_bfloat16_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

class TensorDataContainer {
 public:
  // {}: an empty list, shape [0].
  TensorDataContainer();
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> || is_half_or_bfloat16_v<T>, int> = 0>
  TensorDataContainer(T value) : TensorDataContainer(Scalar(value), value_dtype<T>(), element_type<T>()) {}
  TensorDataContainer(std::initializer_list<TensorDataContainer> list);
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorDataContainer(const std::vector<T>& values) : TensorDataContainer(from_vector(values), element_type<T>()) {}
  // Any other contiguous list of numbers (ArrayRef<T>, std::array, std::span): one dimension, as a vector.
  template <class List>
    requires std::is_arithmetic_v<typename List::value_type> && (!std::is_same_v<typename List::value_type, char>) &&
             requires(const List& list) {
      { list.data() } -> std::convertible_to<const typename List::value_type*>;
      { list.size() } -> std::convertible_to<size_t>;
    }
  TensorDataContainer(const List& values)
      : TensorDataContainer(std::vector<typename List::value_type>(values.data(), values.data() + values.size())) {}

  // libtorch's accessors of the three kinds of data, which throw on the wrong kind:
  // a number, a braced list, or a vector / list of numbers (a tensor).
  bool is_scalar() const { return kind_ == Kind::Scalar; }
  bool is_init_list() const { return kind_ == Kind::List; }
  bool is_tensor() const { return kind_ == Kind::Values; }
  const Scalar& scalar() const;
  const std::vector<TensorDataContainer>& init_list() const;
  const Tensor& tensor() const;

  const DimVector& sizes() const { return sizes_; }
  // The dtype the data implies; empty for data without any element.
  std::optional<ScalarType> inferred_dtype() const { return dtype_; }

  // Writes the elements in row-major order, converted to `dtype`, to `out`.
  void fill(void* out, ScalarType dtype) const;
  // As libtorch prints data in its messages: {1, 2.5}.
  friend std::ostream& operator<<(std::ostream& out, const TensorDataContainer& data);

 private:
  enum class Kind : uint8_t { Scalar, List, Values };

  TensorDataContainer(Scalar value, ScalarType dtype, ScalarType element);
  // A vector's elements as a 1-dim tensor of its own dtype.
  TensorDataContainer(Tensor values, ScalarType element);

  template <class T>
  static ScalarType value_dtype() {
    if constexpr (std::is_same_v<T, bool>) return kBool;
    else if constexpr (is_half_or_bfloat16_v<T>) return scalar_type_of<T>();
    else if constexpr (std::is_floating_point_v<T>) return get_default_dtype();
    else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> || std::is_same_v<T, int16_t>)
      return scalar_type_of<T>();
    else return kInt64;
  }
  // The dtype of the C++ element type itself, which libtorch's same-type rule
  // compares (int is Int, long Long, double Double).
  template <class T>
  static constexpr ScalarType element_type() {
    if constexpr (std::is_same_v<T, bool>) return kBool;
    else if constexpr (is_half_or_bfloat16_v<T>) return scalar_type_of<T>();
    else if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? kFloat32 : kFloat64;
    else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> || std::is_same_v<T, int16_t>)
      return scalar_type_of<T>();
    else return sizeof(T) <= 4 ? kInt32 : kInt64;
  }
  template <class T>
  static Tensor from_vector(const std::vector<T>& values) {
    const auto n = static_cast<int64_t>(values.size());
    if constexpr (std::is_same_v<T, bool>) {
      const std::vector<uint8_t> bytes(values.begin(), values.end());  // vector<bool> has no data()
      return values_tensor(bytes.data(), n, kBool);
    } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> || std::is_same_v<T, int16_t> ||
                         std::is_same_v<T, double> || std::is_same_v<T, int64_t>) {
      return values_tensor(values.data(), n, scalar_type_of<T>());
    } else {
      // Widened so that the elements keep their precision until the dtype is known.
      using Wide = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      const std::vector<Wide> wide(values.begin(), values.end());
      return values_tensor(wide.data(), n, scalar_type_of<Wide>());
    }
  }
  static Tensor values_tensor(const void* data, int64_t n, ScalarType stored);
  int64_t fill_at(char* out, int64_t position, ScalarType dtype) const;

  Kind kind_;
  Scalar scalar_;
  std::vector<TensorDataContainer> list_;
  Tensor values_;
  DimVector sizes_;
  std::optional<ScalarType> dtype_;
  std::optional<ScalarType> element_;  // element_type of the data; empty for an empty braced list
};

// tensor({{1., 2.}, {3., 4.}}), tensor(std::vector<double>{...}, kFloat64),
// tensor(3.5) (0-dim), tensor({true, false}).
Tensor tensor(const TensorDataContainer& data, const TensorOptions& options = {});

}  // namespace gradiens
