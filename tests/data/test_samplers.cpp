// Samplers: orders and counts in closed form, the random ones checked for
// determinism and statistics (our Philox stream, not PyTorch's), and
// PyTorch's option errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "data/samplers.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "tests/engine/op_registry.h"

using namespace gradiens;
using namespace gradiens::data;
using gradiens::testing::error_of;

namespace {

using Indices = std::vector<size_t>;
using Batches = std::vector<std::vector<size_t>>;

Indices iota_indices(size_t n) {
  Indices v(n);
  std::iota(v.begin(), v.end(), size_t{0});
  return v;
}

Indices sorted(Indices v) {
  std::sort(v.begin(), v.end());
  return v;
}

Indices to_indices(const Tensor& t) {
  const Tensor c = t.contiguous();
  return Indices(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

TEST_CASE("SequentialSampler yields 0 .. n-1") {
  for (size_t n : {0, 1, 7}) {
    SequentialSampler s(n);
    CHECK(s.size() == n);
    CHECK(s.indices() == iota_indices(n));
    CHECK(s.state_dict() == nlohmann::json::object());
  }
}

TEST_CASE("RandomSampler without replacement is a permutation drawn from its generator") {
  RandomSampler s(20, false, std::nullopt, Generator(3));
  CHECK(s.size() == 20);
  const Indices first = s.indices();
  CHECK(sorted(first) == iota_indices(20));
  // Exactly randperm(20) of the same stream; the next pass is the next randperm.
  Generator g(3);
  CHECK(first == to_indices(randperm(20, g)));
  // PyTorch's pass draws one more (here empty-tailed) permutation after the full ones.
  (void)randperm(20, g);
  const Indices second = s.indices();
  CHECK(second == to_indices(randperm(20, g)));
  CHECK(second != first);
  CHECK(RandomSampler(20, false, std::nullopt, Generator(3)).indices() == first);
}

TEST_CASE("RandomSampler num_samples without replacement repeats whole permutations") {
  // 25 samples of 10: two full permutations and the head of a third.
  RandomSampler s(10, false, 25, Generator(1));
  const Indices v = s.indices();
  REQUIRE(v.size() == 25);
  CHECK(sorted(Indices(v.begin(), v.begin() + 10)) == iota_indices(10));
  CHECK(sorted(Indices(v.begin() + 10, v.begin() + 20)) == iota_indices(10));
  const std::set<size_t> tail(v.begin() + 20, v.end());
  CHECK(tail.size() == 5);
  // Fewer samples than the dataset: distinct indices.
  const Indices few = RandomSampler(10, false, 4, Generator(1)).indices();
  CHECK(std::set<size_t>(few.begin(), few.end()).size() == 4);
}

TEST_CASE("RandomSampler with replacement draws uniform indices") {
  RandomSampler s(10, true, 20000, Generator(11));
  CHECK(s.size() == 20000);
  const Indices v = s.indices();
  REQUIRE(v.size() == 20000);
  std::vector<int> counts(10, 0);
  for (size_t i : v) {
    REQUIRE(i < 10);
    ++counts[i];
  }
  // Binomial(20000, 0.1): mean 2000, sd 42.4; 6 sd is 255.
  for (int c : counts) CHECK(std::abs(c - 2000) < 255);
  Generator g(11);
  CHECK(v == to_indices(randint(10, {20000}, g)));
}

TEST_CASE("RandomSampler state_dict replays a pass and errors match PyTorch") {
  RandomSampler s(50, false, std::nullopt, Generator(5));
  (void)s.indices();
  const nlohmann::json state = s.state_dict();
  const Indices next = s.indices();
  s.load_state_dict(state);
  CHECK(s.indices() == next);
  CHECK(error_of([&] { s.load_state_dict(nlohmann::json::object()); }) ==
        "RandomSampler.load_state_dict: 'generator' is missing");

  CHECK(error_of([] { RandomSampler(5, false, 0); }) ==
        "num_samples should be a positive integer value, but got num_samples=0");
  CHECK(error_of([] { RandomSampler(5, true, -3); }) ==
        "num_samples should be a positive integer value, but got num_samples=-3");
  // An empty dataset: PyTorch's default num_samples is 0, hence the same message.
  CHECK(error_of([] { RandomSampler(0); }) == "num_samples should be a positive integer value, but got num_samples=0");
  CHECK(error_of([] { RandomSampler(0, true, 4); }) == "RandomSampler: cannot draw 4 samples from an empty dataset");
}

TEST_CASE("A sampler without a generator seeds its own from the default generator") {
  manual_seed(123);
  const Indices a = RandomSampler(30).indices();
  manual_seed(123);
  RandomSampler s(30);
  CHECK(s.indices() == a);
  CHECK(s.indices() != a);  // its own stream moves on
}

TEST_CASE("SubsetRandomSampler permutes the given indices") {
  const Indices given{10, 20, 30, 40, 50, 60};
  SubsetRandomSampler s(given, Generator(9));
  CHECK(s.size() == 6);
  const Indices v = s.indices();
  CHECK(sorted(v) == given);
  Generator g(9);
  const Indices perm = to_indices(randperm(6, g));
  for (size_t i = 0; i < 6; ++i) CHECK(v[i] == given[perm[i]]);
  const nlohmann::json state = s.state_dict();
  const Indices next = s.indices();
  s.load_state_dict(state);
  CHECK(s.indices() == next);
}

TEST_CASE("WeightedRandomSampler follows its weights") {
  const std::vector<double> weights{1, 0, 3, 6};
  WeightedRandomSampler s(weights, 20000, true, Generator(4));
  CHECK(s.size() == 20000);
  const Indices v = s.indices();
  std::vector<int> counts(4, 0);
  for (size_t i : v) ++counts.at(i);
  CHECK(counts[1] == 0);
  // Expected 2000, 0, 6000, 12000; 6 binomial sd (42, 65, 69) fit in 420.
  CHECK(std::abs(counts[0] - 2000) < 260);
  CHECK(std::abs(counts[2] - 6000) < 400);
  CHECK(std::abs(counts[3] - 12000) < 420);
  Generator g(4);
  CHECK(v == to_indices(multinomial(tensor(weights, kFloat64), 20000, true, g)));

  // Without replacement: distinct, and never a zero weight while others remain.
  const Indices d = WeightedRandomSampler({1, 0, 3, 6}, 3, false, Generator(2)).indices();
  CHECK(sorted(d) == Indices{0, 2, 3});

  CHECK(error_of([] { WeightedRandomSampler({1, 2}, 0); }) ==
        "num_samples should be a positive integer value, but got num_samples=0");
  CHECK(error_of([] { WeightedRandomSampler({1, 2}, -1); }) ==
        "num_samples should be a positive integer value, but got num_samples=-1");
}

TEST_CASE("BatchSampler cuts batches, with and without drop_last") {
  struct Row {
    size_t n;
    int64_t batch_size;
    bool drop_last;
    Batches want;
  };
  // PyTorch's docstring examples and the edge cases around them.
  const std::vector<Row> rows{
      {10, 3, false, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}},
      {10, 3, true, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
      {9, 3, false, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
      {9, 3, true, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
      {2, 5, false, {{0, 1}}},  // a dataset smaller than a batch
      {2, 5, true, {}},
      {0, 4, false, {}},
      {3, 1, true, {{0}, {1}, {2}}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.n);
    CAPTURE(row.drop_last);
    BatchSampler s(std::make_shared<SequentialSampler>(row.n), row.batch_size, row.drop_last);
    CHECK(s.indices() == row.want);
    CHECK(s.size() == row.want.size());
  }
  const auto seq = std::make_shared<SequentialSampler>(3);
  CHECK(error_of([&] { BatchSampler(seq, 0, false); }) ==
        "batch_size should be a positive integer value, but got batch_size=0");
  CHECK(error_of([&] { BatchSampler(seq, -2, true); }) ==
        "batch_size should be a positive integer value, but got batch_size=-2");
}

TEST_CASE("BatchSampler over a random sampler keeps its order and state") {
  auto random = std::make_shared<RandomSampler>(10, false, std::nullopt, Generator(6));
  BatchSampler s(random, 4, false);
  const nlohmann::json state = s.state_dict();
  const Batches b = s.indices();
  REQUIRE(b.size() == 3);
  CHECK(b[2].size() == 2);
  Indices flat;
  for (const auto& batch : b) flat.insert(flat.end(), batch.begin(), batch.end());
  s.load_state_dict(state);
  CHECK(s.indices() == b);
  random->load_state_dict(state);
  CHECK(random->indices() == flat);
}

TEST_CASE("DistributedSampler pads or drops to divide evenly, as PyTorch") {
  // From PyTorch 1.13: [list(DistributedSampler(range(n), num_replicas=4, rank=r,
  //                          shuffle=False, drop_last=d)) for r in range(4)]
  struct Row {
    size_t n;
    bool drop_last;
    Batches per_rank;
  };
  const std::vector<Row> rows{
      {10, false, {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}}},
      {10, true, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {11, false, {{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 0}}},
      {11, true, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {3, false, {{0}, {1}, {2}, {0}}},
      {3, true, {{}, {}, {}, {}}},
      {0, false, {{}, {}, {}, {}}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.n);
    CAPTURE(row.drop_last);
    for (int64_t rank = 0; rank < 4; ++rank) {
      DistributedSampler s(row.n, 4, rank, false, 0, row.drop_last);
      CHECK(s.indices() == row.per_rank[static_cast<size_t>(rank)]);
      CHECK(s.size() == row.per_rank[static_cast<size_t>(rank)].size());
    }
  }
  CHECK(error_of([] { DistributedSampler(10, 4, 4); }) == "Invalid rank 4, rank should be in the interval [0, 3]");
  CHECK(error_of([] { DistributedSampler(10, 4, -1); }) == "Invalid rank -1, rank should be in the interval [0, 3]");
}

TEST_CASE("DistributedSampler shuffles by seed + epoch and its ranks cover the dataset") {
  const size_t n = 23;
  const int64_t replicas = 3;
  auto all_ranks = [&](uint64_t epoch) {
    Indices joined;
    for (int64_t r = 0; r < replicas; ++r) {
      DistributedSampler s(n, replicas, r, true, 17);
      s.set_epoch(epoch);
      const Indices mine = s.indices();
      CHECK(mine.size() == 8);  // ceil(23 / 3)
      joined.insert(joined.end(), mine.begin(), mine.end());
    }
    return joined;
  };
  const Indices e0 = all_ranks(0);
  CHECK(e0.size() == 24);
  CHECK(std::set<size_t>(e0.begin(), e0.end()).size() == n);  // every sample, one of them twice
  // Rank r holds positions r, r + 3, ... of randperm(n) from Generator(seed + epoch), padded with its head.
  Generator g(17 + 1);
  Indices order = to_indices(randperm(static_cast<int64_t>(n), g));
  order.push_back(order[0]);
  DistributedSampler rank1(n, replicas, 1, true, 17);
  rank1.set_epoch(1);
  Indices want;
  for (size_t i = 1; i < order.size(); i += 3) want.push_back(order[i]);
  CHECK(rank1.indices() == want);
  CHECK(rank1.indices() == want);  // the same epoch repeats its order
  CHECK(all_ranks(1) != e0);

  // drop_last: 21 samples over 3 ranks, all distinct.
  Indices dropped;
  for (int64_t r = 0; r < replicas; ++r) {
    DistributedSampler s(n, replicas, r, true, 17, true);
    CHECK(s.total_size() == 21);
    const Indices mine = s.indices();
    dropped.insert(dropped.end(), mine.begin(), mine.end());
  }
  CHECK(std::set<size_t>(dropped.begin(), dropped.end()).size() == 21);

  rank1.set_epoch(5);
  const nlohmann::json state = rank1.state_dict();
  CHECK(state == nlohmann::json{{"epoch", 5}});
  DistributedSampler fresh(n, replicas, 1, true, 17);
  fresh.load_state_dict(state);
  CHECK(fresh.indices() == rank1.indices());
}

TEST_CASE("LengthBucketSampler without shuffle sorts by length, longest first") {
  // Lengths by index: 3 1 4 1 5 9 2 6; longest first with ties by index: 5 7 4 2 0 6 1 3.
  const Indices lengths{3, 1, 4, 1, 5, 9, 2, 6};
  LengthBucketSampler s(lengths, 3, std::nullopt, false);
  CHECK(s.indices() == Batches{{5, 7, 4}, {2, 0, 6}, {1, 3}});
  CHECK(s.size() == 3);
  LengthBucketSampler dropping(lengths, 3, std::nullopt, false, true);
  CHECK(dropping.indices() == Batches{{5, 7, 4}, {2, 0, 6}});
  CHECK(dropping.size() == 2);
  CHECK(error_of([&] { LengthBucketSampler(lengths, 3, 4); }) ==
        "LengthBucketSampler: bucket_size should be a positive multiple of batch_size (3), but got bucket_size=4");
  CHECK(error_of([&] { LengthBucketSampler(lengths, 0); }) ==
        "batch_size should be a positive integer value, but got batch_size=0");
}

TEST_CASE("LengthBucketSampler with shuffle groups similar lengths in random batch order") {
  // Lengths 0..39 reversed in blocks; one bucket of all 40: the batches are the
  // sorted order's consecutive runs of 4, in some order.
  Indices lengths(40);
  for (size_t i = 0; i < 40; ++i) lengths[i] = (i * 7) % 40;  // a permutation of 0..39
  LengthBucketSampler one_bucket(lengths, 4, 40, true, false, Generator(8));
  const Batches b = one_bucket.indices();
  REQUIRE(b.size() == 10);
  std::set<std::vector<size_t>> got, want;
  for (const auto& batch : b) {
    Indices lens;
    for (size_t i : batch) lens.push_back(lengths[i]);
    CHECK(std::is_sorted(lens.rbegin(), lens.rend()));  // non-increasing
    CHECK(lens.front() - lens.back() == 3);             // four consecutive lengths
    got.insert(sorted(lens));
  }
  for (size_t k = 0; k < 40; k += 4) want.insert({k, k + 1, k + 2, k + 3});
  CHECK(got == want);
  const Batches again = one_bucket.indices();
  CHECK(again != b);  // a new batch order each pass

  // Small buckets: every index once, lengths non-increasing inside each batch, determinism.
  LengthBucketSampler small(lengths, 3, 6, true, false, Generator(1));
  CHECK(small.size() == 14);
  const nlohmann::json state = small.state_dict();
  const Batches s1 = small.indices();
  CHECK(s1.size() == 14);
  Indices flat;
  for (const auto& batch : s1) {
    flat.insert(flat.end(), batch.begin(), batch.end());
    for (size_t j = 1; j < batch.size(); ++j) CHECK(lengths[batch[j - 1]] >= lengths[batch[j]]);
  }
  CHECK(sorted(flat) == iota_indices(40));
  small.load_state_dict(state);
  CHECK(small.indices() == s1);
  LengthBucketSampler small_drop(lengths, 3, 6, true, true, Generator(1));
  CHECK(small_drop.size() == 13);
  const Batches d = small_drop.indices();
  CHECK(d.size() == 13);
  for (const auto& batch : d) CHECK(batch.size() == 3);
}
