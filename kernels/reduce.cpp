// The reduction entry point (kernels/reduce.h): the CPU's named reductions, or
// the CUDA reduction on the device's stream.
#include "kernels/reduce.h"

#include <string>

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels {

namespace {

// The layout as the CUDA kernels take it: kept dims first, then the reduced ones.
void cuda_layout(const void* in, const ReductionLayout& layout, cuda::Shape& shape, cuda::Strided& strided) {
  const size_t kept = layout.kept_sizes.size(), reduced = layout.reduced_sizes.size();
  GD_CHECK(kept + reduced <= static_cast<size_t>(cuda::kMaxDims),
           "CUDA reductions take tensors of at most " + std::to_string(cuda::kMaxDims) + " dimensions");
  shape.ndim = static_cast<int>(kept + reduced);
  strided.data = const_cast<void*>(in);
  for (size_t d = 0; d < kept; ++d) {
    shape.sizes[d] = layout.kept_sizes[d];
    strided.strides[d] = layout.kept_strides[d];
  }
  for (size_t d = 0; d < reduced; ++d) {
    shape.sizes[kept + d] = layout.reduced_sizes[d];
    strided.strides[kept + d] = layout.reduced_strides[d];
  }
}

}  // namespace

void reduce(Reduce op, ScalarType in_dtype, const void* in, const ReductionLayout& layout, ScalarType out_dtype,
            void* out, const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    if (layout.output_numel() == 0) return;
    cuda::Shape shape;
    cuda::Strided strided;
    cuda_layout(in, layout, shape, strided);
    cuda::reduce(op, in_dtype, strided, shape, static_cast<int>(layout.reduced_sizes.size()), out_dtype, out,
                 device.stream);
    return;
  }
  switch (op) {
    case Reduce::Sum: return cpu::sum(in_dtype, in, layout, out_dtype, out, name);
    case Reduce::Prod: return cpu::prod(in_dtype, in, layout, out, name);
    case Reduce::Max: return cpu::extremum(true, in_dtype, in, layout, out, name);
    case Reduce::Min: return cpu::extremum(false, in_dtype, in, layout, out, name);
    case Reduce::SumOfSquares: break;
  }
  GD_INTERNAL_ASSERT(false, "kernels::reduce: the CPU has no SumOfSquares reduction");
}

void vector_norm(double p, ScalarType dtype, const void* in, const ReductionLayout& layout, void* out,
                 const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    if (layout.output_numel() == 0) return;
    cuda::Shape shape;
    cuda::Strided strided;
    cuda_layout(in, layout, shape, strided);
    cuda::vector_norm(p, dtype, strided, shape, static_cast<int>(layout.reduced_sizes.size()), out, device.index,
                      device.stream);
    return;
  }
  cpu::vector_norm(p, dtype, in, layout, out, name);
}

void arg_extremum(bool is_max, ScalarType dtype, const void* in, const ReductionLayout& layout, int64_t* out,
                  void* values, bool allow_bool, const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    if (layout.output_numel() == 0) return;
    cuda::Shape shape;
    cuda::Strided strided;
    cuda_layout(in, layout, shape, strided);
    cuda::arg_extremum(is_max, dtype, strided, shape, static_cast<int>(layout.reduced_sizes.size()), out, values,
                       allow_bool, device.index, device.stream);
    return;
  }
  cpu::arg_extremum(is_max, dtype, in, layout, out, values, allow_bool, name);
}

}  // namespace gradiens::kernels
