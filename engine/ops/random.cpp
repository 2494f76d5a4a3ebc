// Random numbers: Generator, the default generator and manual_seed, the random
// factories (rand, randn, randint, randperm, normal and the *_like forms), the
// in-place fills uniform_, normal_ and bernoulli_, and the samplers with tensor
// parameters (bernoulli, multinomial, normal), all on the Philox kernels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <vector>

#include "engine/autograd/function.h"
#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/inplace.h"
#include "kernels/random.h"

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

using kernels::PhiloxState;

// A number as PyTorch's messages stream it (C++ ostream defaults: "2", "3e+38").
std::string stream_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void check_floating(ScalarType t, std::string_view kernel) {
  GD_CHECK(is_floating_point(t),
           fmt::format("\"{}\" not implemented for '{}'", kernel, c10_type_name(t)));
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

// Runs fill(out, n, philox, device) over self's elements, drawing the `blocks`
// reserved from `generator`. A non-contiguous self is filled through a
// contiguous temporary, so the numbers land in self's logical order whatever its
// strides. With on_host, a cuda self is filled on the CPU and copied over (a seed
// gives the same numbers on every device, bit for bit); otherwise the fill runs
// on self's device, from the same counters (Note [Philox stream layout]).
template <class Fill>
void fill_from_generator(const Tensor& self, Generator& generator, uint64_t blocks, bool on_host, Fill fill) {
  const GeneratorState start = generator.reserve(blocks);
  const bool host_copy = on_host && self.device().is_cuda();
  const Tensor target = host_copy              ? empty(self.sizes(), self.options().device(Device(kCPU)))
                        : self.is_contiguous() ? self
                                               : empty(self.sizes(), self.options());
  const uint64_t used = fill(target.data_ptr(), self.numel(), philox(start), cuda_seam::device_of(target));
  if (!target.is_same(self)) copy_data(self, target);
  GD_INTERNAL_ASSERT(used == blocks, fmt::format("a random fill used {} Philox blocks, {} were reserved", used, blocks));
}

template <class T>
uint64_t blocks_for(int64_t n) {
  return sizeof(T) == 8 ? kernels::philox_blocks_for_64bit_draws(n) : kernels::philox_blocks_for_32bit_draws(n);
}

// float16/bfloat16 fills draw float32 numbers (the float32 stream: a seed gives
// the float32 values, rounded) and round each once, into a row-major tensor.
template <class Fill>
Tensor rounded_draws(const Tensor& self, Fill fill) {
  const TensorOptions options = TensorOptions().device(self.device());
  Tensor draws = empty(self.sizes(), options.dtype(kFloat32));
  fill(draws);
  Tensor rounded = empty(self.sizes(), options.dtype(self.dtype()));
  copy_data(rounded, draws);
  return rounded;
}

// The largest T below `to` (T a 16-bit float): draws that round up to `to`
// move there, so [from, to) stays half-open as the float32 fill keeps it.
template <class T>
T largest_below(double to) {
  T r = static_cast<T>(to);
  while (static_cast<double>(r) >= to) {
    const uint16_t magnitude = r.x & 0x7FFF;
    r.x = static_cast<uint16_t>(magnitude == 0 ? 0x8001 : (r.x & 0x8000) ? r.x + 1 : r.x - 1);
  }
  return r;
}

// The fills without autograd checks; self's dtype is floating (checked by the callers).
void uniform_fill(const Tensor& self, double from, double to, Generator& generator) {
  if (is_reduced_floating_point(self.dtype())) {
    if (self.dtype() == kFloat16) {
      GD_CHECK(from >= -65504 && from <= 65504, "from is out of bounds for c10::Half");
      GD_CHECK(to >= -65504 && to <= 65504, "to is out of bounds for c10::Half");
    }
    // Rounded on self's device, pulled back to the host (a cuda self) for the clamp.
    Tensor rounded =
        rounded_draws(self, [&](const Tensor& draws) { uniform_fill(draws, from, to, generator); }).cpu();
    dispatch_floating_and_reduced(self.dtype(), "uniform_", [&]<class T>() {
      if constexpr (is_reduced_floating_point_v<T>) {
        if (!(from < to)) return;
        const T limit = largest_below<T>(to);
        T* p = rounded.cpu_data_ptr<T>();
        for (int64_t i = 0; i < rounded.numel(); ++i)
          if (static_cast<double>(p[i]) >= to) p[i] = limit;
      }
    });
    copy_data(self, rounded);
    return;
  }
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
                         c10_type_name(self.dtype()), stream_number(to), stream_number(from)));
    const T low = static_cast<T>(from), high = static_cast<T>(to);
    // [from, from) holds only from, as in PyTorch (filled on the host); the
    // stream still advances as for any fill.
    const bool empty_range = !(low < high);
    fill_from_generator(self, generator, blocks_for<T>(self.numel()), empty_range,
                        [&](void* out, int64_t n, PhiloxState s, const kernels::DeviceRef& device) {
                          if (!empty_range) return kernels::fill_uniform(self.dtype(), out, n, s, from, to, device);
                          std::fill(static_cast<T*>(out), static_cast<T*>(out) + n, low);
                          return blocks_for<T>(n);
                        });
  });
}

