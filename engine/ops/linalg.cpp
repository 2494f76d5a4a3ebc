// Matrix products: mm, addmm, _addmm_activation, bmm, mv, dot and matmul with
// torch.matmul's semantics (1-D operands, folding, broadcast batch dims), their
// shape/dtype checks with PyTorch's messages, and their backward formulas. Floating dtypes go through kernels/gemm.h
// (any device) reading strided operands in place; integer dtypes use a plain CPU
// loop (no BLAS has them).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/cuda_seam.h"
#include "kernels/gemm.h"

namespace gradiens {

namespace {

// Shape legend: A is [n, m], B is [m, p], C = A B is [n, p]; batch dims lead.

// ---- PyTorch's spellings of dtypes in messages ----

// caffe2::TypeMeta's name, used by PyTorch's mm dtype message: "float", "double"...
std::string_view torch_cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return "unsigned char";
    case ScalarType::Int8: return "signed char";
    case ScalarType::Int16: return "short int";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long int";
    case ScalarType::Float16: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Bool: return "bool";
  }
  return "unknown";
}

bool has_product_kernel(ScalarType t) {
  return t == kFloat32 || t == kFloat64 || t == kInt64 || t == kInt32 || t == kUInt8 || is_reduced_floating_point(t);
}

// PyTorch names the kernel that lacks the dtype: "addmm_impl_cpu_", "bmm", "dot"...
void check_product_dtype(ScalarType t, std::string_view kernel_name) {
  GD_CHECK(has_product_kernel(t), fmt::format("\"{}\" not implemented for '{}'", kernel_name, c10_type_name(t)));
}

// mm's dtype message (PyTorch 2's addmm text: it names both dtypes).
void check_mm_dtypes(const Tensor& a, const Tensor& b) {
  GD_CHECK(a.dtype() == b.dtype(), fmt::format("expected m1 and m2 to have the same dtype, but got: {} != {}",
                                               torch_cpp_type_name(a.dtype()), torch_cpp_type_name(b.dtype())));
}

// bmm's and mv's dtype message.
void check_same_scalar_type(ScalarType expected, ScalarType found) {
  GD_CHECK(expected == found, fmt::format("expected scalar type {} but found {}", c10_type_name(expected),
                                          c10_type_name(found)));
}

int64_t product(IntArrayRef sizes, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= sizes[i];
  return n;
}

// ---- the kernel side: operands read in place ----

// One [rows, cols] matrix operand (per batch element) as the product kernel reads
// it: element (i, j) of batch index b sits at data + sum(b * batch_strides) +
// i * row_stride + j * col_stride. `owner` keeps the data alive.
struct MatrixOperand {
  Tensor owner;
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  DimVector batch_strides;  // aligned with the product's batch shape, 0 where broadcast
  bool is_vector = false, is_column = false;  // a 1-D owner seen as [1, k] or [k, 1]
};

