// CachingAllocator: PyTorch's CUDACachingAllocator (512-byte rounding, small
// and large pools, best fit, split and merge, per-stream reuse, record_stream
// events, stats) plus a segment policy that keeps fragmentation bounded and an
// OOM ladder that searches the cache again after syncing events.
#include "kernels/cuda/caching_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

// Note [Caching allocator policy]
// Same as PyTorch: requests round up to 512 bytes; those up to 1 MiB come from
// 2 MiB small-pool segments, larger ones from the large pool; a free block is
// found by best fit among blocks of the same stream and pool and split when
// the rest is worth keeping (>= 512 B small, > 1 MiB large); freed neighbours
// merge; record_stream defers reuse until events recorded at free time are
// done, polled on the next allocate.
//
// Different from PyTorch, to keep reserved close to allocated when tensor
// sizes drift (the batch N -> N+1 pattern, where PyTorch keeps every old
// segment and reserved grows without bound until an OOM flushes the cache):
// - Segment sizes (segment_size_for). A large segment holds the fewest copies
//   of its first request (enough to fill 20 MiB below 10 MiB, else one) whose
//   rounding to the granularity (2 MiB; 1/16 of a power of two above 32 MiB)
//   wastes at most 1/16. PyTorch's fixed 20 MiB fits two 7 MiB tensors and
//   strands 6 MiB; here 7 MiB gets 22 MiB for three. 12.5 MiB gets 26 MiB for
//   two rather than 14 MiB with 1.5 MiB stranded. Size classes let a slowly
//   growing tensor keep fitting its old segment for a while.
// - Note [Fill efficiency]: a whole free segment is cut for a request only if
//   copies of the request would leave at most 1/16 of it unused, or no more
//   than a fresh segment for that request would. A 20 MiB segment is not cut
//   for one 10.5 MiB tensor, stranding 9.5 MiB beside it. Partly used
//   segments are always usable (they cannot be returned anyway), and the OOM
//   ladder ignores this rule before failing.
// - Note [Peak-preserving growth]: before taking a new segment that would
//   raise reserved above its all-time high-water mark, idle whole segments
//   are returned to the device, least recently used first, until it fits
//   under the mark. Segments left behind by a shape change are so recycled at
//   once instead of at OOM time. To avoid churn (releasing a segment, then
//   needing it again every iteration), a release remembers the block size the
//   segment last served; when a request of exactly that size (same pool and
//   stream) needs a new segment, the mark grows instead, once per remembered
//   release. Sizes that drift (growth) never match; shapes that alternate do.
// - OOM ladder: search; new segment; search ignoring fill efficiency; sync
//   pending events and search again (pytorch#189504); return every idle
//   segment, retry the segment and then a segment of exactly the block size;
//   throw OutOfMemoryError.