void normal_fill(const Tensor& self, double mean, double std, Generator& generator) {
  if (is_reduced_floating_point(self.dtype())) {
    copy_data(self, rounded_draws(self, [&](const Tensor& draws) { normal_fill(draws, mean, std, generator); }));
    return;
  }
  dispatch_floating(self.dtype(), "normal_", [&]<class T>() {
    fill_from_generator(self, generator, blocks_for<T>(self.numel()), false,
                        [&](void* out, int64_t n, PhiloxState s, const kernels::DeviceRef& device) {
                          return kernels::fill_normal(self.dtype(), out, n, s, mean, std, device);
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
  if (detail::forward_ad_enabled() && detail::has_tangent(self)) detail::set_tangent(self, zeros_like(self));
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
    case ScalarType::Int8: check(-128, 127, "signed char"); break;
    case ScalarType::Int16: check(-32768, 32767, "short int"); break;
    case ScalarType::Int32: check(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int"); break;
    case ScalarType::Bool: check(0, 1, "bool"); break;
    case ScalarType::Float16: check(-65504, 65504, "c10::Half"); break;
    case ScalarType::BFloat16:
    case ScalarType::Int64:
    case ScalarType::Float32:
    case ScalarType::Float64: break;
    default: GD_CHECK(false, fmt::format("\"random_from_to\" not implemented for '{}'", c10_type_name(dtype)));
  }
}

// The largest n a permutation in `dtype` can hold, with PyTorch's message.
void check_randperm_size(int64_t n, ScalarType dtype) {
  GD_CHECK(n >= 0, fmt::format("Trying to create tensor with negative dimension {}: [{}]", n, n));
  switch (dtype) {
    case ScalarType::UInt8:
      GD_CHECK(n <= 256, "value cannot be converted to type uint8_t without overflow");
      break;
    case ScalarType::Int8:
      GD_CHECK(n <= 128, "value cannot be converted to type int8_t without overflow");
      break;
    case ScalarType::Int16:
      GD_CHECK(n <= 32768, "value cannot be converted to type int16_t without overflow");
      break;
    case ScalarType::Int32:
      GD_CHECK(n <= (int64_t{1} << 31), "value cannot be converted to type int32_t without overflow");
      break;
    case ScalarType::Float32: GD_CHECK(n <= (int64_t{1} << 24) + 1, "n cannot be greater than 2^24+1 for Float type."); break;
    case ScalarType::Float64: GD_CHECK(n <= (int64_t{1} << 53) + 1, "n cannot be greater than 2^53+1 for Double type."); break;
    case ScalarType::Float16:
      GD_CHECK(n <= (int64_t{1} << 11) + 1, "n cannot be greater than 2049 for Half type.");
      break;
    case ScalarType::BFloat16:  // PyTorch 1.13 has no bound for bfloat16 (values past 256 repeat)
    case ScalarType::Int64: break;
    default: GD_CHECK(false, fmt::format("\"randperm\" not implemented for '{}'", c10_type_name(dtype)));
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

// The layout follows empty_like (Preserve by default); the numbers land in logical
// order whatever the strides, so they are those rand/randn would give.
Tensor rand_like(const Tensor& t, const TensorOptions& options) {
  check_floating(like_options(t, options).dtype(), "check_uniform_bounds");
  Tensor out = empty_like(t, options.requires_grad(false));
  uniform_fill(out, 0, 1, default_generator());
  return finish(out, options);
}
Tensor randint_like(const Tensor& t, int64_t high, const TensorOptions& options) {
  return randint_like(t, 0, high, options);
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, const TensorOptions& options) {
  return randint(low, high, t.sizes(), like_options(t, options));
}
Tensor randn_like(const Tensor& t, const TensorOptions& options) {
  check_floating(like_options(t, options).dtype(), "normal_kernel_cpu");
  Tensor out = empty_like(t, options.requires_grad(false));
  normal_fill(out, 0, 1, default_generator());
  return finish(out, options);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator& generator, const TensorOptions& options) {
  const TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  check_randint_range(low, high, o.dtype());
  Tensor draws = empty(sizes, TensorOptions().dtype(kInt64).device(o.device()));
  // Drawn on the host for a cuda tensor too, as randint has always been.
  fill_from_generator(draws, generator, kernels::philox_blocks_for_64bit_draws(draws.numel()), true,
                      [&](void* out, int64_t n, PhiloxState s, const kernels::DeviceRef& device) {
                        return kernels::fill_randint(static_cast<int64_t*>(out), n, s, low, high, device);
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
  Tensor perm = empty({n}, TensorOptions().dtype(kInt64));  // shuffled on the host, then copied to o's device
  int64_t* p = perm.cpu_data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  if (n > 1) {
    const int64_t draws = n - 1;
    std::vector<uint32_t> words(static_cast<size_t>(2 * draws));
    const uint64_t blocks = kernels::philox_blocks_for_64bit_draws(draws);
    const uint64_t used =
        kernels::fill_random_bits(words.data(), 2 * draws, philox(generator.reserve(blocks)), kernels::DeviceRef{});
    GD_INTERNAL_ASSERT(used == blocks, "randperm: the Philox blocks used differ from those reserved");
    for (int64_t i = n - 1; i > 0; --i) {
      const size_t w = static_cast<size_t>(2 * (n - 1 - i));
      const uint64_t draw = (static_cast<uint64_t>(words[w + 1]) << 32) | words[w];
      std::swap(p[i], p[mul_high(draw, static_cast<uint64_t>(i) + 1)]);
    }
  }
  if (o.dtype() == kInt64 && !o.device().is_cuda()) return finish(perm, o);
  Tensor t = empty({n}, o.requires_grad(false));
  copy_data(t, perm);
  return finish(t, o);
}
Tensor randperm(int64_t n, const TensorOptions& options) { return randperm(n, default_generator(), options); }

// ---- sampling with tensor parameters ----

// Note [Sampling layout]
// bernoulli and multinomial draw a fixed number of uniform doubles u in [0, 1)
// (fill_uniform on double: one 64-bit word each, Note [Philox stream layout]),
// numbered in row-major order of what they sample, so the numbers depend on
// the seed and offset only:
//   bernoulli        element i: 1 iff u_i < p_i.                        numel draws
//   multinomial, with replacement: sample s of row r takes u_{r*S+s} and
//                    returns the first category whose cumulative weight
//                    exceeds u * (row total).                           rows * S draws
//   multinomial, without replacement: category k of row r takes u_{r*K+k}
//                    and gets the key w_k / E_k with E_k = -log(1 - u) ~ Exp(1)
//                    (the Gumbel-max trick in exponential form, as PyTorch);
//                    the S largest keys, largest first, are the samples
//                    (a zero weight ranks below every positive one).   rows * K draws
// normal with tensor parameters is a standard normal fill of the broadcast
// shape, then mean + std * z.

namespace {

std::vector<double> uniform_draws(int64_t n, Generator& generator) {
  std::vector<double> u(static_cast<size_t>(n));
  const uint64_t blocks = kernels::philox_blocks_for_64bit_draws(n);
  const uint64_t used =
      kernels::fill_uniform(kFloat64, u.data(), n, philox(generator.reserve(blocks)), 0.0, 1.0, kernels::DeviceRef{});
  GD_INTERNAL_ASSERT(used == blocks, "a sampler used other Philox blocks than it reserved");
  return u;
}

// float64 0/1 samples shaped `sizes`, 1 where u_i < probability(i).
template <class Probability>
Tensor bernoulli_samples(IntArrayRef sizes, Generator& generator, Probability probability) {
  Tensor out = empty(sizes, kFloat64);
  const std::vector<double> u = uniform_draws(out.numel(), generator);
  double* o = out.cpu_data_ptr<double>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = u[static_cast<size_t>(i)] < probability(i) ? 1.0 : 0.0;
  return out;
}

// The same samples drawn on a cuda device (float64 0/1 there): the uniform
// doubles come from the device's Philox kernel with the counters the host
// would use, so a seed gives the CPU's samples bit for bit. `probability` is
// a float64 tensor on `device` broadcastable to `sizes`, or undefined for `p`.
Tensor bernoulli_samples_on_device(IntArrayRef sizes, const Device& device, Generator& generator,
                                   const Tensor& probability, double p) {
  Tensor u = empty(sizes, TensorOptions().dtype(kFloat64).device(device));
  const uint64_t blocks = kernels::philox_blocks_for_64bit_draws(u.numel());
  const GeneratorState start = generator.reserve(blocks);
  if (u.numel() > 0) {
    const uint64_t used =
        kernels::fill_uniform(kFloat64, u.data_ptr(), u.numel(), philox(start), 0.0, 1.0, cuda_seam::device_of(u));
    GD_INTERNAL_ASSERT(used == blocks, "a sampler used other Philox blocks than it reserved");
  }
  return (probability.defined() ? lt(u, probability) : lt(u, p)).to(kFloat64);
}

// The probabilities as contiguous float64, each checked to lie in [0, 1] (NaN does not).
Tensor checked_probabilities(const Tensor& p, IntArrayRef sizes) {
  GD_CHECK(p.is_floating_point(),
           fmt::format("\"bernoulli_tensor_cpu_p_\" not implemented for '{}'", c10_type_name(p.dtype())));
  Tensor p64 = p.to(kFloat64).expand(sizes).contiguous();
  if (p64.device().is_cuda()) {
    // amin/amax propagate NaN, which fails both comparisons.
    if (p64.numel() > 0)
      GD_CHECK(amin(p64).item().to_double() >= 0 && amax(p64).item().to_double() <= 1,
               "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
    return p64;
  }
  const double* v = p64.cpu_data_ptr<double>();
  for (int64_t i = 0; i < p64.numel(); ++i)
    GD_CHECK(v[i] >= 0 && v[i] <= 1, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  return p64;
}

void check_bernoulli_p(double p) {
  GD_CHECK(p >= 0 && p <= 1, fmt::format("bernoulli_ expects p to be in [0, 1], but got p={}", stream_number(p)));
}

// Not reparameterized: PyTorch gives the probabilities a zero gradient.
struct Bernoulli {
  static constexpr std::string_view name = "BernoulliBackward0";
  static Tensor forward(Ctx&, const Tensor& probabilities, const Generator& generator) {
    Tensor p64 = checked_probabilities(probabilities, probabilities.sizes());
    Generator stream = generator;  // a handle on the same stream
    Tensor out;
    if (p64.device().is_cuda()) {
      out = bernoulli_samples_on_device(p64.sizes(), p64.device(), stream, p64, 0);
    } else {
      const double* p = p64.cpu_data_ptr<double>();
      out = bernoulli_samples(p64.sizes(), stream, [p](int64_t i) { return p[i]; });
    }
    return probabilities.dtype() == kFloat64 ? out : out.to(probabilities.dtype());
  }
  static GradList backward(Ctx&, const Tensor& grad) { return {zeros_like(grad)}; }
};

// All elements >= 0 (NaN is not).
void check_std_tensor(const Tensor& std) {
  Tensor s = std.to(kFloat64).contiguous().cpu();
  const double* v = s.cpu_data_ptr<double>();
  for (int64_t i = 0; i < s.numel(); ++i) GD_CHECK(v[i] >= 0.0, "normal expects all elements of std >= 0.0");
}

Tensor standard_normal(IntArrayRef sizes, const TensorOptions& options, const Generator& generator) {
  Tensor z = empty(sizes, options);
  Generator stream = generator;
  normal_fill(z, 0, 1, stream);
  return z;
}

// The three tensor forms of normal; like PyTorch's they pass a zero gradient.
struct NormalTensorTensor {
  static constexpr std::string_view name = "NormalBackward3";
  static Tensor forward(Ctx&, const Tensor& mean, const Tensor& std, const Generator& generator) {
    check_floating(mean.dtype(), "normal_kernel_cpu");
    check_std_tensor(std);
    Tensor z = standard_normal(broadcast_shapes(mean.sizes(), std.sizes()), mean.options(), generator);
    return add(mean, mul(std.to(mean.dtype()), z));
  }
  static GradList backward(Ctx&, const Tensor& grad) { return {zeros_like(grad), zeros_like(grad)}; }
};

struct NormalTensorScalar {
  static constexpr std::string_view name = "NormalBackward1";
  static Tensor forward(Ctx&, const Tensor& mean, double std, const Generator& generator) {
    check_floating(mean.dtype(), "normal_kernel_cpu");
    check_normal_std(std);
    return add(mean, mul(standard_normal(mean.sizes(), mean.options(), generator), std));
  }
  static GradList backward(Ctx&, const Tensor& grad) { return {zeros_like(grad)}; }
};

struct NormalScalarTensor {
  static constexpr std::string_view name = "NormalBackward2";
  static Tensor forward(Ctx&, double mean, const Tensor& std, const Generator& generator) {
    check_floating(std.dtype(), "normal_kernel_cpu");
    check_std_tensor(std);
    return add(mul(std, standard_normal(std.sizes(), std.options(), generator)), mean);
  }
  static GradList backward(Ctx&, const Tensor& grad) { return {zeros_like(grad)}; }
};

// PyTorch's checks: the fast path (no replacement, or one sample) looks at the
// whole tensor at once, the sampling loop with replacement row by row.
void check_multinomial_weights(const double* w, int64_t rows, int64_t categories, bool fast_path) {
  if (fast_path) {
    for (int64_t i = 0; i < rows * categories; ++i)
      GD_CHECK(w[i] >= 0 && w[i] < std::numeric_limits<double>::infinity(),
               "probability tensor contains either `inf`, `nan` or element < 0");
  }
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t k = 0; k < categories; ++k) {
      const double v = w[r * categories + k];
      if (!fast_path) {
        GD_CHECK(v >= 0, "invalid multinomial distribution (encountering probability entry < 0)");
        GD_CHECK(std::isfinite(v), "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
      }
      sum += v;
    }
    GD_CHECK(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
}

}  // namespace

Tensor bernoulli(const Tensor& probabilities, Generator& generator) {
  return apply<Bernoulli>(probabilities, generator);
}
Tensor bernoulli(const Tensor& probabilities) { return bernoulli(probabilities, default_generator()); }

Tensor bernoulli(const Tensor& self, double p, Generator& generator) {
  check_bernoulli_p(p);
  Tensor out = empty(self.sizes(), self.options());
  copy_data(out, self.device().is_cuda()
                     ? bernoulli_samples_on_device(self.sizes(), self.device(), generator, Tensor(), p)
                     : bernoulli_samples(self.sizes(), generator, [p](int64_t) { return p; }));
  return out;
}
Tensor bernoulli(const Tensor& self, double p) { return bernoulli(self, p, default_generator()); }

Tensor& bernoulli_(Tensor& self, double p, Generator& generator) {
  random_inplace(self, "bernoulli_", [&] {
    check_bernoulli_p(p);
    copy_data(self, self.device().is_cuda()
                        ? bernoulli_samples_on_device(self.sizes(), self.device(), generator, Tensor(), p)
                        : bernoulli_samples(self.sizes(), generator, [p](int64_t) { return p; }));
  });
  return self;
}
Tensor& bernoulli_(Tensor& self, double p) { return bernoulli_(self, p, default_generator()); }

Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator& generator) {
  random_inplace(self, "bernoulli_", [&] {
    Tensor p64 = checked_probabilities(p, self.sizes());
    if (self.device().is_cuda()) {
      copy_data(self, bernoulli_samples_on_device(self.sizes(), self.device(), generator, p64.to(self.device()), 0));
      return;
    }
    const double* v = p64.cpu_data_ptr<double>();
    copy_data(self, bernoulli_samples(self.sizes(), generator, [v](int64_t i) { return v[i]; }));
  });
  return self;
}
Tensor& bernoulli_(Tensor& self, const Tensor& p) { return bernoulli_(self, p, default_generator()); }

Tensor multinomial(const Tensor& probabilities, int64_t num_samples, bool replacement, Generator& generator) {
  const Tensor& self = probabilities;
  GD_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  GD_CHECK(self.is_floating_point(), fmt::format("multinomial only supports floating-point dtypes for input, got: {}",
                                                 c10_type_name(self.dtype())));
  GD_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t categories = self.size(-1);
  GD_CHECK(replacement || num_samples <= categories,
           "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  GD_CHECK(categories <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
  const int64_t rows = self.dim() == 1 ? 1 : self.size(0);
  // Sampled on the host (Note [Sampling layout]), then copied to self's device.
  Tensor result = self.dim() == 1 ? empty({num_samples}, kInt64) : empty({rows, num_samples}, kInt64);
  auto on_device = [&](const Tensor& samples) { return samples.to(self.device()); };
  if (result.numel() == 0) return on_device(result);

  const Tensor weights = self.to(kFloat64).contiguous().cpu();
  const double* w = weights.cpu_data_ptr<double>();
  check_multinomial_weights(w, rows, categories, !replacement || num_samples == 1);
  int64_t* out = result.cpu_data_ptr<int64_t>();
  if (replacement) {
    const std::vector<double> u = uniform_draws(rows * num_samples, generator);
    std::vector<double> cumulative(static_cast<size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = w + r * categories;
      double sum = 0;
      int64_t last_positive = 0;
      for (int64_t k = 0; k < categories; ++k) {
        sum += row[k];
        cumulative[static_cast<size_t>(k)] = sum;
        if (row[k] > 0) last_positive = k;
      }
      for (int64_t s = 0; s < num_samples; ++s) {
        const double target = u[static_cast<size_t>(r * num_samples + s)] * sum;
        const int64_t k = std::upper_bound(cumulative.begin(), cumulative.end(), target) - cumulative.begin();
        // u * sum can round up to sum itself; the last category that can be drawn is meant then.
        out[r * num_samples + s] = std::min(k, last_positive);
      }
    }
  } else {
    const std::vector<double> u = uniform_draws(rows * categories, generator);
    std::vector<double> key(static_cast<size_t>(categories));
    std::vector<int64_t> order(static_cast<size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < categories; ++k) {
        const double weight = w[r * categories + k];
        const double exponential = -std::log1p(-u[static_cast<size_t>(r * categories + k)]);
        key[static_cast<size_t>(k)] = weight > 0 ? weight / exponential : -1.0;
        order[static_cast<size_t>(k)] = k;
      }
      std::partial_sort(order.begin(), order.begin() + num_samples, order.end(), [&](int64_t a, int64_t b) {
        const double ka = key[static_cast<size_t>(a)], kb = key[static_cast<size_t>(b)];
        return ka > kb || (ka == kb && a < b);
      });
      std::copy(order.begin(), order.begin() + num_samples, out + r * num_samples);
    }
  }
  return on_device(result);
}
Tensor multinomial(const Tensor& probabilities, int64_t num_samples, bool replacement) {
  return multinomial(probabilities, num_samples, replacement, default_generator());
}

Tensor normal(const Tensor& mean, const Tensor& std, Generator& generator) {
  return apply<NormalTensorTensor>(mean, std, generator);
}
Tensor normal(const Tensor& mean, const Tensor& std) { return normal(mean, std, default_generator()); }
Tensor normal(const Tensor& mean, double std, Generator& generator) {
  return apply<NormalTensorScalar>(mean, std, generator);
}
Tensor normal(const Tensor& mean, double std) { return normal(mean, std, default_generator()); }
Tensor normal(double mean, const Tensor& std, Generator& generator) {
  return apply<NormalScalarTensor>(mean, std, generator);
}
Tensor normal(double mean, const Tensor& std) { return normal(mean, std, default_generator()); }

Tensor& Tensor::bernoulli_(double p) { return gradiens::bernoulli_(*this, p); }

namespace {
// One past the largest integer random_ draws for a dtype when no `to` is given:
// every integer up to 2^digits for floating dtypes (all exactly representable),
// the dtype's maximum for integer ones, as PyTorch.
int64_t random_end(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float32: return (int64_t{1} << std::numeric_limits<float>::digits) + 1;
    case ScalarType::Float64: return (int64_t{1} << std::numeric_limits<double>::digits) + 1;
    case ScalarType::Float16: return (int64_t{1} << 11) + 1;
    case ScalarType::BFloat16: return (int64_t{1} << 8) + 1;
    case ScalarType::UInt8: return 256;
    case ScalarType::Int8: return 128;
    case ScalarType::Int16: return 32768;
    case ScalarType::Int32: return int64_t{std::numeric_limits<int32_t>::max()} + 1;
    case ScalarType::Bool: return 2;
    case ScalarType::Int64: break;
  }
  return std::numeric_limits<int64_t>::max();
}
}  // namespace

Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to) {
  random_inplace(*this, "random_", [&] {
    const int64_t end = to ? *to : random_end(dtype());
    copy_data(*this, randint(from, end, sizes(), TensorOptions().dtype(dtype()).device(device())));
  });
  return *this;
}
Tensor& Tensor::random_(int64_t to) { return random_(0, to); }
Tensor& Tensor::random_() { return random_(0, std::nullopt); }

}  // namespace gradiens
