// Stands in for the cuSOLVER entry points of kernels/cuda/solver.h in a build
// without the CUDA toolkit: each throws, as kernels/cuda/unavailable.cpp does.
#include "kernels/cuda/solver.h"
#include "kernels/error.h"

namespace gradiens::kernels::cuda::solver {

namespace {
[[noreturn]] void unavailable() {
  throw Error("gradiens was built without CUDA support (no CUDA compiler was found at configure time)");
}
}  // namespace

void getrf(int64_t, int64_t, float*, int64_t, int64_t, int*, int*, int) { unavailable(); }
void getrf(int64_t, int64_t, double*, int64_t, int64_t, int*, int*, int) { unavailable(); }
void getrs(bool, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const int*, const int64_t*, float*, int64_t,
           int64_t, int) {
  unavailable();
}
void getrs(bool, int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const int*, const int64_t*, double*,
           int64_t, int64_t, int) {
  unavailable();
}
void getri(int64_t, int64_t, const float*, int64_t, int64_t, const int*, float*, int64_t, int64_t, int) {
  unavailable();
}
void getri(int64_t, int64_t, const double*, int64_t, int64_t, const int*, double*, int64_t, int64_t, int) {
  unavailable();
}
void potrf(bool, int64_t, int64_t, float*, int64_t, int64_t, int*, int) { unavailable(); }
void potrf(bool, int64_t, int64_t, double*, int64_t, int64_t, int*, int) { unavailable(); }
void syevd(bool, bool, int64_t, int64_t, float*, int64_t, int64_t, float*, int64_t, int*, int) { unavailable(); }
void syevd(bool, bool, int64_t, int64_t, double*, int64_t, int64_t, double*, int64_t, int*, int) { unavailable(); }
void geqrf(int64_t, int64_t, int64_t, float*, int64_t, int64_t, float*, int64_t, int) { unavailable(); }
void geqrf(int64_t, int64_t, int64_t, double*, int64_t, int64_t, double*, int64_t, int) { unavailable(); }
void orgqr(int64_t, int64_t, int64_t, int64_t, float*, int64_t, int64_t, const float*, int64_t, int) { unavailable(); }
void orgqr(int64_t, int64_t, int64_t, int64_t, double*, int64_t, int64_t, const double*, int64_t, int) {
  unavailable();
}
void gesvd(SvdVectors, int64_t, int64_t, int64_t, float*, int64_t, int64_t, float*, int64_t, float*, int64_t, int64_t,
           float*, int64_t, int64_t, int*, int) {
  unavailable();
}
void gesvd(SvdVectors, int64_t, int64_t, int64_t, double*, int64_t, int64_t, double*, int64_t, double*, int64_t,
           int64_t, double*, int64_t, int64_t, int*, int) {
  unavailable();
}

}  // namespace gradiens::kernels::cuda::solver
