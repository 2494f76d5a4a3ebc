// muParser-backed pointwise expressions (pinn/expression.h).
#include "pinn/expression.h"

#include <algorithm>
#include <numbers>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <muParser.h>

#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::pinn {

// The parser with one column buffer per variable, which muParser's bulk mode
// reads element by element.
struct Expression::Parser {
  mu::Parser parser;
  std::vector<std::vector<double>> columns;
};

namespace {

[[noreturn]] void rethrow(const mu::ParserError& e, const std::string& text, const std::vector<std::string>& variables) {
  std::string message = e.GetMsg();
  if (!message.empty() && message.back() == '.') message.pop_back();
  const int pos = e.GetPos();
  std::string where = pos >= 0 ? fmt::format(" at position {}", pos + 1) : "";
  throw Error(fmt::format("expression \"{}\": {}{} (variables: {}; constants: pi, e)", text, message, where,
                          variables.empty() ? "none" : fmt::format("{}", fmt::join(variables, ", "))));
}

}  // namespace

Expression::Expression(std::string text, std::vector<std::string> variables, std::map<std::string, double> constants)
    : text_(std::move(text)), variables_(std::move(variables)), parser_(std::make_shared<Parser>()) {
  GD_CHECK(!text_.empty(), "expression: empty text");
  for (size_t i = 0; i < variables_.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      GD_CHECK(variables_[i] != variables_[j], fmt::format("expression \"{}\": variable {} is named twice", text_,
                                                           variables_[i]));
  Parser& p = *parser_;
  p.columns.assign(variables_.size(), std::vector<double>(1, 0.0));
  try {
    p.parser.DefineConst("pi", std::numbers::pi);
    p.parser.DefineConst("e", std::numbers::e);
    for (const auto& [name, value] : constants) p.parser.DefineConst(name, value);
    for (size_t i = 0; i < variables_.size(); ++i) p.parser.DefineVar(variables_[i], p.columns[i].data());
    p.parser.SetExpr(text_);
    p.parser.Eval();  // parses now, so that a bad expression fails here
  } catch (const mu::ParserError& e) {
    rethrow(e, text_, variables_);
  }
}

Tensor Expression::evaluate(const Tensor& points) const {
  GD_CHECK(points.defined() && points.dim() == 2 && points.size(1) == static_cast<int64_t>(variables_.size()),
           fmt::format("expression \"{}\": expected points [N, {}] ({}), got [{}]", text_, variables_.size(),
                       fmt::join(variables_, ", "), points.defined() ? fmt::format("{}", fmt::join(points.sizes(), ", ")) : "undefined"));
  GD_CHECK(points.is_floating_point(), fmt::format("expression \"{}\": points must be floating point", text_));
  const Tensor p = points.detach().to(kFloat64).contiguous();
  const int64_t n = p.size(0), d = p.size(1);
  Tensor out = empty({n, 1}, TensorOptions().dtype(kFloat64));
  if (n == 0) return out;
  Parser& parser = *parser_;
  const double* src = p.cpu_data_ptr<double>();
  for (int64_t j = 0; j < d; ++j) {
    std::vector<double>& column = parser.columns[static_cast<size_t>(j)];
    column.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) column[static_cast<size_t>(i)] = src[i * d + j];
  }
  try {
    for (size_t j = 0; j < variables_.size(); ++j) parser.parser.DefineVar(variables_[j], parser.columns[j].data());
    parser.parser.Eval(out.cpu_data_ptr<double>(), static_cast<int>(n));
  } catch (const mu::ParserError& e) {
    rethrow(e, text_, variables_);
  }
  return out;
}

double Expression::evaluate(const std::vector<double>& point) const {
  GD_CHECK(point.size() == variables_.size(), fmt::format("expression \"{}\": expected {} values ({}), got {}", text_,
                                                          variables_.size(), fmt::join(variables_, ", "), point.size()));
  Parser& parser = *parser_;
  try {
    for (size_t j = 0; j < variables_.size(); ++j) {
      parser.columns[j].assign(1, point[j]);
      parser.parser.DefineVar(variables_[j], parser.columns[j].data());
    }
    return parser.parser.Eval();
  } catch (const mu::ParserError& e) {
    rethrow(e, text_, variables_);
  }
}

bool Expression::uses(const std::string& variable) const {
  const mu::varmap_type& used = parser_->parser.GetUsedVar();
  return used.find(variable) != used.end();
}

std::vector<std::string> coordinate_names(int64_t spatial_dims, bool time) {
  std::vector<std::string> names;
  if (spatial_dims <= 3) {
    const char* short_names[] = {"x", "y", "z"};
    for (int64_t i = 0; i < spatial_dims; ++i) names.emplace_back(short_names[i]);
  } else {
    for (int64_t i = 1; i <= spatial_dims; ++i) names.push_back(fmt::format("x{}", i));
  }
  if (time) names.emplace_back("t");
  return names;
}

}  // namespace gradiens::pinn
