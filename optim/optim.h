// The optim layer in one include: the Optimizer base, the optimizers and the
// learning-rate schedulers.
#pragma once

#include "optim/optimizer.h"
