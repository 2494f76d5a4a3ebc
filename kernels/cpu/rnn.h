// The fused pointwise steps of the LSTM and GRU cells on the CPU (the formulas of
// kernels/rnn.h); contiguous row-major buffers, B = batch rows, H = hidden units.
#pragma once

#include <cstdint>

namespace gradiens::kernels::cpu {

template <class T>
void lstm_cell_forward(const T* gates, const T* cx, int64_t batch, int64_t hidden, T* act, T* h, T* c, T* tanh_c);
template <class T>
void gru_cell_forward(const T* gi, const T* gh, const T* hx, int64_t batch, int64_t hidden, T* act, T* h);
template <class T>
void gru_cell_backward(const T* act, const T* gh, const T* hx, const T* grad, int64_t batch, int64_t hidden, T* dgi,
                       T* dgh, T* dhx);
// The LSTM cell's backward is lstm_cell_backward in kernels/cpu/vector_math.h.

}  // namespace gradiens::kernels::cpu
