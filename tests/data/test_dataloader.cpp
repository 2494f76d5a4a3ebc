// DataLoader and default_collate: batching, option conflicts (PyTorch's
// texts), seeded order across workers and epochs, resume mid-epoch, worker
// errors, timeout, abandoned iterations, and streams.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "data/collate.h"
#include "data/dataloader.h"
#include "data/tensor_dataset.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "tests/engine/op_registry.h"

using namespace gradiens;
using namespace gradiens::data;
using gradiens::testing::error_of;
using gradiens::testing::values_of;

namespace {

using Batches = std::vector<std::vector<double>>;

// Sample i is {i, 10 i}.
std::shared_ptr<TensorDataset> numbered(int64_t n) {
  const Tensor x = arange(n, kFloat64);
  return std::make_shared<TensorDataset>(x, x * 10.0);
}

// The sample indices of every batch of one epoch (the data tensors' values).
template <class Loader>
Batches epoch_of(Loader& loader) {
  Batches out;
  for (auto& batch : loader) out.push_back(values_of(batch.data));
  return out;
}

// The loader's state_dict taken inside the body of its k-th batch; the
// iteration is then abandoned (its workers stop).
template <class Loader>
nlohmann::json state_after_batches(Loader& loader, size_t k) {
  size_t taken = 0;
  for (auto& batch : loader) {
    (void)batch;
    if (++taken == k) return loader.state_dict();
  }
  return {};
}

std::vector<double> flat(const Batches& b) {
  std::vector<double> v;
  for (const auto& x : b) v.insert(v.end(), x.begin(), x.end());
  return v;
}

std::vector<double> iota(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return v;
}

// A dataset whose get() can fail at one index, sleep, and count calls in flight.
struct ProbeDataset : Dataset<Example<>> {
  size_t n = 100;
  std::optional<size_t> fail_at;
  std::chrono::milliseconds delay{0};
  std::atomic<int> in_flight{0};
  std::atomic<int> calls{0};
  Example<> get(size_t index) override {
    ++in_flight;
    ++calls;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    --in_flight;
    if (fail_at && index == *fail_at) throw std::runtime_error("corrupt record");
    return {scalar_tensor(static_cast<double>(index), kFloat64), scalar_tensor(int64_t{0}, kInt64)};
  }
  size_t size() const override { return n; }
};

// 0, 1, ..., n-1 as a stream of int64 samples.
struct CountingStream : IterableDataset<int64_t> {
  int64_t n = 10;
  int64_t next_value = 0;
  int resets = 0;
  std::optional<int64_t> fail_at;
  std::optional<int64_t> next() override {
    if (next_value >= n) return std::nullopt;
    if (fail_at && next_value == *fail_at) throw std::runtime_error("stream broke");
    return next_value++;
  }
  void reset() override {
    next_value = 0;
    ++resets;
  }
};

// The same stream with a known size.
struct SizedStream : CountingStream {
  size_t size() const { return static_cast<size_t>(n); }
};

}  // namespace

// ---- default_collate ----

