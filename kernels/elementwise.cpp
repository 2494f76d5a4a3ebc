// The strided elementwise entry points (kernels/elementwise.h): the CPU's
// iterator and named kernels, or the CUDA kernels on the device's stream.
#include "kernels/elementwise.h"

#include <algorithm>
#include <limits>
#include <string>

#include "kernels/cpu/accumulate.h"
#include "kernels/cpu/elementwise_ops.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels {

namespace {

// Elementwise results do not depend on the order their elements are visited in,
// so these walk a channels_last (or otherwise permuted dense) output in memory order.
constexpr auto kMemoryOrder = cpu::ElementwiseIterator::Order::Memory;

int64_t numel_of(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// The operand's strides over `shape`: 0 on the dims it is broadcast along
// (missing on its left, or of size 1).
void broadcast_strides(const StridedRef& ref, IntArrayRef shape, int64_t* strides) {
  const size_t offset = shape.size() - ref.sizes.size();
  for (size_t d = 0; d < offset; ++d) strides[d] = 0;
  for (size_t d = 0; d < ref.sizes.size(); ++d) strides[offset + d] = ref.sizes[d] == 1 ? 0 : ref.strides[d];
}

cuda::Strided cuda_strided(const StridedRef& ref, IntArrayRef shape) {
  cuda::Strided s;
  s.data = ref.data;
  if (shape.size() <= static_cast<size_t>(cuda::kMaxDims)) broadcast_strides(ref, shape, s.strides);
  return s;
}

// An input of the CPU iterator: its broadcast strides live in `strides`.
cpu::Operand operand(const StridedRef& ref, ScalarType dtype, IntArrayRef shape, DimVector& strides) {
  strides.resize(shape.size());
  broadcast_strides(ref, shape, strides.data());
  return {ref.data, static_cast<int64_t>(element_size(dtype)), strides};
}
// The output of the CPU iterator, which has the iteration shape itself.
cpu::Operand output_operand(const StridedRef& ref, ScalarType dtype) {
  return {ref.data, static_cast<int64_t>(element_size(dtype)), ref.strides};
}

// A row-major operand of the iteration shape itself (no broadcasting).
bool dense_of_shape(const StridedRef& ref, IntArrayRef shape) {
  return ref.sizes == shape && is_row_major(shape, ref.strides);
}

// Whether `strides` lay `shape` out densely in some order of its dims (row-major,
// channels_last, ...): sorted by stride, each dim's stride is the product of the
// sizes inside it.
bool dense_in_some_order(IntArrayRef shape, IntArrayRef strides) {
  DimVector dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) dims.push_back(static_cast<int64_t>(d));
  std::sort(dims.begin(), dims.end(), [&](int64_t x, int64_t y) { return strides[x] < strides[y]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// Operands of the iteration shape that share one dense layout: the elementwise
// map runs over their flat buffers.
bool same_dense_layout(const StridedRef& out, const StridedRef& a, const StridedRef& b, IntArrayRef shape) {
  return out.sizes == shape && a.sizes == shape && b.sizes == shape && a.strides == out.strides &&
         b.strides == out.strides && dense_in_some_order(shape, out.strides);
}

// The flat vectorized kernel computes op when it is a plain +, - or * (alpha 1).
bool vector_arith(Binary op, const Number& alpha, Arith& kind) {
  switch (op) {
    case Binary::Add:
      kind = Arith::Add;
      return alpha.to_double() == 1;
    case Binary::Sub:
      kind = Arith::Sub;
      return alpha.to_double() == 1;
    case Binary::Mul:
      kind = Arith::Mul;
      return true;
    default:
      return false;
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
    cuda::binary(op, dtype, cuda_strided(out, shape), cuda_strided(a, shape), cuda_strided(b, shape),
                 cuda::shape_of(shape), alpha.to_double(), device.stream);
    return;
  }
  Arith kind{};
  if ((dtype == kFloat32 || dtype == kFloat64) && vector_arith(op, alpha, kind) &&
      same_dense_layout(out, a, b, shape)) {
    dispatch_floating(dtype, name, [&]<class T>() {
      const T *ap = static_cast<const T*>(a.data), *bp = static_cast<const T*>(b.data);
      T* o = static_cast<T*>(out.data);
      cpu::parallel_for(0, numel_of(shape), cpu::kElementwiseGrainSize,
                        [&](int64_t lo, int64_t hi) { cpu::arith(kind, ap + lo, bp + lo, o + lo, hi - lo); });
    });
    return;
  }
  DimVector a_strides, b_strides;
  cpu::ElementwiseIterator iter(
      shape, {output_operand(out, dtype), operand(a, dtype, shape, a_strides), operand(b, dtype, shape, b_strides)},
      kMemoryOrder);
  cpu::binary(op, dtype, iter, alpha, name);
}

void binary_scalar(Binary op, ScalarType dtype, const StridedRef& out, const StridedRef& a, IntArrayRef shape,
                   const Number& scalar, bool scalar_first, const Number& alpha, const DeviceRef& device,
                   std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::binary_scalar(op, dtype, cuda_strided(out, shape), cuda_strided(a, shape), cuda::shape_of(shape),
                        scalar.to_double(), scalar_first, alpha.to_double(), device.stream);
    return;
  }
  if (numel_of(shape) == 1) {
    cpu::binary_scalar_one(op, dtype, out.data, a.data, scalar, scalar_first, alpha, name);
    return;
  }
  DimVector a_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(out, dtype), operand(a, dtype, shape, a_strides)}, kMemoryOrder);
  cpu::binary_scalar(op, dtype, iter, scalar, scalar_first, alpha, name);
}

void binary_scalar_one_element(Binary op, ScalarType dtype, void* out, const void* a, int64_t ndim,
                               const Number& scalar, bool scalar_first, const Number& alpha, const DeviceRef& device,
                               std::string_view name) {
  // Every size 1, so every stride over the shape 0 (as broadcasting gives it).
  const DimVector ones(static_cast<size_t>(ndim), 1), zeros(static_cast<size_t>(ndim), 0);
  binary_scalar(op, dtype, {out, ones, zeros}, {const_cast<void*>(a), ones, zeros}, ones, scalar, scalar_first, alpha,
                device, name);
}

void square(ScalarType dtype, const StridedRef& out, const StridedRef& a, IntArrayRef shape, const DeviceRef& device,
            std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::binary(Binary::Mul, dtype, cuda_strided(out, shape), cuda_strided(a, shape), cuda_strided(a, shape),
                 cuda::shape_of(shape), 1, device.stream);
    return;
  }
  if (numel_of(shape) == 1) {
    cpu::square_one(dtype, out.data, a.data, name);
    return;
  }
  DimVector a_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(out, dtype), operand(a, dtype, shape, a_strides)}, kMemoryOrder);
  cpu::square(dtype, iter, name);
}

