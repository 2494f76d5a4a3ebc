// gradiens::cuda (see cuda.h): thin wrappers over kernels/cuda/runtime.h.
#include "engine/cuda.h"

#include <utility>

#include "engine/generator.h"
#include "kernels/error.h"

namespace gradiens::cuda {

namespace kc = kernels::cuda;

namespace {
int resolve(int64_t device_index) {
  return device_index < 0 ? kc::current_device() : static_cast<int>(device_index);
}
}  // namespace

bool is_available() { return kc::is_available(); }
int64_t device_count() { return kc::device_count(); }
void synchronize(int64_t device_index) { kc::synchronize(static_cast<int>(device_index)); }
// One Philox stream serves every device (Note [Philox stream layout]): seeding
// CUDA seeds the default generator.
void manual_seed(uint64_t seed) { gradiens::manual_seed(seed); }
void manual_seed_all(uint64_t seed) { gradiens::manual_seed(seed); }
int64_t current_device() { return kc::current_device(); }
void set_device(int64_t device_index) { kc::set_device(static_cast<int>(device_index)); }
std::string get_device_name(int64_t device_index) { return kc::device_name(static_cast<int>(device_index)); }

bool Stream::query() const { return kc::stream_query(handle_); }
void Stream::synchronize() const { kc::stream_synchronize(handle_); }

Stream getCurrentCUDAStream(int64_t device_index) {
  const int d = resolve(device_index);
  return Stream(Device(kCUDA, d), kc::current_stream(d));
}
Stream getDefaultCUDAStream(int64_t device_index) {
  const int d = resolve(device_index);
  return Stream(Device(kCUDA, d), kc::default_stream(d));
}
Stream getStreamFromPool(bool high_priority, int64_t device_index) {
  const int d = resolve(device_index);
  return Stream(Device(kCUDA, d), kc::stream_from_pool(d, high_priority));
}
void setCurrentCUDAStream(const Stream& stream) { kc::set_current_stream(stream.device().index(), stream.stream()); }

StreamGuard::StreamGuard(const Stream& stream) : previous_(getCurrentCUDAStream(stream.device().index())) {
  setCurrentCUDAStream(stream);
}
StreamGuard::~StreamGuard() { setCurrentCUDAStream(previous_); }

Event::~Event() { kc::event_destroy(handle_); }
Event::Event(Event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    kc::event_destroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}
void Event::record() { record(getCurrentCUDAStream()); }
void Event::record(const Stream& stream) {
  if (!handle_) handle_ = kc::event_create(stream.device().index());
  kc::event_record(handle_, stream.stream());
}
void Event::block(const Stream& stream) const {
  if (handle_) kc::stream_wait_event(stream.stream(), handle_);  // an unrecorded event is already complete
}
bool Event::query() const { return handle_ == nullptr || kc::event_query(handle_); }
void Event::synchronize() const {
  if (handle_) kc::event_synchronize(handle_);
}
double Event::elapsed_time(const Event& end) const {
  GD_CHECK(handle_ && end.handle_,
           "elapsed_time: both events must be recorded before their elapsed time can be measured");
  return kc::event_elapsed_ms(handle_, end.handle_);
}

int64_t memory_allocated(int64_t device_index) { return memory_stats(device_index).allocated_bytes; }
int64_t max_memory_allocated(int64_t device_index) { return memory_stats(device_index).max_allocated_bytes; }
int64_t memory_reserved(int64_t device_index) { return memory_stats(device_index).reserved_bytes; }
int64_t max_memory_reserved(int64_t device_index) { return memory_stats(device_index).max_reserved_bytes; }
void reset_peak_memory_stats(int64_t device_index) { kc::device_allocator(resolve(device_index)).reset_peak_stats(); }
void empty_cache() {
  for (int d = 0; d < kc::device_count(); ++d) kc::device_allocator(d).empty_cache();
}
std::string memory_summary(int64_t device_index, bool abbreviated) {
  return kc::device_allocator(resolve(device_index)).memory_summary(abbreviated);
}
kc::DeviceMemoryStats memory_stats(int64_t device_index) {
  return kc::device_allocator(resolve(device_index)).stats();
}
void set_per_process_memory_fraction(double fraction, int64_t device_index) {
  kc::device_allocator(resolve(device_index)).set_memory_fraction(fraction);
}

void set_allow_tf32(bool allow) { kc::set_allow_tf32(allow); }
bool allow_tf32() { return kc::allow_tf32(); }

}  // namespace gradiens::cuda
