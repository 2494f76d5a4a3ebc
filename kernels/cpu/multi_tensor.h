// The CPU's multi-tensor update of the first-order optimizers (kernels/multi_tensor.h).
#pragma once

#include "kernels/multi_tensor.h"

namespace gradiens::kernels::cpu {

// Runs the kernel over every slot of the list, vectorized for the best SIMD
// target of the running CPU, in parallel above the elementwise grain size. Each
// element is updated on its own, so the result does not depend on the thread
// count or on where a parameter starts.
void multi_tensor_update(const AnyKernel& kernel, const TensorList<float>& list);
void multi_tensor_update(const AnyKernel& kernel, const TensorList<double>& list);

}  // namespace gradiens::kernels::cpu