void integer_math(UnaryMath op, ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape,
                  const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    GD_CHECK(op == UnaryMath::Neg, std::string(name) + ": integer tensors on CUDA are not supported yet");
    if (numel_of(shape) == 0) return;
    cuda::binary_scalar(Binary::Sub, dtype, cuda_strided(out, shape), cuda_strided(in, shape), cuda::shape_of(shape), 0,
                        /*scalar_first=*/true, 1, device.stream);
    return;
  }
  DimVector in_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(out, dtype), operand(in, dtype, shape, in_strides)},
                                kMemoryOrder);
  cpu::integer_math(op, dtype, iter, name);
}

void compare(Compare op, ScalarType dtype, const StridedRef& out, const StridedRef& a, const StridedRef& b,
             IntArrayRef shape, const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::compare(op, dtype, cuda_strided(out, shape), cuda_strided(a, shape), cuda_strided(b, shape),
                  cuda::shape_of(shape), device.stream);
    return;
  }
  DimVector a_strides, b_strides;
  cpu::ElementwiseIterator iter(
      shape, {output_operand(out, kBool), operand(a, dtype, shape, a_strides), operand(b, dtype, shape, b_strides)},
      kMemoryOrder);
  cpu::compare(op, dtype, iter, name);
}

void predicate(Predicate pred, ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape,
               const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::predicate(pred, dtype, cuda_strided(out, shape), cuda_strided(in, shape), cuda::shape_of(shape),
                    device.stream);
    return;
  }
  DimVector in_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(out, kBool), operand(in, dtype, shape, in_strides)},
                                kMemoryOrder);
  cpu::predicate(pred, dtype, iter, name);
}

void clamp(ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape, const Number* lo,
           const Number* hi, const DeviceRef& device) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::clamp(dtype, cuda_strided(out, shape), cuda_strided(in, shape), cuda::shape_of(shape), lo, hi, device.stream);
    return;
  }
  DimVector in_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(out, dtype), operand(in, dtype, shape, in_strides)},
                                kMemoryOrder);
  cpu::clamp(dtype, iter, lo, hi);
}

