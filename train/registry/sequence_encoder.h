// SequenceEncoder: an RNN, LSTM or GRU that reads a packed batch of sequences
// and hands on the last layer's final hidden state, [B, D * H], so that a
// config's Sequential can continue with Linear layers.
#pragma once

#include <string>

#include "nn/module.h"
#include "nn/utils/rnn.h"
#include "train/config/spec.h"

namespace gradiens::train {

class SequenceEncoderImpl : public nn::Module {
 public:
  // `kind` is "RNN", "LSTM" or "GRU"; `config` the resolved layer config.
  SequenceEncoderImpl(std::string kind, const json& config);

  // The batch of sequences, packed (any order; h_n comes back in the batch's order).
  Tensor forward_packed(const nn::utils::rnn::PackedSequence& batch);
  // A padded batch [B, T, F] whose sequences all have length T.
  Tensor forward(const Tensor& batch);
  // D * H: the features handed on.
  int64_t output_size() const { return output_size_; }

 private:
  Tensor last_state(const Tensor& h_n) const;

  std::string kind_;
  std::shared_ptr<nn::Module> rnn_;
  int64_t directions_ = 1, output_size_ = 0;
};

}  // namespace gradiens::train
