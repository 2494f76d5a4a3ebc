// Tests for kernels/cuda/caching_allocator on a fake device: rounding and
// segment sizes, stats, reuse, split/merge, streams, record_stream, the OOM
// ladder and message, memory fraction, empty_cache, uncached mode, the summary
// table, fragmentation under a growing batch, and a randomized fuzz.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cuda/caching_allocator.h"
#include "kernels/error.h"

namespace {

using gradiens::kernels::cuda::AllocatorBackend;
using gradiens::kernels::cuda::CachingAllocator;
using gradiens::kernels::cuda::DeviceMemoryStats;
using gradiens::kernels::cuda::format_memory_size;
using gradiens::kernels::cuda::OutOfMemoryError;
using gradiens::kernels::cuda::StreamId;

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGiB = 1024 * kMiB;
constexpr StreamId kStream = 0x1000;  // stands for a cudaStream_t
constexpr StreamId kSideStream = 0x2000;

// A device made of address numbers only: allocations are never touched, so
// terabytes can be "allocated". Addresses are bumped and never reused, which
// makes every pointer the allocator returns traceable to one device_malloc.
class FakeBackend final : public AllocatorBackend {
 public:
  explicit FakeBackend(size_t total) : total_(total) {}

  void* device_malloc(size_t bytes) override {
    ++malloc_calls;
    last_malloc_size = bytes;
    if (used_ + external_ + bytes > total_) return nullptr;
    const uintptr_t address = next_address_;
    next_address_ += (bytes + kPage - 1) / kPage * kPage;
    live_.emplace(address, bytes);
    used_ += bytes;
    return reinterpret_cast<void*>(address);
  }
  void device_free(void* ptr) override {
    const auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == live_.end()) throw std::logic_error("FakeBackend: device_free of an unknown pointer");
    used_ -= it->second;
    live_.erase(it);
  }
  void mem_get_info(size_t& free_bytes, size_t& total_bytes) override {
    total_bytes = total_;
    free_bytes = total_ - used_ - external_;
  }
  EventId record_event(StreamId stream) override {
    events_.emplace(next_event_, Event{stream, complete_events_at_once});
    return next_event_++;
  }
  bool event_done(EventId event) override { return events_.at(event).done; }
  void synchronize_event(EventId event) override {
    events_.at(event).done = true;
    ++synchronize_calls;
  }
  void destroy_event(EventId event) override {
    if (events_.erase(event) == 0) throw std::logic_error("FakeBackend: destroy_event of an unknown event");
  }

  // What the tests control and read.
  void complete_events() {
    for (auto& [id, event] : events_) event.done = true;
  }
  void take_external_memory(size_t bytes) { external_ = bytes; }  // another process's usage
  size_t used() const { return used_; }
  size_t live_allocations() const { return live_.size(); }
  size_t live_events() const { return events_.size(); }
  bool holds(const void* ptr, size_t bytes) const {  // [ptr, ptr + bytes) inside one live allocation
    const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
    auto it = live_.upper_bound(address);
    if (it == live_.begin()) return false;
    --it;
    return address + bytes <= it->first + it->second;
  }

  bool complete_events_at_once = true;
  int64_t malloc_calls = 0;
  size_t last_malloc_size = 0;
  int64_t synchronize_calls = 0;

 private:
  struct Event {
    StreamId stream;
    bool done;
  };
  static constexpr uintptr_t kPage = 2 * kMiB;
  size_t total_;
  size_t used_ = 0, external_ = 0;
  uintptr_t next_address_ = uintptr_t{1} << 36;
  std::map<uintptr_t, size_t> live_;
  std::map<EventId, Event> events_;
  EventId next_event_ = 1;
};

// An allocator over a fresh fake device the test can still inspect.
struct TestDevice {
  explicit TestDevice(size_t total = 80 * kGiB, int index = 0) {
    auto backend = std::make_unique<FakeBackend>(total);
    fake = backend.get();
    allocator = std::make_unique<CachingAllocator>(std::move(backend), index);
  }
  FakeBackend* fake;
  std::unique_ptr<CachingAllocator> allocator;
};

char* bytes_at(void* ptr) { return static_cast<char*>(ptr); }

}  // namespace