namespace gradiens::kernels::cuda {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGiB = 1024 * kMiB;
constexpr size_t kMinBlockSize = 512;        // every request rounds up to a multiple of this
constexpr size_t kSmallSize = 1 * kMiB;      // requests up to this go to the small pool
constexpr size_t kSmallBuffer = 2 * kMiB;    // small-pool segment size
constexpr size_t kLargeBuffer = 20 * kMiB;   // 1-10 MiB requests share segments of at least this size
constexpr size_t kMinLargeAlloc = 10 * kMiB; // from here on a segment may hold a single block
constexpr size_t kRoundLarge = 2 * kMiB;     // large segments are multiples of the device page
constexpr size_t kSizeClassesPerOctave = 16;
constexpr double kMaxSegmentWaste = 1.0 / 16; // see segment_size_for and Note [Fill efficiency]
constexpr size_t kReleaseMemory = 64;        // remembered releases, Note [Peak-preserving growth]
constexpr size_t kLargestRequest = std::numeric_limits<size_t>::max() / 4;  // beyond: OOM, not overflow

size_t round_up(size_t value, size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// Large segments are multiples of the device page, and above 32 MiB of a
// size class (1/16 of a power of two), so a growing tensor keeps fitting.
size_t segment_granularity(size_t bytes) {
  return std::max(kRoundLarge, std::bit_floor(bytes) / kSizeClassesPerOctave);
}

// The segment a fresh request of `block_size` (already 512-rounded) gets: the
// fewest copies of it (enough to fill 20 MiB below 10 MiB, else one) whose
// rounding up to the granularity wastes at most kMaxSegmentWaste.
size_t segment_size_for(size_t block_size) {
  if (block_size <= kSmallSize) return kSmallBuffer;
  size_t copies = block_size < kMinLargeAlloc ? (kLargeBuffer + block_size - 1) / block_size : 1;
  size_t best = 0;
  double best_waste = 1.0;
  for (int attempt = 0; attempt < 8; ++attempt, ++copies) {
    const size_t bytes = copies * block_size;
    const size_t segment = round_up(bytes, segment_granularity(bytes));
    const double waste = static_cast<double>(segment - bytes) / static_cast<double>(segment);
    if (waste < best_waste) best = segment, best_waste = waste;
    if (waste <= kMaxSegmentWaste) break;
  }
  return best;
}

// Fraction of a segment that whole copies of `block_size` would fill.
double packing(size_t segment_size, size_t block_size) {
  return static_cast<double>(segment_size / block_size * block_size) / static_cast<double>(segment_size);
}

// Note [Fill efficiency].
bool packs_well(size_t whole_segment_size, size_t block_size) {
  const double fill = packing(whole_segment_size, block_size);
  return fill >= 1.0 - kMaxSegmentWaste || fill >= packing(segment_size_for(block_size), block_size);
}

bool should_split(bool is_small, size_t remaining) {
  return is_small ? remaining >= kMinBlockSize : remaining > kSmallSize;
}

std::string out_of_memory_message(const OutOfMemoryInfo& info) {
  std::string message = fmt::format(
      "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. ",
      format_memory_size(info.requested), info.device_index, format_memory_size(info.total),
      format_memory_size(info.free));
  if (info.limit)
    message += fmt::format("gradiens may reserve at most {} on it (set_memory_fraction({})). ",
                           format_memory_size(*info.limit), info.memory_fraction);
  message += fmt::format(
      "Of the allocated memory {} is allocated by gradiens, and {} is reserved by gradiens but unallocated. "
      "The largest free block is {}.",
      format_memory_size(info.allocated), format_memory_size(info.reserved - info.allocated),
      format_memory_size(info.largest_free_block));
  if (info.reserved > info.allocated)
    message += " The unallocated part lies in segments shared with live tensors (fragmentation), "
               "which empty_cache() cannot return.";
  return message;
}

// memory_summary's cells, as torch/cuda/memory.py formats them.
// value scaled down by `base` as long as `preferred` (the row's peak) stays at
// or above `threshold` in the current unit, with that unit's prefix.
template <size_t N>
std::pair<int64_t, const char*> scaled(int64_t value, int64_t preferred, const std::array<const char*, N>& prefixes,
                                       int64_t base, double threshold) {
  size_t prefix = 0;
  double preferred_scaled = static_cast<double>(preferred);
  while (prefix + 1 < N && preferred_scaled >= threshold) {
    ++prefix;
    value /= base;
    preferred_scaled /= static_cast<double>(base);
  }
  return {value, prefixes[prefix]};
}

std::string summary_size(int64_t size, int64_t preferred) {
  static constexpr std::array<const char*, 6> kPrefixes = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const auto [value, prefix] = scaled(size, preferred, kPrefixes, 1024, 768.0 * 1024.0);
  return fmt::format("{:6d} {}", value, prefix);
}

std::string summary_count(int64_t count, int64_t preferred) {
  static constexpr std::array<const char*, 3> kPrefixes = {" ", "K", "M"};
  const auto [value, prefix] = scaled(count, preferred, kPrefixes, 1000, 750.0 * 1000.0);
  return fmt::format("{:7d} {} ", value, prefix);
}

}  // namespace

std::string format_memory_size(size_t bytes) {
  const double value = static_cast<double>(bytes);
  if (bytes <= kKiB) return fmt::format("{} bytes", bytes);
  if (bytes <= kMiB) return fmt::format("{:.2f} KiB", value / static_cast<double>(kKiB));
  if (bytes <= kGiB) return fmt::format("{:.2f} MiB", value / static_cast<double>(kMiB));
  return fmt::format("{:.2f} GiB", value / static_cast<double>(kGiB));
}

OutOfMemoryError::OutOfMemoryError(const OutOfMemoryInfo& info)
    : Error(out_of_memory_message(info)), info_(info) {}

// ---- the allocator's state ---------------------------------------------------

class CachingAllocator::Impl {
 public:
  Impl(std::unique_ptr<AllocatorBackend> backend, int index) : device_index(index), backend_(std::move(backend)) {}
  ~Impl();

  void* allocate(size_t bytes, StreamId stream);
  void deallocate(void* ptr);
  void record_stream(void* ptr, StreamId stream);
  DeviceMemoryStats stats() const;
  void reset_peak_stats();
  void empty_cache();
  void set_memory_fraction(double fraction);
  void set_caching_enabled(bool on);
  std::string memory_summary(bool abbreviated) const;
  void check_invariants() const;

  std::mutex mutex;  // every public entry point holds it; the member functions assume it held
  const int device_index;

