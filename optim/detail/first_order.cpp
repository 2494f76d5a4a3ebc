// The checks and the gathering that the first-order optimizers share (see first_order.h).
#include "optim/detail/first_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/sparse.h"
#include "engine/ops/cuda_seam.h"
#include "kernels/multi_tensor.h"

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
  GD_CHECK(param.device() == grad.device(),
           fmt::format("{}: the gradient is on {} but the parameter is on {}", optimizer, grad.device().str(),
                       param.device().str()));
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

namespace {

template <class T>
void add_slot(TensorList<T>& list, const Tensor& param, const Tensor& grad, const ParamBuffers& buffers,
              uint32_t scalars, size_t capacity) {
  if (list.slots.empty()) list.slots.reserve(capacity);
  // The kernels read the buffers where they live: device pointers for a cuda group.
  TensorSlot<T> slot{param.data_ptr<T>(), grad.data_ptr<T>(), {}, param.numel(), list.numel, scalars, buffers.fresh};
  for (size_t k = 0; k < buffers.states.size(); ++k)
    slot.state[k] = buffers.states[k] != nullptr ? buffers.states[k]->data_ptr<T>() : nullptr;
  list.slots.push_back(slot);
  list.numel += slot.numel;
}

}  // namespace

void GroupBuffers::update(const AnyKernel& kernel) {
  // One scalars entry per distinct step count (the SGD kernel reads entry 0).
  const size_t scalar_count = std::max<size_t>(steps_.size(), 1);
  const kernels::DeviceRef device = device_ ? cuda_seam::device_of(*device_) : kernels::DeviceRef{};
  if (!float32_.slots.empty()) kernels::multi_tensor_update(kernel, scalar_count, float32_, device);
  if (!float64_.slots.empty()) kernels::multi_tensor_update(kernel, scalar_count, float64_, device);
  write_back();
}

void GroupBuffers::add(const Tensor& param, const Tensor& grad, const ParamBuffers& buffers) {
  if (!device_) device_ = param.device();
  GD_CHECK(param.device() == *device_ && grad.device() == *device_,
           fmt::format("Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
                       device_->str(), param.device() == *device_ ? grad.device().str() : param.device().str()));
  // Parameters usually share one step count: look from the last one found.
  auto step = std::find(steps_.rbegin(), steps_.rend(), buffers.step);
  if (step == steps_.rend()) {
    steps_.push_back(buffers.step);
    step = steps_.rbegin();
  }
  const auto scalars = static_cast<uint32_t>(steps_.rend() - step - 1);
  // Pointers, not Tensor copies: a copy costs two atomic reference-count updates.
  const Tensor* work = &param;
  if (param.is_contiguous()) {
    // The kernel writes the parameter's memory directly: mark it as an in-place
    // write, so a graph that saved the old value refuses to use it.
    param.bump_version();
  } else {
    param_copies_.emplace_back(param, param.contiguous());
    work = &param_copies_.back().second;
  }
  const Tensor* g = &grad;
  if (!grad.is_contiguous()) {
    grad_copies_.push_back(grad.contiguous());
    g = &grad_copies_.back();
  }
  if (work->numel() == 0) return;
  if (param.dtype() == kFloat32)
    add_slot(float32_, *work, *g, buffers, scalars, group_size_);
  else
    add_slot(float64_, *work, *g, buffers, scalars, group_size_);
}

void GroupBuffers::write_back() {
  for (auto& [param, work] : param_copies_) Tensor(param).copy_(work);
}

}  // namespace gradiens::optim::detail
