// Sequence classification with an LSTM over variable-length sequences: is the
// sum of a sequence of N(0, 1) numbers positive? Lengths run from 5 to 40, so
// every batch is padded, then packed (enforce_sorted=false) so that the LSTM
// stops at each sequence's own end and h_n is its state after its last step.
// The answer needs the whole sequence: no prefix or summary statistic short
// of the sum decides it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <tuple>
#include <vector>

#include "gradiens.h"
#include "nn/modules/rnn.h"
#include "nn/utils/rnn.h"

namespace gd = gradiens;
namespace rnn = gradiens::nn::utils::rnn;

namespace {

constexpr int64_t kMinLength = 5, kMaxLength = 40;
constexpr int64_t kHidden = 32, kBatch = 64, kEpochs = 12;
constexpr double kLearningRate = 1e-2;

struct SequenceSet {
  std::vector<gd::Tensor> sequences;  // each [L, 1], float32
  std::vector<int64_t> lengths;
  gd::Tensor labels;                  // [N] float32: 1 when the sum is positive
};

SequenceSet make_set(int64_t count, gd::Generator& generator) {
  SequenceSet set;
  gd::Tensor lengths = gd::randint(kMinLength, kMaxLength + 1, {count}, generator);
  std::vector<float> labels;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t length = lengths[i].item<int64_t>();
    gd::Tensor sequence = gd::randn({length, 1}, generator);
    set.sequences.push_back(sequence);
    set.lengths.push_back(length);
    labels.push_back(sequence.sum().item<float>() > 0 ? 1.0f : 0.0f);
  }
  set.labels = gd::tensor(labels);
  return set;
}

struct Classifier {
  gd::nn::LSTM lstm{gd::nn::LSTMOptions(1, kHidden).batch_first(true)};
  gd::nn::Linear head{kHidden, 1};

  std::vector<gd::Tensor> parameters() const {
    std::vector<gd::Tensor> params = lstm->parameters();
    for (const gd::Tensor& p : head->parameters()) params.push_back(p);
    return params;
  }

  // One logit per sequence, in the order given.
  gd::Tensor forward(const std::vector<gd::Tensor>& sequences, const std::vector<int64_t>& lengths) {
    gd::Tensor padded = rnn::pad_sequence(sequences, /*batch_first=*/true);
    rnn::PackedSequence packed = rnn::pack_padded_sequence(padded, lengths, /*batch_first=*/true,
                                                           /*enforce_sorted=*/false);
    auto [output, state] = lstm->forward(packed);
    gd::Tensor h_n = std::get<0>(state);  // [layers, B, hidden], in the batch's order
    return head->forward(h_n[-1]).squeeze(1);
  }
};

double accuracy(Classifier& model, const SequenceSet& set) {
  gd::NoGradGuard no_grad;
  gd::Tensor logits = model.forward(set.sequences, set.lengths);
  return (logits.gt(0).to(gd::kFloat32) == set.labels).to(gd::kFloat64).mean().item<double>();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
  const auto start = std::chrono::steady_clock::now();
  gd::manual_seed(0);
  gd::Generator data_generator(1);
  const SequenceSet train = make_set(4000, data_generator);
  const SequenceSet test = make_set(1000, data_generator);

  Classifier model;
  gd::optim::Adam optimizer(model.parameters(), gd::optim::AdamOptions(kLearningRate));
  gd::optim::CosineAnnealingLR scheduler(optimizer, kEpochs);
  std::printf("LSTM(1, %lld) + Linear(%lld, 1), %zu training and %zu test sequences of length %lld..%lld\n",
              static_cast<long long>(kHidden), static_cast<long long>(kHidden), train.sequences.size(),
              test.sequences.size(), static_cast<long long>(kMinLength), static_cast<long long>(kMaxLength));

  const int64_t train_size = static_cast<int64_t>(train.sequences.size());
  double test_accuracy = 0;
  for (int64_t epoch = 1; epoch <= kEpochs; ++epoch) {
    const auto epoch_start = std::chrono::steady_clock::now();
    model.lstm->train();
    gd::Tensor order = gd::randperm(train_size);
    const int64_t* order_data = order.data_ptr<int64_t>();
    double loss_sum = 0;
    for (int64_t first = 0; first < train_size; first += kBatch) {
      const int64_t last = std::min(first + kBatch, train_size);
      std::vector<gd::Tensor> sequences;
      std::vector<int64_t> lengths;
      for (int64_t k = first; k < last; ++k) {
        sequences.push_back(train.sequences[static_cast<size_t>(order_data[k])]);
        lengths.push_back(train.lengths[static_cast<size_t>(order_data[k])]);
      }
      gd::Tensor targets = train.labels.index_select(0, order.slice(0, first, last));
      gd::Tensor loss = gd::nn::functional::binary_cross_entropy_with_logits(model.forward(sequences, lengths),
                                                                            targets);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>() * static_cast<double>(last - first);
    }
    scheduler.step();
    model.lstm->eval();
    test_accuracy = accuracy(model, test);
    std::printf("epoch %2lld  loss %.4f  test accuracy %.2f%%  %.2f s\n", static_cast<long long>(epoch),
                loss_sum / static_cast<double>(train_size), 100 * test_accuracy, seconds_since(epoch_start));
  }
  const double seconds = seconds_since(start);
  std::printf("test accuracy %.2f%% after %lld epochs, %.1f s\n", 100 * test_accuracy,
              static_cast<long long>(kEpochs), seconds);
  std::printf("{\"example\": \"sequence_classifier\", \"test_accuracy\": %.4f, \"epochs\": %lld, \"seconds\": %.1f}\n",
              test_accuracy, static_cast<long long>(kEpochs), seconds);
  return test_accuracy >= 0.95 ? 0 : 1;
}
