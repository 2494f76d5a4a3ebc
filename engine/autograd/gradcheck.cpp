// gradcheck and gradgradcheck: the analytic Jacobian (one backward per output
// element) against float64 central differences, PyTorch's tolerances.
#include <fmt/format.h>

#include <cmath>

#include "engine/autograd/autograd.h"
#include "engine/autograd/forward_ad.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/ops/cuda_seam.h"

namespace gradiens::autograd {

namespace {

// Outputs of fn, detached from any graph. Copied: an output that is a view of
// an input (view, select, ...) would otherwise change with the next perturbation.
// Grad mode stays as the caller has it, because fn may itself call grad() (a
// derivative checked by gradcheck, as gradgradcheck does).
std::vector<Tensor> evaluate(const TensorFunction& fn, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = fn(inputs);
  // Copies on the CPU, whatever device the function ran on.
  for (auto& t : out) t = t.detach().to(Device(kCPU), kFloat64, false, /*copy=*/true).contiguous();
  return out;
}

// Column m of the Jacobian of every output with respect to input `which`, by
// forward mode: the inputs become dual tensors whose tangents are zero except
// the unit vector e_m on input `which`.
std::vector<Tensor> forward_column(const TensorFunction& fn, const std::vector<Tensor>& inputs, size_t which,
                                   int64_t m) {
  forward_ad::DualLevel level;
  std::vector<Tensor> duals = inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    Tensor tangent = zeros(inputs[i].sizes(), inputs[i].options());
    if (i == which) {
      NoGradGuard no_grad;
      tangent.view({-1}).select(0, m).fill_(1.0);
    }
    duals[i] = forward_ad::make_dual(inputs[i], tangent);
  }
  std::vector<Tensor> columns;
  for (const Tensor& out : fn(duals)) {
    Tensor t = forward_ad::unpack_dual(out).tangent;
    columns.push_back(t.defined() ? t.detach().to(Device(kCPU), kFloat64, false, /*copy=*/true).contiguous()
                                  : zeros(out.sizes(), TensorOptions().dtype(kFloat64)));
  }
  return columns;
}

bool fail(const GradcheckOptions& options, const std::string& message) {
  if (options.raise_exception) throw Error(message);
  return false;
}

}  // namespace

bool gradcheck(const TensorFunction& fn, const std::vector<Tensor>& inputs, GradcheckOptions options) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined() || !x.requires_grad()) continue;
    GD_CHECK(x.dtype() == kFloat64,
             fmt::format("gradcheck: input {} is {}; gradcheck needs float64 inputs for finite differences to be "
                         "accurate",
                         i, dtype_name(x.dtype())));
    // Perturbing one element of an expanded input would move all its aliases at once.
    for (int64_t d = 0; d < x.dim(); ++d)
      GD_CHECK(!(x.strides()[d] == 0 && x.sizes()[d] > 1),
               fmt::format("gradcheck: input {} has a dimension with stride 0; gradcheck needs inputs whose elements "
                           "do not overlap (pass the unexpanded tensor and expand inside the function)",
                           i));
  }
  // Analytic: row k of the Jacobian of output o is grad of out[o].flatten()[k].
  std::vector<Tensor> outputs = fn(inputs);
  std::vector<Tensor> diff_inputs;
  std::vector<size_t> diff_index;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) {
      diff_inputs.push_back(inputs[i]);
      diff_index.push_back(i);
    }
  if (diff_inputs.empty()) return true;

  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    if (!out.is_floating_point()) continue;
    int64_t n_out = out.numel();
    // analytic[j][k * n_in + m] = d out[k] / d input_j[m]
    std::vector<std::vector<double>> analytic(diff_inputs.size());
    for (size_t j = 0; j < diff_inputs.size(); ++j)
      analytic[j].assign(static_cast<size_t>(n_out * diff_inputs[j].numel()), 0.0);
    if (options.check_backward_ad && out.requires_grad()) {
      for (int64_t k = 0; k < n_out; ++k) {
        Tensor seed = zeros(out.sizes(), out.options());
        {
          NoGradGuard no_grad;
          seed.view({-1}).select(0, k).fill_(1.0);
        }
        auto grads = grad({out}, diff_inputs, {seed}, /*retain_graph=*/true, false, /*allow_unused=*/true);
        for (size_t j = 0; j < diff_inputs.size(); ++j) {
          if (!grads[j].defined()) continue;
          Tensor g = grads[j].to(kFloat64).cpu().contiguous();
          GD_CHECK(g.sizes() == diff_inputs[j].sizes(),
                   fmt::format("gradcheck: gradient of input {} has shape {} but the input has {}", diff_index[j],
                               shape_to_string(g.sizes()), shape_to_string(diff_inputs[j].sizes())));
          const double* p = g.cpu_data_ptr<double>();
          int64_t n_in = diff_inputs[j].numel();
          for (int64_t m = 0; m < n_in; ++m) analytic[j][static_cast<size_t>(k * n_in + m)] = p[m];
        }
      }
    }
    // Numerical: perturb each element of each input in place (no tape).
    for (size_t j = 0; j < diff_inputs.size(); ++j) {
      Tensor x = diff_inputs[j];
      int64_t n_in = x.numel();
      Tensor flat = x.detach();
      for (int64_t m = 0; m < n_in; ++m) {
        // The element's address in a possibly non-contiguous input.
        int64_t rem = m, offset = 0;
        DimVector position(static_cast<size_t>(x.dim()));
        for (int64_t d = x.dim() - 1; d >= 0; --d) {
          position[static_cast<size_t>(d)] = rem % x.sizes()[d];
          offset += position[static_cast<size_t>(d)] * x.strides()[d];
          rem /= x.sizes()[d];
        }
        std::vector<Tensor> plus, minus;
        if (flat.device().is_cpu()) {
          double* elem = static_cast<double*>(flat.cpu_data_ptr()) + offset;
          double original = *elem;
          *elem = original + options.eps;
          plus = evaluate(fn, inputs);
          *elem = original - options.eps;
          minus = evaluate(fn, inputs);
          *elem = original;
        } else {
          // On a device the element is written through a one-element view
          // (selected, so any layout works), without bumping the version (as
          // the raw write above): graphs recorded before the perturbation stay
          // usable.
          NoGradGuard no_grad;
          Tensor elem = flat;
          for (int64_t i : position) elem = elem.select(0, i);
          const double original = elem.item<double>();
          cuda_seam::fill(elem, original + options.eps);
          plus = evaluate(fn, inputs);
          cuda_seam::fill(elem, original - options.eps);
          minus = evaluate(fn, inputs);
          cuda_seam::fill(elem, original);
        }
        const double* pp = plus[o].cpu_data_ptr<double>();
        const double* pm = minus[o].cpu_data_ptr<double>();
        Tensor column;
        if (options.check_forward_ad) column = forward_column(fn, inputs, diff_index[j], m)[o];
        for (int64_t k = 0; k < n_out; ++k) {
          double numerical = (pp[k] - pm[k]) / (2 * options.eps);
          auto close = [&](double a) { return std::abs(a - numerical) <= options.atol + options.rtol * std::abs(numerical); };
          double a = analytic[j][static_cast<size_t>(k * n_in + m)];
          if (options.check_backward_ad && !close(a))
            return fail(options,
                        fmt::format("Jacobian mismatch for output {} with respect to input {},\nnumerical:{}\n"
                                    "analytical:{}\n(at output element {}, input element {})",
                                    o, diff_index[j], numerical, a, k, m));
          double f = options.check_forward_ad ? column.cpu_data_ptr<double>()[k] : numerical;
          if (!close(f))
            return fail(options,
                        fmt::format("Jacobian computed with forward mode mismatch for output {} with respect to input "
                                    "{},\nnumerical:{}\nanalytical:{}\n(at output element {}, input element {})",
                                    o, diff_index[j], numerical, f, k, m));
        }
      }
    }
  }
  return true;
}

