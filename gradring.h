// The one header a gradring program includes: tensors, autograd, every op and nn.
#pragma once

#include "autograd/engine.h"
#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/factory.h"
#include "core/generator.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "core/version.h"
#include "data/dataset.h"
#include "data/tensor_dataset.h"
#include "nn/nn.h"