void softplus(ScalarType dtype, const StridedRef& out, const StridedRef& in, IntArrayRef shape, const Number& beta,
              const Number& threshold, const DeviceRef& device) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::softplus(dtype, cuda_strided(out, shape), cuda_strided(in, shape), cuda::shape_of(shape), beta, threshold,
                   device.stream);
    return;
  }
  DimVector in_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(out, dtype), operand(in, dtype, shape, in_strides)},
                                kMemoryOrder);
  cpu::softplus(dtype, iter, beta, threshold);
}

void where(ScalarType dtype, const StridedRef& out, const StridedRef& cond, const StridedRef& a, const StridedRef& b,
           IntArrayRef shape, const DeviceRef& device) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::where(dtype, cuda_strided(out, shape), cuda_strided(cond, shape), cuda_strided(a, shape),
                cuda_strided(b, shape), cuda::shape_of(shape), device.stream);
    return;
  }
  DimVector cond_strides, a_strides, b_strides;
  cpu::ElementwiseIterator iter(shape,
                                {output_operand(out, dtype), operand(cond, kBool, shape, cond_strides),
                                 operand(a, dtype, shape, a_strides), operand(b, dtype, shape, b_strides)},
                                kMemoryOrder);
  cpu::where(dtype, iter);
}

void copy(ScalarType dst_dtype, const StridedRef& dst, ScalarType src_dtype, const StridedRef& src, IntArrayRef shape,
          const DeviceRef& device) {
  if (device.is_cuda()) {
    if (numel_of(shape) == 0) return;
    cuda::copy(dst_dtype, cuda_strided(dst, shape), src_dtype, cuda_strided(src, shape), cuda::shape_of(shape),
               device.stream);
    return;
  }
  // float32 <-> float16/bfloat16 between row-major buffers: the vectorized
  // conversions (the iterator would convert one element at a time).
  const bool narrowing = src_dtype == kFloat32 && is_reduced_floating_point(dst_dtype);
  const bool widening = dst_dtype == kFloat32 && is_reduced_floating_point(src_dtype);
  if ((narrowing || widening) && dense_of_shape(dst, shape) && dense_of_shape(src, shape)) {
    dispatch_floating_and_reduced(narrowing ? dst_dtype : src_dtype, "copy_", [&]<class T>() {
      if constexpr (is_reduced_floating_point_v<T>) {
        cpu::parallel_for(0, numel_of(shape), cpu::kElementwiseGrainSize, [&](int64_t b, int64_t e) {
          if (narrowing)
            cpu::convert(static_cast<const float*>(src.data) + b, static_cast<T*>(dst.data) + b, e - b);
          else
            cpu::convert(static_cast<const T*>(src.data) + b, static_cast<float*>(dst.data) + b, e - b);
        });
      }
    });
    return;
  }
  DimVector src_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(dst, dst_dtype), operand(src, src_dtype, shape, src_strides)},
                                kMemoryOrder);
  cpu::cast(dst_dtype, src_dtype, iter);
}

void fill(ScalarType dtype, const StridedRef& out, IntArrayRef shape, const Number& value, const DeviceRef& device) {
  if (device.is_cuda()) {
    const int64_t n = numel_of(shape);
    if (n == 0) return;
    GD_INTERNAL_ASSERT(is_row_major(shape, out.strides), "kernels::fill on a cuda device takes a dense buffer");
    cuda::fill(dtype, out.data, n, value, device.stream);
    return;
  }
  cpu::ElementwiseIterator iter(shape, {output_operand(out, dtype)}, kMemoryOrder);
  cpu::fill(dtype, iter, value);
}

void add_into(ScalarType dtype, const StridedRef& dst, const StridedRef& src, IntArrayRef shape, bool serial,
              const DeviceRef& device, std::string_view name) {
  if (device.is_cuda()) {
    GD_INTERNAL_ASSERT(!serial, "kernels::add_into on a cuda device takes a dst whose elements are distinct");
    if (numel_of(shape) == 0) return;
    cuda::binary(Binary::Add, dtype, cuda_strided(dst, shape), cuda_strided(dst, shape), cuda_strided(src, shape),
                 cuda::shape_of(shape), 1, device.stream);
    return;
  }
  DimVector dst_strides, src_strides;
  cpu::ElementwiseIterator iter(shape, {output_operand(dst, dtype), operand(dst, dtype, shape, dst_strides),
                                        operand(src, dtype, shape, src_strides)});
  cpu::add_into(dtype, iter, serial ? std::numeric_limits<int64_t>::max() : cpu::kElementwiseGrainSize, name);
}

}  // namespace gradiens::kernels
