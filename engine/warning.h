// Warnings: messages that do not stop the program (deprecated arguments, odd
// but legal input), sent to a replaceable handler, as libtorch's c10::Warning.
// The default handler prints "Warning: <message> (<function> at <file>:<line>)"
// to stderr.
#pragma once

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
};

// Raises a warning from gradiens itself.
void warn(const std::string& msg, const SourceLocation& source_location = {});

}  // namespace gradiens