// The last two dims of `t` over the product's `batch` (t's batch dims broadcast to it).
MatrixOperand matrix_operand(const Tensor& t, IntArrayRef batch) {
  MatrixOperand op;
  op.owner = t;
  int64_t d = t.dim();
  op.rows = t.sizes()[d - 2];
  op.cols = t.sizes()[d - 1];
  op.row_stride = t.strides()[d - 2];
  op.col_stride = t.strides()[d - 1];
  op.batch_strides.resize(batch.size(), 0);
  size_t lead = batch.size() - static_cast<size_t>(d - 2);
  for (size_t i = 0; i + 2 < static_cast<size_t>(d); ++i)
    op.batch_strides[lead + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  return op;
}

// A 1-D tensor as a [1, k] row or a [k, 1] column.
MatrixOperand vector_operand(const Tensor& v, bool as_column) {
  MatrixOperand op;
  op.owner = v;
  int64_t k = v.sizes()[0], stride = v.strides()[0];
  op.rows = as_column ? k : 1;
  op.cols = as_column ? 1 : k;
  op.row_stride = as_column ? stride : k;
  op.col_stride = as_column ? 1 : stride;
  op.is_vector = true;
  op.is_column = as_column;
  return op;
}

// How gemm reads a matrix in place: untransposed (unit column stride) or transposed
// (unit row stride), with its leading dimension. A dim of size <= 1 is never
// stepped along, so its stride does not matter.
struct BlasLayout {
  bool transposed;
  int64_t ld;
};

std::optional<BlasLayout> blas_layout(const MatrixOperand& op) {
  const int64_t rows = op.rows, cols = op.cols;
  if (rows == 0 || cols == 0) return BlasLayout{false, std::max<int64_t>(cols, 1)};  // never read
  if ((cols <= 1 || op.col_stride == 1) && (rows <= 1 || op.row_stride >= std::max<int64_t>(cols, 1)))
    return BlasLayout{false, rows <= 1 ? std::max<int64_t>(cols, 1) : op.row_stride};
  if ((rows <= 1 || op.row_stride == 1) && (cols <= 1 || op.col_stride >= std::max<int64_t>(rows, 1)))
    return BlasLayout{true, cols <= 1 ? std::max<int64_t>(rows, 1) : op.col_stride};
  return std::nullopt;
}

// The layout gemm can read; when neither works (broadcast rows, overlapping or
// negative strides), the operand is replaced by a contiguous copy.
BlasLayout readable_layout(MatrixOperand& op, IntArrayRef batch) {
  bool batch_ok = std::all_of(op.batch_strides.begin(), op.batch_strides.end(), [](int64_t s) { return s >= 0; });
  if (batch_ok)
    if (auto layout = blas_layout(op)) return *layout;
  Tensor copy = op.owner.contiguous();
  op = op.is_vector ? vector_operand(copy, op.is_column) : matrix_operand(copy, batch);
  return BlasLayout{false, std::max<int64_t>(op.cols, 1)};
}

// The batch dims of one product after dropping size-1 dims and merging dims that
// every operand steps through uniformly: most products end with 0 or 1 dims.
struct BatchLoop {
  DimVector sizes, a_strides, b_strides, c_strides;
};

BatchLoop coalesce_batch(IntArrayRef batch, const MatrixOperand& a, const MatrixOperand& b, int64_t c_matrix) {
  BatchLoop loop;
  DimVector c_strides = contiguous_strides(batch);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] == 1) continue;
    int64_t sa = a.batch_strides[i], sb = b.batch_strides[i], sc = c_strides[i] * c_matrix;
    if (!loop.sizes.empty()) {
      int64_t n = batch[i];
      if (loop.a_strides.back() == sa * n && loop.b_strides.back() == sb * n && loop.c_strides.back() == sc * n) {
        loop.sizes.back() *= n;
        loop.a_strides.back() = sa;
        loop.b_strides.back() = sb;
        loop.c_strides.back() = sc;
        continue;
      }
    }
    loop.sizes.push_back(batch[i]);
    loop.a_strides.push_back(sa);
    loop.b_strides.push_back(sb);
    loop.c_strides.push_back(sc);
  }
  return loop;
}

// Calls f(a_offset, b_offset, c_offset, count, a_stride, b_stride, c_stride) for every
// index of the outer batch dims; the innermost dim is left to f as a strided batch.
template <class F>
void for_each_batch(const BatchLoop& loop, F&& f) {
  size_t dims = loop.sizes.size();
  if (dims == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0}, int64_t{0});
    return;
  }
  size_t inner = dims - 1;
  DimVector index(inner, 0);
  int64_t oa = 0, ob = 0, oc = 0;
  while (true) {
    f(oa, ob, oc, loop.sizes[inner], loop.a_strides[inner], loop.b_strides[inner], loop.c_strides[inner]);
    // Advance the odometer over the outer dims, the last one fastest.
    size_t d = inner;
    while (true) {
      if (d == 0) return;
      --d;
      if (++index[d] < loop.sizes[d]) {
        oa += loop.a_strides[d];
        ob += loop.b_strides[d];
        oc += loop.c_strides[d];
        break;
      }
      oa -= loop.a_strides[d] * (loop.sizes[d] - 1);
      ob -= loop.b_strides[d] * (loop.sizes[d] - 1);
      oc -= loop.c_strides[d] * (loop.sizes[d] - 1);
      index[d] = 0;
    }
  }
}

// The products through the GEMM entry point (kernels/gemm.h): float32 and
// float64 on the CPU; on a cuda device any floating dtype, float16/bfloat16
// read and written as such and accumulated in float32 (the values of
// Note [Reduced floats compute in float32]).
void blas_product(MatrixOperand a, MatrixOperand b, IntArrayRef batch, const Tensor& out, double beta = 0.0) {
  BlasLayout la = readable_layout(a, batch), lb = readable_layout(b, batch);
  const int64_t n = a.rows, m = a.cols, p = b.cols;
  BatchLoop loop = coalesce_batch(batch, a, b, n * p);
  const auto size = static_cast<int64_t>(out.element_size());
  const char* a_data = static_cast<const char*>(a.owner.data_ptr());
  const char* b_data = static_cast<const char*>(b.owner.data_ptr());
  char* c = static_cast<char*>(out.data_ptr());
  const kernels::DeviceRef device = cuda_seam::device_of(out);
  for_each_batch(loop, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa, int64_t sb, int64_t sc) {
    kernels::gemm_batched(out.dtype(), count, la.transposed, lb.transposed, n, p, m, 1.0, a_data + oa * size, la.ld,
                          sa, b_data + ob * size, lb.ld, sb, beta, c + oc * size, p, sc, device);
  });
}

