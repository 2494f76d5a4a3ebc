// The strided elementwise entry points (kernels/elementwise.h): the CPU's
// iterator and named kernels, or the CUDA kernels on the device's stream.
#include "kernels/elementwise.h"

#include <string>

#include "kernels/cpu/elementwise_ops.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels {

namespace {

int64_t numel_of(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

cuda::Shape cuda_shape(IntArrayRef sizes) {
  GD_CHECK(sizes.size() <= static_cast<size_t>(cuda::kMaxDims),
           "CUDA kernels take tensors of at most " + std::to_string(cuda::kMaxDims) + " dimensions, got " +
               std::to_string(sizes.size()));
  cuda::Shape shape;
  shape.ndim = static_cast<int>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) shape.sizes[d] = sizes[d];
  return shape;
}

cuda::Strided cuda_strided(const StridedRef& ref) {
  cuda::Strided s;
  s.data = ref.data;
  for (size_t d = 0; d < ref.strides.size() && d < static_cast<size_t>(cuda::kMaxDims); ++d) s.strides[d] = ref.strides[d];
  return s;
}

cpu::Operand operand(const StridedRef& ref, ScalarType dtype) {
  return {ref.data, static_cast<int64_t>(element_size(dtype)), ref.strides};
}

// The flat vectorized kernel computes op when it is a plain +, - or * (alpha 1).
bool vector_arith(Binary op, const Number& alpha, Arith& kind) {
  switch (op) {
    case Binary::Add: kind = Arith::Add; return alpha.to_double() == 1;
    case Binary::Sub: kind = Arith::Sub; return alpha.to_double() == 1;
    case Binary::Mul: kind = Arith::Mul; return true;
    default: return false;
  }
}

}  // namespace

bool is_row_major(IntArrayRef shape, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

void binary(Binary op, ScalarType dtype, const StridedRef& out, const StridedRef& a, const StridedRef& b,
            IntArrayRef shape, const Number& alpha, const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::binary(op, dtype, cuda_strided(out), cuda_strided(a), cuda_strided(b), cuda_shape(shape), alpha.to_double(),
                 device.stream);
    return;
  }
  Arith kind{};
  if ((dtype == kFloat32 || dtype == kFloat64) && vector_arith(op, alpha, kind) && is_row_major(shape, out.strides) &&
      is_row_major(shape, a.strides) && is_row_major(shape, b.strides)) {
    dispatch_floating(dtype, name, [&]<class T>() {
      const T *ap = static_cast<const T*>(a.data), *bp = static_cast<const T*>(b.data);
      T* o = static_cast<T*>(out.data);
      cpu::parallel_for(0, numel_of(shape), cpu::kElementwiseGrainSize, [&](int64_t lo, int64_t hi) {
        cpu::arith(kind, ap + lo, bp + lo, o + lo, hi - lo);
      });
    });
    return;
  }
  cpu::ElementwiseIterator iter(shape, {operand(out, dtype), operand(a, dtype), operand(b, dtype)});
  cpu::binary(op, dtype, iter, alpha, name);
}

void binary_scalar(Binary op, ScalarType dtype, const StridedRef& out, const StridedRef& a, IntArrayRef shape,
                   const Number& scalar, bool scalar_first, const Number& alpha, const DeviceRef& device,
                   std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::binary_scalar(op, dtype, cuda_strided(out), cuda_strided(a), cuda_shape(shape), scalar.to_double(),
                        scalar_first, alpha.to_double(), device.stream);
    return;
  }
  if (numel_of(shape) == 1) {  // the per-op overhead path
    cpu::binary_scalar_one(op, dtype, out.data, a.data, scalar, scalar_first, alpha, name);
    return;
  }
  cpu::ElementwiseIterator iter(shape, {operand(out, dtype), operand(a, dtype)});
  cpu::binary_scalar(op, dtype, iter, scalar, scalar_first, alpha, name);
}

