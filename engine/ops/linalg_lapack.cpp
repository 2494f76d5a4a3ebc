// gradiens::linalg (engine/linalg.h): checks with PyTorch's messages, batches of
// column-major matrices through the LAPACK entry points of kernels/linalg.h
// (LAPACK on the CPU, cuSOLVER on a cuda device), and the backward formulas of
// det, slogdet, inv, solve, cholesky, eigh and svd, written with differentiable ops.
#include "engine/linalg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "kernels/linalg.h"

namespace gradiens::linalg {

using kernels::SvdVectors;

namespace {

// Shape legend: A is [..., m, n] (square: n x n), the leading dims are the batch;
// B and X are [..., n, k]. LAPACK works on column-major matrices, so each matrix is
// copied into a "column-major buffer": a contiguous tensor [..., n, m] holding A^T
// row-major, which is A column-major (Note [Column-major buffers]).
//
// Note [Column-major buffers]
// Reading a row-major [.., n, m] buffer as column-major gives its transpose, so a
// LAPACK result left in the buffer comes back with .mT(). The copies cost O(n^2)
// next to LAPACK's O(n^3). The LU-based ops (det, inv, solve) follow PyTorch 1.13
// instead: a row-major contiguous A is factorized as A^T (its own layout read
// column-major), other layouts as A, which keeps the zero pivot that inv's error
// names the same as PyTorch's, and saves the transpose.
//
// Note [Several outputs through one node]
// apply<Op> records ops with one output. slogdet, eigh and svd have several
// outputs whose backward formula needs them all, so their op returns one packed
// tensor (eigh: the eigenvalues as column 0, the eigenvectors after it) and the
// user sees (contiguous copies of) views of it. The engine hands backward one gradient for the packed tensor, with zeros
// where an output was not used, and a saved packed output keeps the formula
// differentiable through this same node.
//
// Note [LAPACK on the GPU]
// Every op hands its column-major buffers, a whole batch per call, to
// kernels/linalg.h, in the same layouts on both devices: LAPACK one matrix at a
// time on the CPU, cuSOLVER on a cuda device. Pivots and LAPACK's infos stay in
// the memory of A's device (DeviceInts); the ops whose failure is an error (inv,
// solve, cholesky, eigh, svd) read the infos back once per call (on a GPU a
// synchronisation, as PyTorch's linalg error checks are); det and slogdet never
// wait for the GPU. What det, slogdet, qr and eigh do with the factors around
// the LAPACK calls (pivot signs, diagonal products, triangles, packing) is a
// host loop on the CPU, which costs a small matrix less than tensor ops and keeps
// its results bit for bit as they were, and device tensor ops on a GPU: the
// same values. cuSOLVER's gesvd needs m >= n: a wide matrix is decomposed
// through its transpose there.

// ---- checks ----

// PyTorch words the dtype errors of each function differently: most say
// "Expected a floating point ..." for integers and "Low precision dtypes not
// supported" for half; some name the missing CPU kernel instead
// (`integer_kernel` / `half_kernel`, empty for the generic text).
void check_dtype(const Tensor& A, std::string_view op, std::string_view integer_kernel = "",
                 std::string_view half_kernel = "") {
  ScalarType t = A.dtype();
  if (t == kFloat32 || t == kFloat64) return;
  bool half = t == kFloat16 || t == kBFloat16;
  std::string_view kernel = half ? half_kernel : integer_kernel;
  if (!kernel.empty()) throw Error(fmt::format("\"{}\" not implemented for '{}'", kernel, c10_type_name(t)));
  if (half) throw Error(fmt::format("{}: Low precision dtypes not supported. Got {}", op, c10_type_name(t)));
  throw Error(
      fmt::format("{}: Expected a floating point or complex tensor as input. Got {}", op, c10_type_name(t)));
}

void check_matrix(const Tensor& A, std::string_view op, std::string_view name = "A") {
  GD_CHECK(A.dim() >= 2, fmt::format("{}: The input tensor {} must have at least 2 dimensions.", op, name));
}

void check_square(const Tensor& A, std::string_view op) {
  check_matrix(A, op);
  GD_CHECK(A.size(-1) == A.size(-2), fmt::format("{}: A must be batches of square matrices, but they are {} by {} "
                                                 "matrices",
                                                 op, A.size(-2), A.size(-1)));
}

// PyTorch names the failing matrix only when there is a batch.
std::string batch_prefix(const Tensor& A, int64_t index) {
  return A.dim() > 2 ? fmt::format("(Batch element {}): ", index) : std::string();
}

// ---- batches of column-major matrices ----

IntArrayRef batch_sizes(const Tensor& A) { return IntArrayRef(A.sizes().data(), A.sizes().size() - 2); }

int64_t batch_count(const Tensor& A) {
  int64_t count = 1;
  for (int64_t s : batch_sizes(A)) count *= s;
  return count;
}

DimVector with_matrix(IntArrayRef batch, int64_t rows, int64_t cols) {
  DimVector sizes(batch.begin(), batch.end());
  sizes.push_back(rows);
  sizes.push_back(cols);
  return sizes;
}

DimVector with_vector(IntArrayRef batch, int64_t length) {
  DimVector sizes(batch.begin(), batch.end());
  sizes.push_back(length);
  return sizes;
}

// A fresh contiguous buffer holding each matrix of A column-major (never A's own
// storage: LAPACK overwrites it).
Tensor column_major_copy(const Tensor& A) {
  NoGradGuard no_grad;
  return A.mT().clone(MemoryFormat::Contiguous);
}

// The row-major tensor for column-major results left in `buffer`.
Tensor from_column_major(const Tensor& buffer) {
  NoGradGuard no_grad;
  return buffer.mT().contiguous();
}

// For each matrix of a broadcast batch, the index of the matrix of an operand
// whose batch dims broadcast to it.
std::vector<int64_t> broadcast_batch_index(IntArrayRef batch, IntArrayRef operand_batch) {
  int64_t count = 1;
  for (int64_t s : batch) count *= s;
  std::vector<int64_t> out(static_cast<size_t>(count));
  size_t lead = batch.size() - operand_batch.size();
  for (int64_t b = 0; b < count; ++b) {
    int64_t rest = b, index = 0, stride = 1;
    for (size_t d = batch.size(); d-- > lead;) {
      int64_t i = rest % batch[d];
      rest /= batch[d];
      int64_t size = operand_batch[d - lead];
      if (size != 1) index += i * stride;
      stride *= size;
    }
    out[static_cast<size_t>(b)] = index;
  }
  return out;
}

// ---- pivots and infos (Note [LAPACK on the GPU]) ----

// int32 values (infos, pivots) in the memory of A's device: a host vector for
// a CPU tensor (cheap next to a small matrix's factorization), an int32 tensor
// on a cuda device.
class DeviceInts {
 public:
  DeviceInts(const Tensor& A, IntArrayRef sizes) {
    if (A.device().is_cuda()) {
      tensor_ = empty(sizes, TensorOptions().dtype(kInt32).device(A.device()));
    } else {
      int64_t count = 1;
      for (int64_t s : sizes) count *= s;
      host_.resize(static_cast<size_t>(count));
    }
  }
  int* data() { return tensor_.defined() ? static_cast<int*>(tensor_.data_ptr()) : host_.data(); }
  // The values on the host (read back from the device: a synchronisation).
  std::vector<int> on_host() const {
    if (!tensor_.defined()) return host_;
    Tensor host = tensor_.cpu().contiguous();
    const int32_t* p = host.cpu_data_ptr<int32_t>();
    return std::vector<int>(p, p + host.numel());
  }
  const int* host_data() const { return host_.data(); }  // a CPU tensor's values
  const Tensor& tensor() const { return tensor_; }        // a cuda tensor's values

