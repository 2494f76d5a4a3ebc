// The CPU's indexing loops (kernels/cpu/indexing.h). A bad index is skipped
// and the first one met is reported after the loop, never thrown from inside
// a thread team.
#include "kernels/cpu/indexing.h"

#include <atomic>
#include <cstring>
#include <limits>

namespace gradiens::kernels::cpu {

namespace {

constexpr int64_t kSerial = std::numeric_limits<int64_t>::max();  // grain that keeps a loop on one thread

// Walks an iterator over (target, int64 index, other) and calls
// body(target, k, other) for each index k in [0, size); others are recorded in
// `bad`. The size and the body are copied into each run: locals, which the
// stores through target cannot alias, so they stay in registers.
template <class Body>
void for_each_index(const ElementwiseIterator& iter, int64_t size, BadIndex& bad, int64_t grain, const Body& body) {
  iter.for_each(
      [&](char** p, const int64_t* st, int64_t n) {
        const int64_t limit = size;
        const Body run = body;
        for (int64_t j = 0; j < n; ++j) {
          int64_t k = *reinterpret_cast<const int64_t*>(p[1] + j * st[1]);
          if (k < 0 || k >= limit) {
            bad.record(k);
            continue;
          }
          run(p[0] + j * st[0], k, p[2] + j * st[2]);
        }
      },
      grain);
}

}  // namespace

std::optional<int64_t> add_index_offsets(const ElementwiseIterator& iter, int64_t size, int64_t stride) {
  BadIndex bad;
  iter.for_each([&](char** p, const int64_t* st, int64_t n) {
    const int64_t limit = size, step = stride;  // locals: the int64 stores below cannot alias them
    for (int64_t j = 0; j < n; ++j) {
      int64_t k = *reinterpret_cast<const int64_t*>(p[1] + j * st[1]);
      if (k < -limit || k >= limit) {
        bad.record(k);
        continue;
      }
      *reinterpret_cast<int64_t*>(p[0] + j * st[0]) += (k < 0 ? k + limit : k) * step;
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
          const bool add = accumulate;
          for (int64_t j = 0; j < n; ++j) {
            T& slot = reinterpret_cast<T*>(p[0] + j * st[0])[*reinterpret_cast<const int64_t*>(p[2] + j * st[2])];
            T v = *reinterpret_cast<const T*>(p[1] + j * st[1]);
            slot = add ? static_cast<T>(slot + v) : v;
          }
        },
        kSerial);
  });
}

std::optional<int64_t> scatter_along(ScalarType dtype, const ElementwiseIterator& iter, int64_t index_scale,
                                     int64_t index_limit) {
  BadIndex bad;
  dispatch_all(dtype, "scatter", [&]<class T>() {
    for_each_index(iter, index_limit, bad, kSerial, [index_scale](char* row, int64_t k, char* value) {
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
    for_each_index(iter, index_limit, bad, kSerial, [a, index_scale](char* row, int64_t k, char* src) {
      T& slot = reinterpret_cast<T*>(row)[k * index_scale];
      slot = static_cast<T>(slot + a * *reinterpret_cast<const T*>(src));
    });
  });
  return bad.first();
}

bool gather_rows(const void* src, int64_t rows, int64_t row_bytes, const int64_t* index, int64_t count, void* out) {
  for (int64_t i = 0; i < count; ++i)
    if (index[i] < 0 || index[i] >= rows) return false;
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(out);
  const auto bytes = static_cast<size_t>(row_bytes);
  for (int64_t i = 0; i < count; ++i) std::memcpy(to + i * row_bytes, from + index[i] * row_bytes, bytes);
  return true;
}

std::optional<int64_t> add_rows(ScalarType dtype, void* dst, int64_t rows, const void* src, int64_t width,
                                const int64_t* index, int64_t count, const Number& alpha) {
  BadIndex bad;
  dispatch_numeric_and_reduced(dtype, "index_add_", [&]<class T>() {
    const opmath_t<T> a = alpha.to<opmath_t<T>>();
    T* out = static_cast<T*>(dst);
    const T* in = static_cast<const T*>(src);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t k = index[i];
      if (k < 0 || k >= rows) {
        bad.record(k);
        continue;
      }
      T* row = out + k * width;
      const T* from = in + i * width;
      for (int64_t j = 0; j < width; ++j) row[j] = static_cast<T>(row[j] + a * from[j]);
    }
  });
  return bad.first();
}

int64_t count_nonzero(ScalarType dtype, const void* in, int64_t n) {
  int64_t count = 0;
  dispatch_all(dtype, "nonzero", [&]<class T>() {
    const T* p = static_cast<const T*>(in);
    for (int64_t i = 0; i < n; ++i) count += p[i] != T(0);
  });
  return count;
}

void nonzero_indices(ScalarType dtype, const void* in, IntArrayRef sizes, int64_t* out) {
  const auto ndim = static_cast<int64_t>(sizes.size());
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  dispatch_all(dtype, "nonzero", [&]<class T>() {
    const T* p = static_cast<const T*>(in);
    DimVector pos(static_cast<size_t>(ndim), 0);  // the multi-index of element i
    for (int64_t i = 0; i < n; ++i) {
      if (p[i] != T(0))
        for (int64_t d = 0; d < ndim; ++d) *out++ = pos[d];
      for (int64_t d = ndim - 1; d >= 0; --d) {
        if (++pos[d] < sizes[d]) break;
        pos[d] = 0;
      }
    }
  });
}

}  // namespace gradiens::kernels::cpu
