// Warnings: messages that do not stop the program (deprecated arguments, odd
// but legal input), sent to a replaceable handler, as libtorch's c10::Warning.
// The default handler prints "Warning: <message> (<function> at <file>:<line>)"
// to stderr.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace gradiens {

// Where a warning was raised.
struct SourceLocation {
  const char* function = "";
  const char* file = "";
  uint32_t line = 0;
};

class WarningHandler {
 public:
  virtual ~WarningHandler() = default;
  // `verbatim`: print the message without the location.
  virtual void process(const SourceLocation& source_location, const std::string& msg, bool verbatim);
};

class Warning {
 public:
  // Hands the warning to the current handler (process-wide; the default prints to stderr).
  static void warn(const SourceLocation& source_location, const std::string& msg, bool verbatim = false);
  // Replaces the handler (nullptr restores the default); the caller keeps ownership.
  static void set_warning_handler(WarningHandler* handler);
  static WarningHandler* get_warning_handler();

  // Whether a warning meant to be raised once (TORCH_WARN_ONCE) is raised every
  // time instead (process-wide, off by default), as libtorch's.
  static void set_warnAlways(bool setting);
  static bool get_warnAlways();
  // Sets warn-always for a scope and restores the previous setting.
  class WarnAlways {
   public:
    explicit WarnAlways(bool setting = true) : previous_(get_warnAlways()) { set_warnAlways(setting); }
    ~WarnAlways() { set_warnAlways(previous_); }
    WarnAlways(const WarnAlways&) = delete;
    WarnAlways& operator=(const WarnAlways&) = delete;

   private:
    bool previous_;
  };
};

// Raises a warning from gradiens itself.
void warn(const std::string& msg, const SourceLocation& source_location = {});
// Raises it the first time `already_warned` is seen false (and every time in
// warn-always mode): `static std::atomic<bool> warned{false}; warn_once(warned, "...");`
void warn_once(std::atomic<bool>& already_warned, const std::string& msg, const SourceLocation& source_location = {});

}  // namespace gradiens
