// Generator: the state of one Philox4x32-10 random stream (seed and offset), the
// process-wide default generator, manual_seed, and the random factories.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/tensor.h"

namespace gradiens {

// Everything needed to resume a stream: a generator set to this state produces
// exactly the numbers the saved one would have produced next.
struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;  // Philox blocks already consumed on this seed
  friend bool operator==(const GeneratorState&, const GeneratorState&) = default;
};

// A counter-based random stream (see Note [Philox stream layout] in
// kernels/cpu/random.h). Like libtorch's at::Generator it is a handle: copies
// share one stream, so a copy taken by a sampler draws from the same sequence;
// clone() gives an independent stream with the same state. Every method is
// thread-safe: a draw reserves its range of counters under the lock and fills
// outside it, so concurrent draws never overlap.
class Generator {
 public:
  // PyTorch's default seed (default_rng_seed_val), so an unseeded program is
  // still reproducible run to run.
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;

  Generator();
  explicit Generator(uint64_t seed);

  // Restarts the stream at the beginning of `seed`.
  void manual_seed(uint64_t seed);
  void set_current_seed(uint64_t seed) { manual_seed(seed); }
  // Seeds from a nondeterministic source and returns the seed used.
  uint64_t seed();
  uint64_t current_seed() const;
  uint64_t offset() const;
  void set_offset(uint64_t offset);

  GeneratorState get_state() const;
  void set_state(const GeneratorState& state);

  Generator clone() const;

  // Reserves the next `blocks` Philox blocks and returns the state a fill must
  // start from; the generator moves past them. For ops that draw by themselves.
  GeneratorState reserve(uint64_t blocks);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The generator every random op uses when none is given.
Generator& default_generator();
// Seeds the default generator (and resets its offset), as torch::manual_seed.
void manual_seed(uint64_t seed);

// Integers uniform on [low, high); int64 unless options give another dtype.
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& options = {});
Tensor randint(int64_t high, IntArrayRef sizes, Generator& generator, const TensorOptions& options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator& generator,
               const TensorOptions& options = {});
// A random permutation of 0 .. n-1; int64 unless options give another dtype.
Tensor randperm(int64_t n, const TensorOptions& options = {});
Tensor randperm(int64_t n, Generator& generator, const TensorOptions& options = {});
// Normal(mean, std^2) samples of the given shape.
Tensor normal(double mean, double std, IntArrayRef sizes, const TensorOptions& options = {});
Tensor normal(double mean, double std, IntArrayRef sizes, Generator& generator, const TensorOptions& options = {});

// The in-place fills with an explicit generator (Tensor::uniform_ and
// Tensor::normal_ use the default one).
const Tensor& uniform_(const Tensor& self, double from, double to, Generator& generator);
const Tensor& normal_(const Tensor& self, double mean, double std, Generator& generator);

// ---- sampling with tensor parameters ----
// Each draws one 64-bit Philox word per sample in a fixed order (Note
// [Sampling layout] in engine/ops/random.cpp), so a seed gives the same numbers
// for any thread count. As in PyTorch, bernoulli(probabilities) and the tensor
// forms of normal are differentiable with a zero gradient (the samples are not
// reparameterized); bernoulli_(self, p), bernoulli(self, p) and multinomial are
// not differentiable.

// 0/1 samples, 1 with probability probabilities[i] (each in [0, 1]); the
// probabilities' shape and floating dtype.
Tensor bernoulli(const Tensor& probabilities);
Tensor bernoulli(const Tensor& probabilities, Generator& generator);
// 0/1 samples shaped and typed like self (any dtype), each 1 with probability p.
Tensor bernoulli(const Tensor& self, double p);
Tensor bernoulli(const Tensor& self, double p, Generator& generator);
// Fills self (any dtype) with 0/1 samples, 1 with probability p, or with
// probability p[i] for p a floating tensor broadcastable to self. The in-place
// rules of uniform_.
Tensor& bernoulli_(Tensor& self, double p = 0.5);
Tensor& bernoulli_(Tensor& self, double p, Generator& generator);
Tensor& bernoulli_(Tensor& self, const Tensor& p);
Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator& generator);

// Indices (int64) of num_samples categories drawn from each row of the
// unnormalized, non-negative weights `probabilities` (1-D: one distribution,
// result [num_samples]; 2-D: one per row, result [rows, num_samples]). Without
// replacement a row yields distinct indices, in the order drawn.
Tensor multinomial(const Tensor& probabilities, int64_t num_samples, bool replacement = false);
Tensor multinomial(const Tensor& probabilities, int64_t num_samples, bool replacement, Generator& generator);

// Normal(mean, std^2) samples with tensor mean and/or std, broadcast against
// each other; the dtype of the tensor mean (else of std); std >= 0.
Tensor normal(const Tensor& mean, const Tensor& std);
Tensor normal(const Tensor& mean, const Tensor& std, Generator& generator);
Tensor normal(const Tensor& mean, double std = 1);
Tensor normal(const Tensor& mean, double std, Generator& generator);
Tensor normal(double mean, const Tensor& std);
Tensor normal(double mean, const Tensor& std, Generator& generator);

}  // namespace gradiens