TEST_CASE("cuda caching allocator: blocks round to 512 bytes and segments follow the size rules") {
  // allocated is the block, or the whole segment when the rest is too small to split off (<= 1 MiB, large pool).
  struct Row {
    size_t request, allocated, segment;
    const char* why;
  };
  const Row rows[] = {
      {1, 512, 2 * kMiB, "small pool: 2 MiB segments"},
      {513, 1024, 2 * kMiB, "512-byte rounding"},
      {1 * kMiB, 1 * kMiB, 2 * kMiB, "1 MiB is still small"},
      {1 * kMiB + 1, 1 * kMiB + 512, 22 * kMiB, "20 copies would need 22 MiB, so 21 go in"},
      {4 * kMiB, 4 * kMiB, 20 * kMiB, "five copies fill 20 MiB exactly"},
      {7 * kMiB, 7 * kMiB, 22 * kMiB, "three copies; PyTorch's 20 MiB holds two"},
      {10 * kMiB, 10 * kMiB, 10 * kMiB, "from 10 MiB one copy when it rounds well"},
      {12 * kMiB + 512 * kKiB, 12 * kMiB + 512 * kKiB, 26 * kMiB, "14 MiB would waste 1/9: two copies"},
      {33 * kMiB + 1, 34 * kMiB, 34 * kMiB, "2 MiB granularity up to 64 MiB; 1 MiB - 512 is not split off"},
      {101 * kMiB, 101 * kMiB, 104 * kMiB, "4 MiB classes between 64 and 128 MiB"},
      {3 * kGiB + 1, 3 * kGiB + 512, 3 * kGiB + 128 * kMiB, "128 MiB classes between 2 and 4 GiB"},
  };
  for (const Row& row : rows) {
    INFO(row.request, " bytes: ", row.why);
    TestDevice device;
    void* ptr = device.allocator->allocate(row.request, kStream);
    const DeviceMemoryStats stats = device.allocator->stats();
    CHECK(stats.allocated_bytes == static_cast<int64_t>(row.allocated));
    CHECK(stats.requested_bytes == static_cast<int64_t>(row.request));
    CHECK(stats.reserved_bytes == static_cast<int64_t>(row.segment));
    CHECK(device.fake->last_malloc_size == row.segment);
    CHECK(reinterpret_cast<uintptr_t>(ptr) % 512 == 0);
    device.allocator->deallocate(ptr);
    device.allocator->check_invariants();
  }
}

