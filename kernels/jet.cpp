// The Taylor-mode entry points (kernels/jet.h): kernels/cpu/taylor.h, or
// kernels/cuda/jet.h on a cuda device.
#include "kernels/jet.h"

#include "kernels/cpu/taylor.h"
#include "kernels/cuda/jet.h"
#include "kernels/error.h"

namespace gradiens::kernels {

static_assert(kMaxCudaJetCoordinates == cuda::kMaxJetCoordinates);

void jet_activation_forward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                            const void* bias, void* out, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::jet_activation_forward(dtype, activation, layout, jet, bias, out, device.index);
    return;
  }
  dispatch_floating(dtype, "jet_activation", [&]<class T>() {
    cpu::jet_activation_forward(activation, layout, static_cast<const T*>(jet), static_cast<const T*>(bias),
                                static_cast<T*>(out));
  });
}

void jet_activation_backward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                             const void* bias, const void* grad_out, void* grad_jet, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::jet_activation_backward(dtype, activation, layout, jet, bias, grad_out, grad_jet, device.index);
    return;
  }
  dispatch_floating(dtype, "jet_activation_backward", [&]<class T>() {
    cpu::jet_activation_backward(activation, layout, static_cast<const T*>(jet), static_cast<const T*>(bias),
                                 static_cast<const T*>(grad_out), static_cast<T*>(grad_jet));
  });
}

template <class T>
int64_t jet_mlp_kept_values(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count,
                            const DeviceRef& device) {
  return device.is_cuda() ? 0 : cpu::jet_mlp_kept_values(layout, layers, count);
}

template <class T>
void jet_mlp_forward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x, T* out,
                     const DeviceRef& device, T* keep) {
  if (device.is_cuda()) {
    GD_INTERNAL_ASSERT(keep == nullptr, "jet_mlp_forward: the cuda kernels keep no values");
    cuda::jet_mlp_forward(layout, layers, count, x, out, device.index);
    return;
  }
  cpu::jet_mlp_forward(layout, layers, count, x, out, keep);
}

template <class T>
void jet_mlp_backward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x,
                      const T* grad_out, T* grad_x, T* const* grad_weight, T* const* grad_bias,
                      const DeviceRef& device, const T* kept) {
  if (device.is_cuda()) {
    GD_INTERNAL_ASSERT(kept == nullptr, "jet_mlp_backward: the cuda kernels keep no values");
    cuda::jet_mlp_backward(layout, layers, count, x, grad_out, grad_x, grad_weight, grad_bias, device.index);
    return;
  }
  cpu::jet_mlp_backward(layout, layers, count, x, grad_out, grad_x, grad_weight, grad_bias, kept);
}

template int64_t jet_mlp_kept_values(const JetLayout&, const JetMlpLayer<float>*, int64_t, const DeviceRef&);
template int64_t jet_mlp_kept_values(const JetLayout&, const JetMlpLayer<double>*, int64_t, const DeviceRef&);
template void jet_mlp_forward(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*, float*,
                              const DeviceRef&, float*);
template void jet_mlp_forward(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*, double*,
                              const DeviceRef&, double*);
template void jet_mlp_backward(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*, const float*,
                               float*, float* const*, float* const*, const DeviceRef&, const float*);
template void jet_mlp_backward(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*, const double*,
                               double*, double* const*, double* const*, const DeviceRef&, const double*);

}  // namespace gradiens::kernels