bool gradgradcheck(const TensorFunction& fn, const std::vector<Tensor>& inputs, GradcheckOptions options) {
  // Random but fixed grad_outputs, so the first derivative is a function of the
  // inputs alone; gradcheck then differentiates it once more.
  std::vector<Tensor> outputs = fn(inputs);
  std::vector<Tensor> grad_outputs;
  for (size_t o = 0; o < outputs.size(); ++o) {
    Tensor g = empty(outputs[o].sizes(), TensorOptions().dtype(kFloat64));
    double* p = g.cpu_data_ptr<double>();
    for (int64_t k = 0; k < g.numel(); ++k) p[k] = 0.5 + 0.37 * static_cast<double>((k * 7 + o * 3) % 11) / 11.0;
    grad_outputs.push_back(g.to(outputs[o].device()));
  }
  TensorFunction first_derivative = [&](const std::vector<Tensor>& xs) {
    std::vector<Tensor> outs = fn(xs);
    std::vector<Tensor> diff_inputs, diff_outputs, seeds;
    for (const auto& x : xs)
      if (x.defined() && x.requires_grad()) diff_inputs.push_back(x);
    for (size_t o = 0; o < outs.size(); ++o)
      if (outs[o].requires_grad()) {
        diff_outputs.push_back(outs[o]);
        seeds.push_back(grad_outputs[o].to(outs[o].dtype()));
      }
    if (diff_outputs.empty() || !GradMode::is_enabled()) {
      // Under no_grad (the finite-difference evaluations) recompute with the tape on.
      AutoGradMode enable(true);
      std::vector<Tensor> again = fn(xs);
      diff_outputs.clear();
      seeds.clear();
      for (size_t o = 0; o < again.size(); ++o)
        if (again[o].requires_grad()) {
          diff_outputs.push_back(again[o]);
          seeds.push_back(grad_outputs[o].to(again[o].dtype()));
        }
      if (diff_outputs.empty()) return std::vector<Tensor>{};
      auto gs = grad(diff_outputs, diff_inputs, seeds, true, false, true);
      for (size_t j = 0; j < gs.size(); ++j)
        if (!gs[j].defined()) gs[j] = zeros_like(diff_inputs[j]);
      return gs;
    }
    auto gs = grad(diff_outputs, diff_inputs, seeds, true, /*create_graph=*/true, true);
    for (size_t j = 0; j < gs.size(); ++j)
      if (!gs[j].defined()) gs[j] = zeros_like(diff_inputs[j]);
    return gs;
  };
  options.check_forward_ad = false;  // gradgradcheck checks reverse-over-reverse only
  options.check_backward_ad = true;
  return gradcheck(first_derivative, inputs, options);
}

}  // namespace gradiens::autograd
