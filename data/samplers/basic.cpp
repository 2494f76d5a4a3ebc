// The samplers of torch.utils.data.sampler: Sequential, Random, SubsetRandom,
// WeightedRandom and Batch, plus the generator helpers the samplers share.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

#include "data/samplers.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"

namespace gradiens::data {

namespace {

std::vector<size_t> to_indices(const Tensor& t) {
  const Tensor c = t.contiguous();
  const int64_t* p = c.cpu_data_ptr<int64_t>();
  return std::vector<size_t>(p, p + c.numel());
}

size_t positive_num_samples(int64_t num_samples) {
  GD_CHECK(num_samples > 0,
           fmt::format("num_samples should be a positive integer value, but got num_samples={}", num_samples));
  return static_cast<size_t>(num_samples);
}

}  // namespace

namespace detail {

Generator seeded_from_default() {
  const Tensor draw = randint(std::numeric_limits<int64_t>::max(), {1}, default_generator());
  return Generator(static_cast<uint64_t>(draw.item<int64_t>()));
}

nlohmann::json generator_to_json(const Generator& generator) {
  const GeneratorState s = generator.get_state();
  return {{"seed", s.seed}, {"offset", s.offset}};
}

void generator_from_json(Generator& generator, const nlohmann::json& state, const char* owner) {
  auto field = [&](const char* key) -> uint64_t {
    GD_CHECK(state.is_object(), fmt::format("{}.load_state_dict: the state is not a JSON object", owner));
    auto it = state.find("generator");
    GD_CHECK(it != state.end() && it->is_object(), fmt::format("{}.load_state_dict: 'generator' is missing", owner));
    auto value = it->find(key);
    GD_CHECK(value != it->end() && (value->is_number_unsigned() || (value->is_number_integer() && value->get<int64_t>() >= 0)),
             fmt::format("{}.load_state_dict: 'generator.{}' is missing or not a non-negative integer", owner, key));
    return value->get<uint64_t>();
  };
  const uint64_t seed = field("seed");
  const uint64_t offset = field("offset");
  generator.set_state({seed, offset});
}

// ---- IndexCursor (Note [Two sampler interfaces]) ----

void IndexCursor::reset(std::optional<size_t> new_size) {
  if (new_size) resize(*new_size);
  pass_ = indices();
  index_ = 0;
}

std::optional<std::vector<size_t>> IndexCursor::next(size_t batch_size) {
  if (!pass_) pass_ = indices();
  const size_t remaining = pass_->size() - index_;
  if (remaining == 0) return std::nullopt;
  const size_t take = std::min(batch_size, remaining);
  std::vector<size_t> out(pass_->begin() + static_cast<std::ptrdiff_t>(index_),
                          pass_->begin() + static_cast<std::ptrdiff_t>(index_ + take));
  index_ += take;
  return out;
}

void IndexCursor::resize(size_t new_size) {
  throw Error(fmt::format("{}: reset(new_size = {}) cannot change the indices this sampler draws from",
                          "Sampler", new_size));
}

void IndexCursor::save(serialize::OutputArchive& archive) const {
  archive.write("index", scalar_tensor(static_cast<int64_t>(index_), kInt64), /*is_buffer=*/true);
  if (pass_) {
    std::vector<int64_t> pass(pass_->begin(), pass_->end());
    archive.write("indices", tensor(pass, kInt64), /*is_buffer=*/true);
  }
  archive.write("state", state_dict().dump());
}

void IndexCursor::load(serialize::InputArchive& archive) {
  Tensor index;
  archive.read("index", index, /*is_buffer=*/true);
  std::string state;
  if (archive.try_read("state", state)) load_state_dict(nlohmann::json::parse(state));
  Tensor pass;
  if (archive.try_read("indices", pass, /*is_buffer=*/true)) {
    pass_ = to_indices(pass.to(kInt64));
  } else {
    pass_ = indices();
  }
  const auto position = index.item<int64_t>();
  GD_CHECK(position >= 0 && static_cast<size_t>(position) <= pass_->size(),
           fmt::format("Sampler.load: index {} is out of range for a pass of {} indices", position, pass_->size()));
  index_ = static_cast<size_t>(position);
}

}  // namespace detail

// ---- SequentialSampler ----

std::vector<size_t> SequentialSampler::indices() {
  std::vector<size_t> out(size_);
  for (size_t i = 0; i < size_; ++i) out[i] = i;
  return out;
}

// ---- RandomSampler ----

RandomSampler::RandomSampler(size_t size, bool replacement, std::optional<int64_t> num_samples,
                             std::optional<Generator> generator)
    : data_size_(size),
      replacement_(replacement),
      explicit_num_samples_(num_samples.has_value()),
      num_samples_(positive_num_samples(num_samples.value_or(static_cast<int64_t>(size)))),
      generator_(generator ? *generator : detail::seeded_from_default()) {
  // PyTorch fails on the first pass (a zero division or randint's range check); here at once.
  GD_CHECK(size > 0, fmt::format("RandomSampler: cannot draw {} samples from an empty dataset", num_samples_));
}

void RandomSampler::resize(size_t new_size) {
  GD_CHECK(new_size > 0 || !explicit_num_samples_,
           fmt::format("RandomSampler: cannot draw {} samples from an empty dataset", num_samples_));
  data_size_ = new_size;
  if (!explicit_num_samples_) num_samples_ = new_size;
}

std::vector<size_t> RandomSampler::indices() {
  if (num_samples_ == 0) return {};  // resized to an empty dataset
  const auto n = static_cast<int64_t>(data_size_);
  if (replacement_) {
    // PyTorch draws chunks of 32; with two int64 draws per Philox block the
    // chunks are one contiguous stream, so a single draw gives the same numbers.
    return to_indices(randint(n, {static_cast<int64_t>(num_samples_)}, generator_));
  }
  std::vector<size_t> out;
  out.reserve(num_samples_);
  for (size_t r = 0; r < num_samples_ / data_size_; ++r) {
    const std::vector<size_t> perm = to_indices(randperm(n, generator_));
    out.insert(out.end(), perm.begin(), perm.end());
  }
  // As PyTorch, the tail is the head of one more permutation, drawn even when empty.
  const std::vector<size_t> perm = to_indices(randperm(n, generator_));
  out.insert(out.end(), perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(num_samples_ % data_size_));
  return out;
}

nlohmann::json RandomSampler::state_dict() const { return {{"generator", detail::generator_to_json(generator_)}}; }
void RandomSampler::load_state_dict(const nlohmann::json& state) {
  detail::generator_from_json(generator_, state, "RandomSampler");
}

// ---- SubsetRandomSampler ----

SubsetRandomSampler::SubsetRandomSampler(std::vector<size_t> indices, std::optional<Generator> generator)
    : indices_(std::move(indices)), generator_(generator ? *generator : detail::seeded_from_default()) {}

std::vector<size_t> SubsetRandomSampler::indices() {
  const std::vector<size_t> perm = to_indices(randperm(static_cast<int64_t>(indices_.size()), generator_));
  std::vector<size_t> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = indices_[perm[i]];
  return out;
}

nlohmann::json SubsetRandomSampler::state_dict() const {
  return {{"generator", detail::generator_to_json(generator_)}};
}
void SubsetRandomSampler::load_state_dict(const nlohmann::json& state) {
  detail::generator_from_json(generator_, state, "SubsetRandomSampler");
}

// ---- WeightedRandomSampler ----

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement,
                                             std::optional<Generator> generator)
    : weights_(tensor(weights, kFloat64)),
      num_samples_(positive_num_samples(num_samples)),
      replacement_(replacement),
      generator_(generator ? *generator : detail::seeded_from_default()) {}

