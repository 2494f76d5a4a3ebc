// Shared by the reductions: dim-list normalization, output shapes and the
// kept/reduced layout the reduction kernels walk.
#pragma once

#include <string_view>

#include "engine/tensor.h"
#include "kernels/cpu/reduce.h"

namespace gradiens {

// Wrapped, sorted, de-duplicated dims; an empty list means all dims.
DimVector reduction_dims(const Tensor& x, IntArrayRef dims, std::string_view op);
// Output shape of reducing `dims` of `sizes`.
DimVector reduced_shape(IntArrayRef sizes, const DimVector& dims, bool keepdim);
// Kept dims first (row-major, matching a contiguous output), reduced dims last,
// with adjacent reduced dims merged when they are contiguous to each other.
kernels::ReductionLayout reduction_layout(const Tensor& x, const DimVector& dims);
// Number of elements each output reduces over.
int64_t reduced_count(const Tensor& x, const DimVector& dims);
// Puts size-1 dims back at `dims` so a reduced tensor broadcasts against its input.
Tensor unsqueeze_reduced(const Tensor& reduced, IntArrayRef input_sizes, const DimVector& dims, bool keepdim);

}  // namespace gradiens
