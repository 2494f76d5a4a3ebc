// OptionalIntArrayRef: an IntArrayRef or nothing (libtorch's c10::OptionalIntArrayRef),
// for a parameter such as a list of dims that may be left out.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "kernels/small_vector.h"

namespace gradiens {

// Built from nothing (std::nullopt), a list, or a single integer. A single
// integer is kept here rather than borrowed: `f(300)` would otherwise point at
// the int64 converted from 300, gone before f reads it. Like IntArrayRef it
// must not outlive a list it borrows.
class OptionalIntArrayRef {
 public:
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(std::nullopt_t) {}
  OptionalIntArrayRef(IntArrayRef list) : list_(list) {}
  OptionalIntArrayRef(std::initializer_list<int64_t> list) : list_(IntArrayRef(list)) {}
  OptionalIntArrayRef(const std::vector<int64_t>& list) : list_(IntArrayRef(list)) {}
  OptionalIntArrayRef(int64_t single) : single_(single), holds_single_(true) {}

  bool has_value() const { return holds_single_ || list_.has_value(); }
  explicit operator bool() const { return has_value(); }
  // The list; std::bad_optional_access when there is none.
  IntArrayRef value() const { return holds_single_ ? IntArrayRef(single_) : list_.value(); }
  IntArrayRef operator*() const { return value(); }
  IntArrayRef value_or(IntArrayRef fallback) const { return has_value() ? value() : fallback; }

 private:
  std::optional<IntArrayRef> list_;
  int64_t single_ = 0;
  bool holds_single_ = false;
};

}  // namespace gradiens