TEST_CASE("default_collate stacks tensors and converts numbers") {
  const Tensor t = default_collate(std::vector<Tensor>{tensor({1., 2.}, kFloat64), tensor({3., 4.}, kFloat64)});
  CHECK(t.sizes() == IntArrayRef{2, 2});
  CHECK(values_of(t) == std::vector<double>{1, 2, 3, 4});

  // torch.tensor of Python ints is int64, of floats float64 (collate_int_fn, collate_float_fn).
  const Tensor ints = default_collate(std::vector<int64_t>{3, -1});
  CHECK(ints.dtype() == kInt64);
  CHECK(values_of(ints) == std::vector<double>{3, -1});
  const Tensor small_ints = default_collate(std::vector<int>{7});
  CHECK(small_ints.dtype() == kInt64);
  const Tensor floats = default_collate(std::vector<float>{0.5f, 1.5f});
  CHECK(floats.dtype() == kFloat64);
  CHECK(values_of(floats) == std::vector<double>{0.5, 1.5});
  const Tensor bools = default_collate(std::vector<bool>{true, false});
  CHECK(bools.dtype() == kBool);

  const std::vector<std::string> strings = default_collate(std::vector<std::string>{"a", "b"});
  CHECK(strings == std::vector<std::string>{"a", "b"});

  CHECK(error_of([] { default_collate(std::vector<Tensor>{zeros({2}), zeros({3})}); }) ==
        "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
  CHECK(error_of([] { default_collate(std::vector<Tensor>{}); }) == "default_collate: the batch is empty");
}

TEST_CASE("default_collate follows Examples, tuples, pairs, maps and vectors") {
  std::vector<Example<Tensor, int64_t>> examples{{tensor({1., 2.}, kFloat64), 4}, {tensor({3., 5.}, kFloat64), 6}};
  const Example<Tensor, Tensor> e = default_collate(examples);
  CHECK(values_of(e.data) == std::vector<double>{1, 2, 3, 5});
  CHECK(e.data.sizes() == IntArrayRef{2, 2});
  CHECK(values_of(e.target) == std::vector<double>{4, 6});

  using Sample = std::tuple<Tensor, double, int64_t>;
  const auto [a, b, c] = default_collate(std::vector<Sample>{{ones({3}), 0.25, 1}, {zeros({3}), 0.5, 2}});
  CHECK(a.sizes() == IntArrayRef{2, 3});
  CHECK(b.dtype() == kFloat64);
  CHECK(values_of(b) == std::vector<double>{0.25, 0.5});
  CHECK(values_of(c) == std::vector<double>{1, 2});

  const auto pair = default_collate(std::vector<std::pair<int64_t, Tensor>>{{1, ones({1})}, {2, zeros({1})}});
  CHECK(values_of(pair.first) == std::vector<double>{1, 2});
  CHECK(pair.second.sizes() == IntArrayRef{2, 1});

  using Map = std::map<std::string, Tensor>;
  const Map m = default_collate(std::vector<Map>{{{"x", ones({2})}, {"y", zeros({})}}, {{"x", zeros({2})}, {"y", ones({})}}});
  CHECK(m.at("x").sizes() == IntArrayRef{2, 2});
  CHECK(values_of(m.at("y")) == std::vector<double>{0, 1});
  CHECK(error_of([] { default_collate(std::vector<Map>{{{"x", ones({2})}}, {{"z", ones({2})}}}); }) ==
        "default_collate: sample 1 has no key 'x' (sample 0 has it)");

  const std::vector<Tensor> columns =
      default_collate(std::vector<std::vector<Tensor>>{{ones({2}), zeros({1})}, {zeros({2}), ones({1})}});
  REQUIRE(columns.size() == 2);
  CHECK(columns[0].sizes() == IntArrayRef{2, 2});
  CHECK(columns[1].sizes() == IntArrayRef{2, 1});
  CHECK(error_of([] { default_collate(std::vector<std::vector<int64_t>>{{1, 2}, {3}}); }) ==
        "each element in list of batch should be of equal size");

  // convert: one sample, no new dimension; numbers become 0-dim tensors.
  const Example<Tensor, Tensor> one = DefaultCollate().convert(Example<Tensor, int64_t>{ones({2}), 3});
  CHECK(one.data.sizes() == IntArrayRef{2});
  CHECK(one.target.dim() == 0);
  CHECK(one.target.item<int64_t>() == 3);
}

// ---- batching ----

TEST_CASE("DataLoader batches in order, with and without drop_last") {
  struct Row {
    int64_t n, batch_size;
    bool drop_last;
    Batches want;
  };
  const std::vector<Row> rows{
      {10, 3, false, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}},
      {10, 3, true, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}},
      {2, 5, false, {{0, 1}}},  // a dataset smaller than a batch
      {2, 5, true, {}},
      {4, 4, true, {{0, 1, 2, 3}}},
  };
  for (const Row& row : rows) {
    for (int64_t workers : {0, 2}) {
      CAPTURE(row.n);
      CAPTURE(row.drop_last);
      CAPTURE(workers);
      DataLoader loader(numbered(row.n),
                        DataLoaderOptions().batch_size(row.batch_size).drop_last(row.drop_last).num_workers(workers));
      CHECK(loader.size() == row.want.size());
      Batches targets;
      Batches got;
      for (auto& batch : loader) {
        got.push_back(values_of(batch.data));
        targets.push_back(values_of(batch.target));
      }
      CHECK(got == row.want);
      for (size_t i = 0; i < got.size(); ++i)
        for (size_t j = 0; j < got[i].size(); ++j) CHECK(targets[i][j] == 10 * got[i][j]);
    }
  }
  // PyTorch's len(DataLoader(TensorDataset(arange(10)), ...)): batch_size 3 -> 4,
  // drop_last -> 3, batch_size None -> 10, 20 -> 1, 20 with drop_last -> 0.
  CHECK(DataLoader(numbered(10), DataLoaderOptions().batch_size(std::nullopt)).size() == 10);
  CHECK(DataLoader(numbered(10), DataLoaderOptions().batch_size(20).drop_last(true)).size() == 0);
  CHECK(DataLoader(numbered(10)).size() == 10);  // batch_size defaults to 1
}

