// The optimizers' view of the multi-tensor update kernels (kernels/multi_tensor.h):
// the kernel descriptions, and the entry point that runs one on the list's device.
#pragma once

#include "kernels/multi_tensor.h"

namespace gradiens::optim::detail {

using kernels::AdagradKernel;
using kernels::AdamKernel;
using kernels::AnyKernel;
using kernels::RMSpropKernel;
using kernels::SGDKernel;
using kernels::TensorList;
using kernels::TensorSlot;

// Runs the kernel over every slot of the list, vectorized for the best SIMD
// target of the running CPU, in parallel above the elementwise grain size. Each
// element is updated on its own, so the result does not depend on the thread
// count or on where a parameter starts.
void multi_tensor_update(const AnyKernel& kernel, const TensorList<float>& list);
void multi_tensor_update(const AnyKernel& kernel, const TensorList<double>& list);

}  // namespace gradiens::optim::detail
