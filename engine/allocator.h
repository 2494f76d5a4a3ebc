// The CPU caching allocator: freed blocks are kept by size and handed out again,
// so a training step does not pay mmap and page faults for every temporary.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gradiens {

struct MemoryStats {
  int64_t allocated_bytes = 0;       // in tensors now
  int64_t reserved_bytes = 0;        // allocated + kept in the cache
  int64_t peak_allocated_bytes = 0;  // highest allocated_bytes since the last reset
  int64_t num_allocs = 0;            // requests served
  int64_t num_cache_hits = 0;        // requests served from the cache
};

namespace cpu_allocator {
// 64-byte aligned block of at least `bytes` (0 gives a valid unique pointer).
void* allocate(size_t bytes);
void deallocate(void* ptr);
MemoryStats stats();
void reset_peak_stats();
// Returns every cached block to the system.
void empty_cache();
// Caching can be switched off (e.g. to let ASan see each block's lifetime).
void set_caching_enabled(bool enabled);
}  // namespace cpu_allocator

}  // namespace gradiens
