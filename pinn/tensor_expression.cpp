// GiNaC-parsed expressions turned into trees of tensor ops (pinn/tensor_expression.h).
#include "pinn/tensor_expression.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ginac/ginac.h>

#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::pinn {

// The parsed expression as our own tree, so that evaluating touches no GiNaC
// object (GiNaC's reference counts are not thread-safe).
struct TensorExpression::Tree {
  enum class Kind { kConstant, kVariable, kAdd, kMul, kPow, kFunction };
  Kind kind = Kind::kConstant;
  double value = 0;            // kConstant
  size_t variable = 0;         // kVariable
  std::string function;        // kFunction
  std::vector<Tree> children;  // kAdd, kMul: the terms; kPow: base, exponent; kFunction: the argument
};

namespace {

using Tree = TensorExpression::Tree;

const std::map<std::string, std::function<Tensor(const Tensor&)>>& unary_functions() {
  static const std::map<std::string, std::function<Tensor(const Tensor&)>> functions = {
      {"sin", [](const Tensor& x) { return sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); }},
      {"tan", [](const Tensor& x) { return tan(x); }},
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"log", [](const Tensor& x) { return log(x); }},
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"sinh", [](const Tensor& x) { return (exp(x) - exp(-x)) * 0.5; }},
      {"cosh", [](const Tensor& x) { return (exp(x) + exp(-x)) * 0.5; }},
  };
  return functions;
}

Tree constant(double value) {
  Tree tree;
  tree.value = value;
  return tree;
}

// `e` without free symbols folds to its value.
bool fold(const GiNaC::ex& e, double* value) {
  const GiNaC::ex numeric = GiNaC::evalf(e);
  if (!GiNaC::is_a<GiNaC::numeric>(numeric)) return false;
  const GiNaC::numeric& n = GiNaC::ex_to<GiNaC::numeric>(numeric);
  if (!n.is_real()) return false;
  *value = n.to_double();
  return true;
}

Tree compile(const GiNaC::ex& e, const std::vector<GiNaC::symbol>& symbols, const std::string& text) {
  double value = 0;
  if (fold(e, &value)) return constant(value);
  Tree tree;
  if (GiNaC::is_a<GiNaC::symbol>(e)) {
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (e.is_equal(symbols[i])) {
        tree.kind = Tree::Kind::kVariable;
        tree.variable = i;
        return tree;
      }
    }
    throw Error(fmt::format("expression \"{}\": unknown name {}", text, GiNaC::ex_to<GiNaC::symbol>(e).get_name()));
  }
  auto children = [&](const GiNaC::ex& node) {
    for (size_t i = 0; i < node.nops(); ++i) tree.children.push_back(compile(node.op(i), symbols, text));
  };
  if (GiNaC::is_a<GiNaC::add>(e)) {
    tree.kind = Tree::Kind::kAdd;
    children(e);
  } else if (GiNaC::is_a<GiNaC::mul>(e)) {
    tree.kind = Tree::Kind::kMul;
    children(e);
  } else if (GiNaC::is_a<GiNaC::power>(e)) {
    tree.kind = Tree::Kind::kPow;
    children(e);
  } else if (GiNaC::is_a<GiNaC::function>(e)) {
    tree.kind = Tree::Kind::kFunction;
    tree.function = GiNaC::ex_to<GiNaC::function>(e).get_name();
    if (!unary_functions().count(tree.function) || e.nops() != 1)
      throw Error(fmt::format("expression \"{}\": the function {} is not supported here", text, tree.function));
    children(e);
  } else {
    std::ostringstream printed;
    printed << e;
    throw Error(fmt::format("expression \"{}\": cannot evaluate the part {}", text, printed.str()));
  }
  return tree;
}

// A value of the walk: a number while no variable is involved, else a tensor.
struct Value {
  bool is_tensor = false;
  double number = 0;
  Tensor tensor;
};

Value number(double v) { return Value{false, v, {}}; }
Value tensor_value(Tensor t) { return Value{true, 0, std::move(t)}; }

Value add(const Value& a, const Value& b) {
  if (!a.is_tensor && !b.is_tensor) return number(a.number + b.number);
  if (!a.is_tensor) return tensor_value(b.tensor + a.number);
  if (!b.is_tensor) return tensor_value(a.tensor + b.number);
  return tensor_value(a.tensor + b.tensor);
}

Value multiply(const Value& a, const Value& b) {
  if (!a.is_tensor && !b.is_tensor) return number(a.number * b.number);
  if (!a.is_tensor) return tensor_value(b.tensor * a.number);
  if (!b.is_tensor) return tensor_value(a.tensor * b.number);
  return tensor_value(a.tensor * b.tensor);
}

Value power(const Value& base, const Value& exponent) {
  if (!base.is_tensor && !exponent.is_tensor) return number(std::pow(base.number, exponent.number));
  if (!exponent.is_tensor) {
    const double k = exponent.number;
    if (k == 1) return base;
    if (k == 2) return tensor_value(square(base.tensor));
    if (k == -1) return tensor_value(reciprocal(base.tensor));
    if (k == 0.5) return tensor_value(sqrt(base.tensor));
    if (k == -0.5) return tensor_value(rsqrt(base.tensor));
    return tensor_value(pow(base.tensor, Scalar(k)));
  }
  if (!base.is_tensor) return tensor_value(pow(Scalar(base.number), exponent.tensor));
  return tensor_value(pow(base.tensor, exponent.tensor));
}