void square(ScalarType dtype, const StridedRef& out, const StridedRef& a, IntArrayRef shape, const DeviceRef& device,
            std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::binary(Binary::Mul, dtype, cuda_strided(out), cuda_strided(a), cuda_strided(a), cuda_shape(shape), 1,
                 device.stream);
    return;
  }
  if (numel_of(shape) == 1) {
    cpu::square_one(dtype, out.data, a.data, name);
    return;
  }
  cpu::ElementwiseIterator iter(shape, {operand(out, dtype), operand(a, dtype)});
  cpu::square(dtype, iter, name);
}

void integer_math(UnaryMath op, ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape,
                  const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    GD_CHECK(op == UnaryMath::Neg, std::string(name) + ": integer tensors on CUDA are not supported yet");
    if (numel_of(shape) == 0) return;
    cuda::binary_scalar(Binary::Sub, dtype, cuda_strided(out), cuda_strided(in), cuda_shape(shape), 0,
                        /*scalar_first=*/true, 1, device.stream);
    return;
  }
  cpu::ElementwiseIterator iter(shape, {operand(out, dtype), operand(in, dtype)});
  cpu::integer_math(op, dtype, iter, name);
}

void compare(Compare op, ScalarType dtype, const StridedRef& out, const StridedRef& a, const StridedRef& b,
             IntArrayRef shape, const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::compare(op, dtype, cuda_strided(out), cuda_strided(a), cuda_strided(b), cuda_shape(shape), device.stream);
    return;
  }
  cpu::ElementwiseIterator iter(shape, {operand(out, kBool), operand(a, dtype), operand(b, dtype)});
  cpu::compare(op, dtype, iter, name);
}

void where(ScalarType dtype, const StridedRef& out, const StridedRef& cond, const StridedRef& a, const StridedRef& b,
           IntArrayRef shape, const DeviceRef& device) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::where(dtype, cuda_strided(out), cuda_strided(cond), cuda_strided(a), cuda_strided(b), cuda_shape(shape),
                device.stream);
    return;
  }
  cpu::ElementwiseIterator iter(shape,
                                {operand(out, dtype), operand(cond, kBool), operand(a, dtype), operand(b, dtype)});
  cpu::where(dtype, iter);
}

void copy(ScalarType dst_dtype, const StridedRef& dst, ScalarType src_dtype, const StridedRef& src, IntArrayRef shape,
          const DeviceRef& device) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::copy(dst_dtype, cuda_strided(dst), src_dtype, cuda_strided(src), cuda_shape(shape), device.stream);
    return;
  }
  // float32 <-> float16/bfloat16 between row-major buffers: the vectorized
  // conversions (the iterator would convert one element at a time).
  const bool narrowing = src_dtype == kFloat32 && is_reduced_floating_point(dst_dtype);
  const bool widening = dst_dtype == kFloat32 && is_reduced_floating_point(src_dtype);
  if ((narrowing || widening) && is_row_major(shape, dst.strides) && is_row_major(shape, src.strides)) {
    dispatch_floating_and_reduced(narrowing ? dst_dtype : src_dtype, "copy_", [&]<class T>() {
      if constexpr (is_reduced_floating_point_v<T>) {
        cpu::parallel_for(0, numel_of(shape), cpu::kElementwiseGrainSize, [&](int64_t b, int64_t e) {
          if (narrowing) cpu::convert(static_cast<const float*>(src.data) + b, static_cast<T*>(dst.data) + b, e - b);
          else cpu::convert(static_cast<const T*>(src.data) + b, static_cast<float*>(dst.data) + b, e - b);
        });
      }
    });
    return;
  }
  cpu::ElementwiseIterator iter(shape, {operand(dst, dst_dtype), operand(src, src_dtype)});
  cpu::cast(dst_dtype, src_dtype, iter);
}

void fill(ScalarType dtype, const StridedRef& out, IntArrayRef shape, const Number& value, const DeviceRef& device) {
  if (device.is_cuda()) {
    const int64_t n = numel_of(shape);
    if (n == 0) return;
    GD_INTERNAL_ASSERT(is_row_major(shape, out.strides), "kernels::fill on a cuda device takes a dense buffer");
    cuda::fill(dtype, out.data, n, value.to_double(), device.stream);
    return;
  }
  cpu::ElementwiseIterator iter(shape, {operand(out, dtype)});
  cpu::fill(dtype, iter, value);
}

}  // namespace gradiens::kernels
