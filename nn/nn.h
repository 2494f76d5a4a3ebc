// The nn layer in one include: Module and its holders, containers, layers,
// losses and activations (nn::functional), initialization, and the nn
// utilities (gradient clipping, parameter vectors, parametrizations, pruning).
#pragma once

#include "nn/functional/activation.h"
#include "nn/functional/loss.h"
#include "nn/functional/phm.h"
#include "nn/init.h"
#include "nn/module.h"
#include "nn/modules/activation.h"
#include "nn/modules/batchnorm.h"
#include "nn/modules/container.h"
#include "nn/modules/conv.h"
#include "nn/modules/dropout.h"
#include "nn/modules/embedding.h"
#include "nn/modules/flatten.h"
#include "nn/modules/linear.h"
#include "nn/modules/loss.h"
#include "nn/modules/normalization.h"
#include "nn/modules/phm.h"
#include "nn/modules/pooling.h"
#include "nn/utils/clip_grad.h"
#include "nn/utils/convert_parameters.h"
#include "nn/utils/parametrizations.h"
#include "nn/utils/parametrize.h"
#include "nn/utils/prune.h"