TEST_CASE("DataLoader without automatic batching yields single samples") {
  DataLoader loader(numbered(4), DataLoaderOptions().batch_size(std::nullopt).num_workers(1));
  std::vector<double> seen;
  for (auto& sample : loader) {
    CHECK(sample.data.dim() == 0);  // no batch dimension
    seen.push_back(sample.data.item<double>());
  }
  CHECK(seen == std::vector<double>{0, 1, 2, 3});
}

TEST_CASE("DataLoader takes a dataset by value or by shared_ptr, and a custom collate") {
  // By value: a Subset from random_split.
  auto parts = random_split(numbered(10), std::vector<int64_t>{6, 4}, Generator(0));
  DataLoader by_value(parts[1], DataLoaderOptions().batch_size(2));
  CHECK(by_value.size() == 2);
  std::vector<double> seen = flat(epoch_of(by_value));
  std::vector<double> want;
  for (size_t i : parts[1].indices()) want.push_back(static_cast<double>(i));
  CHECK(seen == want);

  // A collate returning (sum of data, batch size): the batch type follows it.
  auto sum_and_count = [](std::vector<Example<>> batch) {
    double sum = 0;
    for (const auto& e : batch) sum += e.data.item<double>();
    return std::pair<double, size_t>(sum, batch.size());
  };
  DataLoader custom(numbered(7), DataLoaderOptions().batch_size(3).num_workers(2).collate(sum_and_count));
  static_assert(std::is_same_v<decltype(custom)::BatchType, std::pair<double, size_t>>);
  std::vector<std::pair<double, size_t>> got;
  for (const auto& batch : custom) got.push_back(batch);
  CHECK(got == std::vector<std::pair<double, size_t>>{{3, 3}, {12, 3}, {6, 1}});

  // Without batching, a collate that cannot take one sample is an error.
  CHECK(error_of([&] {
          DataLoader(numbered(3), DataLoaderOptions().batch_size(std::nullopt).collate(sum_and_count));
        }).starts_with("DataLoader: batch_size=None turns automatic batching off"));

  auto loader = make_data_loader(numbered(5), DataLoaderOptions().batch_size(5).pin_memory(true));
  CHECK(flat(epoch_of(loader)) == iota(5));

  // Through the abstract interface.
  std::shared_ptr<Dataset<Example<>>> base = numbered(6);
  DataLoader through_base(base, DataLoaderOptions().batch_size(4).num_workers(1));
  CHECK(epoch_of(through_base) == Batches{{0, 1, 2, 3}, {4, 5}});
}

TEST_CASE("An unseeded shuffle draws its seed from the default generator") {
  manual_seed(31);
  DataLoader a(numbered(30), DataLoaderOptions().batch_size(30).shuffle(true));
  manual_seed(31);
  DataLoader b(numbered(30), DataLoaderOptions().batch_size(30).shuffle(true));
  CHECK(a.seed() == b.seed());
  const Batches first = epoch_of(a);
  CHECK(first == epoch_of(b));
  CHECK(first != Batches{iota(30)});
  CHECK(a.state_dict()["seed"] == a.seed());
}

