// nn::functional recurrent cells (rnn_tanh_cell, rnn_relu_cell, lstm_cell,
// gru_cell, as torch's _VF cells) and the fused pointwise ops the layers use.
#pragma once

#include <tuple>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::nn::functional {

// One step of each cell on a batch: input [B, input_size], hidden [B, hidden_size],
// w_ih [G * hidden_size, input_size], w_hh [G * hidden_size, hidden_size], biases
// [G * hidden_size] or undefined. Gate orders are PyTorch's: LSTM (i, f, g, o),
// GRU (r, z, n) with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
// Returns (h', c').
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});

// The pointwise half of an LSTM step: gates [B, 4H] = x W_ih^T + b_ih + h W_hh^T
// + b_hh (pre-activation, order i, f, g, o) and c [B, H] give (h', c'). One pass
// forward and one backward for float32/float64; derivatives of any order
// (Note [Fused cell backward]).
std::tuple<Tensor, Tensor> lstm_cell_pointwise(const Tensor& gates, const Tensor& cx);
// The pointwise half of a GRU step: input_gates = x W_ih^T + b_ih and
// hidden_gates = h W_hh^T + b_hh (both [B, 3H], order r, z, n) and hx [B, H] give h'.
Tensor gru_cell_pointwise(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& hx);

// Rows of x (dim 0) cut into consecutive pieces of the given sizes, as views.
// Unlike narrow, whose backward fills a zero tensor of x's shape per piece, the
// pieces share one backward that concatenates their gradients: slicing a
// sequence's input projection step by step stays linear in its length.
std::vector<Tensor> split_rows(const Tensor& x, const std::vector<int64_t>& sizes);

}  // namespace gradiens::nn::functional
