// The process-wide determinism flag of use_deterministic_algorithms and the
// error an op without a deterministic implementation raises under it (Note
// [Deterministic algorithms] in engine/nn_ops.h).
#include <atomic>
#include <string>

#include <fmt/format.h>

#include "engine/nn_ops.h"
#include "kernels/error.h"

namespace gradiens {

namespace {
std::atomic<bool> deterministic_algorithms{false};
}  // namespace

void use_deterministic_algorithms(bool mode) { deterministic_algorithms.store(mode, std::memory_order_relaxed); }

bool are_deterministic_algorithms_enabled() { return deterministic_algorithms.load(std::memory_order_relaxed); }

void alert_not_deterministic(std::string_view op) {
  GD_CHECK(!are_deterministic_algorithms_enabled(),
           fmt::format("{} does not have a deterministic implementation, but you set "
                       "'gradiens::use_deterministic_algorithms(true)'. You can turn off determinism just for this "
                       "operation, if that's acceptable for your application.",
                       op));
}

}  // namespace gradiens