TEST_CASE("DataLoader option conflicts carry PyTorch's messages") {
  auto ds = numbered(10);
  auto sampler = std::make_shared<SequentialSampler>(10);
  auto batches = std::make_shared<BatchSampler>(sampler, 3, false);
  const std::string exclusive = "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last";
  struct Row {
    DataLoaderOptions<> options;
    std::string message;
  };
  const std::vector<Row> rows{
      {DataLoaderOptions().batch_sampler(batches).batch_size(2), exclusive},
      {DataLoaderOptions().batch_sampler(batches).batch_size(std::nullopt), exclusive},
      {DataLoaderOptions().batch_sampler(batches).shuffle(true), exclusive},
      {DataLoaderOptions().batch_sampler(batches).sampler(sampler), exclusive},
      {DataLoaderOptions().batch_sampler(batches).drop_last(true), exclusive},
      {DataLoaderOptions().sampler(sampler).shuffle(true), "sampler option is mutually exclusive with shuffle"},
      {DataLoaderOptions().batch_size(std::nullopt).drop_last(true),
       "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"},
      {DataLoaderOptions().num_workers(-1),
       "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."},
      {DataLoaderOptions().timeout(-1), "timeout option should be non-negative"},
      {DataLoaderOptions().prefetch_factor(3),
       "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
       "multiprocessing."},
      {DataLoaderOptions().num_workers(1).prefetch_factor(0),
       "prefetch_factor option should be positive, but got prefetch_factor=0"},
      {DataLoaderOptions().batch_size(0), "batch_size should be a positive integer value, but got batch_size=0"},
      {DataLoaderOptions().batch_size(1).batch_sampler(batches), ""},  // batch_size 1 is PyTorch's default
  };
  for (const Row& row : rows) CHECK(error_of([&] { DataLoader(ds, row.options); }) == row.message);
  // An empty dataset cannot be shuffled (PyTorch's RandomSampler message).
  CHECK(error_of([] { DataLoader(numbered(0), DataLoaderOptions().shuffle(true)); }) ==
        "num_samples should be a positive integer value, but got num_samples=0");
}

// ---- order, epochs, workers ----

TEST_CASE("DataLoader shuffle order depends on seed and epoch only") {
  const int64_t n = 50;
  std::vector<std::vector<double>> per_workers;
  for (int64_t workers : {0, 1, 3}) {
    DataLoader loader(numbered(n), DataLoaderOptions().batch_size(4).shuffle(true).seed(2024).num_workers(workers));
    const std::vector<double> e0 = flat(epoch_of(loader));
    const std::vector<double> e1 = flat(epoch_of(loader));
    // Note [DataLoader epoch order]: randperm(n) from the state {seed, epoch * 2^40}.
    for (uint64_t epoch : {0u, 1u}) {
      Generator g;
      g.set_state({2024, epoch << 40});
      CHECK((epoch == 0 ? e0 : e1) == values_of(randperm(n, g)));
    }
    CHECK(e0 != e1);
    std::vector<double> both = e0;
    both.insert(both.end(), e1.begin(), e1.end());
    per_workers.push_back(both);
  }
  CHECK(per_workers[0] == per_workers[1]);
  CHECK(per_workers[0] == per_workers[2]);

  DataLoader other(numbered(n), DataLoaderOptions().batch_size(4).shuffle(true).seed(2025));
  CHECK(flat(epoch_of(other)) != std::vector<double>(per_workers[0].begin(), per_workers[0].begin() + n));
}

TEST_CASE("DataLoader with a user sampler and batch sampler") {
  auto ds = numbered(12);
  DataLoader with_sampler(ds, DataLoaderOptions().batch_size(5).sampler(
                                  std::make_shared<SubsetRandomSampler>(std::vector<size_t>{1, 3, 5, 7}, Generator(1))));
  const Batches b = epoch_of(with_sampler);
  REQUIRE(b.size() == 1);
  CHECK(std::set<double>(b[0].begin(), b[0].end()) == std::set<double>{1, 3, 5, 7});

  std::vector<size_t> lengths(12);
  for (size_t i = 0; i < 12; ++i) lengths[i] = i % 5;
  auto buckets = std::make_shared<LengthBucketSampler>(lengths, 3, std::nullopt, false);
  DataLoader bucketed(ds, DataLoaderOptions().batch_sampler(buckets).num_workers(2));
  CHECK(bucketed.size() == 4);
  // Longest first, ties by index: lengths 4 (4, 9), 3 (3, 8), 2, 1, 0.
  CHECK(epoch_of(bucketed) == Batches{{4, 9, 3}, {8, 2, 7}, {1, 6, 11}, {0, 5, 10}});
}

