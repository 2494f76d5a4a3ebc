// StopSignalGuard: a flag set from a signal handler; SA_RESETHAND gives the
// "second signal kills" behaviour without any work in the handler.
#include "train/run/signals.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "kernels/error.h"

namespace gradiens::train {
namespace {

// A handler may only touch lock-free atomics (or volatile sig_atomic_t).
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<bool> g_guard_active{false};
struct sigaction g_old_interrupt {};
struct sigaction g_old_terminate {};

extern "C" void on_stop_signal(int signal) { g_stop_signal.store(signal); }

}  // namespace

StopSignalGuard::StopSignalGuard() {
  if (g_guard_active.exchange(true)) throw Error("StopSignalGuard: another guard is already active");
  g_stop_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a blocking read in a data loader goes on instead of failing with EINTR.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  if (::sigaction(SIGINT, &action, &g_old_interrupt) != 0 || ::sigaction(SIGTERM, &action, &g_old_terminate) != 0) {
    int error = errno;
    ::sigaction(SIGINT, &g_old_interrupt, nullptr);
    g_guard_active.store(false);
    throw Error(fmt::format("StopSignalGuard: cannot install signal handlers: {}", std::strerror(error)));
  }
}

StopSignalGuard::~StopSignalGuard() {
  ::sigaction(SIGINT, &g_old_interrupt, nullptr);
  ::sigaction(SIGTERM, &g_old_terminate, nullptr);
  g_guard_active.store(false);
}

bool StopSignalGuard::stop_requested() { return g_stop_signal.load() != 0; }

int StopSignalGuard::signal_number() { return g_stop_signal.load(); }

}  // namespace gradiens::train
