// The metrics of a run: metrics.jsonl (authoritative, one JSON object per
// line at full float64 precision) and metrics.csv (fixed columns, derived).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace gradiens::train {

struct MetricRecord {
  int64_t step = 0;
  int64_t epoch = 0;
  int64_t phase = 0;
  double time = 0;  // wall-clock seconds since the run started; the only non-deterministic field
  std::map<std::string, double> values;
};

// The exact line append() writes to metrics.jsonl, without the newline:
// step, epoch, phase, time, then the values by name. NaN and infinities are
// written as the strings "nan", "inf" and "-inf" so the line stays valid JSON.
std::string to_json_line(const MetricRecord& record);

// The inverse of to_json_line; throws gradiens::Error saying what is wrong.
MetricRecord parse_json_line(const std::string& line);

class MetricsLog {
 public:
  // Creates or opens run_dir/metrics.jsonl and run_dir/metrics.csv. The CSV
  // has the columns step,epoch,phase,time,<columns...>; values not among the
  // columns go to metrics.jsonl only. An existing CSV whose header differs is
  // rebuilt from metrics.jsonl, as is one after a torn last line is dropped.
  MetricsLog(std::filesystem::path run_dir, std::vector<std::string> columns);

  // For resume: drops every record with step > `step` from both files
  // (rewritten atomically), so appending continues exactly where the
  // checkpoint was.
  void truncate_after(int64_t step);

  // Writes the record to both files and flushes them.
  void append(const MetricRecord& record);

  // Every record of metrics.jsonl, in file order.
  std::vector<MetricRecord> read_all() const;

  const std::filesystem::path& jsonl_path() const { return jsonl_path_; }
  const std::filesystem::path& csv_path() const { return csv_path_; }

 private:
  std::string csv_header() const;
  std::string csv_line(const MetricRecord& record) const;
  // Rewrites both files from `lines` of metrics.jsonl (kept verbatim).
  void rewrite(const std::vector<std::string>& lines);
  void open_for_append();

  std::filesystem::path jsonl_path_, csv_path_;
  std::vector<std::string> columns_;
  std::ofstream jsonl_, csv_;
};

}  // namespace gradiens::train
