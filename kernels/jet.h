// Device-neutral entry points of the Taylor-mode engine's fused kernels: the jet
// of an elementwise activation (forward and backward) and a whole MLP's jet,
// kernels/cpu/taylor.h on the CPU and kernels/cuda/jet.h on a cuda device.
//
// Shape legend: N = samples, w = width of the layer, d = input coordinates.
// A jet is K contiguous blocks of [N, w] (block k starts at k * N * w):
//   block 0                  the values h
//   blocks 1 .. d            dh/dx_i for each input coordinate i
//   block d + 1              sum_i c_i d2h/dx_i^2        (when `laplacian`)
//   then, for each pure coordinate p in turn, d^k h/dx_p^k for k = 2 .. pure_order
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// The activations the kernels carry; each knows its derivatives up to order 5.
enum class JetActivation { Tanh, Sigmoid, Silu, Relu, Sin };

// The blocks of a jet. The weights and pure dims are host memory on any device.
struct JetLayout {
  int64_t samples = 0;      // N
  int64_t width = 0;        // w
  int64_t coordinates = 0;  // d
  bool laplacian = false;
  const double* laplacian_weights = nullptr;  // c_i, `coordinates` values; null: every c_i = 1
  const int64_t* pure_dims = nullptr;         // `pure_count` distinct coordinates in [0, d)
  int64_t pure_count = 0;
  int pure_order = 2;  // 2 .. 4

  int64_t blocks() const { return 1 + coordinates + (laplacian ? 1 : 0) + pure_count * (pure_order - 1); }
};

// One layer of a fused MLP: a Linear (weight [out_features, in_features], bias
// [out_features] or null) or an activation. The weights are buffers on the
// call's device; the layer list itself is host memory.
template <class T>
struct JetMlpLayer {
  bool linear = false;
  int64_t in_features = 0, out_features = 0;
  const T* weight = nullptr;
  const T* bias = nullptr;
  JetActivation activation = JetActivation::Tanh;
};

// The most input coordinates the fused kernels carry on a cuda device (their
// plan travels as kernel arguments); wider inputs take the differentiable ops.
constexpr int64_t kMaxCudaJetCoordinates = 128;

// out = the jet of s(z) for z = block 0 of `jet` + bias (w values, or null) and
// the other blocks the derivatives of z (kernels/cpu/taylor.h has the formulas);
// float32 or float64, out not overlapping jet.
void jet_activation_forward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                            const void* bias, void* out, const DeviceRef& device);
// grad_jet = the gradient of <grad_out, out> with respect to `jet` (same layout).
void jet_activation_backward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                             const void* bias, const void* grad_out, void* grad_jet, const DeviceRef& device);

// How many activation values a CPU forward pass can keep for its backward
// (Note [Kept activation values] in kernels/cpu/taylor.h); 0 on a cuda device,
// whose kernels keep none.
template <class T>
int64_t jet_mlp_kept_values(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count,
                            const DeviceRef& device);

// out [K, N, m] = the jet of the network at x [N, d] (layout.samples = N,
// layout.coordinates = d). T is float or double. `keep`: null, or
// jet_mlp_kept_values() values on the device, which the pass fills.
template <class T>
void jet_mlp_forward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x, T* out,
                     const DeviceRef& device, T* keep = nullptr);
// The gradients of <grad_out, out>: grad_x [N, d] and, per layer, grad_weight[l]
// and grad_bias[l] (each null: not wanted), overwritten. `kept`: null, or
// what a forward pass of the same x and layers kept.
template <class T>
void jet_mlp_backward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x,
                      const T* grad_out, T* grad_x, T* const* grad_weight, T* const* grad_bias,
                      const DeviceRef& device, const T* kept = nullptr);

}  // namespace gradiens::kernels
