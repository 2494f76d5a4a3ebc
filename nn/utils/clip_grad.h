// gradiens::nn::utils gradient clipping, as torch.nn.utils.clip_grad_norm_ and
// clip_grad_value_: they rescale or clamp the .grad of parameters in place;
// get_total_norm measures without clipping.
#pragma once

#include <vector>

#include "engine/tensor.h"

namespace gradiens::nn::utils {

// The norm_type-norm of `tensors` concatenated (norm_type may be infinity), as
// torch.nn.utils.get_total_norm: a 0-dim tensor in the widest float dtype among
// them (float32 0 for none). error_if_nonfinite makes a NaN or infinite total
// an error with PyTorch's text.
Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type = 2.0, bool error_if_nonfinite = false);

// Scales the gradients of `parameters` together so that their total norm (the
// norm_type-norm of all of them concatenated; norm_type may be infinity) is at
// most max_norm: each is multiplied by min(1, max_norm / (total_norm + 1e-6)).
// Returns the total norm before clipping, a 0-dim tensor (float32 0 when no
// parameter has a gradient). Parameters without a gradient are skipped. When
// the total norm is NaN or infinite, error_if_nonfinite makes that an error;
// otherwise the gradients are scaled by it anyway, as PyTorch does.
// (libtorch returns a double here; PyTorch and gradiens return the tensor.)
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps every gradient of `parameters` to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace gradiens::nn::utils
