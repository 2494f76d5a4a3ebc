// PackedSequence and the pad/pack helpers (nn/utils/rnn.h), following
// torch/nn/utils/rnn.py and ATen's PackedSequence.cpp, with their error texts.
//
// Note [One gather per pack]: every function here moves rows with a single
// index_select over a flat (rows x *) view of its input, the row index
// computed once on the host, instead of one slice and copy per time step.
// index_select's backward is index_add, so the gradient is one scatter too,
// and every function is differentiable (to any order) through that op alone.
// Padding comes from one extra row holding padding_value, appended with cat
// and pointed at by every padded slot.
#include "nn/utils/rnn.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "engine/dims.h"
#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::nn::utils::rnn {

namespace {

// An int64 CPU vector tensor holding `values`.
Tensor long_tensor(const std::vector<int64_t>& values) {
  Tensor out = empty({static_cast<int64_t>(values.size())}, TensorOptions().dtype(kInt64));
  std::copy(values.begin(), values.end(), out.cpu_data_ptr<int64_t>());
  return out;
}

std::vector<int64_t> long_values(const Tensor& t) {
  Tensor c = t.to(kInt64).cpu().contiguous();
  const int64_t* p = c.cpu_data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// ATen's checkLongTensor, whose message names `lengths` for batch_sizes too.
void check_long_vector(const Tensor& t) {
  if (t.dim() == 1 && t.is_cpu() && t.dtype() == kInt64) return;
  std::string_view type = legacy_tensor_type_name(t.dtype());  // "LongTensor": PyTorch prints "Long"
  type.remove_suffix(std::string_view("Tensor").size());
  throw Error(fmt::format("'lengths' argument should be a 1D CPU int64 tensor, but got {}D {} {} tensor", t.dim(),
                          t.device().str(), type));
}

// The lengths as torch.as_tensor(lengths, dtype=torch.int64) sees them.
std::vector<int64_t> lengths_of(const Tensor& lengths) {
  GD_CHECK(lengths.defined(), "pack_padded_sequence: lengths is an undefined tensor");
  Tensor as_long = lengths.to(kInt64);
  check_long_vector(as_long);
  return long_values(as_long);
}

// The sizes of one row of `t` (everything after its first `leading` dims).
DimVector trailing_sizes(const Tensor& t, int64_t leading) {
  IntArrayRef sizes = t.sizes();
  return DimVector(sizes.begin() + leading, sizes.end());
}

// {a, b} followed by `trailing`.
DimVector with_leading(int64_t a, int64_t b, IntArrayRef trailing) {
  DimVector out{a, b};
  for (int64_t s : trailing) out.push_back(s);
  return out;
}

// `rows` (N x *) with one more row of padding_value at index N.
Tensor with_padding_row(const Tensor& rows, double padding_value) {
  DimVector one_row{1};
  for (int64_t s : trailing_sizes(rows, 1)) one_row.push_back(s);
  return cat({rows, full(one_row, padding_value, rows.options())}, 0);
}

// What pad_packed_sequence and unpack_sequence need from a PackedSequence,
// checked so that a hand-made one cannot index out of bounds.
struct PackedLayout {
  std::vector<int64_t> batch_sizes;
  std::vector<int64_t> offsets;         // first row of each step in data
  std::vector<int64_t> sorted_lengths;  // length of the j-th longest sequence
  std::vector<int64_t> batch_order;     // sorted position of each original batch element
  int64_t batch = 0;
  int64_t rows = 0;
};

PackedLayout layout_of(const PackedSequence& sequence, const char* op) {
  GD_CHECK(sequence.defined(), fmt::format("{}: the PackedSequence holds no data", op));
  GD_CHECK(sequence.batch_sizes().defined(), fmt::format("{}: batch_sizes is an undefined tensor", op));
  check_long_vector(sequence.batch_sizes());
  const Tensor& data = sequence.data();
  GD_CHECK(data.dim() >= 1, fmt::format("{}: the packed data must have at least one dimension", op));
  PackedLayout l;
  l.batch_sizes = long_values(sequence.batch_sizes());
  GD_CHECK(!l.batch_sizes.empty(), fmt::format("{}: batch_sizes is empty", op));
  l.batch = l.batch_sizes[0];
  int64_t previous = l.batch;
  for (int64_t size : l.batch_sizes) {
    GD_CHECK(size > 0 && size <= previous,
             fmt::format("{}: batch_sizes must be positive and non-increasing, but got {}", op,
                         shape_to_string(l.batch_sizes)));
    l.offsets.push_back(l.rows);
    l.rows += size;
    previous = size;
  }
  GD_CHECK(l.rows == data.size(0),
           fmt::format("{}: batch_sizes add up to {} rows but the packed data has {}", op, l.rows, data.size(0)));
  l.sorted_lengths.assign(static_cast<size_t>(l.batch), 0);
  for (int64_t size : l.batch_sizes)
    for (int64_t j = 0; j < size; ++j) ++l.sorted_lengths[static_cast<size_t>(j)];
  l.batch_order.resize(static_cast<size_t>(l.batch));
  std::iota(l.batch_order.begin(), l.batch_order.end(), int64_t{0});
  if (sequence.unsorted_indices().defined()) {
    std::vector<int64_t> order = long_values(sequence.unsorted_indices());
    std::vector<bool> seen(static_cast<size_t>(l.batch), false);
    bool permutation = static_cast<int64_t>(order.size()) == l.batch;
    for (size_t b = 0; permutation && b < order.size(); ++b) {
      permutation = order[b] >= 0 && order[b] < l.batch && !seen[static_cast<size_t>(order[b])];
      if (permutation) seen[static_cast<size_t>(order[b])] = true;
    }
    GD_CHECK(permutation, fmt::format("{}: unsorted_indices must be a permutation of 0..{}, but got {}", op,
                                      l.batch - 1, shape_to_string(order)));
    l.batch_order = std::move(order);
  }
  return l;
}

// pad_sequence's checks, and the sequences converted to the first one's dtype.
std::vector<Tensor> checked_sequences(const std::vector<Tensor>& sequences) {
  GD_CHECK(!sequences.empty(), "received an empty list of sequences");
  std::vector<Tensor> out;
  out.reserve(sequences.size());
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& seq = sequences[i];
    GD_CHECK(seq.defined(), fmt::format("pad_sequence: sequence {} is an undefined tensor", i));
    GD_CHECK(seq.dim() >= 1, "Dimension specified as 0 but tensor has no dimensions");
    if (i == 0) {
      out.push_back(seq);
      continue;
    }
    const Tensor& first = out[0];
    GD_CHECK(seq.device() == first.device(),
             fmt::format("pad_sequence: sequence {} is on {} but sequence 0 is on {}", i, seq.device().str(),
                         first.device().str()));
    bool same = seq.dim() == first.dim();
    for (int64_t d = 1; same && d < seq.dim(); ++d) {
      if (seq.size(d) == first.size(d)) continue;
      // The text PyTorch's copy into the padded slot gives.
      GD_CHECK(seq.size(d) == 1, fmt::format("The size of tensor a ({}) must match the size of tensor b ({}) at "
                                             "non-singleton dimension {}",
                                             first.size(d), seq.size(d), d));
      same = false;
    }
    GD_CHECK(same, fmt::format("pad_sequence: sequence {} has trailing sizes {} but sequence 0 has {}", i,
                               shape_to_string(trailing_sizes(seq, 1)), shape_to_string(trailing_sizes(first, 1))));
    out.push_back(seq.to(first.dtype()));
  }
  return out;
}

}  // namespace

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  GD_CHECK(!batch_sizes_.defined() || batch_sizes_.is_cpu(),
           "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. They "
           "should be instantiated by functions like pack_sequence and pack_padded_sequences in nn.utils.rnn. "
           "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence");
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
}