 private:
  Tensor tensor_;
  std::vector<int> host_;
};

// The first nonzero info of a batch, read back to the host: (batch index,
// info), or (-1, 0) when every matrix succeeded.
std::pair<int64_t, int> first_failure(const DeviceInts& infos) {
  const std::vector<int> values = infos.on_host();
  for (size_t b = 0; b < values.size(); ++b)
    if (values[b] != 0) return {static_cast<int64_t>(b), values[b]};
  return {-1, 0};
}

// ---- LU: det, slogdet, inv, solve ----

// The column-major matrices the LU ops factorize: A^T (transposed) or A.
struct LuInput {
  Tensor buffer;
  bool transposed;
};

LuInput lu_input(const Tensor& A) {
  NoGradGuard no_grad;
  if (A.is_contiguous()) return {A.clone(MemoryFormat::Contiguous), true};
  return {column_major_copy(A), false};
}

// The LU factors of each matrix of A: lu_input's buffer factorized in place,
// pivots [..., n] (LAPACK's 1-based rows) and infos [...], int32 on A's device.
struct LuFactors {
  Tensor buffer;
  bool transposed;
  DeviceInts pivots, infos;
};

LuFactors lu_factor(const Tensor& A) {
  NoGradGuard no_grad;
  const int64_t n = A.size(-1);
  LuInput input = lu_input(A);
  LuFactors lu{input.buffer, input.transposed, DeviceInts(A, with_vector(batch_sizes(A), n)),
               DeviceInts(A, batch_sizes(A))};
  kernels::getrf(A.dtype(), batch_count(A), n, lu.buffer.data_ptr(), n, n * n, lu.pivots.data(), lu.infos.data(),
                 cuda_seam::device_of(A));
  return lu;
}

// Calls f(index, lu, pivots, info) for each matrix of a CPU tensor A [..., n, n]
// after its LU factorization (column-major lu, LAPACK's 1-based pivots).
template <class T, class F>
void for_each_lu(const Tensor& A, F&& f) {
  const int64_t n = A.size(-1);
  LuFactors lu = lu_factor(A);  // det(A^T) = det(A)
  const T* data = lu.buffer.cpu_data_ptr<T>();
  const int* pivots = lu.pivots.host_data();
  const int* infos = lu.infos.host_data();
  for (int64_t b = 0, count = batch_count(A); b < count; ++b) f(b, data + b * n * n, pivots + b * n, infos[b]);
}

// The sign of the row permutation of LAPACK's pivots.
double pivot_sign(const int* pivots, int64_t n) {
  double sign = 1;
  for (int64_t i = 0; i < n; ++i)
    if (pivots[i] != i + 1) sign = -sign;
  return sign;
}

// pivot_sign of each row of pivots [..., n] on the device, float64 [...].
Tensor device_pivot_sign(const Tensor& pivots) {
  NoGradGuard no_grad;
  const int64_t n = pivots.size(-1);
  IntArrayRef batch(pivots.sizes().data(), pivots.sizes().size() - 1);
  if (n == 0) return ones(batch, TensorOptions().dtype(kFloat64).device(pivots.device()));
  Tensor rows = arange(1, n + 1, TensorOptions().dtype(kInt32).device(pivots.device()));
  Tensor swapped = ne(pivots, rows).to(kFloat64);
  return (swapped * -2.0 + 1.0).prod(-1);  // -1 per row swap
}

// (sign, log|det|) of each matrix of A on the GPU, float64 [...], from its LU
// factors as sign_logabsdet computes them: an exactly zero pivot (LAPACK's info
// > 0) makes the sign 0 and log|det| -inf.
std::pair<Tensor, Tensor> device_sign_logabsdet(const Tensor& A) {
  NoGradGuard no_grad;
  LuFactors lu = lu_factor(A);
  Tensor diagonal = lu.buffer.diagonal(0, -2, -1).to(kFloat64);
  return {device_pivot_sign(lu.pivots.tensor()) * diagonal.sign().prod(-1), diagonal.abs().log().sum({-1})};
}

// (sign, log|det|) of each matrix of A, computed in double from its LU factors.
void sign_logabsdet(const Tensor& A, std::vector<double>& sign, std::vector<double>& logabs) {
  int64_t n = A.size(-1), count = batch_count(A);
  sign.assign(static_cast<size_t>(count), 1.0);
  logabs.assign(static_cast<size_t>(count), 0.0);
  dispatch_floating(A.dtype(), "linalg.slogdet", [&]<class T>() {
    for_each_lu<T>(A, [&](int64_t b, const T* lu, const int* pivots, int info) {
      double s = pivot_sign(pivots, n), l = 0;
      for (int64_t i = 0; i < n; ++i) {
        double u = static_cast<double>(lu[i * n + i]);
        if (u < 0) s = -s;
        l += std::log(std::abs(u));
      }
      if (info > 0) s = 0;  // an exactly zero pivot: l is -inf
      sign[static_cast<size_t>(b)] = s;
      logabs[static_cast<size_t>(b)] = l;
    });
  });
}

// The cofactor matrix (the transposed adjugate, the derivative of det) of each
// matrix of A, correct for singular A too: with A = U S Vh,
//   cof(A) = det(U) det(Vh) U diag(prod_{j != i} s_j) Vh.
// A constant: no graph is recorded through it.
Tensor cofactor_matrix(const Tensor& A) {
  NoGradGuard no_grad;
  auto [U, S, Vh] = svd(A.detach(), true);
  Tensor rotation_sign = det(U) * det(Vh);
  int64_t n = A.size(-1);
  Tensor products;
  if (A.device().is_cuda()) {
    // Row i of S with s_i replaced by 1, multiplied out.
    Tensor diagonal = eye(n, TensorOptions().dtype(kBool).device(A.device()));
    products = where(diagonal, Scalar(1.0), S.unsqueeze(-2)).prod(-1);
  } else {
    products = empty(S.sizes(), S.options());
    Tensor s = S.contiguous();
    dispatch_floating(A.dtype(), "linalg.det", [&]<class T>() {
      const T* in = s.cpu_data_ptr<T>();
      T* out = products.cpu_data_ptr<T>();
      for (int64_t b = 0, count = batch_count(A); b < count; ++b)
        for (int64_t i = 0; i < n; ++i) {
          T p = 1;
          for (int64_t j = 0; j < n; ++j)
            if (j != i) p *= in[b * n + j];
          out[b * n + i] = p;
        }
    });
  }
  return (U * products.unsqueeze(-2)).matmul(Vh) * rotation_sign.unsqueeze(-1).unsqueeze(-1);
}

bool any_zero(const Tensor& t) {
  NoGradGuard no_grad;
  return t.numel() > 0 && (t.detach() == 0).any().item<bool>();
}

// d det(A) = det(A) tr(A^-1 dA), so the gradient is g det(A) A^-T; at a singular
// matrix it is g times the cofactor matrix (a polynomial in A, so still defined).
struct Det {
  static constexpr std::string_view name = "LinalgDetBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& A) {
    if (A.device().is_cuda()) {
      NoGradGuard no_grad;
      LuFactors lu = lu_factor(A);
      Tensor out = device_pivot_sign(lu.pivots.tensor()).to(A.dtype()) * lu.buffer.diagonal(0, -2, -1).prod(-1);
      ctx.save_for_backward(A, out);
      return out;
    }
    int64_t n = A.size(-1);
    Tensor out = empty(batch_sizes(A), A.options());
    dispatch_floating(A.dtype(), "linalg.det", [&]<class T>() {
      T* result = out.cpu_data_ptr<T>();
      for_each_lu<T>(A, [&](int64_t b, const T* lu, const int* pivots, int) {
        T d = static_cast<T>(pivot_sign(pivots, n));
        for (int64_t i = 0; i < n; ++i) d *= lu[i * n + i];
        result[b] = d;
      });
    });
    ctx.save_for_backward(A, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [A, d] = ctx.saved<2>();
    if (any_zero(d)) return {g.unsqueeze(-1).unsqueeze(-1) * cofactor_matrix(A)};
    return {(g * d).unsqueeze(-1).unsqueeze(-1) * inv(A).mT()};
  }
};

// Packed output [..., 2]: (sign, logabsdet) (Note [Several outputs through one node]).
// d log|det A| = tr(A^-1 dA); only logabsdet carries a gradient.
struct Slogdet {
  static constexpr std::string_view name = "LinalgSlogdetBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& A) {
    if (A.device().is_cuda()) {
      NoGradGuard no_grad;
      auto [sign, logabs] = device_sign_logabsdet(A);
      Tensor out = cat({sign.unsqueeze(-1), logabs.unsqueeze(-1)}, -1).to(A.dtype());
      ctx.save_for_backward(A, out);
      return out;
    }
    std::vector<double> sign, logabs;
    sign_logabsdet(A, sign, logabs);
    Tensor out = empty(with_vector(batch_sizes(A), 2), A.options());
    dispatch_floating(A.dtype(), "linalg.slogdet", [&]<class T>() {
      T* p = out.cpu_data_ptr<T>();
      for (size_t b = 0; b < sign.size(); ++b) {
        p[2 * b] = static_cast<T>(sign[b]);
        p[2 * b + 1] = static_cast<T>(logabs[b]);
      }
    });
    ctx.save_for_backward(A, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [A, packed] = ctx.saved<2>();
    Tensor g_logabs = g.select(-1, 1).unsqueeze(-1).unsqueeze(-1);
    Tensor sign = packed.select(-1, 0);
    if (any_zero(sign)) {
      // Infinite at a singular matrix: cof(A) / det(A) with det(A) = +-0.
      NoGradGuard no_grad;
      Tensor d = sign * packed.select(-1, 1).exp();
      return {g_logabs * (cofactor_matrix(A) / d.unsqueeze(-1).unsqueeze(-1))};
    }
    return {g_logabs * inv(A).mT()};
  }
};

// The inverse of each matrix of A from its LU factors.
Tensor inverse(const Tensor& A) {
  NoGradGuard no_grad;
  const int64_t n = A.size(-1);
  LuFactors lu = lu_factor(A);
  auto [failed, info] = first_failure(lu.infos);
  GD_CHECK(failed < 0, fmt::format("linalg.inv: {}The diagonal element {} is zero, the inversion could not be "
                                   "completed because the input matrix is singular.",
                                   batch_prefix(A, failed), info));
  Tensor x = empty(A.sizes(), A.options());
  kernels::getri(A.dtype(), batch_count(A), n, lu.buffer.data_ptr(), n, n * n, lu.pivots.data(), x.data_ptr(), n,
                 n * n, cuda_seam::device_of(A));
  // inv(A^T) column-major is inv(A) row-major.
  return lu.transposed ? x : from_column_major(x);
}

// d(A^-1) = -A^-1 dA A^-1, so the gradient is -A^-T g A^-T.
struct Inv {
  static constexpr std::string_view name = "LinalgInvExBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& A) {
    Tensor out = inverse(A);
    ctx.save_for_backward(out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    Tensor inverse_t = ctx.saved(0).mT();
    return {-inverse_t.matmul(g).matmul(inverse_t)};
  }
};

// X = A^-1 B, B's matrix b solved with A's matrix a_index[b].
Tensor solve_with_lu(const Tensor& A, const Tensor& B, const std::vector<int64_t>& a_index) {
  NoGradGuard no_grad;
  const int64_t n = A.size(-1), k = B.size(-1);
  LuFactors lu = lu_factor(A);
  const int64_t failed = first_failure(lu.infos).first;
  GD_CHECK(failed < 0, fmt::format("torch.linalg.solve: {}The solver failed because the input matrix is singular.",
                                   batch_prefix(A, failed)));
  Tensor x = column_major_copy(B);
  kernels::getrs(A.dtype(), lu.transposed, static_cast<int64_t>(a_index.size()), n, k, lu.buffer.data_ptr(), n, n * n,
                 lu.pivots.data(), a_index.data(), x.data_ptr(), n, n * k, cuda_seam::device_of(A));
  return from_column_major(x);
}

// X = A^-1 B for A [batch_A..., n, n] whose batch dims broadcast to B's [batch...,
// n, k]. dX = -A^-1 dA X + A^-1 dB, so gB = A^-T g and gA = -gB X^T (at the
// broadcast shape; the engine sums it down to A's).
struct Solve {
  static constexpr std::string_view name = "LinalgSolveExBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& A, const Tensor& B) {
    Tensor out = solve_with_lu(A, B, broadcast_batch_index(batch_sizes(B), batch_sizes(A)));
    ctx.save_for_backward(A, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [A, X] = ctx.saved<2>();
    Tensor gB = apply<Solve>(A.mT(), g);
    Tensor gA = ctx.needs_input_grad(0) ? -gB.matmul(X.mT()) : Tensor();
    return {gA, ctx.needs_input_grad(1) ? gB : Tensor()};
  }
};

// ---- Cholesky ----

// Phi(X): the lower triangle of X with its diagonal halved, as a constant mask.
Tensor lower_half_diagonal_mask(int64_t n, const TensorOptions& options) {
  Tensor mask = zeros({n, n}, TensorOptions().dtype(kFloat64));  // made on the host
  double* p = mask.cpu_data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) p[i * n + j] = 1.0;
    p[i * n + i] = 0.5;
  }
  return mask.to(options.device(), options.dtype());
}

