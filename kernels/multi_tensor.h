// The multi-tensor update kernels of the first-order optimizers, described for
// every backend: one call updates every parameter of one dtype in a group, from
// a list of buffer pointers (host memory for the CPU, device memory for CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "kernels/device_ref.h"

namespace gradiens::kernels {

// One parameter's buffers as a kernel reads them: each holds `numel`
// contiguous elements of T, updated in place, element by element.
template <class T>
struct TensorSlot {
  T* param;
  const T* grad;
  T* state[3];        // the optimizer's state buffers, in the order its kernel names them; unused ones nullptr
  int64_t numel;
  int64_t offset;     // where the parameter starts in the list's range of elements
  uint32_t scalars;   // the entry of the kernel's scalar table that applies (Adam's per-parameter step)
  bool fresh;         // the state was created by this step (SGD's first momentum step copies the direction)
};

// The parameters of one dtype in a group. The kernels run over the elements
// [0, numel) of all slots in a row, so a list of many small parameters is split
// between threads as one large one would be.
template <class T>
struct TensorList {
  std::vector<TensorSlot<T>> slots;
  int64_t numel = 0;
};

// Each kernel holds its options as flags, which select a branch-free loop, and
// a table of scalars in double: the kernel rounds each to T first, as PyTorch's
// kernels round a Python number. The formulas are PyTorch 1.13's _single_tensor_*
// (its _multi_tensor_* compute the same), operation by operation.

// State: momentum_buffer (with momentum).
struct SGDKernel {
  struct Scalars {
    double momentum, one_minus_dampening, weight_decay, neg_lr;
  };
  bool maximize, weight_decay, momentum, nesterov;
  const Scalars* scalars;
};

// State: exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad). One Scalars per step count.
struct AdamKernel {
  enum class WeightDecay { None, L2, Decoupled };  // Adam's grad + wd * p, AdamW's p * (1 - lr * wd)
  struct Scalars {
    double beta1, one_minus_beta1, beta2, one_minus_beta2, l2, decay, bias_correction2_sqrt, eps, neg_step_size;
  };
  bool maximize, amsgrad;
  WeightDecay weight_decay;
  const Scalars* scalars;
};

// State: square_avg, grad_avg (centered), momentum_buffer (momentum > 0).
struct RMSpropKernel {
  struct Scalars {
    double alpha, one_minus_alpha, weight_decay, eps, momentum, neg_lr;
  };
  bool maximize, weight_decay, centered, momentum;
  const Scalars* scalars;
};

// State: sum. One Scalars per step count (the decayed learning rate).
struct AdagradKernel {
  struct Scalars {
    double weight_decay, eps, neg_clr;
  };
  bool maximize, weight_decay;
  const Scalars* scalars;
};

using AnyKernel = std::variant<SGDKernel, AdamKernel, RMSpropKernel, AdagradKernel>;

// Runs the kernel over every slot of the list on `device`: the CPU's vectorized
// loops (threads above the elementwise grain) or the CUDA kernel on the
// device's stream, which copies the kernel's first `scalar_count` scalar
// entries there. Each element is updated on its own, so results do not depend
// on the thread count or on where a parameter starts.
void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<float>& list,
                         const DeviceRef& device);
void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<double>& list,
                         const DeviceRef& device);

}  // namespace gradiens::kernels
