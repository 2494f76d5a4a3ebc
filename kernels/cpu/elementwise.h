// The one broadcasting elementwise iterator: operands already broadcast to a
// common shape (stride 0 on broadcast dims) are coalesced to as few dimensions
// as possible and walked row by row, in parallel above a grain size; the typed
// kernel gets a contiguous fast path the compiler vectorizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>

#include "kernels/cpu/parallel.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels::cpu {

// One operand: its data pointer, element size and strides (in elements) over
// the iteration shape.
struct Operand {
  void* data;
  int64_t element_size;
  IntArrayRef strides;
};

class ElementwiseIterator {
 public:
  static constexpr int kMaxOperands = 4;

  // The order the elements are visited in: the shape's (row-major), or, for
  // operations whose result does not depend on it, the output's memory order.
  enum class Order { Logical, Memory };

  // operands[0] is the output. `shape` is the iteration (output) shape. With
  // Order::Memory the dims are first sorted by the output's strides, largest
  // first (ties keep their order), so that a channels_last output and inputs
  // coalesce into one dense run as a row-major one would; an output with
  // repeated elements (a zero stride) keeps the logical order.
  ElementwiseIterator(IntArrayRef shape, std::initializer_list<Operand> operands, Order order = Order::Logical) {
    num_operands_ = static_cast<int>(operands.size());
    numel_ = 1;
    for (int64_t s : shape) numel_ *= s;
    int k = 0;
    for (const Operand& op : operands) {
      data_[k] = static_cast<char*>(op.data);
      element_size_[k] = op.element_size;
      ++k;
    }
    DimVector dims(shape.size());
    for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
    if (order == Order::Memory) {
      const IntArrayRef out = operands.begin()->strides;
      bool distinct = true;
      for (size_t d = 0; d < shape.size(); ++d) distinct = distinct && (shape[d] == 1 || out[d] != 0);
      if (distinct)
        std::stable_sort(dims.begin(), dims.end(), [&](int64_t x, int64_t y) { return out[x] > out[y]; });
    }
    // Drop size-1 dims, then merge neighbours that are contiguous for every operand.
    for (const int64_t d : dims) {
      if (shape[d] == 1) continue;
      int64_t size = shape[d];
      if (!shape_.empty()) {
        bool mergeable = true;
        for (int i = 0; i < num_operands_; ++i) {
          auto op_strides = (operands.begin() + i)->strides;
          if (strides_[i].back() != size * op_strides[d] * element_size_[i]) mergeable = false;
        }
        if (mergeable) {
          shape_.back() *= size;
          for (int i = 0; i < num_operands_; ++i)
            strides_[i].back() = (operands.begin() + i)->strides[d] * element_size_[i];
          continue;
        }
      }
      shape_.push_back(size);
      for (int i = 0; i < num_operands_; ++i)
        strides_[i].push_back((operands.begin() + i)->strides[d] * element_size_[i]);
    }
    if (shape_.empty()) {
      shape_.push_back(numel_ == 0 ? 0 : 1);
      for (int i = 0; i < num_operands_; ++i) strides_[i].push_back(element_size_[i]);
    }
  }

  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int num_operands() const { return num_operands_; }

  // loop(char** pointers, const int64_t* inner_byte_strides, int64_t count) is
  // called for runs along the innermost dimension; parallel above the grain.
  template <class Loop>
  void for_each(Loop&& loop, int64_t grain_size = kElementwiseGrainSize) const {
    if (numel_ == 0) return;
    parallel_for(0, numel_, grain_size, [&](int64_t begin, int64_t end) { run_range(begin, end, loop); });
  }

 private:
  template <class Loop>
  void run_range(int64_t begin, int64_t end, Loop& loop) const {
    const int nd = ndim();
    const int64_t inner = shape_[nd - 1];
    DimVector index(static_cast<size_t>(nd), 0);
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      index[d] = rem % shape_[d];
      rem /= shape_[d];
    }
    char* ptrs[kMaxOperands];
    int64_t inner_strides[kMaxOperands];
    for (int i = 0; i < num_operands_; ++i) {
      ptrs[i] = data_[i];
      for (int d = 0; d < nd; ++d) ptrs[i] += index[d] * strides_[i][d];
      inner_strides[i] = strides_[i][nd - 1];
    }
    while (begin < end) {
      int64_t count = std::min(inner - index[nd - 1], end - begin);
      loop(ptrs, inner_strides, count);
      begin += count;
      if (begin >= end) break;
      index[nd - 1] += count;
      for (int i = 0; i < num_operands_; ++i) ptrs[i] += count * inner_strides[i];
      // Carry into the outer dimensions.
      for (int d = nd - 1; d > 0 && index[d] == shape_[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
        for (int i = 0; i < num_operands_; ++i) ptrs[i] += strides_[i][d - 1] - shape_[d] * strides_[i][d];
      }
    }
  }

  int num_operands_ = 0;
  int64_t numel_ = 0;
  DimVector shape_;
  char* data_[kMaxOperands] = {};
  int64_t element_size_[kMaxOperands] = {};
  DimVector strides_[kMaxOperands];  // in bytes
};

// out[i] = f(in0[i], in1[i], ...) over the iterator, with Out and In... the
// C++ types of the operands (operand 0 is the output). A caller whose output
// elements alias each other passes an unbounded grain to stay on one thread.
template <class Out, class... In, class F>
void elementwise_kernel(const ElementwiseIterator& iter, F&& f, int64_t grain_size = kElementwiseGrainSize) {
  iter.for_each([&](char** ptrs, const int64_t* strides, int64_t n) {
    bool contiguous = strides[0] == static_cast<int64_t>(sizeof(Out));
    {
      int64_t k = 1;
      ((contiguous = contiguous && strides[k++] == static_cast<int64_t>(sizeof(In))), ...);
    }
    [&]<size_t... I>(std::index_sequence<I...>) {
      Out* out = reinterpret_cast<Out*>(ptrs[0]);
      if (contiguous) {
        std::tuple<const In*...> in{reinterpret_cast<const In*>(ptrs[I + 1])...};
        for (int64_t j = 0; j < n; ++j) out[j] = f(std::get<I>(in)[j]...);
      } else {
        for (int64_t j = 0; j < n; ++j)
          *reinterpret_cast<Out*>(ptrs[0] + j * strides[0]) =
              f(*reinterpret_cast<const In*>(ptrs[I + 1] + j * strides[I + 1])...);
      }
    }(std::index_sequence_for<In...>{});
  }, grain_size);
}

}  // namespace gradiens::kernels::cpu
