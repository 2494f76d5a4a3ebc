// The CUDA twin of optim/detail/multi_tensor.cpp: the optimizers' multi-tensor
// update kernels (kernels/multi_tensor.h) run on device buffers, bitwise equal to the CPU's.
#pragma once

#include <cstddef>

#include "kernels/cuda/ops.h"  // StreamHandle
#include "kernels/multi_tensor.h"

namespace gradiens::kernels::cuda {

// The list's slot pointers (param, grad, state) are device pointers;
// kernel.scalars (whichever alternative) points to `scalar_count` host entries,
// indexed by slot.scalars (SGD and RMSprop read entry 0). Asynchronous on
// `stream`: the slot table and the scalars are copied to the device first, so
// the caller may free or change its host copies as soon as this returns.
void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<float>& list,
                         StreamHandle stream);
void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<double>& list,
                         StreamHandle stream);

}  // namespace gradiens::kernels::cuda
