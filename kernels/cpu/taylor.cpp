// The fused jet-activation kernels of taylor.h: Highway code compiled once per
// SIMD target and chosen at runtime (Note [Compiled SIMD targets] in
// vector_math.cpp). One pass reads z and every block of the jet once per
// vector of elements and writes every block of the result.

#include "kernels/cpu/taylor.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/small_gemm.h"
#include "kernels/error.h"

#ifndef GRADIENS_TAYLOR_PLAN_DEFINED
#define GRADIENS_TAYLOR_PLAN_DEFINED
namespace gradiens::kernels::cpu {
namespace {

// A JetLayout turned into what the inner loop wants: block numbers per
// coordinate and the weights in the element type.
template <class T>
struct JetPlan {
  explicit JetPlan(const JetLayout& layout)
      : stride(layout.samples * layout.width),
        width(layout.width),
        coordinates(layout.coordinates),
        blocks(layout.blocks()),
        laplacian(layout.laplacian),
        laplacian_block(1 + layout.coordinates),
        pure_order(layout.pure_order),
        weights(static_cast<size_t>(layout.coordinates), T(1)),
        pure_block(static_cast<size_t>(layout.coordinates), -1) {
    if (layout.laplacian_weights)
      for (int64_t i = 0; i < coordinates; ++i) weights[i] = static_cast<T>(layout.laplacian_weights[i]);
    const int64_t first_pure = 1 + coordinates + (laplacian ? 1 : 0);
    for (int64_t p = 0; p < layout.pure_count; ++p)
      pure_block[layout.pure_dims[p]] = first_pure + p * (pure_order - 1);
    forward_order = layout.pure_count > 0 ? pure_order : laplacian ? 2 : 1;
  }
  int64_t stride, width, coordinates, blocks;
  bool laplacian;
  int64_t laplacian_block;
  int pure_order;
  int forward_order;           // the highest derivative of the activation the forward pass needs
  std::vector<T> weights;      // c_i
  std::vector<int64_t> pure_block;  // per coordinate: the block of its order-2 derivative, or -1
};

// Whether an activation's derivatives are polynomials in its values (tanh's
// and the sigmoid's): then a kept value spares evaluating the function again
// (Note [Kept activation values] in taylor.h).
constexpr bool derivatives_from_values(JetActivation activation) {
  return activation == JetActivation::Tanh || activation == JetActivation::Sigmoid;
}

// The bias repeated so that bias_tile + (e mod w) holds the bias of elements
// e, e + 1, ... for one whole vector, whatever the width.
template <class T>
std::vector<T> tile_bias(const T* bias, int64_t width, int64_t lanes) {
  std::vector<T> tile(static_cast<size_t>(width + lanes), T(0));
  if (bias)
    for (int64_t j = 0; j < width + lanes; ++j) tile[j] = bias[j % width];
  return tile;
}

}  // namespace
}  // namespace gradiens::kernels::cpu
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/taylor.cpp"
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)  // Note [Compiled SIMD targets] in vector_math.cpp
#include "hwy/foreach_target.h"  // must come before highway.h

#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace gradiens::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Tanh's derivatives s[0 .. highest] as polynomials in t = tanh z; 1 - t^2
// as (1 - t)(1 + t), exact near |t| = 1. The others are left alone.
template <class D, class V>
HWY_INLINE void tanh_derivatives(D d, V t, int highest, V* s) {
  using T = hn::TFromD<D>;
  const auto c = [d](double value) { return hn::Set(d, static_cast<T>(value)); };
  const V one = c(1), t2 = hn::Mul(t, t);
  s[0] = t;
  s[1] = hn::Mul(hn::Sub(one, t), hn::Add(one, t));
  if (highest >= 2) s[2] = hn::Mul(c(-2), hn::Mul(t, s[1]));
  if (highest >= 3) s[3] = hn::Mul(s[1], hn::MulSub(c(6), t2, c(2)));
  if (highest >= 4) s[4] = hn::Mul(hn::Mul(s[1], t), hn::NegMulAdd(c(24), t2, c(16)));
  if (highest >= 5) s[5] = hn::Mul(s[1], hn::MulAdd(hn::MulSub(c(120), t2, c(120)), t2, c(16)));
}

// The sigmoid's derivatives g[0 .. 5] as polynomials in sigma, written in
// q = sigma (1 - sigma).
template <class D, class V>
HWY_INLINE void sigmoid_derivatives(D d, V sigma, V* g) {
  using T = hn::TFromD<D>;
  const auto c = [d](double value) { return hn::Set(d, static_cast<T>(value)); };
  const V one = c(1);
  g[0] = sigma;
  g[1] = hn::Mul(sigma, hn::Sub(one, sigma));
  const V q = g[1], one_minus_2sigma = hn::NegMulAdd(c(2), sigma, one);
  g[2] = hn::Mul(q, one_minus_2sigma);
  g[3] = hn::Mul(q, hn::NegMulAdd(c(6), q, one));
  g[4] = hn::Mul(hn::Mul(q, one_minus_2sigma), hn::NegMulAdd(c(12), q, one));
  g[5] = hn::Mul(q, hn::MulAdd(hn::MulSub(c(120), q, c(30)), q, one));
}

// Note [Jet derivatives in registers]
// The activation's derivatives are an array s[6] of vectors, indexed by
// constants only: then the compiler keeps them in registers. A loop over a
// runtime bound puts the array in memory, which cost the forward kernel a
// sixth of its time in zeroing it and in spills.