 private:
  // A piece of a segment: handed out, cached in a pool, or freed but waiting
  // on record_stream events. Pieces of one segment form a list by address.
  struct Block {
    Block(char* base, size_t bytes, StreamId on_stream, bool in_small_pool)
        : ptr(base), size(bytes), stream(on_stream), is_small(in_small_pool) {}
    char* ptr;
    size_t size;
    StreamId stream;
    bool is_small;               // which pool
    size_t requested = 0;        // what the caller asked for, while active
    bool allocated = false;
    bool uncached = false;       // a whole segment from set_caching_enabled(false)
    Block* prev = nullptr;       // neighbours inside the segment
    Block* next = nullptr;
    int pending_events = 0;      // record_stream events still to complete
    std::vector<StreamId> stream_uses;
    uint64_t last_use = 0;       // use_clock_ when last handed out
    size_t last_block_size = 0;  // the last block handed out from this segment
    bool is_whole_segment() const { return prev == nullptr && next == nullptr; }
  };
  // A merged or split-off block carries the segment's most recent use.
  static void keep_latest_use(Block* into, const Block* from) {
    if (from->last_use < into->last_use) return;
    into->last_use = from->last_use;
    into->last_block_size = from->last_block_size;
  }
  struct BlockOrder {  // by stream, then size, then address: lower_bound is best fit
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return std::less<const char*>()(a->ptr, b->ptr);
    }
  };
  using BlockPool = std::set<Block*, BlockOrder>;
  // One counter as PyTorch keeps it: current, peak, and cumulative in and out.
  struct Stat {
    int64_t current = 0, peak = 0, allocated = 0, freed = 0;
    void add(int64_t amount) {
      current += amount;
      if (amount > 0) allocated += amount;
      else freed -= amount;
      peak = std::max(peak, current);
    }
  };
  enum StatPool { kAllPools = 0, kLargePool = 1, kSmallPool = 2, kNumStatPools = 3 };
  using PoolStat = std::array<Stat, kNumStatPools>;
  struct PendingFree {
    AllocatorBackend::EventId event;
    Block* block;
  };
  struct ReleasedSegment {  // Note [Peak-preserving growth]
    size_t last_block_size;
    bool is_small;
    StreamId stream;
  };

  Block* take_free_block(bool is_small, StreamId stream, size_t size, bool strict);
  Block* allocate_segment(size_t segment_size, bool is_small, StreamId stream);
  void make_room_below_high_water(size_t segment_size, size_t block_size, bool is_small, StreamId stream);
  void* hand_out(Block* block, size_t size, size_t requested);
  void free_block(Block* block);
  void release_segment(Block* block);
  void free_segment(Block* block);
  std::vector<Block*> idle_segments() const;
  void release_idle_segments();
  void release_if_uncaching(Block* block);
  void process_events();
  void synchronize_pending_events();
  void insert_into_pool(Block* block);
  void erase_from_pool(Block* block);
  BlockPool& pool_for(bool is_small) { return is_small ? small_blocks_ : large_blocks_; }
  void count(PoolStat& stat, bool is_small, int64_t amount);
  void count_active(bool is_small, int64_t size, int64_t requested, int sign);
  size_t reserved() const { return static_cast<size_t>(reserved_bytes_[kAllPools].current); }
  size_t largest_free_block() const;
  Block* find_live(void* ptr, const char* caller);
  [[noreturn]] void throw_out_of_memory(size_t requested);

  std::unique_ptr<AllocatorBackend> backend_;
  BlockPool small_blocks_, large_blocks_;
  std::unordered_map<void*, Block*> live_blocks_;
  std::deque<PendingFree> pending_frees_;
  std::map<char*, size_t> segments_;  // base -> size of every segment taken from the backend
  PoolStat allocated_bytes_, reserved_bytes_, active_bytes_, requested_bytes_, inactive_split_bytes_;
  PoolStat allocation_, segment_, active_, inactive_split_;
  int64_t num_alloc_retries_ = 0, num_ooms_ = 0, num_device_alloc_ = 0, num_device_free_ = 0, num_syncs_ = 0;
  size_t reserved_high_water_ = 0;  // never reset: the policy's peak, not the user-visible one
  std::deque<ReleasedSegment> recently_released_;
  uint64_t use_clock_ = 0;
  std::optional<size_t> memory_limit_;
  double memory_fraction_ = 1.0;
  bool caching_enabled_ = true;
};

CachingAllocator::Impl::~Impl() {
  for (const PendingFree& pending : pending_frees_) backend_->destroy_event(pending.event);
  std::set<Block*> blocks(small_blocks_.begin(), small_blocks_.end());
  blocks.insert(large_blocks_.begin(), large_blocks_.end());
  for (const auto& [ptr, block] : live_blocks_) blocks.insert(block);
  for (const PendingFree& pending : pending_frees_) blocks.insert(pending.block);
  for (Block* block : blocks) delete block;
  for (const auto& [base, size] : segments_) backend_->device_free(base);
}

void CachingAllocator::Impl::count(PoolStat& stat, bool is_small, int64_t amount) {
  stat[kAllPools].add(amount);
  stat[is_small ? kSmallPool : kLargePool].add(amount);
}

