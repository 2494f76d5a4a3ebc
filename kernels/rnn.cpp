// The fused LSTM/GRU cell entry points (kernels/rnn.h): the CPU loops of
// kernels/cpu/rnn.h, or the CUDA kernels of kernels/cuda/rnn.h.
#include "kernels/rnn.h"

#include "kernels/cpu/rnn.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/cuda/rnn.h"

namespace gradiens::kernels {

void lstm_cell_forward(ScalarType dtype, const void* gates, const void* cx, int64_t batch, int64_t hidden, void* act,
                       void* h, void* c, void* tanh_c, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::lstm_cell_forward(dtype, gates, cx, batch, hidden, act, h, c, tanh_c, device.index);
    return;
  }
  dispatch_floating(dtype, "lstm_cell", [&]<class T>() {
    cpu::lstm_cell_forward(static_cast<const T*>(gates), static_cast<const T*>(cx), batch, hidden,
                           static_cast<T*>(act), static_cast<T*>(h), static_cast<T*>(c), static_cast<T*>(tanh_c));
  });
}

void lstm_cell_backward(ScalarType dtype, const void* act, const void* tanh_c, const void* cx, const void* dh,
                        const void* dc, int64_t batch, int64_t hidden, void* dgates, void* dcx,
                        const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::lstm_cell_backward(dtype, act, tanh_c, cx, dh, dc, batch, hidden, dgates, dcx, device.index);
    return;
  }
  dispatch_floating(dtype, "lstm_cell_backward", [&]<class T>() {
    cpu::lstm_cell_backward(static_cast<const T*>(act), static_cast<const T*>(tanh_c), static_cast<const T*>(cx),
                            static_cast<const T*>(dh), static_cast<const T*>(dc), batch, hidden,
                            static_cast<T*>(dgates), static_cast<T*>(dcx));
  });
}

void gru_cell_forward(ScalarType dtype, const void* gi, const void* gh, const void* hx, int64_t batch, int64_t hidden,
                      void* act, void* h, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::gru_cell_forward(dtype, gi, gh, hx, batch, hidden, act, h, device.index);
    return;
  }
  dispatch_floating(dtype, "gru_cell", [&]<class T>() {
    cpu::gru_cell_forward(static_cast<const T*>(gi), static_cast<const T*>(gh), static_cast<const T*>(hx), batch,
                          hidden, static_cast<T*>(act), static_cast<T*>(h));
  });
}

void gru_cell_backward(ScalarType dtype, const void* act, const void* gh, const void* hx, const void* grad,
                       int64_t batch, int64_t hidden, void* dgi, void* dgh, void* dhx, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::gru_cell_backward(dtype, act, gh, hx, grad, batch, hidden, dgi, dgh, dhx, device.index);
    return;
  }
  dispatch_floating(dtype, "gru_cell_backward", [&]<class T>() {
    cpu::gru_cell_backward(static_cast<const T*>(act), static_cast<const T*>(gh), static_cast<const T*>(hx),
                           static_cast<const T*>(grad), batch, hidden, static_cast<T*>(dgi), static_cast<T*>(dgh),
                           static_cast<T*>(dhx));
  });
}

}  // namespace gradiens::kernels
