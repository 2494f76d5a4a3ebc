// Fused CPU kernels of the Taylor-mode engine (pinn/taylor.h): an elementwise
// activation applied to a whole jet in one pass over memory, and its backward.
//
// Shape legend: N = samples, w = width of the layer, d = input coordinates.
// A jet is K contiguous blocks of [N, w] (block k starts at k * N * w):
//   block 0                  the values h
//   blocks 1 .. d            dh/dx_i for each input coordinate i
//   block d + 1              sum_i c_i d2h/dx_i^2        (when `laplacian`)
//   then, for each pure coordinate p in turn, d^k h/dx_p^k for k = 2 .. pure_order
#pragma once

#include <cstdint>

#include "kernels/jet.h"

namespace gradiens::kernels::cpu {

// The jet's layout and activations are kernels/jet.h's (the device-neutral entry points).
using kernels::JetActivation;
using kernels::JetLayout;
using kernels::JetMlpLayer;

// out = the jet of s(z) where z = block 0 of `jet` + bias (bias: w values, or
// null for none) and the other blocks of `jet` are the derivatives of z:
//   G' = s'(z) G,   L' = s'(z) L + s''(z) sum_i c_i G_i^2,
// and the pure derivatives by Faa di Bruno (pinn/taylor.h). out must not
// overlap jet.
void jet_activation_forward(JetActivation activation, const JetLayout& layout, const double* jet,
                            const double* bias, double* out);
void jet_activation_forward(JetActivation activation, const JetLayout& layout, const float* jet,
                            const float* bias, float* out);

// grad_jet = the gradient of <grad_out, out> with respect to `jet` (same
// layout); its block 0 is also the gradient with respect to z, whose sum over
// the N samples is the bias's gradient. grad_jet must not overlap the inputs.
void jet_activation_backward(JetActivation activation, const JetLayout& layout, const double* jet,
                             const double* bias, const double* grad_out, double* grad_jet);
void jet_activation_backward(JetActivation activation, const JetLayout& layout, const float* jet,
                             const float* bias, const float* grad_out, float* grad_jet);

// ---- a whole MLP, a block of samples at a time ----
// Note [Jet MLP in cache]: a jet is K times larger than the values (K = 7 for a
// 5-D Laplacian), so at a few thousand samples one layer's jet no longer fits
// in cache and every GEMM and activation runs at memory speed. These run the
// whole network on `chunk` samples at a time, each sample block staying in
// cache from the input to the output; the backward pass recomputes a block's
// forward (a third more GEMM work) instead of reading saved jets from memory.
//
// Note [Kept activation values]: what the recomputed forward may read rather
// than compute is the values of the tanh and sigmoid layers, whose
// derivatives are polynomials in them: N values per unit, a K-th of each
// jet (12.8 MB for the Burgers net at 10,000 points). A forward pass given
// `keep` stores them there, layer after layer, [N, w_l] each; a backward
// given them as `kept` evaluates no activation (its costliest elementwise
// work, tanh being an exponential and a division) and skips the value block
// of each Linear that feeds one. The values are the ones the recomputation
// would give, so the gradients are the same bit for bit.
//
// Note [Sample blocks on threads]: the sample blocks are independent, so with
// num_threads() > 1 each thread takes an equal contiguous share of the
// samples (parallel_parts in parallel.h) and runs it in blocks, so that few
// blocks (a few hundred samples) still split evenly.
// The backward's weight and bias gradients are summed per share, the first
// into the caller's arrays, and the shares' sums added in order: a given
// thread count gives the same bits every time, one thread the serial order.
// Only float64 networks whose every product takes small_gemm do this: it
// reads its operands in place and keeps a product inside a parallel region on
// its thread, while OpenBLAS's thread count is one setting for the process.

// How many values `keep` holds for this network (layout.samples = N).
template <class T>
int64_t jet_mlp_kept_values(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count);

// out [K, N, m] = the jet of the network at x [N, d] (layout.samples = N,
// layout.coordinates = d; layout.width is not used); `keep`: null, or
// jet_mlp_kept_values() values to fill.
template <class T>
void jet_mlp_forward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x, T* out,
                     T* keep = nullptr);

// The gradients of <grad_out, out>: grad_x [N, d] (null: not wanted) and, per
// layer, grad_weight[l] and grad_bias[l] (null: not wanted), which are
// overwritten. `kept`: null, or the values a forward pass of the same x and
// layers kept.
template <class T>
void jet_mlp_backward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x,
                      const T* grad_out, T* grad_x, T* const* grad_weight, T* const* grad_bias,
                      const T* kept = nullptr);

}  // namespace gradiens::kernels::cpu