// sign +1 when a block becomes active, -1 when it stops being active.
void CachingAllocator::Impl::count_active(bool is_small, int64_t size, int64_t requested, int sign) {
  count(active_bytes_, is_small, sign * size);
  count(requested_bytes_, is_small, sign * requested);
  count(active_, is_small, sign);
}

void CachingAllocator::Impl::insert_into_pool(Block* block) {
  pool_for(block->is_small).insert(block);
  if (!block->is_whole_segment()) {
    count(inactive_split_bytes_, block->is_small, static_cast<int64_t>(block->size));
    count(inactive_split_, block->is_small, 1);
  }
}

// The block's neighbours must be those it had when inserted.
void CachingAllocator::Impl::erase_from_pool(Block* block) {
  pool_for(block->is_small).erase(block);
  if (!block->is_whole_segment()) {
    count(inactive_split_bytes_, block->is_small, -static_cast<int64_t>(block->size));
    count(inactive_split_, block->is_small, -1);
  }
}

// Best fit among this stream's free blocks; strict applies Note [Fill efficiency].
CachingAllocator::Impl::Block* CachingAllocator::Impl::take_free_block(bool is_small, StreamId stream,
                                                                        size_t size, bool strict) {
  BlockPool& pool = pool_for(is_small);
  Block key(nullptr, size, stream, is_small);
  for (auto it = pool.lower_bound(&key); it != pool.end() && (*it)->stream == stream; ++it) {
    Block* block = *it;
    if (strict && block->is_whole_segment() && !packs_well(block->size, size)) continue;
    erase_from_pool(block);
    return block;
  }
  return nullptr;
}

// A new whole segment, not yet in any pool; nullptr when the cap or the device says no.
CachingAllocator::Impl::Block* CachingAllocator::Impl::allocate_segment(size_t segment_size, bool is_small,
                                                                         StreamId stream) {
  if (memory_limit_ && reserved() + segment_size > *memory_limit_) return nullptr;
  void* raw = backend_->device_malloc(segment_size);
  if (raw == nullptr) return nullptr;
  ++num_device_alloc_;
  char* base = static_cast<char*>(raw);
  segments_.emplace(base, segment_size);
  count(reserved_bytes_, is_small, static_cast<int64_t>(segment_size));
  count(segment_, is_small, 1);
  reserved_high_water_ = std::max(reserved_high_water_, reserved());
  Block* block = new Block(base, segment_size, stream, is_small);
  block->last_use = use_clock_;
  return block;
}

// Note [Peak-preserving growth].
void CachingAllocator::Impl::make_room_below_high_water(size_t segment_size, size_t block_size, bool is_small,
                                                        StreamId stream) {
  if (reserved() + segment_size <= reserved_high_water_) return;
  std::vector<Block*> idle = idle_segments();
  if (idle.empty()) return;
  for (auto it = recently_released_.begin(); it != recently_released_.end(); ++it) {
    if (it->last_block_size == block_size && it->is_small == is_small && it->stream == stream) {
      recently_released_.erase(it);  // releasing now would only repeat that release: grow instead
      return;
    }
  }
  std::sort(idle.begin(), idle.end(), [](const Block* a, const Block* b) {
    if (a->last_use != b->last_use) return a->last_use < b->last_use;
    return std::less<const char*>()(a->ptr, b->ptr);
  });
  for (Block* block : idle) {
    if (reserved() + segment_size <= reserved_high_water_) break;
    recently_released_.push_back({block->last_block_size, block->is_small, block->stream});
    if (recently_released_.size() > kReleaseMemory) recently_released_.pop_front();
    release_segment(block);
  }
}

void* CachingAllocator::Impl::hand_out(Block* block, size_t size, size_t requested) {
  const size_t remaining = block->size - size;
  if (should_split(block->is_small, remaining)) {
    Block* rest = new Block(block->ptr + size, remaining, block->stream, block->is_small);
    rest->prev = block;
    rest->next = block->next;
    if (rest->next != nullptr) rest->next->prev = rest;
    block->next = rest;
    block->size = size;
    keep_latest_use(rest, block);
    insert_into_pool(rest);
  }
  block->allocated = true;
  block->requested = requested;
  block->last_use = ++use_clock_;
  block->last_block_size = size;
  live_blocks_.emplace(block->ptr, block);
  count(allocated_bytes_, block->is_small, static_cast<int64_t>(block->size));
  count(allocation_, block->is_small, 1);
  count_active(block->is_small, static_cast<int64_t>(block->size), static_cast<int64_t>(requested), +1);
  return block->ptr;
}

