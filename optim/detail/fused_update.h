// What the first-order optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) share:
// the gradient and state checks, and the one fused pass per parameter.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/tensor.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/scalar_type.h"
#include "optim/optimizer.h"

namespace gradiens::optim::detail {

// A double as Python's repr prints it ("1.0", "-0.1", "1e-05", "inf"), so that
// option errors read exactly as PyTorch's "Invalid learning rate: -0.1".
std::string python_float(double value);

// `param` is float32 or float64 and its gradient is one the fused loops can
// read: dense, on the CPU, with the parameter's dtype and shape.
// `sparse_message` is PyTorch's text for a sparse gradient ("Adam does not
// support sparse gradients, ...").
void check_grad(const Tensor& param, const Tensor& grad, std::string_view optimizer, std::string_view sparse_message);

// Makes `state` a contiguous buffer shaped, typed and placed like `param`:
// zeros (or `fill`) when undefined; converted when a loaded state or a later
// Module::to left it in another dtype; an error naming the optimizer and the
// state's name when its shape does not match the parameter's.
void prepare_state(Tensor& state, const Tensor& param, std::string_view optimizer, std::string_view name,
                   double fill = 0.0);

// The options of `group` as the optimizer's own type; an error when a group
// was given another optimizer's options (SGDOptions to Adam).
template <class Options>
const Options& group_options(const OptimizerParamGroup& group, std::string_view optimizer) {
  const auto* options = dynamic_cast<const Options*>(&group.options());
  GD_CHECK(options != nullptr,
           std::string(optimizer) + ": a parameter group holds the options of another optimizer");
  return *options;
}

// The one group of the optimizers' (params, options) constructors. The options
// are checked first and an empty list is an error, in PyTorch's order.
template <class Options>
std::vector<OptimizerParamGroup> single_group(std::vector<Tensor> params, const Options& defaults) {
  defaults.validate();
  GD_CHECK(!params.empty(), "optimizer got an empty parameter list");
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::move(params));
  return groups;
}

// The Tensor saved under `name`; an error naming `what` and `name` when missing.
Tensor required_state_tensor(const std::map<std::string, Tensor>& tensors, const std::string& name,
                             const std::string& what);
// The Tensor saved under `name`, or an undefined one (saved as JSON null, or absent).
Tensor optional_state_tensor(const std::map<std::string, Tensor>& tensors, const std::string& name);
// The step count saved under "step": a non-negative whole number (PyTorch saves
// it as a float tensor, so 3.0 is accepted).
int64_t load_step(const nlohmann::json& scalars, const std::string& what);

// NaN-propagating maximum, as torch.maximum (std::max would drop a NaN in `b`).
template <class T>
inline T maximum_nan(T a, T b) {
  return (a != a || a > b) ? a : b;
}

// The kernels work in blocks of this many elements: a block's square roots are
// taken in one vectorized call on a stack buffer, between two passes that the
// compiler vectorizes (std::sqrt in the loop would keep it scalar, for errno).
inline constexpr int64_t kBlock = 256;

template <class T>
inline void sqrt_in_place(T* values, int64_t n) {
  kernels::cpu::unary_math(kernels::cpu::UnaryMath::Sqrt, values, values, n);
}

// Calls f(std::bool_constant<flags>{}...) for the runtime flags, so that a
// kernel's options become template arguments and its loops carry no branches:
//   with_constants([&](auto maximize, auto amsgrad) { kernel<T, maximize(), amsgrad()>(...); },
//                  options.maximize(), options.amsgrad());
template <class F, class... Done>
void with_constants_from(F& f, std::tuple<Done...>) {
  f(Done{}...);
}
template <class F, class... Done, class... Rest>
void with_constants_from(F& f, std::tuple<Done...>, bool flag, Rest... rest) {
  if (flag)
    with_constants_from(f, std::tuple<Done..., std::true_type>{}, rest...);
  else
    with_constants_from(f, std::tuple<Done..., std::false_type>{}, rest...);
}
template <class F, class... Flags>
void with_constants(F&& f, Flags... flags) {
  with_constants_from(f, std::tuple<>{}, static_cast<bool>(flags)...);
}

// Runs body.template operator()<T>(param, grad, begin, end) over the elements
// of `param` in row-major order, in chunks (in parallel above the elementwise
// grain size; each element is updated independently, so the result does not
// depend on the thread count). T is float or double. The body reads and
// writes state buffers by the same index (prepare_state made them contiguous).
// A non-contiguous parameter or gradient is worked on through a contiguous
// copy, written back afterwards: the only case that allocates.
template <class Body>
void fused_update(const Tensor& param, const Tensor& grad, std::string_view optimizer, Body&& body) {
  NoGradGuard no_grad;
  Tensor work = param.is_contiguous() ? param : param.contiguous();
  Tensor g = grad.is_contiguous() ? grad : grad.contiguous();
  dispatch_floating(param.dtype(), optimizer, [&]<class T>() {
    T* p = work.numel() > 0 ? work.data_ptr<T>() : nullptr;
    const T* gp = g.numel() > 0 ? g.data_ptr<T>() : nullptr;
    kernels::cpu::parallel_for(0, work.numel(), kernels::cpu::kElementwiseGrainSize,
                               [&](int64_t begin, int64_t end) { body.template operator()<T>(p, gp, begin, end); });
  });
  if (work.is_same(param)) {
    // The loop wrote the parameter's memory directly: mark it as an in-place
    // write, so a graph that saved the old value refuses to use it.
    param.bump_version();
  } else {
    Tensor(param).copy_(work);
  }
}

// The typed pointer of a state buffer that prepare_state made ready (nullptr when empty).
template <class T>
inline T* state_data(const Tensor& state) {
  return state.numel() > 0 ? state.data_ptr<T>() : nullptr;
}

}  // namespace gradiens::optim::detail