// s[k] = the k-th derivative of the activation at z, for k = 0 .. highest (<= 5);
// the sigmoid's and silu's are computed up to 5 whatever `highest`.
template <JetActivation kActivation, class D, class V>
HWY_INLINE void activation_derivatives(D d, V z, int highest, V* s) {
  using T = hn::TFromD<D>;
  const auto c = [d](double value) { return hn::Set(d, static_cast<T>(value)); };
  const V one = c(1);
  s[0] = s[1] = s[2] = s[3] = s[4] = s[5] = hn::Zero(d);
  if constexpr (kActivation == JetActivation::Tanh) {
    tanh_derivatives(d, hn::Tanh(d, z), highest, s);
  } else if constexpr (kActivation == JetActivation::Sigmoid || kActivation == JetActivation::Silu) {
    // sigma = 1 / (1 + exp(-z)) without overflow.
    const V e = hn::Exp(d, hn::Neg(hn::Abs(z)));
    const V of_abs = hn::Div(one, hn::Add(one, e));
    const V sigma = hn::IfThenElse(hn::Lt(z, hn::Zero(d)), hn::Mul(e, of_abs), of_abs);
    V g[6];
    sigmoid_derivatives(d, sigma, g);
    if constexpr (kActivation == JetActivation::Sigmoid) {
      s[0] = g[0], s[1] = g[1], s[2] = g[2], s[3] = g[3], s[4] = g[4], s[5] = g[5];
    } else {
      // silu = z sigma: its k-th derivative is z sigma^(k) + k sigma^(k-1).
      s[0] = hn::Mul(z, sigma);
      s[1] = hn::MulAdd(z, g[1], g[0]);
      s[2] = hn::MulAdd(z, g[2], hn::Mul(c(2), g[1]));
      s[3] = hn::MulAdd(z, g[3], hn::Mul(c(3), g[2]));
      s[4] = hn::MulAdd(z, g[4], hn::Mul(c(4), g[3]));
      s[5] = hn::MulAdd(z, g[5], hn::Mul(c(5), g[4]));
    }
  } else if constexpr (kActivation == JetActivation::Relu) {
    const V positive = hn::IfThenElseZero(hn::Gt(z, hn::Zero(d)), one);
    s[0] = hn::Mul(positive, z);
    s[1] = positive;
  } else if constexpr (kActivation == JetActivation::Sin) {
    // Highway's sin and cos hold to 3 ulp on |z| <= 39000.
    const V sine = hn::Sin(d, z), cosine = hn::Cos(d, z);
    s[0] = sine;
    s[1] = cosine;
    s[2] = hn::Neg(sine);
    s[3] = hn::Neg(cosine);
    s[4] = sine;
    s[5] = cosine;
  }
}

// s[0 .. highest] at the elements e.. of a block: from the activation's values
// there (`value`: block 0 of its output jet, or null) where they determine
// them, else from z = in + bias, which is then the only read of block 0 of
// `in`. The values are what activation_derivatives computes, so the result
// is the same either way.
template <JetActivation kActivation, class D, class T = hn::TFromD<D>, class V = hn::Vec<D>>
HWY_INLINE void derivatives_at(D d, const T* in, const T* bias_at, const T* value, int64_t e, int highest, V* s) {
  if constexpr (derivatives_from_values(kActivation)) {
    if (value) {
      s[0] = s[1] = s[2] = s[3] = s[4] = s[5] = hn::Zero(d);
      if constexpr (kActivation == JetActivation::Tanh) tanh_derivatives(d, hn::LoadU(d, value + e), highest, s);
      else sigmoid_derivatives(d, hn::LoadU(d, value + e), s);
      return;
    }
  }
  activation_derivatives<kActivation>(d, hn::Add(hn::LoadU(d, in + e), hn::LoadU(d, bias_at)), highest, s);
}

// One vector of elements at offset e of every block: blocks are `stride`
// apart; bias_at holds the bias of those elements; `value`: the activation's
// values (derivatives_at), or null.
template <JetActivation kActivation, class D, class T>
HWY_INLINE void forward_vector(D d, const JetPlan<T>& plan, const T* in, const T* bias_at, const T* value, T* out,
                               int64_t stride, int64_t e) {
  using V = hn::Vec<D>;
  const auto at = [stride, e](auto* base, int64_t block) { return base + block * stride + e; };
  V s[6];
  derivatives_at<kActivation>(d, in, bias_at, value, e, plan.forward_order, s);
  hn::StoreU(s[0], d, out + e);
  V weighted_squares = hn::Zero(d);
  for (int64_t i = 0; i < plan.coordinates; ++i) {
    const V h1 = hn::LoadU(d, at(in, 1 + i));
    hn::StoreU(hn::Mul(s[1], h1), d, at(out, 1 + i));
    if (plan.laplacian) weighted_squares = hn::MulAdd(hn::Mul(hn::Set(d, plan.weights[i]), h1), h1, weighted_squares);
    const int64_t pure = plan.pure_block[i];
    if (pure < 0) continue;
    // Faa di Bruno along coordinate i: h1 .. h4 in, y2 .. y4 out.
    const V h1h1 = hn::Mul(h1, h1);
    const V h2 = hn::LoadU(d, at(in, pure));
    hn::StoreU(hn::MulAdd(s[1], h2, hn::Mul(s[2], h1h1)), d, at(out, pure));
    if (plan.pure_order < 3) continue;
    const V h3 = hn::LoadU(d, at(in, pure + 1));
    const V h1h2 = hn::Mul(h1, h2);
    V y3 = hn::MulAdd(s[1], h3, hn::Mul(hn::Mul(hn::Set(d, T(3)), s[2]), h1h2));
    y3 = hn::MulAdd(s[3], hn::Mul(h1h1, h1), y3);
    hn::StoreU(y3, d, at(out, pure + 1));
    if (plan.pure_order < 4) continue;
    const V h4 = hn::LoadU(d, at(in, pure + 2));
    // s' h4 + s''(4 h1 h3 + 3 h2^2) + 6 s''' h1^2 h2 + s'''' h1^4
    const V inner = hn::MulAdd(hn::Set(d, T(4)), hn::Mul(h1, h3), hn::Mul(hn::Set(d, T(3)), hn::Mul(h2, h2)));
    V y4 = hn::MulAdd(s[1], h4, hn::Mul(s[2], inner));
    y4 = hn::MulAdd(hn::Mul(hn::Set(d, T(6)), s[3]), hn::Mul(h1h1, h2), y4);
    y4 = hn::MulAdd(s[4], hn::Mul(h1h1, h1h1), y4);
    hn::StoreU(y4, d, at(out, pure + 2));
  }
  if (plan.laplacian) {
    const V l = hn::LoadU(d, at(in, plan.laplacian_block));
    hn::StoreU(hn::MulAdd(s[1], l, hn::Mul(s[2], weighted_squares)), d, at(out, plan.laplacian_block));
  }
}