// Returns a block that is no longer allocated nor awaited to its pool, merged
// with free neighbours.
void CachingAllocator::Impl::free_block(Block* block) {
  count_active(block->is_small, static_cast<int64_t>(block->size), static_cast<int64_t>(block->requested), -1);
  block->requested = 0;
  auto is_free = [](const Block* neighbour) {
    return neighbour != nullptr && !neighbour->allocated && neighbour->pending_events == 0;
  };
  if (is_free(block->prev)) {
    Block* prev = block->prev;
    erase_from_pool(prev);
    block->ptr = prev->ptr;
    block->size += prev->size;
    block->prev = prev->prev;
    if (block->prev != nullptr) block->prev->next = block;
    keep_latest_use(block, prev);
    delete prev;
  }
  if (is_free(block->next)) {
    Block* next = block->next;
    erase_from_pool(next);
    block->size += next->size;
    block->next = next->next;
    if (block->next != nullptr) block->next->prev = block;
    keep_latest_use(block, next);
    delete next;
  }
  insert_into_pool(block);
}

// Gives a cached whole segment back to the backend.
void CachingAllocator::Impl::release_segment(Block* block) {
  erase_from_pool(block);
  free_segment(block);
}

// Frees a whole segment that is in no pool and updates the counters.
void CachingAllocator::Impl::free_segment(Block* block) {
  backend_->device_free(block->ptr);
  ++num_device_free_;
  segments_.erase(block->ptr);
  count(reserved_bytes_, block->is_small, -static_cast<int64_t>(block->size));
  count(segment_, block->is_small, -1);
  delete block;
}

// Cached segments without a live or awaited block, in pool order.
std::vector<CachingAllocator::Impl::Block*> CachingAllocator::Impl::idle_segments() const {
  std::vector<Block*> idle;
  for (const BlockPool* pool : {&small_blocks_, &large_blocks_})
    for (Block* block : *pool)
      if (block->is_whole_segment()) idle.push_back(block);
  return idle;
}

void CachingAllocator::Impl::release_idle_segments() {
  for (Block* block : idle_segments()) release_segment(block);
}

// With caching off, a segment goes back to the device as soon as it is idle.
void CachingAllocator::Impl::release_if_uncaching(Block* block) {
  if (!caching_enabled_ && block->is_whole_segment()) release_segment(block);
}

// Returns blocks whose record_stream events have all completed; non-blocking.
void CachingAllocator::Impl::process_events() {
  for (auto it = pending_frees_.begin(); it != pending_frees_.end();) {
    if (!backend_->event_done(it->event)) {
      ++it;
      continue;
    }
    backend_->destroy_event(it->event);
    Block* block = it->block;
    it = pending_frees_.erase(it);
    if (--block->pending_events == 0) {
      free_block(block);
      release_if_uncaching(block);
    }
  }
}

void CachingAllocator::Impl::synchronize_pending_events() {
  while (!pending_frees_.empty()) {
    const PendingFree pending = pending_frees_.front();
    pending_frees_.pop_front();
    backend_->synchronize_event(pending.event);
    ++num_syncs_;
    backend_->destroy_event(pending.event);
    if (--pending.block->pending_events == 0) {
      free_block(pending.block);
      release_if_uncaching(pending.block);
    }
  }
}

size_t CachingAllocator::Impl::largest_free_block() const {
  size_t largest = 0;
  for (const BlockPool* pool : {&small_blocks_, &large_blocks_})
    for (const Block* block : *pool) largest = std::max(largest, block->size);
  return largest;
}

void CachingAllocator::Impl::throw_out_of_memory(size_t requested) {
  ++num_ooms_;
  OutOfMemoryInfo info;
  info.device_index = device_index;
  info.requested = requested;
  info.allocated = static_cast<size_t>(allocated_bytes_[kAllPools].current);
  info.reserved = reserved();
  backend_->mem_get_info(info.free, info.total);
  info.largest_free_block = largest_free_block();
  info.limit = memory_limit_;
  info.memory_fraction = memory_fraction_;
  throw OutOfMemoryError(info);
}

// Note [Caching allocator policy] lists the steps.
void* CachingAllocator::Impl::allocate(size_t bytes, StreamId stream) {
  if (bytes > kLargestRequest) throw_out_of_memory(bytes);
  process_events();
  if (!caching_enabled_) {
    const bool is_small = bytes <= kSmallSize;
    Block* block = allocate_segment(bytes, is_small, stream);
    if (block == nullptr) {  // segments from the caching era may still be idle
      ++num_alloc_retries_;
      synchronize_pending_events();
      release_idle_segments();
      block = allocate_segment(bytes, is_small, stream);
    }
    if (block == nullptr) throw_out_of_memory(bytes);
    block->uncached = true;
    return hand_out(block, bytes, bytes);
  }
  const size_t size = round_up(bytes, kMinBlockSize);
  const bool is_small = size <= kSmallSize;
  const size_t segment_size = segment_size_for(size);
  Block* block = take_free_block(is_small, stream, size, /*strict=*/true);
  if (block == nullptr) {
    make_room_below_high_water(segment_size, size, is_small, stream);
    block = allocate_segment(segment_size, is_small, stream);
  }
  if (block == nullptr) block = take_free_block(is_small, stream, size, /*strict=*/false);
  if (block == nullptr && !pending_frees_.empty()) {
    synchronize_pending_events();
    block = take_free_block(is_small, stream, size, /*strict=*/false);  // pytorch#189504
  }
  if (block == nullptr) {
    ++num_alloc_retries_;
    release_idle_segments();
    block = allocate_segment(segment_size, is_small, stream);
    if (block == nullptr && segment_size > size) block = allocate_segment(size, is_small, stream);
  }
  if (block == nullptr) throw_out_of_memory(bytes);
  return hand_out(block, size, bytes);
}

