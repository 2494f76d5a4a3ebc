// Memory formats: the strides of contiguous/channels_last/channels_last_3d layouts,
// is_contiguous(format), suggest_memory_format and contiguous(format), as PyTorch's.
#include "engine/memory_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>

#include "engine/dims.h"
#include "kernels/error.h"

namespace gradiens {

namespace {

// Dims from innermost to outermost in a channels-last layout: C, W, H, (D,) N.
constexpr std::array<int64_t, 4> kChannelsLastOrder{1, 3, 2, 0};
constexpr std::array<int64_t, 5> kChannelsLast3dOrder{1, 4, 3, 2, 0};

// The strides are exactly those of `order` (innermost first), size-1 dims excepted.
template <size_t N>
bool dense_in_order(IntArrayRef sizes, IntArrayRef strides, const std::array<int64_t, N>& order) {
  if (sizes.size() != N) return false;
  int64_t expected = 1;
  for (int64_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// PyTorch's is_channels_last_strides_2d_s4 / _3d_s5: the strides grow in the
// channels-last order (gaps allowed, so a slice of a channels_last tensor still
// counts). Ambiguous layouts (C of stride 0, N111-like tensors) count as contiguous.
template <size_t N>
bool strides_like(IntArrayRef sizes, IntArrayRef strides, const std::array<int64_t, N>& order) {
  if (sizes.size() != N || strides[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : order) {
    if (sizes[d] == 0 || strides[d] < min) return false;
    // N111 tensors and N11W tensors sliced on W: the same strides as the contiguous layout.
    if (d == 0 && min == strides[1]) return false;
    // Tells N1H1 channels_last ([H, 1, 1, 1]) from contiguous ([H, H, 1, 1]).
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}

// Dense strides for the dims taken innermost first in `order`.
template <size_t N>
DimVector strides_in_order(IntArrayRef sizes, const std::array<int64_t, N>& order) {
  DimVector strides(N, 0);
  int64_t stride = 1;
  for (int64_t d : order) {
    strides[d] = stride;
    stride *= sizes[d];  // no max(size, 1): PyTorch gives a channels_last tensor with a 0-size dim these strides
  }
  return strides;
}

}  // namespace

DimVector contiguous_strides(IntArrayRef sizes, MemoryFormat memory_format) {
  switch (memory_format) {
    case MemoryFormat::Contiguous: return contiguous_strides(sizes);
    case MemoryFormat::ChannelsLast:
      GD_CHECK(sizes.size() == 4, "required rank 4 tensor to use channels_last format");
      return strides_in_order(sizes, kChannelsLastOrder);
    case MemoryFormat::ChannelsLast3d:
      GD_CHECK(sizes.size() == 5, "required rank 5 tensor to use channels_last_3d format");
      return strides_in_order(sizes, kChannelsLast3dOrder);
    case MemoryFormat::Preserve: break;
  }
  throw Error("unsupported memory format Preserve");
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  const size_t ndim = sizes.size();
  if (ndim == 1) return sizes[0] < 2 || strides[0] == 1;
  // Dims by increasing stride, those of size 0 or 1 (whose stride is meaningless) last.
  DimVector order(ndim, 0);
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t required = 1;
  for (int64_t d : order) {
    if (sizes[d] < 2) return true;
    if (strides[d] != required) return false;
    required *= sizes[d];
  }
  return true;
}

DimVector infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  const size_t ndim = sizes.size();
  if (is_non_overlapping_and_dense(sizes, strides)) return strides.dims();
  // perm[0] is the innermost dim. An insertion sort as TensorIterator's, where a
  // stride of 0 compares as equal to anything so that those dims do not move.
  DimVector perm(ndim, 0);
  for (size_t i = 0; i < ndim; ++i) perm[i] = static_cast<int64_t>(ndim - 1 - i);
  auto should_swap = [&](int64_t dim0, int64_t dim1) {
    const int64_t stride0 = strides[dim0], stride1 = strides[dim1];
    if (stride0 == 0 || stride1 == 0) return 0;
    if (stride0 != stride1) return stride0 < stride1 ? -1 : 1;
    return sizes[dim0] > sizes[dim1] ? 1 : 0;  // equal strides: the smaller dim goes inside
  };
  for (size_t i = 1; i < ndim; ++i) {
    size_t dim1 = i;
    for (size_t j = 1; j <= i; ++j) {
      const size_t dim0 = i - j;
      const int comparison = should_swap(perm[dim0], perm[dim1]);
      if (comparison > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  DimVector out(ndim, 0);
  int64_t stride = 1;
  for (int64_t d : perm) {
    out[d] = stride;
    if (sizes[d] > 1) stride *= sizes[d];
  }
  return out;
}

DimVector like_strides(const Tensor& like, MemoryFormat memory_format) {
  if (memory_format != MemoryFormat::Preserve) return contiguous_strides(like.sizes(), memory_format);
  return infer_dense_strides(like.sizes(), like.strides());
}

bool Tensor::is_contiguous(MemoryFormat memory_format) const {
  switch (memory_format) {
    case MemoryFormat::ChannelsLast: return dense_in_order(sizes(), strides(), kChannelsLastOrder);
    case MemoryFormat::ChannelsLast3d: return dense_in_order(sizes(), strides(), kChannelsLast3dOrder);
    case MemoryFormat::Contiguous:
    case MemoryFormat::Preserve: break;  // PyTorch answers Preserve as Contiguous
  }
  return is_contiguous();
}

MemoryFormat Tensor::suggest_memory_format() const {
  if (strides_like(sizes(), strides(), kChannelsLastOrder)) return MemoryFormat::ChannelsLast;
  if (strides_like(sizes(), strides(), kChannelsLast3dOrder)) return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

Tensor Tensor::contiguous(MemoryFormat memory_format) const {
  if (is_contiguous(memory_format)) return *this;
  GD_CHECK(memory_format != MemoryFormat::Preserve, "preserve memory format is unsupported by the contiguous operator");
  return clone(memory_format);
}

}  // namespace gradiens