// Integer products: no BLAS has them; a plain strided loop (wrapping like PyTorch).
template <class T>
void loop_product(const MatrixOperand& a, const MatrixOperand& b, IntArrayRef batch, T* c) {
  const int64_t n = a.rows, m = a.cols, p = b.cols;
  const T* a_data = a.owner.template cpu_data_ptr<T>();
  const T* b_data = b.owner.template cpu_data_ptr<T>();
  BatchLoop loop = coalesce_batch(batch, a, b, n * p);
  for_each_batch(loop, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa, int64_t sb, int64_t sc) {
    for (int64_t e = 0; e < count; ++e) {
      const T* ae = a_data + oa + e * sa;
      const T* be = b_data + ob + e * sb;
      T* ce = c + oc + e * sc;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < p; ++j) {
          T acc = 0;
          for (int64_t l = 0; l < m; ++l)
            acc = static_cast<T>(acc + ae[i * a.row_stride + l * a.col_stride] * be[l * b.row_stride + j * b.col_stride]);
          ce[i * p + j] = acc;
        }
    }
  });
}

// A new tensor of `out_sizes` holding the products of `a` and `b` over `batch`, laid
// out as a contiguous [batch..., n, p] (out_sizes may drop size-1 dims of that).
Tensor product(MatrixOperand a, MatrixOperand b, IntArrayRef batch, IntArrayRef out_sizes, std::string_view op) {
  const ScalarType dtype = a.owner.dtype();
  if (is_reduced_floating_point(dtype) && !a.owner.device().is_cuda()) {
    // float16/bfloat16: one float32 GEMM on float32 copies, rounded once
    // (Note [Reduced floats compute in float32]).
    auto upcast = [&](const MatrixOperand& operand) {
      Tensor copy = operand.owner.to(kFloat32);
      return operand.is_vector ? vector_operand(copy, operand.is_column) : matrix_operand(copy, batch);
    };
    return product(upcast(a), upcast(b), batch, out_sizes, op).to(dtype);
  }
  check_same_device(a.owner, b.owner, op);
  Tensor out = empty(out_sizes, a.owner.options());
  if (out.numel() == 0) return out;
  if (out.device().is_cuda()) {
    GD_CHECK(is_floating_point(out.dtype()),
             fmt::format("\"{}\" not implemented for CUDA tensors of dtype {}", op, dtype_name(out.dtype())));
    blas_product(std::move(a), std::move(b), batch, out);
    return out;
  }
  dispatch_numeric(out.dtype(), op, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) blas_product(std::move(a), std::move(b), batch, out);
    else loop_product<T>(a, b, batch, out.cpu_data_ptr<T>());
  });
  return out;
}

// ---- the ops ----

// A matrix stored column-major (the transpose of a contiguous one).
bool is_transposed_matrix(const Tensor& m) {
  return m.dim() == 2 && m.size(0) > 1 && m.size(1) > 1 && m.stride(0) == 1 && m.stride(1) == m.size(0);
}

// g @ b^T, the gradient of a in a @ b (a not transposed): on the CPU, added by
// the GEMM itself (beta = 1) into the sum the engine offers for input `index`
// (Note [Accumulating in place]).
Tensor product_input_gradient(const Ctx& ctx, size_t index, const Tensor& g, const Tensor& b) {
  const ScalarType dtype = g.dtype();
  if (!GradMode::is_enabled() && g.is_cpu() && (dtype == kFloat32 || dtype == kFloat64) && b.dtype() == dtype &&
      g.dim() == 2 && b.dim() == 2 && g.numel() > 0 && b.numel() > 0)
    if (Tensor target = ctx.accumulation_target(index, {g.size(0), b.size(0)}, dtype); target.defined()) {
      blas_product(matrix_operand(g, {}), matrix_operand(b.t(), {}), {}, target, /*beta=*/1.0);
      return target;
    }
  return g.mm(b.t());
}

