// lstm_packed_f32 of BENCHMARKS.md, line for line the PyTorch peer's lstm_packed():
// LSTM(32 -> 128, batch_first), 64 sequences, packed unsorted, forward, padded
// back, backward.
#include "bench/lstm_packed.h"

#include <cstdint>
#include <vector>

#include "gradiens.h"
#include "nn/modules/rnn.h"
#include "nn/utils/rnn.h"

namespace gd = gradiens;

namespace {

// The peer's lengths: torch.randint(10, 101, (64,), generator=torch.Generator().manual_seed(0)),
// so that both programs do the same work (3345 steps of one sequence in all).
const std::vector<int64_t> kLengths = {91, 90, 24, 26, 74, 40, 65, 48, 14, 92, 61, 73, 39, 57, 33, 49,
                                       28, 89, 35, 82, 100, 12, 84, 19, 84, 84, 25, 90, 39, 14, 11, 17,
                                       77, 92, 48, 70, 13, 82, 53, 35, 35, 45, 66, 50, 86, 21, 22, 98,
                                       42, 43, 65, 84, 55, 29, 34, 43, 67, 28, 33, 89, 41, 26, 23, 61};
constexpr int64_t kInput = 32, kHidden = 128;

}  // namespace

std::function<void()> make_lstm_packed_f32_step(const gd::Device& device) {
  gd::manual_seed(0);
  gd::nn::LSTM lstm(gd::nn::LSTMOptions(kInput, kHidden).batch_first(true));
  lstm->to(device);
  std::vector<gd::Tensor> sequences;
  for (int64_t length : kLengths) sequences.push_back(gd::randn({length, kInput}).to(device));
  return [lstm, sequences]() mutable {
    namespace rnn = gd::nn::utils::rnn;
    rnn::PackedSequence packed = rnn::pack_sequence(sequences, /*enforce_sorted=*/false);
    auto [out, state] = lstm->forward(packed);
    auto [padded, lengths] = rnn::pad_packed_sequence(out, /*batch_first=*/true);
    (padded.sum() + std::get<0>(state).sum()).backward();
  };
}

double lstm_packed_f32_flops() {
  double rows = 0;
  for (int64_t length : kLengths) rows += static_cast<double>(length);
  const double gates = 4.0 * kHidden;
  // Forward: x W_ih^T and h W_hh^T per row; backward: the weight gradient of both and
  // the gradient of h (the sequences' inputs need none).
  const double forward = rows * gates * (kInput + kHidden);
  const double backward = rows * gates * (kInput + kHidden) + rows * gates * kHidden;
  return 2.0 * (forward + backward);
}
