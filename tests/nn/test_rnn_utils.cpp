// Tests of nn::utils::rnn (PackedSequence, pad/pack/unpack/unpad) against
// PyTorch 1.13 literals, gradcheck of each differentiable path, and every error text.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "nn/utils/rnn.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace rnn = gradiens::nn::utils::rnn;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::shape_value_mismatch;
using gd::testing::tensor_of;
using gd::testing::values_of;

namespace {

using Values = std::vector<double>;
using Shape = std::vector<int64_t>;

Values longs(const Tensor& t) {
  REQUIRE(t.defined());
  CHECK(t.dtype() == gd::kInt64);
  return values_of(t);
}

// Three float64 sequences with two features: lengths 3, 1, 2.
std::vector<Tensor> three_sequences() {
  return {tensor_of({1, 2, 3, 4, 5, 6}, {3, 2}), tensor_of({7, 8}, {1, 2}), tensor_of({9, 10, 11, 12}, {2, 2})};
}

}  // namespace

TEST_CASE("pack_sequence and pack_padded_sequence reproduce the issue's PyTorch results") {
  // PyTorch: pack_sequence([tensor([1,2,3]), tensor([4,5]), tensor([6])])
  rnn::PackedSequence packed = rnn::pack_sequence({gd::tensor({1, 2, 3}), gd::tensor({4, 5}), gd::tensor({6})});
  CHECK(longs(packed.data()) == Values{1, 4, 6, 2, 5, 3});
  CHECK(longs(packed.batch_sizes()) == Values{3, 2, 1});
  CHECK_FALSE(packed.sorted_indices().defined());
  CHECK_FALSE(packed.unsorted_indices().defined());

  // PyTorch: seq = tensor([[1,2,0],[3,0,0],[4,5,6]]);
  // pack_padded_sequence(seq, [2,1,3], batch_first=True, enforce_sorted=False)
  const Tensor seq = gd::tensor({{1, 2, 0}, {3, 0, 0}, {4, 5, 6}});
  for (bool lengths_as_tensor : {false, true}) {
    CAPTURE(lengths_as_tensor);
    rnn::PackedSequence p = lengths_as_tensor ? rnn::pack_padded_sequence(seq, gd::tensor({2, 1, 3}), true, false)
                                              : rnn::pack_padded_sequence(seq, {2, 1, 3}, true, false);
    CHECK(longs(p.data()) == Values{4, 1, 3, 5, 2, 6});
    CHECK(longs(p.batch_sizes()) == Values{3, 2, 1});
    CHECK(longs(p.sorted_indices()) == Values{2, 0, 1});
    CHECK(longs(p.unsorted_indices()) == Values{1, 2, 0});
    CHECK(p.batch_sizes().is_cpu());
    auto [padded, lengths] = rnn::pad_packed_sequence(p, true);
    CHECK(gd::equal(padded, seq));
    CHECK(longs(lengths) == Values{2, 1, 3});
  }
}

