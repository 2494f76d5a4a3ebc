// GradMode: whether ops record themselves on the tape (thread-local, like
// PyTorch), and the RAII guards that switch it.
#pragma once

namespace gradiens {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Sets grad mode for a scope and restores the previous value.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : previous_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(previous_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

// Nothing in the scope is recorded: NoGradGuard guard; y = net(x);
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

namespace autograd {
using gradiens::GradMode;
using gradiens::NoGradGuard;
}  // namespace autograd

}  // namespace gradiens