std::vector<size_t> WeightedRandomSampler::indices() {
  return to_indices(multinomial(weights_, static_cast<int64_t>(num_samples_), replacement_, generator_));
}

nlohmann::json WeightedRandomSampler::state_dict() const {
  return {{"generator", detail::generator_to_json(generator_)}};
}
void WeightedRandomSampler::load_state_dict(const nlohmann::json& state) {
  detail::generator_from_json(generator_, state, "WeightedRandomSampler");
}

// ---- BatchSampler ----

BatchSampler::BatchSampler(std::shared_ptr<Sampler<>> sampler, int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(0), drop_last_(drop_last) {
  GD_CHECK(batch_size > 0,
           fmt::format("batch_size should be a positive integer value, but got batch_size={}", batch_size));
  GD_CHECK(sampler_ != nullptr, "BatchSampler: the sampler is null");
  batch_size_ = static_cast<size_t>(batch_size);
}

std::vector<std::vector<size_t>> BatchSampler::indices() {
  const std::vector<size_t> all = sampler_->indices();
  std::vector<std::vector<size_t>> batches;
  batches.reserve(all.size() / batch_size_ + 1);
  for (size_t start = 0; start < all.size(); start += batch_size_) {
    const size_t end = std::min(all.size(), start + batch_size_);
    if (drop_last_ && end - start < batch_size_) break;
    batches.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(start), all.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}

size_t BatchSampler::size() const {
  const size_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

}  // namespace gradiens::data