TEST_CASE("cuda caching allocator: stats keep PyTorch's meaning, peaks and reset") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  void* small = allocator.allocate(1000, kStream);
  void* large = allocator.allocate(5 * kMiB, kStream);  // four copies fill a 20 MiB segment
  DeviceMemoryStats stats = allocator.stats();
  CHECK(stats.allocated_bytes == 1024 + 5 * kMiB);
  CHECK(stats.requested_bytes == 1000 + 5 * kMiB);
  CHECK(stats.active_bytes == stats.allocated_bytes);
  CHECK(stats.reserved_bytes == 22 * kMiB);
  CHECK(stats.allocation_count == 2);
  CHECK(stats.segment_count == 2);
  CHECK(stats.inactive_split_bytes == (2 * kMiB - 1024) + 15 * kMiB);  // the two remainders
  CHECK(stats.inactive_split_count == 2);
  CHECK(stats.largest_free_block == 15 * kMiB);
  CHECK(stats.num_device_alloc == 2);

  allocator.deallocate(large);
  stats = allocator.stats();
  CHECK(stats.allocated_bytes == 1024);
  CHECK(stats.max_allocated_bytes == 1024 + 5 * kMiB);
  CHECK(stats.total_allocated_bytes == 1024 + 5 * kMiB);
  CHECK(stats.total_freed_bytes == 5 * kMiB);
  CHECK(stats.reserved_bytes == 22 * kMiB);  // cached, not returned
  CHECK(stats.inactive_split_bytes == 2 * kMiB - 1024);  // the 20 MiB segment merged back whole
  CHECK(stats.largest_free_block == 20 * kMiB);

  allocator.reset_peak_stats();
  stats = allocator.stats();
  CHECK(stats.max_allocated_bytes == 1024);
  CHECK(stats.max_requested_bytes == 1000);
  CHECK(stats.max_reserved_bytes == 22 * kMiB);
  void* another = allocator.allocate(2000, kStream);
  stats = allocator.stats();
  CHECK(stats.max_allocated_bytes == 1024 + 2048);
  CHECK(stats.allocated_bytes <= stats.reserved_bytes);
  allocator.deallocate(small);
  allocator.deallocate(another);
  CHECK(allocator.stats().max_allocated_bytes == 1024 + 2048);  // peaks never fall without a reset
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: a freed block comes back for the next fitting request") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  void* first = allocator.allocate(100 * kKiB, kStream);
  allocator.deallocate(first);
  CHECK(allocator.allocate(90 * kKiB, kStream) == first);

  void* big = allocator.allocate(50 * kMiB, kStream);
  allocator.deallocate(big);
  void* again = allocator.allocate(49 * kMiB, kStream);
  CHECK(again == big);
  // The 1 MiB left over is too small to split off in the large pool, so it stays with the block.
  CHECK(allocator.stats().allocated_bytes == 90 * kKiB + 50 * kMiB);
  CHECK(allocator.stats().requested_bytes == 90 * kKiB + 49 * kMiB);
  CHECK(allocator.stats().num_device_alloc == 2);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: blocks split inside a segment and merge back when freed") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  void* a = allocator.allocate(512 * kKiB, kStream);
  void* b = allocator.allocate(512 * kKiB, kStream);
  CHECK(bytes_at(b) == bytes_at(a) + 512 * kKiB);
  CHECK(allocator.stats().inactive_split_bytes == 1 * kMiB);
  CHECK(allocator.stats().inactive_split_count == 1);
  allocator.deallocate(a);  // free but beside a live block: non-releasable
  CHECK(allocator.stats().inactive_split_bytes == 1536 * kKiB);
  CHECK(allocator.stats().inactive_split_count == 2);
  allocator.deallocate(b);  // all three pieces merge into the whole segment
  CHECK(allocator.stats().inactive_split_bytes == 0);
  CHECK(allocator.stats().largest_free_block == 2 * kMiB);
  CHECK(allocator.allocate(1 * kMiB, kStream) == a);

  // Large pool: 4 MiB blocks are cut from one 20 MiB segment; a remainder of 1 MiB or less is not split off.
  void* blocks[4];
  for (void*& block : blocks) block = allocator.allocate(4 * kMiB, kStream);
  for (int i = 1; i < 4; ++i) CHECK(bytes_at(blocks[i]) == bytes_at(blocks[0]) + i * 4 * kMiB);
  void* last = allocator.allocate(3 * kMiB + 512 * kKiB, kStream);
  CHECK(bytes_at(last) == bytes_at(blocks[0]) + 16 * kMiB);
  CHECK(allocator.stats().allocated_bytes == 1 * kMiB + 20 * kMiB);
  CHECK(allocator.stats().num_device_alloc == 2);
  allocator.deallocate(blocks[1]);
  allocator.deallocate(blocks[2]);  // merges with blocks[1] into one 8 MiB hole
  CHECK(allocator.stats().largest_free_block == 8 * kMiB);
  CHECK(allocator.allocate(8 * kMiB, kStream) == blocks[1]);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: blocks are reused only on the stream they were allocated on") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  void* keeper = allocator.allocate(1 * kKiB, kStream);  // keeps the segment from being idle (and released)
  void* on_main = allocator.allocate(64 * kKiB, kStream);
  allocator.deallocate(on_main);
  void* on_side = allocator.allocate(64 * kKiB, kSideStream);
  CHECK(on_side != on_main);
  CHECK(allocator.stats().segment_count == 2);
  allocator.deallocate(on_side);
  CHECK(allocator.allocate(64 * kKiB, kStream) == on_main);
  CHECK(allocator.allocate(64 * kKiB, kSideStream) == on_side);
  CHECK(allocator.stats().num_device_alloc == 2);
  allocator.deallocate(keeper);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: record_stream defers reuse until the event completes") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  device.fake->complete_events_at_once = false;
  void* block = allocator.allocate(4096, kStream);
  allocator.record_stream(block, kStream);  // its own stream: no event needed
  allocator.record_stream(block, kSideStream);
  allocator.record_stream(block, kSideStream);  // recorded once
  allocator.deallocate(block);
  CHECK(device.fake->live_events() == 1);
  DeviceMemoryStats stats = allocator.stats();
  CHECK(stats.allocated_bytes == 0);
  CHECK(stats.active_bytes == 4096);  // still in use on the side stream
  CHECK(stats.requested_bytes == 4096);

  void* while_pending = allocator.allocate(4096, kStream);
  CHECK(while_pending != block);
  CHECK(bytes_at(while_pending) == bytes_at(block) + 4096);
  allocator.deallocate(while_pending);
  CHECK(allocator.allocate(4096, kStream) == while_pending);  // the pending block is still skipped

  device.fake->complete_events();
  void* after = allocator.allocate(4096, kStream);  // polls the event first
  CHECK(after == block);
  CHECK(device.fake->live_events() == 0);
  CHECK(allocator.stats().num_syncs == 0);  // polled, never waited on
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: before failing, pending frees are synced and the pool searched again") {
  // pytorch#189504: a block freed behind an event fits, so waiting for it must beat an OOM.
  TestDevice device(2 * kMiB);
  CachingAllocator& allocator = *device.allocator;
  device.fake->complete_events_at_once = false;
  void* held = allocator.allocate(1 * kMiB, kStream);
  allocator.record_stream(held, kSideStream);
  allocator.deallocate(held);
  void* second = allocator.allocate(1 * kMiB, kStream);  // the other half of the only segment
  CHECK(second != held);
  void* third = allocator.allocate(1 * kMiB, kStream);  // device full: wait for the event
  CHECK(third == held);
  const DeviceMemoryStats stats = allocator.stats();
  CHECK(stats.num_syncs == 1);
  CHECK(device.fake->synchronize_calls == 1);
  CHECK(stats.num_ooms == 0);
  CHECK(stats.num_device_alloc == 1);
  CHECK(device.fake->live_events() == 0);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: the OOM ladder returns cached segments and retries") {
  TestDevice device(1 * kGiB);
  CachingAllocator& allocator = *device.allocator;
  allocator.deallocate(allocator.allocate(900 * kMiB, kStream));
  allocator.empty_cache();  // reserved 0, high-water mark 900 MiB
  allocator.deallocate(allocator.allocate(300 * kMiB, kStream));  // cached, too small for what follows
  device.fake->take_external_memory(500 * kMiB);                  // leaves 224 MiB free on the device
  void* ptr = allocator.allocate(400 * kMiB, kStream);
  const DeviceMemoryStats stats = allocator.stats();
  CHECK(stats.num_alloc_retries == 1);
  CHECK(stats.num_ooms == 0);
  CHECK(stats.num_device_free == 2);  // the 900 MiB at empty_cache, the 300 MiB by the ladder
  CHECK(stats.reserved_bytes == 400 * kMiB);
  allocator.deallocate(ptr);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: OOM reads like PyTorch's, carries the numbers, and leaves it usable") {
  TestDevice device(1 * kGiB, 0);
  CachingAllocator& allocator = *device.allocator;
  void* half = allocator.allocate(512 * kMiB, kStream);
  std::string message;
  try {
    allocator.allocate(2 * kGiB, kStream);
    FAIL("no OutOfMemoryError");
  } catch (const OutOfMemoryError& error) {
    message = error.what();
    CHECK(error.requested() == 2 * kGiB);
    CHECK(error.allocated() == 512 * kMiB);
    CHECK(error.reserved() == 512 * kMiB);
    CHECK(error.free() == 512 * kMiB);
    CHECK(error.total() == 1 * kGiB);
    CHECK(error.largest_free_block() == 0);
  }
  CHECK(message ==
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 1024.00 MiB of which "
        "512.00 MiB is free. Of the allocated memory 512.00 MiB is allocated by gradiens, and 0 bytes is reserved "
        "by gradiens but unallocated. The largest free block is 0 bytes.");
  const DeviceMemoryStats stats = allocator.stats();
  CHECK(stats.num_ooms == 1);
  CHECK(stats.num_alloc_retries == 1);
  void* small = allocator.allocate(1000, kStream);  // still usable
  CHECK(small != nullptr);
  CHECK(allocator.stats().allocated_bytes == 512 * kMiB + 1024);

  // An OOM is also a gradiens::Error; fragmentation is named when reserved memory is stranded.
  allocator.deallocate(half);
  allocator.deallocate(small);
  allocator.empty_cache();
  void* pinned = allocator.allocate(4 * kMiB, kStream);  // one live block keeps its 20 MiB segment
  CHECK_THROWS_AS(allocator.allocate(1 * kGiB, kStream), gradiens::Error);
  try {
    allocator.allocate(1 * kGiB, kStream);
  } catch (const OutOfMemoryError& error) {
    CHECK(error.reserved() == 20 * kMiB);
    CHECK(error.largest_free_block() == 16 * kMiB);
    CHECK(std::string(error.what()).find("16.00 MiB is reserved by gradiens but unallocated. The largest free "
                                         "block is 16.00 MiB. The unallocated part lies in segments shared with "
                                         "live tensors") != std::string::npos);
  }
  CHECK(allocator.stats().num_ooms == 3);
  allocator.deallocate(pinned);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: set_memory_fraction caps reserved memory") {
  TestDevice device(1 * kGiB);
  CachingAllocator& allocator = *device.allocator;
  CHECK_THROWS_AS(allocator.set_memory_fraction(0.0), gradiens::Error);
  CHECK_THROWS_AS(allocator.set_memory_fraction(1.5), gradiens::Error);
  allocator.set_memory_fraction(0.25);  // 256 MiB
  void* first = allocator.allocate(200 * kMiB, kStream);
  try {
    allocator.allocate(100 * kMiB, kStream);  // the device has room, the cap does not
    FAIL("no OutOfMemoryError");
  } catch (const OutOfMemoryError& error) {
    CHECK(error.free() == 824 * kMiB);  // 200 MiB is a 16 MiB multiple: no class rounding
    CHECK(std::string(error.what()).find("gradiens may reserve at most 256.00 MiB on it (set_memory_fraction(0.25))") !=
          std::string::npos);
  }
  CHECK(device.fake->malloc_calls == 1);  // the cap refused before the device was asked
  void* second = allocator.allocate(50 * kMiB, kStream);
  CHECK(allocator.stats().reserved_bytes == 250 * kMiB);
  allocator.set_memory_fraction(1.0);
  void* third = allocator.allocate(100 * kMiB, kStream);
  CHECK(allocator.stats().reserved_bytes == 350 * kMiB);
  for (void* ptr : {first, second, third}) allocator.deallocate(ptr);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: empty_cache returns every fully free segment") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  device.fake->complete_events_at_once = false;
  std::vector<void*> blocks;
  for (size_t bytes : {size_t{100}, 300 * kKiB, 3 * kMiB, 30 * kMiB, 300 * kMiB})
    blocks.push_back(allocator.allocate(bytes, kStream));
  void* keeper = allocator.allocate(1 * kKiB, kSideStream);
  allocator.record_stream(blocks[3], kSideStream);
  for (void* block : blocks) allocator.deallocate(block);
  allocator.empty_cache();  // the side stream's block and its segment stay
  DeviceMemoryStats stats = allocator.stats();
  CHECK(stats.reserved_bytes == 2 * kMiB);
  CHECK(stats.segment_count == 1);
  CHECK(stats.num_syncs == 1);  // the pending free of blocks[3] was waited for
  CHECK(device.fake->live_allocations() == 1);
  allocator.deallocate(keeper);
  allocator.empty_cache();
  stats = allocator.stats();
  CHECK(stats.reserved_bytes == 0);
  CHECK(stats.segment_count == 0);
  CHECK(stats.largest_free_block == 0);
  CHECK(device.fake->used() == 0);
  CHECK(device.fake->live_events() == 0);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: with caching off every call reaches the device") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  void* cached_era = allocator.allocate(10 * kKiB, kStream);
  allocator.deallocate(allocator.allocate(30 * kMiB, kStream));
  allocator.set_caching_enabled(false);  // empties the cache
  CHECK(allocator.stats().reserved_bytes == 2 * kMiB);

  void* exact = allocator.allocate(1000, kStream);
  CHECK(device.fake->last_malloc_size == 1000);  // no rounding: compute-sanitizer sees the true size
  CHECK(allocator.stats().allocated_bytes == 10 * kKiB + 1000);
  allocator.record_stream(exact, kSideStream);
  allocator.deallocate(exact);
  CHECK(device.fake->live_events() == 0);  // the device free waits for all streams anyway
  allocator.deallocate(cached_era);        // its segment is now idle and goes back at once
  CHECK(allocator.stats().reserved_bytes == 0);
  CHECK(device.fake->live_allocations() == 0);
  const int64_t frees = allocator.stats().num_device_free;
  allocator.deallocate(allocator.allocate(1000, kStream));
  CHECK(allocator.stats().num_device_free == frees + 1);

  allocator.set_caching_enabled(true);
  void* cached = allocator.allocate(1000, kStream);
  allocator.deallocate(cached);
  CHECK(allocator.allocate(1000, kStream) == cached);
  CHECK(allocator.stats().reserved_bytes == 2 * kMiB);
  allocator.check_invariants();
}

