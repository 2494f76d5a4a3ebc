// gradiens::Error, the exception every user mistake raises, and GD_CHECK /
// GD_INTERNAL_ASSERT, which keep user errors apart from internal invariants.
#pragma once

#include <stdexcept>
#include <string>

namespace gradiens {

// A user error: bad shapes, dtypes, devices, files or configs.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  // libtorch's accessors (c10::Error): the message; gradiens keeps no backtrace in it.
  const char* what_without_backtrace() const noexcept { return what(); }
  std::string msg() const { return what(); }
};

namespace detail {
[[noreturn]] void throw_internal_error(const char* condition, const char* file, int line,
                                       const std::string& message);
}  // namespace detail

}  // namespace gradiens

// User-facing check: throws gradiens::Error with the given message.
#define GD_CHECK(condition, message)                    \
  do {                                                  \
    if (!(condition)) throw ::gradiens::Error(message); \
  } while (false)

// Internal invariant: a failure is a bug in gradiens, and the message says so.
#define GD_INTERNAL_ASSERT(condition, message)                                              \
  do {                                                                                      \
    if (!(condition))                                                                       \
      ::gradiens::detail::throw_internal_error(#condition, __FILE__, __LINE__, (message)); \
  } while (false)
