// autograd::functional: jacobian, hessian, vjp, jvp, hvp and vhp built on
// autograd::grad, following torch/autograd/functional.py step by step (same
// checks, same strict-mode errors, same double-backward tricks).
#include "engine/autograd/functional.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens::autograd::functional {

namespace {

std::string sizes_str(IntArrayRef sizes) {
  std::string s;
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return "[" + s + "]";
}

void check_defined(const std::vector<Tensor>& tensors, std::string_view arg, std::string_view fn) {
  for (size_t i = 0; i < tensors.size(); ++i)
    GD_CHECK(tensors[i].defined(), fmt::format("The {} given to {} must be either a Tensor or a tuple of Tensors but "
                                               "the value at index {} is an undefined Tensor.",
                                               arg, fn, i));
}

// Fresh tensor objects for the inputs (PyTorch's _grad_preprocess), so that
// gradients are taken with respect to exactly these and never to the same
// tensors captured by the user's function. With create_graph an input that
// requires grad stays connected to its history through a view; otherwise it
// is detached.
std::vector<Tensor> preprocess(const std::vector<Tensor>& tensors, bool create_graph, bool need_graph) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    if (create_graph && t.requires_grad()) {
      out.push_back(t.view_as(t));
    } else {
      Tensor d = t.detach();
      if (need_graph) d.requires_grad_(true);
      out.push_back(d);
    }
  }
  return out;
}

std::vector<Tensor> postprocess(std::vector<Tensor> tensors, bool create_graph) {
  if (!create_graph)
    for (Tensor& t : tensors)
      if (t.defined()) t = t.detach();
  return tensors;
}

void validate_v(const std::vector<Tensor>& v, const std::vector<Tensor>& other, bool other_is_tuple,
                std::string_view fn) {
  check_defined(v, "v", fn);
  if (v.size() != other.size()) {
    GD_CHECK(!other_is_tuple,
             fmt::format("v is a tuple of invalid length: should be {} but got {}.", other.size(), v.size()));
    GD_CHECK(false, "The given v should contain a single Tensor.");
  }
  for (size_t i = 0; i < v.size(); ++i)
    GD_CHECK(v[i].sizes() == other[i].sizes(),
             fmt::format("{}v has invalid size: should be {} but got {}.",
                         other_is_tuple ? fmt::format("Entry {} in ", i) : "", sizes_str(other[i].sizes()),
                         sizes_str(v[i].sizes())));
}

enum class Checked { kOutputs, kGradInputs, kJacobian, kHessian };

// Strict mode's "this must be differentiable" checks (_check_requires_grad).
void check_requires_grad(const std::vector<Tensor>& tensors, Checked what, bool strict) {
  if (!strict) return;
  for (size_t i = 0; i < tensors.size(); ++i) {
    GD_CHECK(tensors[i].defined(), fmt::format("The output of the user-provided function is independent of input "
                                               "{}. This is not allowed in strict mode.",
                                               i));
    if (tensors[i].requires_grad()) continue;
    switch (what) {
      case Checked::kHessian:
        throw Error(fmt::format(
            "The hessian of the user-provided function with respect to input {} is independent of the input. This "
            "is not allowed in strict mode. You should ensure that your function is thrice differentiable and that "
            "the hessian depends on the inputs.",
            i));
      case Checked::kJacobian:
        throw Error(fmt::format(
            "While computing the hessian, found that the jacobian of the user-provided function with respect to "
            "input {} is independent of the input. This is not allowed in strict mode. You should ensure that your "
            "function is twice differentiable and that the jacobian depends on the inputs (this would be violated "
            "by a linear function for example).",
            i));
      case Checked::kGradInputs:
        throw Error(fmt::format("The gradient with respect to input {} is independent of the inputs of the "
                                "user-provided function. This is not allowed in strict mode.",
                                i));
      case Checked::kOutputs:
        throw Error(fmt::format("Output {} of the user-provided function does not require gradients. The outputs "
                                "must be computed in a differentiable manner from the input when running in strict "
                                "mode.",
                                i));
    }
  }
}