TEST_CASE("cuda caching allocator: memory_summary prints PyTorch's table") {
  TestDevice device(80 * kGiB, 3);
  CachingAllocator& allocator = *device.allocator;
  void* small = allocator.allocate(3 * kMiB / 4, kStream);  // 768 KiB
  void* large = allocator.allocate(12 * kMiB, kStream);
  const std::string summary = allocator.memory_summary();
  std::istringstream lines(summary);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    INFO(line);
    CHECK(line.size() == 77);
    CHECK(line.front() == '|');
    CHECK(line.back() == '|');
    ++count;
  }
  CHECK(count == 46);  // 6 header lines, 9 metrics x (rule + 3 rows), rule, 2 footer lines, closing rule
  auto contains = [&](const std::string& text) { return summary.find(text) != std::string::npos; };
  CHECK(contains("|                  gradiens CUDA memory summary, device ID 3                |"));
  CHECK(contains("|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |"));
  CHECK(contains("|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |"));
  CHECK(contains("| Allocated memory      |  13056 KiB |  13056 KiB |  13056 KiB |      0 B   |"));
  CHECK(contains("|       from large pool |  12288 KiB |  12288 KiB |  12288 KiB |      0 B   |"));
  CHECK(contains("|       from small pool |    768 KiB |    768 KiB |    768 KiB |      0 B   |"));
  CHECK(contains("| GPU reserved memory   |  14336 KiB |  14336 KiB |  14336 KiB |      0 B   |"));
  CHECK(contains("| Non-releasable memory |   1280 KiB |   1280 KiB |   1280 KiB |      0 B   |"));
  CHECK(contains("| Allocations           |       2    |       2    |       2    |       0    |"));
  CHECK(contains("| GPU reserved segments |       2    |       2    |       2    |       0    |"));
  CHECK(contains("| Active memory"));
  CHECK(contains("| Requested memory"));
  CHECK(contains("| Active allocs"));
  CHECK(contains("| Non-releasable allocs"));
  CHECK(contains("  Largest free block: 1.25 MiB"));
  CHECK(contains("  cudaMalloc calls: 2"));

  const std::string abbreviated = allocator.memory_summary(/*abbreviated=*/true);
  CHECK(abbreviated.find("from large pool") == std::string::npos);
  CHECK(abbreviated.find("| Allocated memory      |  13056 KiB |") != std::string::npos);
  allocator.deallocate(small);
  allocator.deallocate(large);
}

