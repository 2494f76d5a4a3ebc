// The recurrent cells of nn::functional, the fused LSTM/GRU pointwise ops with
// their own backward (kernels/rnn.h on any device), and split_rows.
#include "nn/functional/rnn.h"

#include <fmt/format.h>

#include <string_view>

#include "engine/autograd/function.h"
#include "engine/autograd/multi_output.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"
#include "kernels/error.h"
#include "kernels/rnn.h"
#include "kernels/scalar_type.h"
#include "nn/functional/linear.h"

namespace gradiens::nn::functional {

namespace {

// split_rows and the LSTM step record one node for all their outputs (Note
// [Multi-output ops] in engine/autograd/multi_output.h).
struct SplitRows {
  static constexpr std::string_view name = "SplitWithSizesBackward0";
  static std::vector<Tensor> forward(Ctx& ctx, const Tensor& x, const std::vector<int64_t>& sizes) {
    ctx.shape = x.sizes().dims();
    ctx.ints = DimVector(sizes.begin(), sizes.end());
    std::vector<Tensor> pieces;
    pieces.reserve(sizes.size());
    int64_t offset = 0;
    for (int64_t size : sizes) {
      pieces.push_back(x.narrow(0, offset, size));
      offset += size;
    }
    return pieces;
  }
  // Differentiable: cat's backward narrows the gradient back into pieces.
  static GradList backward(Ctx& ctx, const GradList& grads) {
    TensorOptions options;
    for (const Tensor& g : grads)
      if (g.defined()) options = g.options();
    std::vector<Tensor> parts;
    DimVector piece_shape = ctx.shape;
    int64_t missing_rows = 0;  // consecutive pieces without a gradient become one zero block
    auto flush_missing = [&] {
      if (missing_rows == 0) return;
      piece_shape[0] = missing_rows;
      parts.push_back(zeros(piece_shape, options));
      missing_rows = 0;
    };
    for (size_t i = 0; i < ctx.ints.size(); ++i) {
      if (grads[i].defined()) {
        flush_missing();
        parts.push_back(grads[i]);
      } else {
        missing_rows += ctx.ints[i];
      }
    }
    flush_missing();
    return {parts.size() == 1 ? parts[0] : cat(parts, 0)};
  }
};

// Note [Fused cell backward]
// The fused cells save what their one-pass backward kernel needs (the gate
// activations, tanh(c')) as extras, and their inputs as saved variables. A
// backward that is not itself recorded (no create_graph) runs the kernel; under
// create_graph it evaluates the same formulas with differentiable ops
// (sigmoid_backward, tanh_backward, ...) from the saved inputs, so every
// higher derivative exists. float16/bfloat16 always take the second path.

bool has_fused_kernel(const Tensor& t) { return t.dtype() == kFloat32 || t.dtype() == kFloat64; }

struct LstmCellPointwise {
  static constexpr std::string_view name = "LstmCellPointwiseBackward0";
  static std::vector<Tensor> forward(Ctx& ctx, const Tensor& gates_in, const Tensor& cx_in) {
    const int64_t batch = gates_in.size(0), hidden = cx_in.size(1);
    ctx.save_for_backward(gates_in, cx_in);
    if (!has_fused_kernel(gates_in)) {
      auto [h, c] = composite(gates_in, cx_in);
      return {h, c};
    }
    const Tensor gates = gates_in.contiguous(), cx = cx_in.contiguous();
    Tensor act = empty({batch, 4 * hidden}, gates.options());
    Tensor h = empty({batch, hidden}, gates.options()), c = empty({batch, hidden}, gates.options());
    Tensor tc = empty({batch, hidden}, gates.options());
    kernels::lstm_cell_forward(gates.dtype(), gates.data_ptr(), cx.data_ptr(), batch, hidden, act.data_ptr(),
                               h.data_ptr(), c.data_ptr(), tc.data_ptr(), cuda_seam::device_of(gates));
    if (ctx.is_recording()) ctx.extra = {act, tc};
    return {h, c};
  }

  static GradList backward(Ctx& ctx, const GradList& grads) {
    auto [gates, cx] = ctx.saved<2>();
    const Tensor& dh = grads[0];
    const Tensor& dc = grads[1];
    if (GradMode::is_enabled() || ctx.extra.empty()) return differentiable_backward(gates, cx, dh, dc);
    const Tensor act = ctx.extra[0], tc = ctx.extra[1];
    const Tensor cprev = cx.contiguous();
    const Tensor dh_c = dh.defined() ? dh.contiguous() : Tensor(), dc_c = dc.defined() ? dc.contiguous() : Tensor();
    const int64_t batch = act.size(0), H = tc.size(1);
    Tensor dgates = empty({batch, 4 * H}, act.options());
    Tensor dcx = empty({batch, H}, act.options());
    kernels::lstm_cell_backward(act.dtype(), act.data_ptr(), tc.data_ptr(), cprev.data_ptr(),
                                dh_c.defined() ? dh_c.data_ptr() : nullptr, dc_c.defined() ? dc_c.data_ptr() : nullptr,
                                batch, H, dgates.data_ptr(), dcx.data_ptr(), cuda_seam::device_of(act));
    return {dgates, ctx.needs_input_grad(1) ? dcx : Tensor()};
  }