struct Mm {
  static constexpr std::string_view name = "MmBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b) {
    // Each input's gradient needs only the other input.
    ctx.save_for_backward(ctx.needs_input_grad(0) ? b : Tensor(), ctx.needs_input_grad(1) ? a : Tensor());
    ctx.ints = {is_transposed_matrix(a) ? 1 : 0, is_transposed_matrix(b) ? 1 : 0};
    return product(matrix_operand(a, {}), matrix_operand(b, {}), {}, {a.sizes()[0], b.sizes()[1]}, "mm");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [b, a] = ctx.saved<2>();
    // A gradient comes back in its input's layout: for b = W.t() (Linear),
    // (g^T a)^T is a transposed view whose transpose, W's gradient, is
    // contiguous, which spares the accumulation a transposing copy.
    Tensor grad_a, grad_b;
    if (ctx.needs_input_grad(0)) grad_a = ctx.ints[0] ? b.mm(g.t()).t() : product_input_gradient(ctx, 0, g, b);
    if (ctx.needs_input_grad(1)) grad_b = ctx.ints[1] ? g.t().mm(a).t() : a.t().mm(g);
    return {grad_a, grad_b};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& b) {
    return add_tangents(t[0].defined() ? t[0].mm(b) : Tensor(), t[1].defined() ? a.mm(t[1]) : Tensor());
  }
};

// epilogue(a @ b + bias) in one kernel call, when bias is Linear's (one value
// per output column, dense) and the dtype fits: on a cuda device one cuBLASLt
// call (float32 or float64 for the bias alone, any floating dtype with an
// activation), on the CPU the small float64 GEMM with the bias added in its
// registers (float64 bias alone, thin products). Undefined when that does not
// apply or the kernel declines; the result equals the composition bit for bit
// on the CPU.
Tensor product_with_epilogue(kernels::GemmEpilogue epilogue, const Tensor& bias, const Tensor& a, const Tensor& b) {
  const bool dtype_fits = epilogue == kernels::GemmEpilogue::Bias ? a.dtype() == kFloat32 || a.dtype() == kFloat64
                                                                  : is_floating_point(a.dtype());
  // The CPU fuses only the float64 bias (the thin products of PINN layers).
  const bool device_fits =
      a.device().is_cuda() ||
      (epilogue == kernels::GemmEpilogue::Bias && a.dtype() == kFloat64 && a.size(1) <= 64 && b.size(1) <= 64);
  if (!device_fits || !dtype_fits) return Tensor();
  const int64_t p = b.sizes()[1];
  const bool row_bias = (bias.dim() == 1 || (bias.dim() == 2 && bias.size(0) == 1)) && bias.size(-1) == p &&
                        (p == 1 || bias.stride(-1) == 1) && bias.device() == a.device() && bias.dtype() == a.dtype();
  if (!row_bias || a.sizes()[0] == 0 || p == 0 || a.sizes()[1] == 0) return Tensor();
  check_same_device(a, b, "addmm");
  MatrixOperand ma = matrix_operand(a, {}), mb = matrix_operand(b, {});
  const BlasLayout la = readable_layout(ma, {}), lb = readable_layout(mb, {});
  Tensor out = empty({a.sizes()[0], p}, a.options());
  if (!kernels::gemm_epilogue(epilogue, a.dtype(), la.transposed, lb.transposed, ma.rows, p, ma.cols,
                              ma.owner.data_ptr(), la.ld, mb.owner.data_ptr(), lb.ld, bias.data_ptr(), out.data_ptr(),
                              p, cuda_seam::device_of(a)))
    return Tensor();
  return out;
}

// beta * self + alpha * (a @ b), self broadcast to [n, p], with no graph: the
// values of Addmm (beta = 0 ignores self, NaN included, as in PyTorch).
Tensor addmm_values(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  const DimVector out_sizes{a.sizes()[0], b.sizes()[1]};
  if (alpha.to<double>() == 1 && beta.to<double>() == 1)
    if (Tensor out = product_with_epilogue(kernels::GemmEpilogue::Bias, self, a, b); out.defined()) return out;
  const Tensor bias = self.expand(out_sizes);
  Tensor out = product(matrix_operand(a, {}), matrix_operand(b, {}), {}, out_sizes, "addmm");
  if (alpha.to<double>() != 1) out.mul_(alpha);
  if (beta.to<double>() != 0) out.add_(bias, beta);
  return out;
}

// What Addmm's backward needs, in its context: b and a saved first (each only
// when the other's gradient is wanted), the transposed flags, self's shape,
// alpha and beta.
void save_addmm(Ctx& ctx, const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha,
                const Tensor& extra = Tensor()) {
  ctx.save_for_backward(ctx.needs_input_grad(1) ? b : Tensor(), ctx.needs_input_grad(2) ? a : Tensor(), extra);
  ctx.ints = {is_transposed_matrix(a) ? 1 : 0, is_transposed_matrix(b) ? 1 : 0};
  ctx.shape = self.sizes().dims();
  ctx.scalar = alpha;
  ctx.real = beta.to<double>();
}

