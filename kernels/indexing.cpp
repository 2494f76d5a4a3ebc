// The indexed-copy entry points (kernels/indexing.h): the CPU's strided
// iterator (kernels/cpu/indexing.h), or kernels/cuda/indexing.h on the
// device's stream.
#include "kernels/indexing.h"

#include <atomic>
#include <limits>
#include <string>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/indexing.h"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/indexing.h"

namespace gradiens::kernels {

std::optional<int64_t> index_gather(ScalarType dtype, IntArrayRef shape, const StridedRef& out, const StridedRef& src,
                                    const StridedRef& index, int64_t index_scale, int64_t index_limit,
                                    const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::index_gather(dtype, cuda::shape_of(shape), cuda::strided_of(out), cuda::strided_of(src),
                       cuda::strided_of(index), index_scale, device.stream);
    return std::nullopt;
  }
  const auto esize = static_cast<int64_t>(element_size(dtype));
  cpu::ElementwiseIterator iter(shape, {cpu::Operand{out.data, esize, out.strides},
                                        cpu::Operand{index.data, 8, index.strides},
                                        cpu::Operand{src.data, esize, src.strides}});
  cpu::BadIndex bad;
  dispatch_all(dtype, "gather", [&]<class T>() {
    iter.for_each([&](char** p, const int64_t* st, int64_t n) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t k = *reinterpret_cast<const int64_t*>(p[1] + j * st[1]);
        if (k < 0 || k >= index_limit) {
          bad.record(k);
          continue;
        }
        *reinterpret_cast<T*>(p[0] + j * st[0]) = reinterpret_cast<const T*>(p[2] + j * st[2])[k * index_scale];
      }
    });
  });
  return bad.first();
}

std::optional<int64_t> index_scatter_add(ScalarType dtype, IntArrayRef shape, const StridedRef& dst,
                                         const StridedRef& src, const StridedRef& index, int64_t index_scale,
                                         int64_t index_limit, bool deterministic, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::index_scatter(cuda::ScatterMode::Add, dtype, cuda::shape_of(shape), cuda::strided_of(dst),
                        cuda::strided_of(src), cuda::strided_of(index), index_scale, 1.0, deterministic, device.index,
                        device.stream);
    return std::nullopt;
  }
  const auto esize = static_cast<int64_t>(element_size(dtype));
  cpu::ElementwiseIterator iter(shape, {cpu::Operand{dst.data, esize, dst.strides},
                                        cpu::Operand{index.data, 8, index.strides},
                                        cpu::Operand{src.data, esize, src.strides}});
  cpu::BadIndex bad;
  dispatch_numeric_and_reduced(dtype, "scatter_add", [&]<class T>() {
    // Serial: two index entries may name the same output element.
    iter.for_each(
        [&](char** p, const int64_t* st, int64_t n) {
          for (int64_t j = 0; j < n; ++j) {
            int64_t k = *reinterpret_cast<const int64_t*>(p[1] + j * st[1]);
            if (k < 0 || k >= index_limit) {
              bad.record(k);
              continue;
            }
            reinterpret_cast<T*>(p[0] + j * st[0])[k * index_scale] += *reinterpret_cast<const T*>(p[2] + j * st[2]);
          }
        },
        std::numeric_limits<int64_t>::max());
  });
  return bad.first();
}

namespace {

// The CPU iterator over `shape` with three operands of the given element sizes,
// in the order kernels/cpu/indexing.h names for each loop.
cpu::ElementwiseIterator iterator_of(IntArrayRef shape, const StridedRef& a, int64_t a_size, const StridedRef& b,
                                     int64_t b_size, const StridedRef& c, int64_t c_size) {
  return cpu::ElementwiseIterator(shape, {cpu::Operand{a.data, a_size, a.strides},
                                          cpu::Operand{b.data, b_size, b.strides},
                                          cpu::Operand{c.data, c_size, c.strides}});
}

}  // namespace

std::optional<int64_t> index_scatter(ScalarType dtype, IntArrayRef shape, const StridedRef& dst, const StridedRef& src,
                                     const StridedRef& index, int64_t index_scale, int64_t index_limit,
                                     bool deterministic, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::index_scatter(cuda::ScatterMode::Set, dtype, cuda::shape_of(shape), cuda::strided_of(dst),
                        cuda::strided_of(src), cuda::strided_of(index), index_scale, 1.0, deterministic, device.index,
                        device.stream);
    return std::nullopt;
  }
  const auto esize = static_cast<int64_t>(element_size(dtype));
  return cpu::scatter_along(dtype, iterator_of(shape, dst, esize, index, 8, src, esize), index_scale, index_limit);
}

