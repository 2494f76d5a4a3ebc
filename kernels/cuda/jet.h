// The Taylor-mode engine's kernels on the GPU: the CUDA twins of
// kernels/cpu/taylor.h (the jet of an activation, forward and backward, and a
// whole MLP's jet as cuBLAS GEMMs and those kernels), same layout and formulas.
// Needs no CUDA headers, so engine code can include it.
#pragma once

#include <cstdint>

#include "kernels/cpu/taylor.h"
#include "kernels/cuda/ops.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cuda {

using kernels::cpu::JetActivation;
using kernels::cpu::JetLayout;
using kernels::cpu::JetMlpLayer;

// The most input coordinates the fused kernels carry (their plan travels as
// kernel arguments); wider inputs take the differentiable ops.
constexpr int64_t kMaxJetCoordinates = 128;

// kernels::cpu::jet_activation_forward/backward on device buffers of `dtype`
// (float32 or float64) on the current stream of `device`. The layout's
// weights and pure dims are host memory.
void jet_activation_forward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                            const void* bias, void* out, int device);
void jet_activation_backward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                             const void* bias, const void* grad_out, void* grad_jet, int device);

// kernels::cpu::jet_mlp_forward/backward with every weight, bias, x, out and
// gradient a device buffer (the layer list itself is host memory).
template <class T>
void jet_mlp_forward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x, T* out,
                     int device);
template <class T>
void jet_mlp_backward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x,
                      const T* grad_out, T* grad_x, T* const* grad_weight, T* const* grad_bias, int device);

}  // namespace gradiens::kernels::cuda