// Linear's bias and weight gradients, g summed over its rows and (g^T a)^T, on
// a cuda device in one cuBLASLt call (its bias-gradient epilogue) when the
// backward records no graph, b is the transposed weight, self a row bias, beta
// and alpha are 1 and the dtype float32 or float64. Undefined where that does
// not apply or cuBLASLt declines (then a sum and a product, as on the CPU).
std::pair<Tensor, Tensor> cuda_bias_and_weight_grads(const Ctx& ctx, const Tensor& g, const Tensor& a) {
  if (!g.device().is_cuda() || GradMode::is_enabled() || (g.dtype() != kFloat32 && g.dtype() != kFloat64) ||
      !ctx.needs_input_grad(0) || !ctx.needs_input_grad(2) || ctx.ints[1] != 1 || ctx.real != 1 ||
      ctx.scalar.to<double>() != 1)
    return {};
  const int64_t n = g.size(0), p = g.size(1), m = a.size(1);
  const bool row_bias = (ctx.shape.size() == 1 || (ctx.shape.size() == 2 && ctx.shape[0] == 1)) &&
                        ctx.shape.back() == p;
  if (!row_bias || n == 0 || p == 0 || m == 0 || a.dtype() != g.dtype()) return {};
  // weight gradient [p, m] = g^T a; its bias gradient = the row sums of g^T.
  MatrixOperand gt = matrix_operand(g.t(), {}), ma = matrix_operand(a, {});
  const BlasLayout lg = readable_layout(gt, {}), la = readable_layout(ma, {});
  Tensor grad_weight = empty({p, m}, g.options()), grad_bias = empty({p}, g.options());
  if (!kernels::gemm_bias_gradient(g.dtype(), lg.transposed, la.transposed, p, m, n, gt.owner.data_ptr(), lg.ld,
                                   ma.owner.data_ptr(), la.ld, grad_weight.data_ptr(), m, grad_bias.data_ptr(),
                                   cuda_seam::device_of(g)))
    return {};
  return {grad_bias.view(ctx.shape), grad_weight.t()};
}

// The gradients of (self, a, b) from the gradient g of beta * self + alpha * (a @ b).
GradList addmm_backward(const Ctx& ctx, const Tensor& g) {
  auto [b, a] = ctx.saved<2>();
  const Scalar alpha = ctx.scalar;
  const bool unit_alpha = alpha.to<double>() == 1;
  Tensor grad_self, grad_a, grad_b;
  std::tie(grad_self, grad_b) = cuda_bias_and_weight_grads(ctx, g, a);
  if (ctx.needs_input_grad(0) && !grad_self.defined())
    grad_self = sum_to(ctx.real == 1 ? g : g * ctx.real, ctx.shape);
  // In each input's layout, as Mm's backward.
  if (ctx.needs_input_grad(1))
    grad_a = ctx.ints[0] ? b.mm(g.t()).t() : unit_alpha ? product_input_gradient(ctx, 1, g, b) : g.mm(b.t());
  if (ctx.needs_input_grad(2) && !grad_b.defined()) grad_b = ctx.ints[1] ? g.t().mm(a).t() : a.t().mm(g);
  if (!unit_alpha) {
    if (grad_a.defined()) grad_a = grad_a * alpha;
    if (grad_b.defined()) grad_b = grad_b * alpha;
  }
  return {grad_self, grad_a, grad_b};
}

// beta * self + alpha * (a @ b), self broadcast to [n, p]: Linear's bias and
// product in one node, as PyTorch records it (AddmmBackward0). beta = 0 ignores
// self, NaN included, as in PyTorch.
struct Addmm {
  static constexpr std::string_view name = "AddmmBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
    save_addmm(ctx, self, a, b, beta, alpha);
    return addmm_values(self, a, b, beta, alpha);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return addmm_backward(ctx, g); }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor&, const Tensor& a, const Tensor& b,
                    Scalar beta, Scalar alpha) {
    Tensor product_tangent = add_tangents(t[1].defined() ? t[1].mm(b) : Tensor(), t[2].defined() ? a.mm(t[2]) : Tensor());
    if (product_tangent.defined() && alpha.to<double>() != 1) product_tangent = product_tangent * alpha;
    Tensor self_tangent;
    if (t[0].defined() && beta.to<double>() != 0)
      self_tangent = (beta.to<double>() == 1 ? t[0] : t[0] * beta).expand(out.sizes());
    return add_tangents(self_tangent, product_tangent);
  }
};

