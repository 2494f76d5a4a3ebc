// The LAPACK wrappers of lapack.h: Fortran symbols of the LAPACK inside OpenBLAS,
// declared here (Debian's OpenBLAS ships no lapacke.h), with workspace queries.
#include "kernels/cpu/lapack.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/error.h"

// Fortran calling convention: every argument by pointer, and one hidden length
// argument (size_t with gfortran) per CHARACTER argument, appended at the end.
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t trans_len);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t trans_len);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u, const int* ldu,
             float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info, size_t jobz_len);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t jobz_len);
}

namespace gradiens::kernels::cpu::lapack {
namespace {

// LAPACK counts in 32-bit integers (OpenBLAS's default LP64 interface).
int lapack_int(int64_t v, const char* routine) {
  GD_CHECK(v <= INT_MAX, fmt::format("{}: a dimension or workspace of {} elements is too large for LAPACK's 32-bit "
                                     "integers",
                                     routine, v));
  return static_cast<int>(v);
}

int leading_dim(int64_t ld, int64_t rows, const char* routine) {
  GD_INTERNAL_ASSERT(ld >= std::max<int64_t>(rows, 1), fmt::format("{}: leading dimension {} < {}", routine, ld, rows));
  return lapack_int(ld, routine);
}

int checked_info(int info, const char* routine) {
  GD_INTERNAL_ASSERT(info >= 0, fmt::format("{} rejected argument {}", routine, -info));
  return info;
}

// A workspace query returns the optimal size as a floating-point number.
template <class T>
int workspace_size(T query, const char* routine) {
  return lapack_int(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(query)))), routine);
}

template <class T>
struct Routines;

template <>
struct Routines<float> {
  static constexpr auto getrf = sgetrf_;
  static constexpr auto getri = sgetri_;
  static constexpr auto getrs = sgetrs_;
  static constexpr auto potrf = spotrf_;
  static constexpr auto syevd = ssyevd_;
  static constexpr auto geqrf = sgeqrf_;
  static constexpr auto orgqr = sorgqr_;
  static constexpr auto gesdd = sgesdd_;
};

template <>
struct Routines<double> {
  static constexpr auto getrf = dgetrf_;
  static constexpr auto getri = dgetri_;
  static constexpr auto getrs = dgetrs_;
  static constexpr auto potrf = dpotrf_;
  static constexpr auto syevd = dsyevd_;
  static constexpr auto geqrf = dgeqrf_;
  static constexpr auto orgqr = dorgqr_;
  static constexpr auto gesdd = dgesdd_;
};

template <class T>
int getrf_impl(int64_t n64, T* a, int64_t lda64, int* ipiv) {
  if (n64 == 0) return 0;
  int n = lapack_int(n64, "getrf"), lda = leading_dim(lda64, n64, "getrf"), info = 0;
  Routines<T>::getrf(&n, &n, a, &lda, ipiv, &info);
  return checked_info(info, "getrf");
}

template <class T>
int getri_impl(int64_t n64, T* a, int64_t lda64, const int* ipiv) {
  if (n64 == 0) return 0;
  int n = lapack_int(n64, "getri"), lda = leading_dim(lda64, n64, "getri"), info = 0, lwork = -1;
  T query = 0;
  Routines<T>::getri(&n, a, &lda, ipiv, &query, &lwork, &info);
  checked_info(info, "getri");
  lwork = workspace_size(query, "getri");
  std::vector<T> work(static_cast<size_t>(lwork));
  Routines<T>::getri(&n, a, &lda, ipiv, work.data(), &lwork, &info);
  return checked_info(info, "getri");
}

