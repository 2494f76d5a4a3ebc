// The device-agnostic core of the CUDA caching allocator: segments, blocks,
// best-fit reuse, splitting and merging, per-stream pools, record_stream
// events, the OOM ladder, stats and memory_summary. It includes no CUDA
// header: the device is reached through AllocatorBackend, so the whole policy
// is unit-tested on machines without a GPU (tests/kernels/test_cuda_caching_allocator.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/error.h"

namespace gradiens::kernels::cuda {

// A cudaStream_t cast to an integer; the allocator only compares them.
using StreamId = uint64_t;

// What the allocator needs from a device. The real one wraps cudaMalloc,
// cudaFree, cudaMemGetInfo and cudaEvent*; tests use a fake one.
class AllocatorBackend {
 public:
  virtual ~AllocatorBackend() = default;
  virtual void* device_malloc(size_t bytes) = 0;  // nullptr when out of memory, never throws for OOM
  virtual void device_free(void* ptr) = 0;
  virtual void mem_get_info(size_t& free_bytes, size_t& total_bytes) = 0;
  using EventId = uint64_t;
  virtual EventId record_event(StreamId stream) = 0;  // an event recorded now on `stream`
  virtual bool event_done(EventId event) = 0;        // query, non-blocking
  virtual void synchronize_event(EventId event) = 0; // block until done
  virtual void destroy_event(EventId event) = 0;
};

// Bytes unless said otherwise, with PyTorch's meaning: allocated = blocks
// handed out (512-rounded, plus any unsplit remainder); active = allocated plus
// freed blocks still waiting on record_stream events; requested = what callers
// asked for, over active blocks; reserved = segments taken from the device;
// inactive_split = cached free blocks inside partly used segments (memory
// empty_cache cannot return).
struct DeviceMemoryStats {
  int64_t allocated_bytes = 0, max_allocated_bytes = 0;
  int64_t reserved_bytes = 0, max_reserved_bytes = 0;
  int64_t active_bytes = 0, max_active_bytes = 0;
  int64_t requested_bytes = 0, max_requested_bytes = 0;
  int64_t inactive_split_bytes = 0;
  int64_t total_allocated_bytes = 0, total_freed_bytes = 0;  // cumulative, blocks handed out / given back
  int64_t allocation_count = 0, segment_count = 0, active_count = 0, inactive_split_count = 0;
  int64_t num_alloc_retries = 0;  // times the OOM ladder emptied the cache and retried
  int64_t num_ooms = 0;           // OutOfMemoryErrors thrown
  int64_t num_device_alloc = 0, num_device_free = 0;
  int64_t num_syncs = 0;          // synchronize_event calls (each blocks the CPU)
  int64_t largest_free_block = 0; // largest cached free block
};

// Everything an out-of-memory report states; sizes in bytes.
struct OutOfMemoryInfo {
  int device_index = 0;
  size_t requested = 0;           // what the caller asked for
  size_t allocated = 0;           // allocated by gradiens
  size_t reserved = 0;            // reserved by gradiens
  size_t free = 0, total = 0;     // the device, from mem_get_info
  size_t largest_free_block = 0;  // largest cached free block
  std::optional<size_t> limit;    // the set_memory_fraction cap, when one is set
  double memory_fraction = 1.0;
};

// Thrown when even the full OOM ladder cannot serve a request; the allocator
// stays usable afterwards. The message reads like PyTorch's.
class OutOfMemoryError : public Error {
 public:
  explicit OutOfMemoryError(const OutOfMemoryInfo& info);
  size_t requested() const { return info_.requested; }
  size_t allocated() const { return info_.allocated; }
  size_t reserved() const { return info_.reserved; }
  size_t free() const { return info_.free; }
  size_t total() const { return info_.total; }
  size_t largest_free_block() const { return info_.largest_free_block; }

 private:
  OutOfMemoryInfo info_;
};

// PyTorch's size text: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB".
std::string format_memory_size(size_t bytes);

// One device's caching allocator; thread-safe (one mutex), deterministic (no
// background threads, no clocks). See Note [Caching allocator policy] in the
// .cpp for how it differs from PyTorch's.
class CachingAllocator {
 public:
  CachingAllocator(std::unique_ptr<AllocatorBackend> backend, int device_index);
  // Returns every segment, live or cached, to the backend. Keep the allocator
  // alive as long as its blocks are in use.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // 0 bytes gives nullptr, which deallocate and record_stream accept.
  // Throws OutOfMemoryError when the device cannot serve the request.
  void* allocate(size_t bytes, StreamId stream);
  // An unknown pointer (double free, foreign memory) throws gradiens::Error.
  void deallocate(void* ptr);
  // The block is in use on `stream` too: after deallocate it is reused only
  // once an event recorded on `stream` at free time has completed.
  void record_stream(void* ptr, StreamId stream);

  DeviceMemoryStats stats() const;
  void reset_peak_stats();
  // Waits for pending record_stream events, then returns every fully free
  // segment to the backend.
  void empty_cache();
  // Caps reserved bytes at fraction * total device memory; fraction in (0, 1].
  void set_memory_fraction(double fraction);
  // Off: every allocate/deallocate goes straight to the backend with the exact
  // size (for compute-sanitizer). Turning it off empties the cache.
  void set_caching_enabled(bool on);
  // PyTorch's 75-column table, titled "gradiens CUDA memory summary".
  std::string memory_summary(bool abbreviated = false) const;
  int device_index() const;

  // Walks every block and segment and checks links, tiling, pool membership
  // and the byte counters; throws an internal error on a mismatch. For tests.
  void check_invariants() const;

 private:
  class Impl;  // segments, pools, counters and the mutex; see the .cpp
  std::unique_ptr<Impl> impl_;
};

}  // namespace gradiens::kernels::cuda
