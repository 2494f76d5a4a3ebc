// Progress: a \r-redrawn bar for terminals and rate-limited plain lines for
// logs, which must stay free of '\r' and escape codes to be readable.
#include "train/run/progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "kernels/error.h"

namespace gradiens::train {
namespace {

constexpr double kBarRedrawSeconds = 0.1;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Phase names and validation text come from configs; a stray control
// character would break the one-line layout (or the log's plainness).
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  return out;
}

// At most `width` bytes, cut at a UTF-8 character boundary.
std::string clamp_to(std::string text, size_t width) {
  if (text.size() <= width) return text;
  size_t cut = width;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

}  // namespace

ProgressMode parse_progress_mode(std::string_view text) {
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "bar") return ProgressMode::kBar;
  if (text == "lines") return ProgressMode::kLines;
  if (text == "none") return ProgressMode::kNone;
  throw Error(fmt::format("progress: unknown mode \"{}\" (expected one of: auto, bar, lines, none)", text));
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto total = static_cast<int64_t>(std::llround(seconds));
  int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  if (hours > 0) return fmt::format("{}h{:02d}m{:02d}s", hours, minutes, secs);
  if (minutes > 0) return fmt::format("{}m{:02d}s", minutes, secs);
  return fmt::format("{}s", secs);
}

Progress::Progress(ProgressMode mode, std::FILE* out, int64_t line_every_steps)
    : Progress(mode, out, line_every_steps, steady_seconds) {}

Progress::Progress(ProgressMode mode, std::FILE* out, int64_t line_every_steps, std::function<double()> clock,
                   int fixed_width)
    : mode_(mode), out_(out), line_every_steps_(line_every_steps), clock_(std::move(clock)), fixed_width_(fixed_width) {
  if (!out_) throw Error("progress: no output stream");
  if (!clock_) clock_ = steady_seconds;
  if (mode_ == ProgressMode::kAuto) mode_ = ::isatty(::fileno(out_)) ? ProgressMode::kBar : ProgressMode::kLines;
  if (mode_ == ProgressMode::kLines && line_every_steps_ < 1)
    throw Error(fmt::format("progress: a line every {} steps is not possible (at least 1)", line_every_steps_));
}

Progress::~Progress() { finish(); }

int Progress::width() const {
  if (fixed_width_ > 0) return fixed_width_;
  winsize size{};
  if (::ioctl(::fileno(out_), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string Progress::rate_and_eta(const ProgressState& state, double now) {
  double elapsed = now - start_time_;
  int64_t done = state.step - start_step_;
  // Measured from the first update of this process, so a resumed run's
  // earlier steps do not inflate the rate.
  if (done <= 0 || elapsed <= 0) return "-- steps/s";
  double rate = static_cast<double>(done) / elapsed;
  std::string text = fmt::format("{:.3g} steps/s", rate);
  if (state.total_steps > state.step)
    text += fmt::format(" ETA {}", format_duration(static_cast<double>(state.total_steps - state.step) / rate));
  return text;
}

void Progress::update(const ProgressState& state) {
  if (mode_ == ProgressMode::kNone) return;
  double now = clock_();
  if (!started_) {
    started_ = true;
    start_time_ = now;
    start_step_ = state.step;
  }
  bool last = state.total_steps > 0 && state.step >= state.total_steps;
  if (mode_ == ProgressMode::kLines) {
    if ((state.step % line_every_steps_ == 0 || last) && state.step != last_line_step_) write_line(state, now);
  } else if (!bar_shown_ || last || now - last_draw_ >= kBarRedrawSeconds) {
    draw_bar(state, now);
  }
}

void Progress::write_line(const ProgressState& state, double now) {
  std::string line;
  if (!state.phase.empty()) line += fmt::format("[{}] ", state.phase);
  if (state.epochs > 0) line += fmt::format("epoch {}/{} ", state.epoch, state.epochs);
  line += state.total_steps > 0 ? fmt::format("step {}/{}", state.step, state.total_steps)
                                : fmt::format("step {}", state.step);
  line += fmt::format(" loss {:.6g}", state.loss);
  if (!state.last_val.empty()) line += fmt::format(" | {}", state.last_val);
  line += fmt::format(" | {}", rate_and_eta(state, now));
  std::fputs((printable(line) + "\n").c_str(), out_);
  std::fflush(out_);
  last_line_step_ = state.step;
}

void Progress::draw_bar(const ProgressState& state, double now) {
  std::string left;
  if (!state.phase.empty()) left += state.phase + " ";
  if (state.epochs > 0) left += fmt::format("ep {}/{} ", state.epoch, state.epochs);
  std::string right = state.total_steps > 0 ? fmt::format(" {}/{}", state.step, state.total_steps)
                                            : fmt::format(" step {}", state.step);
  right += fmt::format(" loss {:.4g}", state.loss);
  if (!state.last_val.empty()) right += fmt::format(" | {}", state.last_val);
  right += fmt::format(" | {}", rate_and_eta(state, now));
  left = printable(left);
  right = printable(right);

  // One column short of the width: writing the last column makes some
  // terminals wrap, and the next \r would then redraw on a new line.
  size_t usable = static_cast<size_t>(std::max(width() - 1, 1));
  std::string line = left;
  size_t bar_width = usable > left.size() + right.size() + 2 ? usable - left.size() - right.size() - 2 : 0;
  if (state.total_steps > 0 && bar_width >= 10) {
    double fraction = std::clamp(static_cast<double>(state.step) / static_cast<double>(state.total_steps), 0.0, 1.0);
    auto filled = static_cast<size_t>(fraction * static_cast<double>(bar_width));
    line += fmt::format("[{}{}]", std::string(filled, '#'), std::string(bar_width - filled, '-'));
  }
  line = clamp_to(line + right, usable);
  std::fputs(fmt::format("\r{}\x1b[K", line).c_str(), out_);
  std::fflush(out_);
  bar_shown_ = true;
  last_draw_ = now;
}

void Progress::message(const std::string& line) {
  if (bar_shown_) {
    std::fputs("\r\x1b[K", out_);
    bar_shown_ = false;
  }
  std::fputs((line + "\n").c_str(), out_);
  std::fflush(out_);
}

void Progress::finish() {
  if (!bar_shown_) return;
  std::fputs("\n", out_);
  std::fflush(out_);
  bar_shown_ = false;
}

}  // namespace gradiens::train
