// gradiens::nn::utils::rnn: PackedSequence and the pad/pack helpers of
// torch.nn.utils.rnn (pad_sequence, pack_padded_sequence, pad_packed_sequence, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::nn::utils::rnn {

// A batch of variable-length sequences, time-major and without padding:
// data() holds step 0 of every sequence still running, then step 1, ...
// (sum(batch_sizes) x *), sequences sorted by decreasing length within a step.
// batch_sizes() is an int64 CPU tensor: how many sequences run at each step.
// sorted_indices() (int64, on data's device) maps the sorted order back to the
// batch as given; unsorted_indices() is its inverse. Both are undefined
// tensors when the batch was already sorted (enforce_sorted=true).
class PackedSequence {
 public:
  PackedSequence() = default;
  // unsorted_indices, when undefined, is computed as the inverse of
  // sorted_indices. batch_sizes must be on the CPU.
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  bool defined() const { return data_.defined(); }

  // Converts data (the indices follow data's device; batch_sizes stays on the
  // CPU). Returns *this when data already has that dtype and device.
  PackedSequence to(ScalarType dtype) const;
  PackedSequence to(Device device) const;
  PackedSequence to(const TensorOptions& options) const;
  PackedSequence to(DeviceType type) const { return to(Device(type)); }  // to(torch::kCPU), not ambiguous
  PackedSequence cpu() const { return to(Device(kCPU)); }
  PackedSequence cuda() const { return to(Device(kCUDA)); }
  bool is_cuda() const { return data_.is_cuda(); }

 private:
  Tensor data_;
  Tensor batch_sizes_;
  Tensor sorted_indices_;
  Tensor unsorted_indices_;
};

// The inverse of a permutation (an int64 vector); undefined in, undefined out.
Tensor invert_permutation(const Tensor& permutation);

// Packs a padded batch `input` (T x B x *, or B x T x * with batch_first) whose
// sequence b has lengths[b] valid steps. With enforce_sorted the lengths must
// be in decreasing order; otherwise the batch is sorted here and the
// permutation kept in the result. Differentiable with respect to input.
PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths,
                                    bool batch_first = false, bool enforce_sorted = true);

// The inverse of pack_padded_sequence: returns (padded, lengths), padded being
// T x B x * (B x T x * with batch_first) in the batch's original order, with
// T = total_length when given (it must be at least the longest length) and
// padding_value in the steps past each length. lengths is an int64 CPU tensor.
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

// Stacks sequences (each L_i x *) into one T x B x * tensor (B x T x * with
// batch_first), T the longest L_i, filling with padding_value after each
// sequence ("right") or before it ("left", as PyTorch 2.x).
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0,
                    std::string_view padding_side = "right");

// pad_sequence then pack_padded_sequence.
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

// The sequences of a PackedSequence, each L_i x *, in the batch's original order.
std::vector<Tensor> unpack_sequence(const PackedSequence& packed_sequences);

// The first lengths[b] steps of each sequence of a padded batch.
std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const Tensor& lengths, bool batch_first = false);
std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const std::vector<int64_t>& lengths,
                                   bool batch_first = false);

}  // namespace gradiens::nn::utils::rnn
