// dropout (a seeded Bernoulli mask times the input) and embedding (a row
// lookup through index_select), both composites whose backward is that of the
// ops they are built of.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/nn_ops.h"
#include "kernels/error.h"

namespace gradiens {

namespace {

}  // namespace

Tensor dropout(const Tensor& input, double p, bool training) {
  GD_CHECK(p >= 0 && p <= 1, fmt::format("dropout probability has to be between 0 and 1, but got {}", p));
  if (!training || p == 0 || input.numel() == 0) return input;
  // PyTorch fails here only when it divides the integer mask by 1 - p; this is its message for that.
  GD_CHECK(input.is_floating_point(), fmt::format("result type Float can't be cast to the desired output type {}",
                                                  c10_type_name(input.dtype())));
  if (p == 1) return input * zeros({}, input.options());
  // The mask is made as PyTorch's _dropout makes it: bernoulli(1 - p) divided
  // by 1 - p in the input's dtype, so a float32 mask holds 1.0f / float(1 - p),
  // not the float nearest 1 / (1 - p) (which differs for p = 0.45).
  Tensor noise;
  {
    NoGradGuard no_grad;
    noise = bernoulli(input.detach(), 1 - p);
    noise.div_(scalar_tensor(1 - p, noise.options()));
  }
  return input * noise;
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  GD_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  GD_CHECK(indices.dtype() == kInt64 || indices.dtype() == kInt32,
           fmt::format("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                       "Int; but got torch.{} instead (while checking arguments for embedding)",
                       legacy_tensor_type_name(indices.dtype())));
  const int64_t rows = weight.size(0);
  GD_CHECK(padding_idx >= -1 && padding_idx < rows, "Padding_idx must be within num_embeddings");

  Tensor flat = indices.reshape({-1});
  bool has_padding = false;
  if (flat.device().is_cuda()) {
    // Checked with device reductions, each read back once (a kernel cannot throw).
    NoGradGuard no_grad;
    Tensor ids = flat.to(kInt64);
    if (ids.numel() > 0) {
      GD_CHECK(!any(logical_or(lt(ids, 0), ge(ids, rows))).item<bool>(), "index out of range in self");
      has_padding = padding_idx >= 0 && any(eq(ids, padding_idx)).item<bool>();
    }
  } else {
    NoGradGuard no_grad;
    Tensor ids = flat.to(kInt64).contiguous();
    const int64_t* p = ids.cpu_data_ptr<int64_t>();
    for (int64_t i = 0; i < ids.numel(); ++i) {
      GD_CHECK(p[i] >= 0 && p[i] < rows, "index out of range in self");
      has_padding = has_padding || p[i] == padding_idx;
    }
  }

  DimVector shape = indices.sizes().dims();
  shape.push_back(weight.size(1));
  Tensor out = weight.index_select(0, flat).reshape(shape);
  if (!has_padding) return out;
  // Lookups of the padding row keep its value but pass no gradient back to it
  // (nor, under create_graph, any higher derivative).
  Tensor is_padding = (indices == Scalar(padding_idx)).unsqueeze(-1);
  return where(is_padding, out.detach(), out);
}

}  // namespace gradiens