// ---- resume ----

TEST_CASE("DataLoader resumes mid-epoch with exactly the remaining batches") {
  for (int64_t workers : {0, 2}) {
    CAPTURE(workers);
    const auto options = DataLoaderOptions().batch_size(3).shuffle(true).seed(77).num_workers(workers);
    DataLoader full(numbered(20), options);
    const Batches e0 = epoch_of(full), e1 = epoch_of(full), e2 = epoch_of(full);
    REQUIRE(e1.size() == 7);

    DataLoader first(numbered(20), options);
    CHECK(first.state_dict()["epoch"] == 0);
    CHECK(first.state_dict()["position"] == 0);
    CHECK(epoch_of(first) == e0);
    CHECK(first.state_dict()["epoch"] == 1);  // epoch 0 complete: the next one, from its start
    const nlohmann::json saved = state_after_batches(first, 4);
    CHECK(saved["epoch"] == 1);
    CHECK(saved["position"] == 4);
    CHECK(saved["seed"] == 77);

    // Another seed in the options: the state brings the saved one back.
    DataLoader resumed(numbered(20), DataLoaderOptions().batch_size(3).shuffle(true).seed(1).num_workers(workers));
    resumed.load_state_dict(saved);
    CHECK(resumed.state_dict() == saved);
    CHECK(epoch_of(resumed) == Batches(e1.begin() + 4, e1.end()));
    CHECK(epoch_of(resumed) == e2);
  }
}

TEST_CASE("DataLoader resume restores a user sampler's generator") {
  auto make = [](uint64_t seed) {
    return DataLoader(numbered(15), DataLoaderOptions().batch_size(4).sampler(
                                        std::make_shared<RandomSampler>(15, false, std::nullopt, Generator(seed))));
  };
  auto full = make(5);
  const Batches e0 = epoch_of(full), e1 = epoch_of(full);
  auto first = make(5);
  (void)epoch_of(first);
  nlohmann::json saved;
  for (auto it = first.begin(); it != first.end(); ++it) {
    saved = first.state_dict();  // position 1, inside the first batch
    break;
  }
  CHECK(saved["position"] == 1);
  auto resumed = make(99);
  resumed.load_state_dict(saved);
  CHECK(epoch_of(resumed) == Batches(e1.begin() + 1, e1.end()));

  CHECK(error_of([&] { resumed.load_state_dict({{"seed", 1}, {"epoch", 0}}); }) ==
        "DataLoader.load_state_dict: 'position' is missing");
  CHECK(error_of([&] { resumed.load_state_dict({{"seed", 1}, {"epoch", 0}, {"position", 5}}); }) ==
        "DataLoader.load_state_dict: position 5 is past the end of an epoch of 4 batches");
  CHECK(error_of([&] { resumed.load_state_dict({{"seed", 1}, {"epoch", -1}, {"position", 0}}); }) ==
        "DataLoader.load_state_dict: 'epoch' should be a non-negative integer, but got -1");
}

// ---- errors, timeout, shutdown ----

TEST_CASE("An exception in a worker reaches the caller with the sample index") {
  for (int64_t workers : {0, 1, 3}) {
    CAPTURE(workers);
    auto ds = std::make_shared<ProbeDataset>();
    ds->n = 20;
    ds->fail_at = 13;
    DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(workers));
    std::vector<double> seen;
    std::string message;
    try {
      for (auto& batch : loader) {
        const std::vector<double> v = values_of(batch.data);
        seen.insert(seen.end(), v.begin(), v.end());
      }
    } catch (const Error& e) {
      message = e.what();
    }
    CHECK(seen == iota(12));  // the batches before the failing one, in order
    if (workers == 0) {
      CHECK(message == "Caught an exception in DataLoader while loading sample 13: corrupt record");
    } else {
      CHECK(message.starts_with("Caught an exception in DataLoader worker "));
      CHECK(message.ends_with(" while loading sample 13: corrupt record"));
    }
    CHECK(loader.state_dict()["position"] == 3);
  }

  // A collate failure names the batch and its samples.
  struct Ragged : Dataset<Tensor> {
    Tensor get(size_t i) override { return zeros({static_cast<int64_t>(i % 2) + 1}); }
    size_t size() const override { return 4; }
  };
  DataLoader ragged(Ragged{}, DataLoaderOptions().batch_size(2).num_workers(1));
  CHECK(error_of([&] { (void)ragged.begin(); }) ==
        "Caught an exception in DataLoader worker 0 while collating batch 0 (samples 0, 1): stack expects each tensor "
        "to be equal size, but got [1] at entry 0 and [2] at entry 1");
}