TEST_CASE("cuda caching allocator: a shape change recycles idle segments instead of adding to them") {
  // Note [Peak-preserving growth]: PyTorch would keep the 12 MiB segment and reserve 26 MiB.
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  allocator.deallocate(allocator.allocate(12 * kMiB, kStream));
  void* grown = allocator.allocate(14 * kMiB, kStream);
  DeviceMemoryStats stats = allocator.stats();
  CHECK(stats.reserved_bytes == 14 * kMiB);
  CHECK(stats.max_reserved_bytes == 14 * kMiB);
  CHECK(stats.num_device_free == 1);
  allocator.deallocate(grown);

  // Note [Fill efficiency]: a whole 20 MiB segment is not cut for one 10.5 MiB block (9.5 MiB stranded);
  // its fresh segment holds two (22 MiB), and the idle 20 MiB goes back.
  TestDevice other;
  CachingAllocator& fresh = *other.allocator;
  void* shared = fresh.allocate(4 * kMiB, kStream);  // 20 MiB segment
  fresh.deallocate(shared);
  void* odd = fresh.allocate(10 * kMiB + 512 * kKiB, kStream);
  CHECK(odd != shared);
  stats = fresh.stats();
  CHECK(stats.reserved_bytes == 22 * kMiB);
  CHECK(stats.num_device_free == 1);
  fresh.deallocate(odd);
  fresh.check_invariants();
}

