// The CUDA runtime behind kernels/cuda/runtime.h: device queries, per-thread
// current streams, events, the caching allocator's CUDA backend, copies and
// pinned memory. Built only with the CUDA toolkit (cudart is linked
// statically; the driver is loaded by cudart at run time, never linked).
#include "kernels/cuda/runtime.h"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/cuda/check.h"

namespace gradiens::kernels::cuda {

namespace {

constexpr int kMaxDevices = 16;
constexpr int kStreamPoolSize = 4;

int count_devices() noexcept {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the error so that later calls do not report it
    return 0;
  }
  return count < kMaxDevices ? count : kMaxDevices;
}

int cached_device_count() noexcept {
  static const int count = count_devices();
  return count;
}

// Streams and allocators live until the process ends: destroying them from
// static destructors, after the CUDA runtime is torn down, would crash at exit.
struct DeviceState {
  std::once_flag init;
  cudaStream_t default_stream = nullptr;
  std::array<cudaStream_t, kStreamPoolSize> pool{};
  std::atomic<int> next_pool{0};
  std::once_flag pool_init;
  CachingAllocator* allocator = nullptr;
  std::once_flag allocator_init;
};

DeviceState& state(int device) {
  static std::array<DeviceState, kMaxDevices>* states = new std::array<DeviceState, kMaxDevices>();
  return (*states)[device];
}

int resolve(int device) { return device < 0 ? current_device() : device; }

// A query's answer: done (true), still running (false), or an error.
bool finished(cudaError_t status) {
  if (status == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: clear it
    return false;
  }
  GD_CUDA_CHECK(status);
  return true;
}

thread_local std::array<cudaStream_t, kMaxDevices> current_streams{};

class CudaAllocatorBackend final : public AllocatorBackend {
 public:
  explicit CudaAllocatorBackend(int device) : device_(device) {}
  void* device_malloc(size_t bytes) override {
    DeviceGuard guard(device_);
    void* ptr = nullptr;
    cudaError_t status = cudaMalloc(&ptr, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    GD_CUDA_CHECK(status);
    return ptr;
  }
  void device_free(void* ptr) override {
    DeviceGuard guard(device_);
    GD_CUDA_CHECK(cudaFree(ptr));
  }
  void mem_get_info(size_t& free_bytes, size_t& total_bytes) override {
    DeviceGuard guard(device_);
    GD_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  }
  EventId record_event(StreamId stream) override {
    DeviceGuard guard(device_);
    cudaEvent_t event = nullptr;
    GD_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    GD_CUDA_CHECK(cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)));
    return reinterpret_cast<EventId>(event);
  }
  bool event_done(EventId event) override { return finished(cudaEventQuery(reinterpret_cast<cudaEvent_t>(event))); }
  void synchronize_event(EventId event) override {
    GD_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(event)));
  }
  void destroy_event(EventId event) override { GD_CUDA_CHECK(cudaEventDestroy(reinterpret_cast<cudaEvent_t>(event))); }

 private:
  int device_;
};

void init_device(int device) {
  DeviceState& s = state(device);
  std::call_once(s.init, [&] {
    DeviceGuard guard(device);
    GD_CUDA_CHECK(cudaStreamCreateWithFlags(&s.default_stream, cudaStreamNonBlocking));
  });
}

}  // namespace

DeviceGuard::DeviceGuard(int device) {
  GD_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) GD_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int now = 0;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

bool is_built() noexcept { return true; }
bool is_available() noexcept { return cached_device_count() > 0; }
int device_count() noexcept { return cached_device_count(); }

void check_device_index(int index) {
  int count = device_count();
  GD_CHECK(count > 0, "Found no NVIDIA driver or no CUDA device on this machine: cannot use a cuda tensor");
  GD_CHECK(index >= 0 && index < count, "CUDA error: invalid device ordinal: cuda:" + std::to_string(index) +
                                            " requested, but this machine has " + std::to_string(count) +
                                            " CUDA device(s)");
}