TEST_CASE("pack_padded_sequence sorts ties stably and handles features, both layouts") {
  struct Case {
    const char* name;
    Tensor input;
    Shape lengths;
    bool batch_first;
    Shape data_shape;
    Values data, batch_sizes, sorted, unsorted;
  };
  const std::vector<Case> cases = {
      // PyTorch: x = arange(1., 16.).view(5, 3);
      // pack_padded_sequence(x, [2,3,2,3,1], batch_first=True, enforce_sorted=False)
      {"ties, batch_first", gd::arange(1., 16., 1., gd::kFloat64).view({5, 3}), {2, 3, 2, 3, 1}, true, {11},
       {4, 10, 1, 7, 13, 5, 11, 2, 8, 6, 12}, {5, 4, 2}, {1, 3, 0, 2, 4}, {2, 0, 3, 1, 4}},
      // PyTorch: xt = arange(24.).view(3, 4, 2);
      // pack_padded_sequence(xt, tensor([3,1,2,2]), enforce_sorted=False)
      {"features, time-major", gd::arange(0., 24., 1., gd::kFloat64).view({3, 4, 2}), {3, 1, 2, 2}, false, {8, 2},
       {0, 1, 4, 5, 6, 7, 2, 3, 8, 9, 12, 13, 14, 15, 16, 17}, {4, 3, 1}, {0, 2, 3, 1}, {0, 3, 1, 2}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    rnn::PackedSequence p = rnn::pack_padded_sequence(c.input, c.lengths, c.batch_first, false);
    CHECK(shape_value_mismatch(p.data(), c.data, c.data_shape) == "");
    CHECK(longs(p.batch_sizes()) == c.batch_sizes);
    CHECK(longs(p.sorted_indices()) == c.sorted);
    CHECK(longs(p.unsorted_indices()) == c.unsorted);
    // Round trip: padding restores the input where it is valid and zeros past each length.
    auto [padded, lengths] = rnn::pad_packed_sequence(p, c.batch_first);
    CHECK(longs(lengths) == Values(c.lengths.begin(), c.lengths.end()));
    Tensor steps = gd::arange(0, c.input.size(c.batch_first ? 1 : 0), 1, gd::kInt64);
    Tensor valid =
        c.batch_first ? steps.unsqueeze(0) < lengths.unsqueeze(1) : steps.unsqueeze(1) < lengths.unsqueeze(0);
    while (valid.dim() < c.input.dim()) valid = valid.unsqueeze(-1);
    CHECK(gd::equal(padded, c.input.masked_fill(valid.logical_not(), 0)));
  }
}

TEST_CASE("pad_sequence: batch_first, padding_value and padding_side") {
  struct Case {
    bool batch_first;
    const char* side;
    Values values;
  };
  // PyTorch: a, b, c as in three_sequences(); pad_sequence([a,b,c], batch_first, padding_value=-1.).
  // Left padding (PyTorch 2.x padding_side="left"; 1.13 lacks it) from the identity
  // pad_sequence([a.flip(0), b.flip(0), c.flip(0)], batch_first, -1.).flip(time dim).
  const std::vector<Case> cases = {
      {false, "right", {1, 2, 7, 8, 9, 10, 3, 4, -1, -1, 11, 12, 5, 6, -1, -1, -1, -1}},
      {true, "right", {1, 2, 3, 4, 5, 6, 7, 8, -1, -1, -1, -1, 9, 10, 11, 12, -1, -1}},
      {true, "left", {1, 2, 3, 4, 5, 6, -1, -1, -1, -1, 7, 8, -1, -1, 9, 10, 11, 12}},
      {false, "left", {1, 2, -1, -1, -1, -1, 3, 4, -1, -1, 9, 10, 5, 6, 7, 8, 11, 12}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.batch_first);
    CAPTURE(c.side);
    CHECK(shape_value_mismatch(rnn::pad_sequence(three_sequences(), c.batch_first, -1.0, c.side), c.values,
                               {3, 3, 2}) == "");
  }
  // PyTorch: pad_sequence([tensor([1,2]), tensor([3])], padding_value=-5) -> int64 [[1,3],[2,-5]]
  Tensor ints = rnn::pad_sequence({gd::tensor({1, 2}), gd::tensor({3})}, false, -5);
  CHECK(longs(ints) == Values{1, 3, 2, -5});
  // Equal lengths need no padding row; a single sequence is its own batch.
  CHECK(shape_value_mismatch(rnn::pad_sequence({tensor_of({1, 2}), tensor_of({3, 4})}), {1, 3, 2, 4}, {2, 2}) == "");
  CHECK(shape_value_mismatch(rnn::pad_sequence({tensor_of({1, 2})}, true), {1, 2}, {1, 2}) == "");
  // A later sequence of another dtype takes the first one's, as PyTorch's copy does.
  CHECK(rnn::pad_sequence({tensor_of({1, 2}), tensor_of({3}, {}, gd::kFloat32)}).dtype() == gd::kFloat64);
  // Empty sequences are padded entirely; all empty gives zero steps.
  CHECK(shape_value_mismatch(rnn::pad_sequence({tensor_of({}, {0}), tensor_of({5})}, true), {0, 5}, {2, 1}) == "");
  CHECK(rnn::pad_sequence({tensor_of({}, {0, 3})}).sizes().dims() == gd::DimVector{0, 1, 3});
}

TEST_CASE("pad_packed_sequence: padding_value, total_length, both layouts") {
  // PyTorch: pk = pack_sequence([a,b,c], enforce_sorted=False) with a, b, c as in three_sequences()
  rnn::PackedSequence pk = rnn::pack_sequence(three_sequences(), false);
  CHECK(shape_value_mismatch(pk.data(), {1, 2, 9, 10, 7, 8, 3, 4, 11, 12, 5, 6}, {6, 2}) == "");
  CHECK(longs(pk.batch_sizes()) == Values{3, 2, 1});
  CHECK(longs(pk.sorted_indices()) == Values{0, 2, 1});
  CHECK(longs(pk.unsorted_indices()) == Values{0, 2, 1});

  // PyTorch: pad_packed_sequence(pk, batch_first=True, padding_value=7., total_length=5)
  auto [bf, bf_lengths] = rnn::pad_packed_sequence(pk, true, 7.0, 5);
  CHECK(shape_value_mismatch(
            bf, {1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 8, 7, 7, 7, 7, 7, 7, 7, 7, 9, 10, 11, 12, 7, 7, 7, 7, 7, 7},
            {3, 5, 2}) == "");
  CHECK(longs(bf_lengths) == Values{3, 1, 2});
  // PyTorch: pad_packed_sequence(pk, padding_value=7.)
  auto [tm, tm_lengths] = rnn::pad_packed_sequence(pk, false, 7.0);
  CHECK(shape_value_mismatch(tm, {1, 2, 7, 8, 9, 10, 3, 4, 7, 7, 11, 12, 5, 6, 7, 7, 7, 7}, {3, 3, 2}) == "");
  CHECK(longs(tm_lengths) == Values{3, 1, 2});
  // total_length equal to the longest length changes nothing.
  CHECK(gd::equal(std::get<0>(rnn::pad_packed_sequence(pk, false, 7.0, 3)), tm));
}

TEST_CASE("unpack_sequence, unpad_sequence and invert_permutation") {
  // PyTorch: unpack_sequence(pack_sequence([tensor([1,2]), tensor([3,4,5]), tensor([6])], enforce_sorted=False))
  std::vector<Tensor> seqs = {gd::tensor({1, 2}), gd::tensor({3, 4, 5}), gd::tensor({6})};
  std::vector<Tensor> unpacked = rnn::unpack_sequence(rnn::pack_sequence(seqs, false));
  REQUIRE(unpacked.size() == 3);
  for (size_t i = 0; i < seqs.size(); ++i) CHECK(gd::equal(unpacked[i], seqs[i]));

  for (bool batch_first : {false, true}) {
    CAPTURE(batch_first);
    std::vector<Tensor> three = three_sequences();
    Tensor padded = rnn::pad_sequence(three, batch_first, -1.0);
    std::vector<Tensor> unpadded = rnn::unpad_sequence(padded, gd::tensor({3, 1, 2}), batch_first);
    REQUIRE(unpadded.size() == 3);
    for (size_t i = 0; i < three.size(); ++i) CHECK(gd::equal(unpadded[i], three[i]));
    std::vector<Tensor> sorted_unpacked = rnn::unpack_sequence(rnn::pack_sequence({three[0], three[2], three[1]}));
    CHECK(gd::equal(sorted_unpacked[1], three[2]));
  }

  // PyTorch: invert_permutation(tensor([2,0,3,1])) -> [1,3,0,2]
  CHECK(longs(rnn::invert_permutation(gd::tensor({2, 0, 3, 1}))) == Values{1, 3, 0, 2});
  CHECK_FALSE(rnn::invert_permutation(Tensor()).defined());
  // A PackedSequence given only sorted_indices computes the inverse itself.
  rnn::PackedSequence p(tensor_of({1, 2}), gd::tensor({2}), gd::tensor({1, 0}));
  CHECK(longs(p.unsorted_indices()) == Values{1, 0});
}

TEST_CASE("PackedSequence::to converts data only") {
  rnn::PackedSequence p = rnn::pack_padded_sequence(tensor_of({1, 2, 3, 4}, {2, 2}), {1, 2}, true, false);
  rnn::PackedSequence same = p.to(gd::kFloat64);
  CHECK(same.data().is_same(p.data()));
  rnn::PackedSequence f32 = p.to(gd::kFloat32);
  CHECK(f32.data().dtype() == gd::kFloat32);
  CHECK(values_of(f32.data()) == values_of(p.data()));
  CHECK(f32.batch_sizes().is_same(p.batch_sizes()));
  CHECK(f32.sorted_indices().dtype() == gd::kInt64);
  CHECK(longs(f32.unsorted_indices()) == longs(p.unsorted_indices()));
  CHECK(p.to(gd::TensorOptions().dtype(gd::kFloat32)).data().dtype() == gd::kFloat32);
  CHECK(p.cpu().data().is_same(p.data()));
  CHECK_FALSE(p.is_cuda());
}

TEST_CASE("pack and pad pass gradcheck and gradgradcheck (float64)") {
  const Tensor padded = gd::testing::sample({4, 3, 2}, -1, 1, 7).requires_grad_();  // T=4, B=3, F=2
  struct Case {
    const char* name;
    gd::autograd::TensorFunction fn;
    std::vector<Tensor> inputs;
  };
  const std::vector<Case> cases = {
      {"pack_padded_sequence -> data",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{rnn::pack_padded_sequence(in[0], {2, 4, 1}, false, false).data()};
       },
       {padded}},
      {"pack_padded_sequence -> pad_packed_sequence",
       [](const std::vector<Tensor>& in) {
         rnn::PackedSequence p = rnn::pack_padded_sequence(in[0], {2, 4, 1}, false, false);
         return std::vector<Tensor>{std::get<0>(rnn::pad_packed_sequence(p, true, 0.5, 6))};
       },
       {padded}},
      {"pad_sequence, left, batch_first",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{rnn::pad_sequence(in, true, 2.0, "left")}; },
       {gd::testing::sample({3, 2}, -1, 1, 1).requires_grad_(), gd::testing::sample({1, 2}, -1, 1, 2).requires_grad_(),
        gd::testing::sample({2, 2}, -1, 1, 3).requires_grad_()}},
      {"pad_sequence, right, time-major",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{rnn::pad_sequence(in)}; },
       {gd::testing::sample({3}, -1, 1, 4).requires_grad_(), gd::testing::sample({1}, -1, 1, 5).requires_grad_()}},
      {"pack_sequence -> unpack_sequence",
       [](const std::vector<Tensor>& in) { return rnn::unpack_sequence(rnn::pack_sequence(in, false)); },
       {gd::testing::sample({2, 2}, -1, 1, 8).requires_grad_(),
        gd::testing::sample({3, 2}, -1, 1, 9).requires_grad_()}},
      {"unpad_sequence",
       [](const std::vector<Tensor>& in) { return rnn::unpad_sequence(in[0], std::vector<int64_t>{4, 1, 3}); },
       {padded}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(gd::autograd::gradcheck(c.fn, c.inputs));
    CHECK(gd::autograd::gradgradcheck(c.fn, c.inputs));
  }
}