CachingAllocator::Impl::Block* CachingAllocator::Impl::find_live(void* ptr, const char* caller) {
  const auto it = live_blocks_.find(ptr);
  GD_CHECK(it != live_blocks_.end(),
           fmt::format("CUDA caching allocator (device {}): {}({}) got a pointer it did not allocate or "
                       "that was already freed",
                       device_index, caller, fmt::ptr(ptr)));
  return it->second;
}

void CachingAllocator::Impl::deallocate(void* ptr) {
  Block* block = find_live(ptr, "deallocate");
  // Events first: if the backend throws, the block is still live and consistent.
  std::vector<AllocatorBackend::EventId> events;
  if (!block->uncached)
    for (StreamId stream : block->stream_uses) events.push_back(backend_->record_event(stream));
  live_blocks_.erase(ptr);
  block->allocated = false;
  count(allocated_bytes_, block->is_small, -static_cast<int64_t>(block->size));
  count(allocation_, block->is_small, -1);
  if (block->uncached) {  // the device free synchronises, so stream uses need no event
    count_active(block->is_small, static_cast<int64_t>(block->size), static_cast<int64_t>(block->requested), -1);
    free_segment(block);
    return;
  }
  block->stream_uses.clear();
  if (!events.empty()) {
    for (AllocatorBackend::EventId event : events) pending_frees_.push_back({event, block});
    block->pending_events = static_cast<int>(events.size());
    return;
  }
  free_block(block);
  release_if_uncaching(block);
}

void CachingAllocator::Impl::record_stream(void* ptr, StreamId stream) {
  Block* block = find_live(ptr, "record_stream");
  if (stream == block->stream) return;
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) == block->stream_uses.end())
    block->stream_uses.push_back(stream);
}

DeviceMemoryStats CachingAllocator::Impl::stats() const {
  DeviceMemoryStats out;
  out.allocated_bytes = allocated_bytes_[kAllPools].current;
  out.max_allocated_bytes = allocated_bytes_[kAllPools].peak;
  out.reserved_bytes = reserved_bytes_[kAllPools].current;
  out.max_reserved_bytes = reserved_bytes_[kAllPools].peak;
  out.active_bytes = active_bytes_[kAllPools].current;
  out.max_active_bytes = active_bytes_[kAllPools].peak;
  out.requested_bytes = requested_bytes_[kAllPools].current;
  out.max_requested_bytes = requested_bytes_[kAllPools].peak;
  out.inactive_split_bytes = inactive_split_bytes_[kAllPools].current;
  out.total_allocated_bytes = allocated_bytes_[kAllPools].allocated;
  out.total_freed_bytes = allocated_bytes_[kAllPools].freed;
  out.allocation_count = allocation_[kAllPools].current;
  out.segment_count = segment_[kAllPools].current;
  out.active_count = active_[kAllPools].current;
  out.inactive_split_count = inactive_split_[kAllPools].current;
  out.num_alloc_retries = num_alloc_retries_;
  out.num_ooms = num_ooms_;
  out.num_device_alloc = num_device_alloc_;
  out.num_device_free = num_device_free_;
  out.num_syncs = num_syncs_;
  out.largest_free_block = static_cast<int64_t>(largest_free_block());
  return out;
}

void CachingAllocator::Impl::reset_peak_stats() {
  for (PoolStat* stat : {&allocated_bytes_, &reserved_bytes_, &active_bytes_, &requested_bytes_,
                         &inactive_split_bytes_, &allocation_, &segment_, &active_, &inactive_split_})
    for (Stat& pool : *stat) pool.peak = pool.current;
}

void CachingAllocator::Impl::empty_cache() {
  synchronize_pending_events();
  release_idle_segments();
}

void CachingAllocator::Impl::set_memory_fraction(double fraction) {
  GD_CHECK(fraction > 0.0 && fraction <= 1.0,
           fmt::format("set_memory_fraction: fraction must be in (0, 1], got {}", fraction));
  size_t free = 0, total = 0;
  backend_->mem_get_info(free, total);
  memory_fraction_ = fraction;
  memory_limit_ = static_cast<size_t>(fraction * static_cast<double>(total));
}

