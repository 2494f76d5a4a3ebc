// Runs a kernel test once per SIMD target, by narrowing Highway's view of the
// CPU to that one target, and restores the CPU's own choice afterwards.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "kernels/cpu/vector_math.h"

namespace gradiens::testing {

// Runs body under each of `targets` that this CPU supports and, with
// `dispatched` (the name of the target a kernel file's dispatch then picks),
// that the kernel file was compiled for; returns the names it ran under.
template <class Body>
std::vector<std::string> run_on_simd_targets(std::initializer_list<int64_t> targets, Body body,
                                             const char* (*dispatched)() = nullptr) {
  struct RestoreRealCpu {
    ~RestoreRealCpu() {
      hwy::SetSupportedTargetsForTest(0);
      hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    }
  } restore_real_cpu;
  const int64_t cpu_targets = hwy::SupportedTargets();
  std::vector<std::string> ran;
  for (int64_t target : targets) {
    if ((cpu_targets & target) == 0) continue;
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    const std::string target_name = hwy::TargetName(target);
    if (dispatched && dispatched() != target_name) continue;
    INFO("SIMD target ", target_name);
    body();
    ran.push_back(target_name);
  }
  return ran;
}

// Every target both this CPU and vector_math.cpp have. Targets not compiled
// into vector_math.cpp fall back to its scalar copy, which the name check skips.
template <class Body>
std::vector<std::string> for_each_simd_target(Body body) {
  return run_on_simd_targets({HWY_AVX3, HWY_AVX2, HWY_SSE4, HWY_EMU128, HWY_SCALAR}, body,
                             &kernels::cpu::simd_target_name);
}

}  // namespace gradiens::testing