// The backward of forward_vector: each output block's gradient g_* times the
// partial derivatives of that block's formula.
template <JetActivation kActivation, class D, class T>
HWY_INLINE void backward_vector(D d, const JetPlan<T>& plan, const T* in, const T* bias_at, const T* grad_out,
                                T* grad_in, int64_t stride, int64_t e, const T* value) {
  using V = hn::Vec<D>;
  const auto at = [stride, e](auto* base, int64_t block) { return base + block * stride + e; };
  const auto k = [d](double value) { return hn::Set(d, static_cast<T>(value)); };
  V s[6];
  derivatives_at<kActivation>(d, in, bias_at, value, e, plan.forward_order + 1, s);
  V grad_z = hn::Mul(hn::LoadU(d, grad_out + e), s[1]);
  const V g_laplacian = plan.laplacian ? hn::LoadU(d, at(grad_out, plan.laplacian_block)) : hn::Zero(d);
  V weighted_squares = hn::Zero(d);
  for (int64_t i = 0; i < plan.coordinates; ++i) {
    const V h1 = hn::LoadU(d, at(in, 1 + i)), g1 = hn::LoadU(d, at(grad_out, 1 + i));
    V grad_h1 = hn::Mul(g1, s[1]);
    grad_z = hn::MulAdd(hn::Mul(g1, s[2]), h1, grad_z);
    if (plan.laplacian) {
      const V weighted_h1 = hn::Mul(hn::Set(d, plan.weights[i]), h1);
      weighted_squares = hn::MulAdd(weighted_h1, h1, weighted_squares);
      grad_h1 = hn::MulAdd(hn::Mul(g_laplacian, s[2]), hn::Add(weighted_h1, weighted_h1), grad_h1);
    }
    const int64_t pure = plan.pure_block[i];
    if (pure >= 0) {
      const V h1h1 = hn::Mul(h1, h1);
      const V h2 = hn::LoadU(d, at(in, pure)), g2 = hn::LoadU(d, at(grad_out, pure));
      // y2 = s' h2 + s'' h1^2
      grad_z = hn::MulAdd(g2, hn::MulAdd(s[2], h2, hn::Mul(s[3], h1h1)), grad_z);
      grad_h1 = hn::MulAdd(hn::Mul(g2, k(2)), hn::Mul(s[2], h1), grad_h1);
      V grad_h2 = hn::Mul(g2, s[1]);
      if (plan.pure_order >= 3) {
        // y3 = s' h3 + 3 s'' h1 h2 + s''' h1^3
        const V h3 = hn::LoadU(d, at(in, pure + 1)), g3 = hn::LoadU(d, at(grad_out, pure + 1));
        const V h1h2 = hn::Mul(h1, h2);
        V dz3 = hn::MulAdd(s[2], h3, hn::Mul(k(3), hn::Mul(s[3], h1h2)));
        dz3 = hn::MulAdd(s[4], hn::Mul(h1h1, h1), dz3);
        grad_z = hn::MulAdd(g3, dz3, grad_z);
        grad_h1 = hn::MulAdd(hn::Mul(g3, k(3)), hn::MulAdd(s[2], h2, hn::Mul(s[3], h1h1)), grad_h1);
        grad_h2 = hn::MulAdd(hn::Mul(g3, k(3)), hn::Mul(s[2], h1), grad_h2);
        V grad_h3 = hn::Mul(g3, s[1]);
        if (plan.pure_order >= 4) {
          // y4 = s' h4 + s''(4 h1 h3 + 3 h2^2) + 6 s''' h1^2 h2 + s'''' h1^4
          const V h4 = hn::LoadU(d, at(in, pure + 2)), g4 = hn::LoadU(d, at(grad_out, pure + 2));
          const V inner = hn::MulAdd(k(4), hn::Mul(h1, h3), hn::Mul(k(3), hn::Mul(h2, h2)));
          V dz4 = hn::MulAdd(s[2], h4, hn::Mul(s[3], inner));
          dz4 = hn::MulAdd(hn::Mul(k(6), s[4]), hn::Mul(h1h1, h2), dz4);
          dz4 = hn::MulAdd(s[5], hn::Mul(h1h1, h1h1), dz4);
          grad_z = hn::MulAdd(g4, dz4, grad_z);
          // d y4 / d h1 = 4 s'' h3 + 12 s''' h1 h2 + 4 s'''' h1^3
          V dh1 = hn::MulAdd(k(4), hn::Mul(s[2], h3), hn::Mul(k(12), hn::Mul(s[3], h1h2)));
          dh1 = hn::MulAdd(hn::Mul(k(4), s[4]), hn::Mul(h1h1, h1), dh1);
          grad_h1 = hn::MulAdd(g4, dh1, grad_h1);
          // d y4 / d h2 = 6 s'' h2 + 6 s''' h1^2
          grad_h2 = hn::MulAdd(hn::Mul(g4, k(6)), hn::MulAdd(s[2], h2, hn::Mul(s[3], h1h1)), grad_h2);
          grad_h3 = hn::MulAdd(hn::Mul(g4, k(4)), hn::Mul(s[2], h1), grad_h3);
          hn::StoreU(hn::Mul(g4, s[1]), d, at(grad_in, pure + 2));
        }
        hn::StoreU(grad_h3, d, at(grad_in, pure + 1));
      }
      hn::StoreU(grad_h2, d, at(grad_in, pure));
    }
    hn::StoreU(grad_h1, d, at(grad_in, 1 + i));
  }
  if (plan.laplacian) {
    // L' = s' L + s'' sum_i c_i G_i^2
    const V l = hn::LoadU(d, at(in, plan.laplacian_block));
    grad_z = hn::MulAdd(g_laplacian, hn::MulAdd(s[2], l, hn::Mul(s[3], weighted_squares)), grad_z);
    hn::StoreU(hn::Mul(g_laplacian, s[1]), d, at(grad_in, plan.laplacian_block));
  }
  hn::StoreU(grad_z, d, grad_in + e);
}

