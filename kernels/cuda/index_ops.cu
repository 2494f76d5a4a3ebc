// The atomic reducing scatter of index_ops.h: one thread per element of the
// strided shape, each folding its value into its target with a
// compare-and-swap loop on the target's bits (there is no atomic product, nor
// a floating max/min).
#include <cstring>
#include <type_traits>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/index_ops.h"

namespace gradiens::kernels::cuda {
namespace {

template <class T>
using atomic_bits_t = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;

template <class T>
__device__ T combine(AtomicReduce op, T slot, T value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op != AtomicReduce::Prod && (isnan(slot) || isnan(value))) return isnan(slot) ? slot : value;
  }
  switch (op) {
    case AtomicReduce::Prod:
      if constexpr (std::is_integral_v<T>) {
        using Unsigned = std::make_unsigned_t<T>;  // wraps, as the CPU's does in practice
        return static_cast<T>(static_cast<Unsigned>(slot) * static_cast<Unsigned>(value));
      } else {
        return multiply_rounded(slot, value);
      }
    case AtomicReduce::Max: return slot < value ? value : slot;
    case AtomicReduce::Min: return value < slot ? value : slot;
  }
  return slot;
}

template <class T>
__device__ void atomic_combine(AtomicReduce op, T* target, T value) {
  using Bits = atomic_bits_t<T>;
  Bits* address = reinterpret_cast<Bits*>(target);
  Bits old = *address;
  Bits assumed;
  do {
    assumed = old;
    T current;
    memcpy(&current, &assumed, sizeof(T));
    const T next = combine(op, current, value);
    Bits next_bits;
    memcpy(&next_bits, &next, sizeof(T));
    if (next_bits == assumed) return;  // nothing to change
    old = atomicCAS(address, assumed, next_bits);
  } while (old != assumed);
}

template <class T>
struct ScatterAtomicElement {
  AtomicReduce op;
  T* dst;
  const T* src;
  const int64_t* index;
  int64_t scale;
  __device__ void operator()(const int64_t (&offsets)[3]) const {
    atomic_combine(op, dst + offsets[0] + index[offsets[2]] * scale, src[offsets[1]]);
  }
};

}  // namespace

void index_scatter_atomic(AtomicReduce op, ScalarType dtype, const Shape& shape, const Strided& dst, const Strided& src,
                          const Strided& index, int64_t index_scale, StreamHandle stream) {
  check_shape(shape, "scatter_reduce");
  if (shape.numel() == 0) return;
  const int64_t* const strides[3] = {dst.strides, src.strides, index.strides};
  auto launch = [&]<class T>() {
    launch_strided_elementwise<3>(
        shape, strides,
        ScatterAtomicElement<T>{op, static_cast<T*>(dst.data), static_cast<const T*>(src.data),
                                static_cast<const int64_t*>(index.data), index_scale},
        stream);
  };
  switch (dtype) {
    case ScalarType::Float32: return launch.template operator()<float>();
    case ScalarType::Float64: return launch.template operator()<double>();
    case ScalarType::Int32: return launch.template operator()<int32_t>();
    case ScalarType::Int64: return launch.template operator()<int64_t>();
    default: throw_unsupported_cuda_dtype("scatter_reduce", dtype);
  }
}

}  // namespace gradiens::kernels::cuda
