// phm_linear's two paths (Note [PHM path choice] in phm.h) and the two small ops
// they share, whose backward formulas are mm and each other: derivatives of any order.
#include "nn/functional/phm.h"

#include <fmt/format.h>

#include <cstring>

#include "engine/autograd/function.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens::nn::functional {

namespace {

// The n, q, p of A and S, after checking they fit together.
struct PHMShape {
  int64_t n, q, p;
};

PHMShape check_factors(const Tensor& A, const Tensor& S) {
  GD_CHECK(A.defined() && S.defined(), "phm_linear: A and S must be defined");
  GD_CHECK(A.dim() == 3 && A.size(0) == A.size(1) && A.size(1) == A.size(2),
           fmt::format("phm_linear: A must have shape [n, n, n], got {}", shape_to_string(A.sizes())));
  const int64_t n = A.size(0);
  GD_CHECK(S.dim() == 3 && S.size(0) == n,
           fmt::format("phm_linear: S must have shape [n, out_features / n, in_features / n] with n = {} (from A), "
                       "got {}",
                       n, shape_to_string(S.sizes())));
  return {n, S.size(1), S.size(2)};
}

int64_t leading_rows(const Tensor& input) {
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) rows *= input.size(d);
  return rows;
}

// ---- two ops with their own backward, so that no gradient arrives transposed ----
// The engine's mm hands the gradient of a transposed operand (x.mm(W.t())) back
// as a transposed view, which every later reshape then copies element by
// element; these ops produce each gradient in its operand's own layout.

// a [m, k] times b [n, k] transposed, plus bias [n] when defined: a b^T + bias.
// Gradients g b, g^T a and the column sums of g (as ones [1, m] times g: a GEMV,
// where the engine's column reduction is several times slower), all
// contiguous, all through mm, which records itself under create_graph.
struct MatmulTransposed {
  static constexpr std::string_view name = "PHMMatmulTransposedBackward";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b, const Tensor& bias) {
    ctx.save_for_backward(ctx.needs_input_grad(0) ? b : Tensor(), ctx.needs_input_grad(1) ? a : Tensor());
    ctx.ints = {a.size(0)};
    Tensor y = a.mm(b.t());
    if (bias.defined()) y.add_(bias);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [b, a] = ctx.saved<2>();
    Tensor ga = ctx.needs_input_grad(0) ? g.mm(b) : Tensor();
    Tensor gb = ctx.needs_input_grad(1) ? g.t().mm(a) : Tensor();
    Tensor gbias = ctx.needs_input_grad(2) ? ones({1, ctx.ints[0]}, g.options()).mm(g).view({g.size(1)}) : Tensor();
    return {ga, gb, gbias};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& b, const Tensor&) {
    Tensor product =
        add_tangents(t[0].defined() ? t[0].mm(b.t()) : Tensor(), t[1].defined() ? a.mm(t[1].t()) : Tensor());
    return add_tangents(product, t[2]);
  }
};

Tensor mm_transposed(const Tensor& a, const Tensor& b, const Tensor& bias = {}) {
  return apply<MatmulTransposed>(a, b, bias);
}

// Moves the n*n blocks of q x p elements between the GEMM's layout P[(a b), (d e)]
// and W's, W[(a d), (b e)]: rows of p contiguous elements, copied whole.
Tensor move_blocks(const Tensor& src, const PHMShape& s, bool to_weight) {
  const int64_t n = s.n, q = s.q, p = s.p;
  DimVector out_sizes = to_weight ? DimVector{n * q, n * p} : DimVector{n * n, q * p};
  if (!src.is_cpu()) {
    // The same permutation through views (one strided copy), off the CPU.
    if (to_weight) return src.reshape({n, n, q, p}).permute({0, 2, 1, 3}).reshape(out_sizes);
    return src.reshape({n, q, n, p}).permute({0, 2, 1, 3}).reshape(out_sizes);
  }
  const Tensor in = src.contiguous();
  Tensor out = empty(out_sizes, src.options());
  const size_t item = in.element_size(), row = static_cast<size_t>(p) * item;
  const char* from = static_cast<const char*>(in.cpu_data_ptr());
  char* to = static_cast<char*>(out.cpu_data_ptr());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b)
      for (int64_t d = 0; d < q; ++d) {
        const size_t blocks_at = static_cast<size_t>(((a * n + b) * q + d) * p) * item;
        const size_t weight_at = static_cast<size_t>(((a * q + d) * n + b) * p) * item;
        if (to_weight) std::memcpy(to + weight_at, from + blocks_at, row);
        else std::memcpy(to + blocks_at, from + weight_at, row);
      }
  return out;
}