// The Cholesky factor of each matrix of A, upper or lower.
Tensor cholesky_factor(const Tensor& A, bool upper) {
  NoGradGuard no_grad;
  const int64_t n = A.size(-1);
  Tensor buffer = column_major_copy(A);
  DeviceInts infos(A, batch_sizes(A));
  kernels::potrf(A.dtype(), upper, batch_count(A), n, buffer.data_ptr(), n, n * n, infos.data(),
                 cuda_seam::device_of(A));
  auto [failed, info] = first_failure(infos);
  GD_CHECK(failed < 0, fmt::format("linalg.cholesky: {}The factorization could not be completed because the input is "
                                   "not positive-definite (the leading minor of order {} is not positive-definite).",
                                   batch_prefix(A, failed), info));
  return from_column_major(buffer);  // the other triangle zeroed by potrf
}

// The standard formula (Murray 2016, as in PyTorch): with A = L L^T,
//   gA = sym(L^-T Phi(L^T gL) L^-1),  sym(X) = (X + X^T) / 2.
struct Cholesky {
  static constexpr std::string_view name = "LinalgCholeskyExBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& A, bool upper) {
    Tensor out = cholesky_factor(A, upper);
    ctx.real = upper ? 1 : 0;
    ctx.save_for_backward(out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    bool upper = ctx.real != 0;
    Tensor L = upper ? ctx.saved(0).mT() : ctx.saved(0);
    Tensor gL = upper ? g.mT() : g;
    Tensor L_inverse = inv(L);
    Tensor phi = L.mT().matmul(gL) * lower_half_diagonal_mask(L.size(-1), L.options());
    Tensor gA = L_inverse.mT().matmul(phi).matmul(L_inverse);
    return {(gA + gA.mT()) * 0.5};
  }
};

