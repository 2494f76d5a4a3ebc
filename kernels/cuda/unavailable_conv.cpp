// Stands in for the CUDA convolution and pooling kernels (conv.h) in a build
// without the CUDA toolkit: every entry point throws gradiens::Error.
#include "kernels/cuda/conv.h"

namespace gradiens::kernels::cuda {

namespace {
[[noreturn]] void unavailable() {
  throw Error("gradiens was built without CUDA support (no CUDA compiler was found at configure time)");
}
}  // namespace

void conv2d_forward(ScalarType, const Conv2dGeometry&, const void*, const void*, void*, int, bool) { unavailable(); }
void conv2d_backward_input(ScalarType, const Conv2dGeometry&, const void*, const void*, void*, int, bool) {
  unavailable();
}
void conv2d_backward_weight(ScalarType, const Conv2dGeometry&, const void*, const void*, void*, int, bool) {
  unavailable();
}
void conv2d_forward_gemm(const Conv2dGeometry&, const double*, const double*, double*, int) { unavailable(); }
void conv2d_backward_input_gemm(const Conv2dGeometry&, const double*, const double*, double*, int) { unavailable(); }
void conv2d_backward_weight_gemm(const Conv2dGeometry&, const double*, const double*, double*, int) { unavailable(); }
int64_t cudnn_version() { unavailable(); }
void max_pool2d_forward(ScalarType, const Pool2dGeometry&, const void*, void*, int64_t*, StreamHandle) {
  unavailable();
}
void max_pool2d_backward(ScalarType, const Pool2dGeometry&, const void*, const int64_t*, void*, StreamHandle) {
  unavailable();
}
void avg_pool2d_forward(ScalarType, const Pool2dGeometry&, const void*, void*, bool, StreamHandle) { unavailable(); }
void avg_pool2d_backward(ScalarType, const Pool2dGeometry&, const void*, void*, bool, StreamHandle) { unavailable(); }

}  // namespace gradiens::kernels::cuda