// The two directions are each other's adjoint (a permutation's transpose is its
// inverse), so each is the other's backward, to any order.
template <bool ToWeight>
struct MoveBlocks {
  static constexpr std::string_view name = ToWeight ? "PHMBlocksToWeightBackward" : "PHMWeightToBlocksBackward";
  static Tensor forward(Ctx& ctx, const Tensor& src, int64_t n, int64_t q, int64_t p) {
    ctx.ints = {n, q, p};
    return move_blocks(src, {n, q, p}, ToWeight);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    return {apply<MoveBlocks<!ToWeight>>(g, ctx.ints[0], ctx.ints[1], ctx.ints[2])};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, int64_t n, int64_t q, int64_t p) {
    return t[0].defined() ? apply<MoveBlocks<ToWeight>>(t[0], n, q, p) : Tensor();
  }
};

// W[(a d), (b e)] = sum_i A[i,a,b] S[i,d,e]: the GEMM [(a b), i] x [i, (d e)], then
// its blocks moved into place.
Tensor build_weight(const Tensor& A, const Tensor& S, const PHMShape& s) {
  Tensor blocks = A.reshape({s.n, s.n * s.n}).t().mm(S.reshape({s.n, s.q * s.p}));  // [(a b), (d e)]
  return apply<MoveBlocks<true>>(blocks, s.n, s.q, s.p);
}

// y without W. x [R, in] read as [(R b), e] gives Z = x S^T blockwise:
// Z[(R b), (i d)] = sum_e x[R, b, e] S[i, d, e]; then per row, y[a, d] =
// sum_{(b i)} A[i, a, b] Z[(b i), d], the [n, n*n] x [n*n, q] product.
Tensor structured_product(const Tensor& x2d, const Tensor& A, const Tensor& S, const PHMShape& s) {
  const int64_t rows = x2d.size(0);
  Tensor z = mm_transposed(x2d.reshape({rows * s.n, s.p}), S.reshape({s.n * s.q, s.p}));  // [(R b), (i d)]
  Tensor mix = A.permute({1, 2, 0}).reshape({s.n, s.n * s.n});                            // [a, (b i)]
  return matmul(mix, z.view({rows, s.n * s.n, s.q})).view({rows, s.n * s.q});
}

}  // namespace

// The costs Note [PHM path choice] weighs, in multiply-adds: building W (its
// GEMM, block move and, in backward, the gradient's) against the structured
// path's per-row mixing plus the calls of its small per-row GEMMs, worth about
// 1100 multiply-adds each row.
PHMPath phm_choose_path(int64_t rows, int64_t n, int64_t in_features, int64_t out_features, bool needs_grad) {
  const double layer = static_cast<double>(in_features) * static_cast<double>(out_features);
  if (layer < 16384) return PHMPath::BuildWeight;
  const double weight_cost = static_cast<double>(n) * layer;
  const double row_cost = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(out_features) + 1100;
  const double ratio = needs_grad ? 4.0 / 3.0 : 8.0 / 3.0;
  return static_cast<double>(rows) * row_cost <= ratio * weight_cost ? PHMPath::Structured : PHMPath::BuildWeight;
}

Tensor phm_weight(const Tensor& A, const Tensor& S) { return build_weight(A, S, check_factors(A, S)); }

Tensor phm_linear(const Tensor& input, const Tensor& A, const Tensor& S, const Tensor& bias, PHMPath path) {
  const PHMShape s = check_factors(A, S);
  const int64_t in = s.n * s.p, out = s.n * s.q;
  GD_CHECK(input.defined() && input.dim() >= 1,
           "phm_linear: input must have at least one dimension ([..., in_features])");
  const int64_t rows = leading_rows(input);
  GD_CHECK(input.size(-1) == in,
           fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", rows, input.size(-1), in, out));
  if (bias.defined())
    GD_CHECK(bias.dim() == 1 && bias.size(0) == out,
             fmt::format("phm_linear: bias must have shape [{}], got {}", out, shape_to_string(bias.sizes())));
  const bool same_dtype =
      A.dtype() == input.dtype() && S.dtype() == input.dtype() && (!bias.defined() || bias.dtype() == input.dtype());
  GD_CHECK(same_dtype, fmt::format("phm_linear: input, A, S and bias must have the same dtype, got {}, {}, {}{}",
                                   dtype_name(input.dtype()), dtype_name(A.dtype()), dtype_name(S.dtype()),
                                   bias.defined() ? fmt::format(" and {}", dtype_name(bias.dtype())) : ""));
  if (path == PHMPath::Auto) {
    const bool needs_grad = GradMode::is_enabled() && (input.requires_grad() || A.requires_grad() ||
                                                       S.requires_grad() || (bias.defined() && bias.requires_grad()));
    path = phm_choose_path(rows, s.n, in, out, needs_grad);
  }
  DimVector out_sizes(input.sizes().begin(), input.sizes().end() - 1);
  out_sizes.push_back(out);
  const Tensor x2d = input.reshape({rows, in});
  if (path == PHMPath::BuildWeight) return mm_transposed(x2d, build_weight(A, S, s), bias).view(out_sizes);
  Tensor y = structured_product(x2d, A, S, s).view(out_sizes);
  return bias.defined() ? y + bias : y;
}

}  // namespace gradiens::nn::functional