int current_device() {
  check_device_index(0);
  int device = 0;
  GD_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

void set_device(int index) {
  check_device_index(index);
  GD_CUDA_CHECK(cudaSetDevice(index));
}

void synchronize(int device) {
  device = resolve(device);
  check_device_index(device);
  DeviceGuard guard(device);
  GD_CUDA_CHECK(cudaDeviceSynchronize());
}

StreamHandle default_stream(int device) {
  device = resolve(device);
  check_device_index(device);
  init_device(device);
  return state(device).default_stream;
}

StreamHandle current_stream(int device) {
  device = resolve(device);
  cudaStream_t s = current_streams[device];
  return s ? s : static_cast<cudaStream_t>(default_stream(device));
}

void set_current_stream(int device, StreamHandle stream) {
  device = resolve(device);
  check_device_index(device);
  current_streams[device] = static_cast<cudaStream_t>(stream);
}

StreamHandle stream_from_pool(int device, bool high_priority) {
  device = resolve(device);
  check_device_index(device);
  DeviceState& s = state(device);
  std::call_once(s.pool_init, [&] {
    DeviceGuard guard(device);
    int least = 0, greatest = 0;
    GD_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (auto& stream : s.pool) GD_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, least));
    (void)greatest;
  });
  if (high_priority) {
    // A fresh high-priority stream; like PyTorch's pool these are never destroyed.
    DeviceGuard guard(device);
    int least = 0, greatest = 0;
    GD_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t stream = nullptr;
    GD_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest));
    return stream;
  }
  return s.pool[s.next_pool.fetch_add(1) % kStreamPoolSize];
}

bool stream_query(StreamHandle stream) { return finished(cudaStreamQuery(static_cast<cudaStream_t>(stream))); }

void stream_synchronize(StreamHandle stream) { GD_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream))); }

EventHandle event_create(int device) {
  device = resolve(device);
  DeviceGuard guard(device);
  cudaEvent_t event = nullptr;
  GD_CUDA_CHECK(cudaEventCreate(&event));
  return event;
}

void event_destroy(EventHandle event) {
  if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}
void event_record(EventHandle event, StreamHandle stream) {
  GD_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}
void stream_wait_event(StreamHandle stream, EventHandle event) {
  GD_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
}
bool event_query(EventHandle event) { return finished(cudaEventQuery(static_cast<cudaEvent_t>(event))); }
void event_synchronize(EventHandle event) { GD_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); }
float event_elapsed_ms(EventHandle start, EventHandle end) {
  float ms = 0;
  GD_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  return ms;
}

CachingAllocator& device_allocator(int device) {
  device = resolve(device);
  check_device_index(device);
  DeviceState& s = state(device);
  std::call_once(s.allocator_init, [&] {
    s.allocator = new CachingAllocator(std::make_unique<CudaAllocatorBackend>(device), device);
    const char* no_caching = std::getenv("GRADIENS_CUDA_NO_CACHING");
    if (no_caching && std::string(no_caching) == "1") s.allocator->set_caching_enabled(false);
  });
  return *s.allocator;
}

void* device_malloc(size_t bytes, int device) {
  return device_allocator(device).allocate(bytes, reinterpret_cast<StreamId>(current_stream(device)));
}

void device_free(void* ptr, int device) { device_allocator(device).deallocate(ptr); }

void record_stream(void* ptr, int device, StreamHandle stream) {
  device_allocator(device).record_stream(ptr, reinterpret_cast<StreamId>(stream));
}

namespace {
// A copy on the device's current stream; unless non_blocking, the host waits for it.
void copy_on_stream(void* dst, const void* src, size_t bytes, int device, cudaMemcpyKind kind, bool non_blocking) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  auto stream = static_cast<cudaStream_t>(current_stream(device));
  GD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  if (!non_blocking) GD_CUDA_CHECK(cudaStreamSynchronize(stream));
}
}  // namespace

void copy_host_to_device(void* dst, const void* src, size_t bytes, int device, bool non_blocking) {
  copy_on_stream(dst, src, bytes, device, cudaMemcpyHostToDevice, non_blocking);
}

void copy_device_to_host(void* dst, const void* src, size_t bytes, int device, bool non_blocking) {
  copy_on_stream(dst, src, bytes, device, cudaMemcpyDeviceToHost, non_blocking);
}

void copy_device_to_device(void* dst, const void* src, size_t bytes, int device) {
  copy_on_stream(dst, src, bytes, device, cudaMemcpyDeviceToDevice, /*non_blocking=*/true);
}

void* pinned_malloc(size_t bytes) {
  check_device_index(0);
  void* ptr = nullptr;
  GD_CUDA_CHECK(cudaHostAlloc(&ptr, bytes == 0 ? 1 : bytes, cudaHostAllocDefault));
  return ptr;
}

void pinned_free(void* ptr) {
  if (ptr) GD_CUDA_CHECK(cudaFreeHost(ptr));
}

std::string device_name(int device) {
  device = resolve(device);
  check_device_index(device);
  cudaDeviceProp prop{};
  GD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

}  // namespace gradiens::kernels::cuda