// relu(beta * self + alpha * (a @ b)) on a cuda device: one cuBLASLt call with
// its relu epilogue where it applies, else addmm then relu (the composite the
// CPU records). The backward is the composite's: relu's (a zero gradient where
// the output is not positive) into Addmm's.
struct AddmmRelu {
  static constexpr std::string_view name = "AddmmActivationBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
    Tensor out;
    if (alpha.to<double>() == 1 && beta.to<double>() == 1)
      out = product_with_epilogue(kernels::GemmEpilogue::BiasRelu, self, a, b);
    if (!out.defined()) out = relu(addmm_values(self, a, b, beta, alpha));
    save_addmm(ctx, self, a, b, beta, alpha, out);
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return addmm_backward(ctx, threshold_backward(g, ctx.saved(2), 0));
  }
  static Tensor jvp(const Tensor& out, const GradList& t, const Tensor& self, const Tensor& a, const Tensor& b,
                    Scalar beta, Scalar alpha) {
    const Tensor pre = Addmm::jvp(out, t, self, a, b, beta, alpha);
    return pre.defined() ? threshold_backward(pre, out, 0) : pre;
  }
};

// a [..., n, m] @ b [..., m, p] over broadcast batch dims (bmm: equal batch dims).
// Gradients come back at the broadcast shape; the engine sums them to each input's.
template <bool IsBmm>
struct BatchedMatmul {
  static constexpr std::string_view name = IsBmm ? "BmmBackward0" : "MatmulBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward(ctx.needs_input_grad(0) ? b : Tensor(), ctx.needs_input_grad(1) ? a : Tensor());
    IntArrayRef as = a.sizes(), bs = b.sizes();
    DimVector batch = broadcast_shapes(IntArrayRef(as.data(), as.size() - 2), IntArrayRef(bs.data(), bs.size() - 2));
    DimVector out_sizes = batch;
    out_sizes.push_back(as[as.size() - 2]);
    out_sizes.push_back(bs[bs.size() - 1]);
    return product(matrix_operand(a, batch), matrix_operand(b, batch), batch, out_sizes, IsBmm ? "bmm" : "matmul");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [b, a] = ctx.saved<2>();
    Tensor ga, gb;
    if (ctx.needs_input_grad(0)) ga = IsBmm ? g.bmm(b.mT()) : g.matmul(b.mT());
    if (ctx.needs_input_grad(1)) gb = IsBmm ? a.mT().bmm(g) : a.mT().matmul(g);
    return {ga, gb};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& b) {
    auto product = [](const Tensor& x, const Tensor& y) { return IsBmm ? x.bmm(y) : x.matmul(y); };
    return add_tangents(t[0].defined() ? product(t[0], b) : Tensor(), t[1].defined() ? product(a, t[1]) : Tensor());
  }
};

struct Mv {
  static constexpr std::string_view name = "MvBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& v) {
    ctx.save_for_backward(ctx.needs_input_grad(0) ? v : Tensor(), ctx.needs_input_grad(1) ? a : Tensor());
    return product(matrix_operand(a, {}), vector_operand(v, true), {}, {a.sizes()[0]}, "mv");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [v, a] = ctx.saved<2>();
    Tensor ga, gv;
    if (ctx.needs_input_grad(0)) ga = g.unsqueeze(1).mm(v.unsqueeze(0));  // the outer product g v^T
    if (ctx.needs_input_grad(1)) gv = a.t().mv(g);
    return {ga, gv};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& v) {
    return add_tangents(t[0].defined() ? t[0].mv(v) : Tensor(), t[1].defined() ? a.mv(t[1]) : Tensor());
  }
};

struct Dot {
  static constexpr std::string_view name = "DotBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward(ctx.needs_input_grad(0) ? b : Tensor(), ctx.needs_input_grad(1) ? a : Tensor());
    return product(vector_operand(a, false), vector_operand(b, true), {}, {}, "dot");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [b, a] = ctx.saved<2>();
    return {ctx.needs_input_grad(0) ? g * b : Tensor(), ctx.needs_input_grad(1) ? g * a : Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& b) {
    return add_tangents(t[0].defined() ? t[0].dot(b) : Tensor(), t[1].defined() ? a.dot(t[1]) : Tensor());
  }
};

// ---- checks, in PyTorch's order and words ----