void CachingAllocator::Impl::set_caching_enabled(bool on) {
  caching_enabled_ = on;
  if (!on) empty_cache();
}

std::string CachingAllocator::Impl::memory_summary(bool abbreviated) const {
  using Formatter = std::string (*)(int64_t, int64_t);
  struct Metric {
    const PoolStat* stat;
    const char* name;
    Formatter format;
  };
  const Metric metrics[] = {
      {&allocated_bytes_, "Allocated memory", summary_size},
      {&active_bytes_, "Active memory", summary_size},
      {&requested_bytes_, "Requested memory", summary_size},
      {&reserved_bytes_, "GPU reserved memory", summary_size},
      {&inactive_split_bytes_, "Non-releasable memory", summary_size},
      {&allocation_, "Allocations", summary_count},
      {&active_, "Active allocs", summary_count},
      {&segment_, "GPU reserved segments", summary_count},
      {&inactive_split_, "Non-releasable allocs", summary_count},
  };
  const std::string heavy_rule(75, '='), light_rule(75, '-');
  std::vector<std::string> lines = {
      heavy_rule,
      fmt::format(" {:16} gradiens CUDA memory summary, device ID {:<16} ", "", device_index),
      light_rule,
      fmt::format("  {:9} CUDA OOMs: {:<12} | {:6} cudaMalloc retries: {:<8}  ", "", num_ooms_, "",
                  num_alloc_retries_),
      heavy_rule,
      "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ",
  };
  for (const Metric& metric : metrics) {
    lines.push_back(light_rule);
    const Stat& all = (*metric.stat)[kAllPools];
    const std::pair<StatPool, const char*> rows[] = {
        {kAllPools, metric.name}, {kLargePool, "      from large pool"}, {kSmallPool, "      from small pool"}};
    for (const auto& [pool, name] : rows) {
      if (abbreviated && pool != kAllPools) break;
      const Stat& stat = (*metric.stat)[pool];
      lines.push_back(fmt::format(" {:<21} | {} | {} | {} | {} ", name, metric.format(stat.current, all.current),
                                  metric.format(stat.peak, all.peak), metric.format(stat.allocated, all.allocated),
                                  metric.format(stat.freed, all.freed)));
    }
  }
  lines.push_back(light_rule);
  lines.push_back(fmt::format("{:<36}|{:<38}",
                              fmt::format("  Largest free block: {}", format_memory_size(largest_free_block())),
                              fmt::format("  Allocator syncs: {}", num_syncs_)));
  lines.push_back(fmt::format("{:<36}|{:<38}", fmt::format("  cudaMalloc calls: {}", num_device_alloc_),
                              fmt::format("  cudaFree calls: {}", num_device_free_)));
  lines.push_back(heavy_rule);
  std::string summary;
  for (const std::string& line : lines) summary += "|" + line + "|\n";
  return summary;
}

