// StorageImpl: allocation through the caching allocator, or wrapping user memory.
#include "engine/storage.h"

#include <cstring>

#include "engine/allocator.h"
#include "kernels/cuda/runtime.h"
#include "kernels/error.h"

namespace gradiens {

StorageImpl::StorageImpl(size_t bytes, Device device)
    : data_(nullptr), nbytes_(bytes), device_(device), owned_by_allocator_(true) {
  if (device.is_cuda()) {
    GD_CHECK(kernels::cuda::is_built(), "gradiens was built without CUDA support: cannot allocate on " + device.str());
    const int index = device.index() < 0 ? kernels::cuda::current_device() : device.index();
    kernels::cuda::check_device_index(index);
    device_ = Device(kCUDA, index);
    data_ = kernels::cuda::device_malloc(bytes, index);
    return;
  }
  data_ = cpu_allocator::allocate(bytes);
}

StorageImpl::StorageImpl(void* data, size_t bytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(bytes), device_(device), deleter_(std::move(deleter)), owned_by_allocator_(false) {}

void StorageImpl::grow(size_t bytes) {
  if (bytes <= nbytes_) return;
  GD_CHECK(owned_by_allocator_ && !pinned_,
           "Trying to resize storage that is not resizable (it wraps memory gradiens does not own)");
  void* grown = nullptr;
  if (device_.is_cuda()) {
    grown = kernels::cuda::device_malloc(bytes, device_.index());
    if (nbytes_ > 0) kernels::cuda::copy_device_to_device(grown, data_, nbytes_, device_.index());
    kernels::cuda::device_free(data_, device_.index());
  } else {
    grown = cpu_allocator::allocate(bytes);
    if (nbytes_ > 0) std::memcpy(grown, data_, nbytes_);
    cpu_allocator::deallocate(data_);
  }
  data_ = grown;
  nbytes_ = bytes;
}

StorageImpl::~StorageImpl() {
  if (owned_by_allocator_ && device_.is_cuda()) kernels::cuda::device_free(data_, device_.index());
  else if (owned_by_allocator_) cpu_allocator::deallocate(data_);
  else if (deleter_) deleter_(data_);
}

}  // namespace gradiens
