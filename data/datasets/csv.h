// CSVDataset: a table of numbers in a CSV file (RFC 4180 quoting), one sample
// per row, with one column chosen as the target.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "data/dataset.h"
#include "engine/tensor.h"

namespace gradiens::data::datasets {

struct CSVOptions {
  // A column by name (needs a header) or by index (negative counts from the end).
  using Column = std::variant<std::string, int64_t>;

  CSVOptions& header(bool v) { header_ = v; return *this; }
  CSVOptions& target_column(const std::string& name) { target_column_ = name; return *this; }
  CSVOptions& target_column(const char* name) { target_column_ = std::string(name); return *this; }
  CSVOptions& target_column(int64_t index) { target_column_ = index; return *this; }
  CSVOptions& dtype(ScalarType v) { dtype_ = v; return *this; }
  CSVOptions& target_dtype(ScalarType v) { target_dtype_ = v; return *this; }
  CSVOptions& delimiter(char v) { delimiter_ = v; return *this; }

  bool header() const { return header_; }
  const Column& target_column() const { return target_column_; }
  ScalarType dtype() const { return dtype_; }
  ScalarType target_dtype() const { return target_dtype_; }
  char delimiter() const { return delimiter_; }

 private:
  bool header_ = true;          // the first row names the columns
  Column target_column_ = int64_t{-1};  // the last column
  ScalarType dtype_ = kFloat32;         // of the features
  ScalarType target_dtype_ = kFloat32;  // an integral dtype for class indices (values must be whole)
  char delimiter_ = ',';
};

// Every row of the file, parsed at construction. Fields may be quoted ("a,b",
// "say ""hi""", line breaks inside quotes); spaces around a number are
// ignored; blank lines are skipped. Sample i is {its features, 1-D [F], its
// target, 0-dim}. A field that is not a number, a row with a different number
// of fields, an unknown target column or an empty file throws gradiens::Error
// naming the line and column.
class CSVDataset : public data::Dataset<Example<Tensor, Tensor>> {
 public:
  explicit CSVDataset(const std::string& path, const CSVOptions& options = {});

  // Views into features() and targets(): no copy.
  Example<Tensor, Tensor> get(size_t index) override;
  size_t size() const override;

  // The whole table: [N, F] in dtype and [N] in target_dtype.
  const Tensor& features() const { return features_; }
  const Tensor& targets() const { return targets_; }
  // The header's names (or "0", "1", ... without one), all columns.
  const std::vector<std::string>& column_names() const { return column_names_; }
  // Which of column_names() is the target.
  size_t target_index() const { return target_index_; }

 private:
  Tensor features_, targets_;
  std::vector<std::string> column_names_;
  size_t target_index_ = 0;
};

}  // namespace gradiens::data::datasets
