// What every device-neutral kernel entry point (kernels/*.h) takes besides its
// buffers: the device to compute on, strided operand descriptions, and numbers
// passed by value. No CUDA headers and no engine types.
#pragma once

#include <cstdint>

#include "kernels/small_vector.h"

namespace gradiens::kernels {

enum class DeviceKind : int8_t { CPU, CUDA };

// Where an entry point computes: the CPU, or a cuda device and the stream its
// kernels are queued on (the device's current stream, an opaque cudaStream_t).
struct DeviceRef {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;
  void* stream = nullptr;
  bool is_cuda() const { return kind == DeviceKind::CUDA; }
};

// One operand of a call over an iteration shape: its first element, and its own
// sizes and strides (elements), broadcast to the call's shape as PyTorch does
// (aligned to the right; a missing or size-1 dim repeats). Borrowed: the sizes
// and strides must outlive the call.
struct StridedRef {
  void* data = nullptr;
  IntArrayRef sizes;
  IntArrayRef strides;
};

// A Python-like number passed by value (an alpha, a scalar operand, a fill
// value): converted to a kernel's type the way gradiens::Scalar::to<T> does, so
// an int64 beyond 2^53 keeps every bit.
struct Number {
  bool floating = true;
  double real = 0;
  int64_t integer = 0;

  static Number of_real(double v) { return {true, v, 0}; }
  static Number of_integer(int64_t v) { return {false, 0, v}; }
  template <class T>
  T to() const {
    return floating ? static_cast<T>(real) : static_cast<T>(integer);
  }
  double to_double() const { return to<double>(); }
};

}  // namespace gradiens::kernels
