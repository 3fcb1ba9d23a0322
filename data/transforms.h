// torch::data::transforms: Stack, Lambda and BatchLambda, TensorTransform, TensorLambda and
// Normalize, and gradring's RandomCrop and RandomHorizontalFlip, as torch/data/transforms.h.
#pragma once

#include "data/transforms/base.h"
#include "data/transforms/lambda.h"
#include "data/transforms/stack.h"
#include "data/transforms/tensor.h"