// Runs `step(in, grad_out, value, out, stride, e, bias_at)` over every vector
// of a block (in parallel), then over the last partial vector, which is copied
// into zero-padded blocks of one vector each (Highway 1.0.3 has no
// LoadN/StoreN; Note [Vector math tail] in vector_math.cpp). The inputs are
// `in`, for the backward pass `grad_out`, and the activation's values `value`
// (one block, or null).
template <class D, class T, class Step>
void jet_loop(D d, const JetPlan<T>& plan, const T* bias, const T* in, const T* grad_out, const T* value, T* out,
              Step step) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const std::vector<T> bias_tile = tile_bias(bias, plan.width, lanes);
  const int64_t full_vectors = plan.stride / lanes;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrainSize / (lanes * plan.blocks));
  parallel_for(0, full_vectors, grain, [&](int64_t lo, int64_t hi) {
    int64_t column = (lo * lanes) % plan.width;
    for (int64_t v = lo; v < hi; ++v) {
      step(in, grad_out, value, out, plan.stride, v * lanes, bias_tile.data() + column);
      column += lanes;
      while (column >= plan.width) column -= plan.width;
    }
  });
  const int64_t done = full_vectors * lanes, tail = plan.stride - done;
  if (tail == 0) return;
  const size_t padded_size = static_cast<size_t>(plan.blocks * lanes);
  std::vector<T> padded_in(padded_size, T(0)), padded_grad(grad_out ? padded_size : 0, T(0)),
      padded_value(value ? lanes : 0, T(0)), padded_out(padded_size, T(0));
  for (int64_t b = 0; b < plan.blocks; ++b) {
    std::memcpy(padded_in.data() + b * lanes, in + b * plan.stride + done, tail * sizeof(T));
    if (grad_out) std::memcpy(padded_grad.data() + b * lanes, grad_out + b * plan.stride + done, tail * sizeof(T));
  }
  if (value) std::memcpy(padded_value.data(), value + done, tail * sizeof(T));
  step(padded_in.data(), grad_out ? padded_grad.data() : nullptr, value ? padded_value.data() : nullptr,
       padded_out.data(), lanes, 0, bias_tile.data() + done % plan.width);
  for (int64_t b = 0; b < plan.blocks; ++b)
    std::memcpy(out + b * plan.stride + done, padded_out.data() + b * lanes, tail * sizeof(T));
}

// `value`: the activation's values (block 0 of `out`, kept from an earlier
// pass over the same jet), or null.
template <JetActivation kActivation, class T>
void forward_on_target(const JetLayout& layout, const T* jet, const T* bias, T* out, const T* value) {
  const hn::ScalableTag<T> d;
  const JetPlan<T> plan(layout);
  jet_loop(d, plan, bias, jet, static_cast<const T*>(nullptr), value, out,
           [&](const T* in, const T*, const T* values, T* result, int64_t stride, int64_t e, const T* bias_at) {
             forward_vector<kActivation>(d, plan, in, bias_at, values, result, stride, e);
           });
}

// `value`: the forward pass's output values (block 0 of its jet), or null.
template <JetActivation kActivation, class T>
void backward_on_target(const JetLayout& layout, const T* jet, const T* bias, const T* grad_out, T* grad_jet,
                        const T* value) {
  const hn::ScalableTag<T> d;
  const JetPlan<T> plan(layout);
  jet_loop(d, plan, bias, jet, grad_out, value, grad_jet,
           [&](const T* in, const T* grad, const T* values, T* result, int64_t stride, int64_t e, const T* bias_at) {
             backward_vector<kActivation>(d, plan, in, bias_at, grad, result, stride, e, values);
           });
}

// sum[j] += g[r, j] for r = 0 .. rows - 1 in order (a bias's gradient), each
// column's running sum kept in a register rather than stored after every row.
template <class T>
void add_rows_on_target(const T* g, int64_t rows, int64_t width, T* sum) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  for (; j + lanes <= width; j += lanes) {
    auto total = hn::LoadU(d, sum + j);
    for (int64_t r = 0; r < rows; ++r) total = hn::Add(total, hn::LoadU(d, g + r * width + j));
    hn::StoreU(total, d, sum + j);
  }
  for (; j < width; ++j) {
    T total = sum[j];
    for (int64_t r = 0; r < rows; ++r) total += g[r * width + j];
    sum[j] = total;
  }
}
void add_rows_double(const double* g, int64_t rows, int64_t width, double* sum) {
  add_rows_on_target(g, rows, width, sum);
}
void add_rows_float(const float* g, int64_t rows, int64_t width, float* sum) {
  add_rows_on_target(g, rows, width, sum);
}

// HWY_EXPORT needs plain (non-template) functions, one per dtype and direction.
template <class T>
void forward_dispatch(JetActivation activation, const JetLayout& layout, const T* jet, const T* bias, T* out,
                      const T* value) {
  switch (activation) {
    case JetActivation::Tanh: return forward_on_target<JetActivation::Tanh>(layout, jet, bias, out, value);
    case JetActivation::Sigmoid: return forward_on_target<JetActivation::Sigmoid>(layout, jet, bias, out, value);
    case JetActivation::Silu: return forward_on_target<JetActivation::Silu>(layout, jet, bias, out, value);
    case JetActivation::Relu: return forward_on_target<JetActivation::Relu>(layout, jet, bias, out, value);
    case JetActivation::Sin: return forward_on_target<JetActivation::Sin>(layout, jet, bias, out, value);
  }
}
template <class T>
void backward_dispatch(JetActivation activation, const JetLayout& layout, const T* jet, const T* bias,
                       const T* grad_out, T* grad_jet, const T* value) {
  switch (activation) {
    case JetActivation::Tanh:
      return backward_on_target<JetActivation::Tanh>(layout, jet, bias, grad_out, grad_jet, value);
    case JetActivation::Sigmoid:
      return backward_on_target<JetActivation::Sigmoid>(layout, jet, bias, grad_out, grad_jet, value);
    case JetActivation::Silu:
      return backward_on_target<JetActivation::Silu>(layout, jet, bias, grad_out, grad_jet, value);
    case JetActivation::Relu:
      return backward_on_target<JetActivation::Relu>(layout, jet, bias, grad_out, grad_jet, value);
    case JetActivation::Sin:
      return backward_on_target<JetActivation::Sin>(layout, jet, bias, grad_out, grad_jet, value);
  }
}
void jet_forward_double(JetActivation activation, const JetLayout& layout, const double* jet, const double* bias,
                        double* out, const double* value) {
  forward_dispatch(activation, layout, jet, bias, out, value);
}
void jet_forward_float(JetActivation activation, const JetLayout& layout, const float* jet, const float* bias,
                       float* out, const float* value) {
  forward_dispatch(activation, layout, jet, bias, out, value);
}
void jet_backward_double(JetActivation activation, const JetLayout& layout, const double* jet, const double* bias,
                         const double* grad_out, double* grad_jet, const double* value) {
  backward_dispatch(activation, layout, jet, bias, grad_out, grad_jet, value);
}
void jet_backward_float(JetActivation activation, const JetLayout& layout, const float* jet, const float* bias,
                        const float* grad_out, float* grad_jet, const float* value) {
  backward_dispatch(activation, layout, jet, bias, grad_out, grad_jet, value);
}

}  // namespace HWY_NAMESPACE
}  // namespace gradiens::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gradiens::kernels::cpu {

