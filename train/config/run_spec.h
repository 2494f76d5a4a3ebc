// The spec of a whole gradiens-train config (its top-level sections).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/config/spec.h"

namespace gradiens::train {

// The root spec: version, name, seed, device, dtype, threads, model, init,
// data, loss, optimizer, scheduler, metrics, train, output.
const ObjectSpec& run_spec();

// The metric names a split may list ("top5_accuracy" stands for topK_accuracy).
std::vector<std::string> metric_names();

// The k of an accuracy metric: 1 for "accuracy", K for "topK_accuracy" (K >= 1,
// no leading zero), 0 for any other name.
int64_t accuracy_top_k(const std::string& metric);

}  // namespace gradiens::train
