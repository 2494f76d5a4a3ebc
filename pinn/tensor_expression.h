// Expressions evaluated as a graph of tensor ops, so that autograd
// differentiates through them: hard constraints written in a config
// ("sin(pi*x) + x*(1-x)*t^2*y"). GiNaC parses the text; each node becomes the
// matching gradiens op. pinn::Expression (muParser) stays the one for data
// (sources, boundary values, references), which needs no derivatives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::pinn {

class TensorExpression {
 public:
  // `variables` name the values evaluate() takes, in order. Numbers, pi, e,
  // + - * / ^ and sin cos tan exp log sqrt abs tanh sinh cosh are
  // understood; a syntax error or an unknown name is an Error quoting
  // the expression.
  TensorExpression(std::string text, std::vector<std::string> variables);

  // The expression with each variable bound to values[i] (tensors of one
  // shape, e.g. columns [N, 1], or 0-dim scalars such as a trainable PDE
  // coefficient). Built from differentiable ops; a constant expression is a
  // tensor like values[0] filled with it.
  Tensor evaluate(const std::vector<Tensor>& values) const;

  const std::string& text() const { return text_; }
  const std::vector<std::string>& variables() const { return variables_; }
  // Whether the expression reads `variable`.
  bool uses(const std::string& variable) const;

  struct Tree;  // the compiled form, opaque

 private:
  std::string text_;
  std::vector<std::string> variables_;
  std::shared_ptr<const Tree> tree_;
};

}  // namespace gradiens::pinn
