// Stands in for kernels/cuda/index_ops.h in a build without the CUDA toolkit:
// the entry point throws gradiens::Error.
#include "kernels/cuda/index_ops.h"
#include "kernels/error.h"

namespace gradiens::kernels::cuda {

void index_scatter_atomic(AtomicReduce, ScalarType, const Shape&, const Strided&, const Strided&, const Strided&,
                          int64_t, StreamHandle) {
  throw Error("gradiens was built without CUDA support (no CUDA compiler was found at configure time)");
}

}  // namespace gradiens::kernels::cuda