template <class T>
int getrs_impl(bool transpose, int64_t n64, int64_t nrhs64, const T* a, int64_t lda64, const int* ipiv, T* b,
               int64_t ldb64) {
  if (n64 == 0 || nrhs64 == 0) return 0;
  int n = lapack_int(n64, "getrs"), nrhs = lapack_int(nrhs64, "getrs");
  int lda = leading_dim(lda64, n64, "getrs"), ldb = leading_dim(ldb64, n64, "getrs"), info = 0;
  char trans = transpose ? 'T' : 'N';
  Routines<T>::getrs(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return checked_info(info, "getrs");
}

template <class T>
int potrf_impl(bool upper, int64_t n64, T* a, int64_t lda64) {
  if (n64 == 0) return 0;
  int n = lapack_int(n64, "potrf"), lda = leading_dim(lda64, n64, "potrf"), info = 0;
  char uplo = upper ? 'U' : 'L';
  Routines<T>::potrf(&uplo, &n, a, &lda, &info, 1);
  return checked_info(info, "potrf");
}

template <class T>
int syevd_impl(bool vectors, bool upper, int64_t n64, T* a, int64_t lda64, T* w) {
  if (n64 == 0) return 0;
  int n = lapack_int(n64, "syevd"), lda = leading_dim(lda64, n64, "syevd"), info = 0;
  char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  int lwork = -1, liwork = -1, iquery = 0;
  T query = 0;
  Routines<T>::syevd(&jobz, &uplo, &n, a, &lda, w, &query, &lwork, &iquery, &liwork, &info, 1, 1);
  checked_info(info, "syevd");
  lwork = workspace_size(query, "syevd");
  liwork = std::max(1, iquery);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  Routines<T>::syevd(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  return checked_info(info, "syevd");
}

template <class T>
int geqrf_impl(int64_t m64, int64_t n64, T* a, int64_t lda64, T* tau) {
  if (m64 == 0 || n64 == 0) return 0;
  int m = lapack_int(m64, "geqrf"), n = lapack_int(n64, "geqrf"), lda = leading_dim(lda64, m64, "geqrf");
  int info = 0, lwork = -1;
  T query = 0;
  Routines<T>::geqrf(&m, &n, a, &lda, tau, &query, &lwork, &info);
  checked_info(info, "geqrf");
  lwork = workspace_size(query, "geqrf");
  std::vector<T> work(static_cast<size_t>(lwork));
  Routines<T>::geqrf(&m, &n, a, &lda, tau, work.data(), &lwork, &info);
  return checked_info(info, "geqrf");
}

template <class T>
int orgqr_impl(int64_t m64, int64_t n64, int64_t k64, T* a, int64_t lda64, const T* tau) {
  if (m64 == 0 || n64 == 0) return 0;
  int m = lapack_int(m64, "orgqr"), n = lapack_int(n64, "orgqr"), k = lapack_int(k64, "orgqr");
  int lda = leading_dim(lda64, m64, "orgqr"), info = 0, lwork = -1;
  T query = 0;
  Routines<T>::orgqr(&m, &n, &k, a, &lda, tau, &query, &lwork, &info);
  checked_info(info, "orgqr");
  lwork = workspace_size(query, "orgqr");
  std::vector<T> work(static_cast<size_t>(lwork));
  Routines<T>::orgqr(&m, &n, &k, a, &lda, tau, work.data(), &lwork, &info);
  return checked_info(info, "orgqr");
}

template <class T>
int gesdd_impl(SvdVectors vectors, int64_t m64, int64_t n64, T* a, int64_t lda64, T* s, T* u, int64_t ldu64, T* vt,
               int64_t ldvt64) {
  if (m64 == 0 || n64 == 0) return 0;
  int m = lapack_int(m64, "gesdd"), n = lapack_int(n64, "gesdd"), lda = leading_dim(lda64, m64, "gesdd");
  int64_t k = std::min(m64, n64);
  char jobz = vectors == SvdVectors::All ? 'A' : vectors == SvdVectors::Reduced ? 'S' : 'N';
  // LAPACK wants ldu >= 1 and ldvt >= 1 even when it does not reference u and vt.
  int ldu = 1, ldvt = 1;
  T u_dummy = 0, vt_dummy = 0;
  if (vectors == SvdVectors::None) {
    u = &u_dummy;
    vt = &vt_dummy;
  } else {
    ldu = leading_dim(ldu64, m64, "gesdd");
    ldvt = leading_dim(ldvt64, vectors == SvdVectors::All ? n64 : k, "gesdd");
  }
  std::vector<int> iwork(static_cast<size_t>(8 * k));
  int info = 0, lwork = -1;
  T query = 0;
  Routines<T>::gesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &query, &lwork, iwork.data(), &info, 1);
  checked_info(info, "gesdd");
  lwork = workspace_size(query, "gesdd");
  std::vector<T> work(static_cast<size_t>(lwork));
  Routines<T>::gesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lwork, iwork.data(), &info, 1);
  if (info == -4) return info;  // NaN in the input: LAPACK checks it and bails out
  return checked_info(info, "gesdd");
}

}  // namespace

