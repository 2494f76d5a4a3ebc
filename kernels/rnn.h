// Device-neutral entry points of the fused pointwise steps of the LSTM and GRU
// cells (PyTorch's gate order): kernels/cpu/rnn.h on the CPU, kernels/cuda/rnn.h
// on a cuda device, same formulas.
//
// Shape legend: B = batch rows, H = hidden units; every buffer is contiguous
// row-major of `dtype` (float32 or float64) on `device`.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// LSTM: gates [B, 4H] (pre-activations of i, f, g, o) and the previous cell
// cx [B, H] give act [B, 4H] = (sigmoid i, sigmoid f, tanh g, sigmoid o),
// c [B, H] = f cx + i g, tanh_c [B, H] = tanh(c) and h [B, H] = o tanh_c.
void lstm_cell_forward(ScalarType dtype, const void* gates, const void* cx, int64_t batch, int64_t hidden, void* act,
                       void* h, void* c, void* tanh_c, const DeviceRef& device);
// Its backward from the saved act, tanh_c and cx and the incoming dh, dc [B, H]
// (null: zero): dgates [B, 4H] and dcx [B, H].
void lstm_cell_backward(ScalarType dtype, const void* act, const void* tanh_c, const void* cx, const void* dh,
                        const void* dc, int64_t batch, int64_t hidden, void* dgates, void* dcx,
                        const DeviceRef& device);

// GRU: input gates gi [B, 3H], hidden gates gh [B, 3H] and the state hx [B, H]
// give act [B, 3H] = (r, z, n) with r = sigmoid(gh_r + gi_r),
// z = sigmoid(gh_z + gi_z), n = tanh(gi_n + gh_n r), and h = (hx - n) z + n.
void gru_cell_forward(ScalarType dtype, const void* gi, const void* gh, const void* hx, int64_t batch, int64_t hidden,
                      void* act, void* h, const DeviceRef& device);
// Its backward from the saved act, gh and hx and the incoming grad [B, H]:
// dgi, dgh [B, 3H] and dhx [B, H].
void gru_cell_backward(ScalarType dtype, const void* act, const void* gh, const void* hx, const void* grad,
                       int64_t batch, int64_t hidden, void* dgi, void* dgh, void* dhx, const DeviceRef& device);

}  // namespace gradiens::kernels