HWY_EXPORT(jet_forward_double);
HWY_EXPORT(jet_forward_float);
HWY_EXPORT(jet_backward_double);
HWY_EXPORT(jet_backward_float);
HWY_EXPORT(add_rows_double);
HWY_EXPORT(add_rows_float);

namespace {
// The invariants pinn/taylor checks for its users; here a violation is a bug.
void check_layout(const JetLayout& layout) {
  GD_INTERNAL_ASSERT(layout.samples >= 0 && layout.width > 0 && layout.coordinates >= 0,
                     "jet_activation: bad layout sizes");
  GD_INTERNAL_ASSERT(layout.pure_count == 0 || (layout.pure_order >= 2 && layout.pure_order <= 4),
                     "jet_activation: pure_order must be 2..4");
  for (int64_t p = 0; p < layout.pure_count; ++p)
    GD_INTERNAL_ASSERT(layout.pure_dims[p] >= 0 && layout.pure_dims[p] < layout.coordinates,
                       "jet_activation: pure coordinate out of range");
}
}  // namespace

void jet_activation_forward(JetActivation activation, const JetLayout& layout, const double* jet, const double* bias,
                            double* out) {
  check_layout(layout);
  HWY_DYNAMIC_DISPATCH(jet_forward_double)(activation, layout, jet, bias, out, nullptr);
}
void jet_activation_forward(JetActivation activation, const JetLayout& layout, const float* jet, const float* bias,
                            float* out) {
  check_layout(layout);
  HWY_DYNAMIC_DISPATCH(jet_forward_float)(activation, layout, jet, bias, out, nullptr);
}
void jet_activation_backward(JetActivation activation, const JetLayout& layout, const double* jet, const double* bias,
                             const double* grad_out, double* grad_jet) {
  check_layout(layout);
  HWY_DYNAMIC_DISPATCH(jet_backward_double)(activation, layout, jet, bias, grad_out, grad_jet, nullptr);
}
void jet_activation_backward(JetActivation activation, const JetLayout& layout, const float* jet, const float* bias,
                             const float* grad_out, float* grad_jet) {
  check_layout(layout);
  HWY_DYNAMIC_DISPATCH(jet_backward_float)(activation, layout, jet, bias, grad_out, grad_jet, nullptr);
}

// ---- the whole MLP (Note [Jet MLP in cache] in taylor.h) ----------------------

namespace {

// The activation's forward and backward given its values (block 0 of its
// output jet, or null): for tanh and the sigmoid they then do not evaluate
// the function again, nor read block 0 of `jet`.
void forward_with_value(JetActivation activation, const JetLayout& layout, const double* jet, double* out,
                        const double* value) {
  HWY_DYNAMIC_DISPATCH(jet_forward_double)(activation, layout, jet, nullptr, out, value);
}
void forward_with_value(JetActivation activation, const JetLayout& layout, const float* jet, float* out,
                        const float* value) {
  HWY_DYNAMIC_DISPATCH(jet_forward_float)(activation, layout, jet, nullptr, out, value);
}
void backward_with_value(JetActivation activation, const JetLayout& layout, const double* jet, const double* grad_out,
                         double* grad_jet, const double* value) {
  HWY_DYNAMIC_DISPATCH(jet_backward_double)(activation, layout, jet, nullptr, grad_out, grad_jet, value);
}
void backward_with_value(JetActivation activation, const JetLayout& layout, const float* jet, const float* grad_out,
                         float* grad_jet, const float* value) {
  HWY_DYNAMIC_DISPATCH(jet_backward_float)(activation, layout, jet, nullptr, grad_out, grad_jet, value);
}

// sum[j] += g[r, j] over the rows in order.
void add_rows(const double* g, int64_t rows, int64_t width, double* sum) {
  HWY_DYNAMIC_DISPATCH(add_rows_double)(g, rows, width, sum);
}
void add_rows(const float* g, int64_t rows, int64_t width, float* sum) {
  HWY_DYNAMIC_DISPATCH(add_rows_float)(g, rows, width, sum);
}

// Where each layer's kept values start (Note [Kept activation values] in
// taylor.h), or -1 for a layer that keeps none; returns how many there are.
template <class T>
int64_t kept_value_offsets(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count,
                           std::vector<int64_t>& offsets) {
  int64_t width = layout.coordinates, kept_width = 0;
  offsets.clear();
  for (int64_t l = 0; l < count; ++l) {
    const JetMlpLayer<T>& layer = layers[l];
    if (layer.linear) width = layer.out_features;
    const bool keeps = !layer.linear && derivatives_from_values(layer.activation);
    offsets.push_back(keeps ? kept_width * layout.samples : -1);
    if (keeps) kept_width += width;
  }
  return kept_width * layout.samples;
}

// The checks of the activation kernels; the MLP's layout has no width of its own.
void check_mlp_layout(const JetLayout& layout) {
  JetLayout checked = layout;
  checked.width = 1;
  check_layout(checked);
}

// C = op(A) op(B) + beta C on a sample block, in tiles of at most
// kSmallGemmMaxN columns (and rows, for weight gradients) through small_gemm,
// which reads the operands in place; in cache it runs about a fifth faster
// than OpenBLAS on these shapes, whose panel packing is a large share of a
// small product. Elsewhere (no AVX2, float32) gemm decides. `bias` (n values,
// or null; beta == 0) is added to every row after the product's rounding,
// inside small_gemm where it can be.
template <class T>
void block_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                int64_t ldb, T beta, T* c, int64_t ldc, const T* bias = nullptr) {
  if (m == 0) return;
  constexpr int64_t tile = kSmallGemmMaxN;
  if constexpr (std::is_same_v<T, double>) {
    // Long reductions (weight gradients) take the widest row tile small_gemm accepts.
    for (const int64_t row_tile : {trans_a ? tile : m, trans_a ? int64_t{32} : m}) {
      if (!small_gemm_applies(trans_a, trans_b, std::min(m, row_tile), std::min(n, tile), k)) continue;
      if (bias && !small_gemm_bias_applies(trans_a, trans_b, std::min(m, row_tile), std::min(n, tile), k)) continue;
      for (int64_t i = 0; i < m; i += row_tile)
        for (int64_t j = 0; j < n; j += tile) {
          const double* a_tile = trans_a ? a + i : a + i * lda;
          const double* b_tile = trans_b ? b + j * ldb : b + j;
          small_gemm(trans_a, trans_b, std::min(row_tile, m - i), std::min(tile, n - j), k, 1.0, a_tile, lda,
                     b_tile, ldb, beta, c + i * ldc + j, ldc, bias ? bias + j : nullptr);
        }
      return;
    }
  }
  gemm(trans_a, trans_b, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
  if (bias)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] += bias[j];
}

