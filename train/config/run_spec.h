// The spec of a whole gradiens-train config (its top-level sections).
#pragma once

#include <string>
#include <vector>

#include "train/config/spec.h"

namespace gradiens::train {

// The root spec: version, name, seed, device, dtype, threads, model, init,
// data, loss, optimizer, scheduler, metrics, train, output.
const ObjectSpec& run_spec();

// The metric names a split may list ("top5_accuracy" stands for topK_accuracy).
std::vector<std::string> metric_names();

}  // namespace gradiens::train