int getrf(int64_t n, float* a, int64_t lda, int* ipiv) { return getrf_impl(n, a, lda, ipiv); }
int getrf(int64_t n, double* a, int64_t lda, int* ipiv) { return getrf_impl(n, a, lda, ipiv); }
int getri(int64_t n, float* a, int64_t lda, const int* ipiv) { return getri_impl(n, a, lda, ipiv); }
int getri(int64_t n, double* a, int64_t lda, const int* ipiv) { return getri_impl(n, a, lda, ipiv); }
int getrs(bool transpose, int64_t n, int64_t nrhs, const float* a, int64_t lda, const int* ipiv, float* b,
          int64_t ldb) {
  return getrs_impl(transpose, n, nrhs, a, lda, ipiv, b, ldb);
}
int getrs(bool transpose, int64_t n, int64_t nrhs, const double* a, int64_t lda, const int* ipiv, double* b,
          int64_t ldb) {
  return getrs_impl(transpose, n, nrhs, a, lda, ipiv, b, ldb);
}
int potrf(bool upper, int64_t n, float* a, int64_t lda) { return potrf_impl(upper, n, a, lda); }
int potrf(bool upper, int64_t n, double* a, int64_t lda) { return potrf_impl(upper, n, a, lda); }
int syevd(bool vectors, bool upper, int64_t n, float* a, int64_t lda, float* w) {
  return syevd_impl(vectors, upper, n, a, lda, w);
}
int syevd(bool vectors, bool upper, int64_t n, double* a, int64_t lda, double* w) {
  return syevd_impl(vectors, upper, n, a, lda, w);
}
int geqrf(int64_t m, int64_t n, float* a, int64_t lda, float* tau) { return geqrf_impl(m, n, a, lda, tau); }
int geqrf(int64_t m, int64_t n, double* a, int64_t lda, double* tau) { return geqrf_impl(m, n, a, lda, tau); }
int orgqr(int64_t m, int64_t n, int64_t k, float* a, int64_t lda, const float* tau) {
  return orgqr_impl(m, n, k, a, lda, tau);
}
int orgqr(int64_t m, int64_t n, int64_t k, double* a, int64_t lda, const double* tau) {
  return orgqr_impl(m, n, k, a, lda, tau);
}
int gesdd(SvdVectors vectors, int64_t m, int64_t n, float* a, int64_t lda, float* s, float* u, int64_t ldu, float* vt,
          int64_t ldvt) {
  return gesdd_impl(vectors, m, n, a, lda, s, u, ldu, vt, ldvt);
}
int gesdd(SvdVectors vectors, int64_t m, int64_t n, double* a, int64_t lda, double* s, double* u, int64_t ldu,
          double* vt, int64_t ldvt) {
  return gesdd_impl(vectors, m, n, a, lda, s, u, ldu, vt, ldvt);
}

}  // namespace gradiens::kernels::cpu::lapack