// Bytes of jets one sample block may hold: about a core's L2. Measured on
// the 5-D Poisson net (K = 7, width 64): 1 MiB beat 4 MiB by a sixth and
// 512 KiB (8-row blocks, GEMMs too small to be efficient) by a third.
constexpr int64_t kChunkBytes = int64_t{1} << 20;

// A thread's buffers for JetMlp, kept from call to call: a training step's
// fresh megabytes would otherwise be zeroed and page-faulted in on every call
// (3-4% of the Burgers step).
template <class T>
struct JetMlpBuffers {
  std::vector<std::vector<T>> weights_t;  // each Linear's weight transposed, [in, out]
  std::vector<T> seed, grad_a, grad_b, grad_chunk;
  std::vector<std::vector<T>> outputs;  // each layer's output jet of one sample block
};

template <class T>
JetMlpBuffers<T>& thread_buffers() {
  static thread_local JetMlpBuffers<T> buffers;
  return buffers;
}

// Asks for `count` values at `p` to be brought into cache.
template <class T>
void prefetch(const T* p, int64_t count) {
  const char* bytes = reinterpret_cast<const char*>(p);
  for (int64_t offset = 0; offset < count * static_cast<int64_t>(sizeof(T)); offset += 64)
    __builtin_prefetch(bytes + offset);
}

// Rows of one sample block: as many as keep the block's jets within
// kChunkBytes (Note [Jet MLP in cache] in taylor.h).
template <class T>
int64_t sample_block_rows(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, bool forward_only) {
  int64_t width = layout.coordinates, previous = layout.coordinates, total_width = layout.coordinates;
  int64_t widest_pair = 0;
  for (int64_t l = 0; l < count; ++l) {
    if (layers[l].linear) width = layers[l].out_features;
    widest_pair = std::max(widest_pair, width + previous);
    previous = width;
    total_width += width;
  }
  // Without a backward, two layers' jets take half of the chunk's bytes: a
  // whole 1 MiB of them ran slower on the Burgers net (3,120-row blocks).
  const int64_t held_width = forward_only ? 2 * (layout.coordinates + widest_pair) : total_width;
  const int64_t per_sample = layout.blocks() * held_width * static_cast<int64_t>(sizeof(T));
  return std::clamp<int64_t>(kChunkBytes / std::max<int64_t>(per_sample, 1), 8, std::max<int64_t>(layout.samples, 8));
}

// How many threads share the samples of `block_count` sample blocks (Note
// [Sample blocks on threads] in taylor.h): one, unless every product of the
// network takes small_gemm, which is safe to call from several threads at once.
template <class T>
int sample_block_parts(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, int64_t block_count,
                       int64_t block_rows) {
  if constexpr (!std::is_same_v<T, double>) {
    return 1;
  } else {
    const int threads = num_threads();
    if (threads < 2 || block_count < 2) return 1;
    const int64_t reduction = layout.blocks() * block_rows, tile = kSmallGemmMaxN;
    for (int64_t l = 0; l < count; ++l) {
      const JetMlpLayer<T>& layer = layers[l];
      if (!layer.linear) continue;
      const int64_t in = layer.in_features, out = layer.out_features;
      const bool direct = small_gemm_bias_applies(false, false, 1, std::min(out, tile), in) &&
                          small_gemm_applies(false, false, 1, std::min(in, tile), out) &&
                          small_gemm_applies(true, false, std::min<int64_t>(out, 32), std::min(in, tile), reduction);
      if (!direct) return 1;
    }
    return static_cast<int>(std::min<int64_t>(threads, block_count));
  }
}

