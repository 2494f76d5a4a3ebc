// The CPU's indexing loops (kernels/cpu/indexing.h). A bad index is skipped
// and the first one met is reported after the loop, never thrown from inside
// a thread team.
#include "kernels/cpu/indexing.h"

#include <atomic>
#include <limits>

namespace gradiens::kernels::cpu {

namespace {

constexpr int64_t kSerial = std::numeric_limits<int64_t>::max();  // grain that keeps a loop on one thread

// Remembers the first out-of-range index a (possibly parallel) loop meets.
class BadIndex {
 public:
  void record(int64_t value) {
    bool expected = false;
    if (seen_.compare_exchange_strong(expected, true)) value_ = value;
  }
  std::optional<int64_t> first() const { return seen_.load() ? std::optional<int64_t>(value_) : std::nullopt; }

 private:
  std::atomic<bool> seen_{false};
  int64_t value_ = 0;
};

// Walks an iterator over (target, int64 index, other) and calls
// body(target, k, other) for each index k in [0, size); others are recorded in `bad`.
template <class Body>
void for_each_index(const ElementwiseIterator& iter, int64_t size, BadIndex& bad, int64_t grain, Body body) {
  iter.for_each(
      [&](char** p, const int64_t* st, int64_t n) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t k = *reinterpret_cast<const int64_t*>(p[1] + j * st[1]);
          if (k < 0 || k >= size) {
            bad.record(k);
            continue;
          }
          body(p[0] + j * st[0], k, p[2] + j * st[2]);
        }
      },
      grain);
}

}  // namespace

std::optional<int64_t> add_index_offsets(const ElementwiseIterator& iter, int64_t size, int64_t stride) {
  BadIndex bad;
  iter.for_each([&](char** p, const int64_t* st, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t k = *reinterpret_cast<const int64_t*>(p[1] + j * st[1]);
      if (k < -size || k >= size) {
        bad.record(k);
        continue;
      }
      *reinterpret_cast<int64_t*>(p[0] + j * st[0]) += (k < 0 ? k + size : k) * stride;
    }
  });
  return bad.first();
}

void gather_at_offsets(ScalarType dtype, const ElementwiseIterator& iter) {
  dispatch_all(dtype, "index", [&]<class T>() {
    iter.for_each([&](char** p, const int64_t* st, int64_t n) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t off = *reinterpret_cast<const int64_t*>(p[2] + j * st[2]);
        *reinterpret_cast<T*>(p[0] + j * st[0]) = reinterpret_cast<const T*>(p[1] + j * st[1])[off];
      }
    });
  });
}

void put_at_offsets(ScalarType dtype, const ElementwiseIterator& iter, bool accumulate) {
  dispatch_all(dtype, "index_put_", [&]<class T>() {
    iter.for_each(
        [&](char** p, const int64_t* st, int64_t n) {
          for (int64_t j = 0; j < n; ++j) {
            T& slot = reinterpret_cast<T*>(p[0] + j * st[0])[*reinterpret_cast<const int64_t*>(p[2] + j * st[2])];
            T v = *reinterpret_cast<const T*>(p[1] + j * st[1]);
            slot = accumulate ? static_cast<T>(slot + v) : v;
          }
        },
        kSerial);
  });
}

std::optional<int64_t> scatter_along(ScalarType dtype, const ElementwiseIterator& iter, int64_t index_scale,
                                     int64_t index_limit) {
  BadIndex bad;
  dispatch_all(dtype, "scatter", [&]<class T>() {
    for_each_index(iter, index_limit, bad, kSerial, [&](char* row, int64_t k, char* value) {
      reinterpret_cast<T*>(row)[k * index_scale] = *reinterpret_cast<const T*>(value);
    });
  });
  return bad.first();
}

std::optional<int64_t> add_along(ScalarType dtype, const ElementwiseIterator& iter, int64_t index_scale,
                                 int64_t index_limit, const Number& alpha) {
  BadIndex bad;
  dispatch_numeric_and_reduced(dtype, "index_add_", [&]<class T>() {
    const opmath_t<T> a = alpha.to<opmath_t<T>>();
    for_each_index(iter, index_limit, bad, kSerial, [&](char* row, int64_t k, char* src) {
      T& slot = reinterpret_cast<T*>(row)[k * index_scale];
      slot = static_cast<T>(slot + a * *reinterpret_cast<const T*>(src));
    });
  });
  return bad.first();
}

}  // namespace gradiens::kernels::cpu