TEST_CASE("DataLoader times out on a slow worker") {
  auto ds = std::make_shared<ProbeDataset>();
  ds->n = 4;
  ds->delay = std::chrono::milliseconds(300);
  DataLoader loader(ds, DataLoaderOptions().batch_size(1).num_workers(1).timeout(0.05));
  CHECK(error_of([&] { (void)loader.begin(); }) == "DataLoader timed out after 0.05 seconds");
  CHECK(ds->in_flight == 0);  // the pool joined its worker before the error left
}

TEST_CASE("Abandoning an iteration midway stops and joins the workers") {
  auto ds = std::make_shared<ProbeDataset>();
  ds->n = 1000;
  ds->delay = std::chrono::milliseconds(1);
  DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(3).prefetch_factor(2));
  {
    auto it = loader.begin();
    ++it;
    // Let the workers fill the prefetch window and block on it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }  // the iterator goes: no deadlock, no thread left running
  CHECK(ds->in_flight == 0);
  const int calls = ds->calls;
  // Two consumed batches plus at most 3 * 2 ahead and one in progress per worker.
  CHECK(calls <= (2 + 6 + 3) * 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ds->calls == calls);

  // A new iteration is a new epoch and runs to the end.
  size_t batches = 0;
  for (auto& batch : loader) {
    (void)batch;
    if (++batches == 3) break;
  }
  CHECK(batches == 3);
  CHECK(loader.state_dict()["epoch"] == 1);
  // The loader itself can go while an iterator lives on.
  auto it = std::make_unique<DataLoader<ProbeDataset>>(ds, DataLoaderOptions().batch_size(2).num_workers(2));
  auto running = it->begin();
  it.reset();
  CHECK(values_of(running->data) == std::vector<double>{0, 1});
}

// ---- streams ----

