// Pointwise expressions of a config ("-sin(pi*x)", "exp(-t)*sin(pi*x)"),
// parsed and evaluated by muParser: sources, initial and boundary values,
// exact solutions. Evaluated in float64 on a batch of points; constant with
// respect to every parameter (they are data, not part of the graph).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::pinn {

class Expression {
 public:
  // `variables` name the columns of the points evaluate() takes, in order;
  // `constants` add named values besides pi and e. A syntax error or an
  // unknown name is an Error quoting the expression and the position.
  Expression(std::string text, std::vector<std::string> variables, std::map<std::string, double> constants = {});

  // The expression at each row of `points` [N, variables] (any float dtype):
  // float64 [N, 1]. Not thread-safe: one Expression evaluates on one thread.
  Tensor evaluate(const Tensor& points) const;
  // At one point.
  double evaluate(const std::vector<double>& point) const;

  const std::string& text() const { return text_; }
  const std::vector<std::string>& variables() const { return variables_; }
  // Whether the expression reads `variable`.
  bool uses(const std::string& variable) const;

 private:
  struct Parser;
  std::string text_;
  std::vector<std::string> variables_;
  std::shared_ptr<Parser> parser_;
};

// The default coordinate names of a d-dimensional domain: x; x, y; x, y, z;
// x1 ... xd beyond three. With time, "t" is appended.
std::vector<std::string> coordinate_names(int64_t spatial_dims, bool time);

}  // namespace gradiens::pinn
