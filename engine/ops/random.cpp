// Random numbers: Generator, the default generator and manual_seed, the random
// factories (rand, randn, randint, randperm, normal and the *_like forms) and
// the in-place fills uniform_ and normal_, all on the Philox kernels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/ops/inplace.h"
#include "kernels/cpu/random.h"

namespace gradiens {

// ---- Generator ----

struct Generator::Impl {
  mutable std::mutex mutex;
  GeneratorState state;
};

Generator::Generator() : Generator(kDefaultSeed) {}

Generator::Generator(uint64_t seed) : impl_(std::make_shared<Impl>()) { impl_->state = {seed, 0}; }

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard lock(impl_->mutex);
  impl_->state = {seed, 0};
}

uint64_t Generator::seed() {
  std::random_device device;
  const uint64_t seed = (static_cast<uint64_t>(device()) << 32) | device();
  manual_seed(seed);
  return seed;
}

uint64_t Generator::current_seed() const { return get_state().seed; }
uint64_t Generator::offset() const { return get_state().offset; }

void Generator::set_offset(uint64_t offset) {
  std::lock_guard lock(impl_->mutex);
  impl_->state.offset = offset;
}

GeneratorState Generator::get_state() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}

void Generator::set_state(const GeneratorState& state) {
  std::lock_guard lock(impl_->mutex);
  impl_->state = state;
}

Generator Generator::clone() const {
  Generator copy;
  copy.set_state(get_state());
  return copy;
}

GeneratorState Generator::reserve(uint64_t blocks) {
  std::lock_guard lock(impl_->mutex);
  GeneratorState start = impl_->state;
  impl_->state.offset += blocks;
  return start;
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

// ---- helpers ----

namespace {

using kernels::cpu::PhiloxState;

// PyTorch's names in dispatch errors: "normal_kernel_cpu" not implemented for 'Long'.
std::string_view torch_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return "Byte";
    case ScalarType::Int32: return "Int";
    case ScalarType::Int64: return "Long";
    case ScalarType::Float16: return "Half";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Float32: return "Float";
    case ScalarType::Float64: return "Double";
    case ScalarType::Bool: return "Bool";
  }
  return "Unknown";
}

// A number as PyTorch's messages stream it (C++ ostream defaults: "2", "3e+38").
std::string stream_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void check_floating(ScalarType t, std::string_view kernel) {
  GD_CHECK(t == kFloat32 || t == kFloat64,
           fmt::format("\"{}\" not implemented for '{}'", kernel, torch_type_name(t)));
}

void check_normal_std(double std) {
  GD_CHECK(std >= 0.0, fmt::format("normal expects std >= 0.0, but found std {}", stream_number(std)));
}

// A write through an expanded tensor would give one memory location several values.
void check_no_internal_overlap(const Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    GD_CHECK(!(self.stride(d) == 0 && self.size(d) > 1),
             "unsupported operation: more than one element of the written-to tensor refers to a single memory "
             "location. Please clone() the tensor before performing the operation.");
  }
}

PhiloxState philox(const GeneratorState& s) { return {s.seed, s.offset}; }

// Runs fill(T* out, n, stream) over self's elements, drawing from `generator`.
// A non-contiguous self is filled through a contiguous temporary, so the numbers
// land in self's logical order whatever its strides.
template <class T, class Fill>
void fill_from_generator(const Tensor& self, Generator& generator, uint64_t blocks, Fill fill) {
  const GeneratorState start = generator.reserve(blocks);
  const int64_t n = self.numel();
  uint64_t used = 0;
  if (self.is_contiguous()) {
    used = fill(self.data_ptr<T>(), n, philox(start));
  } else {
    Tensor dense = empty(self.sizes(), self.options());
    used = fill(dense.data_ptr<T>(), n, philox(start));
    copy_data(self, dense);
  }
  GD_INTERNAL_ASSERT(used == blocks, fmt::format("a random fill used {} Philox blocks, {} were reserved", used, blocks));
}

template <class T>
uint64_t blocks_for(int64_t n) {
  return sizeof(T) == 8 ? kernels::cpu::philox_blocks_for_64bit_draws(n)
                        : kernels::cpu::philox_blocks_for_32bit_draws(n);
}

