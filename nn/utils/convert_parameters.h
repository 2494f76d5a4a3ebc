// gradiens::nn::utils::parameters_to_vector / vector_to_parameters, as
// torch.nn.utils.convert_parameters: all parameters as one flat vector and back.
#pragma once

#include <vector>

#include "engine/tensor.h"

namespace gradiens::nn::utils {

// The parameters flattened and concatenated, in order, into one 1-D tensor.
// Differentiable (a cat of views). All parameters must be on one device.
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);

// Makes each parameter, in order, a view of the next numel() elements of vec,
// as PyTorch's `param.data = vec[...].view_as(param).data`: the parameters
// keep their identity and requires_grad but share vec's storage (and take its
// dtype). All parameters must be on one device.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace gradiens::nn::utils