TEST_CASE("cuda caching allocator: alternating shapes settle instead of releasing every iteration") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  auto iteration = [&] {
    allocator.deallocate(allocator.allocate(30 * kMiB, kStream));
    allocator.deallocate(allocator.allocate(40 * kMiB, kStream));
  };
  for (int i = 0; i < 3; ++i) iteration();
  const DeviceMemoryStats settled = allocator.stats();
  CHECK(settled.num_device_alloc == 3);  // 30, 40 (releasing the 30), then 30 again, kept this time
  CHECK(settled.num_device_free == 1);
  CHECK(settled.reserved_bytes == 70 * kMiB);
  for (int i = 0; i < 20; ++i) iteration();
  CHECK(allocator.stats().num_device_alloc == 3);
  CHECK(allocator.stats().num_device_free == 1);
  allocator.check_invariants();
}

namespace {

struct GrowingBatchResult {
  double reserved_over_allocated, reserved_over_requested;
  int64_t device_allocs, device_frees, max_reserved;
};

// 50 layers each keep an activation of N * bytes_per_sample * width(layer)
// until the iteration ends; N grows by one per iteration.
GrowingBatchResult run_growing_batch(size_t bytes_per_sample, bool varied_widths) {
  TestDevice device(4096 * kGiB);
  CachingAllocator& allocator = *device.allocator;
  std::vector<void*> activations;
  for (size_t batch = 1; batch <= 200; ++batch) {
    for (size_t layer = 0; layer < 50; ++layer) {
      const size_t width = varied_widths ? 1 + layer % 4 : 1;
      activations.push_back(allocator.allocate(batch * bytes_per_sample * width, kStream));
    }
    for (void* activation : activations) allocator.deallocate(activation);
    activations.clear();
  }
  allocator.check_invariants();
  const DeviceMemoryStats stats = allocator.stats();
  return {static_cast<double>(stats.max_reserved_bytes) / static_cast<double>(stats.max_allocated_bytes),
          static_cast<double>(stats.max_reserved_bytes) / static_cast<double>(stats.max_requested_bytes),
          stats.num_device_alloc, stats.num_device_free, stats.max_reserved_bytes};
}

}  // namespace