// autograd::grad that skips outputs which do not require grad and returns an
// undefined tensor for every input it cannot reach (PyTorch's _autograd_grad).
// `grad_outputs` is empty or has one entry (possibly undefined) per output.
std::vector<Tensor> grad_or_undefined(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& grad_outputs, bool create_graph,
                                      std::optional<bool> retain_graph = std::nullopt) {
  std::vector<Tensor> used_outputs, used_grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !outputs[i].requires_grad()) continue;
    used_outputs.push_back(outputs[i]);
    used_grads.push_back(grad_outputs.empty() ? Tensor() : grad_outputs[i]);
  }
  if (used_outputs.empty()) return std::vector<Tensor>(inputs.size());
  return grad(used_outputs, inputs, used_grads, retain_graph, create_graph, /*allow_unused=*/true);
}

enum class Stage { kBack, kBackTrick, kDoubleBack, kDoubleBackTrick };

// Replaces unreachable gradients by zeros shaped like `refs` (PyTorch's
// _fill_in_zeros), or in strict mode says which derivative was missing.
std::vector<Tensor> fill_in_zeros(std::vector<Tensor> grads, const std::vector<Tensor>& refs, bool strict,
                                  bool create_graph, Stage stage) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      if (strict) {
        switch (stage) {
          case Stage::kBack:
            throw Error(fmt::format("The output of the user-provided function is independent of input {}. This is "
                                    "not allowed in strict mode.",
                                    i));
          case Stage::kBackTrick:
            throw Error(fmt::format(
                "The gradient with respect to the input is independent of entry {} in the grad_outputs when using "
                "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
                i));
          case Stage::kDoubleBack:
            throw Error(fmt::format("The jacobian of the user-provided function is independent of input {}. This "
                                    "is not allowed in strict mode.",
                                    i));
          case Stage::kDoubleBackTrick:
            throw Error(fmt::format(
                "The hessian of the user-provided function is independent of entry {} in the grad_jacobian. This is "
                "not allowed in strict mode as it prevents from using the double backward trick to replace forward "
                "mode AD.",
                i));
        }
      }
      grads[i] = zeros_like(refs[i]);
    } else if (strict && create_graph && !grads[i].requires_grad()) {
      const bool second_order = stage == Stage::kDoubleBack || stage == Stage::kDoubleBackTrick;
      throw Error(fmt::format("The {} of the user-provided function is independent of input {}. This is not "
                              "allowed in strict mode when create_graph=True.",
                              second_order ? "hessian" : "jacobian", i));
    }
  }
  return grads;
}

void check_outputs(const std::vector<Tensor>& outputs, std::string_view fn) {
  check_defined(outputs, "outputs of the user-provided function", fn);
}

// The preprocessed inputs, the v given for them (or the check that v may be
// omitted), for jvp, hvp and vhp whose v lives on the input side.
std::vector<Tensor> input_side_v(const std::vector<Tensor>& inputs, const std::vector<Tensor>& v, bool is_tuple,
                                 bool create_graph, std::string_view fn) {
  if (v.empty()) {
    GD_CHECK(inputs.size() == 1 && inputs[0].numel() == 1,
             "The vector v can only be omitted if the input to the user-provided function is a single Tensor with a "
             "single element.");
    return {};
  }
  check_defined(v, "v", fn);
  std::vector<Tensor> prepared = preprocess(v, create_graph, /*need_graph=*/false);
  validate_v(prepared, inputs, is_tuple, fn);
  return prepared;
}

Tensor single_scalar_output(const TensorsToTensor& fn, const std::vector<Tensor>& inputs, bool strict,
                            std::string_view name) {
  Tensor out = fn(inputs);
  check_outputs({out}, name);
  check_requires_grad({out}, Checked::kOutputs, strict);
  GD_CHECK(out.numel() == 1,
           fmt::format("The Tensor returned by the function given to {} should contain a single element", name));
  return out;
}

