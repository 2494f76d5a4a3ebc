// The data library for users: datasets, samplers, collate and the DataLoader
// (namespace gradiens::data), and libtorch's data API beside them (datasets::
// BatchDataset and kin, transforms, samplers::, make_data_loader over those).
#pragma once

#include "data/collate.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/datasets/base.h"
#include "data/datasets/chunk.h"
#include "data/datasets/csv.h"
#include "data/datasets/mnist.h"
#include "data/datasets/tensor.h"
#include "data/detail/data_shuttle.h"
#include "data/detail/queue.h"
#include "data/detail/sequencers.h"
#include "data/libtorch_loader.h"
#include "data/samplers.h"
#include "data/serialize.h"
#include "data/tensor_dataset.h"
#include "data/transforms.h"
#include "data/worker_exception.h"