  static std::tuple<Tensor, Tensor> composite(const Tensor& gates, const Tensor& cx) {
    std::vector<Tensor> chunks = gates.chunk(4, 1);
    Tensor c = sigmoid(chunks[1]) * cx + sigmoid(chunks[0]) * tanh(chunks[2]);
    return {sigmoid(chunks[3]) * tanh(c), c};
  }

  static GradList differentiable_backward(const Tensor& gates, const Tensor& cx, const Tensor& dh, const Tensor& dc) {
    std::vector<Tensor> chunks = gates.chunk(4, 1);
    Tensor i = sigmoid(chunks[0]), f = sigmoid(chunks[1]), g = tanh(chunks[2]), o = sigmoid(chunks[3]);
    Tensor tc = tanh(f * cx + i * g);
    Tensor dct = dc.defined() ? dc : Tensor();
    if (dh.defined()) {
      Tensor through_h = tanh_backward(dh * o, tc);
      dct = dct.defined() ? dct + through_h : through_h;
    }
    Tensor d_o = dh.defined() ? sigmoid_backward(dh * tc, o) : zeros_like(o);
    Tensor dgates = cat({sigmoid_backward(dct * g, i), sigmoid_backward(dct * cx, f), tanh_backward(dct * i, g), d_o}, 1);
    return {dgates, dct * f};
  }
};

struct GruCellPointwise {
  static constexpr std::string_view name = "GruCellPointwiseBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& gi_in, const Tensor& gh_in, const Tensor& hx_in) {
    const int64_t batch = gi_in.size(0), hidden = hx_in.size(1);
    ctx.save_for_backward(gi_in, gh_in, hx_in);
    if (!has_fused_kernel(gi_in)) return composite(gi_in, gh_in, hx_in);
    const Tensor gi = gi_in.contiguous(), gh = gh_in.contiguous(), hx = hx_in.contiguous();
    Tensor act = empty({batch, 3 * hidden}, gi.options());
    Tensor h = empty({batch, hidden}, gi.options());
    kernels::gru_cell_forward(gi.dtype(), gi.data_ptr(), gh.data_ptr(), hx.data_ptr(), batch, hidden, act.data_ptr(),
                              h.data_ptr(), cuda_seam::device_of(gi));
    if (ctx.is_recording()) ctx.extra = {act};
    return h;
  }

  static GradList backward(Ctx& ctx, const Tensor& grad) {
    auto [gi, gh, hx] = ctx.saved<3>();
    if (GradMode::is_enabled() || ctx.extra.empty()) return differentiable_backward(gi, gh, hx, grad);
    const Tensor act = ctx.extra[0];
    const Tensor ghc = gh.contiguous(), hxc = hx.contiguous(), g = grad.contiguous();
    const int64_t batch = act.size(0), H = hxc.size(1);
    Tensor dgi = empty({batch, 3 * H}, act.options()), dgh = empty({batch, 3 * H}, act.options());
    Tensor dhx = empty({batch, H}, act.options());
    kernels::gru_cell_backward(act.dtype(), act.data_ptr(), ghc.data_ptr(), hxc.data_ptr(), g.data_ptr(), batch, H,
                               dgi.data_ptr(), dgh.data_ptr(), dhx.data_ptr(), cuda_seam::device_of(act));
    return {dgi, dgh, ctx.needs_input_grad(2) ? dhx : Tensor()};
  }

  // h' = (h - n) * z + n, in ATen's order of operations.
  static Tensor composite(const Tensor& gi, const Tensor& gh, const Tensor& hx) {
    std::vector<Tensor> ic = gi.chunk(3, 1), hc = gh.chunk(3, 1);
    Tensor r = sigmoid(hc[0] + ic[0]), z = sigmoid(hc[1] + ic[1]);
    Tensor n = tanh(ic[2] + hc[2] * r);
    return (hx - n) * z + n;
  }