std::pair<Tensor, std::vector<Tensor>> vhp_impl(const TensorsToTensor& fn, const std::vector<Tensor>& inputs,
                                                const std::vector<Tensor>& v, bool create_graph, bool strict,
                                                bool is_tuple) {
  check_defined(inputs, "inputs", "vhp");
  AutoGradMode enable(true);
  std::vector<Tensor> in = preprocess(inputs, create_graph, /*need_graph=*/true);
  std::vector<Tensor> vv = input_side_v(in, v, is_tuple, create_graph, "vhp");
  Tensor out = single_scalar_output(fn, in, strict, "vhp");
  std::vector<Tensor> jac = grad_or_undefined({out}, in, {}, /*create_graph=*/true);
  check_requires_grad(jac, Checked::kJacobian, strict);
  std::vector<Tensor> result =
      fill_in_zeros(grad_or_undefined(jac, in, vv, create_graph), in, strict, create_graph, Stage::kDoubleBack);
  return {postprocess({out}, create_graph)[0], postprocess(std::move(result), create_graph)};
}

std::pair<Tensor, std::vector<Tensor>> hvp_impl(const TensorsToTensor& fn, const std::vector<Tensor>& inputs,
                                                const std::vector<Tensor>& v, bool create_graph, bool strict,
                                                bool is_tuple) {
  check_defined(inputs, "inputs", "hvp");
  AutoGradMode enable(true);
  std::vector<Tensor> in = preprocess(inputs, create_graph, /*need_graph=*/true);
  std::vector<Tensor> vv = input_side_v(in, v, is_tuple, create_graph, "hvp");
  Tensor out = single_scalar_output(fn, in, strict, "hvp");
  std::vector<Tensor> jac = grad_or_undefined({out}, in, {}, /*create_graph=*/true);
  check_requires_grad(jac, Checked::kJacobian, strict);
  // u -> (d/dx)(u^T grad f) = H u is linear in u; its vjp with v is H^T v = H v.
  std::vector<Tensor> grad_jac;
  for (const Tensor& t : in) grad_jac.push_back(zeros_like(t).requires_grad_(true));
  std::vector<Tensor> double_back = grad_or_undefined(jac, in, grad_jac, /*create_graph=*/true);
  std::vector<Tensor> result = fill_in_zeros(grad_or_undefined(double_back, grad_jac, vv, create_graph), in, strict,
                                             create_graph, Stage::kDoubleBackTrick);
  return {postprocess({out}, create_graph)[0], postprocess(std::move(result), create_graph)};
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> vjp_impl(const TensorsToTensors& fn,
                                                             const std::vector<Tensor>& inputs,
                                                             const std::vector<Tensor>& v, bool create_graph,
                                                             bool strict, bool is_tuple) {
  check_defined(inputs, "inputs", "vjp");
  AutoGradMode enable(true);
  std::vector<Tensor> in = preprocess(inputs, create_graph, /*need_graph=*/true);
  std::vector<Tensor> outputs = fn(in);
  check_outputs(outputs, "vjp");
  check_requires_grad(outputs, Checked::kOutputs, strict);
  std::vector<Tensor> vv;
  if (v.empty()) {
    GD_CHECK(outputs.size() == 1 && outputs[0].numel() == 1,
             "The vector v can only be omitted if the user-provided function returns a single Tensor with a single "
             "element.");
  } else {
    check_defined(v, "v", "vjp");
    vv = preprocess(v, create_graph, /*need_graph=*/false);
    validate_v(vv, outputs, is_tuple, "vjp");
  }
  std::vector<Tensor> result =
      fill_in_zeros(grad_or_undefined(outputs, in, vv, create_graph), in, strict, create_graph, Stage::kBack);
  return {postprocess(std::move(outputs), create_graph), postprocess(std::move(result), create_graph)};
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp_impl(const TensorsToTensors& fn,
                                                             const std::vector<Tensor>& inputs,
                                                             const std::vector<Tensor>& v, bool create_graph,
                                                             bool strict, bool is_tuple) {
  check_defined(inputs, "inputs", "jvp");
  AutoGradMode enable(true);
  std::vector<Tensor> in = preprocess(inputs, create_graph, /*need_graph=*/true);
  std::vector<Tensor> vv = input_side_v(in, v, is_tuple, create_graph, "jvp");
  std::vector<Tensor> outputs = fn(in);
  check_outputs(outputs, "jvp");
  check_requires_grad(outputs, Checked::kOutputs, strict);
  // The backward is linear in grad_outputs, so their value never enters the
  // double-backward graph; zeros keep NaN and inf out of it.
  std::vector<Tensor> grad_outputs;
  for (const Tensor& out : outputs)
    grad_outputs.push_back(out.is_floating_point() ? zeros_like(out).requires_grad_(true) : Tensor());
  std::vector<Tensor> grad_inputs = grad_or_undefined(outputs, in, grad_outputs, /*create_graph=*/true);
  check_requires_grad(grad_inputs, Checked::kGradInputs, strict);
  // An integer output has no tangent: its grad_output slot stays undefined
  // and its jvp is zeros.
  std::vector<Tensor> targets;
  std::vector<size_t> target_of;
  for (size_t i = 0; i < grad_outputs.size(); ++i)
    if (grad_outputs[i].defined()) {
      targets.push_back(grad_outputs[i]);
      target_of.push_back(i);
    }
  std::vector<Tensor> grad_res(outputs.size());
  std::vector<Tensor> found = grad_or_undefined(grad_inputs, targets, vv, create_graph);
  for (size_t k = 0; k < found.size(); ++k) grad_res[target_of[k]] = found[k];
  std::vector<Tensor> result = fill_in_zeros(std::move(grad_res), outputs, strict, create_graph, Stage::kBackTrick);
  return {postprocess(std::move(outputs), create_graph), postprocess(std::move(result), create_graph)};
}

std::vector<Tensor> as_vector(const Tensor& t) { return t.defined() ? std::vector<Tensor>{t} : std::vector<Tensor>{}; }

}  // namespace

// ---- jacobian ----

Jacobian jacobian(const TensorsToTensors& fn, const std::vector<Tensor>& inputs, bool create_graph, bool strict,
                  bool vectorize) {
  check_defined(inputs, "inputs", "jacobian");
  GD_CHECK(!(strict && vectorize),
           "jacobian: `strict=true` and `vectorize=true` are not supported together. Please either set "
           "`strict=false` or `vectorize=false`.");
  AutoGradMode enable(true);
  std::vector<Tensor> in = preprocess(inputs, create_graph, /*need_graph=*/true);
  std::vector<Tensor> outputs = fn(in);
  check_outputs(outputs, "jacobian");
  check_requires_grad(outputs, Checked::kOutputs, strict);

  Jacobian jac(outputs.size(), std::vector<Tensor>(in.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    // Row r of block (i, j) is e_r^T J: one reverse pass seeded with a one-hot
    // gradient. A fresh seed per row: a gradient may come back as the seed itself.
    std::vector<std::vector<Tensor>> rows(in.size());
    for (int64_t r = 0; r < out.numel(); ++r) {
      Tensor seed = zeros(out.sizes(), out.options());
      seed.view({-1}).select(0, r).fill_(1);
      std::vector<Tensor> vj = grad_or_undefined({out}, in, {seed}, create_graph, /*retain_graph=*/true);
      for (size_t j = 0; j < in.size(); ++j) {
        if (vj[j].defined()) {
          GD_CHECK(!(strict && create_graph && !vj[j].requires_grad()),
                   fmt::format("The jacobian of the user-provided function is independent of input {}. This is not "
                               "allowed in strict mode when create_graph=True.",
                               j));
          rows[j].push_back(vj[j]);
        } else {
          GD_CHECK(!strict, fmt::format("Output {} of the user-provided function is independent of input {}. This "
                                        "is not allowed in strict mode.",
                                        i, j));
          rows[j].push_back(zeros_like(in[j]));
        }
      }
    }
    for (size_t j = 0; j < in.size(); ++j) {
      DimVector shape(out.sizes().begin(), out.sizes().end());
      for (int64_t size : in[j].sizes()) shape.push_back(size);
      jac[i][j] = rows[j].empty() ? zeros(shape, in[j].options()) : stack(rows[j], 0).reshape(shape);
      if (!create_graph) jac[i][j] = jac[i][j].detach();
    }
  }
  return jac;
}

std::vector<Tensor> jacobian(const TensorsToTensor& fn, const std::vector<Tensor>& inputs, bool create_graph,
                             bool strict, bool vectorize) {
  auto wrapped = [&fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in)}; };
  return jacobian(TensorsToTensors(wrapped), inputs, create_graph, strict, vectorize)[0];
}

