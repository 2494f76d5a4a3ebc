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

// Note [Inference mode]
// While an InferenceMode guard is alive on a thread, nothing is recorded (grad
// mode is off) and every tensor allocated is an inference tensor: it never
// joins an autograd graph, so outside the guard it may not be modified in
// place, saved for backward, or made to require grad, and it has no version
// counter (PyTorch's c10::InferenceMode). Views keep the kind of their base.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled();

 private:
  bool previous_inference_, previous_grad_;
};

// libtorch's deprecated guard that ran ops below autograd: nothing in the
// scope is recorded (a NoGradGuard); it warns once that it is deprecated.
class AutoNonVariableTypeMode {
 public:
  explicit AutoNonVariableTypeMode(bool enabled = true);
  AutoNonVariableTypeMode(const AutoNonVariableTypeMode&) = delete;
  AutoNonVariableTypeMode& operator=(const AutoNonVariableTypeMode&) = delete;

 private:
  AutoGradMode grad_mode_;
};

namespace autograd {
using gradiens::AutoGradMode;
using gradiens::GradMode;
using gradiens::InferenceMode;
using gradiens::NoGradGuard;
}  // namespace autograd

}  // namespace gradiens