// The fills without autograd checks; self's dtype is floating (checked by the callers).
void uniform_fill(const Tensor& self, double from, double to, Generator& generator) {
  dispatch_floating(self.dtype(), "uniform_", [&]<class T>() {
    const double lowest = std::numeric_limits<T>::lowest(), highest = std::numeric_limits<T>::max();
    const char* type = std::is_same_v<T, float> ? "float" : "double";
    GD_CHECK(from >= lowest && from <= highest, fmt::format("from is out of bounds for {}", type));
    GD_CHECK(to >= lowest && to <= highest, fmt::format("to is out of bounds for {}", type));
    GD_CHECK(from <= to, fmt::format("uniform_ expects to return a [from, to) range, but found from={} > to={}",
                                     stream_number(from), stream_number(to)));
    GD_CHECK(to - from <= highest,
             fmt::format("uniform_ expects to-from <= std::numeric_limits<{}>::max(), but found to={} and from={} "
                         "which result in to-from to exceed the limit",
                         torch_type_name(self.dtype()), stream_number(to), stream_number(from)));
    const T low = static_cast<T>(from), high = static_cast<T>(to);
    fill_from_generator<T>(self, generator, blocks_for<T>(self.numel()), [&](T* out, int64_t n, PhiloxState s) {
      if (low < high) return kernels::cpu::fill_uniform(out, n, s, low, high);
      // [from, from) holds only from, as in PyTorch; the stream still advances as for any fill.
      std::fill(out, out + n, low);
      return blocks_for<T>(n);
    });
  });
}

void normal_fill(const Tensor& self, double mean, double std, Generator& generator) {
  dispatch_floating(self.dtype(), "normal_", [&]<class T>() {
    fill_from_generator<T>(self, generator, blocks_for<T>(self.numel()), [&](T* out, int64_t n, PhiloxState s) {
      return kernels::cpu::fill_normal(out, n, s, static_cast<T>(mean), static_cast<T>(std));
    });
  });
}

// In-place fills follow Note [In-place ops and autograd]; the new values do not
// depend on the old ones, so a non-leaf loses its history (as fill_ does).
template <class Fill>
const Tensor& random_inplace(const Tensor& self, std::string_view op, Fill fill) {
  check_inplace(self, {}, op);
  check_no_internal_overlap(self);
  fill();
  if (self.requires_grad() && GradMode::is_enabled()) {
    self.impl()->grad_fn.reset();
    self.impl()->requires_grad = false;
  }
  self.bump_version();
  return self;
}

Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

TensorOptions like_options(const Tensor& t, const TensorOptions& options) {
  return TensorOptions()
      .dtype(options.has_dtype() ? options.dtype() : t.dtype())
      .device(options.has_device() ? options.device() : t.device())
      .requires_grad(options.requires_grad());
}

// randint's range must fit the output dtype (PyTorch's check_from_to_in_range).
void check_randint_range(int64_t low, int64_t high, ScalarType dtype) {
  GD_CHECK(low < high,
           fmt::format("random_ expects 'from' to be less than 'to', but got from={} >= to={}", low, high));
  auto check = [&](int64_t min, int64_t max, std::string_view type) {
    GD_CHECK(low >= min && low <= max, fmt::format("from is out of bounds for {}", type));
    GD_CHECK(high - 1 >= min && high - 1 <= max, fmt::format("to - 1 is out of bounds for {}", type));
  };
  switch (dtype) {
    case ScalarType::UInt8: check(0, 255, "unsigned char"); break;
    case ScalarType::Int32: check(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int"); break;
    case ScalarType::Bool: check(0, 1, "bool"); break;
    case ScalarType::Int64:
    case ScalarType::Float32:
    case ScalarType::Float64: break;
    default: GD_CHECK(false, fmt::format("\"random_from_to\" not implemented for '{}'", torch_type_name(dtype)));
  }
}

// The largest n a permutation in `dtype` can hold, with PyTorch's message.
void check_randperm_size(int64_t n, ScalarType dtype) {
  GD_CHECK(n >= 0, fmt::format("Trying to create tensor with negative dimension {}: [{}]", n, n));
  switch (dtype) {
    case ScalarType::UInt8:
      GD_CHECK(n <= 256, "value cannot be converted to type uint8_t without overflow");
      break;
    case ScalarType::Int32:
      GD_CHECK(n <= (int64_t{1} << 31), "value cannot be converted to type int32_t without overflow");
      break;
    case ScalarType::Float32: GD_CHECK(n <= (int64_t{1} << 24) + 1, "n cannot be greater than 2^24+1 for Float type."); break;
    case ScalarType::Float64: GD_CHECK(n <= (int64_t{1} << 53) + 1, "n cannot be greater than 2^53+1 for Double type."); break;
    case ScalarType::Int64: break;
    default: GD_CHECK(false, fmt::format("\"randperm\" not implemented for '{}'", torch_type_name(dtype)));
  }
}

uint64_t mul_high(uint64_t a, uint64_t b) {
  __extension__ using Uint128 = unsigned __int128;
  return static_cast<uint64_t>((static_cast<Uint128>(a) * b) >> 64);
}

}  // namespace

// ---- in-place fills ----

