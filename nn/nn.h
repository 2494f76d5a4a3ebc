// The nn layer in one include: Module and its holders, containers, layers,
// losses (nn::functional), initialization and the gradient utilities.
#pragma once

#include "nn/functional/loss.h"
#include "nn/init.h"
#include "nn/module.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "nn/modules/loss.h"
#include "nn/utils/clip_grad.h"
#include "nn/utils/convert_parameters.h"
