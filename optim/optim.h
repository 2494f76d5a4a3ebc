// The optim layer in one include: the Optimizer base, the optimizers and the
// learning-rate schedulers.
#pragma once

#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/adamw.h"
#include "optim/lbfgs.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"
#include "optim/rmsprop.h"
#include "optim/sgd.h"