Tensor jacobian(const TensorToTensor& fn, const Tensor& input, bool create_graph, bool strict, bool vectorize) {
  auto wrapped = [&fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; };
  return jacobian(TensorsToTensors(wrapped), std::vector<Tensor>{input}, create_graph, strict, vectorize)[0][0];
}

// ---- hessian ----

Jacobian hessian(const TensorsToTensor& fn, const std::vector<Tensor>& inputs, bool create_graph, bool strict,
                 bool vectorize) {
  check_defined(inputs, "inputs", "hessian");
  auto scalar_fn = [&](const std::vector<Tensor>& in) {
    return single_scalar_output(fn, in, strict, "hessian").squeeze();
  };
  // The gradient, itself differentiable; the Hessian is its Jacobian.
  auto gradient_fn = [&](const std::vector<Tensor>& in) {
    std::vector<Tensor> g = jacobian(TensorsToTensor(scalar_fn), in, /*create_graph=*/true);
    check_requires_grad(g, Checked::kJacobian, strict);
    return g;
  };
  return jacobian(TensorsToTensors(gradient_fn), inputs, create_graph, strict, vectorize);
}

Tensor hessian(const TensorToTensor& fn, const Tensor& input, bool create_graph, bool strict, bool vectorize) {
  auto wrapped = [&fn](const std::vector<Tensor>& in) { return fn(in[0]); };
  return hessian(TensorsToTensor(wrapped), std::vector<Tensor>{input}, create_graph, strict, vectorize)[0][0];
}