PackedSequence PackedSequence::to(const TensorOptions& options) const {
  Tensor data = data_.to(options);
  if (data.is_same(data_)) return *this;
  auto follow = [&](const Tensor& indices) { return indices.defined() ? indices.to(data.device()) : indices; };
  return PackedSequence(data, batch_sizes_, follow(sorted_indices_), follow(unsorted_indices_));
}
PackedSequence PackedSequence::to(ScalarType dtype) const { return to(TensorOptions().dtype(dtype)); }
PackedSequence PackedSequence::to(Device device) const { return to(TensorOptions().device(device)); }

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return permutation;
  return zeros_like(permutation).scatter(0, permutation, arange(permutation.numel(), permutation.options()));
}

PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths, bool batch_first,
                                    bool enforce_sorted) {
  GD_CHECK(input.defined(), "pack_padded_sequence: input is an undefined tensor");
  const int64_t batch_dim = batch_first ? 0 : 1;
  const int64_t steps = input.size(1 - batch_dim);
  const int64_t batch = input.size(batch_dim);
  GD_CHECK(input.numel() > 0, "Cannot pack empty tensors.");
  // PyTorch checks the count after sorting, so with enforce_sorted=false it
  // silently drops batch elements past len(lengths); here it is always an error.
  GD_CHECK(static_cast<int64_t>(lengths.size()) == batch,
           fmt::format("Expected `len(lengths)` to be equal to batch_size, but got {} (batch_size={})", lengths.size(),
                       batch));

  std::vector<int64_t> order(static_cast<size_t>(batch));  // order[j]: batch element of sorted position j
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!enforce_sorted)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return lengths[static_cast<size_t>(a)] > lengths[static_cast<size_t>(b)];
    });
  auto length = [&](int64_t j) { return lengths[static_cast<size_t>(order[static_cast<size_t>(j)])]; };
  GD_CHECK(length(batch - 1) > 0,
           "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0");
  for (int64_t j = 0; j + 1 < batch; ++j)
    GD_CHECK(length(j) >= length(j + 1),
             "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
             "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
             "do not need ONNX exportability.");
  // PyTorch slices past the end here and returns wrong batch_sizes without a word.
  GD_CHECK(length(0) <= steps, fmt::format("pack_padded_sequence: a sequence of length {} does not fit in the input's "
                                           "{} time steps",
                                           length(0), steps));

  std::vector<int64_t> batch_sizes, rows;
  int64_t running = batch;
  for (int64_t t = 0; t < length(0); ++t) {
    while (length(running - 1) <= t) --running;
    batch_sizes.push_back(running);
    for (int64_t j = 0; j < running; ++j) {
      const int64_t b = order[static_cast<size_t>(j)];
      rows.push_back(batch_first ? b * steps + t : t * batch + b);
    }
  }
  Tensor data = input.flatten(0, 1).index_select(0, long_tensor(rows).to(input.device()));
  if (enforce_sorted) return PackedSequence(data, long_tensor(batch_sizes));
  std::vector<int64_t> inverse(order.size());
  for (size_t j = 0; j < order.size(); ++j) inverse[static_cast<size_t>(order[j])] = static_cast<int64_t>(j);
  return PackedSequence(data, long_tensor(batch_sizes), long_tensor(order).to(input.device()),
                        long_tensor(inverse).to(input.device()));
}

PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first,
                                    bool enforce_sorted) {
  return pack_padded_sequence(input, lengths_of(lengths), batch_first, enforce_sorted);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  const PackedLayout l = layout_of(sequence, "pad_packed_sequence");
  const int64_t max_length = static_cast<int64_t>(l.batch_sizes.size());
  int64_t steps = max_length;
  if (total_length) {
    GD_CHECK(*total_length >= max_length,
             fmt::format("Expected total_length to be at least the length of the longest sequence in input, but got "
                         "total_length={} and max sequence length being {}",
                         *total_length, max_length));
    steps = *total_length;
  }
  const bool padded_anywhere = steps > max_length || l.batch_sizes.back() < l.batch;
  const int64_t padding_row = l.rows;
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(steps * l.batch));
  auto row = [&](int64_t t, int64_t b) {
    const int64_t j = l.batch_order[static_cast<size_t>(b)];
    return t < max_length && j < l.batch_sizes[static_cast<size_t>(t)] ? l.offsets[static_cast<size_t>(t)] + j
                                                                         : padding_row;
  };
  if (batch_first) {
    for (int64_t b = 0; b < l.batch; ++b)
      for (int64_t t = 0; t < steps; ++t) rows.push_back(row(t, b));
  } else {
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t b = 0; b < l.batch; ++b) rows.push_back(row(t, b));
  }
  const Tensor& data = sequence.data();
  Tensor source = padded_anywhere ? with_padding_row(data, padding_value) : data;
  Tensor padded = source.index_select(0, long_tensor(rows).to(data.device()))
                      .view(with_leading(batch_first ? l.batch : steps, batch_first ? steps : l.batch,
                                         trailing_sizes(data, 1)));
  std::vector<int64_t> lengths;
  for (int64_t j : l.batch_order) lengths.push_back(l.sorted_lengths[static_cast<size_t>(j)]);
  return {padded, long_tensor(lengths)};
}

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value,
                    std::string_view padding_side) {
  GD_CHECK(!sequences.empty(), "received an empty list of sequences");
  GD_CHECK(padding_side == "left" || padding_side == "right",
           fmt::format("Expected padding_side to be one of left or right, but got {}.", padding_side));
  std::vector<Tensor> pieces = checked_sequences(sequences);
  const DimVector trailing = trailing_sizes(pieces[0], 1);
  const int64_t batch = static_cast<int64_t>(pieces.size());
  std::vector<int64_t> starts, lengths;
  int64_t rows = 0, steps = 0;
  for (const Tensor& seq : pieces) {
    starts.push_back(rows);
    lengths.push_back(seq.size(0));
    rows += seq.size(0);
    steps = std::max(steps, seq.size(0));
  }
  const int64_t padding_row = rows;
  bool padded_anywhere = false;
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(batch * steps));
  auto row = [&](int64_t t, int64_t b) {
    const int64_t length = lengths[static_cast<size_t>(b)];
    const int64_t step = padding_side == "left" ? t - (steps - length) : t;
    if (step >= 0 && step < length) return starts[static_cast<size_t>(b)] + step;
    padded_anywhere = true;
    return padding_row;
  };
  if (batch_first) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < steps; ++t) index.push_back(row(t, b));
  } else {
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t b = 0; b < batch; ++b) index.push_back(row(t, b));
  }
  const DimVector out_sizes = with_leading(batch_first ? batch : steps, batch_first ? steps : batch, trailing);
  if (steps == 0) return empty(out_sizes, pieces[0].options());
  Tensor source = pieces.size() == 1 ? pieces[0] : cat(pieces, 0);
  if (padded_anywhere) source = with_padding_row(source, padding_value);
  return source.index_select(0, long_tensor(index).to(source.device())).view(out_sizes);
}

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  Tensor padded = pad_sequence(sequences);
  std::vector<int64_t> lengths;
  for (const Tensor& seq : sequences) lengths.push_back(seq.size(0));
  return pack_padded_sequence(padded, lengths, false, enforce_sorted);
}

