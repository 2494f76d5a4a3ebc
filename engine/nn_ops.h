// Neural-network ops on tensors (layer_norm, batch_norm, dropout, embedding)
// and the determinism switch (use_deterministic_algorithms).
#pragma once

#include <string_view>

#include "engine/tensor.h"

namespace gradiens {

// ---- normalization (engine/ops/normalization.cpp) ----
// Both are composites of mean, subtraction, square, rsqrt, multiply and add,
// so their backward is those ops' backward: derivatives of any order.

// Normalizes over the trailing dims named by normalized_shape (which must equal
// input's last sizes), with the biased variance as in PyTorch, then applies the
// elementwise affine weight and bias (each shaped normalized_shape) when given.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);

// input is (N, C), (N, C, L), (N, C, H, W) or any (N, C, ...); running_mean,
// running_var, weight and bias hold C elements each, and any may be undefined
// except the running statistics in evaluation mode.
// training: normalizes with the batch's mean and biased variance over every dim
// but C, and, when the running statistics are defined, updates them in place
// without recording (the version counter moves) as PyTorch does:
//   running_mean = (1 - momentum) * running_mean + momentum * mean
//   running_var  = (1 - momentum) * running_var  + momentum * var * n / (n - 1)
// with n = numel / C, the unbiased variance.
// evaluation: normalizes with the running statistics. They are used as ordinary
// operands, so a running statistic that requires grad gets its (exact)
// gradient where PyTorch would refuse.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum = 0.1, double eps = 1e-5);

// ---- dropout and embedding (engine/ops/dropout_embedding.cpp) ----

// In training, zeroes each element with probability p (a Bernoulli mask drawn
// from the default generator, so manual_seed fixes it) and scales the kept
// ones by 1 / (1 - p); p = 1 gives zeros. Out of training, or with p = 0, it
// returns input itself. p outside [0, 1] is an error. The mask is a constant
// factor: derivatives of any order.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);

// Rows of the 2-D weight (num_embeddings, embedding_dim) picked by the integer
// (int64 or int32) indices: the result is indices.sizes() + [embedding_dim].
// An index outside [0, num_embeddings) is an error. padding_idx in
// [0, num_embeddings) names a row whose lookups get no gradient (its value is
// still returned); -1 means none, as in at::embedding (nn::Embedding wraps a
// negative padding_idx before calling). Linear in weight, through index_select:
// derivatives of any order (those past the first are zero).
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);

// ---- determinism (engine/determinism.cpp) ----
// Note [Deterministic algorithms]: with the flag on, an op that has no
// deterministic implementation on its device calls alert_not_deterministic
// before running, which throws PyTorch's message instead of giving results
// that vary run to run. Every CPU op gives the same result on every run (no
// atomics, no order set by thread timing), so nothing calls it yet; the CUDA
// kernels that accumulate with atomicAdd (index_add, scatter_add,
// embedding's backward, ...) will.
void use_deterministic_algorithms(bool mode);
bool are_deterministic_algorithms_enabled();
// Throws gradiens::Error naming `op` when the flag is on; does nothing otherwise.
void alert_not_deterministic(std::string_view op);

}  // namespace gradiens
