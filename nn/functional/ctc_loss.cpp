// ctc_loss: the alpha recursion of Graves et al. (2006) over the extended label
// sequence (a blank between every two labels and at both ends), in log space.
// A path that cannot happen holds a large negative number instead of -inf, so
// that logsumexp's backward stays finite; a total at that level is the
// infinite loss of PyTorch.
#include "nn/functional/ctc_loss.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "engine/functions.h"
#include "engine/tensor_data.h"

namespace gradiens::nn::functional {

namespace {

constexpr double kImpossible = -1e30;

std::vector<int64_t> to_vector(const Tensor& t) {
  Tensor values = t.reshape({-1}).cpu().to(kInt64).contiguous();
  const int64_t* p = values.cpu_data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + values.numel());
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs_in, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options) {
  GD_CHECK(is_integral(input_lengths.dtype(), false), "input_lengths must be integral");
  GD_CHECK(is_integral(target_lengths.dtype(), false), "target_lengths must be integral");
  GD_CHECK(log_probs_in.dim() == 2 || log_probs_in.dim() == 3,
           fmt::format("ctc_loss: expected log_probs to be 2-D (unbatched) or 3-D, but got {}-D", log_probs_in.dim()));
  GD_CHECK(log_probs_in.is_floating_point(), "ctc_loss: log_probs must be floating point");
  const bool batched = log_probs_in.dim() == 3;
  const Tensor log_probs = batched ? log_probs_in : log_probs_in.unsqueeze(1);
  const int64_t steps = log_probs.size(0), batch = log_probs.size(1), classes = log_probs.size(2);
  const int64_t blank = options.blank();
  GD_CHECK(blank >= 0 && blank < classes, "blank must be in label range");
  const std::vector<int64_t> in_len = to_vector(input_lengths), tgt_len = to_vector(target_lengths);
  GD_CHECK(static_cast<int64_t>(in_len.size()) == batch && static_cast<int64_t>(tgt_len.size()) == batch,
           fmt::format("ctc_loss: expected {} input_lengths and target_lengths, got {} and {}", batch, in_len.size(),
                       tgt_len.size()));
  const int64_t max_target = tgt_len.empty() ? 0 : *std::max_element(tgt_len.begin(), tgt_len.end());
  for (int64_t b = 0; b < batch; ++b) {
    GD_CHECK(in_len[b] >= 0 && in_len[b] <= steps,
             fmt::format("Expected input_lengths to have value at most {}, but got value {} (while checking "
                         "arguments for ctc_loss_cpu)",
                         steps, in_len[b]));
    GD_CHECK(tgt_len[b] >= 0, fmt::format("ctc_loss: target length {} is negative", tgt_len[b]));
  }
  // Each sequence's labels.
  const std::vector<int64_t> flat_targets = to_vector(targets);
  std::vector<std::vector<int64_t>> labels(batch);
  const bool padded = batched && targets.dim() == 2;
  if (padded) {
    GD_CHECK(targets.size(1) >= max_target,
             fmt::format("Expected tensor to have size at least {} at dimension 1, but got size {} for argument #2 "
                         "'targets' (while checking arguments for ctc_loss_cpu)",
                         max_target, targets.size(1)));
    for (int64_t b = 0; b < batch; ++b) {
      auto row = flat_targets.begin() + b * targets.size(1);
      labels[b].assign(row, row + tgt_len[b]);
    }
  } else {
    const int64_t total = std::accumulate(tgt_len.begin(), tgt_len.end(), int64_t{0});
    GD_CHECK(static_cast<int64_t>(flat_targets.size()) >= total,
             fmt::format("Expected tensor to have size at least {} at dimension 0, but got size {} for argument #2 "
                         "'targets' (while checking arguments for ctc_loss_cpu)",
                         total, flat_targets.size()));
    int64_t offset = 0;
    for (int64_t b = 0; b < batch; ++b) {
      labels[b].assign(flat_targets.begin() + offset, flat_targets.begin() + offset + tgt_len[b]);
      offset += tgt_len[b];
    }
  }
  // The extended sequences [N, S]: blank, l1, blank, l2, ..., blank (padded with blanks).
  const int64_t positions = 2 * max_target + 1;
  std::vector<int64_t> extended(batch * positions, blank), skip(batch * positions, 0), start(batch * positions, 0),
      end_index(batch * 2), end_valid(batch * 2, 0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < tgt_len[b]; ++i) {
      const int64_t label = labels[b][i];
      GD_CHECK(label >= 0 && label < classes, fmt::format("ctc_loss: target {} is outside [0, {})", label, classes));
      extended[b * positions + 2 * i + 1] = label;
    }
    for (int64_t s = 2; s < positions; ++s) {
      const int64_t here = extended[b * positions + s];
      skip[b * positions + s] = here != blank && here != extended[b * positions + s - 2];
    }
    start[b * positions] = 1;
    if (tgt_len[b] > 0) start[b * positions + 1] = 1;
    end_index[2 * b] = 2 * tgt_len[b];
    end_valid[2 * b] = 1;
    end_index[2 * b + 1] = std::max<int64_t>(2 * tgt_len[b] - 1, 0);
    end_valid[2 * b + 1] = tgt_len[b] > 0;
  }
  const TensorOptions index_options = TensorOptions().dtype(kInt64);
  const Device device = log_probs.device();
  auto on_device = [&](const std::vector<int64_t>& values, std::vector<int64_t> shape) {
    return tensor(values, index_options).reshape(shape).to(device);
  };
  const Tensor ext = on_device(extended, {batch, positions});
  const Tensor can_skip = ne(on_device(skip, {batch, positions}), 0);
  const Tensor is_start = ne(on_device(start, {batch, positions}), 0);
  // log p(extended label s at step t) [T, N, S].
  const Tensor emit = log_probs.gather(2, ext.unsqueeze(0).expand({steps, batch, positions}));
  std::vector<int64_t> lengths_column(in_len);
  const Tensor input_length = on_device(lengths_column, {batch, 1});

  Tensor alpha = where(is_start, emit.select(0, 0), kImpossible);
  const Tensor impossible1 = full({batch, 1}, kImpossible, log_probs.options());
  const Tensor impossible2 = full({batch, std::min<int64_t>(2, positions)}, kImpossible, log_probs.options());
  for (int64_t t = 1; t < steps; ++t) {
    std::vector<Tensor> ways{alpha, cat({impossible1, alpha.slice(1, 0, positions - 1)}, 1)};
    if (positions > 2) ways.push_back(where(can_skip, cat({impossible2, alpha.slice(1, 0, positions - 2)}, 1),
                                            kImpossible));
    Tensor next = logsumexp(stack(ways, 0), {0}) + emit.select(0, t);
    alpha = where(lt(input_length, t + 1), alpha, next);
  }
  const Tensor ends = alpha.gather(1, on_device(end_index, {batch, 2}));
  const Tensor likelihood = logsumexp(where(ne(on_device(end_valid, {batch, 2}), 0), ends, kImpossible), {1});
  const Tensor infinite = lt(likelihood, kImpossible / 2);
  Tensor loss = where(infinite, options.zero_infinity() ? 0.0 : std::numeric_limits<double>::infinity(), -likelihood);
  switch (options.reduction()) {
    case Reduction::Mean:
      return (loss / clamp_min(on_device(tgt_len, {batch}).to(loss.dtype()), 1)).mean();
    case Reduction::Sum: return loss.sum();
    default: return batched ? loss : loss.squeeze(0);
  }
}

}  // namespace gradiens::nn::functional
