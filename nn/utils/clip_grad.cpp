// clip_grad_norm_ and clip_grad_value_ (nn/utils/clip_grad.h), following
// torch/nn/utils/clip_grad.py step for step, so results match PyTorch's bits.
#include "nn/utils/clip_grad.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::nn::utils {

namespace {

// A double as Python's str(float) writes it ("2.0", "inf", "0.5"), since the
// error text interpolates PyTorch's float(norm_type).
std::string python_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == std::floor(value) && std::abs(value) < 1e16) return fmt::format("{:.1f}", value);
  return fmt::format("{}", value);
}

// The gradients that exist, detached, so writing them records nothing.
std::vector<Tensor> defined_grads(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const Tensor& parameter : parameters) {
    Tensor grad = parameter.grad();
    if (grad.defined()) grads.push_back(grad.detach());
  }
  return grads;
}

}  // namespace

Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type, bool error_if_nonfinite) {
  NoGradGuard no_grad;
  if (tensors.empty()) return scalar_tensor(0.0, TensorOptions().dtype(kFloat32));
  // Each norm moves to the first tensor's device; mixed float widths give
  // the wider one, as torch.stack promotes.
  ScalarType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());
  const TensorOptions options = TensorOptions().dtype(dtype).device(tensors[0].device());

  const bool inf_norm = norm_type == std::numeric_limits<double>::infinity();
  std::vector<Tensor> norms;
  for (const Tensor& t : tensors) norms.push_back((inf_norm ? t.abs().max() : norm(t, norm_type)).to(options));
  Tensor total_norm;
  if (inf_norm)
    total_norm = norms.size() == 1 ? norms[0] : stack(norms).max();
  else
    total_norm = norm(stack(norms), norm_type);

  if (error_if_nonfinite && !std::isfinite(total_norm.item<double>()))
    throw Error(fmt::format("The total norm of order {} for gradients from `parameters` is non-finite, so it "
                            "cannot be clipped. To disable this error and scale the gradients by the non-finite "
                            "norm anyway, set `error_if_nonfinite=False`",
                            python_float(norm_type)));
  return total_norm;
}

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = defined_grads(parameters);
  if (grads.empty()) return scalar_tensor(0.0, TensorOptions().dtype(kFloat32));
  const Tensor total_norm = get_total_norm(grads, norm_type, error_if_nonfinite);
  // Multiplying by a coefficient clamped to 1 leaves the gradients as they
  // are; doing it anyway avoids reading the norm back from the device.
  Tensor clip_coef = (max_norm / (total_norm + 1e-6)).clamp_max(1.0);
  for (Tensor grad : grads) grad.mul_(clip_coef.to(grad.options()));
  return total_norm;
}

Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (Tensor grad : defined_grads(parameters)) grad.clamp_(-clip_value, clip_value);
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace gradiens::nn::utils