template <class T>
class JetMlp {
 public:
  // forward_only: no backward() follows, so only the jets of two layers at a
  // time need to stay in cache, and the sample blocks are that much larger.
  JetMlp(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, bool forward_only)
      : layout_(layout), layers_(layers), count_(count), blocks_(layout.blocks()), forward_only_(forward_only),
        buffers_(thread_buffers<T>()) {
    int64_t width = layout.coordinates;
    buffers_.weights_t.resize(static_cast<size_t>(count));
    buffers_.outputs.resize(static_cast<size_t>(count));
    for (int64_t l = 0; l < count; ++l) {
      const JetMlpLayer<T>& layer = layers[l];
      if (layer.linear) {
        width = layer.out_features;
        // W^T once per call: the forward products of every sample block read it in place.
        std::vector<T>& weight_t = buffers_.weights_t[static_cast<size_t>(l)];
        weight_t.resize(static_cast<size_t>(layer.in_features * layer.out_features));
        for (int64_t j = 0; j < layer.out_features; ++j)
          for (int64_t p = 0; p < layer.in_features; ++p)
            weight_t[static_cast<size_t>(p * layer.out_features + j)] = layer.weight[j * layer.in_features + p];
      }
      widths_.push_back(width);
    }
    kept_value_offsets(layout, layers, count, kept_offsets_);
  }
  int64_t out_width() const { return widths_.empty() ? layout_.coordinates : widths_.back(); }
  std::vector<T>& grad_chunk() { return buffers_.grad_chunk; }

  // Runs samples [row0, row0 + rows) through the network; outputs[l] holds
  // layer l's output jet [K, rows, width_l] and seed the input jet. `keep`
  // (or null) receives the values the activations keep; with `kept` (or
  // null) they are read instead of evaluated, and the Linears before them
  // skip their value blocks (Note [Kept activation values] in taylor.h).
  void forward(const T* x, int64_t row0, int64_t rows, T* keep, const T* kept) {
    const int64_t d = layout_.coordinates;
    std::vector<T>& seed = buffers_.seed;
    seed.assign(static_cast<size_t>(blocks_ * rows * d), T(0));
    std::memcpy(seed.data(), x + row0 * d, static_cast<size_t>(rows * d) * sizeof(T));
    for (int64_t i = 0; i < d; ++i)
      for (int64_t r = 0; r < rows; ++r) seed[((1 + i) * rows + r) * d + i] = T(1);
    const T* in = seed.data();
    int64_t width = d;
    for (int64_t l = 0; l < count_; ++l) {
      const JetMlpLayer<T>& layer = layers_[l];
      std::vector<T>& out = buffers_.outputs[slot(l)];
      out.resize(static_cast<size_t>(blocks_ * rows * widths_[l]));
      if (layer.linear) {
        // The bias joins the value block only: its rows and the derivatives' take one product each.
        const int64_t out_features = layer.out_features;
        const T* weight_t = buffers_.weights_t[static_cast<size_t>(l)].data();
        const bool values_kept = kept && l + 1 < count_ && kept_offsets_[l + 1] >= 0;
        // Read from memory while this product runs: they were written a whole pass ago.
        if (values_kept) prefetch(kept + kept_offsets_[l + 1] + row0 * out_features, rows * out_features);
        if (!values_kept)
          block_gemm(false, false, rows, out_features, width, in, width, weight_t, out_features, T(0), out.data(),
                     out_features, layer.bias);
        block_gemm(false, false, (blocks_ - 1) * rows, out_features, width, in + rows * width, width, weight_t,
                   out_features, T(0), out.data() + rows * out_features, out_features);
      } else {
        const int64_t offset = kept_offsets_[l];
        const T* value = kept && offset >= 0 ? kept + offset + row0 * width : nullptr;
        forward_with_value(layer.activation, block_layout(rows, width), in, out.data(), value);
        if (keep && offset >= 0)
          std::memcpy(keep + offset + row0 * width, out.data(), static_cast<size_t>(rows * width) * sizeof(T));
      }
      in = out.data();
      width = widths_[l];
    }
  }
  const T* output() const { return count_ > 0 ? buffers_.outputs[slot(count_ - 1)].data() : buffers_.seed.data(); }

  // After forward() of the same samples: the gradients of <grad, output>
  // (grad [K, rows, m]) accumulated into grad_weight/grad_bias, and the
  // value block's gradient written to grad_x rows.
  void backward(const T* grad, int64_t row0, int64_t rows, T* grad_x, T* const* grad_weight, T* const* grad_bias) {
    const int64_t d = layout_.coordinates;
    std::vector<T>& g = buffers_.grad_a;
    std::vector<T>& next = buffers_.grad_b;
    g.assign(grad, grad + blocks_ * rows * out_width());
    for (int64_t l = count_ - 1; l >= 0; --l) {
      const JetMlpLayer<T>& layer = layers_[l];
      const T* in = l > 0 ? buffers_.outputs[l - 1].data() : buffers_.seed.data();
      const int64_t width_in = l > 0 ? widths_[l - 1] : d;
      if (layer.linear) {
        const int64_t out_features = layer.out_features;
        if (grad_weight[l])
          block_gemm(true, false, out_features, width_in, blocks_ * rows, g.data(), out_features, in, width_in, T(1),
                     grad_weight[l], width_in);
        if (grad_bias[l]) add_rows(g.data(), rows, out_features, grad_bias[l]);
        // Below the first layer only the value block of the seed depends on x.
        if (l == 0 && !grad_x) return;
        const int64_t grad_rows = l > 0 ? blocks_ * rows : rows;
        next.resize(static_cast<size_t>(blocks_ * rows * width_in));
        block_gemm(false, false, grad_rows, width_in, out_features, g.data(), out_features, layer.weight, width_in,
                   T(0), next.data(), width_in);
      } else {
        if (l == 0 && !grad_x) return;
        next.resize(static_cast<size_t>(blocks_ * rows * width_in));
        // The recomputed forward's output values spare evaluating the activation again.
        backward_with_value(layer.activation, block_layout(rows, width_in), in, g.data(), next.data(),
                            buffers_.outputs[l].data());
      }
      std::swap(g, next);
    }
    if (grad_x) std::memcpy(grad_x + row0 * d, g.data(), static_cast<size_t>(rows * d) * sizeof(T));
  }

 private:
  // Where layer l's output jet is held: the last two layers' only, without a backward.
  size_t slot(int64_t l) const { return static_cast<size_t>(forward_only_ ? l % 2 : l); }
  JetLayout block_layout(int64_t rows, int64_t width) const {
    JetLayout layout = layout_;
    layout.samples = rows;
    layout.width = width;
    return layout;
  }

