// The CPU caching allocator: statistics, reuse of freed blocks, empty_cache,
// alignment, and Device parsing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/allocator.h"
#include "gradiens.h"
#include "kernels/cuda/runtime.h"

namespace gd = gradiens;
namespace alloc = gradiens::cpu_allocator;

TEST_CASE("allocator: statistics follow tensors and cached blocks are reused") {
  alloc::empty_cache();
  auto before = alloc::stats();
  void* first_data = nullptr;
  {
    auto t = gd::empty({1 << 20}, gd::kFloat32);  // 4 MiB
    first_data = t.data_ptr();
    auto during = alloc::stats();
    CHECK(during.allocated_bytes - before.allocated_bytes >= (int64_t{4} << 20));
    CHECK(during.reserved_bytes >= during.allocated_bytes);
    CHECK(during.peak_allocated_bytes >= during.allocated_bytes);
    CHECK(reinterpret_cast<uintptr_t>(first_data) % 64 == 0);
  }
  auto after_free = alloc::stats();
  CHECK(after_free.allocated_bytes == before.allocated_bytes);
  CHECK(after_free.reserved_bytes > before.reserved_bytes);  // kept in the cache
  {
    auto hits = alloc::stats().num_cache_hits;
    auto t = gd::empty({1 << 20}, gd::kFloat32);
    CHECK(t.data_ptr() == first_data);  // the same block again
    CHECK(alloc::stats().num_cache_hits == hits + 1);
  }
  alloc::empty_cache();
  CHECK(alloc::stats().reserved_bytes == alloc::stats().allocated_bytes);  // nothing cached any more
  alloc::reset_peak_stats();
  CHECK(alloc::stats().peak_allocated_bytes == alloc::stats().allocated_bytes);
}

TEST_CASE("allocator: a full cache gives up its least recently used size classes for the blocks now in use") {
  // 300 MiB of 4 MiB blocks fill the cache to its bound (max(256 MiB, peak)); the
  // blocks are never touched, so no memory is committed.
  alloc::empty_cache();
  alloc::reset_peak_stats();
  std::vector<void*> stale;
  for (int i = 0; i < 75; ++i) stale.push_back(alloc::allocate(size_t{4} << 20));
  for (void* p : stale) alloc::deallocate(p);
  const auto full = alloc::stats();
  CHECK(full.reserved_bytes - full.allocated_bytes >= (int64_t{300} << 20));  // all of them kept
  // A block of another size class, freed now, pushes out a stale block instead of
  // going back to the system: asking for its size again is a cache hit.
  void* fresh = alloc::allocate(size_t{3} << 20);
  alloc::deallocate(fresh);
  const auto hits = alloc::stats().num_cache_hits;
  void* again = alloc::allocate(size_t{3} << 20);
  CHECK(again == fresh);
  CHECK(alloc::stats().num_cache_hits == hits + 1);
  alloc::deallocate(again);
  // The bound still holds: what is cached is at most the peak.
  const auto after = alloc::stats();
  CHECK(after.reserved_bytes - after.allocated_bytes <=
        std::max<int64_t>(int64_t{256} << 20, after.peak_allocated_bytes));
  alloc::empty_cache();
}

TEST_CASE("allocator: zero-byte tensors get valid distinct pointers") {
  auto a = gd::empty({0}, gd::kFloat64);
  auto b = gd::empty({0, 3}, gd::kFloat64);
  CHECK(a.numel() == 0);
  CHECK(b.numel() == 0);
  CHECK(a.data_ptr() != nullptr);
  CHECK(a.data_ptr() != b.data_ptr());
}

TEST_CASE("device strings") {
  CHECK(gd::Device("cpu").is_cpu());
  CHECK(gd::Device("cuda:1").index() == 1);
  CHECK(gd::Device("cuda").is_cuda());
  CHECK(gd::Device("cuda:1").str() == "cuda:1");
  CHECK_THROWS_AS(gd::Device("gpu"), gd::Error);
  CHECK_THROWS_AS(gd::Device("cuda:x"), gd::Error);
  if (!gd::kernels::cuda::is_built())
    CHECK_THROWS_WITH(gd::empty({2}, gd::TensorOptions().device(gd::Device("cuda:0"))),
                      "gradiens was built without CUDA support: cannot allocate on cuda:0");
  else if (!gd::kernels::cuda::is_available())
    CHECK_THROWS_WITH(gd::empty({2}, gd::TensorOptions().device(gd::Device("cuda:0"))),
                      "Found no NVIDIA driver or no CUDA device on this machine: cannot use a cuda tensor");
  // With a GPU: an index past the last device is an error naming how many there are.
  if (gd::kernels::cuda::is_available())
    CHECK_THROWS_AS(gd::empty({2}, gd::TensorOptions().device(gd::Device("cuda:15"))), gd::Error);
}
