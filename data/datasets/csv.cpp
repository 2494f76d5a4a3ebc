// CSVDataset: an RFC 4180 tokenizer that remembers where each field starts,
// and the numeric conversion, whose errors name the line and column.
#include "data/datasets/csv.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/functions.h"

namespace gradiens::data::datasets {

namespace {

struct Field {
  std::string text;
  int64_t line;  // 1-based, where the field starts
};
using Record = std::vector<Field>;

std::string read_file(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::string bytes;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) bytes.append(chunk, n);
  if (std::ferror(file.get())) throw Error(fmt::format("{}: read error: {}", path, std::strerror(errno)));
  return bytes;
}

// Splits `text` into records of fields. A field is either quoted ("..." with
// "" for a quote, delimiters and line breaks allowed inside) or plain (no
// quote, delimiter or line break). Records end at \n, \r\n or \r. A blank
// line is no record.
std::vector<Record> tokenize(std::string_view text, char delimiter, const std::string& path) {
  std::vector<Record> records;
  Record record;
  int64_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto at_line_break = [&](size_t k) { return k < n && (text[k] == '\n' || text[k] == '\r'); };
  auto skip_line_break = [&] {  // text[i] is \n or \r
    if (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
    ++i;
    ++line;
  };
  while (i < n) {
    // A line break where a record would start: a blank line.
    if (record.empty() && at_line_break(i)) {
      skip_line_break();
      continue;
    }
    Field field{"", line};
    const size_t column = record.size() + 1;
    if (text[i] == '"') {
      const int64_t start_line = line;
      ++i;
      while (true) {
        if (i >= n)
          throw Error(fmt::format("{}: line {}, column {}: the quoted field that starts here is not closed", path,
                                  start_line, column));
        if (text[i] == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            field.text += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n' || (text[i] == '\r' && !(i + 1 < n && text[i + 1] == '\n'))) ++line;
        field.text += text[i++];
      }
      if (i < n && text[i] != delimiter && !at_line_break(i))
        throw Error(fmt::format("{}: line {}, column {}: unexpected character '{}' after the closing quote", path,
                                line, column, text[i]));
    } else {
      while (i < n && text[i] != delimiter && !at_line_break(i)) {
        if (text[i] == '"')
          throw Error(fmt::format("{}: line {}, column {}: a quote inside an unquoted field (quote the whole field "
                                  "and double the quote)",
                                  path, line, column));
        field.text += text[i++];
      }
    }
    record.push_back(std::move(field));
    if (i < n && text[i] == delimiter) {
      ++i;
      if (i == n) record.push_back(Field{"", line});  // a trailing delimiter ends with an empty field
    } else {
      records.push_back(std::move(record));
      record.clear();
      if (i < n) skip_line_break();
    }
  }
  if (!record.empty()) records.push_back(std::move(record));
  return records;
}

// What the header calls column `index` (0-based), for messages.
std::string column_label(const std::vector<std::string>& names, bool header, size_t index) {
  return header ? fmt::format("column {} ('{}')", index + 1, names[index]) : fmt::format("column {}", index + 1);
}

// The number a field holds: surrounding spaces and tabs and a leading '+' are
// allowed, as are "nan" and "inf" (any case); nothing else.
std::optional<double> parse_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // A value beyond double's range is out of range, not malformed: from_chars
  // reports it, and it becomes an infinity as strtod would make it.
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size())
    return text.front() == '-' ? -HUGE_VAL : HUGE_VAL;
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Why `value` cannot be stored in `dtype` exactly enough ("" when it can):
// integral dtypes need whole numbers in their range.
std::string unrepresentable(double value, ScalarType dtype) {
  if (is_floating_point(dtype)) return "";
  if (dtype == kBool) return value == 0 || value == 1 ? "" : "a bool column holds only 0 and 1";
  if (!std::isfinite(value) || value != std::trunc(value))
    return fmt::format("{} needs whole numbers", dtype_name(dtype));
  double lo = 0, hi = 0;
  switch (dtype) {
    case kUInt8: lo = 0, hi = 255; break;
    case kInt32: lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max(); break;
    default: lo = -0x1p63, hi = 0x1p63 - 1024; break;  // the doubles within int64
  }
  if (value < lo || value > hi) return fmt::format("it is out of the range of {}", dtype_name(dtype));
  return "";
}

}  // namespace

CSVDataset::CSVDataset(const std::string& path, const CSVOptions& options) {
  std::string text = read_file(path);
  std::string_view body = text;
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);  // a UTF-8 byte order mark
  const char delimiter = options.delimiter();
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r')
    throw Error(fmt::format("CSVDataset: the delimiter cannot be a quote or a line break"));
  std::vector<Record> records = tokenize(body, delimiter, path);
  if (records.empty()) throw Error(fmt::format("{}: empty CSV file: no header and no rows", path));

