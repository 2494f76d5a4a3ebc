// libtorch include path kept for programs that name it; everything is in <torch/torch.h>.
#pragma once

#include <torch/torch.h>