std::vector<Tensor> unpack_sequence(const PackedSequence& packed_sequences) {
  const PackedLayout l = layout_of(packed_sequences, "unpack_sequence");
  std::vector<int64_t> rows, lengths;
  rows.reserve(static_cast<size_t>(l.rows));
  for (int64_t j : l.batch_order) {
    const int64_t length = l.sorted_lengths[static_cast<size_t>(j)];
    for (int64_t t = 0; t < length; ++t) rows.push_back(l.offsets[static_cast<size_t>(t)] + j);
    lengths.push_back(length);
  }
  const Tensor& data = packed_sequences.data();
  return data.index_select(0, long_tensor(rows).to(data.device())).split(lengths, 0);
}

std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const std::vector<int64_t>& lengths,
                                   bool batch_first) {
  GD_CHECK(padded_sequences.defined() && padded_sequences.dim() >= 2,
           "unpad_sequence: expected a padded batch with at least two dimensions");
  const int64_t batch_dim = batch_first ? 0 : 1;
  const int64_t batch = padded_sequences.size(batch_dim), steps = padded_sequences.size(1 - batch_dim);
  GD_CHECK(static_cast<int64_t>(lengths.size()) == batch,
           fmt::format("unpad_sequence: got {} lengths for a batch of {}", lengths.size(), batch));
  std::vector<Tensor> out;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t length = lengths[static_cast<size_t>(b)];
    GD_CHECK(length >= 0 && length <= steps,
             fmt::format("unpad_sequence: length {} of sequence {} is outside [0, {}]", length, b, steps));
    // A copy, as PyTorch's masked indexing gives, not a view into the batch.
    out.push_back(padded_sequences.select(batch_dim, b).narrow(0, 0, length).clone(MemoryFormat::Contiguous));
  }
  return out;
}

std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const Tensor& lengths, bool batch_first) {
  GD_CHECK(lengths.defined(), "unpad_sequence: lengths is an undefined tensor");
  return unpad_sequence(padded_sequences, long_values(lengths), batch_first);
}

}  // namespace gradiens::nn::utils::rnn