std::optional<int64_t> index_add(ScalarType dtype, IntArrayRef shape, const StridedRef& dst, const StridedRef& src,
                                 const StridedRef& index, int64_t index_scale, int64_t index_limit, const Number& alpha,
                                 bool deterministic, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::index_scatter(cuda::ScatterMode::Add, dtype, cuda::shape_of(shape), cuda::strided_of(dst),
                        cuda::strided_of(src), cuda::strided_of(index), index_scale, alpha.to_double(), deterministic,
                        device.index, device.stream);
    return std::nullopt;
  }
  const auto esize = static_cast<int64_t>(element_size(dtype));
  return cpu::add_along(dtype, iterator_of(shape, dst, esize, index, 8, src, esize), index_scale, index_limit, alpha);
}

std::optional<int64_t> add_index_offsets(IntArrayRef shape, const StridedRef& offsets, const StridedRef& index,
                                         int64_t size, int64_t stride, const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::add_index_offsets has no CUDA kernel");
  cpu::ElementwiseIterator iter(shape, {cpu::Operand{offsets.data, 8, offsets.strides},
                                        cpu::Operand{index.data, 8, index.strides}});
  return cpu::add_index_offsets(iter, size, stride);
}

void gather_at_offsets(ScalarType dtype, IntArrayRef shape, const StridedRef& out, const StridedRef& src,
                       const StridedRef& offsets, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::index_gather(dtype, cuda::shape_of(shape), cuda::strided_of(out), cuda::strided_of(src),
                       cuda::strided_of(offsets), 1, device.stream);
    return;
  }
  const auto esize = static_cast<int64_t>(element_size(dtype));
  cpu::gather_at_offsets(dtype, iterator_of(shape, out, esize, src, esize, offsets, 8));
}

void put_at_offsets(ScalarType dtype, IntArrayRef shape, const StridedRef& dst, const StridedRef& values,
                    const StridedRef& offsets, bool accumulate, bool deterministic, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::index_scatter(accumulate ? cuda::ScatterMode::Add : cuda::ScatterMode::Set, dtype, cuda::shape_of(shape),
                        cuda::strided_of(dst), cuda::strided_of(values), cuda::strided_of(offsets), 1, 1.0,
                        deterministic, device.index, device.stream);
    return;
  }
  const auto esize = static_cast<int64_t>(element_size(dtype));
  cpu::put_at_offsets(dtype, iterator_of(shape, dst, esize, values, esize, offsets, 8), accumulate);
}

bool gather_rows(const void* src, int64_t rows, int64_t row_bytes, const int64_t* index, int64_t count, void* out,
                 const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::gather_rows has no CUDA kernel");
  return cpu::gather_rows(src, rows, row_bytes, index, count, out);
}

std::optional<int64_t> add_rows(ScalarType dtype, void* dst, int64_t rows, const void* src, int64_t width,
                                const int64_t* index, int64_t count, const Number& alpha, const DeviceRef& device) {
  GD_INTERNAL_ASSERT(!device.is_cuda(), "kernels::add_rows has no CUDA kernel");
  return cpu::add_rows(dtype, dst, rows, src, width, index, count, alpha);
}

void nonzero_indices(ScalarType dtype, const void* in, IntArrayRef sizes,
                     const std::function<int64_t*(int64_t count)>& allocate, const DeviceRef& device) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  const bool scalar = sizes.empty();  // a 0-dim input: count rows of no columns
  if (device.is_cuda()) {
    cuda::DeviceScratch positions(static_cast<size_t>(n) * sizeof(int64_t), device.index);
    const int64_t count = cuda::select_nonzero(dtype, in, n, positions.get<int64_t>(), device.index, device.stream);
    int64_t* out = allocate(count);
    if (count > 0 && !scalar)
      cuda::unravel_positions(positions.get<int64_t>(), count, cuda::shape_of(sizes), out, device.stream);
    return;
  }
  const int64_t count = cpu::count_nonzero(dtype, in, n);
  int64_t* out = allocate(count);
  if (count > 0 && !scalar) cpu::nonzero_indices(dtype, in, sizes, out);
}

}  // namespace gradiens::kernels
