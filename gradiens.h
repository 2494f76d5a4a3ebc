// gradiens: the umbrella header for users (#include "gradiens.h"). The library
// itself never includes it.
#pragma once

#include "engine/autograd/autograd.h"
#include "engine/autograd/checkpoint.h"
#include "engine/autograd/forward_ad.h"
#include "engine/autograd/functional.h"
#include "engine/autograd/grad_mode.h"
#include "engine/convolution.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/io/safetensors.h"
#include "engine/linalg.h"
#include "engine/nn_ops.h"
#include "engine/sparse.h"
#include "engine/tensor.h"
#include "engine/tensor_data.h"
#include "nn/nn.h"
#include "data/data.h"
#include "optim/optim.h"
#include "pinn/geometry.h"
#include "pinn/operators.h"
#include "pinn/taylor.h"
