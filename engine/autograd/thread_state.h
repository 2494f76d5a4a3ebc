// The autograd state a thread carries (grad and inference mode, the node
// sequence counter, forward-AD pausing), captured so that work can go on on
// another thread as if it ran on this one (Note [Deep reentrant backward]).
#pragma once

#include <cstdint>

namespace gradiens::detail {

struct AutogradThreadState {
  bool grad_mode = true;
  bool inference_mode = false;
  bool forward_ad_paused = false;
  bool in_recorded_forward = false;
  uint64_t next_sequence_nr = 0;

  static AutogradThreadState capture();
  // Makes it this thread's state.
  void install() const;
};

}  // namespace gradiens::detail
