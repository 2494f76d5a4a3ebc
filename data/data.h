// The data library for users: datasets, samplers, collate and the DataLoader
// (namespace gradiens::data).
#pragma once

#include "data/collate.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/datasets/csv.h"
#include "data/datasets/mnist.h"
#include "data/samplers.h"
#include "data/tensor_dataset.h"
