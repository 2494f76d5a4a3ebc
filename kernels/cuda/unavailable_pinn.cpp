// Stands in for the Taylor-mode (jet.h) and recurrent-cell (rnn.h) CUDA
// kernels in a build without the CUDA toolkit: each throws gradiens::Error.
#include "kernels/cuda/jet.h"
#include "kernels/cuda/rnn.h"
#include "kernels/error.h"

namespace gradiens::kernels::cuda {

namespace {
[[noreturn]] void unavailable() {
  throw Error("gradiens was built without CUDA support (no CUDA compiler was found at configure time)");
}
}  // namespace

void jet_activation_forward(ScalarType, JetActivation, const JetLayout&, const void*, const void*, void*, int) {
  unavailable();
}
void jet_activation_backward(ScalarType, JetActivation, const JetLayout&, const void*, const void*, const void*, void*,
                             int) {
  unavailable();
}

template <class T>
void jet_mlp_forward(const JetLayout&, const JetMlpLayer<T>*, int64_t, const T*, T*, int) {
  unavailable();
}
template <class T>
void jet_mlp_backward(const JetLayout&, const JetMlpLayer<T>*, int64_t, const T*, const T*, T*, T* const*, T* const*,
                      int) {
  unavailable();
}
template void jet_mlp_forward<double>(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*, double*,
                                      int);
template void jet_mlp_forward<float>(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*, float*, int);
template void jet_mlp_backward<double>(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*,
                                       const double*, double*, double* const*, double* const*, int);
template void jet_mlp_backward<float>(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*,
                                      const float*, float*, float* const*, float* const*, int);

void lstm_cell_forward(ScalarType, const void*, const void*, int64_t, int64_t, void*, void*, void*, void*, int) {
  unavailable();
}
void lstm_cell_backward(ScalarType, const void*, const void*, const void*, const void*, const void*, int64_t, int64_t,
                        void*, void*, int) {
  unavailable();
}
void gru_cell_forward(ScalarType, const void*, const void*, const void*, int64_t, int64_t, void*, void*, int) {
  unavailable();
}
void gru_cell_backward(ScalarType, const void*, const void*, const void*, const void*, int64_t, int64_t, void*, void*,
                       void*, int) {
  unavailable();
}

}  // namespace gradiens::kernels::cuda