Value walk(const Tree& tree, const std::vector<Tensor>& values) {
  switch (tree.kind) {
    case Tree::Kind::kConstant: return number(tree.value);
    case Tree::Kind::kVariable: return tensor_value(values[tree.variable]);
    case Tree::Kind::kAdd:
    case Tree::Kind::kMul: {
      Value result = walk(tree.children.front(), values);
      for (size_t i = 1; i < tree.children.size(); ++i) {
        Value term = walk(tree.children[i], values);
        result = tree.kind == Tree::Kind::kAdd ? add(result, term) : multiply(result, term);
      }
      return result;
    }
    case Tree::Kind::kPow: return power(walk(tree.children[0], values), walk(tree.children[1], values));
    case Tree::Kind::kFunction: {
      Value argument = walk(tree.children.front(), values);
      GD_CHECK(argument.is_tensor, "TensorExpression: a constant function node was not folded");
      return tensor_value(unary_functions().at(tree.function)(argument.tensor));
    }
  }
  return number(0);
}

// GiNaC reads a sign right after an operator as applying to the whole rest of
// the expression ("x^-0.5 + t" is x^(-0.5 + t), "2*-x+1" is 2*(1-x)); such
// text is refused rather than silently misread.
void refuse_sign_after_operator(const std::string& text) {
  char previous = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t') continue;
    if ((c == '+' || c == '-') && previous != 0 && std::string_view("+-*/^").find(previous) != std::string_view::npos)
      throw Error(fmt::format("expression \"{}\": a sign right after an operator (position {}) must be put in "
                              "parentheses, e.g. x^(-0.5) or 2*(-x)", text, i + 1));
    previous = c;
  }
}

void collect_variables(const Tree& tree, std::vector<bool>& used) {
  if (tree.kind == Tree::Kind::kVariable) used[tree.variable] = true;
  for (const Tree& child : tree.children) collect_variables(child, used);
}

}  // namespace

TensorExpression::TensorExpression(std::string text, std::vector<std::string> variables)
    : text_(std::move(text)), variables_(std::move(variables)) {
  GD_CHECK(!text_.empty(), "expression: empty text");
  GiNaC::symtab table;
  std::vector<GiNaC::symbol> symbols;
  for (size_t i = 0; i < variables_.size(); ++i) {
    const std::string& name = variables_[i];
    GD_CHECK(std::count(variables_.begin(), variables_.end(), name) == 1,
             fmt::format("expression \"{}\": variable {} is named twice", text_, name));
    GD_CHECK(name != "pi" && name != "e", fmt::format("expression \"{}\": {} names a constant", text_, name));
    symbols.emplace_back(name);
    table[name] = symbols.back();
  }
  table["pi"] = GiNaC::Pi;
  table["e"] = GiNaC::exp(GiNaC::ex(1));
  refuse_sign_after_operator(text_);
  GiNaC::parser reader(table, /*strict=*/true);
  GiNaC::ex parsed;
  try {
    parsed = reader(text_);
  } catch (const std::exception& e) {
    std::string why = e.what();  // GiNaC: find_or_insert_symbol: symbol "z" not found
    const size_t quote = why.find("symbol \"");
    if (why.find("not found") != std::string::npos && quote != std::string::npos) {
      const size_t start = quote + 8, end = why.find('"', start);
      why = "unknown name " + why.substr(start, end - start);
    }
    throw Error(fmt::format("expression \"{}\": {} (variables: {}; constants: pi, e)", text_, why,
                            variables_.empty() ? "none" : fmt::format("{}", fmt::join(variables_, ", "))));
  }
  tree_ = std::make_shared<const Tree>(compile(parsed, symbols, text_));
}

Tensor TensorExpression::evaluate(const std::vector<Tensor>& values) const {
  GD_CHECK(values.size() == variables_.size(),
           fmt::format("expression \"{}\": {} values for the {} variables ({})", text_, values.size(), variables_.size(),
                       fmt::join(variables_, ", ")));
  for (size_t i = 0; i < values.size(); ++i)
    GD_CHECK(values[i].defined(), fmt::format("expression \"{}\": the value of {} is undefined", text_, variables_[i]));
  Value result = walk(*tree_, values);
  if (result.is_tensor) return result.tensor;
  GD_CHECK(!values.empty(), fmt::format("expression \"{}\": a constant expression needs a value to take its shape from",
                                        text_));
  return full_like(values.front(), result.number);
}

bool TensorExpression::uses(const std::string& variable) const {
  auto it = std::find(variables_.begin(), variables_.end(), variable);
  if (it == variables_.end()) return false;
  std::vector<bool> used(variables_.size(), false);
  collect_variables(*tree_, used);
  return used[static_cast<size_t>(it - variables_.begin())];
}

}  // namespace gradiens::pinn
