// The optimizers' view of the multi-tensor update kernels (kernels/multi_tensor.h):
// the kernel descriptions.
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
// The kernels run through kernels::multi_tensor_update on the group's device.

}  // namespace gradiens::optim::detail
