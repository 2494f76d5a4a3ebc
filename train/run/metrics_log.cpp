// MetricsLog: appends to metrics.jsonl and metrics.csv, and keeps the CSV a
// pure function of the JSONL so that resume and crashes cannot make them disagree.
#include "train/run/metrics_log.h"

#include <cmath>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/error.h"
#include "train/run/files.h"

namespace gradiens::train {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFixedKeys[] = {"step", "epoch", "phase", "time"};

bool is_fixed_key(std::string_view name) {
  for (std::string_view key : kFixedKeys)
    if (name == key) return true;
  return false;
}


std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// The complete lines of metrics.jsonl. A last line without its newline is
// what a crash in the middle of append() leaves, and is dropped unless it
// parses; `repaired` says whether anything was dropped.
std::vector<std::string> read_jsonl_lines(const fs::path& path, bool& repaired) {
  repaired = false;
  std::vector<std::string> lines;
  std::error_code ec;
  if (!fs::exists(path, ec)) return lines;
  std::string text = read_file(path);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      std::string tail = text.substr(start);
      repaired = true;
      try {
        parse_json_line(tail);
        lines.push_back(std::move(tail));
      } catch (const Error&) {
      }
      break;
    }
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

MetricRecord parse_numbered_line(const std::string& line, const fs::path& path, size_t index) {
  try {
    return parse_json_line(line);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: record {}: {}", path.string(), index + 1, e.what()));
  }
}

}  // namespace

std::string to_json_line(const MetricRecord& record) {
  nlohmann::ordered_json line;
  line["step"] = record.step;
  line["epoch"] = record.epoch;
  line["phase"] = record.phase;
  line["time"] = double_to_json(record.time);
  for (const auto& [name, value] : record.values) {
    if (is_fixed_key(name))
      throw Error(fmt::format("metrics: a metric cannot be named \"{}\" (step, epoch, phase and time are reserved)", name));
    line[name] = double_to_json(value);
  }
  return line.dump();
}

MetricRecord parse_json_line(const std::string& line) {
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("not valid JSON: {}", e.what()));
  }
  if (!object.is_object()) throw Error("not a JSON object");
  MetricRecord record;
  for (auto [key, field] : {std::pair{"step", &record.step}, {"epoch", &record.epoch}, {"phase", &record.phase}}) {
    if (!object.contains(key) || !object[key].is_number_integer())
      throw Error(fmt::format("\"{}\" is missing or not an integer", key));
    *field = object[key].get<int64_t>();
  }
  if (!object.contains("time")) throw Error("\"time\" is missing");
  record.time = double_from_json(object["time"], "\"time\"");
  for (const auto& [key, value] : object.items())
    if (!is_fixed_key(key)) record.values[key] = double_from_json(value, "\"" + key + "\"");
  return record;
}

MetricsLog::MetricsLog(fs::path run_dir, std::vector<std::string> columns)
    : jsonl_path_(run_dir / "metrics.jsonl"), csv_path_(run_dir / "metrics.csv"), columns_(std::move(columns)) {
  for (const std::string& column : columns_)
    if (is_fixed_key(column))
      throw Error(fmt::format("metrics: column \"{}\" is reserved (step, epoch, phase and time come first anyway)", column));
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) throw Error(fmt::format("metrics: cannot create '{}': {}", run_dir.string(), ec.message()));

  bool repaired = false;
  std::vector<std::string> lines = read_jsonl_lines(jsonl_path_, repaired);
  std::string expected_csv = csv_header();
  for (size_t i = 0; i < lines.size(); ++i) expected_csv += csv_line(parse_numbered_line(lines[i], jsonl_path_, i));
  bool csv_matches = fs::exists(csv_path_, ec) && read_file(csv_path_) == expected_csv;
  if (repaired || !csv_matches || !fs::exists(jsonl_path_, ec))
    rewrite(lines);
  else
    open_for_append();
}

std::string MetricsLog::csv_header() const {
  std::string header = "step,epoch,phase,time";
  for (const std::string& column : columns_) {
    header += ',';  // appended apart: GCC 12 warns falsely (-Wrestrict) on "," + string
    header += csv_field(column);
  }
  return header + "\n";
}

std::string MetricsLog::csv_line(const MetricRecord& record) const {
  // fmt's "{}" is the shortest text that reads back to the same double.
  std::string line = fmt::format("{},{},{},{}", record.step, record.epoch, record.phase, record.time);
  for (const std::string& column : columns_) {
    line += ',';
    auto found = record.values.find(column);
    if (found != record.values.end()) line += fmt::format("{}", found->second);
  }
  return line + "\n";
}

void MetricsLog::open_for_append() {
  jsonl_.open(jsonl_path_, std::ios::binary | std::ios::app);
  if (!jsonl_) throw Error(fmt::format("metrics: cannot open '{}' for appending", jsonl_path_.string()));
  csv_.open(csv_path_, std::ios::binary | std::ios::app);
  if (!csv_) throw Error(fmt::format("metrics: cannot open '{}' for appending", csv_path_.string()));
}

void MetricsLog::rewrite(const std::vector<std::string>& lines) {
  if (jsonl_.is_open()) jsonl_.close();
  if (csv_.is_open()) csv_.close();
  std::string jsonl_text, csv_text = csv_header();
  for (size_t i = 0; i < lines.size(); ++i) {
    jsonl_text += lines[i] + "\n";
    csv_text += csv_line(parse_numbered_line(lines[i], jsonl_path_, i));
  }
  // metrics.jsonl first: it is the authoritative one, and the CSV is rebuilt
  // from it on the next open if a crash falls between the two.
  write_file_atomic(jsonl_path_, jsonl_text);
  write_file_atomic(csv_path_, csv_text);
  open_for_append();
}

void MetricsLog::truncate_after(int64_t step) {
  bool repaired = false;
  std::vector<std::string> lines = read_jsonl_lines(jsonl_path_, repaired);
  std::vector<std::string> kept;
  for (size_t i = 0; i < lines.size(); ++i)
    if (parse_numbered_line(lines[i], jsonl_path_, i).step <= step) kept.push_back(lines[i]);
  rewrite(kept);
}

void MetricsLog::append(const MetricRecord& record) {
  std::string line = to_json_line(record) + "\n";
  jsonl_ << line;
  jsonl_.flush();
  if (!jsonl_) throw Error(fmt::format("metrics: cannot write '{}'", jsonl_path_.string()));
  csv_ << csv_line(record);
  csv_.flush();
  if (!csv_) throw Error(fmt::format("metrics: cannot write '{}'", csv_path_.string()));
}

std::vector<MetricRecord> MetricsLog::read_all() const {
  bool repaired = false;
  std::vector<std::string> lines = read_jsonl_lines(jsonl_path_, repaired);
  std::vector<MetricRecord> records;
  records.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) records.push_back(parse_numbered_line(lines[i], jsonl_path_, i));
  return records;
}

}  // namespace gradiens::train
