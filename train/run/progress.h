// Training progress on a terminal (one redrawn bar line) or in a log (plain
// lines every N steps), with steps/s and ETA from wall time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace gradiens::train {

enum class ProgressMode { kAuto, kBar, kLines, kNone };

// "auto", "bar", "lines" or "none"; anything else is a gradiens::Error listing them.
ProgressMode parse_progress_mode(std::string_view text);

struct ProgressState {
  std::string phase;               // e.g. "1/2 Adam"
  int64_t epoch = 0, epochs = 0;   // epochs 0 when the run counts steps
  int64_t step = 0, total_steps = 0;
  double loss = 0;
  std::string last_val;            // e.g. "val/accuracy 0.8834", empty if none yet
};

// "12s", "5m08s", "1h02m03s"; "?" for a negative or non-finite time.
std::string format_duration(double seconds);

class Progress {
 public:
  // kAuto: a bar when `out` is a terminal, else lines.
  Progress(ProgressMode mode, std::FILE* out, int64_t line_every_steps);
  // The same with an injected clock (seconds, monotonic) and, for the bar, a
  // fixed width instead of the terminal's; for tests.
  Progress(ProgressMode mode, std::FILE* out, int64_t line_every_steps, std::function<double()> clock,
           int fixed_width = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Bar: redraws at most ~10 times a second (always at the last step), clamped
  // to the terminal width. Lines: one line every line_every_steps steps and at
  // the last step, never with '\r' or escape codes.
  void update(const ProgressState& state);
  // A plain line, clearing the bar first if one is shown.
  void message(const std::string& line);
  // Ends the bar line, so that later output starts on a fresh line.
  void finish();

  // The mode after kAuto was resolved.
  ProgressMode mode() const { return mode_; }

 private:
  std::string rate_and_eta(const ProgressState& state, double now);
  void draw_bar(const ProgressState& state, double now);
  void write_line(const ProgressState& state, double now);
  int width() const;

  ProgressMode mode_;
  std::FILE* out_;
  int64_t line_every_steps_;
  std::function<double()> clock_;
  int fixed_width_;
  bool started_ = false;
  double start_time_ = 0;
  int64_t start_step_ = 0;
  double last_draw_ = 0;
  int64_t last_line_step_ = -1;
  bool bar_shown_ = false;
};

}  // namespace gradiens::train
