// parameters_to_vector and vector_to_parameters (nn/utils/convert_parameters.h),
// as torch/nn/utils/convert_parameters.py.
#include "nn/utils/convert_parameters.h"

#include <optional>

#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::nn::utils {

namespace {

// PyTorch's _check_param_device: every parameter on the first one's device.
void check_param_device(const Tensor& parameter, std::optional<Device>& first_device) {
  if (!first_device) {
    first_device = parameter.device();
    return;
  }
  GD_CHECK(parameter.device() == *first_device,
           "Found two parameters on different devices, this is currently not supported.");
}

}  // namespace

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  std::optional<Device> device;
  std::vector<Tensor> flat;
  for (const Tensor& parameter : parameters) {
    check_param_device(parameter, device);
    flat.push_back(parameter.view({-1}));
  }
  return cat(flat);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  std::optional<Device> device;
  const Tensor data = vec.detach();
  int64_t pointer = 0;
  for (const Tensor& parameter : parameters) {
    check_param_device(parameter, device);
    const int64_t count = parameter.numel();
    parameter.set_data(data.slice(0, pointer, pointer + count).view_as(parameter));
    pointer += count;
  }
}

}  // namespace gradiens::nn::utils