TEST_CASE("DataLoader over an IterableDataset batches the stream") {
  auto stream = std::make_shared<CountingStream>();
  DataLoader loader(stream, DataLoaderOptions().batch_size(4));
  static_assert(std::is_same_v<decltype(loader)::BatchType, Tensor>);
  auto epoch = [](auto& l) {
    Batches got;
    for (auto& batch : l) got.push_back(values_of(batch));
    return got;
  };
  CHECK(epoch(loader) == Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  CHECK(epoch(loader) == Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  CHECK(stream->resets == 2);  // reset() at every epoch
  CHECK(error_of([&] { (void)loader.size(); }) ==
        "DataLoader: size() needs a dataset with a size(), and this stream has none");

  DataLoader dropping(std::make_shared<SizedStream>(), DataLoaderOptions().batch_size(4).drop_last(true));
  CHECK(dropping.size() == 2);
  CHECK(epoch(dropping) == Batches{{0, 1, 2, 3}, {4, 5, 6, 7}});
  DataLoader single(std::make_shared<SizedStream>(), DataLoaderOptions().batch_size(std::nullopt));
  CHECK(single.size() == 10);
  size_t count = 0;
  for (auto& sample : single) {
    CHECK(sample.dim() == 0);
    CHECK(sample.dtype() == kInt64);
    CHECK(sample.item<int64_t>() == static_cast<int64_t>(count++));
  }
  CHECK(count == 10);
}

TEST_CASE("DataLoader over an IterableDataset: options, errors and resume") {
  auto stream = std::make_shared<CountingStream>();
  CHECK(error_of([&] { DataLoader(stream, DataLoaderOptions().shuffle(true)); }) ==
        "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=True");
  CHECK(error_of([&] { DataLoader(stream, DataLoaderOptions().sampler(std::make_shared<SequentialSampler>(3))); }) ==
        "DataLoader with IterableDataset: expected unspecified sampler option");

  auto broken = std::make_shared<CountingStream>();
  broken->fail_at = 5;
  DataLoader failing(broken, DataLoaderOptions().batch_size(2));
  CHECK(error_of([&] {
          for (auto& batch : failing) (void)batch;
        }) == "Caught an exception in DataLoader while reading sample 5 of the stream: stream broke");

  DataLoader first(stream, DataLoaderOptions().batch_size(3));
  const nlohmann::json saved = state_after_batches(first, 2);
  CHECK(saved["position"] == 2);
  auto other = std::make_shared<CountingStream>();
  DataLoader resumed(other, DataLoaderOptions().batch_size(3));
  resumed.load_state_dict(saved);
  Batches rest;
  for (auto& batch : resumed) rest.push_back(values_of(batch));
  CHECK(rest == Batches{{6, 7, 8}, {9}});
  CHECK(resumed.state_dict()["epoch"] == 1);
}

// The batches of one epoch over a stream of int64 samples.
template <class Loader>
Batches stream_epoch(Loader& loader) {
  Batches got;
  for (auto& batch : loader) got.push_back(values_of(batch));
  return got;
}

// 0 .. n-1 cut into batches of b, the last one short unless dropped.
Batches counted_batches(int64_t n, int64_t b, bool drop_last) {
  Batches want;
  for (int64_t start = 0; start < n; start += b) {
    if (drop_last && start + b > n) break;
    std::vector<double> batch;
    for (int64_t i = start; i < std::min(n, start + b); ++i) batch.push_back(static_cast<double>(i));
    want.push_back(batch);
  }
  return want;
}

// A counting stream whose next() may sleep, counting calls.
struct SlowStream : CountingStream {
  std::chrono::milliseconds delay{0};
  std::atomic<int> calls{0};
  std::optional<int64_t> next() override {
    ++calls;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    return CountingStream::next();
  }
};

TEST_CASE("DataLoader workers share a stream: the batches of num_workers 0, in order") {
  struct Row {
    int64_t n, batch_size;
    bool drop_last;
  };
  const std::vector<Row> rows{{103, 10, false}, {103, 10, true}, {100, 10, true}, {3, 10, false}, {3, 10, true},
                              {0, 4, false}};
  for (const Row& row : rows) {
    for (int64_t workers : {0, 1, 3}) {
      CAPTURE(row.n);
      CAPTURE(row.drop_last);
      CAPTURE(workers);
      auto stream = std::make_shared<CountingStream>();
      stream->n = row.n;
      DataLoader loader(stream,
                        DataLoaderOptions().batch_size(row.batch_size).drop_last(row.drop_last).num_workers(workers));
      const Batches want = counted_batches(row.n, row.batch_size, row.drop_last);
      CHECK(stream_epoch(loader) == want);
      CHECK(stream_epoch(loader) == want);  // reset() and read again
      CHECK(stream->resets == 2);
      CHECK(loader.state_dict()["epoch"] == 2);
      CHECK(loader.state_dict()["position"] == 0);
    }
  }

  // Without automatic batching: one 0-dim sample per worker task.
  for (int64_t workers : {1, 3}) {
    CAPTURE(workers);
    auto stream = std::make_shared<CountingStream>();
    stream->n = 25;
    DataLoader single(stream, DataLoaderOptions().batch_size(std::nullopt).num_workers(workers).prefetch_factor(1));
    std::vector<double> seen;
    for (auto& sample : single) {
      CHECK(sample.dim() == 0);
      seen.push_back(sample.item<double>());
    }
    CHECK(seen == iota(25));
  }

  // A collate on the workers, its failure naming the worker and the batch.
  auto failing_collate = [](std::vector<int64_t> batch) {
    if (batch.front() == 6) throw std::runtime_error("bad batch");
    return batch.front();
  };
  DataLoader collating(std::make_shared<CountingStream>(),
                       DataLoaderOptions().batch_size(3).num_workers(2).collate(failing_collate));
  std::vector<int64_t> firsts;
  const std::string message = error_of([&] {
    for (int64_t first : collating) firsts.push_back(first);
  });
  CHECK(firsts == std::vector<int64_t>{0, 3});
  CHECK(message.starts_with("Caught an exception in DataLoader worker "));
  CHECK(message.ends_with(" while collating batch 2: bad batch"));
}

TEST_CASE("DataLoader stream workers: errors, timeout, abandoning and resume") {
  // next() throws at sample 37: the batches before it, then the stream error.
  for (int64_t workers : {0, 1, 3}) {
    CAPTURE(workers);
    auto broken = std::make_shared<CountingStream>();
    broken->n = 103;
    broken->fail_at = 37;
    DataLoader loader(broken, DataLoaderOptions().batch_size(10).num_workers(workers));
    Batches got;
    const std::string message = error_of([&] {
      for (auto& batch : loader) got.push_back(values_of(batch));
    });
    CHECK(message == "Caught an exception in DataLoader while reading sample 37 of the stream: stream broke");
    CHECK(got == counted_batches(30, 10, false));
    CHECK(loader.state_dict()["position"] == 3);
  }

  auto slow = std::make_shared<SlowStream>();
  slow->n = 1000;
  slow->delay = std::chrono::milliseconds(300);
  DataLoader timing_out(slow, DataLoaderOptions().batch_size(1).num_workers(2).timeout(0.05));
  CHECK(error_of([&] { (void)timing_out.begin(); }) == "DataLoader timed out after 0.05 seconds");

  // Abandoned midway: the workers stop within the prefetch window and are joined.
  slow->delay = std::chrono::milliseconds(0);
  slow->calls = 0;
  DataLoader abandoned(slow, DataLoaderOptions().batch_size(4).num_workers(3).prefetch_factor(2));
  {
    auto it = abandoned.begin();
    ++it;
    CHECK(values_of(*it) == std::vector<double>{4, 5, 6, 7});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int calls = slow->calls;
  // Two consumed batches, at most 3 * 2 ahead and one in progress per worker.
  CHECK(calls <= (2 + 6 + 3) * 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(slow->calls == calls);
  size_t batches = 0;
  for (auto& batch : abandoned) {
    (void)batch;
    ++batches;
  }
  CHECK(batches == 250);

  // Resume mid-epoch with workers: reset(), skip the delivered samples, then the rest.
  for (int64_t workers : {0, 1, 3}) {
    CAPTURE(workers);
    for (bool drop_last : {false, true}) {
      CAPTURE(drop_last);
      const auto options = DataLoaderOptions().batch_size(10).drop_last(drop_last).num_workers(workers);
      auto stream = std::make_shared<CountingStream>();
      stream->n = 103;
      DataLoader first(stream, options);
      const nlohmann::json saved = state_after_batches(first, 4);
      CHECK(saved["position"] == 4);
      auto other = std::make_shared<CountingStream>();
      other->n = 103;
      DataLoader resumed(other, options);
      resumed.load_state_dict(saved);
      const Batches all = counted_batches(103, 10, drop_last);
      CHECK(stream_epoch(resumed) == Batches(all.begin() + 4, all.end()));
      CHECK(resumed.state_dict()["epoch"] == 1);
      CHECK(stream_epoch(resumed) == all);
    }
  }
}

// ---- throughput ----

TEST_CASE("DataLoader throughput sanity: every sample once per epoch, any worker count") {
  // 6000 Fashion-MNIST-sized samples; the time is reported, not asserted.
  const int64_t n = 6000;
  const Tensor images = arange(n, kFloat32).reshape({n, 1, 1, 1}).expand({n, 1, 28, 28}).contiguous();
  auto ds = std::make_shared<TensorDataset>(images, arange(n, kInt64));
  for (int64_t workers : {0, 2}) {
    DataLoader loader(ds, DataLoaderOptions().batch_size(64).shuffle(true).seed(0).num_workers(workers));
    const auto start = std::chrono::steady_clock::now();
    double label_sum = 0;
    size_t batches = 0;
    for (auto& batch : loader) {
      CHECK(batch.data.sizes()[1] == 1);
      label_sum += batch.target.sum().item<double>();
      ++batches;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(batches == loader.size());
    CHECK(label_sum == static_cast<double>(n * (n - 1) / 2));
    MESSAGE("DataLoader, " << workers << " workers: " << static_cast<double>(n) / seconds << " samples/s");
  }
}
