// SmallVector: a vector that keeps its first N elements inline, so the sizes and
// strides of a tensor (and a node's edges) cost no heap allocation; IntArrayRef,
// a non-owning view of int64 lists that also accepts braced lists and one int.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <utility>
#include <vector>

#include "kernels/error.h"

namespace gradiens {

// Elements live in `inline_` while size() <= N and in `heap_` after that. T must
// be default-constructible and movable (int64_t, Tensor, Edge...).
template <class T, size_t N>
class SmallVector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  explicit SmallVector(size_t count, const T& value = T()) { resize(count, value); }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <class It, class = decltype(*std::declval<It>())>
  SmallVector(It first, It last) { assign(first, last); }
  SmallVector(const std::vector<T>& values) { assign(values.begin(), values.end()); }

  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { move_from(std::move(other)); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      clear();
      move_from(std::move(other));
    }
    return *this;
  }

  template <class It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }

  T* data() { return on_heap_ ? heap_.data() : inline_.data(); }
  const T* data() const { return on_heap_ ? heap_.data() : inline_.data(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void push_back(T value) {
    if (!on_heap_ && size_ < N) {
      inline_[size_++] = std::move(value);
      return;
    }
    if (!on_heap_) spill_to_heap();
    heap_.push_back(std::move(value));
    ++size_;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() {
    --size_;
    if (on_heap_) heap_.pop_back();
    else inline_[size_] = T();
  }
  void resize(size_t count, const T& value = T()) {
    while (size_ > count) pop_back();
    while (size_ < count) push_back(value);
  }
  void clear() {
    if (on_heap_) {
      heap_.clear();
      on_heap_ = false;
    }
    for (size_t i = 0; i < size_ && i < N; ++i) inline_[i] = T();
    size_ = 0;
  }
  T* insert(T* pos, T value) {
    size_t index = static_cast<size_t>(pos - begin());
    push_back(T());
    for (size_t i = size_ - 1; i > index; --i) data()[i] = std::move(data()[i - 1]);
    data()[index] = std::move(value);
    return begin() + index;
  }
  T* erase(T* pos) {
    size_t index = static_cast<size_t>(pos - begin());
    for (size_t i = index; i + 1 < size_; ++i) data()[i] = std::move(data()[i + 1]);
    pop_back();
    return begin() + index;
  }

  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (!(a[i] == b[i])) return false;
    return true;
  }

 private:
  void spill_to_heap() {
    heap_.reserve(N * 2);
    for (size_t i = 0; i < size_; ++i) {
      heap_.push_back(std::move(inline_[i]));
      inline_[i] = T();
    }
    on_heap_ = true;
  }
  void move_from(SmallVector&& other) {
    if (other.on_heap_) {
      heap_ = std::move(other.heap_);
      on_heap_ = true;
      size_ = other.size_;
      other.heap_.clear();
      other.on_heap_ = false;
      other.size_ = 0;
    } else {
      for (size_t i = 0; i < other.size_; ++i) inline_[i] = std::move(other.inline_[i]);
      size_ = other.size_;
      other.clear();
    }
  }

  std::array<T, N> inline_{};
  std::vector<T> heap_;
  size_t size_ = 0;
  bool on_heap_ = false;
};

// Sizes and strides of a tensor: six dimensions inline.
using DimVector = SmallVector<int64_t, 6>;

// A borrowed list of int64 (sizes, dims). Accepts `{2, 3}`, a vector, a
// DimVector or a single integer, like PyTorch's IntArrayRef; it must not outlive
// what it points to.
class IntArrayRef {
 public:
  IntArrayRef() = default;
  IntArrayRef(const int64_t& single) : data_(&single), size_(1) {}
  IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  // Borrowing a braced list is safe for the call it is passed to, which is the
  // only way IntArrayRef is used (as a parameter).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  IntArrayRef(std::initializer_list<int64_t> list) : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  IntArrayRef(const SmallVector<int64_t, N>& v) : data_(v.data()), size_(v.size()) {}

  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t back() const { return data_[size_ - 1]; }
  int64_t front() const { return data_[0]; }
  // The `length` values from `start` (to the end without a length), as libtorch's ArrayRef::slice.
  IntArrayRef slice(size_t start, size_t length) const {
    GD_CHECK(start + length <= size_, "ArrayRef: invalid slice, start + length exceeds the size");
    IntArrayRef out;
    out.data_ = data_ + start;
    out.size_ = length;
    return out;
  }
  IntArrayRef slice(size_t start) const { return slice(start, start <= size_ ? size_ - start : 0); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  DimVector dims() const { return DimVector(begin(), end()); }
  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

// "[2, 3]", as libtorch prints sizes (defined in kernels/scalar_type.cpp).
std::ostream& operator<<(std::ostream& out, IntArrayRef values);

}  // namespace gradiens