// ---- eigh ----

// Eigh's packed output (below) for A, read from its lower (upper) triangle.
Tensor packed_eigh(const Tensor& A, bool upper) {
  NoGradGuard no_grad;
  const int64_t n = A.size(-1);
  Tensor buffer = column_major_copy(A);  // overwritten by the eigenvectors
  Tensor w = empty(with_vector(batch_sizes(A), n), A.options());
  DeviceInts infos(A, batch_sizes(A));
  kernels::syevd(A.dtype(), true, upper, batch_count(A), n, buffer.data_ptr(), n, n * n, w.data_ptr(), n,
                 infos.data(), cuda_seam::device_of(A));
  auto [failed, info] = first_failure(infos);
  GD_CHECK(failed < 0, fmt::format("linalg.eigh: {}The algorithm failed to converge because the input matrix is "
                                   "ill-conditioned or has too many repeated eigenvalues (error code: {}).",
                                   batch_prefix(A, failed), info));
  // Packed by a host loop on the CPU (cheaper than cat for a small matrix), by
  // cat on a GPU; V(i, j) is buffer[j, i].
  if (A.device().is_cuda()) return cat({w.unsqueeze(-1), buffer.mT()}, -1);
  Tensor out = empty(with_matrix(batch_sizes(A), n, n + 1), A.options());
  dispatch_floating(A.dtype(), "linalg.eigh", [&]<class T>() {
    const T* vectors = buffer.cpu_data_ptr<T>();
    const T* values = w.cpu_data_ptr<T>();
    T* packed = out.cpu_data_ptr<T>();
    for (int64_t b = 0, count = batch_count(A); b < count; ++b) {
      const T* a = vectors + b * n * n;
      T* p = packed + b * n * (n + 1);
      for (int64_t i = 0; i < n; ++i) {
        p[i * (n + 1)] = values[b * n + i];
        for (int64_t j = 0; j < n; ++j) p[i * (n + 1) + 1 + j] = a[i + j * n];
      }
    }
  });
  return out;
}

