// The CUDA runtime as the engine sees it: devices, the current stream of each
// thread, events, device memory through the caching allocator, copies between
// host and device, and cuBLAS GEMM. Needs no CUDA headers; in a build without
// the toolkit is_available() is false and every other call throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/cuda/caching_allocator.h"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {

// Whether this build contains the CUDA backend.
bool is_built() noexcept;
// A usable device is present (the driver loads and reports at least one GPU).
// Never throws; the answer is computed once.
bool is_available() noexcept;
int device_count() noexcept;
// Throws gradiens::Error naming the devices there are when `index` is not one.
void check_device_index(int index);

int current_device();
void set_device(int index);
// Makes `device` current for a scope and restores the previous one after, as
// c10::cuda::CUDAGuard.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};
// Waits for every stream of the device (the current one for -1).
void synchronize(int device = -1);

// Streams: each thread has a current stream per device, the device's default
// stream (created once, non-blocking with respect to the legacy NULL stream)
// until set_current_stream changes it.
StreamHandle default_stream(int device);
StreamHandle current_stream(int device);
void set_current_stream(int device, StreamHandle stream);
// A new stream from a small pool (round robin), like PyTorch's getStreamFromPool.
StreamHandle stream_from_pool(int device, bool high_priority = false);
bool stream_query(StreamHandle stream);
void stream_synchronize(StreamHandle stream);

// Events (timing enabled).
using EventHandle = void*;
EventHandle event_create(int device);
void event_destroy(EventHandle event);
void event_record(EventHandle event, StreamHandle stream);
void stream_wait_event(StreamHandle stream, EventHandle event);
bool event_query(EventHandle event);
void event_synchronize(EventHandle event);
float event_elapsed_ms(EventHandle start, EventHandle end);

// The caching allocator of a device (created on first use).
CachingAllocator& device_allocator(int device);
// `bytes` of device memory on the device's current stream.
void* device_malloc(size_t bytes, int device);
void device_free(void* ptr, int device);
void record_stream(void* ptr, int device, StreamHandle stream);

// Copies of `bytes` contiguous bytes. A host-to-device or device-to-host copy
// with non_blocking = false returns when the data has arrived (a pageable host
// buffer may be reused at once); non_blocking = true only orders it on the
// stream, which is safe for pinned host memory.
void copy_host_to_device(void* dst, const void* src, size_t bytes, int device, bool non_blocking);
void copy_device_to_host(void* dst, const void* src, size_t bytes, int device, bool non_blocking);
void copy_device_to_device(void* dst, const void* src, size_t bytes, int device);

// Page-locked host memory, for DataLoader(pin_memory) and asynchronous copies.
void* pinned_malloc(size_t bytes);
void pinned_free(void* ptr);

// Row-major GEMM on the device, the same contract as kernels::cpu::gemm (see
// kernels/cpu/gemm.h): C = alpha * op(A) op(B) + beta * C, float32, float64,
// float16 or bfloat16 (accumulated in float32), through cuBLAS on the current
// stream. float32 is IEEE unless TF32 is allowed.
void gemm(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const void* a, int64_t lda, const void* b, int64_t ldb, double beta, void* c, int64_t ldc, int device);
void gemm_batched(ScalarType dtype, int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                  int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c, int device);
// C = op(A) op(B) + bias (bias: n values, one per column of the row-major C,
// Linear's bias) in one cuBLASLt call with its bias epilogue, float32 or
// float64. Returns false, having done nothing, when cuBLASLt is not there or
// has no kernel for the problem (the caller then adds the bias itself).
bool gemm_bias(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
               int64_t lda, const void* b, int64_t ldb, const void* bias, void* c, int64_t ldc, int device);
// PyTorch's torch.backends.cuda.matmul.allow_tf32 (default false).
void set_allow_tf32(bool allow);
bool allow_tf32();

// "NVIDIA H100 80GB HBM3" and similar, for reports.
std::string device_name(int device);

}  // namespace gradiens::kernels::cuda