void check_mm(const Tensor& a, const Tensor& b) {
  GD_CHECK(a.dim() == 2, "self must be a matrix");
  GD_CHECK(b.dim() == 2, "mat2 must be a matrix");
  GD_CHECK(a.sizes()[1] == b.sizes()[0], fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                                                     a.sizes()[0], a.sizes()[1], b.sizes()[0], b.sizes()[1]));
  check_mm_dtypes(a, b);
  check_same_device(a, b, "mm");
  check_product_dtype(a.dtype(), "addmm_impl_cpu_");
}

void check_mv(const Tensor& a, const Tensor& v) {
  GD_CHECK(a.dim() == 2 && v.dim() == 1,
           fmt::format("vector + matrix @ vector expected, got 1, {}, {}", a.dim(), v.dim()));
  GD_CHECK(a.sizes()[1] == v.sizes()[0],
           fmt::format("size mismatch, got {}, {}x{},{}", a.sizes()[0], a.sizes()[0], a.sizes()[1], v.sizes()[0]));
  check_same_scalar_type(a.dtype(), v.dtype());
  check_same_device(a, v, "mv");
  check_product_dtype(a.dtype(), "addmv_impl_cpu");
}

void check_dot(const Tensor& a, const Tensor& b) {
  GD_CHECK(a.dim() == 1 && b.dim() == 1, fmt::format("1D tensors expected, but got {}D and {}D tensors", a.dim(), b.dim()));
  GD_CHECK(a.dtype() == b.dtype(), fmt::format("dot : expected both vectors to have same dtype, but found {} and {}",
                                               c10_type_name(a.dtype()), c10_type_name(b.dtype())));
  GD_CHECK(a.numel() == b.numel(),
           fmt::format("inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of "
                       "elements, but got {} and {} elements respectively",
                       a.numel(), b.numel(), a.numel(), b.numel()));
  check_same_device(a, b, "dot");
  check_product_dtype(a.dtype(), "dot");
}

// The batched product's check on the contracted dim, naming the flattened batch as
// PyTorch's bmm does.
void check_batched_inner(int64_t batch, int64_t a_cols, int64_t b_rows) {
  GD_CHECK(a_cols == b_rows, fmt::format("Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but "
                                         "got: [{}, {}].",
                                         batch, a_cols, batch, b_rows));
}

// Whether a.reshape(-1, a.size(-1)) is a view: the leading dims step uniformly.
bool rows_fold_without_copy(const Tensor& a) {
  int64_t expected = -1;
  for (int64_t d = a.dim() - 2; d >= 0; --d) {
    int64_t size = a.sizes()[d];
    if (size == 1) continue;
    if (expected != -1 && a.strides()[d] != expected) return false;
    expected = a.strides()[d] * size;
  }
  return true;
}

Tensor broadcast_matmul(const Tensor& a, const Tensor& b) { return apply<BatchedMatmul<false>>(a, b); }

}  // namespace

// ---- free functions ----

Tensor mm(const Tensor& a, const Tensor& b) {
  check_mm(a, b);
  return apply<Mm>(a, b);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) {
  check_mm(mat1, mat2);
  check_same_scalar_type(mat1.dtype(), self.dtype());
  check_same_device(self, mat1, "addmm");
  return apply<Addmm>(self, mat1, mat2, beta, alpha);
}