// Packed output [..., n, n + 1]: column 0 the eigenvalues w, columns 1.. the
// eigenvectors V (Note [Several outputs through one node]). For symmetric A with
// distinct eigenvalues (dA symmetric, V^T V = I):
//   dw = diag(V^T dA V),  dV = V (F o (V^T dA V)),  F_ij = 1 / (w_j - w_i) (i != j), 0,
// so gA = V (diag(gw) + F o (V^T gV)) V^T. A sign flip of an eigenvector changes
// V^T gV unless the loss is invariant to it; then only the sign-free part enters.
struct Eigh {
  static constexpr std::string_view name = "LinalgEighBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& A, bool upper) {
    Tensor out = packed_eigh(A, upper);
    ctx.save_for_backward(out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    Tensor packed = ctx.saved(0);
    int64_t n = packed.size(-2);
    Tensor w = packed.select(-1, 0), V = packed.narrow(-1, 1, n);
    Tensor gw = g.select(-1, 0), gV = g.narrow(-1, 1, n);
    Tensor eye_n = eye(n, packed.options());
    // w_j - w_i, with 1 on the diagonal so that the division there is defined (and masked).
    Tensor gaps = w.unsqueeze(-2) - w.unsqueeze(-1) + eye_n;
    Tensor inner = V.mT().matmul(gV) / gaps * (1.0 - eye_n) + eye_n * gw.unsqueeze(-2);
    return {V.matmul(inner).matmul(V.mT())};
  }
};

// ---- forward-only ops ----

// Marks `result` as computed from A by an op without a derivative: backward
// through it throws instead of silently giving a wrong or zero gradient.
template <const char* NodeName, const char* OpName>
struct NoDerivative {
  static constexpr std::string_view name = NodeName;
  static Tensor forward(Ctx&, const Tensor&, const Tensor& result) { return result; }
  static GradList backward(Ctx&, const Tensor&) {
    throw Error(
        fmt::format("the derivative for '{0}' is not implemented: gradiens computes {0} forward only. "
                    "Detach its input, or use a differentiable formulation.",
                    OpName));
  }
};

constexpr char kQrNode[] = "LinalgQrBackward0", kQrOp[] = "linalg.qr";

Tensor without_derivative_qr(const Tensor& A, const Tensor& result) {
  return apply<NoDerivative<kQrNode, kQrOp>>(A, result);
}

// QR of each matrix of A: its column-major buffer [..., n, m] is factorized in
// place, R (zeros) gets the upper triangle of its first rows, and q_buffer
// (undefined for mode "r") becomes Q column-major [..., q_cols, m]. R and Q's
// starting columns (the k reflectors, then the identity's columns, as LAPACK's
// orgqr sets them) are copied by host loops on the CPU, where a small matrix
// would spend more in tensor ops than in LAPACK, and by tensor ops on a GPU.
void qr_factor(const Tensor& A, const Tensor& buffer, Tensor& R, Tensor& q_buffer) {
  NoGradGuard no_grad;
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), count = batch_count(A);
  const kernels::DeviceRef device = cuda_seam::device_of(A);
  Tensor tau = empty(with_vector(batch_sizes(A), k), A.options());
  kernels::geqrf(A.dtype(), count, m, n, buffer.data_ptr(), m, m * n, tau.data_ptr(), k, device);
  const int64_t r_rows = std::min(R.size(-2), k);
  const int64_t q_cols = q_buffer.defined() ? q_buffer.size(-2) : 0;
  if (device.is_cuda()) {
    R.narrow(-2, 0, r_rows).copy_(from_column_major(buffer).narrow(-2, 0, r_rows).triu());
    if (q_buffer.defined()) {
      q_buffer = eye(q_cols, m, A.options()).expand(q_buffer.sizes()).contiguous();
      q_buffer.narrow(-2, 0, k).copy_(buffer.narrow(-2, 0, k));
    }
  } else {
    dispatch_floating(A.dtype(), "linalg.qr", [&]<class T>() {
      const T* a_all = buffer.cpu_data_ptr<T>();
      T* r_all = R.cpu_data_ptr<T>();
      T* q_all = q_buffer.defined() ? q_buffer.cpu_data_ptr<T>() : nullptr;
      for (int64_t b = 0; b < count; ++b) {
        const T* a = a_all + b * m * n;
        T* r = r_all + b * R.size(-2) * n;
        for (int64_t i = 0; i < r_rows; ++i)
          for (int64_t j = i; j < n; ++j) r[i * n + j] = a[i + j * m];
        if (q_all == nullptr) continue;
        T* q = q_all + b * m * q_cols;
        std::copy(a, a + m * k, q);
        std::fill(q + m * k, q + m * q_cols, T(0));
        for (int64_t j = k; j < q_cols; ++j) q[j + j * m] = 1;
      }
    });
  }
  if (!q_buffer.defined() || k == 0) return;
  kernels::orgqr(A.dtype(), count, m, q_cols, k, q_buffer.data_ptr(), m, m * q_cols, tau.data_ptr(), k, device);
}

// ---- SVD ----

// The SVD of each matrix of A: S always; U and Vh unless `vectors` is None.
struct SvdResult {
  Tensor U, S, Vh;
};

