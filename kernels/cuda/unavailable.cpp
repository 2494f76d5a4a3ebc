// Stands in for the CUDA backend in a build without the CUDA toolkit: no
// device is available, and anything that would need one throws gradiens::Error.
#include <atomic>

#include "kernels/cuda/blas.h"
#include "kernels/cuda/multi_tensor.h"
#include "kernels/cuda/random.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::kernels::cuda {

namespace {
[[noreturn]] void unavailable() {
  throw Error("gradiens was built without CUDA support (no CUDA compiler was found at configure time)");
}
std::atomic<bool> tf32_allowed{false};
}  // namespace

bool is_built() noexcept { return false; }
bool is_available() noexcept { return false; }
int device_count() noexcept { return 0; }
void check_device_index(int) { unavailable(); }
int current_device() { unavailable(); }
void set_device(int) { unavailable(); }
DeviceGuard::DeviceGuard(int) { unavailable(); }
DeviceGuard::~DeviceGuard() = default;
void synchronize(int) { unavailable(); }
StreamHandle default_stream(int) { unavailable(); }
StreamHandle current_stream(int) { unavailable(); }
void set_current_stream(int, StreamHandle) { unavailable(); }
StreamHandle stream_from_pool(int, bool) { unavailable(); }
bool stream_query(StreamHandle) { unavailable(); }
void stream_synchronize(StreamHandle) { unavailable(); }
EventHandle event_create(int) { unavailable(); }
void event_destroy(EventHandle) {}
void event_record(EventHandle, StreamHandle) { unavailable(); }
void stream_wait_event(StreamHandle, EventHandle) { unavailable(); }
bool event_query(EventHandle) { unavailable(); }
void event_synchronize(EventHandle) { unavailable(); }
float event_elapsed_ms(EventHandle, EventHandle) { unavailable(); }
CachingAllocator& device_allocator(int) { unavailable(); }
void* device_malloc(size_t, int) { unavailable(); }
void device_free(void*, int) { unavailable(); }
void record_stream(void*, int, StreamHandle) { unavailable(); }
void copy_host_to_device(void*, const void*, size_t, int, bool) { unavailable(); }
void copy_device_to_host(void*, const void*, size_t, int, bool) { unavailable(); }
void copy_device_to_device(void*, const void*, size_t, int) { unavailable(); }
void* pinned_malloc(size_t) { unavailable(); }
void pinned_free(void*) { unavailable(); }
void gemm(ScalarType, bool, bool, int64_t, int64_t, int64_t, double, const void*, int64_t, const void*, int64_t, double,
          void*, int64_t, int) {
  unavailable();
}
void gemm_batched(ScalarType, int64_t, bool, bool, int64_t, int64_t, int64_t, double, const void*, int64_t, int64_t,
                  const void*, int64_t, int64_t, double, void*, int64_t, int64_t, int) {
  unavailable();
}
bool gemm_bias(ScalarType, bool, bool, int64_t, int64_t, int64_t, const void*, int64_t, const void*, int64_t,
               const void*, void*, int64_t, int) {
  unavailable();
}
bool gemm_epilogue(GemmEpilogue, ScalarType, bool, bool, int64_t, int64_t, int64_t, const void*, int64_t, const void*,
                   int64_t, const void*, void*, int64_t, int) {
  unavailable();
}
bool gemm_bias_gradient(ScalarType, bool, bool, int64_t, int64_t, int64_t, const void*, int64_t, const void*, int64_t,
                        void*, int64_t, void*, int) {
  unavailable();
}
void set_allow_tf32(bool allow) { tf32_allowed = allow; }
bool allow_tf32() { return tf32_allowed; }
std::string device_name(int) { unavailable(); }

void fill(ScalarType, void*, int64_t, const Number&, StreamHandle) { unavailable(); }
void copy(ScalarType, const Strided&, ScalarType, const Strided&, const Shape&, StreamHandle) { unavailable(); }
void unary_math(UnaryMath, ScalarType, const void*, void*, int64_t, StreamHandle) { unavailable(); }
void binary(Binary, ScalarType, const Strided&, const Strided&, const Strided&, const Shape&, double, StreamHandle) {
  unavailable();
}
void binary_scalar(Binary, ScalarType, const Strided&, const Strided&, const Shape&, double, bool, double, StreamHandle) {
  unavailable();
}
void compare(Compare, ScalarType, const Strided&, const Strided&, const Strided&, const Shape&, StreamHandle) {
  unavailable();
}
void where(ScalarType, const Strided&, const Strided&, const Strided&, const Strided&, const Shape&, StreamHandle) {
  unavailable();
}
void tanh_backward(ScalarType, const void*, const void*, void*, int64_t, StreamHandle) { unavailable(); }
void sigmoid_backward(ScalarType, const void*, const void*, void*, int64_t, StreamHandle) { unavailable(); }
void threshold_backward(ScalarType, const void*, const void*, double, void*, int64_t, StreamHandle) { unavailable(); }
void tanh_backward_backward(ScalarType, const void*, const void*, const void*, void*, void*, int64_t, StreamHandle) {
  unavailable();
}
void scaled_product(ScalarType, const void*, const void*, const void*, double, void*, int64_t, StreamHandle) {
  unavailable();
}
void scaled_product_backward(ScalarType, const void*, const void*, const void*, const void*, double, void*, void*,
                             void*, int64_t, StreamHandle) {
  unavailable();
}
void reduce(Reduce, ScalarType, const Strided&, const Shape&, int, ScalarType, void*, StreamHandle) { unavailable(); }
void predicate(Predicate, ScalarType, const Strided&, const Strided&, const Shape&, StreamHandle) { unavailable(); }
void clamp(ScalarType, const Strided&, const Strided&, const Shape&, const Number*, const Number*, StreamHandle) {
  unavailable();
}
void softplus(ScalarType, const Strided&, const Strided&, const Shape&, const Number&, const Number&, StreamHandle) {
  unavailable();
}
void eye(ScalarType, void*, int64_t, int64_t, StreamHandle) { unavailable(); }
void linspace(ScalarType, void*, double, double, int64_t, StreamHandle) { unavailable(); }
void range(ScalarType, void*, int64_t, const Number&, const Number&, bool, StreamHandle) { unavailable(); }
void softmax(bool, ScalarType, const Strided&, const Strided&, const Shape&, int, StreamHandle) { unavailable(); }
void softmax_backward(bool, ScalarType, const Strided&, const Strided&, const Strided&, const Shape&, int,
                      StreamHandle) {
  unavailable();
}
void arg_extremum(bool, ScalarType, const Strided&, const Shape&, int, int64_t*, void*, bool, int, StreamHandle) {
  unavailable();
}
void vector_norm(double, ScalarType, const Strided&, const Shape&, int, void*, int, StreamHandle) { unavailable(); }
uint64_t fill_uniform(ScalarType, void*, int64_t, uint64_t, uint64_t, double, double, StreamHandle) { unavailable(); }
uint64_t fill_normal(ScalarType, void*, int64_t, uint64_t, uint64_t, double, double, StreamHandle) { unavailable(); }
uint64_t fill_randint(int64_t*, int64_t, uint64_t, uint64_t, int64_t, int64_t, StreamHandle) { unavailable(); }
uint64_t fill_random_bits(uint32_t*, int64_t, uint64_t, uint64_t, StreamHandle) { unavailable(); }
void multi_tensor_update(const AnyKernel&, size_t, const TensorList<float>&, StreamHandle) { unavailable(); }
void multi_tensor_update(const AnyKernel&, size_t, const TensorList<double>&, StreamHandle) { unavailable(); }

}  // namespace gradiens::kernels::cuda