  const size_t columns = records.front().size();
  size_t first_row = 0;
  if (options.header()) {
    for (const Field& f : records.front()) column_names_.push_back(f.text);
    first_row = 1;
  } else {
    for (size_t c = 0; c < columns; ++c) column_names_.push_back(std::to_string(c));
  }

  // The target column.
  if (const auto* name = std::get_if<std::string>(&options.target_column())) {
    if (!options.header())
      throw Error(fmt::format("{}: target column '{}' is a name, but the file has no header (header(false)); give "
                              "its index",
                              path, *name));
    std::vector<size_t> matches;
    for (size_t c = 0; c < columns; ++c)
      if (column_names_[c] == *name) matches.push_back(c + 1);
    if (matches.empty())
      throw Error(fmt::format("{}: unknown target column '{}'; the columns are: {}", path, *name,
                              fmt::join(column_names_, ", ")));
    if (matches.size() > 1)
      throw Error(fmt::format("{}: target column '{}' is ambiguous: columns {} share that name", path, *name,
                              fmt::join(matches, ", ")));
    target_index_ = matches.front() - 1;
  } else {
    int64_t index = std::get<int64_t>(options.target_column());
    const auto count = static_cast<int64_t>(columns);
    if (index < -count || index >= count)
      throw Error(fmt::format("{}: target column index {} is out of range for {} columns", path, index, columns));
    target_index_ = static_cast<size_t>(index < 0 ? index + count : index);
  }

  const auto rows = static_cast<int64_t>(records.size() - first_row);
  const auto feature_count = static_cast<int64_t>(columns - 1);
  Tensor features = empty({rows, feature_count}, TensorOptions().dtype(kFloat64));
  Tensor targets = empty({rows}, TensorOptions().dtype(kFloat64));
  double* feature_out = features.cpu_data_ptr<double>();
  double* target_out = targets.cpu_data_ptr<double>();
  const int64_t first_line = records.front().front().line;
  for (size_t r = first_row; r < records.size(); ++r) {
    const Record& record = records[r];
    if (record.size() != columns)
      throw Error(fmt::format("{}: line {}: {} fields, but {} {} has {}", path, record.front().line, record.size(),
                              options.header() ? "the header on line" : "line", first_line, columns));
    for (size_t c = 0; c < columns; ++c) {
      const Field& field = record[c];
      const bool is_target = c == target_index_;
      std::optional<double> value = parse_number(field.text);
      if (!value)
        throw Error(fmt::format("{}: line {}, {}: {} is not a number", path, field.line,
                                column_label(column_names_, options.header(), c),
                                field.text.empty() ? std::string("an empty field") : fmt::format("'{}'", field.text)));
      std::string why = unrepresentable(*value, is_target ? options.target_dtype() : options.dtype());
      if (!why.empty())
        throw Error(fmt::format("{}: line {}, {}: cannot store '{}' as {}: {}", path, field.line,
                                column_label(column_names_, options.header(), c), field.text,
                                is_target ? "the target" : "a feature", why));
      if (is_target)
        *target_out++ = *value;
      else
        *feature_out++ = *value;
    }
  }
  features_ = features.to(options.dtype());
  targets_ = targets.to(options.target_dtype());
}

Example<Tensor, Tensor> CSVDataset::get(size_t index) {
  if (index >= size())
    throw Error(fmt::format("index {} is out of bounds for dimension 0 with size {}", index, size()));
  const auto i = static_cast<int64_t>(index);
  return {features_.select(0, i), targets_.select(0, i)};
}

size_t CSVDataset::size() const { return static_cast<size_t>(targets_.size(0)); }

}  // namespace gradiens::data::datasets