SvdResult compute_svd(const Tensor& A, SvdVectors vectors) {
  NoGradGuard no_grad;
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const bool all = vectors == SvdVectors::All, with_vectors = vectors != SvdVectors::None;
  const kernels::DeviceRef device = cuda_seam::device_of(A);
  if (m < n && kernels::svd_needs_tall_matrices(device)) {  // A^T = V S U^T
    SvdResult t = compute_svd(A.mT(), vectors);
    if (!with_vectors) return t;
    return {t.Vh.mT().contiguous(), t.S, t.U.mT().contiguous()};
  }
  const int64_t u_cols = all ? m : k, vt_rows = all ? n : k;
  IntArrayRef batch = batch_sizes(A);
  Tensor buffer = column_major_copy(A);
  SvdResult r;
  r.S = empty(with_vector(batch, k), A.options());
  // Column-major U (m x u_cols) and Vh (vt_rows x n), turned row-major at the end.
  Tensor u_buffer = with_vectors ? empty(with_matrix(batch, u_cols, m), A.options()) : Tensor();
  Tensor vt_buffer = with_vectors ? empty(with_matrix(batch, n, vt_rows), A.options()) : Tensor();
  if (k == 0 && all) {  // nothing to decompose: the complete bases are identities
    u_buffer.copy_(eye(m, A.options()).expand(u_buffer.sizes()));
    vt_buffer.copy_(eye(n, A.options()).expand(vt_buffer.sizes()));
  }
  DeviceInts infos(A, batch);
  kernels::svd(A.dtype(), vectors, batch_count(A), m, n, buffer.data_ptr(), m, m * n, r.S.data_ptr(), k,
               with_vectors ? u_buffer.data_ptr() : nullptr, m, m * u_cols,
               with_vectors ? vt_buffer.data_ptr() : nullptr, std::max<int64_t>(vt_rows, 1), vt_rows * n,
               infos.data(), device);
  auto [failed, info] = first_failure(infos);
  if (failed >= 0) {
    // LAPACK names a non-finite input (info -4); cuSOLVER does not, so the input is looked at.
    const bool non_finite = info == -4 || (device.is_cuda() && !isfinite(A).all().item<bool>());
    GD_CHECK(!non_finite,
             "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.");
    throw Error(fmt::format("linalg.svd: {}The algorithm failed to converge because the input matrix is "
                            "ill-conditioned or has too many repeated singular values (error code: {}).",
                            batch_prefix(A, failed), info));
  }
  if (with_vectors) {
    r.U = from_column_major(u_buffer);
    r.Vh = from_column_major(vt_buffer);
  }
  return r;
}

bool records_graph(const Tensor& A) { return derivative_needed(A); }

// Packed output [..., m * u_cols + k + vh_rows * n]: U, S and Vh flattened one
// after the other (Note [Several outputs through one node]).
struct SvdParts {
  Tensor U, S, Vh;
};

SvdParts unpack_svd(const Tensor& packed, int64_t m, int64_t n, bool full_matrices) {
  int64_t k = std::min(m, n), u_cols = full_matrices ? m : k, vh_rows = full_matrices ? n : k;
  IntArrayRef batch(packed.sizes().data(), packed.sizes().size() - 1);
  return {packed.narrow(-1, 0, m * u_cols).reshape(with_matrix(batch, m, u_cols)), packed.narrow(-1, m * u_cols, k),
          packed.narrow(-1, m * u_cols + k, vh_rows * n).reshape(with_matrix(batch, vh_rows, n))};
}

bool all_zero(const Tensor& t) {
  NoGradGuard no_grad;
  return t.numel() == 0 || (t.detach() == 0).all().item<bool>();
}

// The SVD's backward (PyTorch's svd_backward, real case). With A = U S V^T
// (U [m, k], V [n, k]), E_ij = s_j^2 - s_i^2 (1 on the diagonal) and
// skew(X) = X - X^T:
//   gA = U [ (skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS) ] V^T
//        + (I_m - U U^T) gU S^-1 V^T + U S^-1 gV^T (I_n - V V^T).
// It needs distinct singular values, and, when gU or gV is used, a full-rank A
// and a loss that does not depend on the signs of the singular vector pairs.
// A gradient that is exactly zero (an output that was not used) is left out:
// svdvals alone gives U diag(gS) V^T, finite even for repeated singular values.
Tensor svd_backward(Tensor gU, const Tensor& gS, Tensor gVh, const Tensor& U, const Tensor& S, const Tensor& Vh) {
  if (all_zero(gU)) gU = Tensor();
  if (all_zero(gVh)) gVh = Tensor();
  int64_t m = U.size(-2), n = Vh.size(-1);
  if (!gU.defined() && !gVh.defined())
    return m >= n ? U.matmul(gS.unsqueeze(-1) * Vh) : (U * gS.unsqueeze(-2)).matmul(Vh);
  Tensor S2 = S * S;
  Tensor eye_k = eye(S.size(-1), S.options());
  Tensor E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye_k;
  auto skew = [](const Tensor& X) { return X - X.mT(); };
  Tensor inner;
  if (gU.defined() && gVh.defined())
    inner = (skew(U.mT().matmul(gU)) * S.unsqueeze(-2) + S.unsqueeze(-1) * skew(Vh.matmul(gVh.mT()))) / E;
  else if (gU.defined())
    inner = skew(U.mT().matmul(gU)) / E * S.unsqueeze(-2);
  else
    inner = S.unsqueeze(-1) * (skew(Vh.matmul(gVh.mT())) / E);
  inner = inner + eye_k * gS.unsqueeze(-2);
  if (m > n && gU.defined()) {
    Tensor gU_Sinv = gU / S.unsqueeze(-2);
    return (U.matmul(inner) + gU_Sinv - U.matmul(U.mT().matmul(gU_Sinv))).matmul(Vh);
  }
  if (m < n && gVh.defined()) {
    Tensor Sinv_gVh = gVh / S.unsqueeze(-1);
    return U.matmul(inner.matmul(Vh) + Sinv_gVh - Sinv_gVh.matmul(Vh.mT()).matmul(Vh));
  }
  return U.matmul(inner).matmul(Vh);
}

// With full_matrices, the columns of U past k (rows of Vh past k) are any basis of
// a complement: as in PyTorch, their gradient is ignored.
struct Svd {
  static constexpr std::string_view name = "LinalgSvdBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& A, bool full_matrices) {
    SvdResult r = compute_svd(A, full_matrices ? SvdVectors::All : SvdVectors::Reduced);
    IntArrayRef batch = batch_sizes(A);
    NoGradGuard no_grad;
    Tensor out = cat({r.U.reshape(with_vector(batch, r.U.size(-2) * r.U.size(-1))), r.S,
                      r.Vh.reshape(with_vector(batch, r.Vh.size(-2) * r.Vh.size(-1)))},
                     -1);
    ctx.shape = {A.size(-2), A.size(-1)};
    ctx.real = full_matrices ? 1 : 0;
    ctx.save_for_backward(out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    int64_t m = ctx.shape[0], n = ctx.shape[1], k = std::min(m, n);
    bool full_matrices = ctx.real != 0;
    SvdParts r = unpack_svd(ctx.saved(0), m, n, full_matrices), gr = unpack_svd(g, m, n, full_matrices);
    if (full_matrices) {
      r.U = r.U.narrow(-1, 0, k);
      r.Vh = r.Vh.narrow(-2, 0, k);
      gr.U = gr.U.narrow(-1, 0, k);
      gr.Vh = gr.Vh.narrow(-2, 0, k);
    }
    return {svd_backward(gr.U, gr.S, gr.Vh, r.U, r.S, r.Vh)};
  }
};

