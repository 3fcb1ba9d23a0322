// torch::data::samplers: Sequential, Random, DistributedRandom and DistributedSequential (in
// torch.utils.data's order), gradring's ShardSampler and AnySampler, as torch/data/samplers.h.
#pragma once

#include "data/samplers/base.h"
#include "data/samplers/distributed.h"
#include "data/samplers/random.h"
#include "data/samplers/randperm.h"
#include "data/samplers/sequential.h"