  static GradList differentiable_backward(const Tensor& gi, const Tensor& gh, const Tensor& hx, const Tensor& grad) {
    std::vector<Tensor> ic = gi.chunk(3, 1), hc = gh.chunk(3, 1);
    Tensor r = sigmoid(hc[0] + ic[0]), z = sigmoid(hc[1] + ic[1]);
    Tensor n = tanh(ic[2] + hc[2] * r);
    Tensor dn = tanh_backward(grad * (1 - z), n);
    Tensor dz = sigmoid_backward(grad * (hx - n), z);
    Tensor dr = sigmoid_backward(dn * hc[2], r);
    return {cat({dr, dz, dn}, 1), cat({dr, dz, dn * r}, 1), grad * z};
  }
};

// ATen's check_rnn_cell_forward_input / check_rnn_cell_forward_hidden, which
// report size(1) (the feature size of a 2-D tensor).
int64_t size_or_zero(const Tensor& t, int64_t dim) { return t.dim() > dim ? t.size(dim) : 0; }

void check_cell_input(const Tensor& input, int64_t input_size) {
  GD_CHECK(input.dim() == 2 && input.size(1) == input_size,
           fmt::format("input has inconsistent input_size: got {} expected {}", size_or_zero(input, 1), input_size));
}

void check_cell_hidden(const Tensor& input, const Tensor& hx, int64_t hidden_size, int hidden_label) {
  GD_CHECK(size_or_zero(input, 0) == size_or_zero(hx, 0),
           fmt::format("Input batch size {} doesn't match hidden{} batch size {}", size_or_zero(input, 0),
                       hidden_label, size_or_zero(hx, 0)));
  GD_CHECK(size_or_zero(hx, 1) == hidden_size,
           fmt::format("hidden{} has inconsistent hidden_size: got {}, expected {}", hidden_label,
                       size_or_zero(hx, 1), hidden_size));
  GD_CHECK(hx.dim() == 2, fmt::format("hidden{} must be 2-D like the input, got a {}-D tensor", hidden_label,
                                      hx.dim()));
}

Tensor rnn_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh, bool use_tanh) {
  check_cell_input(input, w_ih.size(1));
  check_cell_hidden(input, hx, w_hh.size(1), 0);
  Tensor pre = linear(input, w_ih, b_ih) + linear(hx, w_hh, b_hh);
  return use_tanh ? tanh(pre) : relu(pre);
}

void check_pointwise(const Tensor& gates, const Tensor& hx, int64_t chunks, std::string_view op) {
  GD_CHECK(gates.dim() == 2 && hx.dim() == 2 && gates.size(0) == hx.size(0) && gates.size(1) == chunks * hx.size(1),
           fmt::format("{}: expected gates [B, {} * H] and a state [B, H], got {} and {}", op, chunks,
                       shape_to_string(gates.sizes()), shape_to_string(hx.sizes())));
  GD_CHECK(gates.dtype() == hx.dtype(), fmt::format("{}: expected gates and state of one dtype, got {} and {}", op,
                                                    legacy_tensor_type_name(gates.dtype()),
                                                    legacy_tensor_type_name(hx.dtype())));
}

}  // namespace

std::vector<Tensor> split_rows(const Tensor& x, const std::vector<int64_t>& sizes) {
  GD_CHECK(x.dim() >= 1, "split_rows expects at least a 1-dimensional tensor");
  int64_t total = 0;
  for (int64_t s : sizes) {
    GD_CHECK(s >= 0, fmt::format("split_rows: sizes must be non-negative, got {}", s));
    total += s;
  }
  GD_CHECK(total == x.size(0), fmt::format("split_with_sizes expects split_sizes to sum exactly to {} (input tensor's "
                                           "size at dimension 0), but got a sum of {}",
                                           x.size(0), total));
  return apply_multi<SplitRows>(x, sizes);
}

std::tuple<Tensor, Tensor> lstm_cell_pointwise(const Tensor& gates, const Tensor& cx) {
  check_pointwise(gates, cx, 4, "lstm_cell");
  std::vector<Tensor> out = apply_multi<LstmCellPointwise>(gates, cx);
  return {out[0], out[1]};
}

Tensor gru_cell_pointwise(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& hx) {
  check_pointwise(input_gates, hx, 3, "gru_cell");
  check_pointwise(hidden_gates, hx, 3, "gru_cell");
  return apply<GruCellPointwise>(input_gates, hidden_gates, hx);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, /*use_tanh=*/true);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, /*use_tanh=*/false);
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_cell_input(input, w_ih.size(1));
  check_cell_hidden(input, hx, w_hh.size(1), 0);
  check_cell_hidden(input, cx, w_hh.size(1), 1);
  return lstm_cell_pointwise(linear(hx, w_hh, b_hh) + linear(input, w_ih, b_ih), cx);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  check_cell_input(input, w_ih.size(1));
  check_cell_hidden(input, hx, w_hh.size(1), 0);
  return gru_cell_pointwise(linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh), hx);
}

}  // namespace gradiens::nn::functional