// ---- matrix_norm and cond ----

// The two matrix dims, wrapped and checked.
std::pair<int64_t, int64_t> norm_dims(const Tensor& A, IntArrayRef dim) {
  GD_CHECK(dim.size() == 2, fmt::format("linalg.matrix_norm: dim must be a 2-tuple. Got {}", fmt::join(dim, " ")));
  int64_t d0 = wrap_dim(dim[0], A.dim()), d1 = wrap_dim(dim[1], A.dim());
  GD_CHECK(d0 != d1, fmt::format("linalg.matrix_norm: dims must be different. Got ({}, {})", dim[0], dim[1]));
  return {d0, d1};
}

void check_norm_input(const Tensor& A) {
  check_dtype(A, "linalg.matrix_norm");
  check_matrix(A, "linalg.matrix_norm");
}

// A function of the singular values over the dims (d0, d1): they are moved last,
// and with keepdim restored as size-1 dims.
template <class F>
Tensor singular_value_norm(const Tensor& A, int64_t d0, int64_t d1, bool keepdim, F&& reduce) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < A.dim(); ++d)
    if (d != d0 && d != d1) order.push_back(d);
  order.push_back(d0);
  order.push_back(d1);
  Tensor result = reduce(svdvals(A.permute(order)));
  if (keepdim) {
    result = result.unsqueeze(std::min(d0, d1));
    result = result.unsqueeze(std::max(d0, d1));
  }
  return result;
}

// Max (or min) over extreme_dim of the absolute sums over sum_dim.
Tensor absolute_sum_norm(const Tensor& A, int64_t sum_dim, int64_t extreme_dim, bool max, bool keepdim) {
  Tensor sums = A.abs().sum({sum_dim}, true);
  Tensor result = max ? sums.amax({extreme_dim}, true) : sums.amin({extreme_dim}, true);
  return keepdim ? result : result.squeeze(std::max(sum_dim, extreme_dim)).squeeze(std::min(sum_dim, extreme_dim));
}

// Norm of each matrix of A for one of cond's orders.
Tensor cond_norm(const Tensor& A, const std::variant<double, std::string_view>& p) {
  if (auto* name = std::get_if<std::string_view>(&p)) return matrix_norm(A, *name);
  return matrix_norm(A, std::get<double>(p));
}

std::string order_name(double p) {
  if (std::isinf(p)) return p > 0 ? "inf" : "-inf";
  return fmt::format("{}", p);
}

// cond for "fro", "nuc", +-1, +-inf: norm(A) * norm(A^-1), inf where A is singular.
Tensor cond_through_inverse(const Tensor& A, const std::variant<double, std::string_view>& p) {
  std::string name =
      std::holds_alternative<double>(p) ? order_name(std::get<double>(p)) : std::string(std::get<std::string_view>(p));
  check_square(A, fmt::format("linalg.cond(ord={})", name));
  // Singular matrices are swapped for the identity before inverting, so that inv
  // does not throw; their result is replaced by inf afterwards.
  Tensor singular;
  if (A.device().is_cuda()) {
    NoGradGuard no_grad;
    singular = eq(device_sign_logabsdet(A).first, 0);
  } else {
    NoGradGuard no_grad;
    std::vector<double> sign, logabs;
    sign_logabsdet(A, sign, logabs);
    singular = empty(batch_sizes(A), TensorOptions().dtype(kBool));
    bool* s = singular.cpu_data_ptr<bool>();
    for (size_t b = 0; b < sign.size(); ++b) s[b] = sign[b] == 0;
  }
  Tensor mask = singular.unsqueeze(-1).unsqueeze(-1);
  Tensor safe = where(mask, eye(A.size(-1), A.options()), A);
  Tensor result = cond_norm(A, p) * cond_norm(inv(safe), p);
  return where(singular, std::numeric_limits<double>::infinity(), result);
}

}  // namespace

// ---- the public functions ----

Tensor det(const Tensor& A) {
  check_dtype(A, "linalg.det", "", "lu_cpu");
  check_square(A, "linalg.det");
  return apply<Det>(A);
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  check_dtype(A, "linalg.slogdet");
  check_square(A, "linalg.slogdet");
  Tensor packed = apply<Slogdet>(A);
  return {packed.select(-1, 0).detach().contiguous(), packed.select(-1, 1).contiguous()};
}

Tensor inv(const Tensor& A) {
  check_dtype(A, "linalg.inv");
  check_square(A, "linalg.inv");
  return apply<Inv>(A);
}

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  check_dtype(A, "linalg.solve");
  GD_CHECK(A.dtype() == B.dtype(), fmt::format("linalg.solve: Expected A and B to have the same dtype, but found A of "
                                               "type {} and B of type {} instead",
                                               c10_type_name(A.dtype()), c10_type_name(B.dtype())));
  check_square(A, "linalg.solve");
  // B is a batch of vectors when it is 1-D or has A's shape without the last dim.
  bool vector_case = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == IntArrayRef(A.sizes().data(), B.dim()));
  Tensor Bm = vector_case ? B.unsqueeze(-1) : B;
  check_matrix(Bm, "linalg.solve", "B");
  int64_t a_dim = left ? A.size(-2) : A.size(-1), b_dim = left ? Bm.size(-2) : Bm.size(-1);
  GD_CHECK(a_dim == b_dim, fmt::format("linalg.solve: Incompatible shapes of A and B for the equation {} ({}x{} and "
                                       "{}x{})",
                                       left ? "AX = B" : "XA = B", A.size(-2), A.size(-1), Bm.size(-2), Bm.size(-1)));
  // X A = B is A^T X^T = B^T.
  Tensor At = left ? A : A.mT(), Bt = left ? Bm : Bm.mT();
  DimVector batch = broadcast_shapes(batch_sizes(At), batch_sizes(Bt));
  Tensor X = apply<Solve>(At, Bt.expand(with_matrix(batch, Bt.size(-2), Bt.size(-1))));
  if (!left) X = X.mT();
  return vector_case ? X.squeeze(-1) : X;
}

