// CPU caching allocator. Blocks are rounded to size classes (64-byte steps up to
// 4 KiB, then quarter powers of two) and kept on per-class free lists when freed.
// Each block carries a 64-byte header holding its size class, so freeing needs
// no lookup table.
// Note [Caching allocator bounds]: the cache never holds more than
// max(256 MiB, the peak allocated size), so a long run's reserved memory is at
// most about twice its working set; beyond that freed blocks go back to the system.
#include "engine/allocator.h"

#include <cstdlib>
#include <algorithm>
#include <array>
#include <mutex>
#include <new>
#include <vector>

#include "kernels/error.h"

namespace gradiens::cpu_allocator {
namespace {

constexpr size_t kAlignment = 64;

size_t size_class(size_t bytes) {
  if (bytes <= 4096) return bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  // Four classes per power of two: at most 25% waste.
  size_t power = size_t{1} << (63 - __builtin_clzll(bytes));
  size_t step = power / 4;
  return (bytes + step - 1) / step * step;
}

// The free list of a size class: 64 lists for the 64-byte steps up to 4 KiB,
// then four per power of two (a class above 4 KiB is m * 2^q with m in 4..7).
constexpr size_t kFreeLists = 64 + 4 * 54;

size_t free_list_of(size_t cls) {
  if (cls <= 4096) return cls / kAlignment - 1;
  const int q = 63 - __builtin_clzll(cls) - 2;
  return 64 + static_cast<size_t>(q - 10) * 4 + ((cls >> q) - 4);
}

size_t* header(void* block) {
  return reinterpret_cast<size_t*>(static_cast<char*>(block) - kAlignment);
}

struct State {
  std::mutex mutex;
  std::array<std::vector<void*>, kFreeLists> free_blocks;  // by free_list_of(size class)
  MemoryStats stats;
  int64_t cached_bytes = 0;
  bool caching = true;
};

State& state() {
  static State* s = new State();  // never destroyed: tensors may die after main
  return *s;
}

}  // namespace

void* allocate(size_t bytes) {
  size_t cls = size_class(bytes);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  void* ptr = nullptr;
  std::vector<void*>& blocks = s.free_blocks[free_list_of(cls)];
  if (!blocks.empty()) {
    ptr = blocks.back();
    blocks.pop_back();
    s.cached_bytes -= static_cast<int64_t>(cls);
    ++s.stats.num_cache_hits;
  } else {
    void* raw = std::aligned_alloc(kAlignment, cls + kAlignment);
    if (!raw) throw Error("cpu allocator: out of memory allocating " + std::to_string(bytes) + " bytes");
    *static_cast<size_t*>(raw) = cls;
    ptr = static_cast<char*>(raw) + kAlignment;
    s.stats.reserved_bytes += static_cast<int64_t>(cls);
  }
  s.stats.allocated_bytes += static_cast<int64_t>(cls);
  ++s.stats.num_allocs;
  if (s.stats.allocated_bytes > s.stats.peak_allocated_bytes)
    s.stats.peak_allocated_bytes = s.stats.allocated_bytes;
  return ptr;
}

void deallocate(void* ptr) {
  if (!ptr) return;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  size_t cls = *header(ptr);
  s.stats.allocated_bytes -= static_cast<int64_t>(cls);
  int64_t limit = std::max<int64_t>(int64_t{256} << 20, s.stats.peak_allocated_bytes);
  if (s.caching && s.cached_bytes + static_cast<int64_t>(cls) <= limit) {
    s.free_blocks[free_list_of(cls)].push_back(ptr);
    s.cached_bytes += static_cast<int64_t>(cls);
  } else {
    std::free(header(ptr));
    s.stats.reserved_bytes -= static_cast<int64_t>(cls);
  }
}

MemoryStats stats() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.stats;
}

void reset_peak_stats() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stats.peak_allocated_bytes = s.stats.allocated_bytes;
}

void empty_cache() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (std::vector<void*>& blocks : s.free_blocks) {
    for (void* p : blocks) {
      s.stats.reserved_bytes -= static_cast<int64_t>(*header(p));
      std::free(header(p));
    }
    blocks.clear();
  }
  s.cached_bytes = 0;
}

void set_caching_enabled(bool enabled) {
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.caching = enabled;
  }
  if (!enabled) empty_cache();
}

}  // namespace gradiens::cpu_allocator
