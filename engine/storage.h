// Storage: the ref-counted buffer behind one or more tensors, and the version
// counter that every view of it shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "engine/device.h"

namespace gradiens {

// Note [Version Counter Sharing]
// Every in-place write to a buffer bumps its version. Views and detach() share
// the Storage, hence the counter, so a write through any alias is seen by every
// SavedVariable that snapshot the buffer: backward then refuses to use a value
// that changed after it was saved, instead of silently computing a wrong
// gradient.
class StorageImpl {
 public:
  // Owns `bytes` from the device's caching allocator.
  StorageImpl(size_t bytes, Device device);
  // Wraps memory the caller owns; `deleter` (may be empty) runs on destruction.
  StorageImpl(void* data, size_t bytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl();
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  const Device& device() const { return device_; }
  uint32_t version() const { return version_; }
  void bump_version() { ++version_; }
  // Page-locked host memory (Tensor::pin_memory).
  bool is_pinned() const { return pinned_; }
  void set_pinned(bool pinned) { pinned_ = pinned; }
  // Enlarges the buffer to `bytes` in place (every tensor sharing the storage
  // sees the new buffer), keeping the old bytes first, as Tensor::resize_ needs.
  // Only memory from the caching allocator can grow.
  void grow(size_t bytes);

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void(void*)> deleter_;  // empty: the caching allocator owns data_
  bool owned_by_allocator_;
  uint32_t version_ = 0;
  bool pinned_ = false;
};

using Storage = std::shared_ptr<StorageImpl>;

}  // namespace gradiens
