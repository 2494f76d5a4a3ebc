// StopSignalGuard: SIGINT/SIGTERM ask the trainer to stop after the current
// step (and checkpoint) instead of killing the process.
#pragma once

namespace gradiens::train {

// While a guard lives, the first SIGINT or SIGTERM only sets a flag that the
// trainer polls; the handler resets itself on delivery, so a second signal of
// the same kind takes the default action (Ctrl-C twice quits at once). The
// destructor restores the handlers that were installed before. Only one guard
// may live at a time.
class StopSignalGuard {
 public:
  StopSignalGuard();
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;

  static bool stop_requested();
  // The signal that asked to stop, or 0.
  static int signal_number();
};

}  // namespace gradiens::train
