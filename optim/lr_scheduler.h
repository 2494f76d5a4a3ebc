// The learning-rate schedulers, as PyTorch 1.13's torch.optim.lr_scheduler:
// the LRScheduler base and every scheduler, stepped after the optimizer.
#pragma once

#include "optim/schedulers/base.h"
#include "optim/schedulers/composite.h"
#include "optim/schedulers/cosine.h"
#include "optim/schedulers/cyclic.h"
#include "optim/schedulers/decay.h"
#include "optim/schedulers/plateau.h"
