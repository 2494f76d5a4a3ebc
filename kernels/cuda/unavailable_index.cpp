// Stands in for the indexing kernels of kernels/cuda/indexing.h in a build
// without the CUDA toolkit: each entry point throws gradiens::Error.
#include "kernels/cuda/indexing.h"
#include "kernels/error.h"

namespace gradiens::kernels::cuda {

namespace {
[[noreturn]] void unavailable() {
  throw Error("gradiens was built without CUDA support (no CUDA compiler was found at configure time)");
}
}  // namespace

void index_gather(ScalarType, const Shape&, const Strided&, const Strided&, const Strided&, int64_t, StreamHandle) {
  unavailable();
}
void index_scatter(ScatterMode, ScalarType, const Shape&, const Strided&, const Strided&, const Strided&, int64_t,
                   double, bool, int, StreamHandle) {
  unavailable();
}
int64_t select_nonzero(ScalarType, const void*, int64_t, int64_t*, int, StreamHandle) { unavailable(); }
void unravel_positions(const int64_t*, int64_t, const Shape&, int64_t*, StreamHandle) { unavailable(); }
void sort_lines(ScalarType, const void*, int64_t, int64_t, bool, int64_t*, int, StreamHandle) { unavailable(); }
void cumulative(bool, ScalarType, const Shape&, int, const Strided&, const Strided&, StreamHandle) { unavailable(); }

void sparse_dense_mm(ScalarType, const int64_t*, const int64_t*, const void*, const void*, int64_t, int64_t, void*,
                     StreamHandle) {
  unavailable();
}

}  // namespace gradiens::kernels::cuda