TEST_CASE("pack/pad errors carry PyTorch's messages") {
  const std::string unsorted =
      "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
      "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not "
      "need ONNX exportability.";
  const std::string nonpositive =
      "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0";
  const Tensor seq = gd::tensor({{1, 2, 0}, {3, 0, 0}, {4, 5, 6}});
  rnn::PackedSequence packed = rnn::pack_sequence({gd::tensor({1, 2, 3}), gd::tensor({4, 5}), gd::tensor({6})});
  struct Case {
    const char* name;
    std::function<void()> call;
    std::string message;
  };
  // PyTorch 1.13's texts, from running each call there (ours where PyTorch reads
  // past its buffers or silently truncates instead of failing).
  const std::vector<Case> cases = {
      {"unsorted lengths", [&] { rnn::pack_padded_sequence(seq, {2, 1, 3}, true); }, unsorted},
      {"unsorted negative", [&] { rnn::pack_padded_sequence(seq, {-1, 1, 1}, true); }, unsorted},
      {"zero length", [&] { rnn::pack_padded_sequence(seq, {3, 1, 0}, true); }, nonpositive},
      {"zero length unsorted", [&] { rnn::pack_padded_sequence(seq, {3, 0, 1}, true, false); }, nonpositive},
      {"zero-length sequence", [&] { rnn::pack_sequence({gd::tensor({1, 2}), gd::empty({0}, gd::kInt64)}); },
       nonpositive},
      {"unsorted sequences", [&] { rnn::pack_sequence({gd::tensor({1}), gd::tensor({1, 2})}); }, unsorted},
      {"too few lengths", [&] { rnn::pack_padded_sequence(seq, {3, 1}, true); },
       "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)"},
      {"too few lengths unsorted", [&] { rnn::pack_padded_sequence(seq, {3, 1}, true, false); },
       "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)"},
      {"too many lengths", [&] { rnn::pack_padded_sequence(seq, {3, 2, 1, 1}, true); },
       "Expected `len(lengths)` to be equal to batch_size, but got 4 (batch_size=3)"},
      {"no lengths", [&] { rnn::pack_padded_sequence(seq, std::vector<int64_t>{}, true); },
       "Expected `len(lengths)` to be equal to batch_size, but got 0 (batch_size=3)"},
      {"2-d lengths", [&] { rnn::pack_padded_sequence(seq, gd::tensor({{3, 2, 1}}), true); },
       "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor"},
      {"empty input", [&] { rnn::pack_padded_sequence(gd::zeros({0, 3}), std::vector<int64_t>{}, true); },
       "Cannot pack empty tensors."},
      {"length past the data", [&] { rnn::pack_padded_sequence(seq, {4, 1, 1}, true); },
       "pack_padded_sequence: a sequence of length 4 does not fit in the input's 3 time steps"},
      {"total_length too small", [&] { rnn::pad_packed_sequence(packed, false, 0.0, 2); },
       "Expected total_length to be at least the length of the longest sequence in input, but got total_length=2 "
       "and max sequence length being 3"},
      {"total_length negative", [&] { rnn::pad_packed_sequence(packed, false, 0.0, -1); },
       "Expected total_length to be at least the length of the longest sequence in input, but got total_length=-1 "
       "and max sequence length being 3"},
      {"empty pad_sequence", [] { rnn::pad_sequence({}); }, "received an empty list of sequences"},
      {"empty pack_sequence", [] { rnn::pack_sequence({}); }, "received an empty list of sequences"},
      {"0-dim sequence", [] { rnn::pad_sequence({gd::tensor(1.0)}); },
       "Dimension specified as 0 but tensor has no dimensions"},
      {"feature mismatch", [] { rnn::pad_sequence({gd::zeros({2, 3}), gd::zeros({1, 4})}); },
       "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"},
      {"rank mismatch", [] { rnn::pad_sequence({gd::zeros({2, 3}), gd::zeros({1, 3, 1})}); },
       "pad_sequence: sequence 1 has trailing sizes [3, 1] but sequence 0 has [3]"},
      // PyTorch 2.x's text.
      {"padding_side", [] { rnn::pad_sequence({gd::zeros({2})}, false, 0.0, "middle"); },
       "Expected padding_side to be one of left or right, but got middle."},
      {"batch_sizes not adding up",
       [] { rnn::pad_packed_sequence(rnn::PackedSequence(gd::zeros({3}), gd::tensor({2, 2}))); },
       "pad_packed_sequence: batch_sizes add up to 4 rows but the packed data has 3"},
      {"batch_sizes increasing", [] { rnn::unpack_sequence(rnn::PackedSequence(gd::zeros({3}), gd::tensor({1, 2}))); },
       "unpack_sequence: batch_sizes must be positive and non-increasing, but got [1, 2]"},
      {"empty batch_sizes",
       [] { rnn::pad_packed_sequence(rnn::PackedSequence(gd::zeros({0}), gd::empty({0}, gd::kInt64))); },
       "pad_packed_sequence: batch_sizes is empty"},
      {"bad unsorted_indices",
       [] {
         rnn::pad_packed_sequence(
             rnn::PackedSequence(gd::zeros({2}), gd::tensor({2}), gd::tensor({0, 1}), gd::tensor({0, 5})));
       },
       "pad_packed_sequence: unsorted_indices must be a permutation of 0..1, but got [0, 5]"},
      {"unpad lengths count", [] { rnn::unpad_sequence(gd::zeros({3, 2}), std::vector<int64_t>{1}); },
       "unpad_sequence: got 1 lengths for a batch of 2"},
      {"unpad length too long", [] { rnn::unpad_sequence(gd::zeros({3, 2}), std::vector<int64_t>{1, 4}); },
       "unpad_sequence: length 4 of sequence 1 is outside [0, 3]"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(error_of(c.call) == c.message);
  }
}