TEST_CASE("cuda caching allocator: a growing batch keeps max reserved / max allocated <= 1.1") {
  // Last-iteration activations of 7.8 MiB to 200 MiB (x4 with varied widths). PyTorch's allocator keeps
  // every outgrown segment here, so its reserved memory is the sum over all batch sizes seen.
  struct Row {
    size_t bytes_per_sample;
    bool varied_widths;
  };
  const Row rows[] = {{40 * kKiB, false}, {64 * kKiB, false}, {100 * kKiB, false}, {256 * kKiB, false},
                      {1 * kMiB, false},  {64 * kKiB, true},  {256 * kKiB, true},  {1 * kMiB, true}};
  for (const Row& row : rows) {
    const GrowingBatchResult result = run_growing_batch(row.bytes_per_sample, row.varied_widths);
    INFO(row.bytes_per_sample, " bytes per sample, varied widths ", row.varied_widths);
    const std::string widths = row.varied_widths ? " x1-4 widths" : "";
    MESSAGE("growing batch, ", row.bytes_per_sample / kKiB, " KiB/sample", widths,
            ": max reserved / max allocated = ", result.reserved_over_allocated,
            ", / max requested = ", result.reserved_over_requested, ", device mallocs ", result.device_allocs,
            ", frees ", result.device_frees);
    CHECK(result.reserved_over_allocated <= 1.1);
    CHECK(result.reserved_over_requested <= 1.1);
  }
}

TEST_CASE("cuda caching allocator: a growing batch of small tensors stays within one segment of 1.1") {
  // With 50 activations of at most a few MiB, the last partly filled segment alone (2 MiB small, ~24 MiB
  // shared large) can exceed 10%, and 2 MiB small segments hold only two blocks of 0.67-1 MiB.
  for (size_t bytes_per_sample : {4 * kKiB, 8 * kKiB, 10 * kKiB, 16 * kKiB, 20 * kKiB}) {
    const GrowingBatchResult result = run_growing_batch(bytes_per_sample, false);
    const double final_requested = 50.0 * 200.0 * static_cast<double>(bytes_per_sample);
    MESSAGE("growing batch, ", bytes_per_sample / kKiB, " KiB/sample: max reserved / max allocated = ",
            result.reserved_over_allocated, ", / max requested = ", result.reserved_over_requested);
    CHECK(static_cast<double>(result.max_reserved) <= final_requested * 1.1 + 24.0 * kMiB);
  }
  // 200 * 4 KiB = 800 KiB blocks: two per 2 MiB small segment, 25 segments, nothing more.
  CHECK(run_growing_batch(4 * kKiB, false).max_reserved == 50 * kMiB);
}

