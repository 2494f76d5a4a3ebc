// gradiens::cuda: devices, streams, events and memory statistics of the CUDA
// backend, named as in libtorch (torch::cuda, c10::cuda) and torch.cuda.
// Everything here is safe to call in a build or on a machine without CUDA:
// is_available() is false and device_count() 0; the rest throws gradiens::Error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/device.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::cuda {

bool is_available();
int64_t device_count();
// Waits for all work queued on the device (the current one by default).
void synchronize(int64_t device_index = -1);
// gradiens draws the numbers of every device from one counter-based stream, so
// that a seed gives the same numbers on the CPU and the GPU: these seed it, as
// gradiens::manual_seed does.
void manual_seed(uint64_t seed);
void manual_seed_all(uint64_t seed);
int64_t current_device();
void set_device(int64_t device_index);
// "NVIDIA H100 80GB HBM3"
std::string get_device_name(int64_t device_index = -1);

// A CUDA stream handle, as c10::cuda::CUDAStream: cheap to copy, never destroyed.
class Stream {
 public:
  Stream(Device device, kernels::cuda::StreamHandle handle) : device_(device), handle_(handle) {}
  Device device() const { return device_; }
  kernels::cuda::StreamHandle stream() const { return handle_; }
  // Whether all work queued so far has finished.
  bool query() const;
  void synchronize() const;
  friend bool operator==(const Stream& a, const Stream& b) { return a.handle_ == b.handle_; }

 private:
  Device device_;
  kernels::cuda::StreamHandle handle_;
};

Stream getCurrentCUDAStream(int64_t device_index = -1);
Stream getDefaultCUDAStream(int64_t device_index = -1);
Stream getStreamFromPool(bool high_priority = false, int64_t device_index = -1);
void setCurrentCUDAStream(const Stream& stream);

// Sets the current stream of its device for a scope, as c10::cuda::CUDAStreamGuard.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

// A CUDA event with timing, as at::cuda::CUDAEvent / torch.cuda.Event.
class Event {
 public:
  Event() = default;
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  // Records the event on `stream` (the current stream of the current device by default).
  void record();
  void record(const Stream& stream);
  // Makes `stream` wait for the work recorded before this event.
  void block(const Stream& stream) const;
  void wait(const Stream& stream) const { block(stream); }
  bool query() const;
  void synchronize() const;
  // Milliseconds from this event to `end`; both must have been recorded and completed.
  double elapsed_time(const Event& end) const;

 private:
  kernels::cuda::EventHandle handle_ = nullptr;
};

// Memory of the caching allocator, as torch.cuda.*.
int64_t memory_allocated(int64_t device_index = -1);
int64_t max_memory_allocated(int64_t device_index = -1);
int64_t memory_reserved(int64_t device_index = -1);
int64_t max_memory_reserved(int64_t device_index = -1);
void reset_peak_memory_stats(int64_t device_index = -1);
// Returns every cached block that no tensor uses to the driver.
void empty_cache();
std::string memory_summary(int64_t device_index = -1, bool abbreviated = false);
kernels::cuda::DeviceMemoryStats memory_stats(int64_t device_index = -1);
// Caps what the allocator may reserve at `fraction` of the device's memory.
void set_per_process_memory_fraction(double fraction, int64_t device_index = -1);

// torch.backends.cuda.matmul.allow_tf32 (false by default, as in PyTorch).
void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace gradiens::cuda
