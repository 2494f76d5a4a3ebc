// Tests for parallel_parts (kernels/cpu/parallel.h): the pieces it hands out
// depend on the part count alone and cover the range once, parts beyond the
// range's length are not made, and an exception in one part reaches the caller
// after every part has run.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/cpu/parallel.h"

using gradiens::kernels::cpu::parallel_parts;

TEST_CASE("parallel_parts: part p gets [count p / parts, count (p + 1) / parts), each index once") {
  for (const int64_t count : {int64_t{1}, int64_t{7}, int64_t{10}, int64_t{1000}})
    for (const int parts : {1, 2, 3, 4}) {
      CAPTURE(count);
      CAPTURE(parts);
      const int64_t made = std::min<int64_t>(parts, count);
      std::vector<int64_t> begins(static_cast<size_t>(made), -1), ends(static_cast<size_t>(made), -1);
      std::vector<std::atomic<int>> visits(static_cast<size_t>(count));
      std::atomic<int> calls{0};
      parallel_parts(count, parts, [&](int part, int64_t lo, int64_t hi) {
        ++calls;
        begins[static_cast<size_t>(part)] = lo;
        ends[static_cast<size_t>(part)] = hi;
        for (int64_t i = lo; i < hi; ++i) ++visits[static_cast<size_t>(i)];
      });
      CHECK(calls == made);
      for (int64_t p = 0; p < made; ++p) {
        CHECK(begins[static_cast<size_t>(p)] == count * p / made);
        CHECK(ends[static_cast<size_t>(p)] == count * (p + 1) / made);
      }
      bool once = true;
      for (const auto& v : visits) once = once && v == 1;
      CHECK(once);
    }
}

TEST_CASE("parallel_parts: an empty range is one empty part on the calling thread") {
  int calls = 0;
  parallel_parts(0, 4, [&](int part, int64_t lo, int64_t hi) {
    ++calls;
    CHECK(part == 0);
    CHECK(lo == 0);
    CHECK(hi == 0);
  });
  CHECK(calls == 1);
}

TEST_CASE("parallel_parts: a part's exception is rethrown to the caller once every part has run") {
  std::atomic<int> finished{0};
  auto run = [&] {
    parallel_parts(30, 3, [&](int part, int64_t, int64_t) {
      if (part == 1) throw std::runtime_error("part 1 failed");
      ++finished;
    });
  };
  CHECK_THROWS_WITH_AS(run(), "part 1 failed", std::runtime_error);
  CHECK(finished == 2);
}