Tensor cholesky(const Tensor& A, bool upper) {
  check_dtype(A, "linalg.cholesky", "", "cholesky_cpu");
  check_square(A, "linalg.cholesky");
  return apply<Cholesky>(A, upper);
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode) {
  GD_CHECK(mode == "reduced" || mode == "complete" || mode == "r",
           fmt::format("qr received unrecognized mode '{}' but expected one of 'reduced' (default), 'r', or "
                       "'complete'",
                       mode));
  check_dtype(A, "linalg.qr", "", "geqrf_cpu");
  check_matrix(A, "linalg.qr");
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  bool complete = mode == "complete", want_q = mode != "r";
  int64_t r_rows = complete ? m : k, q_cols = complete ? m : k;
  IntArrayRef batch = batch_sizes(A);
  Tensor Q, R;
  {
    NoGradGuard no_grad;
    Tensor buffer = column_major_copy(A);
    R = zeros(with_matrix(batch, r_rows, n), A.options());
    // Column-major Q: m x q_cols.
    Tensor q_buffer = want_q ? empty(with_matrix(batch, q_cols, m), A.options()) : Tensor();
    qr_factor(A, buffer, R, q_buffer);
    Q = want_q ? from_column_major(q_buffer) : empty({0}, A.options());
  }
  if (records_graph(A)) {
    if (want_q) Q = without_derivative_qr(A, Q);
    R = without_derivative_qr(A, R);
  }
  return {Q, R};
}

std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO) {
  GD_CHECK(UPLO == "L" || UPLO == "U" || UPLO == "l" || UPLO == "u",
           fmt::format("Expected UPLO argument to be 'L' or 'U', but got {}", UPLO));
  check_dtype(A, "linalg.eigh", "linalg_eigh_cpu", "linalg_eigh_cpu");
  check_square(A, "linalg.eigh");
  int64_t n = A.size(-1);
  Tensor packed = apply<Eigh>(A, UPLO == "U" || UPLO == "u");
  return {packed.select(-1, 0).contiguous(), packed.narrow(-1, 1, n).contiguous()};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices) {
  check_dtype(A, "linalg.svd", "", "linalg_svd_cpu");
  check_matrix(A, "linalg.svd");
  if (!records_graph(A)) {
    SvdResult r = compute_svd(A, full_matrices ? SvdVectors::All : SvdVectors::Reduced);
    return {r.U, r.S, r.Vh};
  }
  SvdParts r = unpack_svd(apply<Svd>(A, full_matrices), A.size(-2), A.size(-1), full_matrices);
  return {r.U.contiguous(), r.S.contiguous(), r.Vh.contiguous()};
}

Tensor svdvals(const Tensor& A) {
  check_dtype(A, "linalg.svd", "", "linalg_svd_cpu");
  check_matrix(A, "linalg.svd");
  // The backward needs the singular vectors; without a graph they are skipped.
  if (!records_graph(A)) return compute_svd(A, SvdVectors::None).S;
  return std::get<1>(svd(A, false));
}

Tensor matrix_norm(const Tensor& A, std::string_view ord, IntArrayRef dim, bool keepdim) {
  check_norm_input(A);
  auto [d0, d1] = norm_dims(A, dim);
  if (ord == "fro") return A.norm(2, {d0, d1}, keepdim);
  GD_CHECK(ord == "nuc", fmt::format("linalg.matrix_norm: Order {} not supported.", ord));
  return singular_value_norm(A, d0, d1, keepdim, [](const Tensor& s) { return s.sum({-1}); });
}

Tensor matrix_norm(const Tensor& A, const char* ord, IntArrayRef dim, bool keepdim) {
  return matrix_norm(A, std::string_view(ord), dim, keepdim);
}

Tensor matrix_norm(const Tensor& A, Scalar ord, IntArrayRef dim, bool keepdim) {
  check_norm_input(A);
  double p = ord.to_double();
  GD_CHECK(std::abs(p) == 1 || std::abs(p) == 2 || std::isinf(p),
           fmt::format("linalg.matrix_norm: Order {} not supported.",
                       ord.is_floating_point() ? fmt::format("{}", p) : std::to_string(ord.to_long())));
  auto [d0, d1] = norm_dims(A, dim);
  if (std::abs(p) == 2)
    return singular_value_norm(A, d0, d1, keepdim,
                               [p](const Tensor& s) { return p > 0 ? s.amax({-1}) : s.amin({-1}); });
  // ord 1 is the largest absolute column sum (sum over d0), inf the largest row sum.
  return std::abs(p) == 1 ? absolute_sum_norm(A, d0, d1, p > 0, keepdim) : absolute_sum_norm(A, d1, d0, p > 0, keepdim);
}

Tensor cond(const Tensor& A, std::optional<Scalar> p) {
  GD_CHECK(A.dim() >= 2, "linalg.cond: The input tensor must have at least 2 dimensions.");
  double order = p ? p->to_double() : 2.0;
  if (std::abs(order) == 2) {
    Tensor s = svdvals(A);
    Tensor largest = s.amax({-1}), smallest = s.amin({-1});
    return order > 0 ? largest / smallest : smallest / largest;
  }
  GD_CHECK(std::abs(order) == 1 || std::isinf(order),
           fmt::format("linalg.cond got an invalid norm type: {}",
                       p->is_floating_point() ? fmt::format("{}", order) : std::to_string(p->to_long())));
  check_dtype(A, "linalg.cond");
  return cond_through_inverse(A, order);
}

Tensor cond(const Tensor& A, std::string_view p) {
  GD_CHECK(A.dim() >= 2, "linalg.cond: The input tensor must have at least 2 dimensions.");
  GD_CHECK(p == "fro" || p == "nuc", fmt::format("linalg.cond got an invalid norm type: {}", p));
  check_dtype(A, "linalg.cond");
  return cond_through_inverse(A, p);
}

Tensor cond(const Tensor& A, const char* p) { return cond(A, std::string_view(p)); }

}  // namespace gradiens::linalg
