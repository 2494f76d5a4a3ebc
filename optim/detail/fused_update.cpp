// The checks the first-order optimizers share (see fused_update.h).
#include "optim/detail/fused_update.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/sparse.h"

namespace gradiens::optim::detail {

std::string python_float(double value) {
  // fmt's shortest round-trip form switches to exponent notation where Python's
  // repr does (below 1e-4, from 1e16); Python adds ".0" to an integral value.
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eani") == std::string::npos) text += ".0";
  return text;
}

void check_grad(const Tensor& param, const Tensor& grad, std::string_view optimizer, std::string_view sparse_message) {
  GD_CHECK(!is_sparse(grad), std::string(sparse_message));
  GD_CHECK(param.is_cpu() && grad.is_cpu(),
           fmt::format("{}: only CPU parameters are supported, got a parameter on {}", optimizer,
                       param.is_cpu() ? grad.device().str() : param.device().str()));
  GD_CHECK(param.dtype() == kFloat32 || param.dtype() == kFloat64,
           fmt::format("{}: parameters of dtype {} are not supported (float32 and float64 are)", optimizer,
                       dtype_name(param.dtype())));
  GD_CHECK(grad.dtype() == param.dtype(),
           fmt::format("{}: the gradient has dtype {} but the parameter has dtype {}", optimizer,
                       dtype_name(grad.dtype()), dtype_name(param.dtype())));
  GD_CHECK(grad.sizes() == param.sizes(),
           fmt::format("{}: the gradient has shape {} but the parameter has shape {}", optimizer,
                       shape_to_string(grad.sizes()), shape_to_string(param.sizes())));
}

void prepare_state(Tensor& state, const Tensor& param, std::string_view optimizer, std::string_view name,
                   double fill) {
  if (!state.defined()) {
    state = full(param.sizes(), fill, param.options());
    return;
  }
  GD_CHECK(state.sizes() == param.sizes(),
           fmt::format("{}: state '{}' has shape {} but its parameter has shape {}", optimizer, name,
                       shape_to_string(state.sizes()), shape_to_string(param.sizes())));
  if (state.dtype() != param.dtype() || state.device() != param.device()) state = state.to(param.options());
  if (!state.is_contiguous()) state = state.contiguous();
}

Tensor required_state_tensor(const std::map<std::string, Tensor>& tensors, const std::string& name,
                             const std::string& what) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw_json_error(what, name, "is missing");
  return it->second;
}

Tensor optional_state_tensor(const std::map<std::string, Tensor>& tensors, const std::string& name) {
  auto it = tensors.find(name);
  return it == tensors.end() ? Tensor() : it->second;
}

int64_t load_step(const nlohmann::json& scalars, const std::string& what) {
  double step = json_get<double>(scalars, "step", what);
  if (!(step >= 0 && step <= 9007199254740992.0 && step == std::floor(step)))
    throw_json_error(what, "step", fmt::format("must be a non-negative whole number, got {}", python_float(step)));
  return static_cast<int64_t>(step);
}

}  // namespace gradiens::optim::detail