  JetLayout layout_;
  const JetMlpLayer<T>* layers_;
  int64_t count_, blocks_;
  bool forward_only_;
  std::vector<int64_t> widths_;        // each layer's output width
  std::vector<int64_t> kept_offsets_;  // each layer's first kept value, or -1
  JetMlpBuffers<T>& buffers_;
};

// out[k, row0 + r, :] = chunk[k, r, :] (or the reverse with `gather`).
template <class T>
void copy_rows(T* full, T* chunk, int64_t blocks, int64_t samples, int64_t row0, int64_t rows, int64_t width,
               bool gather) {
  for (int64_t k = 0; k < blocks; ++k) {
    T* full_rows = full + (k * samples + row0) * width;
    T* chunk_rows = chunk + k * rows * width;
    const size_t bytes = static_cast<size_t>(rows * width) * sizeof(T);
    if (gather) std::memcpy(chunk_rows, full_rows, bytes);
    else std::memcpy(full_rows, chunk_rows, bytes);
  }
}

}  // namespace

template <class T>
int64_t jet_mlp_kept_values(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count) {
  check_mlp_layout(layout);
  std::vector<int64_t> offsets;
  return kept_value_offsets(layout, layers, count, offsets);
}

template <class T>
void jet_mlp_forward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x, T* out,
                     T* keep) {
  check_mlp_layout(layout);
  const int64_t n = layout.samples, rows_per_block = sample_block_rows(layout, layers, count, /*forward_only=*/true);
  const int64_t block_count = (n + rows_per_block - 1) / rows_per_block;
  const int parts = sample_block_parts(layout, layers, count, block_count, rows_per_block);
  parallel_parts(n, parts, [&](int, int64_t first, int64_t last) {
    JetMlp<T> mlp(layout, layers, count, /*forward_only=*/true);
    const int64_t blocks = layout.blocks(), width = mlp.out_width();
    for (int64_t row0 = first; row0 < last; row0 += rows_per_block) {
      const int64_t rows = std::min(rows_per_block, last - row0);
      mlp.forward(x, row0, rows, keep, nullptr);
      copy_rows(out, const_cast<T*>(mlp.output()), blocks, n, row0, rows, width, /*gather=*/false);
    }
  });
}

template <class T>
void jet_mlp_backward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x,
                      const T* grad_out, T* grad_x, T* const* grad_weight, T* const* grad_bias, const T* kept) {
  check_mlp_layout(layout);
  const int64_t n = layout.samples, rows_per_block = sample_block_rows(layout, layers, count, /*forward_only=*/false);
  const int64_t block_count = (n + rows_per_block - 1) / rows_per_block;
  const int parts = sample_block_parts(layout, layers, count, block_count, rows_per_block);
  // Part 0 sums into the caller's gradients, each later part into its own zeroed
  // copy (the layers' weight and bias gradients one after another), added in part order below.
  std::vector<int64_t> offsets(static_cast<size_t>(2 * count + 1), 0);
  for (int64_t l = 0; l < count; ++l) {
    const int64_t weights = layers[l].linear && grad_weight[l] ? layers[l].out_features * layers[l].in_features : 0;
    const int64_t biases = layers[l].linear && grad_bias[l] ? layers[l].out_features : 0;
    offsets[2 * l + 1] = offsets[2 * l] + weights;
    offsets[2 * l + 2] = offsets[2 * l + 1] + biases;
    if (weights > 0) std::fill_n(grad_weight[l], weights, T(0));
    if (biases > 0) std::fill_n(grad_bias[l], biases, T(0));
  }
  const int64_t per_part = offsets.back();
  std::vector<T> part_sums(static_cast<size_t>((parts - 1) * per_part), T(0));
  parallel_parts(n, parts, [&](int part, int64_t first, int64_t last) {
    std::vector<T*> part_weight(grad_weight, grad_weight + count), part_bias(grad_bias, grad_bias + count);
    if (part > 0) {
      T* sums = part_sums.data() + (part - 1) * per_part;
      for (int64_t l = 0; l < count; ++l) {
        if (part_weight[l]) part_weight[l] = sums + offsets[2 * l];
        if (part_bias[l]) part_bias[l] = sums + offsets[2 * l + 1];
      }
    }
    JetMlp<T> mlp(layout, layers, count, /*forward_only=*/false);
    const int64_t blocks = layout.blocks(), width = mlp.out_width();
    std::vector<T>& grad_chunk = mlp.grad_chunk();
    for (int64_t row0 = first; row0 < last; row0 += rows_per_block) {
      const int64_t rows = std::min(rows_per_block, last - row0);
      mlp.forward(x, row0, rows, nullptr, kept);
      grad_chunk.resize(static_cast<size_t>(blocks * rows * width));
      copy_rows(const_cast<T*>(grad_out), grad_chunk.data(), blocks, n, row0, rows, width, /*gather=*/true);
      mlp.backward(grad_chunk.data(), row0, rows, grad_x, part_weight.data(), part_bias.data());
    }
  });
  for (int part = 1; part < parts; ++part) {
    const T* sums = part_sums.data() + (part - 1) * per_part;
    for (int64_t l = 0; l < count; ++l) {
      for (int64_t i = offsets[2 * l]; i < offsets[2 * l + 1]; ++i) grad_weight[l][i - offsets[2 * l]] += sums[i];
      for (int64_t i = offsets[2 * l + 1]; i < offsets[2 * l + 2]; ++i)
        grad_bias[l][i - offsets[2 * l + 1]] += sums[i];
    }
  }
}

template int64_t jet_mlp_kept_values<double>(const JetLayout&, const JetMlpLayer<double>*, int64_t);
template int64_t jet_mlp_kept_values<float>(const JetLayout&, const JetMlpLayer<float>*, int64_t);
template void jet_mlp_forward<double>(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*, double*,
                                      double*);
template void jet_mlp_forward<float>(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*, float*,
                                     float*);
template void jet_mlp_backward<double>(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*,
                                       const double*, double*, double* const*, double* const*, const double*);
template void jet_mlp_backward<float>(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*,
                                      const float*, float*, float* const*, float* const*, const float*);

}  // namespace gradiens::kernels::cpu
#endif  // HWY_ONCE