const Tensor& uniform_(const Tensor& self, double from, double to, Generator& generator) {
  return random_inplace(self, "uniform_", [&] {
    check_floating(self.dtype(), "check_uniform_bounds");
    uniform_fill(self, from, to, generator);
  });
}

const Tensor& normal_(const Tensor& self, double mean, double std, Generator& generator) {
  return random_inplace(self, "normal_", [&] {
    check_floating(self.dtype(), "normal_kernel_cpu");
    check_normal_std(std);
    normal_fill(self, mean, std, generator);
  });
}

Tensor& Tensor::uniform_(double from, double to) {
  gradiens::uniform_(*this, from, to, default_generator());
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) {
  gradiens::normal_(*this, mean, std, default_generator());
  return *this;
}

// ---- factories ----

Tensor rand(IntArrayRef sizes, Generator& generator, const TensorOptions& options) {
  check_floating(options.dtype(), "check_uniform_bounds");
  Tensor t = empty(sizes, options.requires_grad(false));
  uniform_fill(t, 0, 1, generator);
  return finish(t, options);
}
Tensor rand(IntArrayRef sizes, const TensorOptions& options) { return rand(sizes, default_generator(), options); }

Tensor normal(double mean, double std, IntArrayRef sizes, Generator& generator, const TensorOptions& options) {
  check_floating(options.dtype(), "normal_kernel_cpu");
  check_normal_std(std);
  Tensor t = empty(sizes, options.requires_grad(false));
  normal_fill(t, mean, std, generator);
  return finish(t, options);
}
Tensor normal(double mean, double std, IntArrayRef sizes, const TensorOptions& options) {
  return normal(mean, std, sizes, default_generator(), options);
}

Tensor randn(IntArrayRef sizes, Generator& generator, const TensorOptions& options) {
  return normal(0, 1, sizes, generator, options);
}
Tensor randn(IntArrayRef sizes, const TensorOptions& options) { return randn(sizes, default_generator(), options); }

Tensor rand_like(const Tensor& t, const TensorOptions& options) { return rand(t.sizes(), like_options(t, options)); }
Tensor randn_like(const Tensor& t, const TensorOptions& options) { return randn(t.sizes(), like_options(t, options)); }

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator& generator, const TensorOptions& options) {
  const TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  check_randint_range(low, high, o.dtype());
  Tensor draws = empty(sizes, TensorOptions().dtype(kInt64).device(o.device()));
  fill_from_generator<int64_t>(draws, generator, kernels::cpu::philox_blocks_for_64bit_draws(draws.numel()),
                               [&](int64_t* out, int64_t n, PhiloxState s) {
                                 return kernels::cpu::fill_randint(out, n, s, low, high);
                               });
  if (o.dtype() == kInt64) return finish(draws, o);
  Tensor t = empty(sizes, o.requires_grad(false));
  copy_data(t, draws);
  return finish(t, o);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& options) {
  return randint(low, high, sizes, default_generator(), options);
}
Tensor randint(int64_t high, IntArrayRef sizes, Generator& generator, const TensorOptions& options) {
  return randint(0, high, sizes, generator, options);
}
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& options) {
  return randint(0, high, sizes, default_generator(), options);
}

// Fisher-Yates, swapping position i with a position drawn uniformly from [0, i]
// by one 64-bit word (multiply-high, as fill_randint does): n - 1 draws, so the
// generator advances by the blocks of n - 1 64-bit draws.
Tensor randperm(int64_t n, Generator& generator, const TensorOptions& options) {
  const TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  check_randperm_size(n, o.dtype());
  Tensor perm = empty({n}, TensorOptions().dtype(kInt64).device(o.device()));
  int64_t* p = perm.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  if (n > 1) {
    const int64_t draws = n - 1;
    std::vector<uint32_t> words(static_cast<size_t>(2 * draws));
    const uint64_t blocks = kernels::cpu::philox_blocks_for_64bit_draws(draws);
    const uint64_t used = kernels::cpu::fill_random_bits(words.data(), 2 * draws, philox(generator.reserve(blocks)));
    GD_INTERNAL_ASSERT(used == blocks, "randperm: the Philox blocks used differ from those reserved");
    for (int64_t i = n - 1; i > 0; --i) {
      const size_t w = static_cast<size_t>(2 * (n - 1 - i));
      const uint64_t draw = (static_cast<uint64_t>(words[w + 1]) << 32) | words[w];
      std::swap(p[i], p[mul_high(draw, static_cast<uint64_t>(i) + 1)]);
    }
  }
  if (o.dtype() == kInt64) return finish(perm, o);
  Tensor t = empty({n}, o.requires_grad(false));
  copy_data(t, perm);
  return finish(t, o);
}
Tensor randperm(int64_t n, const TensorOptions& options) { return randperm(n, default_generator(), options); }

}  // namespace gradiens