void CachingAllocator::Impl::check_invariants() const {
  std::map<const char*, const Block*> by_address;
  auto add = [&](const Block* block) { by_address.emplace(block->ptr, block); };
  int64_t pooled = 0;
  for (const BlockPool* pool : {&small_blocks_, &large_blocks_}) {
    for (const Block* block : *pool) {
      GD_INTERNAL_ASSERT(!block->allocated && block->pending_events == 0 && !block->uncached,
                         "a pooled block is free and awaits nothing");
      GD_INTERNAL_ASSERT(block->is_small == (pool == &small_blocks_), "a block sits in its own pool");
      add(block);
      ++pooled;
    }
  }
  std::array<int64_t, kNumStatPools> allocated{}, active{}, requested{}, split_bytes{}, split_count{}, live{},
      active_count{};
  auto tally = [](std::array<int64_t, kNumStatPools>& total, bool is_small, int64_t amount) {
    total[kAllPools] += amount;
    total[is_small ? kSmallPool : kLargePool] += amount;
  };
  for (const auto& [ptr, block] : live_blocks_) {
    GD_INTERNAL_ASSERT(block->allocated && block->ptr == ptr, "live blocks are allocated and keyed by address");
    add(block);
    tally(allocated, block->is_small, static_cast<int64_t>(block->size));
    tally(live, block->is_small, 1);
  }
  std::map<const Block*, int> events_per_block;
  for (const PendingFree& pending : pending_frees_) ++events_per_block[pending.block];
  for (const auto& [block, events] : events_per_block) {
    GD_INTERNAL_ASSERT(!block->allocated && block->pending_events == events,
                       "a block waiting on events counts them");
    add(block);
  }
  GD_INTERNAL_ASSERT(by_address.size() == static_cast<size_t>(pooled) + live_blocks_.size() + events_per_block.size(),
                     "every block has one state and one address");
  for (const auto& [address, block] : by_address) {
    if (block->allocated || block->pending_events > 0) {
      tally(active, block->is_small, static_cast<int64_t>(block->size));
      tally(active_count, block->is_small, 1);
      tally(requested, block->is_small, static_cast<int64_t>(block->requested));
    } else if (!block->is_whole_segment()) {
      tally(split_bytes, block->is_small, static_cast<int64_t>(block->size));
      tally(split_count, block->is_small, 1);
    }
  }
  std::array<int64_t, kNumStatPools> reserved_total{}, segment_total{};
  size_t visited = 0;
  for (const auto& [base, size] : segments_) {
    const auto head = by_address.find(base);
    GD_INTERNAL_ASSERT(head != by_address.end() && head->second->prev == nullptr, "a segment starts with a block");
    size_t covered = 0;
    for (const Block* block = head->second; block != nullptr; block = block->next) {
      GD_INTERNAL_ASSERT(block->ptr == base + covered, "a segment's blocks tile it without gaps");
      GD_INTERNAL_ASSERT(block->stream == head->second->stream && block->is_small == head->second->is_small,
                         "a segment's blocks share its stream and pool");
      if (block->next != nullptr) {
        GD_INTERNAL_ASSERT(block->next->prev == block, "neighbour links agree");
        const bool both_free = !block->allocated && block->pending_events == 0 && !block->next->allocated &&
                               block->next->pending_events == 0;
        GD_INTERNAL_ASSERT(!both_free, "free neighbours are merged");
      }
      covered += block->size;
      ++visited;
    }
    GD_INTERNAL_ASSERT(covered == size, "a segment's blocks add up to its size");
    tally(reserved_total, head->second->is_small, static_cast<int64_t>(size));
    tally(segment_total, head->second->is_small, 1);
  }
  GD_INTERNAL_ASSERT(visited == by_address.size(), "every block belongs to a segment");
  GD_INTERNAL_ASSERT(reserved() <= reserved_high_water_, "the high-water mark covers reserved memory");
  for (int pool = 0; pool < kNumStatPools; ++pool) {
    GD_INTERNAL_ASSERT(allocated_bytes_[pool].current == allocated[pool], "allocated_bytes matches the blocks");
    GD_INTERNAL_ASSERT(allocation_[pool].current == live[pool], "allocation count matches the blocks");
    GD_INTERNAL_ASSERT(active_bytes_[pool].current == active[pool], "active_bytes matches the blocks");
    GD_INTERNAL_ASSERT(active_[pool].current == active_count[pool], "active count matches the blocks");
    GD_INTERNAL_ASSERT(requested_bytes_[pool].current == requested[pool], "requested_bytes matches the blocks");
    GD_INTERNAL_ASSERT(inactive_split_bytes_[pool].current == split_bytes[pool],
                       "inactive_split_bytes matches the blocks");
    GD_INTERNAL_ASSERT(inactive_split_[pool].current == split_count[pool], "inactive_split count matches");
    GD_INTERNAL_ASSERT(reserved_bytes_[pool].current == reserved_total[pool], "reserved_bytes matches the segments");
    GD_INTERNAL_ASSERT(segment_[pool].current == segment_total[pool], "segment count matches the segments");
  }
}

// ---- the public face: lock, then forward -------------------------------------

CachingAllocator::CachingAllocator(std::unique_ptr<AllocatorBackend> backend, int device_index) {
  GD_CHECK(backend != nullptr, "CachingAllocator: backend must not be null");
  impl_ = std::make_unique<Impl>(std::move(backend), device_index);
}

CachingAllocator::~CachingAllocator() = default;

void* CachingAllocator::allocate(size_t bytes, StreamId stream) {
  if (bytes == 0) return nullptr;
  std::lock_guard lock(impl_->mutex);
  return impl_->allocate(bytes, stream);
}

void CachingAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard lock(impl_->mutex);
  impl_->deallocate(ptr);
}

void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  if (ptr == nullptr) return;
  std::lock_guard lock(impl_->mutex);
  impl_->record_stream(ptr, stream);
}

DeviceMemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats();
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard lock(impl_->mutex);
  impl_->reset_peak_stats();
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(impl_->mutex);
  impl_->empty_cache();
}

void CachingAllocator::set_memory_fraction(double fraction) {
  std::lock_guard lock(impl_->mutex);
  impl_->set_memory_fraction(fraction);
}

void CachingAllocator::set_caching_enabled(bool on) {
  std::lock_guard lock(impl_->mutex);
  impl_->set_caching_enabled(on);
}

std::string CachingAllocator::memory_summary(bool abbreviated) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->memory_summary(abbreviated);
}

int CachingAllocator::device_index() const { return impl_->device_index; }

void CachingAllocator::check_invariants() const {
  std::lock_guard lock(impl_->mutex);
  impl_->check_invariants();
}

}  // namespace gradiens::kernels::cuda
