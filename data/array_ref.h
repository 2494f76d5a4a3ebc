// ArrayRef<T>: a borrowed, read-only list of T (libtorch's c10::ArrayRef), the
// indices a libtorch-style BatchDataset::get_batch receives. It lives in data/
// because the data API is its only user so far; IntArrayRef (kernels/) is the
// int64 list tensors use.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <vector>

namespace gradiens {

// Points into a vector, a braced list, an array or a single value; it must not
// outlive what it points to (as a parameter, the only way it is used here).
template <class T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = size_t;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& single) : data_(&single), size_(1) {}
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(static_cast<size_t>(end - begin)) {}
  template <class Allocator>
  ArrayRef(const std::vector<T, Allocator>& values) : data_(values.data()), size_(values.size()) {}
  template <size_t N>
  constexpr ArrayRef(const T (&values)[N]) : data_(values), size_(N) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr ArrayRef(std::initializer_list<T> values)
      : data_(values.size() == 0 ? nullptr : values.begin()), size_(values.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("ArrayRef: index out of range");
    return data_[i];
  }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  // The elements [start, start + length).
  constexpr ArrayRef slice(size_t start, size_t length) const { return ArrayRef(data_ + start, length); }
  constexpr ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return vec(); }

  friend bool operator==(ArrayRef a, ArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gradiens
