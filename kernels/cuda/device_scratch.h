// Temporary device memory for one kernel call (CUB's temp storage, sort keys),
// taken from the device's caching allocator and given back at the end of the
// scope. The allocator is stream-ordered, so giving it back while kernels that
// use it are still queued on the current stream is safe.
#pragma once

#include <cstddef>

#include "kernels/cuda/runtime.h"

namespace gradiens::kernels::cuda {

class DeviceScratch {
 public:
  // At least one byte, so CUB never mistakes the buffer for a size query.
  DeviceScratch(size_t bytes, int device)
      : device_(device), data_(device_malloc(bytes == 0 ? 1 : bytes, device)) {}
  ~DeviceScratch() { device_free(data_, device_); }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;

  template <class T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }

 private:
  int device_;
  void* data_;
};

}  // namespace gradiens::kernels::cuda