// PyTorch's at::_addmm_activation: relu(addmm(...)), or gelu(addmm(...),
// "tanh") with use_gelu. On the CPU exactly that composite; on a cuda device
// one cuBLASLt call with the activation epilogue where the bias is a row
// vector, beta and alpha are 1 and cuBLASLt has a kernel (for gelu only when no
// gradient is recorded: its backward needs the pre-activation).
Tensor _addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha,
                         bool use_gelu) {
  check_mm(mat1, mat2);
  check_same_scalar_type(mat1.dtype(), self.dtype());
  check_same_device(self, mat1, "addmm");
  if (!mat1.device().is_cuda()) return use_gelu ? gelu(addmm(self, mat1, mat2, beta, alpha), "tanh")
                                                : relu(addmm(self, mat1, mat2, beta, alpha));
  if (!use_gelu) return apply<AddmmRelu>(self, mat1, mat2, beta, alpha);
  const bool recorded = derivative_needed(self) || derivative_needed(mat1) || derivative_needed(mat2);
  if (!recorded && alpha.to<double>() == 1 && beta.to<double>() == 1)
    if (Tensor out = product_with_epilogue(kernels::GemmEpilogue::BiasGeluTanh, self, mat1, mat2);
        out.defined())
      return out;
  return gelu(addmm(self, mat1, mat2, beta, alpha), "tanh");
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  GD_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  GD_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  int64_t batch = a.sizes()[0], m = a.sizes()[2];
  GD_CHECK(b.sizes()[0] == batch && b.sizes()[1] == m,
           fmt::format("Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                       batch, m, b.sizes()[0], b.sizes()[1]));
  check_same_scalar_type(a.dtype(), b.dtype());
  check_same_device(a, b, "bmm");
  check_product_dtype(a.dtype(), "bmm");
  return apply<BatchedMatmul<true>>(a, b);
}

Tensor mv(const Tensor& a, const Tensor& v) {
  check_mv(a, v);
  return apply<Mv>(a, v);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  check_dot(a, b);
  return apply<Dot>(a, b);
}

// torch.matmul: dispatches on the operands' dims. A >= 3-D left operand times a
// matrix or vector folds its batch into rows (one GEMM, and one GEMM for the
// weight's gradient); everything else with batch dims is a broadcast batched product.
Tensor matmul(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  GD_CHECK(da >= 1 && db >= 1,
           fmt::format("both arguments to matmul need to be at least 1D, but they are {}D and {}D", da, db));
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);

  IntArrayRef as = a.sizes(), bs = b.sizes();
  if (db <= 2) {  // [..., n, m] @ [m, p] or [m]
    int64_t rows = product(as, 0, as.size() - 1), m = as.back();
    if (db == 2) {
      GD_CHECK(m == bs[0], fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", rows, m, bs[0],
                                       bs[1]));
      check_mm_dtypes(a, b);
      check_product_dtype(a.dtype(), "addmm_impl_cpu_");
    } else {
      GD_CHECK(m == bs[0], fmt::format("size mismatch, got {}, {}x{},{}", rows, rows, m, bs[0]));
      check_same_scalar_type(a.dtype(), b.dtype());
      check_product_dtype(a.dtype(), "addmv_impl_cpu");
    }
    check_same_device(a, b, "matmul");
    DimVector out_sizes(as.begin(), as.end() - 1);
    if (db == 2) out_sizes.push_back(bs[1]);
    if (rows_fold_without_copy(a)) {
      Tensor folded = a.reshape({rows, m});
      return (db == 2 ? mm(folded, b) : mv(folded, b)).view(out_sizes);
    }
    // Folding would copy `a`; the batched product reads it in place instead.
    if (db == 2) return broadcast_matmul(a, b);
    return broadcast_matmul(a, b.unsqueeze(1)).squeeze(-1);
  }

  if (da <= 2) {  // [n, m] or [m] @ [..., m, p]
    // PyTorch computes this as (b^T @ a^T)^T with b^T's batch folded; its messages
    // name those operands (and its dtype message names b's dtype first).
    int64_t m = as.back(), rows = product(bs, 0, bs.size() - 2) * bs.back(), b_rows = bs[bs.size() - 2];
    if (da == 2)
      GD_CHECK(m == b_rows, fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", rows, b_rows,
                                        m, as[0]));
    else
      GD_CHECK(m == b_rows, fmt::format("size mismatch, got {}, {}x{},{}", rows, rows, b_rows, m));
    check_same_scalar_type(b.dtype(), a.dtype());
    check_same_device(a, b, "matmul");
    check_product_dtype(a.dtype(), da == 2 ? "addmm_impl_cpu_" : "addmv_impl_cpu");
    if (da == 2) return broadcast_matmul(a, b);
    return broadcast_matmul(a.unsqueeze(0), b).squeeze(-2);
  }

  // Both have batch dims: they broadcast, with PyTorch's message naming the dim.
  DimVector batch = broadcast_shapes(IntArrayRef(as.data(), as.size() - 2), IntArrayRef(bs.data(), bs.size() - 2));
  check_batched_inner(product(batch, 0, batch.size()), as.back(), bs[bs.size() - 2]);
  check_same_scalar_type(a.dtype(), b.dtype());
  check_same_device(a, b, "matmul");
  check_product_dtype(a.dtype(), "bmm");
  return broadcast_matmul(a, b);
}

// ---- methods ----
Tensor Tensor::matmul(const Tensor& other) const { return gradiens::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& other) const { return gradiens::mm(*this, other); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) const {
  return gradiens::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor Tensor::bmm(const Tensor& other) const { return gradiens::bmm(*this, other); }
Tensor Tensor::mv(const Tensor& vec) const { return gradiens::mv(*this, vec); }
Tensor Tensor::dot(const Tensor& other) const { return gradiens::dot(*this, other); }

}  // namespace gradiens