namespace {

// Random allocate / free / record_stream / event completion / empty_cache on
// three streams of a 1 GiB device, checking invariants after every step.
// Returns a trace of every pointer and stat snapshot for the determinism check.
std::vector<uint64_t> run_fuzz(uint32_t seed, int steps) {
  TestDevice device(1 * kGiB);
  CachingAllocator& allocator = *device.allocator;
  device.fake->complete_events_at_once = false;
  std::mt19937_64 random(seed);
  auto uniform = [&](uint64_t below) { return std::uniform_int_distribution<uint64_t>(0, below - 1)(random); };
  const StreamId streams[] = {kStream, kSideStream, 0x3000};
  struct Live {
    void* ptr;
    size_t bytes;
  };
  std::vector<Live> live;
  std::vector<uint64_t> trace;
  int64_t last_max_allocated = 0, last_max_reserved = 0;
  for (int step = 0; step < steps; ++step) {
    const uint64_t op = uniform(100);
    if (op < 48) {
      // Log-uniform sizes from 1 byte to 256 MiB.
      const size_t bytes = size_t{1} << uniform(28);
      const size_t size = bytes + uniform(bytes);
      try {
        void* ptr = allocator.allocate(size, streams[uniform(3)]);
        live.push_back({ptr, size});
        trace.push_back(reinterpret_cast<uintptr_t>(ptr));
      } catch (const OutOfMemoryError& error) {
        trace.push_back(error.requested());
      }
    } else if (op < 90) {
      if (live.empty()) continue;
      const size_t index = uniform(live.size());
      allocator.deallocate(live[index].ptr);
      live[index] = live.back();
      live.pop_back();
    } else if (op < 95) {
      if (live.empty()) continue;
      allocator.record_stream(live[uniform(live.size())].ptr, streams[uniform(3)]);
    } else if (op < 98) {
      device.fake->complete_events();
    } else if (op < 99) {
      allocator.empty_cache();
    } else {
      allocator.reset_peak_stats();
      last_max_allocated = last_max_reserved = 0;
    }
    allocator.check_invariants();
    const DeviceMemoryStats stats = allocator.stats();
    REQUIRE(stats.allocated_bytes <= stats.active_bytes);
    REQUIRE(stats.active_bytes <= stats.reserved_bytes);
    REQUIRE(stats.reserved_bytes == static_cast<int64_t>(device.fake->used()));
    REQUIRE(stats.segment_count == static_cast<int64_t>(device.fake->live_allocations()));
    REQUIRE(stats.allocation_count == static_cast<int64_t>(live.size()));
    REQUIRE(stats.max_allocated_bytes >= std::max(stats.allocated_bytes, last_max_allocated));
    REQUIRE(stats.max_reserved_bytes >= std::max(stats.reserved_bytes, last_max_reserved));
    last_max_allocated = stats.max_allocated_bytes;
    last_max_reserved = stats.max_reserved_bytes;
    // Live blocks lie inside device allocations and never overlap.
    std::vector<Live> by_address = live;
    std::sort(by_address.begin(), by_address.end(),
              [](const Live& a, const Live& b) { return std::less<void*>()(a.ptr, b.ptr); });
    for (size_t i = 0; i < by_address.size(); ++i) {
      REQUIRE(device.fake->holds(by_address[i].ptr, by_address[i].bytes));
      REQUIRE(reinterpret_cast<uintptr_t>(by_address[i].ptr) % 512 == 0);
      if (i + 1 < by_address.size())
        REQUIRE(bytes_at(by_address[i].ptr) + by_address[i].bytes <= bytes_at(by_address[i + 1].ptr));
    }
    trace.push_back(static_cast<uint64_t>(stats.reserved_bytes));
  }
  const DeviceMemoryStats coverage = allocator.stats();  // every path was taken
  CHECK(coverage.num_ooms > 0);
  CHECK(coverage.num_alloc_retries >= coverage.num_ooms);
  CHECK(coverage.num_syncs > 0);
  CHECK(coverage.num_device_free > 0);
  for (const Live& block : live) allocator.deallocate(block.ptr);
  allocator.empty_cache();
  REQUIRE(allocator.stats().reserved_bytes == 0);
  REQUIRE(device.fake->live_events() == 0);
  return trace;
}

}  // namespace

TEST_CASE("cuda caching allocator: randomized allocate/free keeps every invariant, deterministically") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    INFO("seed ", seed);
    const std::vector<uint64_t> first = run_fuzz(seed, 1500);
    CHECK(first == run_fuzz(seed, 1500));  // same requests, same addresses and stats
  }
}

TEST_CASE("cuda caching allocator: concurrent threads on their own streams") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  std::vector<std::thread> threads;
  for (int thread = 0; thread < 4; ++thread) {
    threads.emplace_back([&allocator, thread] {
      std::mt19937 random(static_cast<uint32_t>(thread));
      std::vector<void*> live;
      for (int i = 0; i < 2000; ++i) {
        if (live.size() < 16 && random() % 2 == 0) {
          live.push_back(allocator.allocate(1 + random() % (4 * kMiB), kStream + static_cast<StreamId>(thread)));
        } else if (!live.empty()) {
          allocator.deallocate(live.back());
          live.pop_back();
        }
      }
      for (void* ptr : live) allocator.deallocate(ptr);
    });
  }
  for (std::thread& thread : threads) thread.join();
  allocator.check_invariants();
  CHECK(allocator.stats().allocated_bytes == 0);
  CHECK(allocator.stats().active_bytes == 0);
}

TEST_CASE("cuda caching allocator: zero bytes, unknown pointers and double frees") {
  TestDevice device;
  CachingAllocator& allocator = *device.allocator;
  CHECK(allocator.allocate(0, kStream) == nullptr);
  allocator.deallocate(nullptr);
  allocator.record_stream(nullptr, kSideStream);
  CHECK(allocator.stats().num_device_alloc == 0);

  void* ptr = allocator.allocate(100, kStream);
  CHECK_THROWS_AS(allocator.deallocate(bytes_at(ptr) + 512), gradiens::Error);  // inside, but not a block start
  CHECK_THROWS_AS(allocator.record_stream(bytes_at(ptr) + 512, kSideStream), gradiens::Error);
  allocator.deallocate(ptr);
  CHECK_THROWS_WITH_AS(allocator.deallocate(ptr),
                       doctest::Contains("got a pointer it did not allocate or that was already freed"),
                       gradiens::Error);
  CHECK(allocator.device_index() == 0);
  CHECK(format_memory_size(1024) == "1024 bytes");
  CHECK(format_memory_size(1536) == "1.50 KiB");
  CHECK(format_memory_size(20 * kMiB) == "20.00 MiB");
  allocator.check_invariants();
}
