// SequenceEncoder: the recurrent layer of a config's model over packed sequences.
#include "train/registry/sequence_encoder.h"

#include "engine/functions.h"
#include "nn/modules/rnn.h"
#include "train/registry/registry.h"

namespace gradiens::train {

namespace {

template <class Options>
Options common_options(Options options, const json& config) {
  options.num_layers(integer(config, "num_layers")).bias(flag(config, "bias")).batch_first(true)
      .dropout(number(config, "dropout")).bidirectional(flag(config, "bidirectional"));
  return options;
}

}  // namespace

SequenceEncoderImpl::SequenceEncoderImpl(std::string kind, const json& config) : Module(kind), kind_(std::move(kind)) {
  const int64_t input = integer(config, "input_size"), hidden = integer(config, "hidden_size");
  directions_ = flag(config, "bidirectional") ? 2 : 1;
  int64_t state_size = hidden;
  if (kind_ == "RNN") {
    rnn_ = register_module("rnn", nn::RNN(common_options(nn::RNNOptions(input, hidden), config)
                                              .nonlinearity(text(config, "nonlinearity"))).ptr());
  } else if (kind_ == "LSTM") {
    const int64_t proj = integer(config, "proj_size");
    rnn_ = register_module("rnn", nn::LSTM(common_options(nn::LSTMOptions(input, hidden), config).proj_size(proj)).ptr());
    if (proj > 0) state_size = proj;
  } else {
    rnn_ = register_module("rnn", nn::GRU(common_options(nn::GRUOptions(input, hidden), config)).ptr());
  }
  output_size_ = directions_ * state_size;
}

Tensor SequenceEncoderImpl::last_state(const Tensor& h_n) const {
  // h_n is [layers * D, B, H]; the last layer's D states, side by side per sample.
  const int64_t rows = h_n.size(0);
  Tensor last = h_n.narrow(0, rows - directions_, directions_);
  return last.permute({1, 0, 2}).reshape({h_n.size(1), output_size_});
}

Tensor SequenceEncoderImpl::forward_packed(const nn::utils::rnn::PackedSequence& batch) {
  if (kind_ == "LSTM") {
    auto lstm = std::static_pointer_cast<nn::LSTMImpl>(rnn_);
    return last_state(std::get<0>(std::get<1>(lstm->forward_with_packed_input(batch, std::nullopt))));
  }
  if (kind_ == "GRU") return last_state(std::get<1>(std::static_pointer_cast<nn::GRUImpl>(rnn_)->forward(batch)));
  return last_state(std::get<1>(std::static_pointer_cast<nn::RNNImpl>(rnn_)->forward(batch)));
}

Tensor SequenceEncoderImpl::forward(const Tensor& batch) {
  if (kind_ == "LSTM") return last_state(std::get<0>(std::get<1>(std::static_pointer_cast<nn::LSTMImpl>(rnn_)->forward(batch))));
  if (kind_ == "GRU") return last_state(std::get<1>(std::static_pointer_cast<nn::GRUImpl>(rnn_)->forward(batch)));
  return last_state(std::get<1>(std::static_pointer_cast<nn::RNNImpl>(rnn_)->forward(batch)));
}

}  // namespace gradiens::train
