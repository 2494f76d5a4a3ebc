// libtorch's data API (torch::data): datasets, transforms, samplers' next()
// interface, the loaders' queue/shuttle/sequencer machinery, StatelessDataLoader
// and StatefulDataLoader through make_data_loader, ChunkDataset, and archives.
// Expected values are closed forms over arange-like datasets; error texts are
// libtorch's where its tests check them.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "data/data.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "tests/engine/op_registry.h"

using namespace gradiens;
using namespace gradiens::data;
using gradiens::testing::error_of;
using gradiens::testing::values_of;

namespace {

using Indices = std::vector<size_t>;
constexpr std::chrono::milliseconds kMs(1);

Indices iota(size_t n, size_t start = 0) {
  Indices v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Example i is the integer 10 * i.
struct Tens : datasets::Dataset<Tens, int> {
  explicit Tens(size_t n = 10) : n(n) {}
  int get(size_t index) override { return static_cast<int>(10 * index); }
  std::optional<size_t> size() const override { return n; }
  size_t n;
};

// Example i is {[i], [2 i]} as float64.
struct Pairs : datasets::Dataset<Pairs> {
  Example<> get(size_t index) override {
    const auto i = static_cast<double>(index);
    return {tensor({i}, kFloat64), tensor({2 * i}, kFloat64)};
  }
  std::optional<size_t> size() const override { return 6; }
};

// A batch is the sum of the requested indices.
struct SumOfIndices : datasets::BatchDataset<SumOfIndices, size_t> {
  size_t get_batch(ArrayRef<size_t> indices) override { return std::accumulate(indices.begin(), indices.end(), size_t{0}); }
  std::optional<size_t> size() const override { return 10; }
};

// Yields 0, 1, ..., limit - 1 one batch (a single int) at a time, then runs dry.
struct Counter : datasets::StatefulDataset<Counter, int, size_t> {
  explicit Counter(int limit = 7) : limit(limit) {}
  Counter(const Counter& other) : datasets::StatefulDataset<Counter, int, size_t>(), limit(other.limit) {}
  std::optional<int> get_batch(size_t) override {
    std::lock_guard lock(mutex);
    if (value < limit) return value++;
    return std::nullopt;
  }
  std::optional<size_t> size() const override { return std::nullopt; }
  void reset() override { value = 0; }
  void save(serialize::OutputArchive& archive) const override {
    archive.write("value", scalar_tensor(static_cast<int64_t>(value), kInt64));
  }
  void load(serialize::InputArchive& archive) override {
    Tensor t;
    archive.read("value", t);
    value = static_cast<int>(t.item<int64_t>());
  }
  int limit;
  int value = 0;
  std::mutex mutex;
};

// The next n integers of an endless stream.
struct Naturals : datasets::StreamDataset<Naturals, std::vector<int>> {
  std::vector<int> get_batch(size_t n) override {
    std::vector<int> out(n);
    for (int& v : out) v = next++;
    return out;
  }
  std::optional<size_t> size() const override { return std::nullopt; }
  int next = 0;
};

// Chunk c holds the integers [10 c, 10 c + sizes[c]).
struct Chunks : datasets::ChunkDataReader<int> {
  explicit Chunks(std::vector<size_t> sizes = {4, 2, 5}) : sizes(std::move(sizes)) {}
  ChunkType read_chunk(size_t chunk) override {
    ChunkType out(sizes.at(chunk));
    std::iota(out.begin(), out.end(), static_cast<int>(10 * chunk));
    return out;
  }
  size_t chunk_count() override { return sizes.size(); }
  void reset() override {}
  std::vector<size_t> sizes;
};

using SequentialChunks = datasets::ChunkDataset<Chunks, samplers::SequentialSampler, samplers::SequentialSampler>;

std::vector<int> chunk_values(const std::vector<size_t>& sizes) {
  std::vector<int> out;
  for (size_t c = 0; c < sizes.size(); ++c)
    for (size_t i = 0; i < sizes[c]; ++i) out.push_back(static_cast<int>(10 * c + i));
  return out;
}

template <class Loader>
auto epoch(Loader& loader) {
  std::vector<std::decay_t<decltype(*loader.begin())>> out;
  for (auto& batch : loader) out.push_back(batch);
  return out;
}

std::vector<int> flat(const std::vector<std::vector<int>>& batches) {
  std::vector<int> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

// ---- datasets and transforms ----

TEST_CASE("libtorch datasets: get_batch, map and the transforms") {
  Tens tens;
  CHECK(tens.get_batch({0, 3, 9}) == std::vector<int>{0, 30, 90});
  CHECK(tens.get_batch(4) == std::vector<int>{40});

  struct ToString : transforms::Transform<int, std::string> {
    std::string apply(int x) override { return std::to_string(x); }
  };
  CHECK(Tens().map(ToString{}).get_batch({1, 2}) == std::vector<std::string>{"10", "20"});
  CHECK(Tens().map(transforms::Lambda<int>([](int x) { return x + 1; })).get_batch({0, 5}) == std::vector<int>{1, 51});
  CHECK(tens.map(transforms::Lambda<int, double>([](int x) { return x / 4.0; })).get_batch({1}) == std::vector<double>{2.5});
  CHECK(tens.map(transforms::BatchLambda<std::vector<int>, size_t>([](std::vector<int> b) { return b.size(); }))
            .get_batch({1, 2, 3}) == 3);
  auto summed = [](std::vector<int> b) { return std::accumulate(b.begin(), b.end(), 0); };
  CHECK(tens.map(transforms::Collate<int>(summed)).get_batch({1, 2, 3}) == 60);
  struct Max : transforms::Collation<int> {
    int apply_batch(std::vector<int> b) override { return *std::max_element(b.begin(), b.end()); }
  };
  CHECK(tens.map(Max{}).get_batch({4, 2, 7}) == 70);
  // Maps compose, each applied in turn.
  CHECK(Tens().map(transforms::Lambda<int>([](int x) { return x + 1; }))
            .map(transforms::Lambda<int>([](int x) { return 2 * x; }))
            .get_batch({3}) == std::vector<int>{62});
  CHECK(tens.map(transforms::Lambda<int>([](int x) { return x; })).size() == std::optional<size_t>(10));
  CHECK(SumOfIndices().get_batch({1, 2, 3}) == 6);
}

TEST_CASE("libtorch datasets: Stack, TensorTransform, TensorLambda, Normalize, TensorDataset") {
  const Example<> stacked = Pairs().map(transforms::Stack<>()).get_batch({1, 4});
  CHECK(stacked.data.sizes() == IntArrayRef({2, 1}));
  CHECK(values_of(stacked.data) == std::vector<double>{1, 4});
  CHECK(values_of(stacked.target) == std::vector<double>{2, 8});

  datasets::TensorDataset rows(arange(12, kFloat64).reshape({4, 3}));
  CHECK(rows.size() == std::optional<size_t>(4));
  CHECK(values_of(rows.get(2).data) == std::vector<double>{6, 7, 8});
  const TensorExample two_rows = rows.map(transforms::Stack<TensorExample>()).get_batch({3, 0});
  CHECK(values_of(two_rows.data) == std::vector<double>{9, 10, 11, 0, 1, 2});
  datasets::TensorDataset from_list(std::vector<Tensor>{tensor({1.0, 2.0}, kFloat64), tensor({3.0, 4.0}, kFloat64)});
  CHECK(values_of(from_list.get(1).data) == std::vector<double>{3, 4});
  const Tensor& as_tensor = rows.get(1);  // a TensorExample converts to its data
  CHECK(values_of(as_tensor) == std::vector<double>{3, 4, 5});

  struct Triple : transforms::TensorTransform<Tensor> {
    Tensor operator()(Tensor x) override { return x * 3.0; }
  };
  const auto tripled = Pairs().map(Triple{}).get_batch({2});
  CHECK(values_of(tripled[0].data) == std::vector<double>{6});
  CHECK(values_of(tripled[0].target) == std::vector<double>{4});  // the target is kept
  const auto plus = Pairs().map(transforms::TensorLambda<>([](Tensor x) { return x + 0.5; })).get_batch({3});
  CHECK(values_of(plus[0].data) == std::vector<double>{3.5});

  // (x - mean) / std per channel of [C, H, W]; one value serves every channel.
  struct Ones : datasets::Dataset<Ones, Example<Tensor, int>> {
    Example<Tensor, int> get(size_t channels) override { return {ones({static_cast<int64_t>(channels), 2, 2}), 0}; }
    std::optional<size_t> size() const override { return 4; }
  };
  const auto one_moment = Ones().map(transforms::Normalize<int>(0.5, 0.25)).get_batch({3});
  CHECK(values_of(one_moment[0].data) == std::vector<double>(12, 2.0));
  const auto per_channel = Ones().map(transforms::Normalize<int>({0.5, 1.5}, {0.5, 0.25})).get_batch({2});
  CHECK(values_of(per_channel[0].data) == std::vector<double>{1, 1, 1, 1, -2, -2, -2, -2});
}

TEST_CASE("libtorch datasets: map moves an rvalue, SharedBatchDataset shares one dataset") {
  struct Uncopyable : datasets::Dataset<Uncopyable, int> {
    explicit Uncopyable(int base) : base(base) {}
    Uncopyable(Uncopyable&&) = default;
    Uncopyable(const Uncopyable&) = delete;
    int get(size_t i) override { return base + static_cast<int>(i); }
    std::optional<size_t> size() const override { return 3; }
    int base;
  };
  auto mapped = Uncopyable(100).map(transforms::Lambda<int>([](int x) { return -x; }));
  CHECK(mapped.get_batch({2}) == std::vector<int>{-102});

  auto shared = datasets::make_shared_dataset<Uncopyable>(7);
  auto copy = shared;
  copy->base = 50;
  CHECK(shared.get_batch({1}) == std::vector<int>{51});
  CHECK((*shared).base == 50);
  CHECK(shared.size() == std::optional<size_t>(3));
}

TEST_CASE("libtorch datasets: a stateful dataset stays stateful through map; archives save its state") {
  auto strings = Counter(3).map(transforms::BatchLambda<int, std::string>([](int x) { return std::to_string(x); }));
  static_assert(decltype(strings)::is_stateful);
  CHECK(strings.get_batch(1) == std::optional<std::string>("0"));
  CHECK(strings.get_batch(1) == std::optional<std::string>("1"));
  CHECK(strings.get_batch(1) == std::optional<std::string>("2"));
  CHECK(strings.get_batch(1) == std::nullopt);
  strings.reset();
  CHECK(strings.get_batch(1) == std::optional<std::string>("0"));

  Counter a(9), b(9);
  a.get_batch(1);
  a.get_batch(1);
  std::stringstream stream;
  save(a, stream);
  load(b, stream);
  CHECK(b.get_batch(1) == std::optional<int>(2));
}

// ---- samplers ----

TEST_CASE("samplers: SequentialSampler through next(), reset(), index() and save/load") {
  samplers::SequentialSampler s(7);
  CHECK(s.index() == 0);
  CHECK(s.next(3) == std::optional<Indices>(Indices{0, 1, 2}));
  CHECK(s.index() == 3);
  CHECK(s.next(10) == std::optional<Indices>(Indices{3, 4, 5, 6}));
  CHECK(s.next(1) == std::nullopt);
  s.reset();
  CHECK(s.next(2) == std::optional<Indices>(Indices{0, 1}));
  s.reset(3);
  CHECK(s.next(5) == std::optional<Indices>(Indices{0, 1, 2}));
  CHECK(s.indices() == iota(3));  // torch.utils.data's interface sees the new size too

  samplers::SequentialSampler a(10), b(10);
  a.next(4);
  std::stringstream stream;
  save(a, stream);
  load(b, stream);
  CHECK(b.index() == 4);
  CHECK(b.next(3) == std::optional<Indices>(Indices{4, 5, 6}));
}

TEST_CASE("samplers: RandomSampler walks one permutation; a saved sampler continues it") {
  manual_seed(3);
  samplers::RandomSampler s(9);
  Indices seen;
  while (auto batch = s.next(4)) seen.insert(seen.end(), batch->begin(), batch->end());
  std::sort(seen.begin(), seen.end());
  CHECK(seen == iota(9));
  s.reset(5);
  CHECK(s.next(100)->size() == 5);
  CHECK(s.next(1) == std::nullopt);

  // Saved before any draw: the loaded sampler draws the same permutation.
  samplers::RandomSampler fresh(12), twin(12);
  std::stringstream before;
  save(fresh, before);
  load(twin, before);
  CHECK(fresh.next(12) == twin.next(12));
  // Saved mid-pass: the rest of the same permutation.
  samplers::RandomSampler a(12), b(12);
  a.next(5);
  std::stringstream middle;
  save(a, middle);
  load(b, middle);
  CHECK(b.index() == 5);
  CHECK(a.next(100) == b.next(100));
  CHECK(error_of([] { samplers::RandomSampler(4).reset(0); }) == "");
}

TEST_CASE("samplers: StreamSampler asks for batch_size, then the remainder") {
  samplers::StreamSampler s(10);
  CHECK(s.next(4)->size() == 4);
  CHECK(static_cast<size_t>(*s.next(4)) == 4);
  CHECK(s.next(4)->size() == 2);
  CHECK(s.next(4) == std::nullopt);
  s.reset(3);
  CHECK(s.next(5)->size() == 3);
  std::stringstream stream;
  save(s, stream);
  samplers::StreamSampler t(3);
  load(t, stream);
  CHECK(t.next(1) == std::nullopt);
}

TEST_CASE("samplers: distributed samplers split 10 samples among 3 replicas") {
  auto all_of = [](auto make, size_t batch) {
    Indices all;
    for (size_t rank = 0; rank < 3; ++rank) {
      auto s = make(rank);
      while (auto b = s.next(batch)) all.insert(all.end(), b->begin(), b->end());
    }
    std::sort(all.begin(), all.end());
    return all;
  };
  const Indices padded{0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (size_t batch : {1, 2, 3}) {
    CAPTURE(batch);
    CHECK(all_of([](size_t r) { return samplers::DistributedSequentialSampler(10, 3, r); }, batch) == padded);
    CHECK(all_of([](size_t r) { return samplers::DistributedSequentialSampler(10, 3, r, false); }, batch) == iota(9));
    CHECK(all_of([](size_t r) { return samplers::DistributedRandomSampler(10, 3, r); }, batch) == padded);
    CHECK(all_of([](size_t r) { return samplers::DistributedRandomSampler(10, 3, r, false); }, batch) == iota(9));
  }
  // Replica 2's share in order: 8, 9, then around to 0, 1.
  samplers::DistributedSequentialSampler last(10, 3, 2);
  CHECK(last.next(10) == std::optional<Indices>(Indices{8, 9, 0, 1}));
  // Every replica draws the same permutation for an epoch; a new epoch, another one.
  samplers::DistributedRandomSampler r0(10), r1(10);
  CHECK(r0.next(10) == r1.next(10));
  samplers::DistributedRandomSampler e3(10);
  e3.set_epoch(3);
  std::stringstream stream;
  save(e3, stream);
  samplers::DistributedRandomSampler loaded(10);
  load(loaded, stream);
  CHECK(loaded.epoch() == 3);
  e3.reset();
  CHECK(loaded.next(10) == e3.next(10));
  CHECK(error_of([] { samplers::DistributedSequentialSampler(10, 2, 2); }) ==
        "DistributedSampler: rank 2 is out of range for 2 replicas");
}

// ---- the loaders' machinery ----

TEST_CASE("detail: Queue, DataShuttle and the sequencers") {
  data::detail::Queue<int> queue;
  queue.push(1);
  queue.push(2);
  CHECK(queue.pop() == 1);
  CHECK(queue.clear() == 1);
  CHECK(error_of([&] { queue.pop(5 * kMs); }) ==
        "Timeout in DataLoader queue while waiting for next batch (timeout was 5 ms)");
  auto later = std::async(std::launch::async, [&] { return queue.pop(); });
  queue.push(9);
  CHECK(later.get() == 9);

  data::detail::DataShuttle<int, int> shuttle;
  CHECK(shuttle.pop_result() == std::nullopt);  // nothing in flight: no wait
  shuttle.push_job(4);
  CHECK(shuttle.pop_job() == 4);
  shuttle.push_result(40);
  CHECK(shuttle.pop_result() == std::optional<int>(40));
  shuttle.push_job(5);
  shuttle.drain();
  CHECK(shuttle.in_flight_jobs() == 0);

  struct R {
    size_t sequence_number;
  };
  data::detail::sequencers::OrderedSequencer<R> ordered(4);
  const std::vector<size_t> arrivals{2, 0, 3, 1};
  size_t pulled = 0;
  auto producer = [&]() -> std::optional<R> {
    if (pulled == arrivals.size()) return std::nullopt;
    return R{arrivals[pulled++]};
  };
  for (size_t expected = 0; expected < 4; ++expected) CHECK(ordered.next(producer)->sequence_number == expected);
  CHECK(ordered.next(producer) == std::nullopt);
  data::detail::sequencers::NoSequencer<int> none;
  CHECK(none.next([] { return std::optional<int>(7); }) == std::optional<int>(7));
}

// ---- StatelessDataLoader ----

TEST_CASE("make_data_loader: batches of a sampler's order, for any number of workers") {
  for (size_t workers : {0, 1, 3}) {
    CAPTURE(workers);
    auto loader = make_data_loader(Tens(10), samplers::SequentialSampler(10), DataLoaderOptions(4).workers(workers));
    const std::vector<std::vector<int>> expected{{0, 10, 20, 30}, {40, 50, 60, 70}, {80, 90}};
    CHECK(epoch(*loader) == expected);
    CHECK(epoch(*loader) == expected);  // the next epoch is the same
    auto dropping = make_data_loader(Tens(10), samplers::SequentialSampler(10),
                                     DataLoaderOptions(4).workers(workers).drop_last(true));
    CHECK(epoch(*dropping).size() == 2);
    auto unordered = make_data_loader(Tens(10), samplers::SequentialSampler(10),
                                      DataLoaderOptions(1).workers(workers).enforce_ordering(false));
    std::vector<int> values = flat(epoch(*unordered));
    std::sort(values.begin(), values.end());
    CHECK(values == std::vector<int>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90});
  }
  // The default sampler is a RandomSampler of the dataset's size: each example once.
  auto shuffled = make_data_loader(Tens(10), 3);
  std::vector<int> values = flat(epoch(*shuffled));
  std::sort(values.begin(), values.end());
  CHECK(values == std::vector<int>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90});
  auto sequential = make_data_loader<samplers::SequentialSampler>(SumOfIndices(), 5);
  CHECK(epoch(*sequential) == std::vector<size_t>{10, 35});
  auto stacked = make_data_loader(Pairs().map(transforms::Stack<>()), samplers::SequentialSampler(6), 4);
  auto batches = epoch(*stacked);
  CHECK(values_of(batches.at(1).target) == std::vector<double>{8, 10});
}

TEST_CASE("make_data_loader: options, and the copies of the dataset the workers read") {
  FullDataLoaderOptions defaults{DataLoaderOptions()};
  CHECK(defaults.batch_size == 1);
  CHECK(defaults.workers == 0);
  CHECK(defaults.max_jobs == 0);
  CHECK(!defaults.timeout.has_value());
  CHECK(defaults.enforce_ordering);
  CHECK(!defaults.drop_last);
  FullDataLoaderOptions set{DataLoaderOptions(32).workers(5).timeout(20 * kMs)};
  CHECK(set.max_jobs == 10);
  CHECK(set.timeout == std::optional<std::chrono::milliseconds>(20 * kMs));
  CHECK(FullDataLoaderOptions(DataLoaderOptions().workers(2).max_jobs(3)).max_jobs == 3);
  CHECK(make_data_loader(Tens(), 7)->options().batch_size == 7);
  CHECK(error_of([] { make_data_loader(Tens(), DataLoaderOptions().shuffle(true)); }) ==
        "DataLoader over a libtorch-style dataset: shuffle is not one of its options; pass a samplers::RandomSampler");

  // Each worker reads its own copy, made once when the loader is built.
  struct Copies : datasets::Dataset<Copies, int> {
    explicit Copies(std::shared_ptr<std::atomic<int>> count) : count(std::move(count)) {}
    Copies(const Copies& other) : datasets::Dataset<Copies, int>(), count(other.count) { ++*count; }
    Copies(Copies&&) = default;
    int get(size_t i) override { return static_cast<int>(i); }
    std::optional<size_t> size() const override { return 8; }
    std::shared_ptr<std::atomic<int>> count;
  };
  auto count = std::make_shared<std::atomic<int>>(0);
  auto loader = make_data_loader(Copies(count), samplers::SequentialSampler(8), DataLoaderOptions(2).workers(3));
  CHECK(*count == 3);
  epoch(*loader);
  epoch(*loader);
  CHECK(*count == 3);
}

TEST_CASE("make_data_loader: iterator semantics and libtorch's messages") {
  auto loader = make_data_loader(Tens(10), samplers::SequentialSampler(10), 5);
  auto end = loader->end();
  CHECK(end == loader->end());
  auto i = loader->begin();
  auto j = i;  // copies share the position
  CHECK(i == j);
  CHECK(*i == std::vector<int>{0, 10, 20, 30, 40});
  CHECK(i->size() == 5);
  ++j;
  CHECK((*i)[0] == 50);
  CHECK(i != end);
  ++i;
  CHECK(i == end);
  CHECK(error_of([&] { ++i; }) == "Attempted to increment iterator past the end");
  CHECK(error_of([&] { (void)*i; }) == "Attempted to dereference iterator that was past the end");
  CHECK(error_of([&] { ++end; }) == "Incrementing the DataLoader's past-the-end iterator is not allowed");
  CHECK(error_of([&] { (void)*end; }) == "Dereferencing the DataLoader's past-the-end iterator is not allowed");
  CHECK(loader->begin() != loader->begin());  // two iterations are two iterators
  CHECK(std::distance(loader->begin(), loader->end()) == 2);

  auto threaded = make_data_loader(Tens(10), samplers::SequentialSampler(10), DataLoaderOptions(1).workers(2));
  auto first = threaded->begin();
  CHECK(error_of([&] { threaded->begin(); }) ==
        "Attempted to get a new DataLoader iterator while another iterator is not yet exhausted");

  struct Unsized : datasets::Dataset<Unsized, int> {
    int get(size_t) override { return 0; }
    std::optional<size_t> size() const override { return std::nullopt; }
  };
  CHECK(error_of([] { make_data_loader(Unsized()); }) ==
        "Expected the dataset to be sized in order to construct the Sampler");
}

TEST_CASE("make_data_loader: a worker's exception, and the timeout") {
  struct Failing : datasets::Dataset<Failing, int> {
    int get(size_t index) override {
      if (index == 3) throw std::invalid_argument("bad sample");
      return 0;
    }
    std::optional<size_t> size() const override { return 6; }
  };
  auto loader = make_data_loader(Failing(), samplers::SequentialSampler(6), DataLoaderOptions(2).workers(2));
  auto it = loader->begin();
  CHECK(it->size() == 2);
  bool caught = false;
  try {
    ++it;
  } catch (const WorkerException& e) {
    caught = true;
    CHECK(std::string(e.what()) == "Caught exception in DataLoader worker thread. Original message: bad sample");
    CHECK_THROWS_AS(std::rethrow_exception(e.original_exception), std::invalid_argument);
  }
  CHECK(caught);
  // Without workers the exception is the dataset's own.
  auto inline_loader = make_data_loader(Failing(), samplers::SequentialSampler(6), 4);
  CHECK_THROWS_AS(inline_loader->begin() == inline_loader->end(), std::invalid_argument);

  struct Slow : datasets::Dataset<Slow, int> {
    int get(size_t) override {
      std::this_thread::sleep_for(200 * kMs);
      return 0;
    }
    std::optional<size_t> size() const override { return 2; }
  };
  auto slow = make_data_loader(Slow(), samplers::SequentialSampler(2), DataLoaderOptions(1).workers(1).timeout(10 * kMs));
  CHECK(error_of([&] { (void)*slow->begin(); }) ==
        "Timeout in DataLoader queue while waiting for next batch (timeout was 10 ms)");
}

TEST_CASE("make_data_loader: streams and custom batch requests") {
  auto stream = make_data_loader(Naturals().map(transforms::Lambda<int>([](int x) { return x * x; })),
                                 samplers::StreamSampler(7), 3);
  CHECK(epoch(*stream) == std::vector<std::vector<int>>{{0, 1, 4}, {9, 16, 25}, {36}});

  // A request that carries an offset beside the indices.
  struct Shifted : samplers::CustomBatchRequest {
    Shifted(int offset, Indices indices) : offset(offset), indices(std::move(indices)) {}
    size_t size() const override { return indices.size(); }
    int offset;
    Indices indices;
  };
  struct ShiftedSampler : samplers::Sampler<Shifted> {
    void reset(std::optional<size_t> = std::nullopt) override { done = 0; }
    std::optional<Shifted> next(size_t batch_size) override {
      if (done >= 4) return std::nullopt;
      done += batch_size;
      return Shifted(100, iota(batch_size, done - batch_size));
    }
    void save(serialize::OutputArchive&) const override {}
    void load(serialize::InputArchive&) override {}
    size_t done = 0;
  };
  struct ShiftedDataset : datasets::BatchDataset<ShiftedDataset, std::vector<int>, Shifted> {
    std::vector<int> get_batch(Shifted request) override {
      std::vector<int> out;
      for (size_t i : request.indices) out.push_back(request.offset + static_cast<int>(i));
      return out;
    }
    std::optional<size_t> size() const override { return 4; }
  };
  auto custom = make_data_loader(ShiftedDataset(), ShiftedSampler(), DataLoaderOptions(2).workers(1));
  CHECK(epoch(*custom) == std::vector<std::vector<int>>{{100, 101}, {102, 103}});
}

// ---- StatefulDataLoader ----

TEST_CASE("make_data_loader: a stateful dataset ends each epoch when it runs dry") {
  auto alone = make_data_loader(Counter(7));
  for (int e = 0; e < 3; ++e) CHECK(epoch(*alone) == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  for (size_t workers : {1, 4}) {
    CAPTURE(workers);
    auto shared = make_data_loader(datasets::make_shared_dataset<Counter>(7), DataLoaderOptions().workers(workers));
    for (int e = 0; e < 3; ++e) {
      std::vector<int> values = epoch(*shared);
      std::sort(values.begin(), values.end());
      CHECK(values == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
    }
  }
  auto tensors = make_data_loader(Counter(3).map(transforms::BatchLambda<int, Tensor>(
      [](int x) { return scalar_tensor(static_cast<int64_t>(x), kInt64); })));
  int64_t total = 0;
  for (const Tensor& t : *tensors) total += t.item<int64_t>();
  CHECK(total == 3);
}

// ---- ChunkDataset ----

TEST_CASE("ChunkDataset: libtorch's option checks") {
  CHECK(error_of([] { datasets::ChunkDatasetOptions(0, 1, 1); }) ==
        "Preloader count is 0. At least one preloader needs to be specified.");
  CHECK(error_of([] { datasets::ChunkDatasetOptions(1, 0, 1); }) ==
        "Batch size is 0. A positive batch size needs to be specified.");
  CHECK(error_of([] { datasets::ChunkDatasetOptions(1, 1, 0); }) ==
        "Cache size is 0. A positive cache size needs to be specified.");
  CHECK(error_of([] { datasets::ChunkDatasetOptions(1, 10, 5); }) ==
        "Cache size is less than batch size. Cache needs to be large enough to hold at least one batch.");
  CHECK(error_of([] { datasets::ChunkDatasetOptions(1, 10, 20, 0); }) ==
        "cross_chunk_shuffle_count needs to be greater than 0.");
}

TEST_CASE("ChunkDataset: batches across chunks, in order with one preloader") {
  samplers::SequentialSampler sampler(0);
  auto dataset = datasets::make_shared_dataset<SequentialChunks>(Chunks(), sampler, sampler,
                                                                 datasets::ChunkDatasetOptions(1, 3));
  auto loader = make_data_loader(dataset, DataLoaderOptions(3));
  const std::vector<std::vector<int>> expected{{0, 1, 2}, {3, 10, 11}, {20, 21, 22}, {23, 24}};
  CHECK(epoch(*loader) == expected);
  CHECK(epoch(*loader) == expected);
  CHECK(dataset->chunk_sampler().index() == 3);

  // More preloaders and workers: every example once per epoch.
  for (size_t preloaders : {2, 3}) {
    for (size_t workers : {0, 2}) {
      CAPTURE(preloaders);
      CAPTURE(workers);
      auto many = make_data_loader(
          datasets::make_shared_dataset<SequentialChunks>(Chunks({5, 7, 3, 9}), sampler, sampler,
                                                          datasets::ChunkDatasetOptions(preloaders, 4, 8)),
          DataLoaderOptions(4).workers(workers));
      for (int e = 0; e < 2; ++e) {
        std::vector<int> values = flat(epoch(*many));
        std::sort(values.begin(), values.end());
        CHECK(values == chunk_values({5, 7, 3, 9}));
      }
    }
  }
  auto mismatched = make_data_loader(dataset, DataLoaderOptions(2));
  CHECK(error_of([&] { (void)*mismatched->begin(); }) ==
        "The requested batch size does not match with the initialized batch size.\n The requested batch size is 2, "
        "while the dataset is created with batch size equal to 3");
}

TEST_CASE("ChunkDataset: cross-chunk shuffling, preprocessing, and the chunk position saved and loaded") {
  // Two chunks read together, their examples in the example sampler's order (sequential here).
  samplers::SequentialSampler sampler(0);
  auto joined = make_data_loader(datasets::make_shared_dataset<SequentialChunks>(
                                     Chunks({2, 2, 3}), sampler, sampler, datasets::ChunkDatasetOptions(1, 4, 8, 2)),
                                 DataLoaderOptions(4));
  CHECK(epoch(*joined) == std::vector<std::vector<int>>{{0, 1, 10, 11}, {20, 21, 22}});

  std::function<void(std::vector<int>&)> descending = [](std::vector<int>& v) { std::sort(v.rbegin(), v.rend()); };
  auto sorted = make_data_loader(datasets::make_shared_dataset<SequentialChunks>(
                                     Chunks({3}), sampler, sampler, datasets::ChunkDatasetOptions(1, 3), descending),
                                 DataLoaderOptions(3));
  CHECK(epoch(*sorted) == std::vector<std::vector<int>>{{2, 1, 0}});

  // A chunk sampler saved after 2 chunks: the loaded dataset's first epoch starts at chunk 2, the next at 0.
  samplers::SequentialSampler skipped(0);
  skipped.reset(3);
  skipped.next(2);
  std::stringstream stream;
  save(skipped, stream);
  auto dataset = datasets::make_shared_dataset<SequentialChunks>(Chunks(), sampler, sampler,
                                                                 datasets::ChunkDatasetOptions(1, 5));
  load(*dataset, stream);
  auto loader = make_data_loader(dataset, DataLoaderOptions(5));
  CHECK(flat(epoch(*loader)) == std::vector<int>{20, 21, 22, 23, 24});
  CHECK(flat(epoch(*loader)) == chunk_values({4, 2, 5}));
  std::stringstream saved;
  save(*dataset, saved);
  samplers::SequentialSampler restored(0);
  load(restored, saved);
  CHECK(restored.index() == 3);

  // Unread: the preloaders wait on a full cache and stop cleanly with the dataset.
  auto idle = make_data_loader(datasets::make_shared_dataset<SequentialChunks>(
                                   Chunks({4, 4, 4}), sampler, sampler, datasets::ChunkDatasetOptions(2, 2, 2)),
                               DataLoaderOptions(2));
  auto unread = idle->begin();
}

// ---- archives ----

TEST_CASE("serialize: archives of tensors, strings and nested archives") {
  serialize::OutputArchive out, inner;
  out.write("w", arange(3, kFloat64));
  out.write("name", std::string("gradiens"));
  inner.write("step", scalar_tensor(int64_t{7}, kInt64));
  out.write("optimizer", inner);
  std::stringstream stream;
  out.save_to(stream);

  serialize::InputArchive in, nested;
  in.load_from(stream);
  Tensor w;
  in.read("w", w);
  CHECK(values_of(w) == std::vector<double>{0, 1, 2});
  std::string name;
  in.read("name", name);
  CHECK(name == "gradiens");
  in.read("optimizer", nested);
  Tensor step;
  nested.read("step", step);
  CHECK(step.item<int64_t>() == 7);
  Tensor missing;
  CHECK(!in.try_read("bias", missing));
  CHECK(error_of([&] { in.read("bias", missing); }) == "serialize: the archive has no tensor 'bias'");
}