// ---- vjp and jvp ----

std::pair<std::vector<Tensor>, std::vector<Tensor>> vjp(const TensorsToTensors& fn, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v, bool create_graph,
                                                        bool strict) {
  return vjp_impl(fn, inputs, v, create_graph, strict, /*is_tuple=*/true);
}

std::pair<Tensor, Tensor> vjp(const TensorToTensor& fn, const Tensor& input, const Tensor& v, bool create_graph,
                              bool strict) {
  auto wrapped = [&fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; };
  auto [outputs, result] = vjp_impl(wrapped, {input}, as_vector(v), create_graph, strict, /*is_tuple=*/false);
  return {outputs[0], result[0]};
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(const TensorsToTensors& fn, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v, bool create_graph,
                                                        bool strict) {
  return jvp_impl(fn, inputs, v, create_graph, strict, /*is_tuple=*/true);
}

std::pair<Tensor, Tensor> jvp(const TensorToTensor& fn, const Tensor& input, const Tensor& v, bool create_graph,
                              bool strict) {
  auto wrapped = [&fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; };
  auto [outputs, result] = jvp_impl(wrapped, {input}, as_vector(v), create_graph, strict, /*is_tuple=*/false);
  return {outputs[0], result[0]};
}

// ---- vhp and hvp ----

std::pair<Tensor, std::vector<Tensor>> vhp(const TensorsToTensor& fn, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v, bool create_graph, bool strict) {
  return vhp_impl(fn, inputs, v, create_graph, strict, /*is_tuple=*/true);
}

std::pair<Tensor, Tensor> vhp(const TensorToTensor& fn, const Tensor& input, const Tensor& v, bool create_graph,
                              bool strict) {
  auto wrapped = [&fn](const std::vector<Tensor>& in) { return fn(in[0]); };
  auto [out, result] = vhp_impl(wrapped, {input}, as_vector(v), create_graph, strict, /*is_tuple=*/false);
  return {out, result[0]};
}

std::pair<Tensor, std::vector<Tensor>> hvp(const TensorsToTensor& fn, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v, bool create_graph, bool strict) {
  return hvp_impl(fn, inputs, v, create_graph, strict, /*is_tuple=*/true);
}

std::pair<Tensor, Tensor> hvp(const TensorToTensor& fn, const Tensor& input, const Tensor& v, bool create_graph,
                              bool strict) {
  auto wrapped = [&fn](const std::vector<Tensor>& in) { return fn(in[0]); };
  auto [out, result] = hvp_impl(wrapped, {input}, as_vector(v), create_graph, strict, /*is_tuple=*/false);
  return {out, result[0]};
}

}  // namespace gradiens::autograd::functional
