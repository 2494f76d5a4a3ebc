// CPU caching allocator. Blocks are rounded to size classes (64-byte steps up to
// 4 KiB, then quarter powers of two) and kept on per-class free lists when freed.
// Each block carries a 64-byte header holding its size class, so freeing needs
// no lookup table.
// Note [Caching allocator bounds]: the cache never holds more than
// max(256 MiB, the peak allocated size), so a long run's reserved memory is at
// most about twice its working set. A freed block that would overflow it first
// pushes out the blocks of the least recently used size classes: a program that
// moves on to other shapes (evaluation after training, one workload after another)
// gets its new blocks cached instead of paying mmap and page faults on every op
// while the cache stays full of blocks nobody asks for.
#include "engine/allocator.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
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

size_t* header(void* block) { return reinterpret_cast<size_t*>(static_cast<char*>(block) - kAlignment); }

struct State {
  std::mutex mutex;
  std::array<std::vector<void*>, kFreeLists> free_blocks;  // by free_list_of(size class)
  std::array<uint64_t, kFreeLists> last_use{};             // tick of each list's last hit or return
  uint64_t tick = 0;
  MemoryStats stats;
  int64_t cached_bytes = 0;
  bool caching = true;
};

State& state() {
  static State* s = new State();  // never destroyed: tensors may die after main
  return *s;
}

// Frees cached blocks of the least recently used lists other than `keep` until
// `bytes` more fit under `limit`; false when they do not fit even then.
bool make_room(State& s, size_t keep, int64_t bytes, int64_t limit) {
  while (s.cached_bytes + bytes > limit) {
    size_t oldest = kFreeLists;
    for (size_t i = 0; i < kFreeLists; ++i)
      if (i != keep && !s.free_blocks[i].empty() && (oldest == kFreeLists || s.last_use[i] < s.last_use[oldest]))
        oldest = i;
    if (oldest == kFreeLists) return false;
    void* victim = s.free_blocks[oldest].back();
    s.free_blocks[oldest].pop_back();
    const auto victim_bytes = static_cast<int64_t>(*header(victim));
    s.cached_bytes -= victim_bytes;
    s.stats.reserved_bytes -= victim_bytes;
    std::free(header(victim));
  }
  return true;
}

}  // namespace

void* allocate(size_t bytes) {
  size_t cls = size_class(bytes);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  void* ptr = nullptr;
  const size_t list = free_list_of(cls);
  std::vector<void*>& blocks = s.free_blocks[list];
  if (!blocks.empty()) {
    s.last_use[list] = ++s.tick;
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
  if (s.stats.allocated_bytes > s.stats.peak_allocated_bytes) s.stats.peak_allocated_bytes = s.stats.allocated_bytes;
  return ptr;
}

void deallocate(void* ptr) {
  if (!ptr) return;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  size_t cls = *header(ptr);
  s.stats.allocated_bytes -= static_cast<int64_t>(cls);
  const int64_t limit = std::max<int64_t>(int64_t{256} << 20, s.stats.peak_allocated_bytes);
  const size_t list = free_list_of(cls);
  if (s.caching && make_room(s, list, static_cast<int64_t>(cls), limit)) {
    s.free_blocks[list].push_back(ptr);
    s.last_use[list] = ++s.tick;
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
