// The warning handler, process-wide as libtorch's, and the default one that prints.
#include "engine/warning.h"

#include <atomic>
#include <iostream>

namespace gradiens {

namespace {
WarningHandler default_handler;
std::atomic<WarningHandler*> current_handler{&default_handler};
std::atomic<bool> warn_always{false};
}  // namespace

void WarningHandler::process(const SourceLocation& source_location, const std::string& msg, bool verbatim) {
  std::cerr << "Warning: " << msg;
  if (!verbatim) std::cerr << " (" << source_location.function << " at " << source_location.file << ':'
                           << source_location.line << ')';
  std::cerr << '\n';
}

void Warning::warn(const SourceLocation& source_location, const std::string& msg, bool verbatim) {
  get_warning_handler()->process(source_location, msg, verbatim);
}

void Warning::set_warning_handler(WarningHandler* handler) {
  current_handler.store(handler != nullptr ? handler : &default_handler);
}

WarningHandler* Warning::get_warning_handler() { return current_handler.load(); }

void Warning::set_warnAlways(bool setting) { warn_always.store(setting); }
bool Warning::get_warnAlways() { return warn_always.load(); }

void warn(const std::string& msg, const SourceLocation& source_location) {
  Warning::warn(source_location, msg, false);
}

void warn_once(std::atomic<bool>& already_warned, const std::string& msg, const SourceLocation& source_location) {
  if (Warning::get_warnAlways() || !already_warned.exchange(true)) warn(msg, source_location);
}

}  // namespace gradiens
